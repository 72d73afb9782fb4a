//! TCP-ELN: the receiver marks ACKs of holes its link layer saw lost on the
//! wireless hop, and the NewReno sender resends those holes without a
//! window cut (crates/proto/src/tcp/eln.rs).

mod common;

use std::cell::RefCell;
use std::collections::HashSet;
use std::rc::Rc;

use common::pair::{Fate, RECEIVER, SENDER};
use joulenet_proto::tcp::{TcpAgent, TcpConfig, TcpVariant};
use joulenet_proto::{Addr, Time};
use joulenet_wire::tcp::{TcpPacket, TcpRepr};

type Pair = common::pair::Pair<Box<dyn joulenet_proto::Agent>>;

const LIMIT: Time = Time::from_secs(120);

fn config(eln: bool) -> TcpConfig {
    TcpConfig {
        eln,
        delayed_ack: None,
        ..TcpConfig::new(TcpVariant::NewReno)
    }
}

fn pair(cfg: TcpConfig, bytes: u64) -> Pair {
    let mut p = Pair::with_agents(
        Box::new(TcpAgent::client(cfg.clone(), Addr::new(1, 5000))),
        Box::new(TcpAgent::server(cfg)),
        bytes,
    );
    p.link.rate_bps = 2_000_000;
    p
}

/// (seq, payload length, ack, eln) of a segment.
fn seg(pkt: &[u8]) -> (u32, usize, Option<u32>, bool) {
    let s = TcpRepr::parse(&TcpPacket::new_checked(pkt).unwrap()).unwrap();
    (s.seq, s.payload.len(), s.ack, s.options.eln)
}

/// Loses the first transmissions of the `n`-th data segments in `lost`
/// with `fate`; records the sequence numbers lost and the ELN ACKs seen.
struct Pattern {
    lost_seqs: Vec<u32>,
    eln_acks: Vec<u32>,
}

fn drive(p: &mut Pair, lost: &'static [u64], fate: Fate) -> Rc<RefCell<Pattern>> {
    let rec = Rc::new(RefCell::new(Pattern {
        lost_seqs: Vec::new(),
        eln_acks: Vec::new(),
    }));
    let r = rec.clone();
    let mut seen = HashSet::new();
    let mut data = 0;
    p.raw_script = Box::new(move |dir, _, pkt| {
        let (seq, len, ack, eln) = seg(pkt);
        if dir == RECEIVER && eln {
            r.borrow_mut().eln_acks.push(ack.unwrap());
        }
        if dir == SENDER && len > 0 && seen.insert(seq) {
            data += 1;
            if lost.contains(&data) {
                r.borrow_mut().lost_seqs.push(seq);
                return fate;
            }
        }
        Fate::Deliver
    });
    rec
}

const SEVEN: &[u64] = &[40, 44, 48, 52, 65, 68, 71];

/// Runs a transfer to the end; everything delivered once, in order.
fn complete(p: &mut Pair) {
    p.start();
    assert!(p.run_until_closed(LIMIT));
    p.assert_delivered();
}

/// A transfer losing the `lost` data segments with `fate`.
fn transfer(eln: bool, lost: &'static [u64], fate: Fate) -> (Pair, Rc<RefCell<Pattern>>) {
    let mut p = pair(config(eln), 400_000);
    let rec = drive(&mut p, lost, fate);
    complete(&mut p);
    (p, rec)
}

fn gauge(p: &Pair, who: usize, name: &str) -> f64 {
    p.agents[who].gauge(name).expect("gauge")
}

#[test]
fn seven_wireless_losses_are_resent_without_a_window_cut() {
    let (p, rec) = transfer(true, SEVEN, Fate::DropNotified);
    let s = p.agents[SENDER].stats();
    assert_eq!(s.timeouts, 0);
    assert_eq!(s.fast_recoveries, 0, "no congestion response");
    assert_eq!(s.retransmitted_packets, 7, "each hole resent once");
    assert_eq!(
        gauge(&p, SENDER, "ssthresh"),
        u64::MAX as f64,
        "ssthresh kept"
    );
    assert!(gauge(&p, SENDER, "eln_recoveries") >= 1.0);
    assert_eq!(gauge(&p, RECEIVER, "eln_reports"), 7.0);
    // Every ELN ACK names one of the holes, and every hole gets named.
    let rec = rec.borrow();
    assert!(rec.eln_acks.iter().all(|a| rec.lost_seqs.contains(a)));
    for s in &rec.lost_seqs {
        assert!(rec.eln_acks.contains(s), "hole {s} never named");
    }
}

#[test]
fn without_eln_the_same_losses_cut_the_window() {
    let (p, rec) = transfer(false, SEVEN, Fate::DropNotified);
    assert!(p.agents[SENDER].stats().fast_recoveries >= 1);
    assert!(gauge(&p, SENDER, "ssthresh") < u64::MAX as f64);
    assert!(rec.borrow().eln_acks.is_empty(), "no ELN unless configured");
}

#[test]
fn congestion_losses_carry_no_eln_and_cut_as_newreno() {
    let (p, rec) = transfer(true, &[40], Fate::Drop);
    assert!(rec.borrow().eln_acks.is_empty());
    assert_eq!(p.agents[SENDER].stats().fast_recoveries, 1);
    assert_eq!(gauge(&p, SENDER, "eln_recoveries"), 0.0);
}

#[test]
fn a_congestion_loss_behind_a_wireless_one_cuts_once() {
    let mut p = pair(config(true), 400_000);
    let mut seen = HashSet::new();
    let mut data = 0;
    p.raw_script = Box::new(move |dir, _, pkt| {
        let (seq, len, ..) = seg(pkt);
        if dir == SENDER && len > 0 && seen.insert(seq) {
            data += 1;
            match data {
                40 => return Fate::DropNotified,
                44 => return Fate::Drop,
                _ => {}
            }
        }
        Fate::Deliver
    });
    complete(&mut p);
    let s = p.agents[SENDER].stats();
    assert_eq!(s.timeouts, 0);
    assert_eq!(s.fast_recoveries, 1, "the congestion loss is answered once");
    assert_eq!(s.retransmitted_packets, 2);
    assert!(gauge(&p, SENDER, "ssthresh") < u64::MAX as f64);
}

#[test]
fn a_wireless_loss_of_the_retransmission_is_resent_without_a_timeout() {
    let mut p = pair(config(true), 400_000);
    let mut copies = 0;
    let mut target = None;
    let mut data = 0;
    let mut seen = HashSet::new();
    p.raw_script = Box::new(move |dir, _, pkt| {
        let (seq, len, ..) = seg(pkt);
        if dir == SENDER && len > 0 {
            if seen.insert(seq) {
                data += 1;
            }
            if data == 40 && target.is_none() {
                target = Some(seq);
            }
            if target == Some(seq) {
                copies += 1;
                if copies <= 2 {
                    return Fate::DropNotified; // the original and its first resend
                }
            }
        }
        Fate::Deliver
    });
    complete(&mut p);
    let s = p.agents[SENDER].stats();
    assert_eq!(s.timeouts, 0);
    assert_eq!(s.fast_recoveries, 0);
    assert_eq!(s.retransmitted_packets, 2);
}
