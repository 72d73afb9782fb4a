//! Routing on the medium: static shortest paths over the connectivity
//! graph, by hop count or by ETX (ties broken by node order, so routes are
//! deterministic), DTN next hops toward the edge of a partition, and
//! link-state views (refreshed instantly, or fed by advertisements flooded
//! on the air, `link_state.rs`). [`Router`] owns all of it; it reads the
//! geometry's PER matrix and which nodes are up, never the MAC.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use joulenet_proto::NodeId;

use super::link_state::LinkStateViews;
use super::{Metric, Routing};

pub const NONE: NodeId = u32::MAX;

/// `next[src * n + dst]` and `hops[src * n + dst]`.
#[derive(Clone, Debug, Default)]
pub struct Routes {
    pub n: usize,
    pub next: Vec<NodeId>,
    pub hops: Vec<u32>,
}

impl Routes {
    /// Shortest paths on the graph whose edge a→b exists when `per[a][b] < 1`
    /// (and the node is `up`).
    pub fn compute(per: &[f32], n: usize, metric: Metric, up: &[bool]) -> Routes {
        let mut routes = Routes {
            n,
            next: vec![NONE; n * n],
            hops: vec![u32::MAX; n * n],
        };
        let weight = |a: usize, b: usize| -> Option<u64> {
            let (f, r) = (per[a * n + b] as f64, per[b * n + a] as f64);
            if f >= 1.0 || !up[a] || !up[b] {
                return None;
            }
            Some(match metric {
                Metric::Hops => 1_000_000,
                // ETX = 1 / (df · dr) in millionths; an unusable reverse
                // direction (no ACKs) counts as very poor, not absent.
                Metric::Etx => {
                    let d = (1.0 - f) * (1.0 - r).max(0.01);
                    (1e6 / d).min(1e12) as u64
                }
            })
        };
        let neighbours: Vec<Vec<(usize, u64)>> = (0..n)
            .map(|a| {
                (0..n)
                    .filter(|&b| b != a)
                    .filter_map(|b| weight(a, b).map(|w| (b, w)))
                    .collect()
            })
            .collect();
        for src in (0..n).filter(|&s| up[s]) {
            let (first, hops) = shortest_from(&neighbours, src);
            routes.next[src * n..(src + 1) * n].copy_from_slice(&first);
            routes.hops[src * n..(src + 1) * n].copy_from_slice(&hops);
        }
        routes
    }

    pub fn next_hop(&self, src: NodeId, dst: NodeId) -> Option<NodeId> {
        let (s, d) = (src as usize, dst as usize);
        if s >= self.n || d >= self.n {
            return None;
        }
        let h = self.next[s * self.n + d];
        (h != NONE).then_some(h)
    }

    pub fn hops(&self, src: NodeId, dst: NodeId) -> u32 {
        self.hops[src as usize * self.n + dst as usize]
    }
}

/// The routing part of the medium: the routes every node uses now.
pub struct Router {
    pub mode: Routing,
    metric: Metric,
    pub routes: Routes,
    /// Routes of the complete network, for DTN next hops.
    all_up_routes: Option<Routes>,
    /// Per-node link-state views (over-the-air advertisements).
    pub ls: Option<LinkStateViews>,
}

impl Router {
    /// Routes of the initial graph (`per` row-major over `n` nodes).
    pub fn new(per: &[f32], n: usize, metric: Metric, mode: Routing, up: &[bool]) -> Router {
        let routes = Routes::compute(per, n, metric, up);
        Router {
            all_up_routes: (mode == Routing::Dtn).then(|| routes.clone()),
            routes,
            mode,
            metric,
            ls: None,
        }
    }

    /// The next hop from `node` toward `dst` and the hops left.
    pub fn next_hop(&self, node: NodeId, dst: NodeId, up: &[bool]) -> Option<(NodeId, u32)> {
        if let Some(h) = self.routes.next_hop(node, dst) {
            return Some((h, self.routes.hops(node, dst)));
        }
        let all = self.all_up_routes.as_ref()?;
        let h = all.next_hop(node, dst)?;
        up[h as usize].then(|| (h, all.hops(node, dst)))
    }

    /// Link-state views are refreshed only at updates, not at every change.
    pub fn stale_views(&self) -> bool {
        matches!(self.mode, Routing::LinkState { .. })
    }

    /// The graph changed (a node failed or recovered, nodes moved): routes
    /// follow at once unless views are refreshed only at updates.
    pub fn graph_changed(&mut self, per: &[f32], n: usize, up: &[bool]) {
        if !self.stale_views() {
            self.routes = Routes::compute(per, n, self.metric, up);
        }
    }

    /// A link-state update without messages: routes by ETX on `est`.
    pub fn refresh(&mut self, est: &[f32], n: usize, up: &[bool]) {
        self.routes = Routes::compute(est, n, Metric::Etx, up);
    }
}

/// Dijkstra from `src` over weighted adjacency lists: the first hop and
/// the hop count toward every node (`NONE` / `u32::MAX` if unreachable).
pub fn shortest_from(neighbours: &[Vec<(usize, u64)>], src: usize) -> (Vec<NodeId>, Vec<u32>) {
    let n = neighbours.len();
    let mut dist = vec![u64::MAX; n];
    let mut first = vec![NONE; n];
    let mut hops = vec![u32::MAX; n];
    dist[src] = 0;
    hops[src] = 0;
    let mut heap = BinaryHeap::from([Reverse((0u64, src))]);
    while let Some(Reverse((d, u))) = heap.pop() {
        if d > dist[u] {
            continue;
        }
        for &(v, w) in &neighbours[u] {
            let nd = d + w;
            if nd < dist[v] {
                dist[v] = nd;
                hops[v] = hops[u] + 1;
                first[v] = if u == src { v as NodeId } else { first[u] };
                heap.push(Reverse((nd, v)));
            }
        }
    }
    (first, hops)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_routes_and_etx_detour() {
        // 0-1-2 chain plus a lossy direct 0-2 link.
        let n = 3;
        let mut per = vec![1.0f32; 9];
        for (a, b, p) in [(0, 1, 0.0), (1, 2, 0.0), (0, 2, 0.6)] {
            per[a * n + b] = p;
            per[b * n + a] = p;
        }
        let up = [true; 3];
        let hops = Routes::compute(&per, n, Metric::Hops, &up);
        assert_eq!(hops.next_hop(0, 2), Some(2));
        let etx = Routes::compute(&per, n, Metric::Etx, &up);
        assert_eq!(etx.next_hop(0, 2), Some(1));
        assert_eq!(etx.hops(0, 2), 2);
    }
}
