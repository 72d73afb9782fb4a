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
