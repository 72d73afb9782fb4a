//! RCP end to end between two agents: transfers, REQ loss and the cyclic
//! buffer, pull vs cumulative semantics, window behaviour, ELN, persist,
//! power save, malformed input, the receiver's RTO (Karn, the handshake's
//! sample).

mod common;

use common::pair::{Fate, RECEIVER, SENDER};
use joulenet_proto::rcp::{PowerSave, RcpConfig, RcpReceiver, RcpSender};
use joulenet_proto::{Addr, Duration, RadioMode, Time};
use joulenet_wire::rcp::{self as wire, RcpFlags};

type Pair = common::pair::Pair<Box<dyn joulenet_proto::Agent>>;

const LIMIT: Time = Time::from_secs(120);
const MSS: u64 = 1460;

fn pair(cfg: RcpConfig, bytes: u64) -> Pair {
    Pair::with_agents(
        Box::new(RcpSender::new(cfg.clone(), Addr::new(1, 5000))),
        Box::new(RcpReceiver::new(cfg)),
        bytes,
    )
}

/// A receiver gauge.
fn g(p: &Pair, name: &str) -> u64 {
    p.agents[RECEIVER].gauge(name).expect("receiver gauge") as u64
}

fn kind(pkt: &[u8]) -> (RcpFlags, u32, usize) {
    let (r, payload) = wire::parse(pkt).expect("agents emit valid packets");
    (r.flags, r.seq, payload.len())
}

#[test]
fn clean_transfer_delivers_everything_and_closes() {
    let mut p = pair(RcpConfig::default(), 500_000);
    p.start();
    assert!(p.run_until_closed(LIMIT));
    p.assert_delivered();
    let s = p.agents[SENDER].stats();
    assert_eq!(s.retransmitted_packets, 0);
    assert_eq!(s.payload_bytes, 500_000);
    assert_eq!(p.agents[RECEIVER].stats().timeouts, 0);
}

#[test]
fn slow_start_doubles_the_request_window_per_round_trip() {
    let mut p = pair(RcpConfig::default(), 2_000_000);
    p.link.delay = Duration::from_millis(50);
    p.link.rate_bps = 100_000_000;
    p.start();
    // After the handshake, each round trip of data grows cwnd by its size.
    p.run_until_cond(LIMIT, |p| g(p, "cwnd") >= 20 * MSS);
    assert_eq!(g(&p, "cwnd"), 20 * MSS);
    p.run_until_cond(LIMIT, |p| g(p, "cwnd") >= 40 * MSS);
    assert_eq!(g(&p, "cwnd"), 40 * MSS);
}

#[test]
fn a_lost_segment_halves_the_window_once_and_is_pulled_again() {
    let mut p = pair(RcpConfig::default(), 400_000);
    let mut data = 0;
    let mut pulls = Vec::new();
    p.raw_script = Box::new(move |dir, _, pkt| {
        let (flags, seq, len) = kind(pkt);
        if dir == SENDER && len > 0 {
            data += 1;
            if data == 30 {
                return Fate::Drop;
            }
        }
        if dir == RECEIVER && flags.has(RcpFlags::PUL) {
            pulls.push(seq);
        }
        Fate::Deliver
    });
    p.start();
    let mut flight = 0;
    assert!(p.run_until_cond(LIMIT, |p| {
        if p.agents[RECEIVER].stats().fast_recoveries == 0 {
            flight = g(p, "flight");
        }
        p.agents[RECEIVER].stats().fast_recoveries > 0
    }));
    assert_eq!(g(&p, "in_recovery"), 1);
    // Half of what was outstanding when the hole was found.
    assert!(g(&p, "ssthresh").abs_diff(flight / 2) <= MSS, "{flight}");
    assert_eq!(g(&p, "cwnd"), g(&p, "ssthresh"));
    assert!(p.run_until_closed(LIMIT));
    p.assert_delivered();
    let r = &p.agents[RECEIVER];
    assert_eq!(r.stats().fast_recoveries, 1);
    assert_eq!(r.stats().timeouts, 0);
    assert_eq!(p.agents[SENDER].stats().retransmitted_packets, 1);
}

#[test]
fn every_hole_uses_the_same_threshold_and_lost_retransmissions_need_no_timeout() {
    let mut p = pair(RcpConfig::default(), 600_000);
    let mut data = 0;
    let mut dropped_retx = false;
    p.raw_script = Box::new(move |dir, _, pkt| {
        let (flags, _, len) = kind(pkt);
        let _ = flags;
        if dir == SENDER && len > 0 {
            data += 1;
            // Seven holes in one window, like the paper's Figure 5(b).
            if [40, 44, 48, 52, 65, 68, 71].contains(&data) {
                return Fate::Drop;
            }
            // And the first retransmission is lost too.
            if data > 80 && !dropped_retx {
                dropped_retx = true;
                return Fate::Drop;
            }
        }
        Fate::Deliver
    });
    p.start();
    assert!(p.run_until_closed(LIMIT));
    p.assert_delivered();
    let r = &p.agents[RECEIVER];
    assert_eq!(
        r.stats().timeouts,
        0,
        "no timeout for a lost retransmission"
    );
}

#[test]
fn lost_pull_requests_are_recovered_from_the_cyclic_buffer() {
    let mut p = pair(RcpConfig::default(), 400_000);
    let mut data = 0;
    let mut pulls_dropped = 0;
    p.raw_script = Box::new(move |dir, _, pkt| {
        let (flags, _, len) = kind(pkt);
        if dir == SENDER && len > 0 {
            data += 1;
            if [30, 31, 32, 33].contains(&data) {
                return Fate::Drop;
            }
        }
        // Drop the first two pull REQs: the next REQs carry their blocks.
        if dir == RECEIVER && flags.has(RcpFlags::PUL) && pulls_dropped < 2 {
            pulls_dropped += 1;
            return Fate::Drop;
        }
        Fate::Deliver
    });
    p.start();
    assert!(p.run_until_closed(LIMIT));
    p.assert_delivered();
    assert_eq!(p.agents[RECEIVER].stats().timeouts, 0, "no timeout needed");
    // Four holes, each sent again exactly once.
    assert_eq!(p.agents[SENDER].stats().retransmitted_packets, 4);
}

#[test]
fn lost_cumulative_requests_are_covered_by_the_next_one() {
    let mut p = pair(RcpConfig::default(), 300_000);
    let mut reqs = 0;
    p.raw_script = Box::new(move |dir, _, pkt| {
        let (flags, _, _) = kind(pkt);
        if dir == RECEIVER && flags.has(RcpFlags::REQ) && !flags.has(RcpFlags::PUL) {
            reqs += 1;
            if reqs % 3 == 0 {
                return Fate::Drop;
            }
        }
        Fate::Deliver
    });
    p.start();
    assert!(p.run_until_closed(LIMIT));
    p.assert_delivered();
    assert_eq!(p.agents[SENDER].stats().retransmitted_packets, 0);
}

#[test]
fn pull_sends_exactly_the_block_and_cumulative_only_new_data() {
    use joulenet_wire::rcp::{RcpRepr, RequestBlock};
    use std::cell::RefCell;
    use std::rc::Rc;
    let log: Rc<RefCell<Vec<(u32, usize, u8)>>> = Rc::default();
    let l = log.clone();
    let mut p = pair(RcpConfig::default(), 100_000);
    p.raw_script = Box::new(move |dir, _, pkt| {
        let (flags, seq, len) = kind(pkt);
        if dir == SENDER {
            l.borrow_mut().push((seq, len, flags.0));
        }
        Fate::Deliver
    });
    p.start();
    // Stop at the first delivery: the sender has sent the initial window
    // and freed nothing yet.
    assert!(p.run_until_cond(LIMIT, |p| p.hosts[RECEIVER].app.received > 0));
    let isn = log.borrow()[0].0; // the SYN
    let data_seq = |i: u64| isn.wrapping_add(1 + i as u32);
    let high = log.borrow().iter().filter(|e| e.1 > 0).count() as u64 * MSS;
    let req = |flags: u8, seq: u32, length: u16, blocks: &[RequestBlock]| {
        let mut r = RcpRepr {
            src_port: 5000,
            dst_port: 5000,
            seq,
            ack: data_seq(0),
            flags: RcpFlags(RcpFlags::REQ | RcpFlags::ACK | flags),
            length,
            ..RcpRepr::default()
        };
        for (i, b) in blocks.iter().enumerate() {
            r.blocks[i] = *b;
        }
        r.block_count = blocks.len() as u8;
        let mut out = Vec::new();
        r.emit(&[], &mut out);
        out
    };
    let inject = |p: &mut Pair, pkt: Vec<u8>| -> Vec<(u32, usize, u8)> {
        let n = log.borrow().len();
        let from = p.hosts[RECEIVER].addr;
        p.agents[SENDER].on_packet(&mut p.hosts[SENDER], from, &pkt);
        p.flush(SENDER);
        log.borrow()[n..].to_vec()
    };
    // Pull: exactly the one block, even far below SND.NXT.
    let b = RequestBlock {
        start: data_seq(MSS),
        end: data_seq(2 * MSS),
    };
    let sent = inject(&mut p, req(RcpFlags::PUL, b.start, MSS as u16, &[]));
    assert_eq!(
        sent,
        vec![(b.start, MSS as usize, RcpFlags::LIM | RcpFlags::FIN)]
    );
    // Cumulative at or below SND.NXT: nothing again.
    let sent = inject(&mut p, req(0, data_seq(MSS), 0, &[b]));
    assert!(sent.iter().all(|e| e.1 == 0), "{sent:?}");
    // A REQ whose blocks name a pull never served: the sender serves it.
    let lost = RequestBlock {
        start: data_seq(3 * MSS),
        end: data_seq(4 * MSS),
    };
    let sent = inject(&mut p, req(0, data_seq(MSS), 0, &[lost, b]));
    assert_eq!(sent[0].0, lost.start);
    assert_eq!(sent[0].1, MSS as usize);
    // Cumulative beyond SND.NXT: new data from SND.NXT on.
    let sent = inject(&mut p, req(0, data_seq(high + 3 * MSS), 0, &[lost, b]));
    let data: Vec<_> = sent.iter().filter(|e| e.1 > 0).collect();
    assert!(!data.is_empty());
    assert!(data
        .iter()
        .all(|e| e.0.wrapping_sub(isn) as u64 > high - MSS));
}

#[test]
fn eln_recovers_wireless_losses_without_cutting_the_window() {
    let cfg = RcpConfig {
        eln: true,
        ..RcpConfig::default()
    };
    let mut p = pair(cfg, 400_000);
    let mut data = 0;
    p.raw_script = Box::new(move |dir, _, pkt| {
        let (_, _, len) = kind(pkt);
        if dir == SENDER && len > 0 {
            data += 1;
            if [40, 44, 48, 52, 65, 68, 71].contains(&data) {
                return Fate::DropNotified;
            }
        }
        Fate::Deliver
    });
    p.start();
    assert!(p.run_until_closed(LIMIT));
    p.assert_delivered();
    assert_eq!(g(&p, "eln_recoveries"), 7);
    assert_eq!(
        p.agents[RECEIVER].stats().fast_recoveries,
        0,
        "no window cut"
    );
    assert_eq!(
        p.agents[RECEIVER].gauge("ssthresh"),
        Some((1u64 << 53) as f64)
    );
}

#[test]
fn power_save_sleeps_while_the_channel_is_bad_and_resumes_from_the_holes() {
    let cfg = RcpConfig {
        power_save: Some(PowerSave::default()),
        ..RcpConfig::default()
    };
    let mut p = pair(cfg, 3_000_000);
    p.link.rate_bps = 2_000_000;
    p.start();
    p.run_until_cond(LIMIT, |p| p.now >= Time::from_secs(2));
    p.hosts[RECEIVER].loss_estimate = Some(0.1);
    let got = p.hosts[RECEIVER].app.received;
    p.run_until_cond(LIMIT, |p| p.now >= Time::from_secs(5));
    assert_eq!(g(&p, "sleeping"), 1);
    // Asleep but for the 2 ms beacons.
    let mut asleep = 0;
    for _ in 0..200 {
        p.step();
        asleep += (p.hosts[RECEIVER].mode == RadioMode::Sleep) as u32;
    }
    // Steps alternate between waking for a beacon and falling asleep.
    assert!(asleep >= 99, "{asleep}");
    assert!(
        p.hosts[RECEIVER].app.received < got + 200_000,
        "little moves while asleep"
    );
    p.hosts[RECEIVER].loss_estimate = Some(0.0);
    assert!(p.run_until_closed(LIMIT));
    p.assert_delivered();
    assert_eq!(g(&p, "sleep_periods"), 1);
    assert_eq!(
        p.agents[RECEIVER].stats().timeouts,
        0,
        "timers are frozen while asleep"
    );
}

#[test]
fn a_small_sender_buffer_puts_the_receiver_in_persist_mode() {
    let cfg = RcpConfig {
        send_buffer: 8 * 1024,
        ..RcpConfig::default()
    };
    let mut p = pair(cfg, 200_000);
    p.start();
    assert!(p.run_until_closed(LIMIT));
    p.assert_delivered();
}

#[test]
fn malformed_packets_are_counted_and_dropped() {
    let mut p = pair(RcpConfig::default(), 10_000);
    p.start();
    let junk: [&[u8]; 4] = [&[], &[1, 2, 3], &[0u8; 20], &[0xff; 40]];
    for j in junk {
        for i in [SENDER, RECEIVER] {
            let from = p.hosts[1 - i].addr;
            p.agents[i].on_packet(&mut p.hosts[i], from, j);
        }
    }
    assert_eq!(p.agents[SENDER].stats().malformed_dropped, 4);
    assert_eq!(p.agents[RECEIVER].stats().malformed_dropped, 4);
    assert!(p.run_until_closed(LIMIT));
    p.assert_delivered();
}

#[test]
fn a_binding_receive_buffer_still_requests_whole_segments() {
    // 64 KiB is no multiple of the MSS; the buffer bounds every request.
    let cfg = RcpConfig {
        recv_buffer: 64 * 1024,
        ..RcpConfig::default()
    };
    let bytes = 1_000 * MSS;
    let mut p = pair(cfg, bytes);
    p.link.rate_bps = 2_000_000;
    let sizes = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let seen = sizes.clone();
    p.raw_script = Box::new(move |dir, _, pkt| {
        let (_, _, len) = kind(pkt);
        if dir == SENDER && len > 0 {
            seen.borrow_mut().push(len as u64);
        }
        Fate::Deliver
    });
    p.start();
    assert!(p.run_until_closed(LIMIT));
    p.assert_delivered();
    let sizes = sizes.borrow();
    assert_eq!(sizes.len() as u64, bytes / MSS, "no segment split in two");
    assert!(sizes.iter().all(|&n| n == MSS));
}

#[test]
fn losses_found_while_a_lost_pull_is_repaired_do_not_cut_again() {
    // Segment 40 is lost, then its first pull too; while it is repaired
    // (RCV.NXT stuck, requests going on above it), segments 95 and 96
    // are lost. As in RFC 6675, the recovery is one episode: one cut.
    let mut p = pair(RcpConfig::default(), 400_000);
    p.link.rate_bps = 2_000_000;
    let mut firsts = 0;
    let mut copies_of_40 = 0;
    let mut seq_40 = None;
    let mut seen = std::collections::HashSet::new();
    p.raw_script = Box::new(move |dir, _, pkt| {
        let (_, seq, len) = kind(pkt);
        if dir != SENDER || len == 0 {
            return Fate::Deliver;
        }
        if seen.insert(seq) {
            firsts += 1;
            if firsts == 40 {
                seq_40 = Some(seq);
            }
            if [95, 96].contains(&firsts) {
                return Fate::Drop;
            }
        }
        if seq_40 == Some(seq) {
            copies_of_40 += 1;
            if copies_of_40 <= 2 {
                return Fate::Drop;
            }
        }
        Fate::Deliver
    });
    p.start();
    assert!(p.run_until_closed(LIMIT));
    p.assert_delivered();
    let r = p.agents[RECEIVER].stats();
    assert_eq!(r.timeouts, 0);
    assert_eq!(r.fast_recoveries, 1, "one cut for the episode");
}

#[test]
fn a_window_cut_never_raises_the_window_even_with_eln_holes_open() {
    use rand::{Rng, SeedableRng};
    // 10 % wireless losses (reported), 1 % congestion losses and 10 % REQ
    // losses: ELN holes stay open while requests go on above them.
    let cfg = RcpConfig {
        eln: true,
        ..RcpConfig::default()
    };
    let mut p = pair(cfg, 4_000_000);
    p.link.rate_bps = 2_000_000;
    let mut rng = rand_pcg::Pcg32::seed_from_u64(5);
    p.raw_script = Box::new(move |dir, _, pkt| {
        let (_, _, len) = kind(pkt);
        let x: f64 = rng.random();
        match (dir == SENDER && len > 0, x) {
            (true, x) if x < 0.10 => Fate::DropNotified,
            (true, x) if x < 0.11 => Fate::Drop,
            (false, x) if x < 0.10 => Fate::Drop,
            _ => Fate::Deliver,
        }
    });
    p.start();
    let (mut cuts, mut cwnd) = (0, g(&p, "cwnd"));
    let mut checked = 0;
    while !p.agents.iter().all(|a| a.is_closed()) && p.now < LIMIT {
        assert!(p.step());
        let now_cuts = p.agents[RECEIVER].stats().fast_recoveries;
        let now_cwnd = g(&p, "cwnd");
        if now_cuts > cuts {
            assert!(now_cwnd <= cwnd, "a cut raised cwnd {cwnd} -> {now_cwnd}");
            checked += 1;
        }
        (cuts, cwnd) = (now_cuts, now_cwnd);
    }
    p.assert_delivered();
    assert!(checked >= 3, "only {checked} cuts");
}

/// Karn's rule at the receiver, the slow tail of docs/reproduction/rcp.md:
/// the answer to a pulled segment may answer any request for it, so it is
/// no RTT sample, and after a timeout the RTO stays backed off — through
/// answered pulls — until a segment requested only once arrives. Here the
/// first REQ is lost (the opening exchange was the only sample, so the
/// first timeout waits the 200 ms floor), the pull of segment 0 is
/// answered, and the answers to the next two pulls are lost: the second
/// timeout waits 400 ms from that answer, not the 200 ms floor. The whole
/// first window is then pulled again with the RTO at 800 ms; the first new
/// request's data ends the backoff.
#[test]
fn answered_pulls_keep_the_rto_backed_off_until_a_once_requested_segment_arrives() {
    use std::cell::RefCell;
    use std::rc::Rc;
    let cfg = RcpConfig {
        min_rto: Duration::from_millis(200),
        ..RcpConfig::default()
    };
    let mut p = pair(cfg, 100_000);
    // (time, requested offset) of every pull; the first REQ's time.
    let pulls: Rc<RefCell<Vec<(Time, u64)>>> = Rc::default();
    let first_req: Rc<RefCell<Option<Time>>> = Rc::default();
    let (log, first) = (pulls.clone(), first_req.clone());
    let mut isn = 0u32;
    let mut lost_answers = Vec::new();
    p.raw_script = Box::new(move |dir, now, pkt| {
        let (flags, seq, len) = kind(pkt);
        let offset = seq.wrapping_sub(isn.wrapping_add(1)) as u64;
        match dir {
            SENDER if flags.has(RcpFlags::SYN) => isn = seq,
            // The first answer to each of the two pulls after segment 0.
            SENDER
                if len > 0
                    && [MSS, 2 * MSS].contains(&offset)
                    && !lost_answers.contains(&offset) =>
            {
                lost_answers.push(offset);
                return Fate::Drop;
            }
            RECEIVER if flags.has(RcpFlags::PUL) => log.borrow_mut().push((now, offset)),
            RECEIVER if flags.has(RcpFlags::REQ) && first.borrow().is_none() => {
                *first.borrow_mut() = Some(now);
                return Fate::Drop;
            }
            _ => {}
        }
        Fate::Deliver
    });
    p.start();
    let first_window = 10 * MSS;
    assert!(p.run_until_cond(LIMIT, |p| p.hosts[RECEIVER].app.received >= first_window));
    assert_eq!(g(&p, "rto_ms"), 800, "pulls answered, still backed off");
    assert!(p.run_until_closed(LIMIT));
    p.assert_delivered();
    assert_eq!(g(&p, "rto_ms"), 200, "a once-requested arrival ends it");
    assert_eq!(p.agents[RECEIVER].stats().timeouts, 2);
    let pulls = pulls.borrow();
    let first_req = first_req.borrow().expect("a first REQ");
    assert_eq!(pulls[0], (first_req + Duration::from_millis(200), 0));
    let of_mss: Vec<Time> = pulls.iter().filter(|e| e.1 == MSS).map(|e| e.0).collect();
    assert_eq!(of_mss.len(), 2, "{pulls:?}");
    assert_eq!(
        of_mss[1].saturating_since(of_mss[0]),
        Duration::from_millis(400)
    );
}

/// Steps until the receiver is established. Returns the time from its
/// first SYN+ACK to then, and how many SYN+ACKs it sent.
fn establish_receiver(
    p: &mut Pair,
    lose: impl Fn(RcpFlags, usize) -> bool + 'static,
) -> (Duration, usize) {
    use std::cell::RefCell;
    use std::rc::Rc;
    let syn_acks: Rc<RefCell<Vec<Time>>> = Rc::default();
    let log = syn_acks.clone();
    let mut losses = 0;
    p.raw_script = Box::new(move |dir, now, pkt| {
        let (flags, _, len) = kind(pkt);
        if dir == RECEIVER && flags.has(RcpFlags::SYN) {
            log.borrow_mut().push(now);
        }
        if losses == 0 && lose(flags, dir) && len == 0 {
            losses += 1;
            return Fate::Drop;
        }
        Fate::Deliver
    });
    p.start();
    let established = |p: &Pair| {
        p.hosts[RECEIVER]
            .events
            .iter()
            .any(|e| e.1 == joulenet_proto::TransportEvent::Established)
    };
    assert!(p.run_until_cond(LIMIT, established));
    let syn_acks = syn_acks.borrow();
    (p.now.saturating_since(syn_acks[0]), syn_acks.len())
}

/// The receiver runs TCP's sender's RTO, so it takes TCP's first sample
/// too (RFC 6298 §2–3, the TCP agent's `syn_acked`): the opening exchange,
/// from its SYN+ACK to the sender's ACK. The first REQ then runs on a
/// measured RTO (SRTT + 4·SRTT/2, floored at `min_rto`), not the 1 s
/// initial one — which is what a lost first REQ waits otherwise.
#[test]
fn a_clean_opening_exchange_is_the_receivers_first_rtt_sample() {
    let cfg = RcpConfig {
        min_rto: Duration::from_millis(200),
        ..RcpConfig::default()
    };
    // 100 ms each way: 3·RTT is above min_rto; 10 ms: below it.
    for (delay_ms, rto_ms) in [(100.0, None), (10.0, Some(200.0))] {
        let mut p = pair(cfg.clone(), 100_000);
        p.link.delay = Duration::from_millis(delay_ms as u64);
        let (rtt, syn_acks) = establish_receiver(&mut p, |_, _| false);
        assert_eq!(syn_acks, 1);
        assert!(rtt >= Duration::from_millis(2 * delay_ms as u64), "{rtt:?}");
        let r = &p.agents[RECEIVER];
        assert_eq!(r.stats().rtt.samples, 1, "delay {delay_ms} ms");
        assert_eq!(r.stats().rtt.smoothed, Some(rtt));
        let measured = Duration::from_nanos(rtt.0 + 4 * (rtt.0 / 2)).as_millis_f64();
        assert_eq!(r.gauge("rto_ms"), Some(rto_ms.unwrap_or(measured)));
        assert!(p.run_until_closed(LIMIT));
        p.assert_delivered();
    }
}

/// Karn's rule at set-up: once the SYN+ACK was sent again — after a lost
/// SYN+ACK (the sender repeats its SYN) or a lost ACK (the receiver's
/// handshake timer) — the ACK may answer either sending: no sample, and
/// the RTO stays the initial 1 s.
#[test]
fn a_resent_syn_ack_gives_no_rtt_sample() {
    let cfg = RcpConfig {
        min_rto: Duration::from_millis(200),
        ..RcpConfig::default()
    };
    fn syn_ack(f: RcpFlags, dir: usize) -> bool {
        dir == RECEIVER && f.has(RcpFlags::SYN)
    }
    fn ack(f: RcpFlags, dir: usize) -> bool {
        dir == SENDER && f.has(RcpFlags::ACK) && !f.has(RcpFlags::SYN)
    }
    type Lose = fn(RcpFlags, usize) -> bool;
    let cases: [(&str, Lose); 2] = [("SYN+ACK", syn_ack), ("ACK", ack)];
    for (lost, lose) in cases {
        let mut p = pair(cfg.clone(), 100_000);
        let (since_first, syn_acks) = establish_receiver(&mut p, lose);
        assert!(syn_acks >= 2, "lost {lost}");
        assert!(since_first > Duration::from_secs(1), "lost {lost}");
        let r = &p.agents[RECEIVER];
        assert_eq!(r.stats().rtt.samples, 0, "lost {lost}");
        assert_eq!(r.gauge("srtt_ms"), None, "lost {lost}");
        assert_eq!(r.gauge("rto_ms"), Some(1000.0), "lost {lost}");
        assert!(p.run_until_closed(LIMIT));
        p.assert_delivered();
    }
}

/// Each requested segment once per REQ. A REQ's blocks are the receiver's
/// pulls *before* it, so when a pull's REQ is lost and the segment is
/// pulled again, the new REQ names it twice — as its first block, which
/// the cyclic buffer lacks, and as the pull itself. Here the first REQ is
/// lost, so the timeout pulls segment 0; that REQ is lost too, and the
/// next timeout pulls segment 0 again with block [segment 0].
#[test]
fn a_pull_repeated_after_a_lost_pull_is_answered_once() {
    use std::cell::RefCell;
    use std::rc::Rc;
    let cfg = RcpConfig {
        min_rto: Duration::from_millis(200),
        ..RcpConfig::default()
    };
    let mut p = pair(cfg, 100_000);
    // Send times of the data packets carrying segment 0.
    let copies: Rc<RefCell<Vec<Time>>> = Rc::default();
    let log = copies.clone();
    let (mut isn, mut reqs, mut pulls) = (0u32, 0, 0);
    p.raw_script = Box::new(move |dir, now, pkt| {
        let (r, payload) = wire::parse(pkt).expect("agents emit valid packets");
        match dir {
            SENDER if r.flags.has(RcpFlags::SYN) => isn = r.seq,
            SENDER if !payload.is_empty() && r.seq == isn.wrapping_add(1) => {
                log.borrow_mut().push(now);
            }
            RECEIVER if r.flags.has(RcpFlags::REQ) => {
                reqs += 1;
                if r.flags.has(RcpFlags::PUL) {
                    pulls += 1;
                    if pulls == 2 {
                        // It names the lost pull and repeats it.
                        assert_eq!(r.seq, isn.wrapping_add(1));
                        assert_eq!(r.blocks()[0].start, r.seq);
                    }
                }
                if reqs == 1 || pulls == 1 {
                    return Fate::Drop;
                }
            }
            _ => {}
        }
        Fate::Deliver
    });
    p.start();
    assert!(p.run_until_closed(LIMIT));
    p.assert_delivered();
    assert_eq!(p.agents[RECEIVER].stats().timeouts, 2);
    assert_eq!(
        copies.borrow().len(),
        1,
        "segment 0 sent at {:?}",
        copies.borrow()
    );
}

/// At 20 % random loss each way (the slow tail's condition), no REQ is
/// answered with a segment twice: packets sent at one instant answer one
/// REQ (REQs arrive one at a time), so no (time, segment) pair repeats.
#[test]
fn no_req_is_answered_with_a_segment_twice_at_20_percent_loss() {
    use rand::{Rng, SeedableRng};
    use std::cell::Cell;
    use std::collections::HashSet;
    use std::rc::Rc;
    let cfg = RcpConfig {
        min_rto: Duration::from_millis(200),
        mss: 1400,
        ..RcpConfig::default()
    };
    let repeats: Rc<Cell<u32>> = Rc::default();
    for seed in 0..20 {
        let mut p = pair(cfg.clone(), 100_000);
        let mut rng = rand_pcg::Pcg32::seed_from_u64(seed);
        let mut sent = HashSet::new();
        let count = repeats.clone();
        p.raw_script = Box::new(move |dir, now, pkt| {
            let (_, seq, len) = kind(pkt);
            if dir == SENDER && len > 0 && !sent.insert((now, seq)) {
                count.set(count.get() + 1);
            }
            if rng.random::<f64>() < 0.2 {
                Fate::Drop
            } else {
                Fate::Deliver
            }
        });
        p.start();
        assert!(p.run_until_closed(Time::from_secs(600)), "seed {seed}");
        p.assert_delivered();
    }
    assert_eq!(repeats.get(), 0);
}

/// A pull far beyond the sender's limit (an R²CP pipe asking ahead of
/// what the sender offered) is not served by reading the application
/// further: the send buffer keeps its size. It used to grow for good to
/// reach the pull, here to 3 MB for a 64 KiB buffer.
#[test]
fn a_pull_past_the_limit_does_not_grow_the_send_buffer() {
    use joulenet_wire::rcp::RcpRepr;
    let cfg = RcpConfig {
        send_buffer: 64 * 1024,
        ..RcpConfig::default()
    };
    let mut p = pair(cfg, 5_000_000);
    let isn: std::rc::Rc<std::cell::Cell<Option<u32>>> = Default::default();
    let seen = isn.clone();
    p.raw_script = Box::new(move |dir, _, pkt| {
        let (flags, seq, _) = kind(pkt);
        if dir == SENDER && flags.has(RcpFlags::SYN) {
            seen.set(Some(seq));
        }
        Fate::Deliver
    });
    p.start();
    assert!(p.run_until_cond(LIMIT, |p| p.hosts[RECEIVER].app.received > 0));
    let data_seq = |i: u64| isn.get().unwrap().wrapping_add(1 + i as u32);
    let pull = RcpRepr {
        src_port: 5000,
        dst_port: 5000,
        seq: data_seq(3_000_000),
        ack: data_seq(0),
        flags: RcpFlags(RcpFlags::REQ | RcpFlags::ACK | RcpFlags::PUL),
        length: MSS as u16,
        ..RcpRepr::default()
    };
    let mut out = Vec::new();
    pull.emit(&[], &mut out);
    let sent = p.agents[SENDER].stats().data_packets;
    let from = p.hosts[RECEIVER].addr;
    p.agents[SENDER].on_packet(&mut p.hosts[SENDER], from, &out);
    p.flush(SENDER);
    let buffered = p.agents[SENDER].gauge("snd_buf").unwrap();
    assert!(buffered <= 64.0 * 1024.0, "send buffer {buffered} B");
    assert_eq!(
        p.agents[SENDER].stats().data_packets,
        sent,
        "nothing past the limit"
    );
    assert!(p.run_until_closed(LIMIT));
    p.assert_delivered();
}

#[test]
fn the_sender_outlasts_a_receiver_whose_requests_are_all_lost_for_a_while() {
    // Every packet from the receiver lost from 0.5 s to 20.5 s: ten maximum
    // RTOs of silence at the sender, fewer timeouts than the receiver's
    // limit. The sender must still be there when the requests get through.
    let cfg = RcpConfig {
        max_rto: Duration::from_secs(2),
        ..RcpConfig::default()
    };
    let mut p = pair(cfg, 400_000);
    p.link.rate_bps = 1_000_000;
    p.raw_script = Box::new(move |dir, now, _| {
        let blackout = Time::from_millis(500)..Time::from_millis(20_500);
        if dir == RECEIVER && blackout.contains(&now) {
            Fate::Drop
        } else {
            Fate::Deliver
        }
    });
    p.start();
    assert!(p.run_until_closed(LIMIT));
    p.assert_delivered();
    assert!(p.agents[RECEIVER].stats().timeouts >= 5);
}
