//! Behaviour of the loss models as a link sees them.

use super::frame_error::bit_error_probability;
use super::*;
use joulenet_proto::Duration;
use rand::Rng;
use std::sync::Arc;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn frame_at(t: Time, bits: u64) -> FrameInfo {
    FrameInfo {
        tx_start: t,
        tx_end: t + Duration::from_micros(100),
        bits,
    }
}

fn ge(good: Sojourn, e_good: f64, bad: Sojourn, e_bad: f64) -> LossSpec {
    LossSpec::GilbertElliott {
        good: GeState {
            sojourn: good,
            loss: FrameError::Packet(e_good),
        },
        bad: GeState {
            sojourn: bad,
            loss: FrameError::Packet(e_bad),
        },
        start_bad: false,
    }
}

/// Standard deviation of the loss fraction measured over `frames` frames
/// spaced evenly over `horizon` seconds of a Gilbert–Elliott channel.
///
/// Two independent sources of noise add up:
/// * the frame draws: at most p̄(1 − p̄)/N;
/// * the channel: by the renewal-reward central limit theorem, the share of
///   time an alternating renewal process spends in the bad state over T has
///   variance (m_G²σ_B² + m_B²σ_G²)/((m_G + m_B)³·T), where m and σ² are the
///   sojourn means and variances; it moves the loss by (e_B − e_G) per unit.
///
/// Frames sample the channel at evenly spaced instants much closer together
/// than a sojourn, so their average tracks the continuous time share. The
/// start-state bias is O(m_B / T), negligible beside this.
fn ge_loss_sd(spec: &LossSpec, frames: u64, horizon: f64) -> f64 {
    let LossSpec::GilbertElliott { good, bad, .. } = spec else {
        unreachable!("only called with Gilbert–Elliott specs")
    };
    let (e_g, e_b) = (
        good.loss.packet_rate().unwrap(),
        bad.loss.packet_rate().unwrap(),
    );
    let (m_g, m_b) = (good.sojourn.mean_secs(), bad.sojourn.mean_secs());
    let (v_g, v_b) = (good.sojourn.variance_secs2(), bad.sojourn.variance_secs2());
    let share_var = (m_g * m_g * v_b + m_b * m_b * v_g) / ((m_g + m_b).powi(3) * horizon);
    let p = spec.stationary_loss().unwrap();
    ((e_b - e_g).powi(2) * share_var + p * (1.0 - p) / frames as f64).sqrt()
}

/// 200k frames 1 ms apart (200 s, thousands of sojourns); the measured
/// loss must be within 5 standard deviations of the stationary loss.
fn assert_long_run_loss_is_stationary(spec: &LossSpec) {
    let frames = 200_000u64;
    let spacing = Duration::from_millis(1);
    let mut process = spec.build(11, 12);
    for k in 0..frames {
        let t = Time::ZERO + spacing.saturating_mul(k);
        process.is_lost(t, &frame_at(t, 12_000));
    }
    let (decided, lost) = process.counts();
    assert_eq!(decided, frames);
    let measured = lost as f64 / frames as f64;
    let expected = spec.stationary_loss().unwrap();
    let tolerance = 5.0 * ge_loss_sd(spec, frames, frames as f64 * spacing.as_secs_f64());
    assert!(
        (measured - expected).abs() <= tolerance,
        "measured {measured}, stationary {expected}, tolerance {tolerance}"
    );
}

#[test]
fn exponential_gilbert_elliott_long_run_loss_is_stationary() {
    // RCP-style rates: good 0.01 %, bad 10 %.
    let exp = |mean| Sojourn::Exponential { mean };
    assert_long_run_loss_is_stationary(&ge(exp(ms(50)), 0.0001, exp(ms(10)), 0.1));
}

#[test]
fn uniform_gilbert_elliott_long_run_loss_is_stationary() {
    // E2TCP-style rates: good 0.05 %, bad 80 %.
    let spec = ge(
        Sojourn::Uniform {
            min: ms(20),
            max: ms(80),
        },
        0.0005,
        Sojourn::Uniform {
            min: ms(5),
            max: ms(15),
        },
        0.8,
    );
    assert_long_run_loss_is_stationary(&spec);
}

#[test]
fn uniform_sojourns_have_the_right_mean_and_range() {
    let sojourn = Sojourn::Uniform {
        min: ms(20),
        max: ms(80),
    };
    let mut rng = <rand_pcg::Pcg64Mcg as rand::SeedableRng>::seed_from_u64(5);
    let n = 100_000;
    let samples: Vec<Duration> = (0..n).map(|_| sojourn.sample(&mut rng)).collect();
    assert!(samples.iter().all(|&d| d >= ms(20) && d <= ms(80)));
    let mean = samples.iter().map(|d| d.as_secs_f64()).sum::<f64>() / n as f64;
    let tolerance = 5.0 * (sojourn.variance_secs2() / n as f64).sqrt();
    assert!((mean - 0.050).abs() <= tolerance, "mean {mean}");
}

#[test]
fn exponential_sojourns_have_the_right_mean() {
    let sojourn = Sojourn::Exponential { mean: ms(10) };
    let mut rng = <rand_pcg::Pcg64Mcg as rand::SeedableRng>::seed_from_u64(6);
    let n = 100_000;
    let mean = (0..n)
        .map(|_| sojourn.sample(&mut rng).as_secs_f64())
        .sum::<f64>()
        / n as f64;
    let tolerance = 5.0 * (sojourn.variance_secs2() / n as f64).sqrt();
    assert!((mean - 0.010).abs() <= tolerance, "mean {mean}");
}

fn exp_ge() -> LossSpec {
    let exp = |mean| Sojourn::Exponential { mean };
    // Good loses nothing and bad everything, so a fate reveals the state.
    ge(exp(ms(30)), 0.0, exp(ms(10)), 1.0)
}

#[test]
fn same_state_seed_gives_the_same_trajectory_whatever_is_asked() {
    let spec = exp_ge();
    let grid: Vec<Time> = (0..5_000).map(Time::from_millis).collect();
    let mut plain = spec.build(42, 1);
    let reference: Vec<u8> = grid.iter().map(|&t| plain.state_at(t, t)).collect();

    // Another process, other frame seed, busy deciding frames in between.
    let mut busy = spec.build(42, 999);
    let mut rng = <rand_pcg::Pcg64Mcg as rand::SeedableRng>::seed_from_u64(3);
    let mut states = Vec::new();
    for &t in &grid {
        for _ in 0..rng.random_range(0..3) {
            let lead = Duration::from_micros(rng.random_range(0..50_000));
            busy.is_lost(t, &frame_at(t + lead, 8_000));
        }
        states.push(busy.state_at(t, t));
    }
    assert_eq!(states, reference);
    assert!(reference.contains(&0) && reference.contains(&1));

    let mut other = spec.build(43, 1);
    let different: Vec<u8> = grid.iter().map(|&t| other.state_at(t, t)).collect();
    assert_ne!(different, reference);
}

#[test]
fn arq_style_future_queries_match_in_order_answers() {
    let spec = exp_ge();
    // A reference that never forgets (now stays at zero), asked in order.
    let mut reference = spec.build(7, 1);
    let mut arq = spec.build(7, 1);
    let mut rng = <rand_pcg::Pcg64Mcg as rand::SeedableRng>::seed_from_u64(8);
    let mut now = Time::ZERO;
    for _ in 0..20_000 {
        now += Duration::from_micros(rng.random_range(0..500));
        // Up to four attempts decided at once, at scattered future starts.
        let mut starts: Vec<Time> = (0..rng.random_range(1..5))
            .map(|_| now + Duration::from_micros(rng.random_range(0..40_000)))
            .collect();
        starts.reverse();
        for t in starts {
            let lost = arq.is_lost(now, &frame_at(t, 1_000));
            assert_eq!(u8::from(lost), reference.state_at(Time::ZERO, t), "at {t}");
        }
    }
}

#[test]
fn on_off_phase_boundaries_are_exact() {
    let spec = LossSpec::OnOffPhases {
        on: ms(10),
        off: ms(30),
        drop_rate: 1.0,
        start_on: true,
        offset: ms(5),
    };
    let mut process = spec.build(0, 0);
    let ns = |n: u64| Time::from_nanos(n);
    let expectations = [
        (ns(0), 0), // periodic extension: the Off phase before offset
        (ns(4_999_999), 0),
        (ns(5_000_000), 1), // the first On phase starts at offset
        (ns(14_999_999), 1),
        (ns(15_000_000), 0),
        (ns(44_999_999), 0),
        (ns(45_000_000), 1),
        (Time::from_secs(1000) + ms(5), 1),
    ];
    for (t, state) in expectations {
        assert_eq!(process.state_at(Time::ZERO, t), state, "at {t}");
        assert_eq!(
            u8::from(process.is_lost(Time::ZERO, &frame_at(t, 1))),
            state,
            "at {t}"
        );
    }
    assert_eq!(spec.stationary_loss(), Some(0.25));

    let starting_off = LossSpec::OnOffPhases {
        on: ms(10),
        off: ms(30),
        drop_rate: 1.0,
        start_on: false,
        offset: Duration::ZERO,
    };
    let mut process = starting_off.build(0, 0);
    assert_eq!(process.state_at(Time::ZERO, ns(29_999_999)), 0);
    assert_eq!(process.state_at(Time::ZERO, ns(30_000_000)), 1);
    assert_eq!(process.state_at(Time::ZERO, ns(40_000_000)), 0);
}

#[test]
fn bit_error_probability_is_the_closed_form_and_grows_with_length() {
    let ber = 1e-5;
    let mut previous = 0.0;
    for bits in [1u64, 8, 100, 1_000, 12_000, 100_000] {
        let p = bit_error_probability(ber, bits);
        let closed = 1.0 - (1.0 - ber).powi(bits as i32);
        // The naive power itself is off by up to bits·ε from rounding 1 − ber.
        let naive_error = bits as f64 * f64::EPSILON * 2.0;
        assert!(
            (p - closed).abs() <= naive_error,
            "{bits} bits: {p} vs {closed}"
        );
        assert!(p > previous);
        previous = p;
    }
    // Where the naive form loses every digit, the stable one keeps them.
    let tiny = bit_error_probability(1e-15, 1_000);
    assert!((tiny - 1e-12).abs() <= 1e-24, "{tiny}");
    assert_eq!(bit_error_probability(ber, 0), 0.0);
    assert_eq!(bit_error_probability(1.0, 1), 1.0);
}

#[test]
fn bit_error_process_loses_frames_at_the_closed_form_rate() {
    let (ber, bits, frames) = (1e-5, 12_000, 50_000u64);
    let mut process = LossSpec::BitError { ber }.build(0, 21);
    for k in 0..frames {
        let t = Time::from_micros(k * 100);
        process.is_lost(t, &frame_at(t, bits));
    }
    let p = bit_error_probability(ber, bits);
    let measured = process.counts().1 as f64 / frames as f64;
    let tolerance = 5.0 * (p * (1.0 - p) / frames as f64).sqrt();
    assert!(
        (measured - p).abs() <= tolerance,
        "measured {measured}, expected {p}"
    );
}

#[test]
fn bernoulli_loses_its_rate_and_none_loses_nothing() {
    let frames = 50_000u64;
    let mut bernoulli = LossSpec::Bernoulli { loss: 0.1 }.build(0, 77);
    let mut none = LossSpec::None.build(0, 77);
    for k in 0..frames {
        let t = Time::from_micros(k);
        bernoulli.is_lost(t, &frame_at(t, 1));
        none.is_lost(t, &frame_at(t, 1));
    }
    let measured = bernoulli.counts().1 as f64 / frames as f64;
    assert!(
        (measured - 0.1).abs() <= 5.0 * (0.09 / frames as f64).sqrt(),
        "{measured}"
    );
    assert_eq!(none.counts(), (frames, 0));
}

#[test]
fn frame_traces_replay_exactly() {
    let trace = LossTrace::parse("# repeat\n0\n1 # the second frame\n\n1\n").unwrap();
    assert_eq!(
        trace,
        LossTrace::Frames {
            lost: vec![false, true, true],
            repeat: true
        }
    );
    let mut process = LossSpec::Trace(Arc::new(trace)).build(0, 0);
    let fates: Vec<bool> = (0..7)
        .map(|k| process.is_lost(Time::ZERO, &frame_at(Time::from_millis(k), 1)))
        .collect();
    assert_eq!(fates, [false, true, true, false, true, true, false]);
    assert_eq!(process.counts(), (7, 4));

    let once = LossTrace::parse("1\n1\n").unwrap();
    assert_eq!(
        LossSpec::Trace(Arc::new(once.clone())).stationary_loss(),
        None
    );
    let mut process = LossSpec::Trace(Arc::new(once)).build(0, 0);
    let fates: Vec<bool> = (0..4)
        .map(|_| process.is_lost(Time::ZERO, &frame_at(Time::ZERO, 1)))
        .collect();
    assert_eq!(fates, [true, true, false, false]);
}

#[test]
fn interval_traces_replay_exactly() {
    let text = "# start end probability\n1s 1500ms 1\n2 2.5 0  # a quiet interval\n3s 4s 1.0\n";
    let trace = LossTrace::parse(text).unwrap();
    let mut process = LossSpec::Trace(Arc::new(trace)).build(0, 0);
    let at = |n: u64| Time::from_millis(n);
    for (t, lost) in [
        (at(999), false),
        (at(1000), true),
        (at(1499), true),
        (at(1500), false),
        (at(2200), false),
        (at(3999), true),
        (at(4000), false),
    ] {
        assert_eq!(process.is_lost(Time::ZERO, &frame_at(t, 1)), lost, "at {t}");
        assert_eq!(process.state_at(Time::ZERO, t), u8::from(lost), "at {t}");
    }
}

#[test]
fn trace_errors_name_the_line() {
    let error = |text: &str| LossTrace::parse(text).unwrap_err().to_string();
    assert_eq!(
        error("0\n2\n"),
        "trace line 2: frame fate must be 0 or 1, got \"2\""
    );
    assert_eq!(
        error("0\n1 2 0.5\n"),
        "trace line 2: a trace holds either frame fates or intervals, not both"
    );
    assert_eq!(
        error("1 2 1.5\n"),
        "trace line 1: must be in [0, 1], got 1.5"
    );
    assert!(error("# nothing\n").starts_with("trace: no frame fates"));
    assert!(error("2 1 0.5\n").starts_with("trace line 1: start"));
    assert!(error("1 3 0.5\n2 4 0.5\n").starts_with("trace line 2: interval starts"));
    assert!(error("1 2 0.5\n# repeat\n").starts_with("trace line 2: \"# repeat\""));
    assert!(error("1 x 0.5\n").starts_with("trace line 1: invalid quantity \"x\""));
    assert!(error("0 1\n").contains("got 2 fields"));
}

#[test]
fn validation_names_the_bad_parameter() {
    let exp = Sojourn::Exponential { mean: ms(10) };
    let mut spec = ge(exp, 0.0, exp, 1.5);
    assert_eq!(
        spec.validate().unwrap_err().to_string(),
        "gilbert_elliott.bad.loss: must be in [0, 1], got 1.5"
    );
    assert!(spec.try_build(0, 0).is_err());
    if let LossSpec::GilbertElliott { good, bad, .. } = &mut spec {
        bad.loss = FrameError::Bit(1e-5);
        good.sojourn = Sojourn::Uniform {
            min: ms(5),
            max: ms(1),
        };
    }
    assert!(spec
        .validate()
        .unwrap_err()
        .to_string()
        .starts_with("gilbert_elliott.good.sojourn.min: must not exceed max"));
    let zero_mean = ge(
        Sojourn::Exponential {
            mean: Duration::ZERO,
        },
        0.0,
        exp,
        0.5,
    );
    assert_eq!(
        zero_mean.validate().unwrap_err().param,
        "gilbert_elliott.good.sojourn.mean"
    );
    assert_eq!(
        LossSpec::Bernoulli { loss: f64::NAN }
            .validate()
            .unwrap_err()
            .param,
        "bernoulli.loss"
    );
    assert_eq!(
        LossSpec::BitError { ber: -1e-6 }
            .validate()
            .unwrap_err()
            .param,
        "bit_error.ber"
    );
    let empty_phases = LossSpec::OnOffPhases {
        on: Duration::ZERO,
        off: Duration::ZERO,
        drop_rate: 0.5,
        start_on: true,
        offset: Duration::ZERO,
    };
    assert_eq!(
        empty_phases.validate().unwrap_err().param,
        "on_off_phases.on"
    );
    let unsorted = LossTrace::Intervals(vec![
        (Time::from_secs(2), Time::from_secs(3), 1.0),
        (Time::from_secs(1), Time::from_secs(4), 1.0),
    ]);
    assert_eq!(
        LossSpec::Trace(Arc::new(unsorted))
            .validate()
            .unwrap_err()
            .param,
        "trace.intervals[1]"
    );
    assert!(ge(exp, 0.0, exp, 1.0).validate().is_ok());
}

#[test]
fn stationary_loss_where_defined() {
    let spec = ge(
        Sojourn::Exponential { mean: ms(90) },
        0.01,
        Sojourn::Uniform {
            min: ms(5),
            max: ms(15),
        },
        0.5,
    );
    let expected = (0.090 * 0.01 + 0.010 * 0.5) / 0.100;
    assert!((spec.stationary_loss().unwrap() - expected).abs() < 1e-15);
    assert_eq!(LossSpec::None.stationary_loss(), Some(0.0));
    assert_eq!(
        LossSpec::Bernoulli { loss: 0.2 }.stationary_loss(),
        Some(0.2)
    );
    assert_eq!(LossSpec::BitError { ber: 1e-6 }.stationary_loss(), None);
    let mut bit_ge = spec.clone();
    if let LossSpec::GilbertElliott { bad, .. } = &mut bit_ge {
        bad.loss = FrameError::Bit(1e-4);
    }
    assert_eq!(bit_ge.stationary_loss(), None);
}
