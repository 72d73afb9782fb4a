//! STP (Henderson & Katz), the RCP paper's sender-side satellite baseline
//! (crates/proto/src/tcp/stp.rs): the receiver reports only when polled or
//! on a new gap, and the sender resends what a report names missing.

mod common;

use std::collections::HashSet;

use common::pair::{Fate, Pair, RECEIVER, SENDER};
use joulenet_proto::tcp::{TcpConfig, TcpVariant};
use joulenet_proto::{Agent, Time};

const LIMIT: Time = Time::from_secs(120);
const BYTES: u64 = 400_000;

/// A one-way transfer of `BYTES` over the pair's link at 2 Mbit/s.
fn pair(cfg: TcpConfig) -> Pair {
    let mut p = Pair::one_way(cfg, BYTES);
    p.link.rate_bps = 2_000_000;
    p
}

/// Loses the first transmissions of the data segments numbered in `lost`.
fn losing(mut p: Pair, lost: &'static [u64]) -> Pair {
    let mut seen = HashSet::new();
    let mut data = 0;
    p = p.script(move |i| {
        if i.dir == SENDER && i.payload_len > 0 && seen.insert(i.seq) {
            data += 1;
            if lost.contains(&data) {
                return Fate::Drop;
            }
        }
        Fate::Deliver
    });
    p
}

fn complete(p: &mut Pair) {
    p.start();
    assert!(p.run_until_closed(LIMIT));
    p.assert_delivered();
}

/// Pure reports (ACKs without data) the receiver sent.
fn reports(p: &Pair) -> usize {
    p.sent_by(RECEIVER)
        .filter(|i| i.ack_index.is_some())
        .count()
}

/// The reverse path carries a few reports per round trip, not an ACK per
/// segment or two: far fewer than TCP-SACK's ACKs for the same transfer.
#[test]
fn the_receiver_reports_only_when_polled() {
    let mut stp = pair(TcpConfig::stp());
    complete(&mut stp);
    let mut sack = pair(TcpConfig::new(TcpVariant::Sack));
    complete(&mut sack);
    let data = stp.sent_by(SENDER).filter(|i| i.payload_len > 0).count();
    let (r_stp, r_sack) = (reports(&stp), reports(&sack));
    assert!(
        r_stp * 3 < r_sack,
        "STP {r_stp} reports, SACK {r_sack} ACKs"
    );
    assert!(r_stp * 5 < data, "{r_stp} reports for {data} data segments");
    let polls = stp.agents[SENDER].gauge("stp_polls").unwrap();
    assert!(polls >= 1.0);
    // Every report answers a poll (no gaps here), bar the few that the
    // handshake and the close exchange.
    assert!(
        r_stp as f64 <= polls + 5.0,
        "{r_stp} reports, {polls} polls"
    );
}

/// A gap is reported at once (USTAT) and resent once, without waiting for
/// three duplicate ACKs or a timeout; the window is halved once.
#[test]
fn a_lost_segment_is_reported_and_resent_at_once() {
    let mut p = losing(pair(TcpConfig::stp()), &[60]);
    complete(&mut p);
    let s = p.agents[SENDER].stats();
    assert_eq!(s.timeouts, 0);
    assert_eq!(s.retransmitted_packets, 1);
    assert_eq!(s.fast_recoveries, 1);
}

/// Several holes in one window are each resent once, from the reports'
/// SACK blocks alone.
#[test]
fn several_holes_are_each_resent_once() {
    let mut p = losing(pair(TcpConfig::stp()), &[40, 44, 48, 52]);
    complete(&mut p);
    let s = p.agents[SENDER].stats();
    assert_eq!(s.timeouts, 0);
    assert_eq!(s.retransmitted_packets, 4);
}

/// A lost report is replaced by the answer to the next poll: the transfer
/// still completes without a timeout.
#[test]
fn lost_reports_are_recovered_by_the_next_poll() {
    let mut p = pair(TcpConfig::stp());
    let mut n = 0;
    p = p.script(move |i| {
        if i.dir == RECEIVER && i.ack_index.is_some() {
            n += 1;
            if n % 3 == 0 {
                return Fate::Drop;
            }
        }
        Fate::Deliver
    });
    complete(&mut p);
    assert_eq!(p.agents[SENDER].stats().timeouts, 0);
}

/// Sparse reports still grow the window as fast as per-segment ACKs: the
/// controller counts every byte a report covers (RFC 3465's per-ACK cap
/// would add two segments per report, a fraction of the window).
#[test]
fn sparse_reports_grow_the_window_by_bytes_acknowledged() {
    let mut p = pair(TcpConfig::stp());
    p.start();
    p.run_until(Time::from_millis(400));
    let cwnd = p.agents[SENDER].gauge("cwnd").unwrap();
    let reports = reports(&p) as f64;
    // Initial window 10 segments; two segments per report would give at
    // most 10 + 2·reports.
    assert!(
        cwnd > (10.0 + 2.0 * reports + 4.0) * 1460.0,
        "cwnd {cwnd} after {reports} reports"
    );
}

/// A lost retransmission is resent when a report a round trip later still
/// lists the gap, not after a retransmission timeout.
#[test]
fn a_lost_retransmission_is_resent_from_the_reports() {
    let mut p = pair(TcpConfig::stp());
    let mut seen = HashSet::new();
    let mut data = 0;
    let mut lost_seq = None;
    p = p.script(move |i| {
        if i.dir == SENDER && i.payload_len > 0 {
            if seen.insert(i.seq) {
                data += 1;
                if data == 60 {
                    lost_seq = Some(i.seq);
                    return Fate::Drop;
                }
            } else if Some(i.seq) == lost_seq {
                // The first retransmission is lost as well.
                lost_seq = None;
                return Fate::Drop;
            }
        }
        Fate::Deliver
    });
    complete(&mut p);
    let s = p.agents[SENDER].stats();
    assert_eq!(s.timeouts, 0);
    assert_eq!(s.retransmitted_packets, 2);
    assert_eq!(p.agents[SENDER].gauge("stp_resent_again"), Some(1.0));
}
