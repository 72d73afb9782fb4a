//! Energy equals power integrated over time, for hand-built schedules.

use super::*;
use proptest::prelude::*;

fn ms(n: u64) -> Time {
    Time::from_millis(n)
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

fn wavelan() -> RadioProfile {
    RadioProfile::preset("wavelan").unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0)
}

fn assert_close(actual: f64, expected: f64) {
    assert!(close(actual, expected), "got {actual}, expected {expected}");
}

fn assert_states_sum_to_total(report: &EnergyReport) {
    let sum = report.tx.joules
        + report.rx.joules
        + report.idle.joules
        + report.sleep.joules
        + report.off.joules
        + report.transition.joules;
    assert_close(report.total_j, sum);
}

#[test]
fn transmission_only() {
    let mut ledger = RadioLedger::new(wavelan(), RadioPolicy::AlwaysActive);
    ledger.add_tx(ms(1000), ms(2000));
    ledger.advance(ms(3000));
    let report = ledger.energy();
    assert_eq!(report.tx.seconds, 1.0);
    assert_close(report.tx.joules, 1.675);
    assert_close(report.idle.seconds, 2.0);
    assert_close(report.total_j, 1.675 + 2.0 * 1.425);
    assert_close(ledger.consumed_j(), report.total_j);
    assert_states_sum_to_total(&report);
}

#[test]
fn reception_only() {
    let mut ledger = RadioLedger::new(wavelan(), RadioPolicy::AlwaysActive);
    ledger.add_rx(ms(0), ms(500));
    ledger.advance(ms(500));
    let report = ledger.energy();
    assert_close(report.rx.joules, 0.5 * 1.425);
    assert_eq!(report.idle.seconds, 0.0);
    assert_eq!(report.tx.seconds, 0.0);
}

#[test]
fn transmitting_dominates_receiving_when_they_overlap() {
    let mut ledger = RadioLedger::new(wavelan(), RadioPolicy::AlwaysActive);
    ledger.add_tx(ms(1000), ms(3000));
    ledger.add_rx(ms(2000), ms(5000));
    ledger.add_tx(ms(2500), ms(2800)); // nested inside the first transmission
    ledger.advance(ms(6000));
    let report = ledger.energy();
    assert_close(report.tx.seconds, 2.0);
    assert_close(report.rx.seconds, 2.0);
    assert_close(report.idle.seconds, 2.0);
    assert_close(report.total_j, 2.0 * 1.675 + 2.0 * 1.425 + 2.0 * 1.425);
}

#[test]
fn out_of_order_registration_matches_in_order() {
    let mut in_order = RadioLedger::new(wavelan(), RadioPolicy::Ideal);
    in_order.add_rx(ms(10), ms(20));
    in_order.add_tx(ms(500), ms(600));
    let mut reversed = RadioLedger::new(wavelan(), RadioPolicy::Ideal);
    reversed.add_tx(ms(500), ms(600));
    reversed.add_rx(ms(10), ms(20));
    for ledger in [&mut in_order, &mut reversed] {
        ledger.advance(ms(15));
        ledger.add_rx(ms(700), ms(800)); // registered after an advance, ahead of time
        ledger.advance(ms(1000));
    }
    assert_eq!(in_order.energy(), reversed.energy());
}

#[test]
fn ideal_radio_sleeps_through_long_gaps_and_counts_the_wake_up() {
    let profile = wavelan();
    let wake = profile.sleep_to_idle;
    let mut ledger = RadioLedger::new(profile, RadioPolicy::Ideal);
    ledger.add_tx(ms(1000), ms(1001));
    ledger.advance(ms(1001));
    let report = ledger.energy();
    let gap = 1.0;
    assert_close(report.sleep.seconds, gap - secs(wake));
    assert_close(report.transition.seconds, secs(wake));
    assert_close(
        report.total_j,
        0.080 * (gap - secs(wake)) + 1.425 * secs(wake) + 0.001 * 1.675,
    );
    assert_eq!(report.wake_transitions, 1);
    assert_eq!(report.idle.seconds, 0.0);
}

#[test]
fn ideal_radio_idles_through_gaps_shorter_than_the_wake_up() {
    let mut ledger = RadioLedger::new(wavelan(), RadioPolicy::Ideal);
    ledger.add_tx(Time::from_micros(100), Time::from_micros(200)); // 100 µs gap < 250 µs
    ledger.advance(Time::from_micros(200));
    let report = ledger.energy();
    assert_close(report.idle.seconds, 100e-6);
    assert_eq!(report.sleep.seconds, 0.0);
    assert_eq!(report.wake_transitions, 0);
}

#[test]
fn ideal_radio_idles_when_sleeping_does_not_pay() {
    // Sleeping through g costs 0.5·(g − 1 ms) + 3·1 ms, idling costs g:
    // sleeping pays only for gaps longer than 5 ms.
    let profile = RadioProfile {
        name: "costly wake-up".into(),
        tx_w: 2.0,
        rx_w: 1.5,
        idle_w: 1.0,
        sleep_w: 0.5,
        off_w: 0.0,
        sleep_to_idle: Duration::from_millis(1),
        off_to_on: Duration::from_millis(1),
        transition_w: 3.0,
    };
    let energy_of_gap = |gap_ms: u64| {
        let mut ledger = RadioLedger::new(profile.clone(), RadioPolicy::Ideal);
        ledger.add_tx(ms(gap_ms), ms(gap_ms + 1));
        ledger.advance(ms(gap_ms));
        ledger.energy()
    };
    let short = energy_of_gap(4);
    assert_close(short.idle.seconds, 0.004);
    assert_close(short.total_j, 0.004);
    let long = energy_of_gap(6);
    assert_close(long.sleep.seconds, 0.005);
    assert_close(long.total_j, 0.5 * 0.005 + 3.0 * 0.001);
}

#[test]
fn intermediate_is_the_weighted_average_of_always_active_and_ideal() {
    let run = |policy| {
        let mut ledger = RadioLedger::new(wavelan(), policy);
        ledger.add_tx(ms(100), ms(200));
        ledger.add_rx(ms(150), ms(900));
        ledger.add_rx(Time::from_micros(900_100), ms(1000));
        ledger.add_tx(ms(3000), ms(3100));
        ledger.advance(ms(4000));
        ledger.energy()
    };
    let always = run(RadioPolicy::AlwaysActive);
    let ideal = run(RadioPolicy::Ideal);
    for w in [0.0, 0.25, 0.5, 1.0] {
        let mixed = run(RadioPolicy::Intermediate { active_weight: w });
        let blend = |a: f64, b: f64| w * a + (1.0 - w) * b;
        assert_close(mixed.total_j, blend(always.total_j, ideal.total_j));
        assert_close(
            mixed.idle.joules,
            blend(always.idle.joules, ideal.idle.joules),
        );
        assert_close(
            mixed.sleep.seconds,
            blend(always.sleep.seconds, ideal.sleep.seconds),
        );
        assert_states_sum_to_total(&mixed);
    }
    assert!(ideal.total_j < always.total_j);
}

#[test]
fn explicit_sleep_and_wake_charge_sleep_and_the_transition() {
    let mut ledger = RadioLedger::new(wavelan(), RadioPolicy::AlwaysActive);
    assert_eq!(ledger.set_mode(ms(1000), RadioMode::Sleep), Time::NEVER);
    assert_eq!(ledger.mode(), RadioMode::Sleep);
    assert!(!ledger.usable_at(ms(2000)));
    let usable = ledger.set_mode(ms(3000), RadioMode::Awake);
    assert_eq!(usable, ms(3000) + Duration::from_micros(250));
    assert!(!ledger.usable_at(ms(3000)));
    assert!(ledger.usable_at(usable));
    assert_eq!(ledger.set_mode(ms(3000), RadioMode::Awake), usable);
    ledger.advance(ms(4000));
    let report = ledger.energy();
    assert_close(report.idle.seconds, 1.0 + 1.0 - 250e-6);
    assert_close(report.sleep.joules, 2.0 * 0.080);
    assert_close(report.transition.seconds, 250e-6);
    assert_eq!(report.wake_transitions, 1);
    assert_states_sum_to_total(&report);
}

#[test]
fn off_costs_off_power_and_the_power_up_delay() {
    let mut ledger = RadioLedger::new(wavelan(), RadioPolicy::Ideal);
    ledger.add_tx(ms(0), ms(10));
    ledger.set_mode(ms(10), RadioMode::Off);
    let usable = ledger.set_mode(ms(1010), RadioMode::Awake);
    assert_eq!(usable, ms(1210));
    ledger.add_rx(usable, ms(1310));
    ledger.advance(ms(1310));
    let report = ledger.energy();
    assert_close(report.off.seconds, 1.0);
    assert_eq!(report.off.joules, 0.0);
    assert_close(report.transition.joules, 0.2 * 1.425);
    assert_close(report.total_j, 0.01 * 1.675 + 0.2 * 1.425 + 0.1 * 1.425);
}

#[test]
fn going_to_sleep_cuts_a_wake_up_short() {
    let mut ledger = RadioLedger::new(wavelan(), RadioPolicy::AlwaysActive);
    ledger.set_mode(ms(0), RadioMode::Off);
    ledger.set_mode(ms(100), RadioMode::Awake); // usable at 300 ms
    ledger.set_mode(ms(150), RadioMode::Sleep);
    ledger.advance(ms(250));
    let report = ledger.energy();
    assert_close(report.transition.seconds, 0.05);
    assert_close(report.sleep.seconds, 0.1);
    assert_close(report.off.seconds, 0.1);
}

#[test]
fn activity_while_asleep_is_charged_as_activity() {
    let mut ledger = RadioLedger::new(wavelan(), RadioPolicy::AlwaysActive);
    ledger.set_mode(ms(0), RadioMode::Sleep);
    ledger.add_rx(ms(100), ms(200));
    ledger.advance(ms(300));
    let report = ledger.energy();
    assert_close(report.rx.seconds, 0.1);
    assert_close(report.sleep.seconds, 0.2);
}

#[test]
fn max_power_bounds_every_state() {
    let ledger = RadioLedger::new(wavelan(), RadioPolicy::Ideal);
    assert_eq!(ledger.max_power_w(), 1.675);
}

/// One step of a random schedule: activity registered ahead of time, a
/// mode switch, or just time passing.
#[derive(Clone, Debug)]
enum Step {
    Tx { lead_us: u64, len_us: u64 },
    Rx { lead_us: u64, len_us: u64 },
    Mode(RadioMode),
    Wait { us: u64 },
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (0..5_000u64, 1..3_000u64).prop_map(|(lead_us, len_us)| Step::Tx { lead_us, len_us }),
        (0..5_000u64, 1..3_000u64).prop_map(|(lead_us, len_us)| Step::Rx { lead_us, len_us }),
        prop_oneof![
            Just(RadioMode::Awake),
            Just(RadioMode::Sleep),
            Just(RadioMode::Off)
        ]
        .prop_map(Step::Mode),
        (1..2_000u64).prop_map(|us| Step::Wait { us }),
    ]
}

/// Runs `steps`, advancing only when a step needs it, or also in
/// `slices` small steps across every wait.
fn run_schedule(steps: &[Step], policy: RadioPolicy, slices: u64) -> EnergyReport {
    let mut ledger = RadioLedger::new(RadioProfile::preset("80211b").unwrap(), policy);
    let mut now = Time::ZERO;
    for step in steps {
        match *step {
            Step::Tx { lead_us, len_us } => {
                let start = now + Duration::from_micros(lead_us);
                ledger.add_tx(start, start + Duration::from_micros(len_us));
            }
            Step::Rx { lead_us, len_us } => {
                let start = now + Duration::from_micros(lead_us);
                ledger.add_rx(start, start + Duration::from_micros(len_us));
            }
            Step::Mode(mode) => {
                ledger.set_mode(now, mode);
            }
            Step::Wait { us } => {
                let end = now + Duration::from_micros(us);
                for k in 1..slices {
                    ledger.advance(now + Duration::from_micros(us * k / slices));
                }
                now = end;
                if slices > 1 {
                    ledger.advance(now);
                }
            }
        }
    }
    ledger.advance(now + Duration::from_millis(10));
    ledger.energy()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn many_small_advances_equal_one_big_one(steps in prop::collection::vec(step(), 1..40)) {
        for policy in [RadioPolicy::AlwaysActive, RadioPolicy::Ideal, RadioPolicy::Intermediate { active_weight: 0.5 }] {
            let coarse = run_schedule(&steps, policy, 1);
            let fine = run_schedule(&steps, policy, 7);
            prop_assert_eq!(coarse, fine);
            assert_states_sum_to_total(&coarse);
        }
    }

    #[test]
    fn energy_lies_between_all_asleep_and_all_at_max_power(steps in prop::collection::vec(step(), 1..40)) {
        let report = run_schedule(&steps, RadioPolicy::Ideal, 1);
        let profile = RadioProfile::preset("80211b").unwrap();
        let elapsed = report.tx.seconds + report.rx.seconds + report.idle.seconds
            + report.sleep.seconds + report.off.seconds + report.transition.seconds;
        prop_assert!(report.total_j <= profile.max_power_w() * elapsed * (1.0 + 1e-12));
        prop_assert!(report.total_j >= 0.0);
    }
}

/// Under a per-packet model the radio draws idle power while it sends and
/// the frame's line on top; under the state model with a cross-factor it
/// draws transmit power and the fixed cost on top.
#[test]
fn frames_are_charged_on_top_of_their_baseline() {
    use super::super::{FrameModel, FrameRole};
    let airtime = Duration::from_millis(4);
    let run = |model: FrameModel| {
        let mut ledger = RadioLedger::new(wavelan(), RadioPolicy::AlwaysActive);
        ledger.set_frame_model(model);
        ledger.add_tx(Time::ZERO, Time::ZERO + airtime);
        ledger.add_frame(FrameRole::Send, 1000, airtime);
        ledger.advance(Time::ZERO + airtime);
        ledger.energy()
    };
    let fnm = run(FrameModel::preset("feeney-nilsson").unwrap());
    let expected = 1.425 * 0.004 + (1.9 * 1000.0 + 420.0) * 1e-6;
    assert!((fnm.tx.joules - expected).abs() < 1e-12, "{fnm:?}");
    assert_eq!(fnm.frames, 1);
    let cross = run(FrameModel::cross_factor(1e-3, 0.0));
    assert!((cross.tx.joules - (1.675 * 0.004 + 1e-3)).abs() < 1e-12);
    assert!((cross.total_j - cross.tx.joules).abs() < 1e-15);
    let plain = run(FrameModel::state());
    assert!((plain.tx.joules - 1.675 * 0.004).abs() < 1e-12);
    assert_eq!(plain.frame_j, 0.0);
}
