//! The nackrate receiver: delivers in order, exactly once, and answers every
//! `ack_every` data packets (or `ack_delay` after the first unanswered one)
//! with its whole state: cumulative offset, missing ranges, and counters of
//! what arrived on its clock (for the sender's rate measurement).

use std::collections::BTreeMap;

use joulenet_wire::nackrate::{AckRepr, DataRepr, Repr};

use super::config::NackrateConfig;
use super::{timers, unwrap32, PROTOCOL, TX};
use crate::net::{Addr, Agent, Net, TransportEvent};
use crate::stats::TransportStats;
use crate::time::Time;
use crate::timer::TimerTable;

pub struct NackrateReceiver {
    cfg: NackrateConfig,
    peer: Option<Addr>,
    conn_id: u32,
    /// Everything below arrived and was delivered.
    cumulative: u64,
    /// Out-of-order data by offset.
    held: BTreeMap<u64, Vec<u8>>,
    fin_at: Option<u64>,
    closed: bool,
    largest_packet: Option<(u64, Time)>,
    received_bytes: u32,
    received_packets: u32,
    unanswered: u32,
    timers: TimerTable,
    stats: TransportStats,
}

impl NackrateReceiver {
    pub fn new(cfg: NackrateConfig) -> NackrateReceiver {
        NackrateReceiver {
            cfg,
            peer: None,
            conn_id: 0,
            cumulative: 0,
            held: BTreeMap::new(),
            fin_at: None,
            closed: false,
            largest_packet: None,
            received_bytes: 0,
            received_packets: 0,
            unanswered: 0,
            timers: TimerTable::new(),
            stats: TransportStats::default(),
        }
    }

    /// Bytes delivered in order so far.
    pub fn delivered(&self) -> u64 {
        self.cumulative
    }

    /// The missing ranges above the cumulative offset, at most `max`, and
    /// the span they are reported within: a cut list ends the span at the
    /// first range left out, so that all it claims stays true.
    pub fn missing(&self, max: usize) -> (Vec<(u64, u64)>, u64) {
        let mut ranges = Vec::new();
        let mut cursor = self.cumulative;
        for (&off, data) in &self.held {
            if off > cursor {
                if ranges.len() == max {
                    return (ranges, cursor.max(self.cumulative));
                }
                ranges.push((cursor, off));
            }
            cursor = cursor.max(off + data.len() as u64);
        }
        (ranges, cursor)
    }

    fn send_ack(&mut self, net: &mut dyn Net) {
        let Some(peer) = self.peer else { return };
        let now = net.now();
        let (missing, top) = self.missing(self.cfg.max_ranges);
        let (largest, at) = self.largest_packet.unwrap_or((0, now));
        let r = AckRepr {
            fin: self.closed,
            conn_id: self.conn_id,
            largest_packet: largest as u32,
            ack_delay_us: (now.saturating_since(at).as_nanos() / 1000).min(u32::MAX as u64) as u32,
            receiver_time_us: (now.as_nanos() / 1000) as u32,
            received_bytes: self.received_bytes,
            received_packets: self.received_packets,
            cumulative: self.cumulative,
            span: (top - self.cumulative).min(u32::MAX as u64) as u32,
            missing,
        };
        let mut p = net.packet_buffer();
        if r.emit(&mut p).is_ok() {
            self.stats.control_packets += 1;
            self.stats.control_bytes += p.len() as u64;
            net.send(peer, p, TX);
        }
        self.unanswered = 0;
        self.timers.cancel(timers::ACK);
    }

    /// Takes a data packet's payload; false if it brought nothing new.
    fn accept(&mut self, net: &mut dyn Net, offset: u64, data: &[u8]) -> bool {
        let end = offset + data.len() as u64;
        if end <= self.cumulative
            || self
                .held
                .get(&offset)
                .is_some_and(|d| d.len() >= data.len())
        {
            return false;
        }
        if offset > self.cumulative {
            self.held.insert(offset, data.to_vec());
            return true;
        }
        net.deliver(&data[(self.cumulative - offset) as usize..]);
        self.cumulative = end;
        while let Some(entry) = self.held.first_entry() {
            let off = *entry.key();
            if off > self.cumulative {
                break;
            }
            let piece = entry.remove();
            let end = off + piece.len() as u64;
            if end > self.cumulative {
                net.deliver(&piece[(self.cumulative - off) as usize..]);
                self.cumulative = end;
            }
        }
        true
    }

    fn on_data(&mut self, net: &mut dyn Net, d: DataRepr, payload: &[u8], wire_len: usize) {
        let now = net.now();
        self.received_bytes = self.received_bytes.wrapping_add(wire_len as u32);
        self.received_packets = self.received_packets.wrapping_add(1);
        let near = self.largest_packet.map_or(0, |(n, _)| n);
        let pn = unwrap32(near, d.packet_number);
        if self.largest_packet.is_none_or(|(n, _)| pn > n) {
            self.largest_packet = Some((pn, now));
        }
        let new = !payload.is_empty() && self.accept(net, d.offset, payload);
        if d.fin {
            let end = d.offset + payload.len() as u64;
            if self.fin_at.is_some_and(|f| f != end) {
                self.stats.unexpected_dropped += 1;
                return;
            }
            self.fin_at = Some(end);
        } else if !new {
            // A duplicate (a repair that crossed the ACK that made it
            // needless): counted and dropped, but answered at once, since
            // its sender did not know what we have.
            self.stats.unexpected_dropped += 1;
            self.send_ack(net);
            return;
        }
        if !self.closed && self.fin_at == Some(self.cumulative) {
            self.closed = true;
            net.deliver_finished();
            net.event(TransportEvent::Closed);
        }
        self.unanswered += 1;
        // A repair is answered at once: the sender is waiting to hear of
        // it (a probe, or a hole's last piece).
        if self.unanswered >= self.cfg.ack_every || self.closed || d.retransmission {
            self.send_ack(net);
        } else if !self.timers.is_armed(timers::ACK) {
            self.timers.set(timers::ACK, now + self.cfg.ack_delay);
        }
    }
}

impl Agent for NackrateReceiver {
    fn protocol(&self) -> &'static str {
        PROTOCOL
    }

    fn start(&mut self, _net: &mut dyn Net) {}

    fn on_packet(&mut self, net: &mut dyn Net, from: Addr, packet: &[u8]) {
        let Some((p, r)) = super::accept(&mut self.stats, packet) else {
            return;
        };
        let Repr::Data(d) = r else {
            self.stats.unexpected_dropped += 1;
            return;
        };
        match self.peer {
            None => {
                self.peer = Some(from);
                self.conn_id = d.conn_id;
                net.event(TransportEvent::Established);
            }
            Some(peer) if peer != from || d.conn_id != self.conn_id => {
                self.stats.unexpected_dropped += 1;
                return;
            }
            Some(_) => {}
        }
        self.on_data(net, d, p.payload(), packet.len());
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.timers.next()
    }

    fn on_timeout(&mut self, net: &mut dyn Net) {
        while let Some(t) = self.timers.pop_expired(net.now()) {
            if t == timers::ACK && self.unanswered > 0 {
                self.send_ack(net);
            }
        }
    }

    fn stats(&self) -> &TransportStats {
        &self.stats
    }

    fn is_closed(&self) -> bool {
        self.closed
    }
}
