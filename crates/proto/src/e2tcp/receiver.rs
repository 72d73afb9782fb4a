//! The E2TCP receiver: acknowledges every segment at once with the
//! contiguous prefix and up to two SACK blocks of what lies beyond it, and,
//! when its application's buffer is bounded (a relay), the room left there
//! as the advertised window (flow control: the sender keeps its data within
//! it).

use joulenet_wire::e2tcp::{E2tcpRepr, MAX_SACK};

use super::config::E2tcpConfig;
use super::{finish_header, tx_opts, unwrap, PROTOCOL};
use crate::net::{Addr, Agent, Net, TransportEvent};
use crate::stats::TransportStats;
use crate::tcp::reassembly::Reassembly;
use crate::time::Time;

pub struct E2tcpReceiver {
    cfg: E2tcpConfig,
    peer: Option<Addr>,
    conn_id: u8,
    established: bool,
    rcv_nxt: u64,
    held: Reassembly,
    /// Stream offset of the FIN, once seen.
    fin_at: Option<u64>,
    closed: bool,
    /// The window the last ACK advertised (bytes; `u16::MAX` while the
    /// application's buffer is unbounded and no window is sent).
    advertised: u16,
    stats: TransportStats,
}

impl E2tcpReceiver {
    pub fn new(cfg: E2tcpConfig) -> E2tcpReceiver {
        E2tcpReceiver {
            cfg,
            peer: None,
            conn_id: 0,
            established: false,
            rcv_nxt: 0,
            held: Reassembly::default(),
            fin_at: None,
            closed: false,
            advertised: u16::MAX,
            stats: TransportStats::default(),
        }
    }

    /// Bytes delivered in order so far.
    pub fn delivered(&self) -> u64 {
        self.rcv_nxt
    }

    fn ack_number(&self) -> u64 {
        match self.fin_at {
            Some(f) if f == self.rcv_nxt => f + 1,
            _ => self.rcv_nxt,
        }
    }

    /// The room the application has for more data beyond `rcv_nxt`, if its
    /// buffer is bounded. An optional field, sent only when it is needed
    /// (§2.3): an unbounded application's ACKs carry none and the sender
    /// takes none as no limit.
    fn window(&self, net: &dyn Net) -> Option<u16> {
        net.app_room()
            .map(|room| room.min(u16::MAX as usize) as u16)
    }

    fn send_ack(&mut self, net: &mut dyn Net, syn: bool) {
        let Some(peer) = self.peer else { return };
        let window = self.window(net);
        let ack = self.ack_number();
        let sack = self
            .held
            .sack_blocks(self.rcv_nxt, MAX_SACK)
            .into_iter()
            .filter(|&(_, r)| r - ack <= u16::MAX as u64)
            .map(|(l, r)| (l as u32, r as u32))
            .collect();
        let mut r = E2tcpRepr {
            syn,
            conn_id: self.conn_id,
            ack: Some(ack as u32),
            sack,
            window,
            ..E2tcpRepr::default()
        };
        if syn {
            r.seq = Some(0);
            r.window = Some(window.unwrap_or(u16::MAX));
        }
        self.advertised = r.window.unwrap_or(u16::MAX);
        let local = net.local();
        finish_header(&self.cfg, &mut r, local, peer, 0, ack as u32);
        let mut p = net.packet_buffer();
        if r.emit(&[], &mut p).is_ok() {
            self.stats.control_packets += 1;
            self.stats.control_bytes += p.len() as u64;
            net.send(peer, p, tx_opts(&self.cfg));
        }
    }

    fn accept(&mut self, net: &mut dyn Net, off: u64, data: &[u8]) {
        let end = off + data.len() as u64;
        if end <= self.rcv_nxt {
            return;
        }
        if net.app_room().is_some() {
            // A bounded application (a relay's buffer): what does not fit
            // waits here, unacknowledged, and holds the sender's window.
            self.held.insert(off, data);
            self.held.deliver_ready(&mut self.rcv_nxt, net);
            return;
        }
        if off <= self.rcv_nxt {
            net.deliver(&data[(self.rcv_nxt - off) as usize..]);
            self.rcv_nxt = end;
            while let Some(piece) = self.held.pop_in_order(self.rcv_nxt) {
                self.rcv_nxt += piece.len() as u64;
                net.deliver(&piece);
            }
        } else {
            self.held.insert(off, data);
        }
    }
}

impl Agent for E2tcpReceiver {
    fn protocol(&self) -> &'static str {
        PROTOCOL
    }

    fn start(&mut self, _net: &mut dyn Net) {}

    fn on_packet(&mut self, net: &mut dyn Net, from: Addr, packet: &[u8]) {
        let Some((p, r)) = super::accept(&mut self.stats, packet) else {
            return;
        };
        if r.syn {
            if self.peer.is_none() {
                self.peer = Some(from);
                self.conn_id = r.conn_id;
            }
            if self.peer == Some(from) && r.conn_id == self.conn_id {
                self.send_ack(net, true);
            } else {
                self.stats.unexpected_dropped += 1;
            }
            return;
        }
        if self.peer != Some(from) || r.conn_id != self.conn_id {
            self.stats.unexpected_dropped += 1;
            return;
        }
        if !self.established {
            self.established = true;
            net.event(TransportEvent::Established);
        }
        if let Some(seq) = r.seq {
            if let Some(off) = unwrap(self.rcv_nxt, seq) {
                let payload = p.payload();
                if !payload.is_empty() {
                    self.accept(net, off, payload);
                }
                if r.fin {
                    self.fin_at = Some(off + payload.len() as u64);
                }
            }
        }
        if !self.closed && self.fin_at == Some(self.rcv_nxt) {
            self.closed = true;
            net.deliver_finished();
            net.event(TransportEvent::Closed);
        }
        self.send_ack(net, false);
    }

    /// The application made room: deliver what waited for it, and tell the
    /// sender its window opened — at once if it was too small for a
    /// segment, else once it grew by a segment (no silly window updates).
    fn on_app_ready(&mut self, net: &mut dyn Net) {
        if self.closed {
            return;
        }
        if self.held.deliver_ready(&mut self.rcv_nxt, net) == 0 {
            let mss = self.cfg.mss;
            let opened = self
                .window(net)
                .is_some_and(|w| w as u32 >= self.advertised as u32 + mss as u32);
            if self.established && opened {
                self.send_ack(net, false);
            }
            return;
        }
        if self.fin_at == Some(self.rcv_nxt) {
            self.closed = true;
            net.deliver_finished();
            net.event(TransportEvent::Closed);
        }
        self.send_ack(net, false);
    }

    /// The receiver answers every data packet at once: it has no timer.
    fn poll_timeout(&self) -> Option<Time> {
        None
    }

    fn on_timeout(&mut self, _net: &mut dyn Net) {}

    fn stats(&self) -> &TransportStats {
        &self.stats
    }

    fn is_closed(&self) -> bool {
        self.closed
    }
}
