//! iJTP on an intermediate node (§2.2.2, §3, §4): one agent per node, since
//! the packet cache is the node's and shared by every flow crossing it.
//!
//! On each data packet in transit it applies the per-hop rewrite
//! ([`super::hop::rewrite`]: link attempts, loss tolerance, minimum effective
//! available rate, energy used — dropping a packet over its energy budget)
//! and caches the packet as it arrived. On each ACK in transit it drops the
//! cached packets the cumulative ACK covers, and retransmits toward the
//! destination, on the source's behalf ([`Net::send_as`]), every SNACKed
//! packet it holds that no node downstream recovered already, moving it
//! from the SNACK to the locally-recovered list so that upstream nodes and
//! the source skip it.
//!
//! The relay keeps no timers: its state is the cache, which only packets
//! change. A node whose cache is empty holds nothing and reports itself
//! closed.

use joulenet_wire::jtp::{JtpPacket, JtpRepr, Kind};

use super::cache::LruCache;
use super::config::JtpConfig;
use super::hop::{rewrite, HopVerdict};
use crate::config_error::ConfigError;
use crate::net::{Addr, Agent, Net, TimerTable, Transit, TransitVerdict, TxOpts};
use crate::stats::TransportStats;
use crate::time::Time;

/// A cached packet: (source, destination, flow, sequence number).
pub type CacheKey = (Addr, Addr, u16, u32);

/// Counters of one node's iJTP.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct RelayCounters {
    /// Data packets rewritten and passed on.
    pub forwarded: u64,
    /// Data packets dropped because their energy budget was spent.
    pub over_budget: u64,
    /// Packets retransmitted from the cache for a SNACK.
    pub local_retransmissions: u64,
    /// ACKs seen (and possibly rewritten).
    pub acks: u64,
    /// Cached packets evicted to make room (LRU).
    pub evicted: u64,
}

pub struct JtpRelay {
    cfg: JtpConfig,
    /// Always empty: see the module docs.
    timers: TimerTable,
    cache: LruCache<CacheKey, Vec<u8>>,
    stats: TransportStats,
    pub counters: RelayCounters,
}

impl JtpRelay {
    pub fn new(cfg: JtpConfig) -> Result<JtpRelay, ConfigError> {
        cfg.validate()?;
        Ok(JtpRelay {
            cache: LruCache::new(cfg.cache_packets),
            cfg,
            timers: TimerTable::new(),
            stats: TransportStats::default(),
            counters: RelayCounters::default(),
        })
    }

    /// Packets cached now.
    pub fn cached(&self) -> usize {
        self.cache.len()
    }

    fn on_data(
        &mut self,
        net: &mut dyn Net,
        t: &mut Transit<'_>,
        flow: u16,
        seq: u32,
    ) -> TransitVerdict {
        let arrived = t.packet.clone();
        match rewrite(net, t.dst.node, t.packet, &self.cfg) {
            HopVerdict::OverBudget => {
                self.counters.over_budget += 1;
                return TransitVerdict::Drop;
            }
            HopVerdict::Send { link_attempts } => t.opts.link_attempts = Some(link_attempts),
        }
        self.counters.forwarded += 1;
        if self
            .cache
            .insert((t.src, t.dst, flow, seq), arrived)
            .is_some()
        {
            self.counters.evicted += 1;
        }
        TransitVerdict::Forward
    }

    fn on_ack(&mut self, net: &mut dyn Net, t: &mut Transit<'_>) -> TransitVerdict {
        self.counters.acks += 1;
        let Ok(JtpRepr::Ack(mut ack)) = JtpRepr::parse(&JtpPacket::new_unchecked(&t.packet[..]))
        else {
            return TransitVerdict::Forward;
        };
        // The ACK travels from the data's destination to its source.
        let (data_src, data_dst) = (t.dst, t.src);
        let flow = ack.flow;
        let cum = ack.cum_ack;
        self.cache
            .retain(|k| !(k.0 == data_src && k.1 == data_dst && k.2 == flow && k.3 < cum));
        let mut kept = Vec::with_capacity(ack.snack.len());
        let mut recovered = false;
        for seq in std::mem::take(&mut ack.snack) {
            let key = (data_src, data_dst, flow, seq);
            if ack.local.contains(&seq) {
                continue;
            }
            let Some(cached) = self.cache.get(&key) else {
                kept.push(seq);
                continue;
            };
            let mut copy = cached.clone();
            JtpPacket::new_unchecked(&mut copy[..]).set_local(true);
            let HopVerdict::Send { link_attempts } =
                rewrite(net, data_dst.node, &mut copy, &self.cfg)
            else {
                kept.push(seq);
                continue;
            };
            let mut opts = TxOpts::ipv4(joulenet_wire::jtp::PROTOCOL);
            opts.link_attempts = Some(link_attempts);
            self.stats.retransmitted_packets += 1;
            self.stats.retransmitted_bytes += copy.len() as u64;
            net.send_as(data_src, data_dst, copy, opts);
            self.counters.local_retransmissions += 1;
            ack.local.push(seq);
            recovered = true;
        }
        ack.snack = kept;
        if recovered {
            t.packet.clear();
            JtpRepr::Ack(ack).emit_to_vec(t.packet);
        }
        TransitVerdict::Forward
    }
}

impl Agent for JtpRelay {
    fn protocol(&self) -> &'static str {
        "jtp"
    }

    fn start(&mut self, _net: &mut dyn Net) {}

    /// iJTP has no packets addressed to it.
    fn on_packet(&mut self, _net: &mut dyn Net, _from: Addr, _packet: &[u8]) {
        self.stats.unexpected_dropped += 1;
    }

    fn on_transit(&mut self, net: &mut dyn Net, t: &mut Transit<'_>) -> TransitVerdict {
        let (kind, flow, seq) = match JtpPacket::new_checked(&t.packet[..]) {
            Ok(p) => (p.kind(), p.flow(), p.seq()),
            Err(_) => {
                // Not ours to judge: pass it on untouched.
                self.stats.malformed_dropped += 1;
                return TransitVerdict::Forward;
            }
        };
        self.stats.packets_received += 1;
        self.stats.bytes_received += t.packet.len() as u64;
        match kind {
            Some(Kind::Data) => self.on_data(net, t, flow, seq),
            Some(Kind::Ack) => self.on_ack(net, t),
            None => TransitVerdict::Forward,
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.timers.next()
    }

    fn on_timeout(&mut self, net: &mut dyn Net) {
        while self.timers.pop_expired(net.now()).is_some() {}
    }

    fn stats(&self) -> &TransportStats {
        &self.stats
    }

    fn gauge(&self, name: &str) -> Option<f64> {
        match name {
            "jtp_cached" => Some(self.cache.len() as f64),
            "jtp_local_retx" => Some(self.counters.local_retransmissions as f64),
            "jtp_over_budget" => Some(self.counters.over_budget as f64),
            _ => None,
        }
    }

    fn is_closed(&self) -> bool {
        self.cache.is_empty()
    }
}
