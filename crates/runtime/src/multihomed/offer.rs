//! `joulenet offer FILE --bind ADDR ...`: the senders an R²CP receiver
//! pulls from. Every pipe that reaches one of the bound sockets (a
//! receiver's path: its address and connection id) gets its own passive
//! RCP sender (`RcpSender::listen`, unchanged) reading the whole file as
//! the runtime's file stream, so every sender of a connection holds the
//! same bytes and the receiver may pull any range from any of them. A
//! pipe that comes back from the same address (a path that went down and
//! up) reaches the same sender, which takes its new SYN as a new
//! incarnation, as in the simulator.

use std::collections::HashMap;
use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use joulenet_proto::rcp::RcpSender;
use joulenet_proto::{Addr, Agent, Duration, Time};
use joulenet_registry::r2cp::R2cpSpec;
use joulenet_registry::ProtocolSpec;
use serde::Serialize;

use super::frame;
use super::{RECEIVER_PORT, SENDER_PORT};
use crate::app::FileSource;
use crate::conn::Tuning;
use crate::net::RuntimeNet;
use crate::sock::{self, RecvBatch};

#[derive(Clone, Debug)]
pub struct OfferOptions {
    pub file: PathBuf,
    pub binds: Vec<SocketAddr>,
    pub tuning: Tuning,
    /// Most pipes served at once; datagrams that would open more are
    /// dropped (counted).
    pub max_pipes: usize,
    /// A pipe whose receiver is silent this long is forgotten.
    pub idle_timeout: Duration,
    /// Stop after this long (`None`: until `stop`).
    pub duration: Option<Duration>,
    pub stop: Option<Arc<AtomicBool>>,
}

impl OfferOptions {
    pub fn new(file: PathBuf, binds: Vec<SocketAddr>) -> OfferOptions {
        OfferOptions {
            file,
            binds,
            tuning: Tuning::default(),
            max_pipes: 64,
            idle_timeout: Duration::from_secs(60),
            duration: None,
            stop: None,
        }
    }
}

/// One pipe served: who, and what it sent.
#[derive(Clone, Debug, Serialize)]
pub struct PipeReport {
    pub bind: String,
    pub peer: String,
    pub conn_id: u64,
    /// Stream bytes the sender took from the file (its buffer's reach).
    pub bytes_read: u64,
    pub data_bytes_sent: u64,
    pub retransmitted_bytes: u64,
    pub datagrams_sent: u64,
    pub datagrams_received: u64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct OfferReport {
    pub pipes: Vec<PipeReport>,
    /// Datagrams that were no pipe's (malformed, another protocol, or
    /// beyond `max_pipes`).
    pub strays: u64,
}

struct Pipe {
    sock: usize,
    peer: SocketAddr,
    conn_id: u64,
    code: u8,
    agent: RcpSender,
    net: RuntimeNet,
    datagrams_sent: u64,
    datagrams_received: u64,
    last_heard: Time,
}

impl Pipe {
    fn report(&self, binds: &[SocketAddr]) -> PipeReport {
        let st = self.agent.stats();
        PipeReport {
            bind: binds[self.sock].to_string(),
            peer: self.peer.to_string(),
            conn_id: self.conn_id,
            bytes_read: self.net.source.as_ref().map_or(0, |s| s.bytes_read()),
            data_bytes_sent: st.data_bytes,
            retransmitted_bytes: st.retransmitted_bytes,
            datagrams_sent: self.datagrams_sent,
            datagrams_received: self.datagrams_received,
        }
    }
}

/// The pipes' RCP settings on this host (the same as the receiver's).
fn sender_config(tuning: &Tuning) -> Result<joulenet_proto::rcp::RcpConfig, String> {
    let mut spec = ProtocolSpec::named("r2cp").ok_or("r2cp is not registered")?;
    spec.on_hosts(&tuning.settings()).map_err(String::from)?;
    let r2cp = spec
        .config_as::<R2cpSpec>()
        .ok_or("not an R²CP configuration")?;
    Ok(r2cp.cfg.rcp.clone())
}

/// Serves the file to every pipe that comes, until `duration` passes or
/// `stop` is set; returns what each pipe sent.
pub fn run_offer(o: &OfferOptions) -> Result<OfferReport, String> {
    if o.binds.is_empty() {
        return Err("give at least one --bind".into());
    }
    // Hashed once here: each pipe reopens the file with this header (a
    // hash per pipe would stall every pipe for a large file's read).
    let (_, header) = FileSource::open(&o.file)?;
    let cfg = sender_config(&o.tuning)?;
    let socks: Vec<UdpSocket> = o
        .binds
        .iter()
        .map(|a| sock::bind(*a).map_err(|e| format!("--bind {a}: {e}")))
        .collect::<Result<_, _>>()?;
    let start = Instant::now();
    let clock = || Time(start.elapsed().as_nanos() as u64);
    let mut pipes: HashMap<(usize, SocketAddr, u64), Pipe> = HashMap::new();
    let mut done: Vec<PipeReport> = Vec::new();
    let mut strays = 0u64;
    let mut batch = RecvBatch::default();
    let mut out = Vec::with_capacity(2048);
    loop {
        let now = clock();
        if o.stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed))
            || o.duration.is_some_and(|d| now.0 >= d.0)
        {
            break;
        }
        let deadline = pipes.values().filter_map(|p| p.agent.poll_timeout()).min();
        let wait = deadline
            .map_or(std::time::Duration::from_millis(100), |t| {
                std::time::Duration::from_nanos(t.0.saturating_sub(now.0))
            })
            .min(std::time::Duration::from_millis(100));
        let polled: Vec<(&UdpSocket, bool)> = socks.iter().map(|s| (s, false)).collect();
        let readable = sock::wait(&polled, Some(wait)).map_err(|e| format!("poll: {e}"))?;
        for (si, ready) in readable.into_iter().enumerate() {
            if !ready {
                continue;
            }
            loop {
                let n = batch.recv(&socks[si]).unwrap_or(0);
                for k in 0..n {
                    let (d, from) = batch.get(k);
                    let (Some(peer), Ok((id, packet))) = (from, frame::parse(d)) else {
                        strays += 1;
                        continue;
                    };
                    let key = (si, peer, id);
                    if !pipes.contains_key(&key) {
                        if pipes.len() >= o.max_pipes {
                            strays += 1;
                            continue;
                        }
                        let source = FileSource::reopen(&o.file, &header)?;
                        let mut net = RuntimeNet::new(Addr::new(1, SENDER_PORT), start);
                        net.source = Some(Box::new(source));
                        let mut agent = RcpSender::listen(cfg.clone());
                        net.begin_callback();
                        agent.start(&mut net);
                        pipes.insert(
                            key,
                            Pipe {
                                sock: si,
                                peer,
                                conn_id: id,
                                code: d[4],
                                agent,
                                net,
                                datagrams_sent: 0,
                                datagrams_received: 0,
                                last_heard: Time::ZERO,
                            },
                        );
                    }
                    let Some(p) = pipes.get_mut(&key) else {
                        continue;
                    };
                    p.datagrams_received += 1;
                    p.last_heard = p.net.begin_callback();
                    p.agent
                        .on_packet(&mut p.net, Addr::new(2, RECEIVER_PORT), packet);
                }
                for p in pipes.values_mut() {
                    send_queued(p, &socks[p.sock], &mut out);
                }
                if n == 0 {
                    break;
                }
            }
        }
        let now = clock();
        for p in pipes.values_mut() {
            if p.agent.poll_timeout().is_some_and(|t| t <= now) {
                p.net.begin_callback();
                p.agent.on_timeout(&mut p.net);
            }
            send_queued(p, &socks[p.sock], &mut out);
        }
        // Forget pipes that closed or whose receiver went quiet.
        let ended: Vec<_> = pipes
            .iter()
            .filter(|(_, p)| {
                p.agent.is_closed() || now.0.saturating_sub(p.last_heard.0) > o.idle_timeout.0
            })
            .map(|(k, _)| *k)
            .collect();
        for k in ended {
            if let Some(p) = pipes.remove(&k) {
                done.push(p.report(&o.binds));
            }
        }
    }
    done.extend(pipes.values().map(|p| p.report(&o.binds)));
    Ok(OfferReport {
        pipes: done,
        strays,
    })
}

/// Frames and sends the agent's queued packets to its receiver. A full
/// socket buffer drops (a full interface queue would).
fn send_queued(p: &mut Pipe, sock: &UdpSocket, out: &mut Vec<u8>) {
    for packet in std::mem::take(&mut p.net.outbox) {
        out.clear();
        frame::write_header(p.code, p.conn_id, out);
        out.extend_from_slice(&packet);
        if sock.send_to(out, p.peer).is_ok() {
            p.datagrams_sent += 1;
        }
        p.net.recycle(packet);
    }
}
