//! The receiving half: segment acceptance after the handshake, in-order
//! delivery, reassembly, the peer's FIN, and when to acknowledge.

use joulenet_wire::tcp::{TcpFlags, TcpRepr};

use super::agent::{timer, TcpAgent, TcpState};
use crate::net::Net;

impl TcpAgent {
    /// A segment in SYN_RECEIVED or a later state, from our peer.
    pub(crate) fn on_segment(&mut self, net: &mut dyn Net, seg: &TcpRepr<'_>) {
        if seg.flags.rst {
            if !self.rst_acceptable(seg) {
                self.stats.unexpected_dropped += 1;
            } else if matches!(
                self.state,
                TcpState::Closing | TcpState::LastAck | TcpState::TimeWait
            ) {
                // Both streams are complete; the peer only forgot our FIN's ACK.
                self.enter_closed(net);
            } else {
                self.abort(net);
            }
            return;
        }
        if seg.flags.syn {
            self.on_repeated_syn(net);
            return;
        }
        let Some(ack) = seg.ack else {
            self.stats.unexpected_dropped += 1;
            return;
        };
        if self.state == TcpState::SynReceived {
            // RFC 9293 §3.10.7.4: SND.UNA < SEG.ACK =< SND.NXT, and only the
            // SYN is outstanding, so the one acceptable value is ISS + 1.
            if self.iss.unwrap(ack, 1) != 1 {
                self.stats.unexpected_dropped += 1;
                return;
            }
            self.syn_acked(net);
        }
        self.update_ts_recent(seg);
        self.process_ack(net, seg);
        if self.state == TcpState::Closed {
            return;
        }
        self.process_data(net, seg);
        if self.is_stp() && !seg.payload.is_empty() {
            // STP reports only when polled or on a new gap (`stp.rs`).
            let seq = self.irs.unwrap(seg.seq, self.rcv_nxt);
            let end = seq + seg.payload.len() as u64;
            self.ack_now = self.stp_report_due(seq, end, seg.options.poll) || self.fin_received;
        } else if self.is_stp() && seg.options.poll {
            self.ack_now = true;
        }
        self.transmit(net);
        self.flush_ack(net);
    }

    /// A retransmitted SYN (our SYN-ACK was lost) or SYN-ACK (our ACK was
    /// lost): answer it again.
    fn on_repeated_syn(&mut self, net: &mut dyn Net) {
        self.stats.unexpected_dropped += 1;
        if self.state == TcpState::SynReceived {
            self.syn_retransmitted = true;
            self.send_syn(net);
        } else {
            self.ack_now = true;
            self.flush_ack(net);
        }
    }

    /// RFC 9293 §3.10.7.4: a reset counts only if its sequence number lies
    /// in the receive window (blind resets are ignored).
    fn rst_acceptable(&self, seg: &TcpRepr<'_>) -> bool {
        let seq = self.irs.unwrap(seg.seq, self.rcv_nxt);
        seq >= self.rcv_nxt && seq < self.rcv_nxt + self.cfg.recv_buffer.max(1) as u64
    }

    fn update_ts_recent(&mut self, seg: &TcpRepr<'_>) {
        if let (true, Some((val, _))) = (self.ts_ok, seg.options.timestamps) {
            if self.irs.unwrap(seg.seq, self.rcv_nxt) <= self.rcv_nxt {
                self.ts_recent = val;
            }
        }
    }

    fn process_data(&mut self, net: &mut dyn Net, seg: &TcpRepr<'_>) {
        let seq = self.irs.unwrap(seg.seq, self.rcv_nxt);
        let len = seg.payload.len() as u64;
        if self.fin_received {
            if len > 0 || seg.flags.fin {
                // A retransmission of what we already have: re-acknowledge.
                self.stats.unexpected_dropped += 1;
                self.ack_now = true;
            }
            return;
        }
        if len == 0 && !seg.flags.fin {
            if seq < self.rcv_nxt {
                self.ack_now = true; // a window probe
            }
            return;
        }
        if len > 0 {
            self.receive_payload(net, seq, seg.payload);
        }
        if seg.flags.fin {
            // A FIN below what we already have cannot be the real one.
            if seq + len >= self.rcv_nxt {
                self.peer_fin.get_or_insert(seq + len);
            }
            self.ack_now = true;
        }
        self.check_peer_fin(net);
    }

    fn receive_payload(&mut self, net: &mut dyn Net, seq: u64, payload: &[u8]) {
        let end = seq + payload.len() as u64;
        if end <= self.rcv_nxt {
            self.stats.unexpected_dropped += 1;
            self.ack_now = true;
            self.quickack_on_duplicate();
            return;
        }
        if seq > self.rcv_nxt {
            self.receive_out_of_order(seq, payload);
            return;
        }
        self.quickack_on_in_order(net.now());
        // The connection's first data (just after the peer's SYN).
        let first_data = self.rcv_nxt == 1 && self.cfg.rules.ack_first_data_at_once;
        if net.app_room().is_some() {
            self.receive_bounded(net, seq, payload);
            self.ack_now |= first_data;
            return;
        }
        // In order: straight from the packet to the application.
        net.deliver(&payload[(self.rcv_nxt - seq) as usize..]);
        self.rcv_nxt = end;
        if !self.reasm.is_empty() {
            // What waited behind the hole, all of it (the application has
            // no room limit here).
            self.reasm.deliver_ready(&mut self.rcv_nxt, net);
            self.ack_now = true; // RFC 5681 §4.2: at once when a gap fills
        } else if first_data {
            self.ack_now = true;
        } else {
            self.unacked_segments += 1;
            self.schedule_ack(net);
        }
    }

    /// In-order data for an application with limited room (a relay's
    /// bounded buffer): what does not fit waits in the reassembly buffer,
    /// where it counts against the advertised window, so the peer is held
    /// back instead of overrunning the relay.
    fn receive_bounded(&mut self, net: &mut dyn Net, seq: u64, payload: &[u8]) {
        let limit = self.rcv_nxt + self.cfg.recv_buffer as u64;
        let keep = (limit.saturating_sub(seq) as usize).min(payload.len());
        self.reasm.insert(seq, &payload[..keep]);
        let held_before = self.reasm.bytes();
        self.reasm.deliver_ready(&mut self.rcv_nxt, net);
        if self.reasm.bytes() > 0 && self.reasm.bytes() >= held_before {
            self.ack_now = true; // nothing moved: say so (the window shrank)
        } else {
            self.unacked_segments += 1;
            self.schedule_ack(net);
        }
    }

    /// The application made room (a relay's downstream drained its buffer):
    /// deliver what waited, and tell the peer when the window has opened by
    /// a segment or half the buffer since we last advertised it (the
    /// receiver's silly-window avoidance, RFC 9293 §3.8.6.2.2).
    pub(crate) fn on_room(&mut self, net: &mut dyn Net) {
        if !self.state.synchronized() || self.fin_received {
            return;
        }
        self.reasm.deliver_ready(&mut self.rcv_nxt, net);
        self.check_peer_fin(net);
        let free = self.receive_window(net.app_room());
        let step = self.mss.min(self.cfg.recv_buffer as u64 / 2).max(1);
        if free >= self.advertised_window + step {
            self.ack_now = true;
        }
    }

    /// Out-of-order data is kept within the receive buffer and acknowledged
    /// at once, so the sender sees a duplicate ACK with SACK blocks.
    fn receive_out_of_order(&mut self, seq: u64, payload: &[u8]) {
        self.ack_now = true;
        let limit = self.rcv_nxt + self.cfg.recv_buffer as u64;
        if seq >= limit {
            self.stats.unexpected_dropped += 1;
            return;
        }
        let keep = ((limit - seq) as usize).min(payload.len());
        if self.reasm.insert(seq, &payload[..keep]) == 0 {
            self.stats.unexpected_dropped += 1;
        }
    }

    fn schedule_ack(&mut self, net: &mut dyn Net) {
        match self.cfg.delayed_ack {
            None => self.ack_now = true,
            Some(_) if self.in_quickack_mode() => self.ack_now = true,
            Some(d) if self.unacked_segments >= d.every.max(1) as u32 => self.ack_now = true,
            Some(d) => {
                if self.unacked_segments == 1 {
                    self.timers.set(timer::DELAYED_ACK, net.now() + d.timeout);
                }
            }
        }
    }

    /// Once every byte before the peer's FIN has been delivered, the stream
    /// ends for the application.
    // Called on every data segment, and returns at once but once.
    #[inline]
    fn check_peer_fin(&mut self, net: &mut dyn Net) {
        if self.fin_received || self.peer_fin != Some(self.rcv_nxt) {
            return;
        }
        self.rcv_nxt += 1;
        self.fin_received = true;
        self.ack_now = true;
        net.deliver_finished();
        match self.state {
            TcpState::Established | TcpState::SynReceived => self.state = TcpState::CloseWait,
            TcpState::FinWait1 => self.state = TcpState::Closing,
            TcpState::FinWait2 => self.enter_time_wait(net),
            _ => {}
        }
    }

    /// Sends a pure ACK now.
    pub(crate) fn send_ack(&mut self, net: &mut dyn Net) {
        self.emit_control(net, self.snd_max, TcpFlags::default());
    }

    /// Sends the ACK owed, unless a data segment already carried it.
    pub(crate) fn flush_ack(&mut self, net: &mut dyn Net) {
        if self.ack_now && self.state.synchronized() {
            self.send_ack(net);
        }
    }

    /// Any segment carrying our ACK settles what the receiver owed.
    pub(crate) fn ack_sent(&mut self) {
        if self.ack_now || self.unacked_segments > 0 {
            self.quickack_spent();
        }
        self.ack_now = false;
        if self.unacked_segments > 0 {
            self.unacked_segments = 0;
            self.timers.cancel(timer::DELAYED_ACK);
        }
    }
}
