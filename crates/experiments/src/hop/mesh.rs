//! The links and path lengths of the seeded 20-node random mesh, for the
//! experiments that pick links or node pairs on it (§5.1.1, §5.6.2, §5.8):
//! nodes are neighbours within the medium's range (250 m, the default the
//! mesh scenarios keep), and a pair's distance is its fewest hops.

use joulenet_sim::Scenario;
use toml::{Table, Value};

use super::Ctx;

/// The medium's default `range`, which the mesh scenarios keep.
const RANGE_M: f64 = 250.0;

pub(super) struct Mesh {
    pub nodes: usize,
    /// Undirected links (a < b).
    pub links: Vec<(u32, u32)>,
    /// Fewest hops between every pair (`usize::MAX`: unreachable).
    hops: Vec<Vec<usize>>,
}

impl Mesh {
    /// The mesh of `scenario`, from the positions a momentary run reports.
    pub fn of(ctx: &mut Ctx, scenario: &Scenario) -> Result<Mesh, String> {
        let runs = ctx.runs_of(scenario, &["stop=\"1ms\"".to_string()])?;
        let nodes = &runs[0].nodes;
        let mut pos = Vec::new();
        for n in nodes {
            match (n.x_m, n.y_m) {
                (Some(x), Some(y)) => pos.push((x, y)),
                _ => return Err(format!("{}: no node positions", scenario.name())),
            }
        }
        let mut links = Vec::new();
        for a in 0..pos.len() {
            for b in a + 1..pos.len() {
                let d = (pos[a].0 - pos[b].0).hypot(pos[a].1 - pos[b].1);
                if d <= RANGE_M {
                    links.push((a as u32, b as u32));
                }
            }
        }
        let hops = (0..pos.len()).map(|s| bfs(pos.len(), &links, s)).collect();
        Ok(Mesh {
            nodes: pos.len(),
            links,
            hops,
        })
    }

    /// Fewest hops from `a` to `b`.
    pub fn hops(&self, a: usize, b: usize) -> usize {
        self.hops[a][b]
    }

    /// Every ordered pair whose fewest hops satisfy `keep`.
    pub fn pairs(&self, keep: impl Fn(usize) -> bool) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        for a in 0..self.nodes {
            for b in 0..self.nodes {
                let h = self.hops(a, b);
                if a != b && h != usize::MAX && keep(h) {
                    out.push((a as u32, b as u32));
                }
            }
        }
        out
    }
}

fn bfs(n: usize, links: &[(u32, u32)], source: usize) -> Vec<usize> {
    let mut dist = vec![usize::MAX; n];
    dist[source] = 0;
    let mut queue = std::collections::VecDeque::from([source]);
    while let Some(u) = queue.pop_front() {
        for &(a, b) in links {
            let (a, b) = (a as usize, b as usize);
            let v = if a == u {
                b
            } else if b == u {
                a
            } else {
                continue;
            };
            if dist[v] == usize::MAX {
                dist[v] = dist[u] + 1;
                queue.push_back(v);
            }
        }
    }
    dist
}

/// A flow table from `a` to `b`, with more keys.
pub(super) fn flow(a: u32, b: u32, more: &[(&str, Value)]) -> Table {
    let mut t = Table::new();
    t.insert("from".into(), i64::from(a).into());
    t.insert("to".into(), i64::from(b).into());
    for (k, v) in more {
        t.insert((*k).into(), v.clone());
    }
    t
}

/// `base` with `flows` as its `[[flows]]`.
pub(super) fn with_flows(
    ctx: &Ctx,
    base: &Scenario,
    flows: Vec<Table>,
) -> Result<Scenario, String> {
    let mut table = base.table().clone();
    let flows = flows.into_iter().map(Value::Table).collect();
    table.insert("flows".into(), Value::Array(flows));
    Scenario::from_table(table, base.name(), ctx.dir.clone()).map_err(|e| e.to_string())
}
