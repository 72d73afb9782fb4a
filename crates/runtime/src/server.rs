//! The server end (`serve`, `recv`): one UDP socket, many connections keyed
//! by their random 64-bit id, each with a bounded agent; a limit on how many
//! run at once, announced to refused clients with a `Refused` datagram.
//!
//! Strangers are counted and dropped, never answered with state: malformed
//! datagrams, `Data` for unknown ids, datagrams for a known id from another
//! address, and `Hello`s replaying a recently finished connection.

use std::collections::{HashMap, VecDeque};
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use joulenet_channel::RadioProfile;
use joulenet_proto::{Duration, NodeId, Time};
use serde::Serialize;
use serde_json::json;

use crate::app::{AppSink, CountingSink, FileOutcome, FileSink};
use crate::client::flush;
use crate::conn::{Connection, Tuning};
use crate::energy;
use crate::frame::{self, Header, Kind, Protocol};
use crate::report::{Format, Reporter, Summary};
use crate::route::{self, RouteInfo};
use crate::sock::{self, RecvBatch};

#[derive(Clone, Debug, PartialEq)]
pub enum ServerMode {
    /// Count and discard (iperf-like `serve`).
    Discard,
    /// Receive files into this directory (`recv`).
    Files(PathBuf),
}

#[derive(Clone, Debug)]
pub struct ServerOptions {
    pub bind: SocketAddr,
    /// Serve only this protocol (`None`: any).
    pub protocol: Option<Protocol>,
    pub mode: ServerMode,
    pub max_conns: usize,
    /// Exit after the first connection ends (iperf3's `-1`).
    pub one_off: bool,
    pub interval: Option<Duration>,
    pub format: Format,
    pub tuning: Tuning,
    pub radio: String,
    pub radio_rate_bps: u64,
    /// A connection silent this long is dropped.
    pub idle_timeout: Duration,
    /// Set to make the server return (checked at least every 100 ms).
    pub stop: Option<Arc<AtomicBool>>,
    /// Through relays: this node's id (`--node`); routed datagrams for
    /// another node are counted as misrouted.
    pub node: Option<NodeId>,
}

impl ServerOptions {
    pub fn new(bind: SocketAddr, mode: ServerMode) -> ServerOptions {
        ServerOptions {
            bind,
            protocol: None,
            mode,
            max_conns: 64,
            one_off: false,
            interval: None,
            format: Format::Human,
            tuning: Tuning::default(),
            radio: "80211b".into(),
            radio_rate_bps: 54_000_000,
            idle_timeout: Duration::from_secs(60),
            stop: None,
            node: None,
        }
    }
}

/// Datagrams the server dropped, by reason.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ServerCounters {
    pub malformed: u64,
    pub unknown_connection: u64,
    pub wrong_source: u64,
    pub replayed_hello: u64,
    pub refused_busy: u64,
    pub refused_protocol: u64,
    /// Routed datagrams addressed to another node.
    pub misrouted: u64,
}

#[derive(Clone, Debug, Default)]
pub struct ServerReport {
    pub counters: ServerCounters,
    pub summaries: Vec<Summary>,
    /// For `recv`: each connection's file outcome, in order of ending.
    pub files: Vec<FileOutcome>,
}

const STOP_POLL: std::time::Duration = std::time::Duration::from_millis(100);

/// How long a connection whose agent closed waits for the peer's `Close`.
pub const LINGER: Duration = Duration::from_secs(2);

/// How many finished connection ids are remembered to spot replays.
const RECENT_IDS: usize = 4096;

#[derive(Clone)]
struct SharedOut(Arc<Mutex<Box<dyn Write + Send>>>);

impl Write for SharedOut {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.lock().unwrap().flush()
    }
}

struct Entry {
    conn: Connection,
    /// When the agent was first seen done.
    done_since: Option<Time>,
    rep: Reporter,
    file: Option<Arc<Mutex<FileOutcome>>>,
}

/// Binds the server's socket (separately from running, so a caller can learn
/// the port before clients connect).
pub fn bind(opts: &ServerOptions) -> Result<std::net::UdpSocket, String> {
    sock::bind(opts.bind).map_err(|e| format!("bind {}: {e}", opts.bind))
}

pub fn run_server(
    opts: &ServerOptions,
    socket: std::net::UdpSocket,
    out: Box<dyn Write + Send>,
) -> Result<ServerReport, String> {
    let profile = RadioProfile::preset(&opts.radio)
        .ok_or_else(|| format!("unknown radio {:?}", opts.radio))?;
    if let ServerMode::Files(dir) = &opts.mode {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let out = SharedOut(Arc::new(Mutex::new(out)));
    let local = socket.local_addr().map_err(|e| e.to_string())?;
    if opts.format == Format::Human {
        let _ = writeln!(
            out.clone(),
            "Server listening on {local} ({}, at most {} connections)",
            opts.protocol
                .map_or("any protocol".into(), |p| p.to_string()),
            opts.max_conns
        );
    }
    let mut conns: HashMap<u64, Entry> = HashMap::new();
    let mut recent: VecDeque<u64> = VecDeque::new();
    let mut report = ServerReport::default();
    let mut sendq: Vec<(Vec<u8>, SocketAddr)> = Vec::new();
    let mut pool: Vec<Vec<u8>> = Vec::new();
    let mut batch = RecvBatch::default();
    let epoch = Instant::now();
    loop {
        // Timers, app, reports; then retire finished connections.
        let mut finished = Vec::new();
        for (id, e) in conns.iter_mut() {
            let now = e.conn.now();
            e.conn.poll(now);
            e.conn.drain(&mut sendq, &mut pool);
            e.rep.tick(now, &e.conn);
            // The client sends `Close` only once its agent is done, so every
            // byte it will ever send has been delivered or is lost for good.
            // An agent that is done on its own lingers until that `Close`
            // (or for LINGER): a WWP or E2TCP receiver closes when it has
            // the FIN, a TCP server that half-closed at once sits in
            // TIME_WAIT once it has ACKed the client's FIN; if that answer
            // is lost, the sender's retransmitted FIN must still find
            // someone to answer it.
            //
            // The linger counts from the later of "done" and the last
            // datagram heard: a sender still retransmitting its FIN (with a
            // backed-off RTO) keeps the connection answerable. When a
            // connection that got its whole stream retires without the
            // peer's `Close`, it says `Close` itself (below), so a sender
            // whose last answers were lost learns that the receiver has
            // everything instead of retransmitting into the void.
            if e.conn.is_done() {
                e.done_since.get_or_insert(now);
            }
            let lingered = e
                .done_since
                .is_some_and(|t| now.saturating_since(t.max(e.conn.last_heard)) > LINGER);
            let done = e.conn.peer_closed || e.conn.aborted || lingered;
            let silent = now.saturating_since(e.conn.last_heard) > opts.idle_timeout;
            if done || silent {
                if silent && !done {
                    e.conn.aborted = true;
                }
                finished.push(*id);
            }
        }
        flush(&socket, None, &mut sendq, &mut pool)?;
        for id in finished {
            let Some(mut e) = conns.remove(&id) else {
                continue;
            };
            if e.conn.finished_at.is_some() && !e.conn.aborted && !e.conn.peer_closed {
                // Twice: either may be lost.
                let close = e.conn.close_datagram();
                sendq.push(close.clone());
                sendq.push(close);
                // Now: a one-off server returns right after this connection.
                flush(&socket, None, &mut sendq, &mut pool)?;
            }
            let end = e.conn.finished_at.unwrap_or_else(|| e.conn.now());
            let delivered = e.conn.app_bytes_delivered();
            let energy = energy::estimate(
                &profile,
                opts.radio_rate_bps,
                e.conn.counts.datagrams_sent,
                e.conn.counts.udp_bytes_sent,
                e.conn.counts.datagrams_received,
                e.conn.counts.udp_bytes_received,
                end.saturating_since(Time::ZERO),
            );
            let mut summary = Summary::build(&e.conn, end, Some(delivered), energy);
            // Dropping the connection drops its sink: an unfinished file is removed.
            let file = e.file.take();
            drop(e.conn);
            if let Some(f) = file {
                let outcome = f.lock().unwrap().clone();
                summary.file = Some(match &outcome {
                    FileOutcome::Complete { path, size, sha256 } => {
                        json!({"status": "verified", "path": path, "size": size, "sha256": sha256})
                    }
                    FileOutcome::Failed(why) => json!({"status": "failed", "reason": why}),
                    FileOutcome::InProgress => json!({"status": "incomplete"}),
                });
                report.files.push(outcome);
            }
            e.rep.end(&summary);
            report.summaries.push(summary);
            recent.push_back(id);
            if recent.len() > RECENT_IDS {
                recent.pop_front();
            }
            if opts.one_off {
                if opts.format == Format::Human {
                    let _ = writeln!(out.clone(), "dropped datagrams: {}", json!(report.counters));
                }
                return Ok(report);
            }
        }
        if opts
            .stop
            .as_ref()
            .is_some_and(|s| s.load(Ordering::Relaxed))
        {
            return Ok(report);
        }
        // Wait for a datagram or the earliest deadline.
        let deadline = conns
            .values()
            .flat_map(|e| {
                let base = e.conn.net.start_instant();
                let to_global = move |t: Time| Time((base - epoch).as_nanos() as u64 + t.0);
                [
                    e.conn.next_deadline(),
                    e.rep.next_tick(),
                    e.done_since
                        .map(|t| t.max(e.conn.last_heard) + LINGER + Duration(1)),
                    Some(Time(
                        e.conn.last_heard.0.saturating_add(opts.idle_timeout.0) + 1,
                    )),
                ]
                .into_iter()
                .flatten()
                .map(to_global)
            })
            .min();
        let now_global = Time(epoch.elapsed().as_nanos() as u64);
        let mut timeout =
            deadline.map(|d| std::time::Duration::from_nanos(d.0.saturating_sub(now_global.0)));
        if opts.stop.is_some() {
            timeout = Some(timeout.map_or(STOP_POLL, |t| t.min(STOP_POLL)));
        }
        if !timeout.is_some_and(|t| t.is_zero()) {
            sock::wait(&[(&socket, !sendq.is_empty())], timeout).map_err(|e| e.to_string())?;
        }
        for _ in 0..16 {
            let n = batch.recv(&socket).map_err(|e| format!("receive: {e}"))?;
            for i in 0..n {
                let (d, from) = batch.get(i);
                let Some(from) = from else {
                    report.counters.malformed += 1;
                    continue;
                };
                let Ok(dg) = route::parse(d) else {
                    report.counters.malformed += 1;
                    continue;
                };
                let (h, payload, routed) = (dg.header, dg.payload, dg.route);
                if routed.is_some_and(|r| opts.node.is_some_and(|n| n != r.dst.node)) {
                    report.counters.misrouted += 1;
                    continue;
                }
                if let Some(e) = conns.get_mut(&h.conn_id) {
                    // Same peer, protocol and (through relays) flow.
                    let same_route = match (&e.conn.route, &routed) {
                        (Some(info), Some(r)) => info.accepts(r),
                        (None, None) => true,
                        _ => false,
                    };
                    if from != e.conn.peer || h.protocol != e.conn.protocol || !same_route {
                        report.counters.wrong_source += 1;
                        continue;
                    }
                    if let (Some(info), Some(r)) = (&mut e.conn.route, &routed) {
                        info.saw(r);
                    }
                    match h.kind {
                        Kind::Hello | Kind::Data => e.conn.on_datagram(payload, d.len()),
                        Kind::Close => e.conn.on_close(),
                        Kind::Refused => report.counters.unknown_connection += 1,
                    }
                    continue;
                }
                if h.kind != Kind::Hello {
                    report.counters.unknown_connection += 1;
                    continue;
                }
                if recent.contains(&h.conn_id) {
                    report.counters.replayed_hello += 1;
                    continue;
                }
                let refuse = if opts.protocol.is_some_and(|p| p != h.protocol) {
                    report.counters.refused_protocol += 1;
                    Some(format!(
                        "this server speaks {} only, not {}",
                        opts.protocol.unwrap(),
                        h.protocol
                    ))
                } else if conns.len() >= opts.max_conns {
                    report.counters.refused_busy += 1;
                    Some(format!(
                        "server busy: {} connections, the limit",
                        opts.max_conns
                    ))
                } else {
                    None
                };
                if let Some(why) = refuse {
                    let hdr = Header {
                        kind: Kind::Refused,
                        protocol: h.protocol,
                        conn_id: h.conn_id,
                    };
                    let answer = match &routed {
                        Some(r) => route::emit(&hdr, &r.reversed(), why.as_bytes()),
                        None => frame::emit(&hdr, why.as_bytes()),
                    };
                    sendq.push((answer, from));
                    continue;
                }
                let (sink, file): (Box<dyn AppSink>, _) = match &opts.mode {
                    ServerMode::Discard => (Box::new(CountingSink::default()), None),
                    ServerMode::Files(dir) => {
                        let (s, o) = FileSink::new(dir);
                        (Box::new(s), Some(o))
                    }
                };
                let mut conn = Connection::server(
                    h.conn_id,
                    h.protocol,
                    from,
                    &opts.tuning,
                    sink,
                    Instant::now(),
                );
                if let Some(r) = &routed {
                    // Answer as the address the client named, to the client.
                    let mut info = RouteInfo::new(r.dst, r.src);
                    info.saw(r);
                    conn = conn.with_route(info, &opts.tuning);
                }
                conn.start();
                conn.on_datagram(payload, d.len());
                let mut rep = Reporter::new(opts.format, opts.interval, Box::new(out.clone()));
                rep.start(json!({
                    "line": format!("Accepted {} connection {:016x} from {from}", h.protocol, h.conn_id),
                    "version": concat!("joulenet ", env!("CARGO_PKG_VERSION")),
                    "accepted_connection": {"address": from.to_string()},
                    "connection_id": format!("{:016x}", h.conn_id),
                    "test_start": {"protocol": h.protocol.name(), "num_streams": 1},
                }));
                conns.insert(
                    h.conn_id,
                    Entry {
                        conn,
                        done_since: None,
                        rep,
                        file,
                    },
                );
            }
            if n < sock::BATCH {
                break;
            }
        }
    }
}
