//! Rate-based sending for the JTP paper's TCP-SACK baseline (§6.1,
//! `rate-sack`): "the rate of each flow is set by the well-known throughput
//! equation of TCP", which removes "the window-induced burstiness of data
//! and ACK streams, similar to what TCP pacing does".
//!
//! Segments leave no closer together than 1 / B(p) per full segment, B the
//! PFTK rate ([`crate::cc::pftk_rate`]) for
//!
//! * `p`, the loss-event rate measured over the connection: loss
//!   indications per segment sent, new or retransmitted — PFTK's own
//!   definition. An indication is a fast recovery or a *series* of
//!   timeouts: PFTK models a series (the first timeout and its backed-off
//!   successors) as one indication, its length being in the T₀ term;
//! * `RTT`, the SRTT of RFC 6298;
//! * `T₀`, the RTO before exponential backoff (PFTK's T₀ is the first
//!   timeout of a series; the backoff is already in its (1 + 32p²) term).
//!
//! Before the first loss indication p = 0 and the equation bounds nothing
//! (B → ∞); until then the sender paces at cwnd / SRTT, the rate TCP pacing
//! spreads a window over. Before any RTT sample (a lost SYN or SYN-ACK
//! leaves none) nothing is paced and only the windows limit sending, as in
//! plain TCP. The congestion and receive windows still bound the data
//! outstanding at every rate; the congestion window still grows and shrinks
//! as SACK TCP's does, so a timeout still collapses it.
//!
//! A retransmission is paced like new data; a fast retransmit (which TCP
//! sends regardless of the window) is sent at once and delays the next
//! segment by its gap.

use super::agent::{timer, TcpAgent};
use super::config::Pacing;
use crate::cc::pftk_rate;
use crate::net::Net;
use crate::time::Duration;

impl TcpAgent {
    /// Loss indications per segment sent, over the connection.
    pub(crate) fn loss_event_rate(&self) -> f64 {
        let s = &self.stats;
        let sent = s.data_packets + s.retransmitted_packets;
        if sent == 0 {
            return 0.0;
        }
        self.loss_indications as f64 / sent as f64
    }

    /// The paced rate in full segments per second, `None` when not pacing
    /// (pacing off, or no RTT sample yet).
    // Asked on every segment sent; unpaced variants answer at once.
    #[inline]
    pub(crate) fn pacing_rate_pps(&self) -> Option<f64> {
        let Pacing::Pftk { b } = self.cfg.pacing else {
            return None;
        };
        let srtt = self.rtt.srtt()?.as_secs_f64();
        let t0 = self.rtt.base_rto().as_secs_f64();
        pftk_rate(srtt, self.loss_event_rate(), b as f64, t0).or_else(|| {
            let window = self.cc.window() as f64 / self.mss as f64;
            (srtt > 0.0).then(|| window / srtt)
        })
    }

    /// True (and the pacing timer armed) while the next segment must wait.
    pub(crate) fn pacing_holds(&mut self, net: &dyn Net) -> bool {
        if self.cfg.pacing == Pacing::Off || net.now() >= self.next_send {
            return false;
        }
        self.timers.set(timer::PACE, self.next_send);
        true
    }

    /// A segment with `payload` bytes left now: the next waits its share
    /// of the paced rate (a full segment waits 1 / rate).
    pub(crate) fn paced(&mut self, net: &dyn Net, payload: u64) {
        let Some(rate) = self.pacing_rate_pps() else {
            return;
        };
        if payload == 0 || !rate.is_finite() || rate <= 0.0 {
            return;
        }
        let gap = Duration::from_secs_f64(payload as f64 / self.mss as f64 / rate);
        self.next_send = net.now() + gap;
    }
}
