//! Network lifetime: when nodes die (their batteries run out) and when a
//! flow's source and destination are first cut apart by the deaths.
//!
//! Connectivity is judged on the network as built (links, and the medium's
//! neighbours at the initial positions, PER < 1), less the dead nodes: a
//! partition is a death-made cut, not a fade or a move.

use joulenet_proto::Time;

use crate::simulation::Simulation;

/// Which nodes can hear which, and the flows' partition times so far.
#[derive(Clone, Debug, Default)]
pub(crate) struct Lifetime {
    adjacency: Vec<Vec<u32>>,
    /// Per flow: when its ends were first disconnected.
    pub(crate) partitioned_at: Vec<Option<Time>>,
}

impl Lifetime {
    pub(crate) fn new(sim: &Simulation) -> Lifetime {
        let n = sim.core.nodes.len();
        let mut adjacency = vec![Vec::new(); n];
        if let Some(m) = &sim.spec.medium {
            for (a, near) in m.adjacency().into_iter().enumerate().take(n) {
                adjacency[a].extend(near);
            }
        }
        for link in &sim.core.links {
            adjacency[link.from as usize].push(link.to);
        }
        Lifetime {
            adjacency,
            partitioned_at: vec![None; sim.spec.flows.len()],
        }
    }

    /// Whether `to` can be reached from `from` through live nodes.
    fn connected(&self, alive: &[bool], from: usize, to: usize) -> bool {
        if !alive[from] || !alive[to] {
            return false;
        }
        let mut seen = vec![false; alive.len()];
        seen[from] = true;
        let mut stack = vec![from];
        while let Some(u) = stack.pop() {
            if u == to {
                return true;
            }
            for &v in &self.adjacency[u] {
                let v = v as usize;
                if alive[v] && !seen[v] {
                    seen[v] = true;
                    stack.push(v);
                }
            }
        }
        false
    }
}

impl Simulation {
    /// A node just died: note every flow whose ends it cut apart.
    pub(crate) fn note_death(&mut self) {
        let alive: Vec<bool> = self.core.nodes.iter().map(|n| n.alive()).collect();
        let now = self.core.now;
        for (f, flow) in self.spec.flows.iter().enumerate() {
            let lifetime = &self.lifetime;
            if lifetime.partitioned_at[f].is_none()
                && !lifetime.connected(&alive, flow.from as usize, flow.to as usize)
            {
                self.lifetime.partitioned_at[f] = Some(now);
            }
        }
    }
}

/// The time of the first death and the time by which at least `fraction`
/// of all nodes had died, from each node's death time.
pub(crate) fn deaths(died_at_s: &[Option<f64>], fraction: f64) -> (Option<f64>, Option<f64>) {
    let mut times: Vec<f64> = died_at_s.iter().flatten().copied().collect();
    times.sort_by(f64::total_cmp);
    let needed = (fraction * died_at_s.len() as f64).ceil().max(1.0) as usize;
    (times.first().copied(), times.get(needed - 1).copied())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_death_and_the_fraction_dead() {
        let died = [Some(5.0), None, Some(2.0), Some(9.0)];
        assert_eq!(deaths(&died, 0.5), (Some(2.0), Some(5.0)));
        assert_eq!(deaths(&died, 1.0), (Some(2.0), None));
        assert_eq!(deaths(&died, 0.1), (Some(2.0), Some(2.0)));
        assert_eq!(deaths(&[None, None], 0.5), (None, None));
    }

    #[test]
    fn connectivity_routes_around_the_dead() {
        // 0 - 1 - 3 and 0 - 2 - 3.
        let l = Lifetime {
            adjacency: vec![vec![1, 2], vec![0, 3], vec![0, 3], vec![1, 2]],
            partitioned_at: Vec::new(),
        };
        assert!(l.connected(&[true, false, true, true], 0, 3));
        assert!(!l.connected(&[true, false, false, true], 0, 3));
        assert!(!l.connected(&[false, true, true, true], 0, 3));
    }
}
