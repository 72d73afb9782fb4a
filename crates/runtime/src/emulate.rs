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

use std::collections::{HashMap, VecDeque};
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
    pub max_clients: usize,
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
            max_clients: 64,
        }
    }
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
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct EmulateCounts {
    /// Client → server.
    pub up: DirectionCounts,
    /// Server → client.
    pub down: DirectionCounts,
    pub clients_refused: u64,
}

struct Direction {
    loss: Box<dyn LossProcess>,
    busy_until: Time,
    /// (release time, datagram, client index)
    queue: VecDeque<(Time, Vec<u8>, usize)>,
    counts: DirectionCounts,
}

impl Direction {
    fn offer(&mut self, opts: &EmulateOptions, now: Time, data: Vec<u8>, client: usize) {
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
        self.queue.push_back((tx_end + opts.delay, data, client));
    }
}

struct Client {
    addr: SocketAddr,
    upstream: UdpSocket,
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
    let forward = resolve(&opts.forward, crate::client::DEFAULT_PORT)?;
    let epoch = Instant::now();
    let now = || Time(epoch.elapsed().as_nanos() as u64);
    let mut up = Direction {
        loss: opts
            .loss
            .build(opts.seed, opts.seed ^ 0x5555_5555_5555_5555),
        busy_until: Time::ZERO,
        queue: VecDeque::new(),
        counts: DirectionCounts::default(),
    };
    let mut down = Direction {
        loss: opts
            .loss
            .build(opts.seed, opts.seed ^ 0xaaaa_aaaa_aaaa_aaaa),
        busy_until: Time::ZERO,
        queue: VecDeque::new(),
        counts: DirectionCounts::default(),
    };
    let mut clients: Vec<Client> = Vec::new();
    let mut by_addr: HashMap<SocketAddr, usize> = HashMap::new();
    let mut refused = 0u64;
    let mut batch = RecvBatch::default();
    let upstream_bind: SocketAddr = if forward.is_ipv4() {
        "0.0.0.0:0".parse().unwrap()
    } else {
        "[::]:0".parse().unwrap()
    };
    while !stop.load(Ordering::Relaxed) {
        // Release what is due.
        let t = now();
        while up.queue.front().is_some_and(|(r, _, _)| *r <= t) {
            let (_, d, c) = up.queue.pop_front().unwrap();
            if clients[c].upstream.send_to(&d, forward).is_ok() {
                up.counts.forwarded += 1;
            }
        }
        while down.queue.front().is_some_and(|(r, _, _)| *r <= t) {
            let (_, d, c) = down.queue.pop_front().unwrap();
            if listen.send_to(&d, clients[c].addr).is_ok() {
                down.counts.forwarded += 1;
            }
        }
        let next = [up.queue.front(), down.queue.front()]
            .into_iter()
            .flatten()
            .map(|(r, _, _)| *r)
            .min();
        let timeout = next
            .map(|r| std::time::Duration::from_nanos(r.0.saturating_sub(now().0)))
            .unwrap_or(std::time::Duration::from_millis(100))
            .min(std::time::Duration::from_millis(100));
        let mut socks: Vec<(&UdpSocket, bool)> = vec![(&listen, false)];
        socks.extend(clients.iter().map(|c| (&c.upstream, false)));
        let readable = if timeout.is_zero() {
            vec![true; socks.len()]
        } else {
            sock::wait(&socks, Some(timeout)).map_err(|e| e.to_string())?
        };
        if readable[0] {
            let n = batch.recv(&listen).map_err(|e| e.to_string())?;
            for i in 0..n {
                let (d, from) = batch.get(i);
                let Some(from) = from else { continue };
                let idx = match by_addr.get(&from) {
                    Some(&i) => i,
                    None if clients.len() >= opts.max_clients => {
                        refused += 1;
                        continue;
                    }
                    None => {
                        let upstream = sock::bind(upstream_bind).map_err(|e| e.to_string())?;
                        clients.push(Client {
                            addr: from,
                            upstream,
                        });
                        by_addr.insert(from, clients.len() - 1);
                        clients.len() - 1
                    }
                };
                up.offer(opts, now(), d.to_vec(), idx);
            }
        }
        for (idx, r) in readable.iter().enumerate().skip(1) {
            if !*r || idx > clients.len() {
                continue;
            }
            let n = batch
                .recv(&clients[idx - 1].upstream)
                .map_err(|e| e.to_string())?;
            for i in 0..n {
                let (d, from) = batch.get(i);
                if from != Some(forward) {
                    continue;
                }
                down.offer(opts, now(), d.to_vec(), idx - 1);
            }
        }
    }
    Ok(EmulateCounts {
        up: up.counts,
        down: down.counts,
        clients_refused: refused,
    })
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
}
