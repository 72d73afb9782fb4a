//! Applications: the traffic sources and sinks attached to transport agents.
//!
//! A source hands bytes to its agent when the agent pulls ([`Source::read`]);
//! a sink takes in-order bytes from its agent ([`Sink::consume`]). Every byte
//! is stream content from [`crate::pattern`], so sinks verify what they get.
//! Sources log when each chunk was generated into a [`DelayLog`] that the
//! matching sink drains: delivery delay is observed from outside the protocol.

use std::collections::VecDeque;

use joulenet_proto::{AppRead, Duration, Time};

use crate::fates::MessageFates;
use rand_distr::{Distribution, Exp, Pareto};
use rand_pcg::Pcg64Mcg;

use crate::metrics::Histogram;
use crate::pattern;

/// What an application does, as a scenario describes it.
#[derive(Clone, Debug, PartialEq)]
pub enum AppSpec {
    /// Send this many bytes as fast as the transport takes them, then close.
    Bulk { bytes: u64 },
    /// Always have data to send until the flow stops.
    Backlogged,
    /// Constant bit rate: one message of `message` bytes every message/rate.
    Cbr { rate_bps: u64, message: u32 },
    /// Interactive traffic: messages with exponential inter-departure times.
    Poisson {
        mean_interval: Duration,
        message: u32,
    },
    /// Pareto on/off (as ns-2's): during On periods messages at `rate_bps`;
    /// On and Off lengths are Pareto with the given means and shape.
    ParetoOnOff {
        rate_bps: u64,
        message: u32,
        mean_on: Duration,
        mean_off: Duration,
        shape: f64,
    },
}

impl AppSpec {
    pub fn name(&self) -> &'static str {
        match self {
            AppSpec::Bulk { .. } => "bulk",
            AppSpec::Backlogged => "backlogged",
            AppSpec::Cbr { .. } => "cbr",
            AppSpec::Poisson { .. } => "poisson",
            AppSpec::ParetoOnOff { .. } => "pareto",
        }
    }
    /// Total bytes the application will send, when it is known in advance.
    pub fn total_bytes(&self) -> Option<u64> {
        match self {
            AppSpec::Bulk { bytes } => Some(*bytes),
            _ => None,
        }
    }
}

/// Generation times of the bytes a source handed out, oldest first.
#[derive(Debug, Default)]
pub struct DelayLog {
    /// (end offset of the chunk, time it was generated)
    chunks: VecDeque<(u64, Time)>,
}

impl DelayLog {
    fn push(&mut self, end: u64, generated: Time) {
        match self.chunks.back_mut() {
            // Merge chunks generated at the same instant: one sample each.
            Some(last) if last.1 == generated => last.0 = end,
            _ => self.chunks.push_back((end, generated)),
        }
    }
}

enum Generator {
    /// Bytes are there whenever asked, up to a total.
    Greedy { remaining: u64 },
    /// Messages appear over time.
    Timed(TimedGenerator),
}

struct TimedGenerator {
    kind: TimedKind,
    message: u32,
    next: Time,
    rng: Pcg64Mcg,
}

enum TimedKind {
    Periodic(Duration),
    Exponential(Exp<f64>),
    OnOff {
        interval: Duration,
        on: Pareto<f64>,
        off: Pareto<f64>,
        on_until: Time,
    },
}

impl TimedGenerator {
    /// Advance `next` past the message generated at `next`.
    fn step(&mut self) {
        let now = self.next;
        self.next = match &mut self.kind {
            TimedKind::Periodic(d) => now + *d,
            TimedKind::Exponential(e) => now + Duration::from_secs_f64(e.sample(&mut self.rng)),
            TimedKind::OnOff {
                interval,
                on,
                off,
                on_until,
            } => {
                let candidate = now + *interval;
                if candidate < *on_until {
                    candidate
                } else {
                    let idle = Duration::from_secs_f64(off.sample(&mut self.rng));
                    let start = *on_until + idle;
                    *on_until =
                        start + Duration::from_secs_f64(on.sample(&mut self.rng)).max(*interval);
                    start
                }
            }
        };
    }
}

/// The sending side of an application.
pub struct Source {
    generator: Generator,
    /// Messages generated and not yet read: (bytes left, generation time).
    pending: VecDeque<(u32, Time)>,
    /// Stream offset of the next byte to hand out.
    offset: u64,
    /// One message per read, for datagram transports.
    datagram: bool,
    stop: Time,
    stopped: bool,
    /// A receive-only endpoint's source: it has nothing to say, and finishes
    /// when the peer finishes (like a server that closes after reading EOF).
    closes_with_peer: bool,
}

impl Source {
    pub fn new(
        spec: &AppSpec,
        start: Time,
        stop: Option<Time>,
        datagram: bool,
        mut rng: Pcg64Mcg,
    ) -> Source {
        let generator = match spec {
            AppSpec::Bulk { bytes } => Generator::Greedy { remaining: *bytes },
            AppSpec::Backlogged => Generator::Greedy {
                remaining: u64::MAX,
            },
            AppSpec::Cbr { rate_bps, message } => Generator::Timed(TimedGenerator {
                kind: TimedKind::Periodic(Duration::transmission(*message as u64 * 8, *rate_bps)),
                message: *message,
                next: start,
                rng,
            }),
            AppSpec::Poisson {
                mean_interval,
                message,
            } => {
                let rate = 1.0 / mean_interval.as_secs_f64().max(1e-12);
                let exp = Exp::new(rate).expect("validated positive rate");
                let first = start + Duration::from_secs_f64(exp.sample(&mut rng));
                Generator::Timed(TimedGenerator {
                    kind: TimedKind::Exponential(exp),
                    message: *message,
                    next: first,
                    rng,
                })
            }
            AppSpec::ParetoOnOff {
                rate_bps,
                message,
                mean_on,
                mean_off,
                shape,
            } => {
                let scale = |mean: Duration| (mean.as_secs_f64() * (shape - 1.0) / shape).max(1e-9);
                let on = Pareto::new(scale(*mean_on), *shape).expect("validated shape");
                let off = Pareto::new(scale(*mean_off), *shape).expect("validated shape");
                let interval = Duration::transmission(*message as u64 * 8, *rate_bps);
                let on_until = start + Duration::from_secs_f64(on.sample(&mut rng)).max(interval);
                Generator::Timed(TimedGenerator {
                    kind: TimedKind::OnOff {
                        interval,
                        on,
                        off,
                        on_until,
                    },
                    message: *message,
                    next: start,
                    rng,
                })
            }
        };
        Source {
            generator,
            pending: VecDeque::new(),
            offset: 0,
            datagram,
            stop: stop.unwrap_or(Time::NEVER),
            stopped: false,
            closes_with_peer: false,
        }
    }

    /// A source for an endpoint that only receives: it finishes when the
    /// peer has finished.
    pub fn receive_only() -> Source {
        Source {
            generator: Generator::Greedy { remaining: 0 },
            pending: VecDeque::new(),
            offset: 0,
            datagram: false,
            stop: Time::NEVER,
            stopped: false,
            closes_with_peer: true,
        }
    }

    pub fn closes_with_peer(&self) -> bool {
        self.closes_with_peer
    }

    /// The next time the source has something new to say (a message, or its
    /// stop time), if any.
    pub fn next_wake(&self) -> Option<Time> {
        if self.stopped {
            return None;
        }
        let next = match &self.generator {
            Generator::Timed(g) => g.next.min(self.stop),
            Generator::Greedy { .. } => self.stop,
        };
        (!next.is_never()).then_some(next)
    }

    /// Generate what is due at `now`.
    pub fn wake(&mut self, now: Time) {
        if now >= self.stop {
            self.stopped = true;
        }
        if let Generator::Timed(g) = &mut self.generator {
            while g.next <= now && g.next < self.stop {
                self.pending.push_back((g.message, g.next));
                g.step();
            }
        }
    }

    /// Stop generating: pending data is still handed out, then `Finished`.
    pub fn finish(&mut self) {
        self.stopped = true;
    }

    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Hand out bytes. `log` records when they were generated.
    pub fn read(&mut self, now: Time, buf: &mut [u8], log: &mut DelayLog) -> AppRead {
        if buf.is_empty() {
            return AppRead::Pending;
        }
        let n = match &mut self.generator {
            Generator::Greedy { remaining } if !self.stopped => {
                let n = (*remaining).min(buf.len() as u64) as usize;
                *remaining -= n as u64;
                if n > 0 {
                    log.push(self.offset + n as u64, now);
                }
                n
            }
            Generator::Greedy { .. } => 0,
            Generator::Timed(_) => self.read_messages(buf, log),
        };
        if n > 0 {
            pattern::fill(self.offset, &mut buf[..n]);
            self.offset += n as u64;
            return AppRead::Data(n);
        }
        if self.is_exhausted() {
            AppRead::Finished
        } else {
            AppRead::Pending
        }
    }

    fn read_messages(&mut self, buf: &mut [u8], log: &mut DelayLog) -> usize {
        let mut n = 0;
        while let Some((left, generated)) = self.pending.front_mut() {
            let take = (*left as usize).min(buf.len() - n);
            if take == 0 {
                break;
            }
            n += take;
            *left -= take as u32;
            if *left == 0 {
                log.push(self.offset + n as u64, *generated);
                self.pending.pop_front();
                if self.datagram {
                    break;
                }
            } else if self.datagram {
                // A datagram transport never splits a message: what did not
                // fit is dropped, like a truncated UDP write.
                log.push(self.offset + n as u64, *generated);
                self.pending.pop_front();
                break;
            }
        }
        n
    }

    fn is_exhausted(&self) -> bool {
        let generator_done = match &self.generator {
            Generator::Greedy { .. } if self.closes_with_peer => self.stopped,
            Generator::Greedy { remaining } => *remaining == 0 || self.stopped,
            Generator::Timed(_) => self.stopped,
        };
        generator_done && self.pending.is_empty()
    }
}

/// The receiving side of an application.
#[derive(Debug, Default)]
pub struct Sink {
    /// Bytes delivered in order so far.
    pub delivered: u64,
    /// Deliveries whose content was not the expected stream bytes.
    pub corrupt_deliveries: u64,
    pub first_delivery: Option<Time>,
    pub last_delivery: Option<Time>,
    /// The peer finished its stream.
    pub finished_at: Option<Time>,
    pub delay: Histogram,
    /// Datagram sinks (and those of a loss-tolerant JTP stream, which skips
    /// holes) see gaps where packets were lost, so neither content nor
    /// per-byte delay can be matched by stream offset.
    pub datagram: bool,
    /// A datagram transport's sink: which messages arrived, by content.
    pub fates: Option<MessageFates>,
}

impl Sink {
    pub fn datagram() -> Sink {
        Sink {
            datagram: true,
            ..Sink::default()
        }
    }

    /// The sink of a datagram transport, whose deliveries are whole
    /// messages: each is matched to the message sent, for loss and delay.
    pub fn messages() -> Sink {
        Sink {
            fates: Some(MessageFates::default()),
            ..Sink::datagram()
        }
    }

    pub fn consume(&mut self, now: Time, data: &[u8], log: &mut DelayLog) {
        if self.datagram {
            self.delivered += data.len() as u64;
            self.first_delivery.get_or_insert(now);
            self.last_delivery = Some(now);
            if let Some(generated) = self
                .fates
                .as_mut()
                .and_then(|f| f.deliver(data, &mut log.chunks))
            {
                self.delay.record(now.saturating_since(generated));
            }
            return;
        }
        if !pattern::matches(self.delivered, data) {
            self.corrupt_deliveries += 1;
        }
        self.delivered += data.len() as u64;
        self.first_delivery.get_or_insert(now);
        self.last_delivery = Some(now);
        while let Some(&(end, generated)) = log.chunks.front() {
            if end > self.delivered {
                break;
            }
            self.delay.record(now.saturating_since(generated));
            log.chunks.pop_front();
        }
    }

    pub fn finish(&mut self, now: Time) {
        self.finished_at.get_or_insert(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn rng() -> Pcg64Mcg {
        Pcg64Mcg::seed_from_u64(7)
    }

    #[test]
    fn bulk_hands_out_exactly_its_bytes_then_finishes() {
        let mut s = Source::new(
            &AppSpec::Bulk { bytes: 2500 },
            Time::ZERO,
            None,
            false,
            rng(),
        );
        let mut log = DelayLog::default();
        let mut buf = [0u8; 1000];
        assert_eq!(s.read(Time(1), &mut buf, &mut log), AppRead::Data(1000));
        assert_eq!(s.read(Time(2), &mut buf, &mut log), AppRead::Data(1000));
        assert_eq!(s.read(Time(3), &mut buf, &mut log), AppRead::Data(500));
        assert_eq!(s.read(Time(4), &mut buf, &mut log), AppRead::Finished);
        let mut sink = Sink::default();
        let mut all = vec![0u8; 2500];
        crate::pattern::fill(0, &mut all);
        sink.consume(Time(10), &all[..1200], &mut log);
        assert_eq!(sink.delay.count(), 1, "only the first chunk is complete");
        sink.consume(Time(20), &all[1200..], &mut log);
        assert_eq!(sink.delay.count(), 3);
        assert_eq!(sink.corrupt_deliveries, 0);
        assert_eq!(sink.delivered, 2500);
    }

    #[test]
    fn cbr_generates_on_schedule_and_stops() {
        let spec = AppSpec::Cbr {
            rate_bps: 8_000,
            message: 100,
        }; // one message per 100 ms
        let mut s = Source::new(&spec, Time::ZERO, Some(Time::from_millis(350)), true, rng());
        let mut log = DelayLog::default();
        let mut buf = [0u8; 1500];
        assert_eq!(s.read(Time::ZERO, &mut buf, &mut log), AppRead::Pending);
        let mut wakes = vec![];
        while let Some(t) = s.next_wake() {
            s.wake(t);
            wakes.push(t);
        }
        assert_eq!(
            wakes,
            vec![
                Time(0),
                Time::from_millis(100),
                Time::from_millis(200),
                Time::from_millis(300),
                Time::from_millis(350)
            ]
        );
        for _ in 0..4 {
            assert_eq!(
                s.read(Time::from_millis(400), &mut buf, &mut log),
                AppRead::Data(100)
            );
        }
        assert_eq!(
            s.read(Time::from_millis(400), &mut buf, &mut log),
            AppRead::Finished
        );
    }

    #[test]
    fn poisson_mean_interval_is_right() {
        let spec = AppSpec::Poisson {
            mean_interval: Duration::from_millis(50),
            message: 10,
        };
        let mut s = Source::new(&spec, Time::ZERO, Some(Time::from_secs(500)), false, rng());
        let mut n = 0u64;
        while let Some(t) = s.next_wake() {
            s.wake(t);
            n += 1;
        }
        // 10,000 expected; the count of a Poisson process has sd 100.
        assert!((9_600..=10_400).contains(&n), "{n}");
    }

    #[test]
    fn wrong_content_is_counted() {
        let mut sink = Sink::default();
        sink.consume(Time(1), &[1, 2, 3], &mut DelayLog::default());
        let mut expect = [0u8; 3];
        crate::pattern::fill(0, &mut expect);
        assert_eq!(sink.corrupt_deliveries, u64::from(expect != [1, 2, 3]));
    }
}
