//! Per-hop link attempts from the loss tolerance (paper §3, equations 1–4).
//!
//! A packet reaching node *nᵢ* carries the loss tolerance *ltᵢ* left for the
//! rest of the path. The node sees *Hᵢ* links left (its own, possibly stale,
//! routing view) and a per-attempt failure probability *pᵢ* on its next link.
//! Giving every remaining link the same success probability,
//!
//! * qᵢ = (1 − ltᵢ)^(1/Hᵢ)                                          (4)
//! * Mᵢ = max(1, min(⌈log(1 − qᵢ) / log pᵢ⌉, MAX_ATTEMPTS))          (2)
//! * ltᵢ₊₁ = 1 − (1 − ltᵢ) / qᵢ                                       (3)
//!
//! and the packet leaves with *Mᵢ* link attempts and tolerance *ltᵢ₊₁*.
//!
//! The rewrite uses the *target* qᵢ of (4), as the paper's derivation does,
//! so that *ltᵢ₊₁ = 1 − (1 − ltᵢ)^((Hᵢ−1)/Hᵢ)* depends only on the path
//! view; the extra success an attempt count rounded up buys is not handed on.

/// The most link attempts the MAC allows (paper Table 1).
pub const MAX_ATTEMPTS: u8 = 5;

/// Slack subtracted before rounding up, so that a ratio computed as
/// 1.0000000000000002 for an exact 1 does not cost an extra attempt.
const CEIL_SLACK: f64 = 1e-9;

/// What one hop decides for one packet.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct HopPlan {
    /// Link attempts for this packet on the next link (`TxOpts.link_attempts`).
    pub attempts: u8,
    /// The per-link success probability the hop aims at (equation 4).
    pub target_success: f64,
    /// The loss tolerance to write into the packet before forwarding it.
    pub next_loss_tolerance: f64,
}

fn unit(x: f64) -> f64 {
    if x.is_nan() {
        0.0
    } else {
        x.clamp(0.0, 1.0)
    }
}

/// Equation 4: the success probability each of the `hops_left` links must
/// reach so that the path loses at most `loss_tolerance`. `hops_left` 0 is
/// taken as 1 (the node is about to cross some link).
pub fn per_link_success(loss_tolerance: f64, hops_left: u32) -> f64 {
    let h = hops_left.max(1) as f64;
    (1.0 - unit(loss_tolerance)).powf(1.0 / h)
}

/// Equation 2: attempts needed for success probability `q` on a link whose
/// single attempt fails with probability `p`, within `1..=max_attempts`.
///
/// Edge cases, each the limit of the formula: `p = 0` needs one attempt;
/// `p = 1` (nothing gets through) or `q = 1` (nothing may be lost, with
/// `p > 0`) needs every attempt allowed; `q = 0` needs one.
pub fn link_attempts(p: f64, q: f64, max_attempts: u8) -> u8 {
    let (p, q) = (unit(p), unit(q));
    let max = max_attempts.max(1);
    if p == 0.0 || q == 0.0 {
        return 1;
    }
    if p == 1.0 || q == 1.0 {
        return max;
    }
    let need = ((1.0 - q).ln() / p.ln() - CEIL_SLACK).ceil();
    need.clamp(1.0, max as f64) as u8
}

/// Equation 3: the loss tolerance left for the links after this one when this
/// one succeeds with probability `q`, clamped to [0, 1]. With `q = 0` (a
/// tolerance of 1) nothing is asked of the rest either: 1.
pub fn next_loss_tolerance(loss_tolerance: f64, q: f64) -> f64 {
    let (lt, q) = (unit(loss_tolerance), unit(q));
    if q == 0.0 {
        return 1.0;
    }
    unit(1.0 - (1.0 - lt) / q)
}

/// Equations 2–4 together: what node *nᵢ* does to a packet carrying
/// `loss_tolerance`, with `hops_left` links to go and a link that fails one
/// attempt with probability `p`.
pub fn plan(loss_tolerance: f64, hops_left: u32, p: f64, max_attempts: u8) -> HopPlan {
    let q = per_link_success(loss_tolerance, hops_left);
    HopPlan {
        attempts: link_attempts(p, q, max_attempts),
        target_success: q,
        next_loss_tolerance: next_loss_tolerance(loss_tolerance, q),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn three_hops_ten_percent_twenty_percent_link_loss() {
        // q = 0.9^(1/3) = 0.965489384605630; log(1 − q)/log 0.2 = 2.0917 → 3;
        // lt' = 1 − 0.9/q = 1 − 0.9^(2/3) = 0.067830248213842.
        let h = plan(0.1, 3, 0.2, MAX_ATTEMPTS);
        assert!(close(h.target_success, 0.965_489_384_605_63));
        assert_eq!(h.attempts, 3);
        assert!(close(h.next_loss_tolerance, 0.067_830_248_213_842));
    }

    #[test]
    fn two_hops_twenty_percent_thirty_percent_link_loss() {
        // q = √0.8 = 0.894427191; log(0.105572809)/log(0.3) = 1.8674 → 2;
        // lt' = 1 − 0.8/0.894427191 = 0.105572809.
        let h = plan(0.2, 2, 0.3, MAX_ATTEMPTS);
        assert!(close(h.target_success, 0.894_427_190_999_916));
        assert_eq!(h.attempts, 2);
        assert!(close(h.next_loss_tolerance, 0.105_572_809_000_084));
    }

    #[test]
    fn an_exact_ratio_does_not_cost_an_extra_attempt() {
        // H = 1, lt = 0.1, p = 0.1: q = 0.9 and log(0.1)/log(0.1) = 1 exactly.
        let h = plan(0.1, 1, 0.1, MAX_ATTEMPTS);
        assert_eq!(h.attempts, 1);
        // p = 0.5, q = 0.75: log 0.25 / log 0.5 = 2.
        assert_eq!(link_attempts(0.5, 0.75, MAX_ATTEMPTS), 2);
    }

    #[test]
    fn the_last_hop_uses_all_the_tolerance() {
        // H = 1: q = 1 − lt, and nothing is left for later links.
        let h = plan(0.2, 1, 0.3, MAX_ATTEMPTS);
        assert!(close(h.target_success, 0.8));
        assert_eq!(h.next_loss_tolerance, 0.0);
        // log(0.2)/log(0.3) = 1.3368 → 2.
        assert_eq!(h.attempts, 2);
        // Hops left 0 (a stale view) is treated as 1.
        assert_eq!(plan(0.2, 0, 0.3, MAX_ATTEMPTS), h);
    }

    #[test]
    fn attempts_are_capped_at_the_mac_limit() {
        // H = 1, lt = 0.01, p = 0.5: log(0.01)/log(0.5) = 6.64 → 7, capped to 5.
        assert_eq!(plan(0.01, 1, 0.5, MAX_ATTEMPTS).attempts, 5);
        assert_eq!(plan(0.01, 1, 0.5, 8).attempts, 7);
    }

    #[test]
    fn edge_cases_follow_the_formula_s_limits() {
        // A perfect link: one attempt, whatever the tolerance.
        assert_eq!(plan(0.0, 4, 0.0, MAX_ATTEMPTS).attempts, 1);
        assert_eq!(plan(0.5, 4, 0.0, MAX_ATTEMPTS).attempts, 1);
        // A dead link: the most the MAC allows.
        assert_eq!(plan(0.1, 4, 1.0, MAX_ATTEMPTS).attempts, MAX_ATTEMPTS);
        // No loss tolerated (jtp0): q = 1, every attempt, and lt stays 0.
        let h = plan(0.0, 4, 0.3, MAX_ATTEMPTS);
        assert_eq!(h.attempts, MAX_ATTEMPTS);
        assert_eq!(h.target_success, 1.0);
        assert_eq!(h.next_loss_tolerance, 0.0);
        // Everything tolerated: one attempt, and the rest may lose it all.
        let h = plan(1.0, 4, 0.3, MAX_ATTEMPTS);
        assert_eq!((h.attempts, h.next_loss_tolerance), (1, 1.0));
        // Out-of-range and NaN inputs are clamped, never panic.
        assert_eq!(link_attempts(f64::NAN, 0.9, 5), 1);
        assert_eq!(link_attempts(2.0, 0.9, 5), 5);
        assert_eq!(link_attempts(0.5, 0.9, 0), 1);
    }

    #[test]
    fn rewrites_along_a_path_meet_the_end_to_end_tolerance() {
        // Equation 1: with an accurate view, the product of the hops' targets
        // is exactly 1 − lt, whatever the tolerance.
        for lt in [0.0, 0.05, 0.1, 0.2, 0.5] {
            let mut left = lt;
            let mut product = 1.0;
            for hops in (1..=6).rev() {
                let h = plan(left, hops, 0.25, MAX_ATTEMPTS);
                product *= h.target_success;
                left = h.next_loss_tolerance;
            }
            assert!(close(product, 1.0 - lt), "lt {lt}: {product}");
            assert!(left.abs() < 1e-12);
        }
    }
}
