//! The RCP receiver's congestion window follows the TCP sender's rules
//! exactly: driven through the same loss pattern, both with the shared
//! NewReno controller, they pass through the same (cwnd, ssthresh) states
//! in the same order. So does the pipe of a one-path R²CP connection: the
//! pipes run the RCP receiver's window rules.

mod common;

use std::collections::HashSet;

use common::pair::{Fate, RECEIVER, SENDER};
use joulenet_proto::r2cp::{PathSpec, R2cpConfig, R2cpReceiver};
use joulenet_proto::rcp::{RcpConfig, RcpReceiver, RcpSender};
use joulenet_proto::tcp::{TcpAgent, TcpConfig, TcpVariant};
use joulenet_proto::{Addr, Time};
use joulenet_wire::{rcp, tcp};

type Pair = common::pair::Pair<Box<dyn joulenet_proto::Agent>>;

const BYTES: u64 = 600 * 1460;

/// (start of the payload in the stream, payload length) of a data packet.
type DataOf = fn(&[u8]) -> Option<(u32, usize)>;

fn tcp_data(pkt: &[u8]) -> Option<(u32, usize)> {
    let s = tcp::TcpRepr::parse(&tcp::TcpPacket::new_checked(pkt).ok()?).ok()?;
    (!s.payload.is_empty()).then_some((s.seq, s.payload.len()))
}

fn rcp_data(pkt: &[u8]) -> Option<(u32, usize)> {
    let (r, payload) = rcp::parse(pkt).ok()?;
    (!payload.is_empty()).then_some((r.seq, payload.len()))
}

/// Runs `p`, losing the first transmission of the data segments numbered in
/// `lost` (1-based), and returns the window owner's (cwnd, ssthresh)
/// states in order, each change once.
fn window_states(mut p: Pair, owner: usize, data: DataOf, lost: &'static [u64]) -> Vec<(u64, u64)> {
    p.link.rate_bps = 4_000_000;
    let mut seen = HashSet::new();
    let mut n = 0;
    p.raw_script = Box::new(move |dir, _, pkt| {
        if dir == SENDER {
            if let Some((seq, _)) = data(pkt) {
                if seen.insert(seq) {
                    n += 1;
                    if lost.contains(&n) {
                        return Fate::Drop;
                    }
                }
            }
        }
        Fate::Deliver
    });
    p.start();
    let mut states: Vec<(u64, u64)> = Vec::new();
    let limit = Time::from_secs(60);
    // Until both ends closed: TCP's last window change comes with the last
    // ACK, after the receiver has everything.
    while p.now < limit && !p.agents.iter().all(|a| a.is_closed()) {
        let a = &p.agents[owner];
        let state = (
            a.gauge("cwnd").unwrap() as u64,
            (a.gauge("ssthresh").unwrap() as u64).min(1 << 53),
        );
        if states.last() != Some(&state) {
            states.push(state);
        }
        if !p.step() {
            break;
        }
    }
    assert_eq!(p.hosts[RECEIVER].app.received, BYTES, "transfer completes");
    assert_eq!(p.agents[owner].stats().timeouts, 0, "no timeout");
    states
}

fn tcp_states(lost: &'static [u64]) -> Vec<(u64, u64)> {
    let cfg = TcpConfig {
        delayed_ack: None,
        ..TcpConfig::new(TcpVariant::Sack)
    };
    let p = Pair::with_agents(
        Box::new(TcpAgent::client(cfg.clone(), Addr::new(1, 5000))),
        Box::new(TcpAgent::server(cfg)),
        BYTES,
    );
    window_states(p, SENDER, tcp_data, lost)
}

fn rcp_states(lost: &'static [u64]) -> Vec<(u64, u64)> {
    let cfg = RcpConfig::default();
    let p = Pair::with_agents(
        Box::new(RcpSender::new(cfg.clone(), Addr::new(1, 5000))),
        Box::new(RcpReceiver::new(cfg)),
        BYTES,
    );
    window_states(p, RECEIVER, rcp_data, lost)
}

/// R²CP with one path: its one pipe runs the RCP receiver's window.
fn r2cp_states(lost: &'static [u64]) -> Vec<(u64, u64)> {
    let cfg = R2cpConfig {
        rcp: RcpConfig::default(),
        paths: vec![PathSpec::to(Addr::new(0, 5000))],
        ..R2cpConfig::default()
    };
    let p = Pair::with_agents(
        Box::new(RcpSender::listen(cfg.rcp.clone())),
        Box::new(R2cpReceiver::new(cfg)),
        BYTES,
    );
    // Before its pipe opens the connection has no window at all.
    let mut states = window_states(p, RECEIVER, rcp_data, lost);
    states.retain(|&s| s != (0, 0));
    states
}

fn assert_same(lost: &'static [u64]) {
    assert_states(lost, tcp_states(lost), rcp_states(lost));
    assert_states(lost, tcp_states(lost), r2cp_states(lost));
}

fn assert_states(lost: &'static [u64], t: Vec<(u64, u64)>, r: Vec<(u64, u64)>) {
    let first_difference = t.iter().zip(&r).position(|(a, b)| a != b);
    assert!(
        first_difference.is_none() && t.len() == r.len(),
        "loss pattern {lost:?}: states differ at step {first_difference:?} \
         (TCP {} states, receiver {})\nTCP {:?}\nreceiver {:?}",
        t.len(),
        r.len(),
        &t[first_difference.unwrap_or(0).saturating_sub(2)
            ..t.len().min(first_difference.unwrap_or(0) + 4)],
        &r[first_difference.unwrap_or(0).saturating_sub(2)
            ..r.len().min(first_difference.unwrap_or(0) + 4)],
    );
    assert!(
        t.iter().any(|&(_, ss)| ss < 1 << 53),
        "the pattern cut the window"
    );
}

#[test]
fn one_loss_in_slow_start() {
    assert_same(&[40]);
}

#[test]
fn two_losses_in_one_window_cut_once() {
    assert_same(&[40, 43]);
}

#[test]
fn losses_in_slow_start_and_in_congestion_avoidance() {
    assert_same(&[40, 200, 420]);
}
