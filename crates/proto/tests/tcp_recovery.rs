//! Loss recovery per variant: what the window does and whether a timeout
//! is needed.

mod common;

use common::pair::{Fate, PacketInfo, Pair, CLIENT};
use joulenet_proto::tcp::{TcpConfig, TcpVariant};
use joulenet_proto::{Agent, Duration, Time};

const MSS: u64 = 1460;
const LIMIT: Time = Time::from_secs(60);

fn dropping(v: TcpVariant, bytes: u64, drops: &'static [u64]) -> Pair {
    dropping_cfg(TcpConfig::new(v), bytes, drops)
}

fn dropping_cfg(cfg: TcpConfig, bytes: u64, drops: &'static [u64]) -> Pair {
    let mut p =
        Pair::one_way(cfg, bytes).script(move |pk: &PacketInfo| match (pk.dir, pk.data_index) {
            (CLIENT, Some(k)) if drops.contains(&k) => Fate::Drop,
            _ => Fate::Deliver,
        });
    p.start();
    p
}

#[test]
fn tahoe_falls_to_one_segment_after_three_dupacks() {
    let mut p = dropping(TcpVariant::Tahoe, 200_000, &[30]);
    assert!(p.run_while(LIMIT, |p| p.agents[CLIENT].stats().fast_recoveries == 0));
    let a = &p.agents[CLIENT];
    assert_eq!(a.cwnd(), MSS);
    assert!(a.ssthresh() >= 2 * MSS && a.ssthresh() < u64::MAX);
    assert!(!a.in_recovery(), "Tahoe has no fast recovery");
    assert!(p.run_until_closed(LIMIT));
    p.assert_complete();
    assert_eq!(p.agents[CLIENT].stats().timeouts, 0);
}

#[test]
fn reno_halves_inflates_and_deflates() {
    let mut p = dropping(TcpVariant::Reno, 200_000, &[30]);
    let mut flight = 0;
    assert!(p.run_while(LIMIT, |p| {
        flight = p.agents[CLIENT].flight();
        p.agents[CLIENT].stats().fast_recoveries == 0
    }));
    let a = &p.agents[CLIENT];
    let ssthresh = a.ssthresh();
    assert_eq!(ssthresh, flight / 2);
    assert_eq!(a.cwnd(), ssthresh + 3 * MSS);
    assert!(p.run_while(LIMIT, |p| p.agents[CLIENT].cwnd() == ssthresh + 3 * MSS));
    assert_eq!(
        p.agents[CLIENT].cwnd(),
        ssthresh + 4 * MSS,
        "one MSS per further dupack"
    );
    assert!(p.run_while(LIMIT, |p| p.agents[CLIENT].in_recovery()));
    assert_eq!(p.agents[CLIENT].cwnd(), ssthresh, "deflated on the new ACK");
    assert!(p.run_until_closed(LIMIT));
    p.assert_complete();
    assert_eq!(p.agents[CLIENT].stats().timeouts, 0);
}

/// Three segments lost from one window, no SACK.
const THREE_IN_ONE_WINDOW: &[u64] = &[30, 32, 34];

#[test]
fn newreno_partial_acks_repair_several_holes_without_timeout() {
    let mut p = dropping(TcpVariant::NewReno, 200_000, THREE_IN_ONE_WINDOW);
    assert!(p.run_until_closed(LIMIT));
    p.assert_complete();
    let s = p.agents[CLIENT].stats();
    assert_eq!((s.timeouts, s.fast_recoveries), (0, 1));
    assert_eq!(s.retransmitted_packets, 3);

    let mut reno = dropping(TcpVariant::Reno, 200_000, THREE_IN_ONE_WINDOW);
    assert!(reno.run_until_closed(LIMIT));
    reno.assert_complete();
    let r = reno.agents[CLIENT].stats();
    assert!(
        r.timeouts >= 1,
        "Reno needs a timeout for the later holes: {r:?}"
    );
    assert!(reno.now > p.now);
}

/// How long fast recovery lasted (from entering to leaving), in a run.
fn recovery_time(p: &mut Pair) -> Duration {
    assert!(p.run_while(LIMIT, |p| !p.agents[CLIENT].in_recovery()));
    let start = p.now;
    assert!(p.run_while(LIMIT, |p| p.agents[CLIENT].in_recovery()));
    p.now - start
}

#[test]
fn sack_repairs_three_holes_in_about_one_rtt() {
    let mut sack = dropping(TcpVariant::Sack, 200_000, THREE_IN_ONE_WINDOW);
    let sack_time = recovery_time(&mut sack);
    let srtt = sack.agents[CLIENT].stats().rtt.smoothed.unwrap();
    assert!(sack.run_until_closed(LIMIT));
    sack.assert_complete();
    let s = sack.agents[CLIENT].stats();
    assert_eq!(
        (s.timeouts, s.fast_recoveries, s.retransmitted_packets),
        (0, 1, 3)
    );

    let mut cfg = TcpConfig::new(TcpVariant::NewReno);
    cfg.sack = true; // SACK negotiated but not used for recovery
    let mut newreno = dropping_cfg(cfg, 200_000, THREE_IN_ONE_WINDOW);
    let newreno_time = recovery_time(&mut newreno);
    assert!(
        sack_time.0 * 3 < newreno_time.0 * 2,
        "SACK {sack_time:?} vs NewReno {newreno_time:?} (srtt {srtt:?})"
    );
    assert!(
        sack_time.0 < 2 * srtt.0,
        "SACK took {sack_time:?}, srtt {srtt:?}"
    );
}

#[test]
fn cubic_recovers_like_sack_and_reduces_by_beta() {
    let mut p = dropping(TcpVariant::Cubic, 200_000, THREE_IN_ONE_WINDOW);
    // The window just before the event that started recovery.
    let (mut cwnd, mut now) = (0, 0);
    assert!(p.run_while(LIMIT, |p| {
        cwnd = now;
        now = p.agents[CLIENT].cwnd();
        !p.agents[CLIENT].in_recovery()
    }));
    let ssthresh = p.agents[CLIENT].ssthresh();
    assert!(
        (ssthresh as f64 - 0.7 * cwnd as f64).abs() <= 1.0,
        "{ssthresh} vs 0.7·{cwnd}"
    );
    assert!(p.run_until_closed(LIMIT));
    p.assert_complete();
    let s = p.agents[CLIENT].stats();
    assert_eq!((s.timeouts, s.fast_recoveries), (0, 1));
}

#[test]
fn no_second_fast_retransmit_for_data_sent_before_recovery() {
    // The fast retransmission itself is lost: the dupacks that follow are
    // for data sent before the recovery started and must not trigger
    // another fast retransmit (RFC 6582 §4); the timeout repairs it.
    for v in TcpVariant::ALL {
        let mut lost_seq = None;
        let mut p = Pair::one_way(TcpConfig::new(v), 200_000).script(move |pk| {
            if pk.dir != CLIENT || pk.payload_len == 0 {
                return Fate::Deliver;
            }
            match (pk.data_index, lost_seq) {
                (Some(30), _) => {
                    lost_seq = Some((pk.seq, 0));
                    Fate::Drop
                }
                (_, Some((seq, 0))) if pk.seq == seq => {
                    lost_seq = Some((seq, 1));
                    Fate::Drop
                }
                _ => Fate::Deliver,
            }
        });
        p.start();
        assert!(p.run_until_closed(LIMIT));
        p.assert_complete();
        let s = p.agents[CLIENT].stats();
        assert_eq!((s.fast_recoveries, s.timeouts), (1, 1), "{v}: {s:?}");
    }
}
