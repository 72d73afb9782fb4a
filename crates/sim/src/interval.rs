//! 95% intervals of a mean across seeds that stay inside the quantity's
//! domain.
//!
//! Student's t is the default: it is what every earlier table printed and
//! it is well calibrated for the handful of seeds a sweep runs. But t is
//! symmetric, so for a skewed quantity near a bound (retransmissions that
//! are 0 in most seeds, an efficiency close to 1) it reaches values the
//! quantity can never take — "80 ± 119 retransmissions". Such an interval
//! is replaced by the percentile bootstrap of the mean, which lies within
//! the samples' range and therefore within the domain. Which method made
//! an interval is recorded, so that tables can mark it.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use crate::metrics::mean_ci95;

/// The values a quantity can take.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Domain {
    /// Any real number.
    Real,
    /// Zero or more: counts, times, energies, rates.
    NonNegative,
    /// A fraction in [0, 1]: delivery ratios, efficiency, fairness.
    Unit,
}

impl Domain {
    fn contains(self, x: f64) -> bool {
        match self {
            Domain::Real => true,
            Domain::NonNegative => x >= 0.0,
            Domain::Unit => (0.0..=1.0).contains(&x),
        }
    }
}

/// How an [`Interval`] was obtained.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Method {
    /// One sample: no interval (`lo` = `hi` = the value).
    Single,
    /// mean ± t(0.975, n − 1) · s / √n.
    StudentT,
    /// 2.5th and 97.5th percentiles of the means of [`BOOTSTRAP_RESAMPLES`]
    /// resamples (with replacement, fixed seed): used where Student's t
    /// would leave the domain.
    Bootstrap,
}

/// Resamples drawn by the bootstrap. With the fixed seed the same samples
/// always give the same interval (a table is a pure function of its runs).
pub const BOOTSTRAP_RESAMPLES: usize = 4000;
const BOOTSTRAP_SEED: u64 = 0x6a6f_756c_656e_6574; // "joulenet"

/// A mean and its 95% interval.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Interval {
    pub mean: f64,
    pub lo: f64,
    pub hi: f64,
    /// Student's t half-width whatever the method (NaN for one sample):
    /// kept because the JSON and CSV outputs have always carried it.
    pub t_half_width: f64,
    pub n: usize,
    pub method: Method,
}

/// The 95% interval of the mean of `xs`, inside `domain`. `None` when there
/// are no samples.
pub fn interval95(xs: &[f64], domain: Domain) -> Option<Interval> {
    let t = mean_ci95(xs)?;
    let mut interval = Interval {
        mean: t.mean,
        lo: t.mean,
        hi: t.mean,
        t_half_width: t.half_width,
        n: t.n,
        method: Method::Single,
    };
    if t.n < 2 || !t.half_width.is_finite() {
        return Some(interval);
    }
    let (lo, hi) = (t.mean - t.half_width, t.mean + t.half_width);
    if domain.contains(lo) && domain.contains(hi) {
        interval.lo = lo;
        interval.hi = hi;
        interval.method = Method::StudentT;
    } else {
        let (lo, hi) = bootstrap_percentiles(xs);
        interval.lo = lo;
        interval.hi = hi;
        interval.method = Method::Bootstrap;
    }
    Some(interval)
}

fn bootstrap_percentiles(xs: &[f64]) -> (f64, f64) {
    let mut rng = Pcg64::seed_from_u64(BOOTSTRAP_SEED);
    let n = xs.len();
    let mut means: Vec<f64> = (0..BOOTSTRAP_RESAMPLES)
        .map(|_| (0..n).map(|_| xs[rng.random_range(0..n)]).sum::<f64>() / n as f64)
        .collect();
    means.sort_by(f64::total_cmp);
    let at = |q: f64| means[((q * (BOOTSTRAP_RESAMPLES - 1) as f64).round()) as usize];
    (at(0.025), at(0.975))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn student_t_is_kept_when_it_stays_in_the_domain() {
        let i = interval95(&[1.0, 2.0, 3.0, 4.0], Domain::NonNegative).unwrap();
        assert_eq!(i.method, Method::StudentT);
        assert!((i.hi - i.mean - 3.182 * 1.290_994_4 / 2.0).abs() < 1e-6);
        assert!((i.mean - i.lo - (i.hi - i.mean)).abs() < 1e-12);
    }

    #[test]
    fn a_skewed_count_gets_an_interval_that_is_never_negative() {
        // Mostly zero with one large value: t gives 80 ± 119.
        let xs = [0.0, 0.0, 2.0, 0.0, 400.0];
        let i = interval95(&xs, Domain::NonNegative).unwrap();
        assert!(i.mean - i.t_half_width < 0.0, "t would go negative");
        assert_eq!(i.method, Method::Bootstrap);
        assert!(i.lo >= 0.0 && i.lo <= i.mean && i.mean <= i.hi && i.hi <= 400.0);
    }

    #[test]
    fn a_fraction_near_one_stays_at_or_below_one() {
        let xs = [0.999, 1.0, 0.95, 1.0];
        let i = interval95(&xs, Domain::Unit).unwrap();
        assert_eq!(i.method, Method::Bootstrap);
        assert!(i.hi <= 1.0 && i.lo >= 0.95);
    }

    #[test]
    fn a_real_quantity_keeps_student_t_across_zero() {
        let i = interval95(&[-1.0, 1.0, 0.5], Domain::Real).unwrap();
        assert_eq!(i.method, Method::StudentT);
        assert!(i.lo < 0.0);
    }

    #[test]
    fn one_sample_has_no_width_and_none_has_no_interval() {
        let i = interval95(&[3.0], Domain::NonNegative).unwrap();
        assert_eq!((i.lo, i.hi, i.method), (3.0, 3.0, Method::Single));
        assert!(interval95(&[], Domain::Real).is_none());
    }

    #[test]
    fn the_bootstrap_is_a_pure_function_of_its_samples() {
        let xs = [0.0, 0.0, 7.0, 1.0, 90.0, 0.0];
        let a = interval95(&xs, Domain::NonNegative).unwrap();
        let b = interval95(&xs, Domain::NonNegative).unwrap();
        assert_eq!(a, b);
    }
}
