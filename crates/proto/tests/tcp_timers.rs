//! Retransmission timeout, Karn's algorithm, delayed ACKs, and lost
//! handshake and teardown segments.

mod common;

use common::pair::{Fate, Pair, CLIENT, SERVER};
use joulenet_proto::tcp::{DelayedAck, TcpConfig, TcpState, TcpVariant};
use joulenet_proto::{Agent, Duration, Time};
use joulenet_wire::tcp::TcpRepr;

const LIMIT: Time = Time::from_secs(60);

#[test]
fn rto_backs_off_exponentially_and_karn_skips_retransmitted_samples() {
    // A black hole for the client's data between 0.1 s and 6 s.
    let mut p = Pair::one_way(TcpConfig::new(TcpVariant::NewReno), 1_000_000).script(|pk| {
        let hole = pk.time >= Time::from_millis(100) && pk.time < Time::from_secs(6);
        if pk.dir == CLIENT && pk.payload_len > 0 && hole {
            Fate::Drop
        } else {
            Fate::Deliver
        }
    });
    p.start();
    assert!(p.run_while(LIMIT, |p| p.now < Time::from_secs(6)));
    let s = p.agents[CLIENT].stats();
    assert_eq!(s.timeouts, 3, "timeouts at ~1, ~3 and ~7 s");
    let head = p
        .sent_by(CLIENT)
        .filter(|i| i.time >= Time::from_millis(100))
        .map(|i| i.seq)
        .min();
    let times: Vec<Time> = p
        .sent_by(CLIENT)
        .filter(|i| Some(i.seq) == head && i.payload_len > 0)
        .map(|i| i.time)
        .collect();
    assert_eq!(
        times.len(),
        4,
        "first send and three retransmissions: {times:?}"
    );
    assert_eq!(
        times[2] - times[1],
        Duration::from_secs(2),
        "second RTO is doubled"
    );
    assert_eq!(
        times[3] - times[2],
        Duration::from_secs(4),
        "third RTO doubles again"
    );
    assert_eq!(p.agents[CLIENT].rto(), Duration::from_secs(8));

    let samples = s.rtt.samples;
    let received = s.packets_received;
    // The first ACK after the hole acknowledges only retransmitted data.
    assert!(
        p.run_while(LIMIT, |p| p.agents[CLIENT].stats().packets_received
            == received)
    );
    assert_eq!(
        p.agents[CLIENT].stats().rtt.samples,
        samples,
        "Karn: no sample"
    );
    assert!(p.run_until_closed(LIMIT));
    p.assert_complete();
    let s = p.agents[CLIENT].stats();
    // Queueing inflates samples, but none spans a timeout.
    assert!(s.rtt.max.unwrap() < Duration::from_secs(1), "{:?}", s.rtt);
    assert!(s.rtt.samples > samples);
}

#[test]
fn gives_up_after_too_many_consecutive_timeouts() {
    let mut cfg = TcpConfig::new(TcpVariant::Sack);
    cfg.max_consecutive_rtos = 3;
    cfg.max_rto = Duration::from_secs(2);
    let mut p = Pair::one_way(cfg, 100_000).script(|pk| {
        if pk.dir == SERVER {
            Fate::Drop
        } else {
            Fate::Deliver
        }
    });
    p.start();
    p.run_until(Time::from_secs(30));
    let c = &p.agents[CLIENT];
    assert_eq!(c.stats().timeouts, 4);
    assert!(c.is_closed());
    let aborted = p.hosts[CLIENT]
        .events
        .iter()
        .any(|(_, e)| *e == joulenet_proto::TransportEvent::Aborted);
    assert!(aborted);
}

fn pure_acks(p: &Pair, dir: usize) -> usize {
    p.sent_by(dir).filter(|i| i.ack_index.is_some()).count()
}

#[test]
fn delayed_ack_every_second_segment() {
    let segments = 100u64;
    let mut p = Pair::one_way(TcpConfig::new(TcpVariant::NewReno), segments * 1460);
    p.start();
    assert!(p.run_until_closed(LIMIT));
    p.assert_complete();
    let acks = pure_acks(&p, SERVER) as u64;
    assert!(
        acks >= segments / 2 && acks <= segments / 2 + 6,
        "{acks} ACKs for {segments}"
    );

    let mut cfg = TcpConfig::new(TcpVariant::NewReno);
    cfg.delayed_ack = None;
    let mut p = Pair::one_way(cfg, segments * 1460);
    p.start();
    assert!(p.run_until_closed(LIMIT));
    // One per data segment, except the first, whose ACK rides on the
    // server's FIN (its application has nothing to send).
    assert_eq!(pure_acks(&p, SERVER) as u64, segments - 1);
}

#[test]
fn delayed_ack_timer_acknowledges_a_lone_segment() {
    let mut cfg = TcpConfig::new(TcpVariant::NewReno);
    cfg.delayed_ack = Some(DelayedAck {
        every: 2,
        timeout: Duration::from_millis(200),
    });
    let mut p = Pair::one_way(cfg, 1000);
    // The connection stays open: no FIN carries the ACK.
    p.hosts[CLIENT].app.finish = false;
    p.hosts[SERVER].app.finish = false;
    p.start();
    p.run_until(Time::from_secs(1));
    let data = p.sent_by(CLIENT).find(|i| i.payload_len > 0).unwrap().time;
    let ack = p
        .sent_by(SERVER)
        .find(|i| i.ack_index.is_some())
        .unwrap()
        .time;
    let arrival =
        data + Duration::from_millis(10) + Duration::transmission((1000 + 20 + 20) * 8, 10_000_000);
    assert_eq!(ack - arrival, Duration::from_millis(200));
    assert_eq!(p.hosts[SERVER].app.received, 1000);
    assert_eq!(p.agents[CLIENT].flight(), 0);
}

#[test]
fn lost_syn_is_retransmitted_after_the_initial_rto() {
    let mut p = Pair::one_way(TcpConfig::new(TcpVariant::Cubic), 50_000).script(|pk| {
        if pk.dir == CLIENT && pk.index == 0 {
            Fate::Drop
        } else {
            Fate::Deliver
        }
    });
    p.start();
    assert!(p.run_until_closed(LIMIT));
    p.assert_complete();
    let est = p.hosts[CLIENT].events[0].0;
    assert!(
        est > Time::from_secs(1) && est < Time::from_millis(1100),
        "{est:?}"
    );
    assert_eq!(p.agents[CLIENT].stats().timeouts, 1);
}

#[test]
fn lost_syn_ack_is_retransmitted() {
    let mut p = Pair::one_way(TcpConfig::new(TcpVariant::Reno), 50_000).script(|pk| {
        if pk.dir == SERVER && pk.index == 0 {
            Fate::Drop
        } else {
            Fate::Deliver
        }
    });
    p.start();
    assert!(p.run_until_closed(LIMIT));
    p.assert_complete();
}

#[test]
fn lost_fins_are_retransmitted() {
    for dir in [CLIENT, SERVER] {
        let mut dropped = false;
        let mut p = Pair::new(
            TcpConfig::new(TcpVariant::Sack),
            TcpConfig::new(TcpVariant::Sack),
            30_000,
            20_000,
        )
        .script(move |pk| {
            if pk.dir == dir && pk.fin && !dropped {
                dropped = true;
                Fate::Drop
            } else {
                Fate::Deliver
            }
        });
        p.start();
        assert!(p.run_until_closed(LIMIT), "FIN from {dir}");
        p.assert_complete();
        assert!(p.agents[dir].stats().timeouts >= 1);
    }
}

#[test]
fn lost_last_ack_is_answered_from_time_wait() {
    // The client closes first, so it ends in TIME_WAIT; its final ACK of the
    // server's FIN is lost, so the server resends the FIN.
    let cfg = TcpConfig::new(TcpVariant::NewReno);
    let mut p = Pair::new(cfg.clone(), cfg, 1_000, 100_000);
    let mut final_ack = None;
    let mut dropped = false;
    p.script = Box::new(move |pk| {
        if pk.dir == SERVER && pk.fin {
            final_ack = Some(pk.seq.wrapping_add(pk.payload_len as u32 + 1));
        } else if pk.dir == CLIENT && !dropped && pk.ack.is_some() && pk.ack == final_ack {
            dropped = true;
            return Fate::Drop;
        }
        Fate::Deliver
    });
    p.start();
    assert!(p.run_until_closed(LIMIT));
    p.assert_complete();
    assert_eq!(p.agents[CLIENT].state(), TcpState::TimeWait);
    assert_eq!(p.agents[SERVER].state(), TcpState::Closed);
    assert!(p.agents[SERVER].stats().timeouts >= 1);
    // TIME_WAIT ends after 2·MSL.
    p.run_until(p.now + Duration::from_secs(3));
    assert_eq!(p.agents[CLIENT].state(), TcpState::Closed);
}

#[test]
fn zero_window_is_probed_until_it_opens() {
    let mut p = Pair::one_way(TcpConfig::new(TcpVariant::NewReno), 5_000);
    p.hosts[CLIENT].app.finish = false;
    p.hosts[SERVER].app.finish = false;
    p.start();
    p.run_until(Time::from_millis(500));
    assert_eq!(p.agents[CLIENT].flight(), 0);
    // The server "closes" its window with a forged window update.
    let last = *p.sent_by(SERVER).last().unwrap();
    let repr = TcpRepr {
        src_port: 80,
        dst_port: 1000,
        seq: last.seq,
        ack: last.ack,
        flags: Default::default(),
        window: 0,
        options: Default::default(),
        payload: &[],
    };
    let mut zero = Vec::new();
    repr.emit_to_vec(&mut zero);
    p.inject(CLIENT, &zero);
    assert_eq!(p.agents[CLIENT].gauge("rwnd"), Some(0.0));
    let before = p.log.len();
    p.hosts[CLIENT].app.total += 20_000;
    p.hosts[SERVER].app.finish = true;
    p.hosts[CLIENT].app.finish = true;
    p.hosts[SERVER].app.expect += 20_000;
    p.app_ready(CLIENT);
    assert_eq!(
        p.log.len(),
        before,
        "nothing may be sent into a zero window"
    );
    p.run_until(Time::from_secs(2));
    let probe = p.log[before].0;
    assert_eq!(
        (probe.dir, probe.payload_len),
        (CLIENT, 0),
        "a window probe comes first"
    );
    assert_eq!(
        probe.time,
        Time::from_millis(1500),
        "one RTO after the stall"
    );
    assert_eq!(
        p.agents[CLIENT].stats().timeouts,
        0,
        "probing is not a timeout"
    );
    p.app_ready(SERVER); // the server may close its own direction now
    assert!(p.run_until_closed(LIMIT));
    p.assert_complete();
}
