//! The static route table of a relay: the next hop (a neighbour's UDP
//! socket address) per destination node, and an optional default.
//!
//! Given on the command line (`--route 5=10.0.0.2:7000`,
//! `--route default=10.0.0.9:7000`) or in a file (`--routes FILE`: one
//! `NODE ADDR` or `default ADDR` per line, `#` starts a comment). Errors
//! name the line or the argument.
//!
//! The reverse map answers [`joulenet_proto::Net::previous_hop`]: which
//! neighbour a datagram came from, by its UDP source address. A route names
//! a destination, not a neighbour, so the neighbour behind an address is
//! taken to be the *first destination routed through it*: list each
//! neighbour before the nodes behind it (in a chain, the nearest first).

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::path::Path;

use joulenet_proto::NodeId;

use crate::route::parse_node;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RouteTable {
    routes: BTreeMap<NodeId, SocketAddr>,
    default: Option<SocketAddr>,
    /// Neighbour address → its node id (the first destination routed via it).
    neighbours: HashMap<SocketAddr, NodeId>,
}

impl RouteTable {
    pub fn new() -> RouteTable {
        RouteTable::default()
    }

    /// Adds a route; a destination given twice is an error (a typo, not an
    /// intent to override).
    pub fn add(&mut self, node: NodeId, next_hop: SocketAddr) -> Result<(), String> {
        if let Some(old) = self.routes.get(&node) {
            return Err(format!(
                "node {node} already routed via {old}, cannot also route it via {next_hop}"
            ));
        }
        self.routes.insert(node, next_hop);
        self.neighbours.entry(next_hop).or_insert(node);
        Ok(())
    }

    pub fn set_default(&mut self, next_hop: SocketAddr) -> Result<(), String> {
        if let Some(old) = self.default {
            return Err(format!(
                "default route already via {old}, cannot also be via {next_hop}"
            ));
        }
        self.default = Some(next_hop);
        Ok(())
    }

    /// Where a datagram for `node` goes next.
    pub fn next_hop(&self, node: NodeId) -> Option<SocketAddr> {
        self.routes.get(&node).copied().or(self.default)
    }

    /// The neighbour node behind a UDP address, if the table names it.
    pub fn neighbour(&self, addr: SocketAddr) -> Option<NodeId> {
        self.neighbours.get(&addr).copied()
    }

    /// Every neighbour the table names, with its address.
    pub fn neighbours(&self) -> impl Iterator<Item = (NodeId, SocketAddr)> + '_ {
        self.neighbours.iter().map(|(a, n)| (*n, *a))
    }

    pub fn is_empty(&self) -> bool {
        self.routes.is_empty() && self.default.is_none()
    }

    /// Routes, then the default, for reports.
    pub fn entries(&self) -> Vec<(String, SocketAddr)> {
        let mut v: Vec<(String, SocketAddr)> = self
            .routes
            .iter()
            .map(|(n, a)| (n.to_string(), *a))
            .collect();
        if let Some(d) = self.default {
            v.push(("default".into(), d));
        }
        v
    }

    /// One `NODE=ADDR` or `default=ADDR` argument.
    pub fn add_arg(&mut self, arg: &str) -> Result<(), String> {
        let (node, addr) = arg
            .split_once('=')
            .ok_or_else(|| format!("--route {arg:?}: expected NODE=ADDR or default=ADDR"))?;
        self.add_pair(node, addr)
            .map_err(|e| format!("--route {arg:?}: {e}"))
    }

    fn add_pair(&mut self, node: &str, addr: &str) -> Result<(), String> {
        let next: SocketAddr = addr
            .trim()
            .parse()
            .map_err(|_| format!("{:?} is not an IP:PORT socket address", addr.trim()))?;
        if node.trim().eq_ignore_ascii_case("default") {
            self.set_default(next)
        } else {
            self.add(parse_node(node)?, next)
        }
    }

    /// Routes from a file's text; `name` labels errors.
    pub fn add_text(&mut self, name: &str, text: &str) -> Result<(), String> {
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let mut words = line.split_whitespace();
            let (Some(node), Some(addr), None) = (words.next(), words.next(), words.next()) else {
                return Err(format!(
                    "{name}:{}: expected `NODE ADDR` or `default ADDR`, found {line:?}",
                    i + 1
                ));
            };
            self.add_pair(node, addr)
                .map_err(|e| format!("{name}:{}: {e}", i + 1))?;
        }
        Ok(())
    }

    /// Routes from a file (`--routes FILE`).
    pub fn add_file(&mut self, path: &Path) -> Result<(), String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        self.add_text(&path.display().to_string(), &text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn args_and_default() {
        let mut t = RouteTable::new();
        t.add_arg("5=10.0.0.2:7000").unwrap();
        t.add_arg("default=10.0.0.9:7000").unwrap();
        assert_eq!(t.next_hop(5), Some(a("10.0.0.2:7000")));
        assert_eq!(t.next_hop(6), Some(a("10.0.0.9:7000")));
        let e = t.add_arg("5=10.0.0.3:7000").unwrap_err();
        assert!(e.contains("already routed"), "{e}");
        assert!(t.add_arg("default=10.0.0.3:1").is_err());
        assert!(t.add_arg("7").unwrap_err().contains("NODE=ADDR"));
        assert!(t
            .add_arg("x=10.0.0.1:1")
            .unwrap_err()
            .contains("not a number"));
        assert!(t.add_arg("7=10.0.0.1").unwrap_err().contains("IP:PORT"));
    }

    #[test]
    fn no_route_without_default() {
        let mut t = RouteTable::new();
        assert!(t.is_empty());
        t.add(1, a("127.0.0.1:1")).unwrap();
        assert_eq!(t.next_hop(2), None);
    }

    #[test]
    fn file_with_comments_and_errors_naming_the_line() {
        let mut t = RouteTable::new();
        t.add_text(
            "r.txt",
            "# chain\n1 10.0.0.1:7000   # left neighbour\n0 10.0.0.1:7000\n\n3 10.0.1.2:7000\ndefault 10.0.1.2:7000\n",
        )
        .unwrap();
        assert_eq!(t.next_hop(0), Some(a("10.0.0.1:7000")));
        assert_eq!(t.next_hop(9), Some(a("10.0.1.2:7000")));
        // The first destination routed via an address names the neighbour.
        assert_eq!(t.neighbour(a("10.0.0.1:7000")), Some(1));
        assert_eq!(t.neighbour(a("10.0.1.2:7000")), Some(3));
        assert_eq!(t.neighbour(a("10.9.9.9:1")), None);
        let e = RouteTable::new()
            .add_text("r.txt", "1 10.0.0.1:7000\n2 nonsense\n")
            .unwrap_err();
        assert!(e.starts_with("r.txt:2:"), "{e}");
        let e = RouteTable::new()
            .add_text("r.txt", "\n\n1 10.0.0.1:7000 extra\n")
            .unwrap_err();
        assert!(e.starts_with("r.txt:3:"), "{e}");
        let e = RouteTable::new()
            .add_text("r.txt", "1 10.0.0.1:7000\n1 10.0.0.2:7000\n")
            .unwrap_err();
        assert!(e.starts_with("r.txt:2:") && e.contains("already"), "{e}");
        assert!(RouteTable::new()
            .add_file(Path::new("/no/such/routes"))
            .is_err());
    }
}
