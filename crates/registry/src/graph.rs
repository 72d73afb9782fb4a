//! Questions about a topology's links that placement checks ask: hop
//! distance and reachability. Links are undirected (a, b) pairs.

use std::collections::VecDeque;

use joulenet_proto::NodeId;

fn neighbours(links: &[(NodeId, NodeId)], u: NodeId) -> impl Iterator<Item = NodeId> + '_ {
    links.iter().filter_map(move |&(a, b)| {
        if a == u {
            Some(b)
        } else if b == u {
            Some(a)
        } else {
            None
        }
    })
}

pub fn adjacent(links: &[(NodeId, NodeId)], a: NodeId, b: NodeId) -> bool {
    neighbours(links, a).any(|n| n == b)
}

/// Hops on a shortest path from `from` to `to`, `None` if unreachable.
pub fn hops(links: &[(NodeId, NodeId)], from: NodeId, to: NodeId) -> Option<usize> {
    let mut seen = vec![from];
    let mut queue = VecDeque::from([(from, 0)]);
    while let Some((u, d)) = queue.pop_front() {
        if u == to {
            return Some(d);
        }
        for v in neighbours(links, u) {
            if !seen.contains(&v) {
                seen.push(v);
                queue.push_back((v, d + 1));
            }
        }
    }
    None
}

/// Whether `to` can be reached from `from` without passing `avoid`.
pub fn reachable_avoiding(
    links: &[(NodeId, NodeId)],
    from: NodeId,
    to: NodeId,
    avoid: NodeId,
) -> bool {
    let without: Vec<(NodeId, NodeId)> = links
        .iter()
        .copied()
        .filter(|&(a, b)| a != avoid && b != avoid)
        .collect();
    hops(&without, from, to).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    // 0 - 1 - 2 - 3, with a detour 0 - 4 - 5 - 3.
    const RING: &[(NodeId, NodeId)] = &[(0, 1), (1, 2), (2, 3), (0, 4), (4, 5), (5, 3)];

    #[test]
    fn hop_distance_and_reachability() {
        assert_eq!(hops(RING, 0, 3), Some(3));
        assert_eq!(hops(RING, 1, 5), Some(3));
        assert_eq!(hops(RING, 2, 2), Some(0));
        assert_eq!(hops(&[(0, 1)], 0, 2), None);
        assert!(adjacent(RING, 3, 5) && !adjacent(RING, 1, 3));
        assert!(reachable_avoiding(RING, 1, 3, 0));
        assert!(!reachable_avoiding(&RING[..3], 0, 3, 2));
    }
}
