//! Link-state routing whose advertisements travel over the air.
//!
//! Every node periodically originates a link-state advertisement (LSA): its
//! sequence number and the neighbours it has heard within the dead
//! interval, each with the ETX it measures toward them. An LSA is a
//! broadcast data frame on the shared medium (no ACK, no retry, queued like
//! any frame, charged airtime and energy) and is flooded: a node that
//! decodes an LSA newer than the one it holds from that origin installs it,
//! recomputes its own routes and broadcasts it once more. Each node routes
//! on its own view — its database of the newest LSAs it has decoded — so a
//! view goes stale when advertisements collide, fade or sit in queues, and
//! nodes' views may disagree for a while.
//!
//! The network starts converged: at time zero every node holds every
//! node's initial advertisement (neighbours from the model) and has heard
//! all its neighbours.

use std::sync::Arc;

use joulenet_proto::{Duration, NodeId, Time};

use super::routing::{Routes, NONE};

/// One advertisement: the origin's neighbours and its ETX toward each.
#[derive(Clone, Debug, PartialEq)]
pub struct Lsa {
    pub origin: NodeId,
    pub seq: u32,
    pub links: Vec<(NodeId, f32)>,
}

/// IP protocol number carried in the (charged) network header: OSPF's.
pub const IP_PROTOCOL: u8 = 89;
const MAGIC: u8 = 0x4c;

impl Lsa {
    /// Wire form: magic (1), origin (4), sequence (4), count (2), then per
    /// neighbour its id (4) and ETX in thousandths (4), big-endian.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(MAGIC);
        out.extend_from_slice(&self.origin.to_be_bytes());
        out.extend_from_slice(&self.seq.to_be_bytes());
        out.extend_from_slice(&(self.links.len() as u16).to_be_bytes());
        for &(v, etx) in &self.links {
            out.extend_from_slice(&v.to_be_bytes());
            let milli = (etx as f64 * 1000.0).round().clamp(0.0, u32::MAX as f64) as u32;
            out.extend_from_slice(&milli.to_be_bytes());
        }
    }

    /// Parse an advertisement; `None` for anything malformed.
    pub fn decode(b: &[u8]) -> Option<Lsa> {
        let u32_at = |i: usize| -> Option<u32> {
            Some(u32::from_be_bytes(b.get(i..i + 4)?.try_into().ok()?))
        };
        if b.first() != Some(&MAGIC) || b.len() < 11 {
            return None;
        }
        let origin = u32_at(1)?;
        let seq = u32_at(5)?;
        let count = u16::from_be_bytes([b[9], b[10]]) as usize;
        if b.len() != 11 + 8 * count {
            return None;
        }
        let links = (0..count)
            .map(|k| {
                let at = 11 + 8 * k;
                Some((u32_at(at)?, u32_at(at + 4)? as f32 / 1000.0))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Lsa { origin, seq, links })
    }
}

/// Every node's view and what it has heard.
pub struct LinkStateViews {
    pub n: usize,
    pub interval: Duration,
    /// A neighbour not heard for this long is left out of advertisements.
    pub dead: Duration,
    /// `db[u * n + o]`: the newest advertisement of `o` that `u` holds.
    db: Vec<Option<Arc<Lsa>>>,
    /// `heard[u * n + v]`: when `u` last decoded a frame from `v`.
    heard: Vec<Option<Time>>,
    next_seq: Vec<u32>,
}

impl LinkStateViews {
    /// Converged views of the initial network: `links[o]` are node o's
    /// neighbours with their ETX.
    pub fn new(interval: Duration, links: Vec<Vec<(NodeId, f32)>>) -> LinkStateViews {
        let n = links.len();
        let mut heard = vec![None; n * n];
        let lsas: Vec<Arc<Lsa>> = links
            .into_iter()
            .enumerate()
            .map(|(o, links)| {
                for &(v, _) in &links {
                    heard[o * n + v as usize] = Some(Time::ZERO);
                }
                Arc::new(Lsa {
                    origin: o as NodeId,
                    seq: 0,
                    links,
                })
            })
            .collect();
        let mut db = Vec::with_capacity(n * n);
        for _ in 0..n {
            db.extend(lsas.iter().cloned().map(Some));
        }
        LinkStateViews {
            n,
            interval,
            dead: interval.saturating_mul(3),
            db,
            heard,
            next_seq: vec![1; n],
        }
    }

    /// `u` decoded a frame from `v` at `now`.
    pub fn heard(&mut self, u: usize, v: usize, now: Time) {
        self.heard[u * self.n + v] = Some(now);
    }

    /// The neighbours `u` has heard within the dead interval.
    pub fn live_neighbours(&self, u: usize, now: Time) -> impl Iterator<Item = usize> + '_ {
        let dead = self.dead;
        (0..self.n)
            .filter(move |&v| v != u && self.heard[u * self.n + v].is_some_and(|t| t + dead >= now))
    }

    /// `u` originates its next advertisement from `links`; installs it in
    /// its own view and returns it for the air.
    pub fn originate(&mut self, u: usize, links: Vec<(NodeId, f32)>) -> Arc<Lsa> {
        let seq = self.next_seq[u];
        self.next_seq[u] += 1;
        let lsa = Arc::new(Lsa {
            origin: u as NodeId,
            seq,
            links,
        });
        self.db[u * self.n + u] = Some(lsa.clone());
        lsa
    }

    /// `u` decoded `lsa`: installs it if newer than what it holds. Returns
    /// whether it was new (and so must be flooded on).
    pub fn install(&mut self, u: usize, lsa: Lsa) -> bool {
        let o = lsa.origin as usize;
        if o >= self.n || o == u || lsa.links.iter().any(|&(v, _)| v as usize >= self.n) {
            return false;
        }
        let slot = &mut self.db[u * self.n + o];
        if slot.as_ref().is_some_and(|old| old.seq >= lsa.seq) {
            return false;
        }
        *slot = Some(Arc::new(lsa));
        true
    }

    /// (node, origin) pairs whose view is behind the origin's newest
    /// advertisement.
    pub fn stale_pairs(&self) -> u64 {
        let n = self.n;
        let mut stale = 0;
        for u in 0..n {
            for o in (0..n).filter(|&o| o != u) {
                let newest = self.next_seq[o] - 1;
                if self.seq_in_view(u, o).is_none_or(|s| s < newest) {
                    stale += 1;
                }
            }
        }
        stale
    }

    /// The sequence number of `o`'s advertisement in `u`'s view.
    pub fn seq_in_view(&self, u: usize, o: usize) -> Option<u32> {
        self.db[u * self.n + o].as_ref().map(|l| l.seq)
    }

    /// Recompute row `u` of `routes` from `u`'s view: a link o→v is used
    /// when both o's and v's advertisements list the other (ETX: o's).
    pub fn route_row(&self, u: usize, routes: &mut Routes) {
        let n = self.n;
        let view = &self.db[u * n..(u + 1) * n];
        let lists = |o: usize, v: usize| {
            view[v]
                .as_ref()
                .is_some_and(|l| l.links.iter().any(|&(x, _)| x as usize == o))
        };
        let neighbours: Vec<Vec<(usize, u64)>> = (0..n)
            .map(|o| match &view[o] {
                None => Vec::new(),
                Some(l) => l
                    .links
                    .iter()
                    .filter(|&&(v, _)| lists(o, v as usize))
                    .map(|&(v, etx)| (v as usize, (etx.max(1.0) as f64 * 1e6) as u64))
                    .collect(),
            })
            .collect();
        let (first, hops) = super::routing::shortest_from(&neighbours, u);
        routes.next[u * n..(u + 1) * n].copy_from_slice(&first);
        routes.hops[u * n..(u + 1) * n].copy_from_slice(&hops);
        debug_assert!(routes.next[u * n + u] == NONE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain_links(n: usize) -> Vec<Vec<(NodeId, f32)>> {
        (0..n)
            .map(|i| {
                let mut l = Vec::new();
                if i > 0 {
                    l.push((i as NodeId - 1, 1.0));
                }
                if i + 1 < n {
                    l.push((i as NodeId + 1, 1.0));
                }
                l
            })
            .collect()
    }

    #[test]
    fn advertisements_round_trip_and_reject_garbage() {
        let lsa = Lsa {
            origin: 7,
            seq: 42,
            links: vec![(1, 1.0), (9, 2.5)],
        };
        let mut b = Vec::new();
        lsa.encode(&mut b);
        assert_eq!(b.len(), 11 + 16);
        assert_eq!(Lsa::decode(&b), Some(lsa));
        assert_eq!(Lsa::decode(&b[..b.len() - 1]), None);
        assert_eq!(Lsa::decode(&[]), None);
        b[0] = 0;
        assert_eq!(Lsa::decode(&b), None);
    }

    /// A square 0–1–3, 0–2–3. Node 1 loses its link to 3. Node 0's view
    /// keeps routing via 1 until 1's (and 3's) new advertisements reach it:
    /// a lost advertisement leaves the view stale; an older or repeated one
    /// is ignored; once both arrive, 0 routes via 2.
    #[test]
    fn a_missing_advertisement_leaves_the_view_stale() {
        let links = vec![
            vec![(1, 1.0), (2, 1.0)],
            vec![(0, 1.0), (3, 1.0)],
            vec![(0, 1.0), (3, 1.0)],
            vec![(1, 1.0), (2, 1.0)],
        ];
        let mut v = LinkStateViews::new(Duration::from_secs(5), links);
        let mut routes = Routes {
            n: 4,
            next: vec![NONE; 16],
            hops: vec![u32::MAX; 16],
        };
        v.route_row(0, &mut routes);
        assert_eq!(routes.next_hop(0, 3), Some(1));
        // Node 1 advertises without 3; the advertisement is lost before 0.
        let lsa1 = v.originate(1, vec![(0, 1.0)]);
        v.route_row(0, &mut routes);
        assert_eq!(routes.next_hop(0, 3), Some(1), "stale view");
        // Node 3's advertisement alone (dropping 1) is enough: the link
        // must be listed by both ends.
        let lsa3 = v.originate(3, vec![(2, 1.0)]);
        assert!(v.install(0, (*lsa3).clone()));
        assert!(!v.install(0, (*lsa3).clone()), "a repeat is not new");
        v.route_row(0, &mut routes);
        assert_eq!(routes.next_hop(0, 3), Some(2));
        assert_eq!(routes.hops(0, 3), 2);
        // An older advertisement of node 3 does not roll the view back.
        let old = Lsa {
            origin: 3,
            seq: 0,
            links: vec![(1, 1.0), (2, 1.0)],
        };
        assert!(!v.install(0, old));
        assert!(v.install(0, (*lsa1).clone()));
        v.route_row(0, &mut routes);
        assert_eq!(routes.next_hop(0, 3), Some(2));
        assert_eq!(v.seq_in_view(0, 1), Some(1));
        assert_eq!(v.seq_in_view(2, 1), Some(0), "node 2 never heard it");
    }

    #[test]
    fn neighbours_expire_after_the_dead_interval() {
        let mut v = LinkStateViews::new(Duration::from_secs(1), chain_links(3));
        let live = |v: &LinkStateViews, t: u64| -> Vec<usize> {
            v.live_neighbours(1, Time::ZERO + Duration::from_secs(t))
                .collect()
        };
        assert_eq!(live(&v, 3), vec![0, 2]);
        v.heard(1, 2, Time::ZERO + Duration::from_secs(2));
        assert_eq!(live(&v, 4), vec![2]);
        assert_eq!(live(&v, 6), Vec::<usize>::new());
    }
}
