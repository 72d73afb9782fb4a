//! Property: under arbitrary bounded loss of any packet in either
//! direction, RCP delivers every byte exactly once, in order, and closes.

mod common;

use common::pair::Fate;
use joulenet_proto::rcp::{RcpConfig, RcpReceiver, RcpSender};
use joulenet_proto::{Addr, Time};
use proptest::prelude::*;

type Pair = common::pair::Pair<Box<dyn joulenet_proto::Agent>>;

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]
    #[test]
    fn every_byte_once_in_order_under_loss(
        bytes in 1u64..120_000,
        seed in any::<u64>(),
        loss_pct in 0u64..30,
        stp in any::<bool>(),
    ) {
        let cfg = if stp { RcpConfig::stp() } else { RcpConfig::default() };
        let mut p = Pair::with_agents(
            Box::new(RcpSender::new(cfg.clone(), Addr::new(1, 5000))),
            Box::new(RcpReceiver::new(cfg)),
            bytes,
        );
        let mut x = seed | 1;
        let mut count = 0u64;
        p.raw_script = Box::new(move |_, t, _| {
            count += 1;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Bounded: after 3000 packets or 30 s the link heals, so the
            // transfer must finish (an unbounded loss may legitimately
            // exhaust the retry budget and abort, as TCP does).
            let lossy = count < 3000 && t < Time::from_secs(30);
            if lossy && x % 100 < loss_pct { Fate::Drop } else { Fate::Deliver }
        });
        p.start();
        prop_assert!(p.run_until_closed(Time::from_secs(3600)));
        p.assert_delivered();
    }
}
