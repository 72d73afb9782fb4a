//! Hostile and unlucky inputs: malformed packets, strangers, duplicates,
//! small buffers, and arbitrary loss patterns.

mod common;

use common::pair::{Fate, Pair, CLIENT, SERVER};
use joulenet_proto::tcp::{TcpConfig, TcpVariant};
use joulenet_proto::{Addr, Agent, Time};
use joulenet_wire::tcp::{TcpFlags, TcpOptions, TcpRepr};
use proptest::prelude::*;

const LIMIT: Time = Time::from_secs(120);

fn segment(src_port: u16, dst_port: u16, flags: TcpFlags, ack: Option<u32>) -> Vec<u8> {
    let repr = TcpRepr {
        src_port,
        dst_port,
        seq: 12345,
        ack,
        flags,
        window: 1000,
        options: TcpOptions {
            mss: Some(1000),
            ..TcpOptions::default()
        },
        payload: b"stranger",
    };
    let mut buf = Vec::new();
    repr.emit_to_vec(&mut buf);
    buf
}

#[test]
fn malformed_packets_are_counted_and_ignored() {
    let mut p = Pair::one_way(TcpConfig::new(TcpVariant::Sack), 100_000);
    p.start();
    p.run_until(Time::from_millis(40));
    let mut bad_offset = segment(1000, 80, TcpFlags::default(), Some(1));
    bad_offset[12] = 3 << 4;
    let mut bad_option = segment(1000, 80, TcpFlags::default(), Some(1));
    bad_option[12] = 6 << 4;
    bad_option[20..24].copy_from_slice(&[5, 3, 0, 0]); // SACK of length 3
    let garbage: [&[u8]; 4] = [&[], &[0x45; 7], &bad_offset, &bad_option];
    for g in garbage {
        p.inject(SERVER, g);
        p.inject(CLIENT, g);
    }
    assert_eq!(p.agents[SERVER].stats().malformed_dropped, 4);
    assert_eq!(p.agents[CLIENT].stats().malformed_dropped, 4);
    assert!(p.run_until_closed(LIMIT));
    p.assert_complete();
}

#[test]
fn strangers_and_wrong_ports_are_dropped() {
    let mut p = Pair::one_way(TcpConfig::new(TcpVariant::NewReno), 100_000);
    p.start();
    p.run_until(Time::from_millis(40));
    let syn = TcpFlags {
        syn: true,
        ..TcpFlags::default()
    };
    // A second client tries to connect to the busy server.
    p.inject_from(SERVER, Addr::new(7, 1000), &segment(1000, 80, syn, None));
    // The right peer, the wrong ports.
    p.inject(SERVER, &segment(1000, 81, TcpFlags::default(), Some(1)));
    p.inject(SERVER, &segment(999, 80, TcpFlags::default(), Some(1)));
    // A blind reset far outside the window.
    let rst = TcpFlags {
        rst: true,
        ..TcpFlags::default()
    };
    p.inject(CLIENT, &segment(80, 1000, rst, None));
    assert_eq!(p.agents[SERVER].stats().unexpected_dropped, 3);
    assert_eq!(p.agents[CLIENT].stats().unexpected_dropped, 1);
    assert!(p.run_until_closed(LIMIT));
    p.assert_complete();
}

#[test]
fn duplicated_segments_are_delivered_once() {
    for v in TcpVariant::ALL {
        let cfg = TcpConfig::new(v);
        let mut p = Pair::new(cfg.clone(), cfg, 60_000, 40_000).script(|pk| match pk.index % 3 {
            0 => Fate::Duplicate,
            _ => Fate::Deliver,
        });
        p.start();
        assert!(p.run_until_closed(LIMIT), "{v}");
        p.assert_complete();
        assert!(p.agents[SERVER].stats().unexpected_dropped > 0, "{v}");
    }
}

#[test]
fn small_receive_buffer_bounds_reassembly_under_loss() {
    for v in TcpVariant::ALL {
        let mut cfg = TcpConfig::new(v);
        cfg.recv_buffer = 6 * 1460;
        let mut p = Pair::one_way(cfg, 100_000).script(|pk| match pk.data_index {
            Some(k) if k % 11 == 4 => Fate::Drop,
            _ => Fate::Deliver,
        });
        p.start();
        assert!(p.run_until_closed(LIMIT), "{v}");
        p.assert_complete();
    }
}

#[test]
fn timestamps_negotiate_and_give_rtt_samples() {
    let mut cfg = TcpConfig::new(TcpVariant::Cubic);
    cfg.timestamps = true;
    let mut p = Pair::one_way(cfg, 100_000).script(|pk| match pk.data_index {
        Some(7) => Fate::Drop,
        _ => Fate::Deliver,
    });
    p.start();
    assert!(p.run_until_closed(LIMIT));
    p.assert_complete();
    let rtt = p.agents[CLIENT].stats().rtt;
    assert!(rtt.samples > 10 && rtt.min.unwrap() >= joulenet_proto::Duration::from_millis(20));
}

#[test]
fn peer_without_sack_makes_sack_variants_fall_back() {
    let mut server = TcpConfig::new(TcpVariant::NewReno);
    server.sack = false;
    let mut p =
        Pair::new(TcpConfig::new(TcpVariant::Sack), server, 100_000, 0).script(|pk| {
            match (pk.dir, pk.data_index) {
                (CLIENT, Some(30 | 32)) => Fate::Drop,
                _ => Fate::Deliver,
            }
        });
    p.start();
    assert!(p.run_until_closed(LIMIT));
    p.assert_complete();
    assert!(p.log.iter().all(|(pk, _)| pk.sack_blocks == 0));
    assert_eq!(p.agents[CLIENT].stats().timeouts, 0);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn any_loss_pattern_delivers_everything_once_and_closes(
        variant in 0usize..5,
        drops in proptest::collection::btree_set((0usize..2, 0u64..120), 0..8),
        client_bytes in 1u64..60_000,
        server_bytes in 0u64..20_000,
    ) {
        let cfg = TcpConfig::new(TcpVariant::ALL[variant]);
        let mut p = Pair::new(cfg.clone(), cfg, client_bytes, server_bytes)
            .script(move |pk| if drops.contains(&(pk.dir, pk.index)) { Fate::Drop } else { Fate::Deliver });
        p.start();
        prop_assert!(p.run_until_closed(Time::from_secs(600)), "did not close by {:?}", p.now);
        p.assert_complete();
    }
}

#[test]
fn replayed_old_segment_is_not_delivered_again() {
    let mut p = Pair::one_way(TcpConfig::new(TcpVariant::Sack), 200_000);
    p.start();
    p.run_until(Time::from_millis(200));
    let first = *p.sent_by(CLIENT).find(|i| i.payload_len > 0).unwrap();
    let payload: Vec<u8> = (0..first.payload_len as u64)
        .map(common::pair::byte)
        .collect();
    let repr = TcpRepr {
        src_port: 1000,
        dst_port: 80,
        seq: first.seq,
        ack: first.ack,
        flags: TcpFlags::default(),
        window: 1000,
        options: TcpOptions::default(),
        payload: &payload,
    };
    let mut replay = Vec::new();
    repr.emit_to_vec(&mut replay);
    let before = p.agents[SERVER].stats().unexpected_dropped;
    p.inject(SERVER, &replay);
    assert_eq!(p.agents[SERVER].stats().unexpected_dropped, before + 1);
    assert!(p.run_until_closed(LIMIT));
    p.assert_complete();
}
