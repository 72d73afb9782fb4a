//! The multi-homed R²CP receiver's event loop: one socket per path, the
//! engine (`R2cpReceiver`, unchanged) fed by all of them, a verifying file
//! sink ([`crate::app::FileSink`]: the senders' stream is the runtime's
//! file stream, so the file is checked on disk against the size and
//! SHA-256 its senders announce before it is moved into place).

use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use joulenet_proto::r2cp::{PathSpec, R2cpReceiver};
use joulenet_proto::{Agent, Duration, Time, TransportEvent};
use joulenet_registry::r2cp::R2cpSpec;
use joulenet_registry::ProtocolSpec;
use serde::Serialize;

use super::frame;
use super::liveness::{is_network_error, route_exists, DownReason, Liveness};
use super::net::{sender_addr, MultiNet};
use crate::app::{FileOutcome, FileSink};
use crate::conn::Tuning;
use crate::sock::{self, RecvBatch};

/// One path: this host's address on one interface, and a sender.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PathAddrs {
    pub local: SocketAddr,
    pub server: SocketAddr,
}

#[derive(Clone, Debug)]
pub struct ReceiverOptions {
    /// `r2cp`, `r2cp-s` or `r2cp-stripe`.
    pub protocol: String,
    pub paths: Vec<PathAddrs>,
    /// Use every live path at once (aggregation); `false`: the newest
    /// path takes over (handoff, server migration).
    pub aggregate: bool,
    pub out: PathBuf,
    pub tuning: Tuning,
    /// A path whose sender is silent this long after the receiver sent to
    /// it is taken down ([`Liveness`]).
    pub silence: Duration,
    /// Give up when no path has brought a datagram for this long.
    pub idle_timeout: Duration,
    pub stop: Option<Arc<AtomicBool>>,
}

impl ReceiverOptions {
    pub fn new(paths: Vec<PathAddrs>, out: PathBuf) -> ReceiverOptions {
        ReceiverOptions {
            protocol: "r2cp".into(),
            paths,
            aggregate: true,
            out,
            tuning: Tuning::default(),
            silence: Duration::from_secs(1),
            idle_timeout: Duration::from_secs(30),
            stop: None,
        }
    }
}

/// What one path carried.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PathReport {
    pub local: String,
    pub server: String,
    pub datagrams_sent: u64,
    pub datagrams_received: u64,
    /// RCP packet bytes received (data and control) on this path.
    pub bytes_received: u64,
    /// Datagrams from the path's sender that were not this connection's
    /// pipe datagrams, and datagrams from anyone else.
    pub strays: u64,
    pub send_errors: u64,
    pub downs: u64,
    pub ups: u64,
    pub last_down: Option<DownReason>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ReceiverReport {
    pub protocol: String,
    pub aggregate: bool,
    /// `verified`, or why not.
    pub status: String,
    pub reason: String,
    pub file: Option<String>,
    pub sha256: Option<String>,
    /// Stream bytes delivered (the file and its header).
    pub bytes: u64,
    /// From the first pipe's establishment to the end of the stream.
    pub seconds: f64,
    pub goodput_bps: f64,
    pub established_s: Option<f64>,
    pub pipes_opened: u64,
    pub timeouts: u64,
    pub paths: Vec<PathReport>,
}

struct Path {
    addrs: PathAddrs,
    sock: UdpSocket,
    live: Liveness,
    report: PathReport,
}

/// Binds every path's socket (errors name the address).
fn bind_paths(paths: &[PathAddrs]) -> Result<Vec<Path>, String> {
    paths
        .iter()
        .map(|&addrs| {
            let sock =
                sock::bind(addrs.local).map_err(|e| format!("--bind {}: {e}", addrs.local))?;
            let local = sock.local_addr().map_or(addrs.local, |a| a);
            Ok(Path {
                addrs,
                sock,
                live: Liveness::new(Duration::ZERO),
                report: PathReport {
                    local: local.to_string(),
                    server: addrs.server.to_string(),
                    ..PathReport::default()
                },
            })
        })
        .collect()
}

/// The engine for these paths, configured as the registry configures it
/// on hosts.
fn engine(o: &ReceiverOptions) -> Result<R2cpReceiver, String> {
    let mut spec = ProtocolSpec::named(&o.protocol)
        .ok_or_else(|| format!("unknown protocol {:?}", o.protocol))?;
    if frame::code_of(&o.protocol).is_none() {
        return Err(format!("{} is not a multi-homed protocol", o.protocol));
    }
    let mut tuned = o.tuning.clone();
    // Aggregating paths share one receive buffer; 4 MiB holds several
    // paths' windows at link rates.
    tuned.recv_buffer = tuned.recv_buffer.max(4 << 20);
    spec.on_hosts(&tuned.settings()).map_err(String::from)?;
    let r2cp = spec
        .config_as::<R2cpSpec>()
        .ok_or("not an R²CP configuration")?;
    let mut cfg = r2cp.cfg.clone();
    cfg.aggregate = o.aggregate;
    cfg.paths = (0..o.paths.len())
        .map(|i| PathSpec::to(sender_addr(i)))
        .collect();
    Ok(R2cpReceiver::new(cfg))
}

/// Receives one file over the paths; returns the report (also when the
/// file failed: `status` says why).
pub fn run_receiver(o: &ReceiverOptions) -> Result<ReceiverReport, String> {
    if o.paths.is_empty() {
        return Err("give at least one path (--bind)".into());
    }
    std::fs::create_dir_all(&o.out).map_err(|e| format!("{}: {e}", o.out.display()))?;
    let _ = crate::partial::remove_stale(&o.out);
    let mut paths = bind_paths(&o.paths)?;
    for p in &mut paths {
        p.live = Liveness::new(o.silence);
    }
    let mut agent = engine(o)?;
    let conn_id = crate::client::random_conn_id();
    let code = frame::code_of(&o.protocol).unwrap_or(0);
    let (sink, outcome) = FileSink::new(&o.out, conn_id);
    let mut net = MultiNet::new(paths.len(), Box::new(sink), Instant::now());
    let poll = Duration::from_millis(50);
    let mut next_probe = Time::ZERO;
    let mut established: Option<Time> = None;
    let mut finished: Option<Time> = None;
    let mut last_heard = Time::ZERO;
    let mut batch = RecvBatch::default();
    let mut failure: Option<String> = None;

    probe(&mut paths, &mut net, Time::ZERO);
    net.begin_callback();
    agent.start(&mut net);
    loop {
        flush(&mut paths, &mut net, code, conn_id);
        for (t, e) in net.events.drain(..) {
            if e == TransportEvent::Established {
                established.get_or_insert(t);
            }
        }
        if net.sink_finished {
            finished.get_or_insert(net.clock());
        }
        let now = net.clock();
        // Done once the engine closed every pipe (FIN exchanged), or 3 s
        // after the stream ended if a sender's FIN ACK never came.
        if let Some(f) = finished {
            if agent.is_closed() || now.0.saturating_sub(f.0) > 3_000_000_000 {
                break;
            }
        }
        if o.stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed)) {
            failure = Some("stopped by a signal".into());
            break;
        }
        if finished.is_none() && now.0.saturating_sub(last_heard.0) > o.idle_timeout.0 {
            failure = Some(format!(
                "no datagram on any path for {:.1} s",
                o.idle_timeout.as_secs_f64()
            ));
            break;
        }
        let deadline = agent
            .poll_timeout()
            .map_or(next_probe, |t| t.min(next_probe));
        let wait = std::time::Duration::from_nanos(deadline.0.saturating_sub(now.0))
            .min(std::time::Duration::from_millis(100));
        let socks: Vec<(&UdpSocket, bool)> = paths.iter().map(|p| (&p.sock, false)).collect();
        let readable = sock::wait(&socks, Some(wait)).map_err(|e| format!("poll: {e}"))?;
        let ready = readable.into_iter().enumerate().filter(|(_, r)| *r);
        for (i, _) in ready {
            // A batch at a time, sending the engine's requests between
            // batches so that a burst of arrivals does not hold them back.
            loop {
                let (n, heard) = receive(&mut paths, i, &mut batch, &mut net, &mut agent, conn_id);
                if heard {
                    last_heard = net.clock();
                }
                flush(&mut paths, &mut net, code, conn_id);
                if n == 0 {
                    break;
                }
            }
        }
        let now = net.clock();
        if now >= next_probe {
            probe(&mut paths, &mut net, now);
            next_probe = now + poll;
        }
        if agent.poll_timeout().is_some_and(|t| t <= now) {
            net.begin_callback();
            agent.on_timeout(&mut net);
        }
    }
    Ok(report(
        o,
        &paths,
        &agent,
        &outcome,
        established,
        finished,
        failure,
        &net,
    ))
}

/// Re-evaluates every path (routes, silence) for the engine's next poll.
fn probe(paths: &mut [Path], net: &mut MultiNet, now: Time) {
    for (i, p) in paths.iter_mut().enumerate() {
        let route = route_exists(p.addrs.local, p.addrs.server);
        p.live.refresh(now, route);
        net.up[i] = p.live.is_up();
    }
}

/// Frames and sends what the engine queued, each on its path's socket.
fn flush(paths: &mut [Path], net: &mut MultiNet, code: u8, conn_id: u64) {
    let now = net.clock();
    let mut d = Vec::with_capacity(2048);
    for (i, packet) in net.outbox.drain(..) {
        let p = &mut paths[i];
        d.clear();
        frame::write_header(code, conn_id, &mut d);
        d.extend_from_slice(&packet);
        match p.sock.send_to(&d, p.addrs.server) {
            Ok(_) => {
                p.report.datagrams_sent += 1;
                p.live.sent(now);
            }
            Err(e) => {
                p.report.send_errors += 1;
                if is_network_error(&e) {
                    p.live.send_failed(now);
                    net.up[i] = false;
                }
            }
        }
    }
}

/// Reads one batch from path `i`'s socket: how many datagrams, and
/// whether one was the connection's.
fn receive(
    paths: &mut [Path],
    i: usize,
    batch: &mut RecvBatch,
    net: &mut MultiNet,
    agent: &mut R2cpReceiver,
    conn_id: u64,
) -> (usize, bool) {
    let mut heard = false;
    {
        // An error here is an ICMP report of an earlier send: the path's
        // liveness deals with it.
        let n = batch.recv(&paths[i].sock).unwrap_or(0);
        for k in 0..n {
            let (d, from) = batch.get(k);
            let p = &mut paths[i];
            let ours = from == Some(p.addrs.server);
            match frame::parse(d) {
                Ok((id, packet)) if ours && id == conn_id => {
                    p.report.datagrams_received += 1;
                    p.report.bytes_received += packet.len() as u64;
                    p.live.heard();
                    heard = true;
                    net.arrived_on = Some(i);
                    net.begin_callback();
                    agent.on_packet(net, sender_addr(i), packet);
                    net.arrived_on = None;
                }
                _ => p.report.strays += 1,
            }
        }
        (n, heard)
    }
}

#[allow(clippy::too_many_arguments)]
fn report(
    o: &ReceiverOptions,
    paths: &[Path],
    agent: &R2cpReceiver,
    outcome: &Arc<Mutex<FileOutcome>>,
    established: Option<Time>,
    finished: Option<Time>,
    failure: Option<String>,
    net: &MultiNet,
) -> ReceiverReport {
    let outcome = outcome.lock().map(|o| o.clone()).unwrap_or_default();
    let (status, reason, file, sha256) = match (&outcome, failure) {
        (FileOutcome::Complete { path, sha256, .. }, _) => (
            "verified".to_string(),
            String::new(),
            Some(path.display().to_string()),
            Some(sha256.clone()),
        ),
        (FileOutcome::Failed { verdict, reason }, _) => {
            (verdict.to_string(), reason.clone(), None, None)
        }
        (FileOutcome::InProgress, why) => (
            "incomplete".to_string(),
            why.unwrap_or_else(|| "the stream did not end".into()),
            None,
            None,
        ),
    };
    let bytes = net.sink.bytes();
    let seconds = match (established, finished) {
        (Some(a), Some(b)) => b.0.saturating_sub(a.0) as f64 / 1e9,
        _ => 0.0,
    };
    let mut reports: Vec<PathReport> = paths.iter().map(|p| p.report.clone()).collect();
    for (r, p) in reports.iter_mut().zip(paths) {
        r.downs = p.live.downs;
        r.ups = p.live.ups;
        r.last_down = p.live.last_down;
    }
    ReceiverReport {
        protocol: o.protocol.clone(),
        aggregate: o.aggregate,
        status,
        reason,
        file,
        sha256,
        bytes,
        seconds,
        goodput_bps: if seconds > 0.0 {
            bytes as f64 * 8.0 / seconds
        } else {
            0.0
        },
        established_s: established.map(|t| t.0 as f64 / 1e9),
        pipes_opened: agent.gauge("pipes_opened").unwrap_or(0.0) as u64,
        timeouts: agent.stats().timeouts,
        paths: reports,
    }
}
