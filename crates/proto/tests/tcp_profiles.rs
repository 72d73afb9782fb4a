//! TCP behaviour profiles (`tcp/profile.rs`): each rule a profile switches
//! on changes what the connection does, and fails its test when switched
//! off. The timer rules (tick, Linux's floor, back-off cap), per-ACK growth,
//! the ssthresh bases and HyStart have unit tests next to their code.

mod common;

use common::pair::{Fate, Link, PacketInfo, Pair, CLIENT, SERVER};
use joulenet_proto::tcp::{SsthreshBase, TcpConfig, TcpProfile, TcpVariant};
use joulenet_proto::{Agent, Duration, Time};

const MSS: u64 = 1460;
const LIMIT: Time = Time::from_secs(120);

fn profile(p: TcpProfile, v: TcpVariant) -> TcpConfig {
    p.apply(TcpConfig::new(v))
}

fn dropping(cfg: TcpConfig, bytes: u64, drops: &'static [u64]) -> Pair {
    let mut p =
        Pair::one_way(cfg, bytes).script(move |pk: &PacketInfo| match (pk.dir, pk.data_index) {
            (CLIENT, Some(k)) if drops.contains(&k) => Fate::Drop,
            _ => Fate::Deliver,
        });
    p.start();
    p
}

/// First transmissions the client made before its first fast recovery.
fn new_segments_before_recovery(cfg: TcpConfig) -> u64 {
    let mut p = dropping(cfg, 400_000, &[40]);
    assert!(p.run_while(LIMIT, |p| p.agents[CLIENT].stats().fast_recoveries == 0));
    let sent = p.agents[CLIENT].stats().data_packets;
    assert!(p.run_until_closed(LIMIT));
    p.assert_complete();
    sent
}

#[test]
fn limited_transmit_sends_one_new_segment_per_early_dupack() {
    let mut on = TcpConfig::new(TcpVariant::NewReno);
    on.rules.limited_transmit = true;
    let off = TcpConfig::new(TcpVariant::NewReno);
    assert_eq!(
        new_segments_before_recovery(on),
        new_segments_before_recovery(off) + 2,
        "RFC 3042: the first two dupacks each release a segment"
    );
}

/// Microseconds from the fast retransmit to the first new segment sent
/// after it, and the segments sent during the recovery.
fn recovery_sending(cfg: TcpConfig) -> (u64, u64) {
    let mut p = dropping(cfg, 600_000, &[60]);
    assert!(p.run_while(LIMIT, |p| p.agents[CLIENT].stats().fast_recoveries == 0));
    let start = p.now;
    let before = p.agents[CLIENT].stats().data_packets;
    let mut first_new = None;
    assert!(p.run_while(LIMIT, |p| {
        if first_new.is_none() && p.agents[CLIENT].stats().data_packets > before {
            first_new = Some(p.now);
        }
        p.agents[CLIENT].in_recovery()
    }));
    let during = p.agents[CLIENT].stats().data_packets - before;
    assert!(p.run_until_closed(LIMIT));
    p.assert_complete();
    let first = first_new.expect("new data during recovery");
    ((first - start).as_nanos() / 1000, during)
}

#[test]
fn prr_spreads_recovery_sends_instead_of_waiting_for_the_pipe_to_drain() {
    let mut on = TcpConfig::new(TcpVariant::Sack);
    on.rules.prr = true;
    let (prr_wait, prr_sent) = recovery_sending(on);
    let (rfc_wait, rfc_sent) = recovery_sending(TcpConfig::new(TcpVariant::Sack));
    // RFC 6675 sends nothing new until the pipe falls below ssthresh,
    // half a window of dupacks later; PRR sends on the second dupack.
    assert!(
        prr_wait * 4 < rfc_wait,
        "first new segment after {prr_wait} µs with PRR, {rfc_wait} µs without"
    );
    // Both end the recovery having sent about ssthresh's worth.
    assert!(prr_sent.abs_diff(rfc_sent) <= 3, "{prr_sent} vs {rfc_sent}");
}

/// ssthresh after the first and the second of two timeouts in a row.
fn two_timeouts(cfg: TcpConfig) -> (u64, u64) {
    // Every ACK after 0.5 s is lost: timeouts follow one another.
    let mut p = Pair::one_way(cfg, 2_000_000).script(|pk: &PacketInfo| {
        if pk.dir == SERVER && pk.time > Time::from_millis(500) {
            Fate::Drop
        } else {
            Fate::Deliver
        }
    });
    p.start();
    assert!(p.run_while(LIMIT, |p| p.agents[CLIENT].stats().timeouts < 1));
    let first = p.agents[CLIENT].ssthresh();
    assert!(p.run_while(LIMIT, |p| p.agents[CLIENT].stats().timeouts < 2));
    (first, p.agents[CLIENT].ssthresh())
}

#[test]
fn a_repeated_timeout_keeps_ssthresh_under_ns3_and_linux() {
    let ns3 = profile(TcpProfile::Ns3, TcpVariant::Sack);
    let (first, second) = two_timeouts(ns3.clone());
    assert!(
        first > 2 * MSS,
        "the first timeout halves a full pipe: {first}"
    );
    assert_eq!(second, first, "ns-3's ReTxTimeout leaves it");
    // Without the rule the pipe after a timeout (one segment) is halved
    // again, to the two-segment floor.
    let mut cut_again = ns3;
    cut_again.rules.repeated_rto_keeps_ssthresh = false;
    let (_, second) = two_timeouts(cut_again);
    assert_eq!(second, 2 * MSS);
}

#[test]
fn pipe_based_ssthresh_halves_less_than_the_flight_when_segments_are_sacked() {
    // A burst of four losses: at recovery the pipe excludes the SACKed and
    // lost data that FlightSize still counts.
    let ssthresh_at_recovery = |base| {
        let mut cfg = TcpConfig::new(TcpVariant::Sack);
        cfg.rules.ssthresh_base = base;
        let mut p = dropping(cfg, 600_000, &[60, 61, 62, 63]);
        assert!(p.run_while(LIMIT, |p| p.agents[CLIENT].stats().fast_recoveries == 0));
        let a = &p.agents[CLIENT];
        (a.ssthresh(), a.flight())
    };
    let (flight_based, flight) = ssthresh_at_recovery(SsthreshBase::Flight);
    let (pipe_based, _) = ssthresh_at_recovery(SsthreshBase::Pipe);
    assert_eq!(flight_based, flight / 2);
    assert!(
        pipe_based + 2 * MSS <= flight_based,
        "pipe {pipe_based} vs flight {flight_based}"
    );
}

/// The client's RTO once the retransmission of a lost tail is acknowledged.
fn rto_after_tail_loss(cfg: TcpConfig) -> joulenet_proto::Duration {
    // Ten segments, the last lost: no dupacks, so a timeout resends it.
    let mut p = dropping(cfg, 10 * MSS, &[9]);
    assert!(p.run_while(LIMIT, |p| p.agents[CLIENT].stats().timeouts == 0));
    assert!(p.run_while(LIMIT, |p| p.agents[CLIENT].flight() > 0));
    p.agents[CLIENT].rto()
}

#[test]
fn ns3_clears_the_back_off_on_a_new_ack_rfc_waits_for_a_sample() {
    let rfc = rto_after_tail_loss(TcpConfig::new(TcpVariant::NewReno));
    let mut ns3_rule = TcpConfig::new(TcpVariant::NewReno);
    ns3_rule.rules.new_ack_clears_backoff = true;
    let ns3 = rto_after_tail_loss(ns3_rule);
    // The ACK covers only the retransmission: Karn gives no sample.
    assert_eq!(rfc, ns3.saturating_mul(2), "{rfc:?} vs {ns3:?}");
}

#[test]
fn the_xkernel_baseline_is_window_limited() {
    let cfg = profile(TcpProfile::Xkernel1998, TcpVariant::Reno);
    let mut p = Pair::one_way(cfg, 300_000);
    p.start();
    let mut most = 0;
    assert!(p.run_while(LIMIT, |p| {
        most = most.max(p.agents[CLIENT].flight());
        !p.agents[CLIENT].is_closed()
    }));
    p.assert_complete();
    assert!(most <= 8 * 1024 + 1, "flight reached {most}");
    assert!(most > 4 * 1024, "and uses its window: {most}");
}

#[test]
fn every_profile_completes_a_lossy_transfer() {
    for prof in TcpProfile::ALL {
        for v in [TcpVariant::NewReno, TcpVariant::Sack, TcpVariant::Cubic] {
            let mut p = dropping(profile(prof, v), 300_000, &[20, 21, 80, 150]);
            assert!(p.run_until_closed(Time::from_secs(600)), "{prof} {v}");
            p.assert_complete();
        }
    }
}

/// Timeouts of a NewReno transfer that loses 20 segments of one window, with
/// a 100 ms minimum RTO: its recovery repairs one hole per round trip
/// (about 20 ms here), some 400 ms in all.
fn timeouts_in_a_long_recovery(impatient: bool) -> u64 {
    const HOLES: [u64; 20] = [
        40, 42, 44, 46, 48, 50, 52, 54, 56, 58, 60, 62, 64, 66, 68, 70, 72, 74, 76, 78,
    ];
    let mut cfg = TcpConfig::new(TcpVariant::NewReno);
    cfg.min_rto = joulenet_proto::Duration::from_millis(100);
    cfg.rules.impatient_partial_acks = impatient;
    let mut p = dropping(cfg, 400_000, &HOLES);
    assert!(p.run_until_closed(LIMIT));
    p.assert_complete();
    p.agents[CLIENT].stats().timeouts
}

#[test]
fn the_impatient_rule_lets_a_long_recovery_time_out() {
    // RFC 6298 §5.3: every partial ACK restarts the timer, so the recovery
    // runs to its end; ns-3 restarts it on the first partial ACK only.
    assert_eq!(timeouts_in_a_long_recovery(false), 0);
    assert!(timeouts_in_a_long_recovery(true) >= 1);
}

/// SACK with RACK-TLP switched on or off, the `rfc` profile otherwise.
fn sack_with_rack_tlp(on: bool) -> TcpConfig {
    let mut cfg = TcpConfig::new(TcpVariant::Sack);
    cfg.rules.rack_tlp = on;
    cfg
}

/// A transfer whose data segment `k` is lost, and its first
/// retransmission too; returns the finished pair.
fn lost_retransmission(cfg: TcpConfig) -> Pair {
    let (mut target, mut drops) = (None, 0);
    let mut p = Pair::one_way(cfg, 400_000).script(move |pk: &PacketInfo| {
        if pk.dir == CLIENT && pk.data_index == Some(40) {
            target = Some(pk.seq);
        }
        if pk.dir == CLIENT && pk.payload_len > 0 && Some(pk.seq) == target && drops < 2 {
            drops += 1;
            return Fate::Drop;
        }
        Fate::Deliver
    });
    p.start();
    assert!(p.run_until_closed(LIMIT));
    p.assert_complete();
    p
}

#[test]
fn rack_finds_a_lost_retransmission_without_waiting_for_the_rto() {
    let rack = lost_retransmission(sack_with_rack_tlp(true));
    let c = rack.agents[CLIENT].stats();
    assert_eq!(c.timeouts, 0, "RACK resends the lost retransmission");
    assert_eq!(c.fast_recoveries, 1);
    assert!(rack.agents[CLIENT].gauge("rack_losses").unwrap() >= 1.0);
    // RFC 6675 never marks a retransmitted segment lost again.
    let plain = lost_retransmission(sack_with_rack_tlp(false));
    assert_eq!(plain.agents[CLIENT].stats().timeouts, 1);
    assert!(rack.now + Duration::from_millis(500) < plain.now);
}

/// A transfer of whole segments whose last three are lost. (A shorter
/// last segment would come back sooner than RACK's min_RTT, and RACK
/// would take its SACK for the original's, as Linux does.)
fn lost_tail(cfg: TcpConfig) -> Pair {
    let segments = 300;
    let tail = segments - 3..segments;
    let mut p = Pair::one_way(cfg, segments * MSS).script(move |pk: &PacketInfo| {
        match (pk.dir, pk.data_index) {
            (CLIENT, Some(k)) if tail.contains(&k) => Fate::Drop,
            _ => Fate::Deliver,
        }
    });
    p.start();
    p
}

#[test]
fn a_tail_loss_probe_repairs_a_lost_tail_without_a_timeout() {
    let mut tlp = lost_tail(sack_with_rack_tlp(true));
    assert!(
        tlp.run_while(LIMIT, |p| p.agents[CLIENT].gauge("loss_probes")
            == Some(0.0))
    );
    // The probe leaves PTO = 2·SRTT + 2 ms after the last ACK arrived
    // (more than one segment in flight: no delayed-ACK allowance).
    let srtt = tlp.agents[CLIENT].gauge("srtt_ms").unwrap();
    let last_ack = tlp
        .sent_by(SERVER)
        .filter(|pk| pk.time < tlp.now)
        .map(|pk| pk.time)
        .max()
        .unwrap();
    let waited = (tlp.now - last_ack).as_millis_f64() - Link::default().delay.as_millis_f64();
    let pto = 2.0 * srtt + 2.0;
    assert!(
        (waited - pto).abs() < 1.0,
        "probe after {waited} ms, PTO {pto} ms"
    );
    assert!(tlp.run_until_closed(LIMIT));
    tlp.assert_complete();
    let c = tlp.agents[CLIENT].stats();
    assert_eq!(
        (c.timeouts, c.fast_recoveries),
        (0, 1),
        "SACK of the probe starts a recovery"
    );
    // Without the probe the tail waits for the RTO.
    let mut plain = lost_tail(sack_with_rack_tlp(false));
    assert!(plain.run_until_closed(LIMIT));
    assert_eq!(plain.agents[CLIENT].stats().timeouts, 1);
    assert!(tlp.now + Duration::from_millis(500) < plain.now);
}

#[test]
fn the_linux_profile_runs_rack_tlp_and_no_other_does() {
    for p in TcpProfile::ALL {
        assert_eq!(p.rules().rack_tlp, p == TcpProfile::Linux, "{p}");
    }
}

/// RTT samples taken by the client when its back-off ended, after a
/// blackout of its data that backed the RTO off twice (no timestamps:
/// the ACKs that repair the blackout cover retransmitted data and bring
/// no sample under Karn's rule).
fn samples_when_the_back_off_ends(cfg: TcpConfig) -> (u64, u64) {
    let mut p = Pair::one_way(cfg, 2_000_000).script(|pk: &PacketInfo| {
        let dark = pk.time > Time::from_millis(300) && pk.time < Time::from_millis(3500);
        if pk.dir == CLIENT && pk.payload_len > 0 && dark {
            Fate::Drop
        } else {
            Fate::Deliver
        }
    });
    p.start();
    assert!(p.run_while(LIMIT, |p| p.agents[CLIENT].stats().timeouts < 2));
    let before = p.agents[CLIENT].stats().rtt.samples;
    assert!(p.agents[CLIENT].rto() >= Duration::from_secs(4));
    assert!(p.run_while(LIMIT, |p| p.agents[CLIENT].rto() >= Duration::from_secs(4)));
    let after = p.agents[CLIENT].stats().rtt.samples;
    assert!(p.run_until_closed(LIMIT));
    p.assert_complete();
    (before, after)
}

#[test]
fn rfc_ends_the_back_off_once_data_sent_after_the_timeout_is_acked() {
    let rfc = TcpConfig::new(TcpVariant::Cubic);
    assert!(rfc.rules.new_data_ack_clears_backoff);
    let (before, after) = samples_when_the_back_off_ends(rfc.clone());
    assert_eq!(after, before, "the ACK of new data ends it, with no sample");
    // Waiting for a fresh sample instead (Linux's rule) takes one more.
    let mut karn = rfc;
    karn.rules.new_data_ack_clears_backoff = false;
    let (before, after) = samples_when_the_back_off_ends(karn);
    assert_eq!(after, before + 1);
}

// ---- ns-3 rules found by diffing packet traces (validation/ns3/p2p-tcp.cc
// with `--lossTrace`, docs/validation.md § ns-3) ----

/// When the client sends its second SYN after the first is lost.
fn second_syn_at(cfg: TcpConfig) -> Time {
    let mut p = Pair::one_way(cfg, 10_000).script(|pk: &PacketInfo| {
        if pk.dir == CLIENT && pk.syn && pk.index == 0 {
            Fate::Drop
        } else {
            Fate::Deliver
        }
    });
    p.start();
    assert!(p.run_until_closed(LIMIT));
    p.assert_complete();
    let second = p.sent_by(CLIENT).filter(|k| k.syn).nth(1).unwrap().time;
    second
}

#[test]
fn ns3_resends_a_lost_syn_after_its_connection_timeout() {
    let ns3 = profile(TcpProfile::Ns3, TcpVariant::NewReno);
    assert_eq!(second_syn_at(ns3.clone()), Time::from_secs(3));
    let mut rto = ns3;
    rto.rules.syn_timeout = None;
    assert_eq!(second_syn_at(rto), Time::from_secs(1));
}

#[test]
fn ns3_newreno_halves_the_flight_less_the_dupacked_segments() {
    // One loss, no SACK: the pipe at the third dupack is the flight less
    // the three dupacked segments and the lost head, plus the head about
    // to be resent (ns-3's `EnterRecovery`).
    let mut p = dropping(
        profile(TcpProfile::Ns3, TcpVariant::NewReno),
        600_000,
        &[40],
    );
    assert!(p.run_while(LIMIT, |p| p.agents[CLIENT].stats().fast_recoveries == 0));
    let a = &p.agents[CLIENT];
    assert_eq!(a.ssthresh(), (a.flight() - 3 * MSS) / 2);
}

/// cwnd and ssthresh just after the first recovery ends.
fn window_after_recovery(cfg: TcpConfig) -> (u64, u64) {
    let mut p = dropping(cfg, 600_000, &[40]);
    assert!(p.run_while(LIMIT, |p| p.agents[CLIENT].stats().fast_recoveries == 0));
    assert!(p.run_while(LIMIT, |p| p.agents[CLIENT].in_recovery()));
    let a = &p.agents[CLIENT];
    (a.cwnd(), a.ssthresh())
}

#[test]
fn ns3_newreno_leaves_recovery_at_ssthresh_and_grows_on_that_ack() {
    let ns3 = profile(TcpProfile::Ns3, TcpVariant::NewReno);
    let (cwnd, ssthresh) = window_after_recovery(ns3.clone());
    // ssthresh plus one congestion-avoidance step, MSS²/ssthresh.
    assert_eq!(cwnd, ssthresh + MSS * MSS / ssthresh);
    let mut rfc6582 = ns3;
    rfc6582.rules.newreno_exit_at_ssthresh = false;
    let (cwnd, ssthresh) = window_after_recovery(rfc6582);
    assert!(
        cwnd <= ssthresh,
        "RFC 6582 option (1): {cwnd} vs {ssthresh}"
    );
}

/// Segments a connection sends between its first fast retransmit and the
/// end of that recovery, with the data segments `drops` lost.
fn sent_in_recovery(cfg: TcpConfig, drops: &'static [u64]) -> u64 {
    let mut p = dropping(cfg, 600_000, drops);
    assert!(p.run_while(LIMIT, |p| p.agents[CLIENT].stats().fast_recoveries == 0));
    let before = p.agents[CLIENT].stats().data_packets;
    assert!(p.run_while(LIMIT, |p| p.agents[CLIENT].in_recovery()));
    let sent = p.agents[CLIENT].stats().data_packets - before;
    assert!(p.run_until_closed(LIMIT));
    p.assert_complete();
    sent
}

#[test]
fn ns3_reno_sacks_let_prr_send_during_a_newreno_recovery() {
    let ns3 = profile(TcpProfile::Ns3, TcpVariant::NewReno);
    let prr = sent_in_recovery(ns3.clone(), &[60]);
    let mut inflation = ns3;
    inflation.rules.reno_sack_prr = false;
    let rfc6582 = sent_in_recovery(inflation, &[60]);
    // RFC 6582 sends nothing new until the inflated window passes the
    // flight, half a window of dupacks in; PRR sends about ssthresh /
    // RecoverFS per dupack from the start, so more by the end.
    assert!(prr > rfc6582, "PRR {prr} segments, RFC 6582 {rfc6582}");
}

/// cwnd just after the ACK that acknowledges everything sent before a
/// timeout, with the ACKs in between lost.
fn window_after_go_back_n(cfg: TcpConfig) -> u64 {
    // The tail of the first window and its ACKs are lost: a timeout, then
    // the resent head's ACK is cumulative up to the recovery point.
    let mut p = Pair::one_way(cfg, 400_000).script(|pk: &PacketInfo| match pk.dir {
        CLIENT if pk.data_index == Some(5) => Fate::Drop,
        SERVER if pk.time < Time::from_millis(900) && pk.ack_index.is_some_and(|k| k >= 2) => {
            Fate::Drop
        }
        _ => Fate::Deliver,
    });
    p.start();
    assert!(p.run_while(LIMIT, |p| p.agents[CLIENT].stats().timeouts == 0));
    let una = |p: &Pair| p.agents[CLIENT].flight();
    let flight = una(&p);
    assert!(
        flight > 2 * MSS,
        "a window outstanding at the timeout: {flight}"
    );
    assert!(p.run_while(LIMIT, |p| p.agents[CLIENT].flight() >= flight));
    let cwnd = p.agents[CLIENT].cwnd();
    assert!(p.run_until_closed(LIMIT));
    p.assert_complete();
    cwnd
}

#[test]
fn ns3_does_not_grow_the_window_on_the_ack_that_ends_a_timeout_repair() {
    let ns3 = profile(TcpProfile::Ns3, TcpVariant::NewReno);
    assert_eq!(window_after_go_back_n(ns3.clone()), MSS);
    let mut grows = ns3;
    grows.rules.loss_exit_counts_beyond_recover = false;
    assert_eq!(window_after_go_back_n(grows), 2 * MSS);
}

#[test]
fn ns3_prr_with_sack_sends_more_during_a_recovery_than_rfc_6937() {
    // A burst of four losses: ns-3.44 takes RecoverFS from the pipe (less
    // than the flight) and adds a segment per dupack, so its proportional
    // share, and what it sends in the recovery, is larger.
    let with = |ns3_prr| {
        let mut cfg = profile(TcpProfile::Ns3, TcpVariant::Sack);
        cfg.rules.ns3_prr = ns3_prr;
        sent_in_recovery(cfg, &[60, 61, 62, 63])
    };
    let (ns3, rfc) = (with(true), with(false));
    assert!(ns3 > rfc, "ns-3.44 PRR {ns3} segments, RFC 6937 {rfc}");
}

fn linux_sack(frto: bool) -> TcpConfig {
    let mut cfg = profile(TcpProfile::Linux, TcpVariant::Sack);
    cfg.rules.frto = frto;
    // The scenarios below are timed for a receiver that ACKs every second
    // segment from the start and for exact timers: with quick ACKs slow
    // start fills the queue sooner, and with the loss probe in 4 ms
    // jiffies the probe's timing shifts, so the delay spike no longer
    // outlasts the RTO.
    cfg.rules.quickack = false;
    cfg.rules.jiffy = None;
    cfg
}

/// The client's window and ssthresh.
fn window_and_ssthresh(p: &Pair) -> (f64, f64) {
    let c = &p.agents[CLIENT];
    (c.gauge("cwnd").unwrap(), c.gauge("ssthresh").unwrap())
}

/// RFC 5682's delay spike: the path delay jumps from 10 to 300 ms at
/// 0.1 s, so the ACKs of what is in flight come back after the RTO
/// fires. Returns the finished pair, the client's window and ssthresh
/// just before the timeout, and once the first ACK after it is in.
fn delay_spike(cfg: TcpConfig) -> (Pair, (f64, f64), (f64, f64)) {
    let mut p = Pair::one_way(cfg, 1_000_000);
    p.start();
    p.run_until(Time::from_millis(100));
    p.link.delay = Duration::from_millis(300);
    let mut before = (0.0, 0.0);
    assert!(p.run_while(LIMIT, |p| {
        let fired = p.agents[CLIENT].stats().timeouts > 0;
        if !fired {
            before = window_and_ssthresh(p);
        }
        !fired
    }));
    let una = p.agents[CLIENT].gauge("flight").unwrap();
    assert!(p.run_while(LIMIT, |p| p.agents[CLIENT].gauge("flight").unwrap() >= una));
    let after = window_and_ssthresh(&p);
    assert!(p.run_until_closed(LIMIT));
    p.assert_complete();
    (p, before, after)
}

#[test]
fn frto_undoes_a_timeout_whose_acks_come_late() {
    let (p, (cwnd, ssthresh), after) = delay_spike(linux_sack(true));
    let c = p.agents[CLIENT].stats();
    assert_eq!(c.timeouts, 1);
    assert_eq!(p.agents[CLIENT].gauge("spurious_rtos"), Some(1.0));
    assert!(
        after.0 >= cwnd && after.1 >= ssthresh,
        "undone: cwnd {cwnd} → {}, ssthresh {ssthresh} → {}",
        after.0,
        after.1
    );
    // Only the timeout's own retransmission of the head: no go-back-N.
    assert_eq!(c.retransmitted_packets, 1);

    // Without F-RTO the window restarts from one segment and go-back-N
    // resends what had arrived.
    let (plain, (cwnd, _), after) = delay_spike(linux_sack(false));
    let c = plain.agents[CLIENT].stats();
    assert_eq!(c.timeouts, 1);
    assert_eq!(plain.agents[CLIENT].gauge("spurious_rtos"), Some(0.0));
    assert!(after.0 < cwnd / 4.0 && after.1 <= cwnd / 2.0, "{after:?}");
    assert!(c.retransmitted_packets > 10, "{}", c.retransmitted_packets);
    assert!(p.now < plain.now);
}

/// A blackout of the client's data from its 100th segment until it
/// resends something below its highest sequence number (the timeout's
/// retransmission): the whole flight and the loss probe are lost, a
/// genuine timeout. Returns the finished pair and the client's window
/// just before the timeout.
fn data_blackout(cfg: TcpConfig) -> (Pair, f64) {
    let (mut highest, mut on, mut ended) = (0u32, false, false);
    let mut p = Pair::one_way(cfg, 2_000_000).script(move |pk: &PacketInfo| {
        if pk.dir != CLIENT || pk.payload_len == 0 {
            return Fate::Deliver;
        }
        if pk.seq.wrapping_sub(highest) as i32 >= 0 {
            highest = pk.seq;
        } else if on {
            ended = true;
        }
        on |= pk.data_index == Some(100);
        if on && !ended {
            Fate::Drop
        } else {
            Fate::Deliver
        }
    });
    p.start();
    let mut cwnd = 0.0;
    assert!(p.run_while(LIMIT, |p| {
        let fired = p.agents[CLIENT].stats().timeouts > 0;
        if !fired {
            cwnd = window_and_ssthresh(p).0;
        }
        !fired
    }));
    assert!(p.run_until_closed(LIMIT));
    p.assert_complete();
    (p, cwnd)
}

#[test]
fn frto_keeps_the_cut_of_a_timeout_whose_data_was_lost() {
    let run = |frto: bool| {
        let (p, cwnd) = data_blackout(linux_sack(frto));
        let c = p.agents[CLIENT].stats();
        assert_eq!(c.timeouts, 1, "frto {frto}");
        assert_eq!(p.agents[CLIENT].gauge("spurious_rtos"), Some(0.0));
        let ssthresh = window_and_ssthresh(&p).1;
        assert!(ssthresh <= cwnd / 2.0, "the cut stays (frto {frto})");
        c.retransmitted_packets
    };
    // Step 2.b sends new data first; the lost segments are then resent as
    // a conventional recovery would, each once.
    assert_eq!(run(true), run(false));
}

#[test]
fn only_the_linux_profile_runs_frto() {
    for p in TcpProfile::ALL {
        assert_eq!(p.rules().frto, p == TcpProfile::Linux, "{p}");
    }
}

/// Pure ACKs the server sent for the connection's first `segments` data
/// segments on a clean link (the transfer is longer, so no FIN ends it).
fn acks_for_first_segments(cfg: TcpConfig, segments: u64) -> u64 {
    use std::cell::Cell;
    use std::rc::Rc;
    let acks = Rc::new(Cell::new(0u64));
    let count = acks.clone();
    // The SYN-ACK acknowledges the client's ISN + 1: data byte 0.
    let mut first_byte = 0u32;
    let mut p = Pair::one_way(cfg, 200 * MSS).script(move |pk: &PacketInfo| {
        if pk.dir == SERVER && pk.syn {
            first_byte = pk.ack.expect("a SYN-ACK");
        }
        let acked = pk.ack.map(|a| a.wrapping_sub(first_byte) as u64 / MSS);
        // (The server closes its own direction at once: its first ACK
        // carries its FIN.)
        let pure_ack = !pk.syn && pk.payload_len == 0;
        if pk.dir == SERVER && pure_ack && acked.is_some_and(|k| k <= segments) {
            count.set(count.get() + 1);
        }
        Fate::Deliver
    });
    p.start();
    assert!(p.run_until_closed(LIMIT));
    p.assert_complete();
    acks.get()
}

#[test]
fn linux_receiver_acks_its_first_sixteen_segments_one_by_one() {
    let linux = profile(TcpProfile::Linux, TcpVariant::Sack);
    let mut paired = linux.clone();
    paired.rules.quickack = false;
    // Quick-ACK mode: one ACK per segment for the first 16 (tcp_incr_quickack's
    // TCP_MAX_QUICKACKS), where a delaying receiver ACKs every second one.
    assert_eq!(acks_for_first_segments(linux.clone(), 16), 16);
    assert_eq!(acks_for_first_segments(paired.clone(), 16), 8);
    // The credit is spent after 16: segments 17–40 are ACKed in pairs.
    assert_eq!(
        acks_for_first_segments(linux, 40) - acks_for_first_segments(paired, 40),
        8
    );
}

#[test]
fn linux_receiver_delays_acks_40_ms_and_only_it_runs_quickack() {
    let linux = profile(TcpProfile::Linux, TcpVariant::Sack);
    assert_eq!(
        linux.delayed_ack.map(|d| (d.every, d.timeout)),
        Some((2, Duration::from_millis(40)))
    );
    // A variant that ACKs every segment keeps doing so.
    let mut eager = TcpConfig::new(TcpVariant::Sack);
    eager.delayed_ack = None;
    assert_eq!(TcpProfile::Linux.apply(eager).delayed_ack, None);
    for p in TcpProfile::ALL {
        assert_eq!(p.rules().quickack, p == TcpProfile::Linux, "{p}");
    }
}

/// Segment 40 is lost, and so is everything the client sends for 100 ms
/// from its fast retransmit on, so the recovery ends in a timeout. Returns
/// ssthresh as the recovery set it and once the timeout has fired.
fn timeout_in_recovery(cfg: TcpConfig) -> (f64, f64) {
    let (mut highest, mut blackout_from) = (0u32, None::<Time>);
    let mut p = Pair::one_way(cfg, 1_000_000).script(move |pk: &PacketInfo| {
        if pk.dir != CLIENT || pk.payload_len == 0 {
            return Fate::Deliver;
        }
        if pk.data_index == Some(40) {
            return Fate::Drop;
        }
        let resent = (pk.seq.wrapping_sub(highest) as i32) < 0;
        if !resent {
            highest = pk.seq;
        }
        match blackout_from {
            None if resent => {
                blackout_from = Some(pk.time);
                Fate::Drop
            }
            Some(t) if pk.time < t + Duration::from_millis(100) => Fate::Drop,
            _ => Fate::Deliver,
        }
    });
    p.start();
    assert!(p.run_while(LIMIT, |p| p.agents[CLIENT].stats().fast_recoveries == 0));
    let in_recovery = window_and_ssthresh(&p).1;
    assert!(p.run_while(LIMIT, |p| {
        let c = &p.agents[CLIENT];
        assert!(
            c.in_recovery() || c.stats().timeouts > 0,
            "the recovery ended first"
        );
        c.stats().timeouts == 0
    }));
    let after = window_and_ssthresh(&p).1;
    assert!(p.run_until_closed(LIMIT));
    p.assert_complete();
    (in_recovery, after)
}

#[test]
fn a_timeout_in_a_fast_recovery_keeps_its_ssthresh_under_linux() {
    let linux = profile(TcpProfile::Linux, TcpVariant::Sack);
    let (recovery, timeout) = timeout_in_recovery(linux.clone());
    assert_eq!(timeout, recovery, "tcp_enter_loss: no second cut");
    let mut cut = linux;
    cut.rules.timeout_in_recovery_keeps_ssthresh = false;
    let (recovery, timeout) = timeout_in_recovery(cut);
    assert!(timeout < recovery, "{timeout} < {recovery}");
    for p in TcpProfile::ALL {
        let on = p.rules().timeout_in_recovery_keeps_ssthresh;
        assert_eq!(on, p == TcpProfile::Linux, "{p}");
    }
}

/// The client's ssthresh (segments) once its first fast recovery began,
/// CUBIC under the `linux` profile with Linux's arithmetic on or off.
fn cubic_ssthresh_after_a_loss(linux_cubic: bool) -> f64 {
    let mut cfg = profile(TcpProfile::Linux, TcpVariant::Cubic);
    cfg.rules.linux_cubic = linux_cubic;
    let mut p = dropping(cfg, 400_000, &[47]);
    assert!(p.run_while(LIMIT, |p| p.agents[CLIENT].stats().fast_recoveries == 0));
    let (_, ssthresh) = window_and_ssthresh(&p);
    assert!(p.run_until_closed(LIMIT));
    p.assert_complete();
    ssthresh / MSS as f64
}

#[test]
fn linux_cubic_cuts_to_717_1024_of_the_window_in_whole_segments() {
    // Both see the same window W at the loss; RFC 9438 sets 0.7 · W,
    // `cubictcp_recalc_ssthresh` ⌊W · 717 / 1024⌋ segments.
    let rfc = cubic_ssthresh_after_a_loss(false);
    let window = (rfc / 0.7).round();
    let linux = cubic_ssthresh_after_a_loss(true);
    assert_eq!(
        linux,
        (window * 717.0 / 1024.0).floor(),
        "W = {window}, RFC 9438 {rfc}"
    );
    // Here W = 57: 39.9 against 39 segments.
    assert_ne!(linux, rfc);
}

#[test]
fn only_the_linux_profile_computes_cubic_as_tcp_cubic() {
    for p in TcpProfile::ALL {
        assert_eq!(p.rules().linux_cubic, p == TcpProfile::Linux, "{p}");
    }
}
