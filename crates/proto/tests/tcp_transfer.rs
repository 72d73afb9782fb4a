//! End-to-end behaviour of every TCP variant over the test pair.

mod common;

use common::pair::{Fate, Pair, CLIENT, SERVER};
use joulenet_proto::tcp::{TcpConfig, TcpVariant};
use joulenet_proto::{Agent, Time};

const LIMIT: Time = Time::from_secs(120);

#[test]
fn every_variant_transfers_without_loss() {
    for v in TcpVariant::ALL {
        let mut p = Pair::one_way(TcpConfig::new(v), 200_000);
        p.start();
        assert!(p.run_until_closed(LIMIT), "{v} did not close");
        p.assert_complete();
        let s = p.agents[CLIENT].stats();
        assert_eq!(s.retransmitted_packets, 0, "{v}");
        assert_eq!(s.timeouts, 0, "{v}");
        assert_eq!(s.payload_bytes, 200_000, "{v}");
        assert!(s.rtt.samples > 0 && s.rtt.smoothed.is_some(), "{v}");
    }
}

#[test]
fn every_variant_recovers_scattered_losses() {
    for v in TcpVariant::ALL {
        let drops = [5u64, 20, 21, 22, 60, 61, 100];
        let mut p = Pair::one_way(TcpConfig::new(v), 300_000).script(move |pk| {
            match (pk.dir, pk.data_index) {
                (CLIENT, Some(k)) if drops.contains(&k) => Fate::Drop,
                _ => Fate::Deliver,
            }
        });
        p.start();
        assert!(p.run_until_closed(LIMIT), "{v} did not close");
        p.assert_complete();
        assert!(
            p.agents[CLIENT].stats().retransmitted_packets >= drops.len() as u64,
            "{v}"
        );
    }
}

#[test]
fn both_directions_carry_data_at_once() {
    for v in TcpVariant::ALL {
        let cfg = TcpConfig::new(v);
        let mut p = Pair::new(cfg.clone(), cfg, 80_000, 120_000).script(|pk| match pk.data_index {
            Some(k) if k % 17 == 3 && k < 60 => Fate::Drop,
            _ => Fate::Deliver,
        });
        p.start();
        assert!(p.run_until_closed(LIMIT), "{v} did not close");
        p.assert_complete();
        assert_eq!(p.agents[SERVER].stats().payload_bytes, 120_000);
    }
}

#[test]
fn window_scale_lets_the_advertised_window_cover_the_buffer() {
    // The SYN's window is never scaled; the first ACK after it is.
    let mut p = Pair::one_way(TcpConfig::new(TcpVariant::Cubic), 100_000);
    p.start();
    p.run_until(Time::from_millis(25));
    assert_eq!(p.agents[CLIENT].gauge("rwnd"), Some(65_535.0));
    p.run_until(Time::from_millis(60));
    // Our default receive buffer is 1 MiB: shift 5, 32 768 · 32.
    assert_eq!(p.agents[CLIENT].gauge("rwnd"), Some(1_048_576.0));
    let mut small = TcpConfig::new(TcpVariant::Cubic);
    small.recv_buffer = 20_000;
    let mut p = Pair::new(TcpConfig::new(TcpVariant::Cubic), small, 100_000, 0);
    p.start();
    p.run_until(Time::from_millis(60));
    assert_eq!(p.agents[CLIENT].gauge("rwnd"), Some(20_000.0));
    for g in ["cwnd", "ssthresh", "srtt_ms", "rto_ms", "flight"] {
        assert!(p.agents[CLIENT].gauge(g).is_some(), "{g}");
    }
    assert_eq!(p.agents[CLIENT].gauge("nonsense"), None);
}

#[test]
fn sack_blocks_are_sent_only_when_negotiated() {
    for v in TcpVariant::ALL {
        let mut p = Pair::one_way(TcpConfig::new(v), 100_000).script(|pk| match pk.data_index {
            Some(12) => Fate::Drop,
            _ => Fate::Deliver,
        });
        p.start();
        assert!(p.run_until_closed(LIMIT));
        let sacks = p.sent_by(SERVER).filter(|i| i.sack_blocks > 0).count();
        assert_eq!(
            sacks > 0,
            v.uses_sack(),
            "{v}: {sacks} ACKs with SACK blocks"
        );
    }
}
