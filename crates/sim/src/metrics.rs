//! Statistics helpers: a bounded-memory delay histogram, Jain's fairness
//! index, and mean with a 95% confidence interval across seeds.

use joulenet_proto::Duration;

/// Log-linear histogram of durations (about 1.5% relative resolution) with
/// exact count, sum, min and max. Memory is bounded whatever the run length:
/// it holds only the span of buckets between the smallest and the largest
/// duration seen, so an endpoint that receives nothing (an idle flow of a
/// thousand-flow mesh) costs no bucket at all instead of 30 KB.
#[derive(Clone, Debug)]
pub struct Histogram {
    /// Counts of buckets `first..first + buckets.len()`.
    buckets: Vec<u64>,
    first: usize,
    count: u64,
    sum_ns: u128,
    min: u64,
    max: u64,
}

const SUB_BUCKETS: u64 = 64;
/// Exponents 6..=63 each get SUB_BUCKETS buckets, after SUB_BUCKETS exact ones.
const BUCKETS: usize = ((63 - 6 + 1) + 1) * SUB_BUCKETS as usize;

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            buckets: Vec::new(),
            first: 0,
            count: 0,
            sum_ns: 0,
            min: u64::MAX,
            max: 0,
        }
    }
}

fn bucket_of(ns: u64) -> usize {
    if ns < SUB_BUCKETS {
        return ns as usize;
    }
    let exp = 63 - ns.leading_zeros() as u64; // >= 6
    let shift = exp - 6;
    let sub = (ns >> shift) - SUB_BUCKETS; // 0..63
    ((exp - 5) * SUB_BUCKETS + sub) as usize
}

fn bucket_low(index: usize) -> u64 {
    let index = index as u64;
    if index < SUB_BUCKETS {
        return index;
    }
    let exp = index / SUB_BUCKETS + 5;
    let sub = index % SUB_BUCKETS;
    (SUB_BUCKETS + sub) << (exp - 6)
}

impl Histogram {
    pub fn record(&mut self, d: Duration) {
        let ns = d.0;
        *self.bucket_mut(bucket_of(ns)) += 1;
        self.count += 1;
        self.sum_ns += ns as u128;
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
    }
    /// The count of bucket `index`, widening the stored span to reach it.
    fn bucket_mut(&mut self, index: usize) -> &mut u64 {
        if self.buckets.is_empty() {
            self.first = index;
        } else if index < self.first {
            let grow = self.first - index;
            self.buckets.splice(0..0, std::iter::repeat_n(0, grow));
            self.first = index;
        }
        let at = index - self.first;
        if at >= self.buckets.len() {
            self.buckets.resize(at + 1, 0);
        }
        &mut self.buckets[at]
    }
    pub fn count(&self) -> u64 {
        self.count
    }
    pub fn mean(&self) -> Option<Duration> {
        (self.count > 0).then(|| Duration((self.sum_ns / self.count as u128) as u64))
    }
    pub fn min(&self) -> Option<Duration> {
        (self.count > 0).then_some(Duration(self.min))
    }
    pub fn max(&self) -> Option<Duration> {
        (self.count > 0).then_some(Duration(self.max))
    }
    /// The q-quantile (0 ≤ q ≤ 1), to the histogram's resolution.
    pub fn quantile(&self, q: f64) -> Option<Duration> {
        if self.count == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (at, &c) in self.buckets.iter().enumerate() {
            let i = self.first + at;
            seen += c;
            if seen >= rank {
                let lo = bucket_low(i);
                let hi = if i + 1 < BUCKETS {
                    bucket_low(i + 1) - 1
                } else {
                    u64::MAX
                };
                return Some(Duration(((lo + hi) / 2).clamp(self.min, self.max)));
            }
        }
        Some(Duration(self.max))
    }
}

/// Jain's fairness index of non-negative allocations: 1 when all are equal,
/// 1/n when one takes everything. `None` for no allocations or all zero.
pub fn jain_index(xs: &[f64]) -> Option<f64> {
    let sum: f64 = xs.iter().sum();
    let sq: f64 = xs.iter().map(|x| x * x).sum();
    (!xs.is_empty() && sq > 0.0).then(|| sum * sum / (xs.len() as f64 * sq))
}

/// Mean and half-width of the 95% confidence interval (Student's t).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct MeanCi {
    pub mean: f64,
    pub half_width: f64,
    pub n: usize,
}

pub fn mean_ci95(xs: &[f64]) -> Option<MeanCi> {
    let n = xs.len();
    if n == 0 {
        return None;
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    if n == 1 {
        return Some(MeanCi {
            mean,
            half_width: f64::NAN,
            n,
        });
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    Some(MeanCi {
        mean,
        half_width: t975(n - 1) * (var / n as f64).sqrt(),
        n,
    })
}

/// Two-sided 95% quantile of Student's t with `df` degrees of freedom.
pub fn t975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::NAN,
        1..=30 => TABLE[df - 1],
        31..=60 => 2.042 - (df - 30) as f64 * (2.042 - 2.000) / 30.0,
        61..=120 => 2.000 - (df - 60) as f64 * (2.000 - 1.980) / 60.0,
        _ => 1.960,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_quantiles_are_within_resolution() {
        let mut h = Histogram::default();
        for ms in 1..=1000u64 {
            h.record(Duration::from_millis(ms));
        }
        assert_eq!(h.count(), 1000);
        assert_eq!(h.mean(), Some(Duration::from_micros(500_500)));
        let p50 = h.quantile(0.5).unwrap().as_millis_f64();
        let p95 = h.quantile(0.95).unwrap().as_millis_f64();
        assert!((p50 - 500.0).abs() / 500.0 < 0.02, "{p50}");
        assert!((p95 - 950.0).abs() / 950.0 < 0.02, "{p95}");
        assert_eq!(h.min(), Some(Duration::from_millis(1)));
        assert_eq!(h.max(), Some(Duration::from_millis(1000)));
    }

    #[test]
    fn order_of_recording_does_not_change_quantiles() {
        let delays: Vec<u64> = (0..500u64).map(|i| (i * 7_919) % 3_000_000 + 40).collect();
        let (mut up, mut down) = (Histogram::default(), Histogram::default());
        let mut sorted = delays.clone();
        sorted.sort_unstable();
        for &ns in &sorted {
            up.record(Duration(ns));
        }
        for &ns in sorted.iter().rev() {
            down.record(Duration(ns));
        }
        for q in [0.0, 0.01, 0.25, 0.5, 0.9, 0.99, 1.0] {
            assert_eq!(up.quantile(q), down.quantile(q), "q = {q}");
        }
        // Only the span between the extremes is stored.
        let span = bucket_of(sorted[sorted.len() - 1]) - bucket_of(sorted[0]) + 1;
        assert_eq!((up.buckets.len(), down.buckets.len()), (span, span));
        assert!(Histogram::default().buckets.is_empty());
    }

    #[test]
    fn bucket_boundaries_are_monotone() {
        let mut last = 0;
        for i in 1..BUCKETS {
            let lo = bucket_low(i);
            assert!(lo > last || i < SUB_BUCKETS as usize, "{i}");
            assert_eq!(bucket_of(lo), i);
            last = lo;
        }
    }

    #[test]
    fn jain_extremes() {
        assert_eq!(jain_index(&[1.0, 1.0, 1.0]), Some(1.0));
        assert!((jain_index(&[1.0, 0.0, 0.0, 0.0]).unwrap() - 0.25).abs() < 1e-12);
        assert_eq!(jain_index(&[]), None);
    }

    #[test]
    fn ci_matches_hand_computation() {
        let c = mean_ci95(&[1.0, 2.0, 3.0, 4.0]).unwrap();
        assert_eq!(c.mean, 2.5);
        // s = 1.29099, t(3) = 3.182, hw = 3.182 * 1.29099 / 2
        assert!((c.half_width - 3.182 * 1.2909944 / 2.0).abs() < 1e-6);
    }
}
