//! The aggregate goodput is physics-bound: whatever the flows' sizes and
//! start times, the bits all flows delivered over their common interval
//! never exceed what a shared bottleneck can carry (summing each flow's
//! own goodput did: flows taking turns each ran near the bottleneck's rate).

mod common;

use common::run_seed;
use proptest::prelude::*;

const BOTTLENECK_BPS: f64 = 2e6;

fn dumbbell(flows: &[(u64, u64)]) -> String {
    let mut text = format!(
        r#"
stop = "120s"
[topology]
kind = "dumbbell"
pairs = {pairs}
[topology.access]
rate = "20Mbps"
delay = "1ms"
[topology.bottleneck]
rate = "2Mbps"
delay = "5ms"
queue = 50
[flow]
protocol = "newreno"
"#,
        pairs = flows.len()
    );
    for (i, (kb, start_ms)) in flows.iter().enumerate() {
        text.push_str(&format!(
            "[[flows]]\nfrom = \"s{i}\"\nto = \"r{i}\"\nbytes = \"{kb}kB\"\nstart = \"{start_ms}ms\"\n"
        ));
    }
    text
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn aggregate_goodput_never_exceeds_the_bottleneck(
        flows in prop::collection::vec((10u64..400, 0u64..6000), 2..5),
        seed in 1u64..1000,
    ) {
        let r = run_seed(&dumbbell(&flows), seed);
        prop_assert!(r.flows.iter().all(|f| f.completed), "{:?}", r.flows);
        let agg = r.summary.aggregate_goodput_bps;
        prop_assert!(agg > 0.0);
        prop_assert!(
            agg <= BOTTLENECK_BPS,
            "aggregate {agg} bit/s over a {BOTTLENECK_BPS} bit/s bottleneck"
        );
        // Each flow alone stays under the bottleneck too.
        for f in &r.flows {
            prop_assert!(f.goodput_bps <= BOTTLENECK_BPS, "{f:?}");
        }
    }
}

/// Flows one after another: the old sum of per-flow goodputs reported
/// about three times the bottleneck; bits over the common interval cannot.
#[test]
fn flows_taking_turns_are_not_counted_as_running_at_once() {
    let r = run_seed(&dumbbell(&[(200, 0), (200, 3000), (200, 6000)]), 1);
    let sum: f64 = r.flows.iter().map(|f| f.goodput_bps).sum();
    assert!(sum > BOTTLENECK_BPS, "the turns did not separate: {sum}");
    assert!(r.summary.aggregate_goodput_bps < BOTTLENECK_BPS);
}
