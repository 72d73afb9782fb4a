//! The server end (`serve`, `recv`): one UDP socket, many connections keyed
//! by their random 64-bit id, each with a bounded agent; a limit on how many
//! run at once, announced to refused clients with a `Refused` datagram.
//!
//! Strangers are counted and dropped, never answered with state: malformed
//! datagrams, `Data` for unknown ids, datagrams for a known id from another
//! address, kinds a server never honours (`Refused`, `Retry`, a `Close`
//! with a verdict), and `Hello`s replaying a recently finished connection.
//! A `Hello` without a valid address-validation token ([`crate::token`])
//! gets a `Retry` no larger than itself and no state; a connection, and a
//! `Refused`, only follow a `Hello` that carries one.
//!
//! The receiver's verdict on the stream (verified, mismatch, rename failed,
//! ..., or `delivered` for `serve`) goes back in its `Close` as soon as it is
//! known, again when the connection retires, and once more to each of a
//! few late datagrams of a finished connection from its peer.

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
use crate::frame::{self, CloseRepr, Header, Kind, OfferRepr, Protocol, Verdict};
use crate::report::{Format, Reporter, Summary};
use crate::route::{self, RouteInfo};
use crate::seal::{self, ConnSeal, Psk, SealError};
use crate::sock::{self, RecvBatch};
use crate::token::{self, TokenKey};
use crate::wake::WakeLateness;

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
    /// Authenticated mode (`--psk-file`): only sealed datagrams that open
    /// under this key are acted on ([`crate::seal`]).
    pub psk: Option<Psk>,
    /// Kept prefixes of interrupted transfers older than this are removed
    /// at start ([`crate::resume::HORIZON`] by default).
    pub resume_horizon: std::time::Duration,
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
            radio_rate_bps: 11_000_000,
            idle_timeout: Duration::from_secs(60),
            stop: None,
            node: None,
            psk: None,
            resume_horizon: crate::resume::HORIZON,
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
    /// `Hello`s without a valid token, answered with a `Retry` and no state.
    pub retries_sent: u64,
    /// Bytes of those `Hello`s, and of the answers to them: the second is
    /// at most [`AMPLIFICATION`] times the first (RFC 9000 §8.1).
    pub unvalidated_bytes_received: u64,
    pub unvalidated_bytes_sent: u64,
    /// `Refused`, `Retry` or a `Close` with a verdict sent to a server,
    /// which never honours them.
    pub out_of_state: u64,
    /// Verdicts sent again to late datagrams of finished connections.
    pub verdicts_resent: u64,
    /// Partial files of dead receivers removed at start.
    pub stale_partials_removed: u64,
    /// Kept prefixes older than the resume horizon removed at start.
    pub expired_resumes_removed: u64,
    /// Answers to validated `Query`s (what is kept to resume from).
    pub offers_sent: u64,
    /// Routed datagrams addressed to another node.
    pub misrouted: u64,
    /// Authenticated mode: datagrams that did not open (forged, altered,
    /// another key, or plain framing other than an opening), and sealed
    /// ones whose packet number was seen already.
    pub auth_failed: u64,
    pub replayed: u64,
    /// Openings in the other mode (sealed to a server without a key, plain
    /// to one with a key), answered with a plain `Refused` saying so.
    pub mode_mismatch: u64,
}

/// Most bytes sent toward an address not yet validated, per byte received
/// from it (QUIC's limit, RFC 9000 §8.1).
pub const AMPLIFICATION: usize = 3;

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

/// How many late datagrams of a finished connection get its verdict again.
const VERDICT_RESENDS: u8 = 4;

/// A finished connection: its peer and the `Close` with its verdict, for
/// a sender whose copies of it were lost.
struct Finished {
    peer: SocketAddr,
    close: Vec<u8>,
    resends_left: u8,
    /// Authenticated mode: the connection's keys, to open its late datagrams.
    seal: Option<ConnSeal>,
}

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
    /// When the verdict last went out: as soon as it is known, then every
    /// `VERDICT_ASK` until the connection retires (the sender's asks do
    /// not cross relays that run agents: they absorb its empty `Close`).
    verdict_sent: Option<Time>,
}

impl Entry {
    /// The verdict is known: the stream ended, or the file was rejected
    /// before it did.
    fn verdict_known(&self) -> bool {
        self.conn.finished_at.is_some()
            || self
                .file
                .as_ref()
                .is_some_and(|f| matches!(*f.lock().unwrap(), FileOutcome::Failed { .. }))
    }

    /// The receiver's verdict on the stream; `unfinished` says why when the
    /// stream did not end.
    fn verdict(&self, unfinished: &str) -> CloseRepr {
        let stream_bytes = self.conn.app_bytes_delivered();
        let (verdict, sha256, reason) = match &self.file {
            Some(f) => match &*f.lock().unwrap() {
                FileOutcome::InProgress => (Verdict::Incomplete, [0; 32], unfinished.to_string()),
                o => (
                    o.verdict(),
                    o.digest().unwrap_or([0; 32]),
                    o.reason().to_string(),
                ),
            },
            None if self.conn.finished_at.is_some() => (Verdict::Delivered, [0; 32], String::new()),
            None => (Verdict::Incomplete, [0; 32], unfinished.to_string()),
        };
        CloseRepr {
            verdict,
            stream_bytes,
            sha256,
            reason,
        }
    }
}

/// The plain `Refused` reasons of authenticated mode (short: they go to
/// addresses not validated, within [`AMPLIFICATION`] times the opening).
pub const NO_KEY: &str = "authenticated mode needs --psk-file at both ends; this receiver has none";
pub const NEEDS_KEY: &str =
    "this receiver is in authenticated mode: run with --psk-file and its key";
pub const BAD_KEY: &str = "authentication failed: another --psk-file key, or altered bytes";

/// Answers an opening (`Hello`, `Query`) of the other mode, or one that did
/// not authenticate, with a plain `Refused` saying why, if it is no larger
/// than [`AMPLIFICATION`] times the opening: a client in plain mode honours
/// it, one in authenticated mode takes it as a hint only
/// ([`crate::client::MISMATCH_WAIT`]).
fn refuse_plainly(
    c: &mut ServerCounters,
    sendq: &mut Vec<(Vec<u8>, SocketAddr)>,
    d: &[u8],
    h: &Header,
    routed: Option<route::RouteRepr>,
    to: SocketAddr,
    why: &str,
) {
    if !matches!(h.kind, Kind::Hello | Kind::Query) {
        return;
    }
    let hdr = Header {
        kind: Kind::Refused,
        ..*h
    };
    let answer = match routed {
        Some(r) => route::emit(&hdr, &r.reversed(), why.as_bytes()),
        None => frame::emit(&hdr, why.as_bytes()),
    };
    c.unvalidated_bytes_received += d.len() as u64;
    if answer.len() <= AMPLIFICATION * d.len() {
        c.unvalidated_bytes_sent += answer.len() as u64;
        sendq.push((answer, to));
    }
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
    let mut report = ServerReport::default();
    if let ServerMode::Files(dir) = &opts.mode {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        report.counters.stale_partials_removed = crate::partial::remove_stale(dir)
            .map_err(|e| format!("{}: {e}", dir.display()))?
            as u64;
        report.counters.expired_resumes_removed =
            crate::resume::remove_expired(dir, opts.resume_horizon)
                .map_err(|e| format!("{}: {e}", dir.display()))? as u64;
    }
    let key = TokenKey::random()?;
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
    let mut finished_conns: HashMap<u64, Finished> = HashMap::new();
    let mut sendq: Vec<(Vec<u8>, SocketAddr)> = Vec::new();
    // What each neighbour sent us, to answer its link marks (a server
    // sends none of its own: its links are measured by the relay before it).
    let mut links = crate::link_loss::Links::default();
    let mut pool: Vec<Vec<u8>> = Vec::new();
    let mut batch = RecvBatch::default();
    let mut scratch: Vec<u8> = Vec::new();
    let epoch = Instant::now();
    let mut wake = WakeLateness::default();
    // A one-off server whose connection is over stays while its sender may
    // still be asking for the verdict (both copies of it can be lost): until
    // LINGER has passed without a datagram of that connection.
    let mut one_off_linger: Option<Time> = None;
    loop {
        if let Some(until) = one_off_linger {
            if conns.is_empty() && Time(epoch.elapsed().as_nanos() as u64) >= until {
                if opts.format == Format::Human {
                    let _ = writeln!(out.clone(), "dropped datagrams: {}", json!(report.counters));
                }
                return Ok(report);
            }
        }
        let stopping = opts
            .stop
            .as_ref()
            .is_some_and(|s| s.load(Ordering::Relaxed));
        // Timers, app, reports; then retire finished connections.
        let mut finished = Vec::new();
        for (id, e) in conns.iter_mut() {
            let now = e.conn.now();
            e.conn.poll(now);
            e.conn.drain(&mut sendq, &mut pool);
            e.rep.tick(now, &e.conn);
            let repeat = e
                .verdict_sent
                .is_none_or(|t| now.saturating_since(t) >= crate::client::VERDICT_ASK);
            if repeat && !e.conn.peer_closed && e.verdict_known() {
                // At once: the sender waits for it to exit. Again while the
                // connection lingers: over lossy hops any copy may be lost,
                // and a sender's ask (its empty `Close`) is absorbed by the
                // first relay that runs an agent (`relay.rs`).
                let v = e.verdict("");
                sendq.push(e.conn.close_datagram(Some(&v)));
                e.verdict_sent = Some(now);
            }
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
            // backed-off RTO) keeps the connection answerable.
            if e.conn.is_done() {
                e.done_since.get_or_insert(now);
            }
            let lingered = e
                .done_since
                .is_some_and(|t| now.saturating_since(t.max(e.conn.last_heard)) > LINGER);
            let done = e.conn.peer_closed || e.conn.aborted || lingered;
            let silent = now.saturating_since(e.conn.last_heard) > opts.idle_timeout;
            if done || silent || stopping {
                let why = if e.conn.finished_at.is_some() {
                    String::new()
                } else if e.conn.peer_closed {
                    "the sender closed the connection before the end of the stream".into()
                } else if e.conn.aborted {
                    "the receiver's transport gave up (too many timeouts)".into()
                } else if silent {
                    e.conn.aborted = true;
                    format!(
                        "nothing heard from the sender for {:.1} s (the receiver's idle timeout)",
                        opts.idle_timeout.as_secs_f64()
                    )
                } else if stopping {
                    e.conn.aborted = true;
                    "the receiver was stopped".into()
                } else {
                    "the receiver's transport closed before the end of the stream".into()
                };
                finished.push((*id, why));
            }
        }
        flush(&socket, None, &mut sendq, &mut pool)?;
        for (id, why) in finished {
            let Some(mut e) = conns.remove(&id) else {
                continue;
            };
            // Every sender hears how its transfer ended, even one that
            // gave up or whose `Close` was forged: twice (either may be
            // lost) unless the sender said it is gone.
            let verdict = e.verdict(&why);
            let close = e.conn.close_datagram(Some(&verdict));
            if !e.conn.peer_closed {
                sendq.push(close.clone());
            }
            sendq.push(close.clone());
            // Now: a one-off server returns right after this connection.
            flush(&socket, None, &mut sendq, &mut pool)?;
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
            summary.wake_late = Some(wake.clone());
            if !verdict.verdict.is_success() {
                summary.error = Some(format!("{}: {}", verdict.verdict, verdict.reason));
            }
            // Dropping the connection drops its sink: an unfinished file is removed.
            let file = e.file.take();
            let peer = e.conn.peer;
            let seal = e.conn.seal.take();
            drop(e.conn);
            if let Some(f) = file {
                let outcome = f.lock().unwrap().clone();
                summary.file = Some(match &outcome {
                    FileOutcome::Complete { path, size, sha256 } => {
                        json!({"status": "verified", "path": path, "size": size, "sha256": sha256})
                    }
                    FileOutcome::Failed { verdict, reason } => {
                        json!({"status": verdict.name(), "reason": reason})
                    }
                    FileOutcome::InProgress => {
                        json!({"status": Verdict::Incomplete.name(), "reason": why})
                    }
                });
                report.files.push(outcome);
            }
            e.rep.end(&summary);
            report.summaries.push(summary);
            recent.push_back(id);
            finished_conns.insert(
                id,
                Finished {
                    peer,
                    close: close.0,
                    resends_left: VERDICT_RESENDS,
                    seal,
                },
            );
            if recent.len() > RECENT_IDS {
                if let Some(old) = recent.pop_front() {
                    finished_conns.remove(&old);
                }
            }
            if opts.one_off {
                one_off_linger = Some(Time(epoch.elapsed().as_nanos() as u64) + LINGER);
            }
        }
        if stopping {
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
                    e.verdict_sent.map(|t| t + crate::client::VERDICT_ASK),
                    Some(Time(
                        e.conn.last_heard.0.saturating_add(opts.idle_timeout.0) + 1,
                    )),
                ]
                .into_iter()
                .flatten()
                .map(to_global)
            })
            .min();
        let deadline = [deadline, one_off_linger].into_iter().flatten().min();
        let now_global = Time(epoch.elapsed().as_nanos() as u64);
        let mut timeout =
            deadline.map(|d| std::time::Duration::from_nanos(d.0.saturating_sub(now_global.0)));
        if opts.stop.is_some() {
            timeout = Some(timeout.map_or(STOP_POLL, |t| t.min(STOP_POLL)));
        }
        if !timeout.is_some_and(|t| t.is_zero()) {
            sock::wait(&[(&socket, !sendq.is_empty())], timeout).map_err(|e| e.to_string())?;
        }
        wake.record(deadline, Time(epoch.elapsed().as_nanos() as u64));
        for _ in 0..16 {
            let n = batch.recv(&socket).map_err(|e| format!("receive: {e}"))?;
            for i in 0..n {
                let (d, from) = batch.get(i);
                let Some(from) = from else {
                    report.counters.malformed += 1;
                    continue;
                };
                // A neighbour's mark on its link to us is answered with
                // what we heard from it (`crate::link_loss`); not in
                // authenticated mode, whose answers are all sealed (link
                // frames are not: anyone could forge or replay them).
                if opts.psk.is_none() && links.on_datagram(d, from, &mut sendq) {
                    continue;
                }
                // Authenticated mode opens a datagram before anything reads
                // it; a sealed opening's nonce, token and packet number
                // make its connection's keys.
                let mut opening: Option<(
                    [u8; seal::NONCE_LEN],
                    Option<[u8; frame::TOKEN_LEN]>,
                    u64,
                )> = None;
                let dg = match &opts.psk {
                    None => match route::parse(d) {
                        Ok(dg) => dg,
                        Err(_) => {
                            let c = &mut report.counters;
                            match seal::parse(d) {
                                Ok(s) if matches!(s.header.kind, Kind::Hello | Kind::Query) => {
                                    c.mode_mismatch += 1;
                                    refuse_plainly(
                                        c, &mut sendq, d, &s.header, s.route, from, NO_KEY,
                                    );
                                }
                                Ok(_) => c.malformed += 1,
                                Err(_) => c.malformed += 1,
                            }
                            continue;
                        }
                    },
                    Some(psk) => {
                        let c = &mut report.counters;
                        let s = match seal::parse(d) {
                            Ok(s) => s,
                            Err(SealError::NotSealed) => {
                                match route::parse(d) {
                                    Ok(dg)
                                        if matches!(dg.header.kind, Kind::Hello | Kind::Query) =>
                                    {
                                        c.mode_mismatch += 1;
                                        refuse_plainly(
                                            c, &mut sendq, d, &dg.header, dg.route, from, NEEDS_KEY,
                                        );
                                    }
                                    // Not sealed, so not authentic.
                                    Ok(_) => c.auth_failed += 1,
                                    Err(_) => c.malformed += 1,
                                }
                                continue;
                            }
                            Err(_) => {
                                c.malformed += 1;
                                continue;
                            }
                        };
                        let id = s.header.conn_id;
                        let opened = if let Some(cs) =
                            conns.get_mut(&id).and_then(|e| e.conn.seal.as_mut())
                        {
                            cs.open(&s, &mut scratch)
                        } else if let Some(cs) =
                            finished_conns.get_mut(&id).and_then(|f| f.seal.as_mut())
                        {
                            cs.open(&s, &mut scratch)
                        } else if matches!(s.header.kind, Kind::Hello | Kind::Query) {
                            seal::open_opening(psk, &s, &mut scratch)
                        } else {
                            c.unknown_connection += 1;
                            continue;
                        };
                        match opened {
                            Ok(()) => {}
                            Err(SealError::Replayed) => {
                                c.replayed += 1;
                                continue;
                            }
                            Err(_) => {
                                c.auth_failed += 1;
                                let new =
                                    !conns.contains_key(&id) && !finished_conns.contains_key(&id);
                                if new {
                                    // Someone with another key (or none) is
                                    // trying to connect: say so, plainly.
                                    refuse_plainly(
                                        c, &mut sendq, d, &s.header, s.route, from, BAD_KEY,
                                    );
                                }
                                continue;
                            }
                        }
                        if let Some(n) = s.nonce {
                            opening = Some((n, s.token, s.pn));
                        }
                        route::Datagram {
                            header: s.header,
                            route: s.route,
                            payload: &scratch[..],
                        }
                    }
                };
                let (h, payload, routed) = (dg.header, dg.payload, dg.route);
                if routed.is_some_and(|r| opts.node.is_some_and(|n| n != r.dst.node)) {
                    report.counters.misrouted += 1;
                    continue;
                }
                // Every answer without a connection (`Retry`, `Offer`,
                // `Refused`) goes back framed as the datagram came: routed,
                // with source and destination swapped, when it was routed;
                // to the UDP address it came from (the last relay) either way.
                // In authenticated mode they are sealed under the opening's
                // keys.
                let answer = |hdr: &Header, payload: &[u8]| match (&opts.psk, &opening) {
                    (Some(psk), Some((nonce, _, _))) => seal::seal_answer(
                        psk,
                        hdr,
                        routed.map(|r| r.reversed()).as_ref(),
                        nonce,
                        payload,
                    ),
                    _ => match &routed {
                        Some(r) => route::emit(hdr, &r.reversed(), payload),
                        None => frame::emit(hdr, payload),
                    },
                };
                let c = &mut report.counters;
                if let Some(e) = conns.get_mut(&h.conn_id) {
                    // Same peer, protocol and (through relays) flow.
                    let same_route = match (&e.conn.route, &routed) {
                        (Some(info), Some(r)) => info.accepts(r),
                        (None, None) => true,
                        _ => false,
                    };
                    if from != e.conn.peer || h.protocol != e.conn.protocol || !same_route {
                        c.wrong_source += 1;
                        continue;
                    }
                    if let (Some(info), Some(r)) = (&mut e.conn.route, &routed) {
                        info.saw(r);
                    }
                    match h.kind {
                        Kind::Hello => match frame::parse_hello(payload) {
                            Ok((_, packet)) => e.conn.on_datagram(packet, d.len()),
                            Err(_) => c.malformed += 1,
                        },
                        Kind::Data => e.conn.on_datagram(payload, d.len()),
                        // A client's `Close` is empty; a verdict is the
                        // server's to give.
                        Kind::Close => match frame::CloseRepr::parse(payload) {
                            Ok(None) => e.conn.on_close(),
                            Ok(Some(_)) => c.out_of_state += 1,
                            Err(_) => c.malformed += 1,
                        },
                        Kind::Refused | Kind::Retry | Kind::Query | Kind::Offer => {
                            c.out_of_state += 1
                        }
                    }
                    continue;
                }
                if let Some(f) = finished_conns.get_mut(&h.conn_id) {
                    // A late datagram of a finished connection: its sender
                    // may have lost our verdict. Answered a few times, and
                    // only toward the address the connection validated.
                    if from == f.peer && f.resends_left > 0 {
                        f.resends_left -= 1;
                        c.verdicts_resent += 1;
                        sendq.push((f.close.clone(), from));
                        if let Some(until) = one_off_linger.as_mut() {
                            *until = Time(epoch.elapsed().as_nanos() as u64) + LINGER;
                        }
                    } else if h.kind == Kind::Hello {
                        c.replayed_hello += 1;
                    } else {
                        c.unknown_connection += 1;
                    }
                    continue;
                }
                if !matches!(h.kind, Kind::Hello | Kind::Query) {
                    c.unknown_connection += 1;
                    continue;
                }
                if recent.contains(&h.conn_id) {
                    c.replayed_hello += 1;
                    continue;
                }
                // A `Query` (what do you hold of this file?) is validated as
                // a `Hello` is, and answered without state.
                let (token, packet, query) = if h.kind == Kind::Query {
                    match frame::QueryRepr::parse(payload) {
                        Ok(q) => (q.token, &[][..], Some(q)),
                        Err(_) => {
                            c.malformed += 1;
                            continue;
                        }
                    }
                } else {
                    match frame::parse_hello(payload) {
                        Ok((t, p)) => (t, p, None),
                        Err(_) => {
                            c.malformed += 1;
                            continue;
                        }
                    }
                };
                let now_s = token::unix_secs();
                let valid =
                    token.is_some_and(|t| key.check(&t, from, h.conn_id, h.protocol.code(), now_s));
                if !valid {
                    // Stateless: a token for the address the datagram
                    // claims to come from, no larger than the datagram.
                    c.unvalidated_bytes_received += d.len() as u64;
                    let t = key.issue(from, h.conn_id, h.protocol.code(), now_s);
                    let retry = answer(
                        &Header {
                            kind: Kind::Retry,
                            ..h
                        },
                        &t,
                    );
                    if retry.len() <= AMPLIFICATION * d.len() {
                        c.retries_sent += 1;
                        c.unvalidated_bytes_sent += retry.len() as u64;
                        sendq.push((retry, from));
                    }
                    continue;
                }
                if let Some(q) = query {
                    let offer = match &opts.mode {
                        ServerMode::Files(dir) => {
                            crate::resume::lookup(dir, &q.name, q.size, &q.sha256)
                        }
                        ServerMode::Discard => None,
                    }
                    .unwrap_or(OfferRepr {
                        prefix_len: 0,
                        prefix_sha256: [0; 32],
                    });
                    let hdr = Header {
                        kind: Kind::Offer,
                        ..h
                    };
                    c.offers_sent += 1;
                    sendq.push((answer(&hdr, &offer.emit()), from));
                    continue;
                }
                let refuse = if opts.protocol.is_some_and(|p| p != h.protocol) {
                    c.refused_protocol += 1;
                    Some(format!(
                        "this server speaks {} only, not {}",
                        opts.protocol.unwrap(),
                        h.protocol
                    ))
                } else if conns.len() >= opts.max_conns {
                    c.refused_busy += 1;
                    Some(format!(
                        "server busy: {} connections, the limit",
                        opts.max_conns
                    ))
                } else if one_off_linger.is_some() {
                    // A one-off server has served its connection; it only
                    // stays to repeat that connection's verdict.
                    c.refused_busy += 1;
                    Some("this one-off server has served its connection".to_string())
                } else {
                    None
                };
                if let Some(why) = refuse {
                    let hdr = Header {
                        kind: Kind::Refused,
                        protocol: h.protocol,
                        conn_id: h.conn_id,
                    };
                    sendq.push((answer(&hdr, frame::truncated(&why).as_bytes()), from));
                    continue;
                }
                let (sink, file): (Box<dyn AppSink>, _) = match &opts.mode {
                    ServerMode::Discard => (Box::new(CountingSink::default()), None),
                    ServerMode::Files(dir) => {
                        let (s, o) = FileSink::new(dir, h.conn_id);
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
                if let (Some(psk), Some((nonce, Some(t), pn))) = (&opts.psk, &opening) {
                    // The keys of the token this process just validated.
                    conn = conn.with_seal(ConnSeal::server(psk, h.conn_id, *nonce, t, *pn));
                }
                conn.start();
                conn.on_datagram(packet, d.len());
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
                        verdict_sent: None,
                    },
                );
            }
            if n < sock::BATCH {
                break;
            }
        }
    }
}
