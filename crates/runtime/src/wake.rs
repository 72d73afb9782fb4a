//! How late the event loop wakes for the deadlines it sleeps toward: the
//! host's share of a protocol's timing error (a pacing gap, a delayed ACK).
//! The simulator's timers are exact; a host's are not — `poll(2)` sleeps in
//! whole milliseconds and a loaded machine runs the process late — and this
//! measures by how much, per run, so that a shortfall against the
//! simulator's twin can be put on the host or on the protocol.

use joulenet_proto::{Duration, Time};
use serde::Serialize;

/// Upper edges of the lateness histogram's buckets, µs; one more bucket
/// holds the rest.
pub const BUCKETS_US: [u64; 7] = [100, 500, 1_000, 2_000, 5_000, 10_000, 20_000];

/// Lateness of every wake that came at or after its deadline.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct WakeLateness {
    pub wakes: u64,
    pub total_ms: f64,
    pub max_ms: f64,
    /// Wakes per bucket: ≤ 0.1, 0.5, 1, 2, 5, 10, 20 ms, and beyond.
    pub histogram: [u64; BUCKETS_US.len() + 1],
}

impl WakeLateness {
    /// The loop slept toward `deadline` and runs again at `now`; a wake
    /// before the deadline (a datagram arrived) is not a timer's.
    pub fn record(&mut self, deadline: Option<Time>, now: Time) {
        let Some(d) = deadline.filter(|d| now >= *d) else {
            return;
        };
        let late = now.saturating_since(d);
        let us = late.0 / 1_000;
        let bucket = BUCKETS_US
            .iter()
            .position(|&b| us <= b)
            .unwrap_or(BUCKETS_US.len());
        self.histogram[bucket] += 1;
        self.wakes += 1;
        self.total_ms += late.as_millis_f64();
        self.max_ms = self.max_ms.max(late.as_millis_f64());
    }

    /// Mean lateness of a wake.
    pub fn mean(&self) -> Option<Duration> {
        (self.wakes > 0).then(|| Duration::from_secs_f64(self.total_ms / 1e3 / self.wakes as f64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_wakes_at_or_after_their_deadline_count() {
        let mut w = WakeLateness::default();
        let ms = |m: u64| Time(m * 1_000_000);
        w.record(Some(ms(10)), ms(9)); // a datagram woke it early
        w.record(None, ms(9));
        assert_eq!(w.wakes, 0);
        w.record(Some(ms(10)), ms(10)); // on time: first bucket
        w.record(Some(ms(10)), ms(13)); // 3 ms: the ≤ 5 ms bucket
        w.record(Some(ms(10)), ms(40)); // 30 ms: beyond the last edge
        assert_eq!(w.wakes, 3);
        assert_eq!(w.histogram, [1, 0, 0, 0, 1, 0, 0, 1]);
        assert_eq!(w.max_ms, 30.0);
        assert_eq!(w.mean(), Some(Duration::from_millis(11)));
    }
}
