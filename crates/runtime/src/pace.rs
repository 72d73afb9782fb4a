//! The transmit side of a host's links: one interface queue per neighbour
//! (UDP next hop), served at the link's rate when it is known
//! (`--link-rate`), and what was sent on it, measured.
//!
//! Why: Hop and JTP expect a MAC underneath — Hop paces its TXOPs by the
//! interface queue (`HopConfig::pace_queue`) and has no congestion control
//! of its own, JTP's relays stamp the rate a link has left. A UDP socket
//! accepts datagrams at memory speed and a slower link behind it (a
//! 10 Mbit/s radio, a `tbf`) drops what its own queue cannot hold. Served
//! at the link's rate, the queue sits here, where the agents can see it
//! through [`joulenet_proto::Net::link`], as they see the simulator's.
//!
//! Measured per neighbour, for [`joulenet_proto::LinkInfo`]: the queue's
//! length, and the rate of what this host sent over the last
//! [`METER_WINDOW`]s; the link's available rate is its rate less that
//! ([`LinkMeter::available_bps`]) — the idle share of the link, as a TDMA
//! MAC counts idle slots.

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;

use joulenet_proto::{Duration, Time};

/// Bytes a datagram costs on the link beyond its UDP payload: IPv4 (20),
/// UDP (8) and Ethernet (14) headers, which a link's rate limiter counts.
pub const LINK_OVERHEAD: usize = 42;

/// Datagrams one neighbour's queue holds; beyond it they are dropped, as a
/// full interface queue drops (counted).
pub const MAX_QUEUE: usize = 2000;

/// How far behind the clock a queue may fall and catch up at once: a
/// host's timer wakes late (by milliseconds on a loaded machine), and the
/// queue makes up that much time in one burst — at 10 Mbit/s 12.5 kB, within
/// a typical rate limiter's burst — but no more, so that a long stall does
/// not turn into a burst the link would drop.
pub const MAX_LAG: Duration = Duration::from_millis(10);

/// The span the sent rate is measured over.
pub const METER_WINDOW: Duration = Duration::from_millis(500);

/// What was sent to one neighbour in the current and the last window.
#[derive(Clone, Debug, Default)]
pub struct LinkMeter {
    window_start: Time,
    bytes_now: u64,
    /// Bits/s of the last complete window.
    last_bps: Option<f64>,
}

impl LinkMeter {
    fn roll(&mut self, now: Time) {
        let span = now.saturating_since(self.window_start);
        if span >= METER_WINDOW {
            // A window with nothing sent in it (a long silence) says 0.
            let secs = span.as_secs_f64();
            self.last_bps = Some(self.bytes_now as f64 * 8.0 / secs);
            self.bytes_now = 0;
            self.window_start = now;
        }
    }

    fn count(&mut self, now: Time, bytes: usize) {
        self.roll(now);
        self.bytes_now += (bytes + LINK_OVERHEAD) as u64;
    }

    /// Bits/s sent over the last complete window (the current one if none
    /// has completed).
    pub fn sent_bps(&self, now: Time) -> f64 {
        match self.last_bps {
            Some(b) => b,
            None => {
                let secs = now.saturating_since(self.window_start).as_secs_f64();
                if secs > 0.0 {
                    self.bytes_now as f64 * 8.0 / secs
                } else {
                    0.0
                }
            }
        }
    }

    /// The link's rate less what this host sent on it, never below 0.
    pub fn available_bps(&self, rate_bps: u64, now: Time) -> f64 {
        (rate_bps as f64 - self.sent_bps(now)).max(0.0)
    }
}

#[derive(Default)]
struct Lane {
    queue: VecDeque<Vec<u8>>,
    /// When the link is free for the next datagram.
    free_at: Time,
    meter: LinkMeter,
}

/// Every neighbour's interface queue and meter.
#[derive(Default)]
pub struct Pacer {
    rate_bps: Option<u64>,
    lanes: HashMap<SocketAddr, Lane>,
    /// Without a rate: datagrams in the order they were pushed.
    ready: Vec<(Vec<u8>, SocketAddr)>,
    /// Datagrams dropped because their neighbour's queue was full.
    pub dropped: u64,
}

impl Pacer {
    /// Queues served at `rate_bps` each, or passed straight on (`None`).
    pub fn new(rate_bps: Option<u64>) -> Pacer {
        Pacer {
            rate_bps: rate_bps.filter(|r| *r > 0),
            ..Pacer::default()
        }
    }

    pub fn rate_bps(&self) -> Option<u64> {
        self.rate_bps
    }

    /// Queues a datagram for `to`.
    pub fn push(&mut self, datagram: Vec<u8>, to: SocketAddr) {
        if self.rate_bps.is_none() {
            self.ready.push((datagram, to));
            return;
        }
        let lane = self.lanes.entry(to).or_default();
        if lane.queue.len() >= MAX_QUEUE {
            self.dropped += 1;
            return;
        }
        lane.queue.push_back(datagram);
    }

    /// Moves onto `out` every datagram whose turn on its link has come by
    /// `now` (all of them without a rate).
    pub fn release(&mut self, now: Time, out: &mut Vec<(Vec<u8>, SocketAddr)>) {
        out.append(&mut self.ready);
        let Some(rate) = self.rate_bps else {
            return;
        };
        for (to, lane) in self.lanes.iter_mut() {
            while let Some(d) = lane.queue.front() {
                let start = lane.free_at.max(Time(now.0.saturating_sub(MAX_LAG.0)));
                if start > now {
                    break;
                }
                let len = d.len();
                let bits = ((len + LINK_OVERHEAD) * 8) as u64;
                lane.free_at = start + Duration::transmission(bits, rate);
                lane.meter.count(now, len);
                if let Some(d) = lane.queue.pop_front() {
                    out.push((d, *to));
                }
            }
            lane.meter.roll(now);
        }
    }

    /// Datagrams waiting for the link toward `to`.
    pub fn queue_len(&self, to: SocketAddr) -> usize {
        self.lanes.get(&to).map_or(0, |l| l.queue.len())
    }

    /// What was measured of the link toward `to`.
    pub fn meter(&self, to: SocketAddr) -> Option<&LinkMeter> {
        self.lanes.get(&to).map(|l| &l.meter)
    }

    /// When the next queued datagram may leave, if any waits.
    pub fn next_release(&self) -> Option<Time> {
        self.lanes
            .values()
            .filter(|l| !l.queue.is_empty())
            .map(|l| l.free_at)
            .min()
    }

    /// Datagrams waiting, all links.
    pub fn queued(&self) -> usize {
        self.ready.len() + self.lanes.values().map(|l| l.queue.len()).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(p: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], p))
    }

    /// At 1 Mbit/s a 1208-byte datagram (1250 bytes on the link) takes
    /// 10 ms: ten queued leave one per 10 ms, each link on its own.
    #[test]
    fn a_queue_is_served_at_the_link_rate() {
        let mut p = Pacer::new(Some(1_000_000));
        for _ in 0..10 {
            p.push(vec![0; 1208], addr(1));
        }
        p.push(vec![0; 1208], addr(2));
        let mut out = Vec::new();
        p.release(Time::ZERO, &mut out);
        assert_eq!(out.len(), 2, "one per link at once");
        assert_eq!(p.queue_len(addr(1)), 9);
        assert_eq!(p.next_release(), Some(Time(10_000_000)));
        out.clear();
        p.release(Time(30_000_000), &mut out);
        // Woken 20 ms late: MAX_LAG (10 ms, one datagram's time) is made
        // up, the rest of the stall is not — sent as if from 20 ms.
        assert_eq!(out.len(), 2, "the ones due at 20 and 30 ms");
        assert_eq!(p.queue_len(addr(1)), 7);
        out.clear();
        p.release(Time(80_000_000), &mut out);
        assert_eq!(out.len(), 2, "from 70 ms, not from 40");
        assert_eq!(p.queued(), 5);
    }

    #[test]
    fn without_a_rate_everything_passes_and_full_queues_drop() {
        let mut p = Pacer::new(None);
        for _ in 0..MAX_QUEUE + 3 {
            p.push(vec![1], addr(1));
        }
        let mut out = Vec::new();
        p.release(Time::ZERO, &mut out);
        assert_eq!(
            out.len(),
            MAX_QUEUE + 3,
            "no rate, no queue: all pass, in order"
        );
        assert_eq!(p.next_release(), None);
        assert_eq!(p.dropped, 0);
        // With a rate, a full queue drops.
        let mut p = Pacer::new(Some(1_000));
        for _ in 0..MAX_QUEUE + 3 {
            p.push(vec![1], addr(1));
        }
        assert_eq!(p.dropped, 3);
    }

    /// The meter: 1 Mbit/s sent through a 10 Mbit/s link leaves 9 available.
    #[test]
    fn the_meter_measures_what_was_sent() {
        let mut p = Pacer::new(Some(10_000_000));
        let mut out = Vec::new();
        // 1250 link bytes every 10 ms for a second: 1 Mbit/s.
        for ms in 0..=1000u64 {
            if ms % 10 == 0 {
                p.push(vec![0; 1250 - LINK_OVERHEAD], addr(1));
            }
            p.release(Time(ms * 1_000_000), &mut out);
        }
        let m = p.meter(addr(1)).unwrap();
        let now = Time(1_000_000_000);
        assert!((m.sent_bps(now) - 1e6).abs() < 3e4, "{}", m.sent_bps(now));
        assert!((m.available_bps(10_000_000, now) - 9e6).abs() < 3e4);
        assert_eq!(m.available_bps(500_000, now), 0.0);
    }
}
