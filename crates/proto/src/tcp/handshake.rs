//! The three-way handshake and option negotiation (RFC 9293 §3.5,
//! RFC 7323 window scale and timestamps, RFC 2018 SACK-permitted).

use joulenet_wire::tcp::{TcpFlags, TcpOptions, TcpRepr};

use super::agent::{make_cc, ms_clock, SendKind, TcpAgent, TcpState};
use super::seq::SeqSpace;
use crate::net::{Addr, Net, TransportEvent};

impl TcpAgent {
    pub(crate) fn open(&mut self, net: &mut dyn Net) {
        self.iss = SeqSpace::new(net.rng().next_u32());
        self.snd_una = 0;
        self.snd_max = 1;
        self.syn_sent_at = net.now();
        self.send_syn(net);
    }

    /// Sends our SYN (client) or SYN-ACK (server) with the handshake options.
    pub(crate) fn send_syn(&mut self, net: &mut dyn Net) {
        let server = self.state == TcpState::SynReceived;
        let mut options = TcpOptions {
            mss: Some(self.cfg.mss),
            window_scale: Some(self.cfg.window_scale()),
            sack_permitted: self.cfg.sack && (!server || self.sack_ok),
            ..TcpOptions::default()
        };
        if server && !self.peer_offered_wscale {
            // RFC 7323 §2.2: a SYN-ACK carries the option only if the SYN did.
            options.window_scale = None;
        }
        if self.cfg.timestamps && (!server || self.ts_ok) {
            options.timestamps = Some((ms_clock(net.now()), self.ts_recent));
        }
        let flags = TcpFlags {
            syn: true,
            ..TcpFlags::default()
        };
        let ack = server.then_some(self.rcv_nxt);
        self.emit(net, 0, flags, ack, options, None, SendKind::First);
        self.arm_syn_timer(net);
    }

    /// The handshake's retransmission timer: the RTO, or the profile's own
    /// connection timeout doubled per SYN already resent (ns-3's
    /// `ConnTimeout`).
    fn arm_syn_timer(&mut self, net: &mut dyn Net) {
        let Some(timeout) = self.cfg.rules.syn_timeout else {
            return self.arm_rto(net);
        };
        if self.rto_deadline.is_none() {
            let wait = timeout.saturating_mul(1 << self.consecutive_rtos.min(16));
            let at = net.now() + wait;
            self.rto_deadline = Some(at);
            self.timers.set(super::agent::timer::RTO, at);
        }
    }

    pub(crate) fn negotiate(&mut self, syn: &TcpRepr<'_>) {
        let o = &syn.options;
        self.mss = self.mss.min(o.mss.unwrap_or(536).max(1) as u64);
        self.sack_ok = self.cfg.sack && o.sack_permitted;
        self.ts_ok = self.cfg.timestamps && o.timestamps.is_some();
        if let Some((val, _)) = o.timestamps {
            self.ts_recent = val;
        }
        self.peer_offered_wscale = o.window_scale.is_some();
        if let Some(shift) = o.window_scale {
            self.snd_wscale = shift.min(14);
            self.rcv_wscale = self.cfg.window_scale();
        }
        self.peer_wnd = syn.window as u64; // never scaled in a SYN
        if self.mss != self.cfg.mss as u64 {
            self.cc = make_cc(&self.cfg, self.mss);
        }
    }

    pub(crate) fn on_listen(&mut self, net: &mut dyn Net, from: Addr, seg: &TcpRepr<'_>) {
        if !seg.flags.syn || seg.ack.is_some() || seg.flags.rst {
            self.stats.unexpected_dropped += 1;
            return;
        }
        self.peer = Some(from);
        self.peer_port = seg.src_port;
        self.irs = SeqSpace::new(seg.seq);
        self.rcv_nxt = 1;
        self.negotiate(seg);
        self.iss = SeqSpace::new(net.rng().next_u32());
        self.snd_una = 0;
        self.snd_max = 1;
        self.state = TcpState::SynReceived;
        self.syn_sent_at = net.now();
        self.send_syn(net);
    }

    pub(crate) fn on_syn_sent(&mut self, net: &mut dyn Net, seg: &TcpRepr<'_>) {
        let acks_syn = seg.ack.map(|a| self.iss.unwrap(a, 1)) == Some(1);
        if seg.flags.rst && acks_syn {
            self.abort(net);
            return;
        }
        if !seg.flags.syn || !acks_syn || seg.flags.rst {
            self.stats.unexpected_dropped += 1;
            return;
        }
        self.irs = SeqSpace::new(seg.seq);
        self.rcv_nxt = 1;
        self.negotiate(seg);
        self.syn_acked(net);
        self.ack_now = true;
        self.transmit(net);
        self.flush_ack(net);
    }

    /// Our SYN was acknowledged: the connection is established.
    pub(crate) fn syn_acked(&mut self, net: &mut dyn Net) {
        self.snd_una = 1;
        self.consecutive_rtos = 0;
        if !self.syn_retransmitted {
            self.rtt_sample(net.now().saturating_since(self.syn_sent_at));
        }
        self.disarm_rto();
        self.state = TcpState::Established;
        if !self.established_reported {
            self.established_reported = true;
            net.event(TransportEvent::Established);
        }
    }
}
