//! The rate a contention (802.11) station has left toward a neighbour,
//! measured from the service time of its frames (issue 14: JTP's
//! available rate on 802.11).
//!
//! Why: the TDMA MAC knows each link's share of the slots and counts the
//! idle ones; under DCF nothing is reserved, and JTP, which raises a
//! flow's rate only from the available rate its relays stamp, saw none
//! and stayed at its initial rate. Here each station measures, per
//! neighbour, the *service time* of its frames — from reaching the head
//! of the queue to the end of their exchange (acknowledged or dropped),
//! so contention, the neighbours' traffic and retries are all in it — and
//! the share of time it had a frame in service. The rate it achieves
//! toward a neighbour while busy is the bits delivered over the time spent
//! serving them; the rate left is that times the idle share:
//!
//!   available = (bits delivered / service time) · (1 − busy time / elapsed)
//!
//! the counterpart of the TDMA MAC's capacity times the share of its
//! recent slots left unused. Measured over the last [`WINDOW`] and the
//! current one; `None` until a frame to the neighbour was delivered.

use joulenet_proto::{Duration, NodeId, Time};

/// The span a measurement covers (at least; at most twice).
pub const WINDOW: Duration = Duration::from_secs(1);

/// What one window counted.
#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    /// Time a frame was in service (any neighbour, broadcasts included).
    busy: Duration,
}

/// Per neighbour, what one window counted.
#[derive(Clone, Debug, Default)]
struct NbrCounts {
    node: NodeId,
    bits: u64,
    service: Duration,
}

/// One station's service-time meter.
#[derive(Clone, Debug, Default)]
pub struct ServiceMeter {
    window_start: Time,
    /// The last complete window, and its span.
    last: Counts,
    last_span: Duration,
    last_nbrs: Vec<NbrCounts>,
    now: Counts,
    nbrs: Vec<NbrCounts>,
    /// Since when each access category's head frame has been in service.
    head_since: [Option<Time>; 4],
}

impl ServiceMeter {
    fn roll(&mut self, now: Time) {
        let span = now.saturating_since(self.window_start);
        if span >= WINDOW {
            self.last = std::mem::take(&mut self.now);
            self.last_span = span;
            self.last_nbrs = std::mem::take(&mut self.nbrs);
            self.window_start = now;
        }
    }

    /// A frame became the head of category `ac`'s queue at `now`.
    pub fn head(&mut self, ac: usize, now: Time) {
        if let Some(h) = self.head_since.get_mut(ac) {
            h.get_or_insert(now);
        }
    }

    /// Category `ac`'s head frame (to `next`, `bytes` long) left the queue
    /// at `now`: delivered if `acked`; `more` if another frame is now at the
    /// head.
    pub fn served(
        &mut self,
        ac: usize,
        now: Time,
        next: NodeId,
        bytes: u32,
        acked: bool,
        more: bool,
    ) {
        self.roll(now);
        let Some(since) = self.head_since.get_mut(ac).and_then(|h| h.take()) else {
            return;
        };
        let took = now.saturating_since(since);
        self.now.busy += took;
        let n = match self.nbrs.iter_mut().find(|n| n.node == next) {
            Some(n) => n,
            None => {
                self.nbrs.push(NbrCounts {
                    node: next,
                    ..NbrCounts::default()
                });
                self.nbrs.last_mut().expect("just pushed")
            }
        };
        n.service += took;
        if acked {
            n.bits += u64::from(bytes) * 8;
        }
        if more {
            self.head(ac, now);
        }
    }

    /// The queue of `ac` was emptied without service (the node died).
    pub fn flushed(&mut self, ac: usize) {
        if let Some(h) = self.head_since.get_mut(ac) {
            *h = None;
        }
    }

    /// The rate left toward `nbr` at `now` (formula in the module docs).
    pub fn available_bps(&self, nbr: NodeId, now: Time) -> Option<f64> {
        let (mut bits, mut service) = (0u64, Duration::ZERO);
        for n in self
            .last_nbrs
            .iter()
            .chain(&self.nbrs)
            .filter(|n| n.node == nbr)
        {
            bits += n.bits;
            service += n.service;
        }
        if bits == 0 || service == Duration::ZERO {
            return None;
        }
        let rate = bits as f64 / service.as_secs_f64();
        let elapsed = self.last_span + now.saturating_since(self.window_start);
        // The frame in service now counts as busy for as long as it has been.
        let in_service = self
            .head_since
            .iter()
            .flatten()
            .map(|t| now.saturating_since(*t))
            .max()
            .unwrap_or(Duration::ZERO);
        let busy = self.last.busy + self.now.busy + in_service;
        let idle = if elapsed > Duration::ZERO {
            (1.0 - busy.as_secs_f64() / elapsed.as_secs_f64()).clamp(0.0, 1.0)
        } else {
            1.0
        };
        Some(rate * idle)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Time {
        Time(v * 1_000_000)
    }

    /// 1000-byte frames served in 4 ms each (2 Mbit/s while busy), one
    /// every 10 ms: busy 40% of the time, so 1.2 Mbit/s is left.
    #[test]
    fn the_rate_left_is_the_service_rate_times_the_idle_share() {
        let mut m = ServiceMeter::default();
        assert_eq!(m.available_bps(1, ms(0)), None, "nothing served yet");
        for k in 0..200u64 {
            m.head(2, ms(k * 10));
            m.served(2, ms(k * 10 + 4), 1, 1000, true, false);
        }
        let a = m.available_bps(1, ms(2000)).unwrap();
        assert!((a - 1.2e6).abs() < 1e4, "{a}");
        assert_eq!(m.available_bps(2, ms(2000)), None, "another neighbour");
    }

    /// Always backlogged: nothing is left. Lost frames take time but
    /// deliver nothing: half of them lost halves the service rate.
    #[test]
    fn a_backlogged_station_has_nothing_left_and_losses_cost_rate() {
        let mut m = ServiceMeter::default();
        m.head(2, ms(0));
        for k in 1..=500u64 {
            m.served(2, ms(k * 4), 1, 1000, k % 2 == 0, true);
        }
        let a = m.available_bps(1, ms(2000)).unwrap();
        assert!(a < 1e3, "{a}");
        let mut m = ServiceMeter::default();
        for k in 0..200u64 {
            m.head(2, ms(k * 10));
            m.served(2, ms(k * 10 + 4), 1, 1000, k % 2 == 0, false);
        }
        let a = m.available_bps(1, ms(2000)).unwrap();
        assert!((a - 0.6e6).abs() < 1e4, "{a}");
    }
}
