//! `joulenet emulate`: a user-space link emulator. A UDP relay between
//! clients (who send to `--listen`) and a server (`--forward`) that applies
//! the simulator's loss models, a rate (serialisation with a drop-tail
//! queue) and a fixed one-way delay, in each direction.
//!
//! Each direction is one link: a frame's transmission starts when the link
//! is free, lasts (bytes + 28) × 8 / rate, and the loss model judges it by
//! its `FrameInfo` exactly as in the simulator; survivors are released
//! `delay` after their transmission ends. Both directions share the channel
//! state seed (one wireless channel), with their own per-frame streams.
//! Optionally a survivor is duplicated (`duplicate`) or held back by
//! `reorder_gap` so that later frames overtake it (`reorder`), as netem's
//! options of those names do.
//!
//! Each client source address gets a slot with its own upstream socket.
//! A slot silent for `client_idle` is freed; when `max_clients` slots are
//! taken, a new client takes the least recently active one's slot (counted
//! in `clients_evicted`) instead of being dropped: a long-lived relay keeps
//! serving new clients however many came before.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use joulenet_channel::loss::{GeState, LossSpec, LossTrace, Sojourn};
use joulenet_channel::{FrameError, FrameInfo, LossProcess};
use joulenet_proto::{Duration, Time};
use serde::Serialize;

use crate::client::resolve;
use crate::energy::IP_UDP_OVERHEAD;
use crate::sock::{self, RecvBatch};

#[derive(Clone, Debug)]
pub struct EmulateOptions {
    pub listen: SocketAddr,
    pub forward: String,
    pub loss: LossSpec,
    pub seed: u64,
    pub delay: Duration,
    pub rate_bps: Option<u64>,
    /// Drop-tail queue per direction, packets.
    pub queue_packets: usize,
    /// Client slots (one upstream socket each) before the least recently
    /// active one is reused.
    pub max_clients: usize,
    /// A client silent this long loses its slot.
    pub client_idle: Duration,
    /// Probability that a surviving frame is delivered twice.
    pub duplicate: f64,
    /// Probability that a surviving frame is held back by `reorder_gap`.
    pub reorder: f64,
    pub reorder_gap: Duration,
}

impl EmulateOptions {
    pub fn new(listen: SocketAddr, forward: &str, loss: LossSpec) -> EmulateOptions {
        EmulateOptions {
            listen,
            forward: forward.to_string(),
            loss,
            seed: 1,
            delay: Duration::ZERO,
            rate_bps: None,
            queue_packets: 1000,
            max_clients: 1024,
            client_idle: Duration::from_secs(60),
            duplicate: 0.0,
            reorder: 0.0,
            reorder_gap: Duration::from_millis(5),
        }
    }

    /// Checks the probabilities (a typo must not silently mean 0 or 1).
    pub fn validate(&self) -> Result<(), String> {
        for (name, p) in [("duplicate", self.duplicate), ("reorder", self.reorder)] {
            if !(0.0..=1.0).contains(&p) {
                return Err(format!("{name} probability {p} outside 0..=1"));
            }
        }
        if self.max_clients == 0 {
            return Err("max_clients must be at least 1".into());
        }
        Ok(())
    }
}

/// A probability (`0.1`) or percentage (`10%`) from the command line.
pub fn parse_probability(s: &str) -> Result<f64, String> {
    let s = s.trim();
    let v = match s.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|v| v / 100.0),
        None => s.parse::<f64>(),
    }
    .map_err(|_| format!("{s:?} is not a probability"))?;
    if !(0.0..=1.0).contains(&v) {
        return Err(format!(
            "{s:?} is not a probability in 0..=1 (or 0%..=100%)"
        ));
    }
    Ok(v)
}

/// Parses a loss model from the command line:
///
/// * `none`
/// * `bernoulli:P` — P a probability (`0.05`) or a percentage (`5%`)
/// * `ge:GOOD_MEAN,BAD_MEAN,GOOD_LOSS,BAD_LOSS` — Gilbert–Elliott with
///   exponential sojourns, e.g. `ge:1s,100ms,0,0.5`
/// * `onoff:ON,OFF,DROP` — On (lossy) / Off phases, e.g. `onoff:2s,1s,1`
/// * `trace:PATH` — a loss trace file (the simulator's format)
pub fn parse_loss(text: &str) -> Result<LossSpec, String> {
    let (model, args) = text.split_once(':').unwrap_or((text, ""));
    let prob = |s: &str| -> Result<f64, String> {
        let s = s.trim();
        let v = match s.strip_suffix('%') {
            Some(p) => p.trim().parse::<f64>().map(|v| v / 100.0),
            None => s.parse::<f64>(),
        };
        v.map_err(|_| format!("{s:?} is not a probability"))
    };
    let dur =
        |s: &str| joulenet_channel::units::parse_duration(s.trim()).map_err(|e| e.to_string());
    let parts: Vec<&str> = args.split(',').collect();
    let spec = match model.to_ascii_lowercase().as_str() {
        "none" => LossSpec::None,
        "bernoulli" => LossSpec::Bernoulli { loss: prob(args)? },
        "ge" | "gilbert_elliott" if parts.len() == 4 => LossSpec::GilbertElliott {
            good: GeState {
                sojourn: Sojourn::Exponential { mean: dur(parts[0])? },
                loss: FrameError::Packet(prob(parts[2])?),
            },
            bad: GeState {
                sojourn: Sojourn::Exponential { mean: dur(parts[1])? },
                loss: FrameError::Packet(prob(parts[3])?),
            },
            start_bad: false,
        },
        "onoff" | "on_off_phases" if parts.len() == 3 => LossSpec::OnOffPhases {
            on: dur(parts[0])?,
            off: dur(parts[1])?,
            drop_rate: prob(parts[2])?,
            start_on: true,
            offset: Duration::ZERO,
        },
        "trace" if !args.is_empty() => {
            let text = std::fs::read_to_string(args).map_err(|e| format!("{args}: {e}"))?;
            LossSpec::Trace(Arc::new(LossTrace::parse(&text).map_err(|e| e.to_string())?))
        }
        _ => {
            return Err(format!(
                "bad loss model {text:?}: expected none, bernoulli:P, ge:GOOD_MEAN,BAD_MEAN,GOOD_LOSS,BAD_LOSS, onoff:ON,OFF,DROP or trace:PATH"
            ))
        }
    };
    spec.validate().map_err(|e| e.to_string())?;
    Ok(spec)
}

/// What one direction did.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DirectionCounts {
    pub received: u64,
    pub lost: u64,
    pub queue_drops: u64,
    pub forwarded: u64,
    pub duplicated: u64,
    pub reordered: u64,
    /// Frames whose client slot was freed before they were due.
    pub orphaned: u64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct EmulateCounts {
    /// Client → server.
    pub up: DirectionCounts,
    /// Server → client.
    pub down: DirectionCounts,
    /// Clients seen (source addresses given a slot).
    pub clients: u64,
    /// Slots freed after `client_idle` of silence.
    pub clients_expired: u64,
    /// Slots taken over by a new client when all were in use.
    pub clients_evicted: u64,
}

/// A frame waiting for its release: ordered by time, then by arrival.
type Pending = Reverse<(Time, u64, Vec<u8>, u64)>;

struct Direction {
    loss: Box<dyn LossProcess>,
    busy_until: Time,
    /// (release time, arrival number, datagram, client slot)
    queue: BinaryHeap<Pending>,
    arrivals: u64,
    /// Duplication and reordering draws.
    rng: rand_pcg::Pcg64Mcg,
    counts: DirectionCounts,
}

impl Direction {
    fn new(opts: &EmulateOptions, stream: u64) -> Direction {
        Direction {
            loss: opts.loss.build(opts.seed, opts.seed ^ stream),
            busy_until: Time::ZERO,
            queue: BinaryHeap::new(),
            arrivals: 0,
            rng: rand_pcg::Pcg64Mcg::new(((opts.seed ^ stream) as u128) << 1 | 1),
            counts: DirectionCounts::default(),
        }
    }

    fn push(&mut self, at: Time, data: Vec<u8>, client: u64) {
        self.arrivals += 1;
        self.queue.push(Reverse((at, self.arrivals, data, client)));
    }

    fn due(&mut self, now: Time) -> Option<(Vec<u8>, u64)> {
        if self.queue.peek().is_some_and(|Reverse((t, ..))| *t <= now) {
            self.queue.pop().map(|Reverse((_, _, d, c))| (d, c))
        } else {
            None
        }
    }

    fn next(&self) -> Option<Time> {
        self.queue.peek().map(|Reverse((t, ..))| *t)
    }

    fn offer(&mut self, opts: &EmulateOptions, now: Time, data: Vec<u8>, client: u64) {
        self.counts.received += 1;
        if self.queue.len() >= opts.queue_packets {
            self.counts.queue_drops += 1;
            return;
        }
        let bits = (data.len() as u64 + IP_UDP_OVERHEAD) * 8;
        let (tx_start, tx_end) = match opts.rate_bps {
            Some(rate) => {
                let start = now.max(self.busy_until);
                let end = Time(start.0 + (bits as u128 * 1_000_000_000 / rate as u128) as u64);
                self.busy_until = end;
                (start, end)
            }
            None => (now, now),
        };
        let frame = FrameInfo {
            tx_start,
            tx_end,
            bits,
        };
        if self.loss.is_lost(now, &frame) {
            self.counts.lost += 1;
            return;
        }
        let mut at = tx_end + opts.delay;
        if opts.reorder > 0.0 && rand::Rng::random_bool(&mut self.rng, opts.reorder) {
            self.counts.reordered += 1;
            at += opts.reorder_gap;
        }
        if opts.duplicate > 0.0 && rand::Rng::random_bool(&mut self.rng, opts.duplicate) {
            self.counts.duplicated += 1;
            self.push(at, data.clone(), client);
        }
        self.push(at, data, client);
    }
}

struct Client {
    addr: SocketAddr,
    upstream: UdpSocket,
    last_active: Time,
}

/// Binds the listening socket.
pub fn bind(opts: &EmulateOptions) -> Result<UdpSocket, String> {
    sock::bind(opts.listen).map_err(|e| format!("bind {}: {e}", opts.listen))
}

/// Relays until `stop` is set; returns what each direction did.
pub fn run_emulator(
    opts: &EmulateOptions,
    listen: UdpSocket,
    stop: Arc<AtomicBool>,
) -> Result<EmulateCounts, String> {
    opts.validate()?;
    let forward = resolve(&opts.forward, crate::client::DEFAULT_PORT)?;
    let epoch = Instant::now();
    let now = || Time(epoch.elapsed().as_nanos() as u64);
    let mut up = Direction::new(opts, 0x5555_5555_5555_5555);
    let mut down = Direction::new(opts, 0xaaaa_aaaa_aaaa_aaaa);
    let mut clients: HashMap<u64, Client> = HashMap::new();
    let mut by_addr: HashMap<SocketAddr, u64> = HashMap::new();
    let mut next_slot = 0u64;
    let mut counts = EmulateCounts::default();
    let mut batch = RecvBatch::default();
    let upstream_bind: SocketAddr = if forward.is_ipv4() {
        "0.0.0.0:0".parse().unwrap()
    } else {
        "[::]:0".parse().unwrap()
    };
    while !stop.load(Ordering::Relaxed) {
        // Release what is due.
        let t = now();
        while let Some((d, c)) = up.due(t) {
            match clients.get(&c) {
                Some(cl) if cl.upstream.send_to(&d, forward).is_ok() => up.counts.forwarded += 1,
                Some(_) => {}
                None => up.counts.orphaned += 1,
            }
        }
        while let Some((d, c)) = down.due(t) {
            match clients.get(&c) {
                Some(cl) if listen.send_to(&d, cl.addr).is_ok() => down.counts.forwarded += 1,
                Some(_) => {}
                None => down.counts.orphaned += 1,
            }
        }
        // Free the slots of clients silent for `client_idle`.
        let idle: Vec<u64> = clients
            .iter()
            .filter(|(_, c)| t.saturating_since(c.last_active) > opts.client_idle)
            .map(|(&k, _)| k)
            .collect();
        for k in idle {
            if let Some(c) = clients.remove(&k) {
                by_addr.remove(&c.addr);
                counts.clients_expired += 1;
            }
        }
        let next = [up.next(), down.next()].into_iter().flatten().min();
        let timeout = next
            .map(|r| std::time::Duration::from_nanos(r.0.saturating_sub(now().0)))
            .unwrap_or(std::time::Duration::from_millis(100))
            .min(std::time::Duration::from_millis(100));
        let slots: Vec<u64> = clients.keys().copied().collect();
        let mut socks: Vec<(&UdpSocket, bool)> = vec![(&listen, false)];
        socks.extend(slots.iter().map(|k| (&clients[k].upstream, false)));
        let readable = if timeout.is_zero() {
            vec![true; socks.len()]
        } else {
            sock::wait(&socks, Some(timeout)).map_err(|e| e.to_string())?
        };
        drop(socks);
        if readable[0] {
            let n = batch.recv(&listen).map_err(|e| e.to_string())?;
            for i in 0..n {
                let (d, from) = batch.get(i);
                let Some(from) = from else { continue };
                let t = now();
                let slot = match by_addr.get(&from) {
                    Some(&k) => k,
                    None => {
                        if clients.len() >= opts.max_clients {
                            // Full: the least recently active client makes room.
                            let oldest = clients
                                .iter()
                                .min_by_key(|(_, c)| c.last_active)
                                .map(|(&k, _)| k);
                            if let Some(c) = oldest.and_then(|k| clients.remove(&k)) {
                                by_addr.remove(&c.addr);
                                counts.clients_evicted += 1;
                            }
                        }
                        let upstream = sock::bind(upstream_bind).map_err(|e| e.to_string())?;
                        next_slot += 1;
                        clients.insert(
                            next_slot,
                            Client {
                                addr: from,
                                upstream,
                                last_active: t,
                            },
                        );
                        by_addr.insert(from, next_slot);
                        counts.clients += 1;
                        next_slot
                    }
                };
                if let Some(c) = clients.get_mut(&slot) {
                    c.last_active = t;
                }
                up.offer(opts, t, d.to_vec(), slot);
            }
        }
        for (k, r) in slots.iter().zip(readable.iter().skip(1)) {
            if !*r {
                continue;
            }
            let Some(c) = clients.get_mut(k) else {
                continue;
            };
            let n = batch.recv(&c.upstream).map_err(|e| e.to_string())?;
            let t = now();
            if n > 0 {
                c.last_active = t;
            }
            for i in 0..n {
                let (d, from) = batch.get(i);
                if from != Some(forward) {
                    continue;
                }
                down.offer(opts, t, d.to_vec(), *k);
            }
        }
    }
    counts.up = up.counts;
    counts.down = down.counts;
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loss_models_parse() {
        assert_eq!(parse_loss("none").unwrap(), LossSpec::None);
        assert_eq!(
            parse_loss("bernoulli:5%").unwrap(),
            LossSpec::Bernoulli { loss: 0.05 }
        );
        assert_eq!(
            parse_loss("bernoulli:0.2").unwrap(),
            LossSpec::Bernoulli { loss: 0.2 }
        );
        assert!(matches!(
            parse_loss("ge:1s,100ms,0,0.5").unwrap(),
            LossSpec::GilbertElliott { .. }
        ));
        assert!(matches!(
            parse_loss("onoff:2s,1s,1").unwrap(),
            LossSpec::OnOffPhases { .. }
        ));
        for bad in [
            "bernoulli:1.5",
            "bernoulli:x",
            "ge:1s",
            "wat",
            "trace:/no/such/file",
        ] {
            assert!(parse_loss(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn probabilities_parse_and_bad_ones_are_errors() {
        assert_eq!(parse_probability("10%"), Ok(0.1));
        assert_eq!(parse_probability("0.25"), Ok(0.25));
        for bad in ["1.5", "-1", "nan", "x", "150%"] {
            assert!(parse_probability(bad).is_err(), "{bad}");
        }
        let mut o = EmulateOptions::new("127.0.0.1:0".parse().unwrap(), "x", LossSpec::None);
        assert!(o.validate().is_ok());
        o.duplicate = f64::NAN;
        assert!(o.validate().is_err());
    }

    /// Reordered frames are overtaken; duplicates arrive twice; both at
    /// about the asked rates.
    #[test]
    fn duplication_and_reordering_happen_at_their_rates() {
        let mut o = EmulateOptions::new("127.0.0.1:0".parse().unwrap(), "x", LossSpec::None);
        o.duplicate = 0.1;
        o.reorder = 0.1;
        o.queue_packets = 100_000;
        let mut d = Direction::new(&o, 1);
        for i in 0..10_000u32 {
            d.offer(&o, Time(i as u64 * 1000), i.to_be_bytes().to_vec(), 1);
        }
        let mut out = Vec::new();
        while let Some((p, _)) = d.due(Time::NEVER) {
            out.push(u32::from_be_bytes(p[..4].try_into().unwrap()));
        }
        let c = d.counts;
        assert!((800..1200).contains(&c.duplicated), "{c:?}");
        assert!((800..1200).contains(&c.reordered), "{c:?}");
        assert_eq!(out.len() as u64, 10_000 + c.duplicated);
        // A frame is overtaken when one offered after it came out first.
        let mut max = 0;
        let overtaken = out
            .iter()
            .filter(|&&x| {
                let behind = x < max;
                max = max.max(x);
                behind
            })
            .count();
        assert!(overtaken >= 800, "{overtaken}");
    }
}
