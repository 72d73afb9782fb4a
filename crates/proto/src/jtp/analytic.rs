//! Expected node transmissions with and without in-network caching (paper
//! §4, equations 5 and 6).
//!
//! Delivering `k` packets over `H` links that lose each attempt with
//! probability `p`, the MAC trying at most `n` times per packet:
//!
//! * with caches (JTP, best case: infinite caches, each loss recovered by
//!   the last node that holds the packet), every link is crossed after a
//!   geometric number of attempts: E(T) = k · H / (1 − p)                 (5)
//! * without caches (JNC), a packet that exhausts its `n` attempts on any
//!   link is lost and sent again by the source:
//!   E(T) = k · H / ((1 − pⁿ)^(H−1) (1 − p))                          (6)
//!
//! Equation 6 as printed is an upper bound. Counting exactly: the source
//! sends k / (1 − pⁿ)ᴴ packets; a packet reaches link i with probability
//! (1 − pⁿ)ⁱ and spends (1 − pⁿ)/(1 − p) attempts there on average, so
//! E(T) = k/(1 − p) · Σⱼ₌₀^{H−1} (1 − pⁿ)^(−j) ([`expected_no_cache_exact`]).
//! Equation 6 replaces each term with the largest, j = H − 1; the two agree
//! for H = 1 and as pⁿ → 0 (within 1 % for the paper's n = 5, p ≤ 0.3,
//! H ≤ 8), and drift apart when pⁿ is large (15 % at n = 2, p = 0.3, H = 4).

/// Equation 5: expected transmissions with caching.
pub fn expected_with_cache(k: f64, hops: u32, p: f64) -> f64 {
    k * hops as f64 / (1.0 - p)
}

/// Equation 6, as the paper prints it: expected transmissions without
/// caching, `n` the MAC's attempt limit.
pub fn expected_no_cache(k: f64, hops: u32, p: f64, n: u32) -> f64 {
    let link = 1.0 - p.powi(n as i32);
    k * hops as f64 / (link.powi(hops as i32 - 1) * (1.0 - p))
}

/// The exact expectation of the no-caching model that equation 6 bounds.
pub fn expected_no_cache_exact(k: f64, hops: u32, p: f64, n: u32) -> f64 {
    let link = 1.0 - p.powi(n as i32);
    let sum: f64 = (0..hops).map(|j| link.powi(-(j as i32))).sum();
    k / (1.0 - p) * sum
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn formulas_by_hand() {
        // 100 packets, 4 hops, p = 0.2: 400 / 0.8 = 500.
        assert!((expected_with_cache(100.0, 4, 0.2) - 500.0).abs() < 1e-9);
        // n = 2: 1 − 0.04 = 0.96; 400 / (0.96³ · 0.8) = 400 / 0.7077888 = 565.1403.
        assert!((expected_no_cache(100.0, 4, 0.2, 2) - 565.140_335_648_148).abs() < 1e-6);
        // Exact: 125 · (1 + 1/0.96 + 1/0.96² + 1/0.96³) = 125 · 4.2570168 = 532.1271.
        assert!((expected_no_cache_exact(100.0, 4, 0.2, 2) - 532.127_097_800_926).abs() < 1e-6);
        // One hop: caching cannot help, and the three agree.
        let one = expected_with_cache(10.0, 1, 0.3);
        assert!((expected_no_cache(10.0, 1, 0.3, 5) - one).abs() < 1e-9);
        assert!((expected_no_cache_exact(10.0, 1, 0.3, 5) - one).abs() < 1e-9);
    }

    /// Transmissions to deliver `k` packets over `hops` links, by Monte Carlo:
    /// with caches a lost packet is retried from the node that holds it;
    /// without, from the source.
    fn simulate(k: u32, hops: u32, p: f64, n: u32, cache: bool, seed: u64) -> u64 {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
        let mut tx = 0u64;
        for _ in 0..k {
            'resend: loop {
                for _ in 0..hops {
                    let mut crossed = false;
                    while !crossed {
                        for _ in 0..n {
                            tx += 1;
                            if rng.random::<f64>() >= p {
                                crossed = true;
                                break;
                            }
                        }
                        if !crossed && !cache {
                            continue 'resend;
                        }
                    }
                }
                break;
            }
        }
        tx
    }

    #[test]
    fn monte_carlo_agrees_with_the_formulas() {
        let k = 20_000;
        for (hops, p, n) in [(4, 0.3, 5), (6, 0.2, 5), (4, 0.3, 2), (8, 0.3, 5)] {
            let kf = k as f64;
            let cached = simulate(k, hops, p, n, true, 1) as f64;
            let want = expected_with_cache(kf, hops, p);
            assert!(
                (cached / want - 1.0).abs() < 0.02,
                "eq 5 {hops} {p} {n}: {cached} vs {want}"
            );
            let uncached = simulate(k, hops, p, n, false, 2) as f64;
            let exact = expected_no_cache_exact(kf, hops, p, n);
            assert!(
                (uncached / exact - 1.0).abs() < 0.02,
                "exact {hops} {p} {n}: {uncached} vs {exact}"
            );
            let eq6 = expected_no_cache(kf, hops, p, n);
            assert!(eq6 >= exact);
            if n == 5 {
                // The paper's attempt limit: equation 6 is within 10 % (1 % here).
                assert!(
                    (uncached / eq6 - 1.0).abs() < 0.02,
                    "eq 6 {hops} {p} {n}: {uncached} vs {eq6}"
                );
            }
        }
    }
}
