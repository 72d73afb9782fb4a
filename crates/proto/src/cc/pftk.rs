//! The TCP throughput equation of Padhye, Firoiu, Towsley and Kurose
//! (SIGCOMM 1998, "Modeling TCP Throughput", eq. 30, the "full model"):
//!
//! B(p) = 1 / (RTT·√(2bp/3) + T₀·min(1, 3·√(3bp/8))·p·(1 + 32p²))
//!
//! in packets per second, where `p` is the rate of loss *indications*
//! (fast retransmits and timeouts per packet sent), `b` the packets one ACK
//! acknowledges (2 with delayed ACKs), `RTT` the round-trip time and `T₀`
//! the retransmission timeout. One copy serves the rate-based TCP-SACK
//! baseline (`tcp/pacing.rs`) and the simulator's validation against TCP
//! (`crates/sim/tests/validation.rs`).

/// PFTK's eq. 30 in packets per second; `rtt_s` and `t0_s` in seconds.
/// `None` when the equation has no finite value (p ≤ 0 or NaN, or a zero
/// denominator): with no loss indication yet the model gives no bound.
pub fn pftk_rate(rtt_s: f64, p: f64, b: f64, t0_s: f64) -> Option<f64> {
    if p.is_nan() || p <= 0.0 {
        return None;
    }
    let p = p.min(1.0);
    let window_term = rtt_s * (2.0 * b * p / 3.0).sqrt();
    let timeout_term =
        t0_s * (3.0 * (3.0 * b * p / 8.0).sqrt()).min(1.0) * p * (1.0 + 32.0 * p * p);
    let denominator = window_term + timeout_term;
    (denominator > 0.0 && denominator.is_finite()).then(|| 1.0 / denominator)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-9 * b)
    }

    #[test]
    fn the_equation_by_hand() {
        // RTT 100 ms, p 1%, b 2, T₀ 1 s: √(0.04/3) = 0.1154701 → 0.01154701;
        // 3·√(0.06/8) = 0.2598076 < 1, × 0.01 × 1.0032 = 0.00260639;
        // 1 / 0.01415340 = 70.654424 packets/s.
        assert!(close(pftk_rate(0.1, 0.01, 2.0, 1.0), 70.654_423_831_253_34));
        // RTT 200 ms, p 5%, b 1, T₀ 1 s: 0.2·√(0.1/3) = 0.0365148;
        // 3·√(0.15/8) = 0.4107919, × 0.05 × 1.08 = 0.0221828;
        // 1 / 0.0586976 = 17.036471.
        assert!(close(pftk_rate(0.2, 0.05, 1.0, 1.0), 17.036_471_462_058_04));
        // RTT 50 ms, p 30%, b 2, T₀ 400 ms: the min caps at 1
        // (3·√(1.8/8) = 1.42); 0.05·√0.4 = 0.0316228 plus
        // 0.4 × 0.3 × 3.88 = 0.4656: 1 / 0.4972228 = 2.0111709.
        assert!(close(
            pftk_rate(0.05, 0.3, 2.0, 0.4),
            2.011_170_941_996_251_6
        ));
    }

    #[test]
    fn no_loss_indication_gives_no_bound() {
        assert_eq!(pftk_rate(0.1, 0.0, 2.0, 1.0), None);
        assert_eq!(pftk_rate(0.1, f64::NAN, 2.0, 1.0), None);
        assert_eq!(pftk_rate(0.0, 0.01, 2.0, 0.0), None);
        // More loss, less rate; p above 1 counts as 1.
        let r = |p| pftk_rate(0.1, p, 2.0, 1.0).unwrap();
        assert!(r(0.01) > r(0.02) && r(0.02) > r(0.2));
        assert_eq!(r(1.0), r(3.0));
    }
}
