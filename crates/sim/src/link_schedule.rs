//! Links (interfaces) that go down and come back on a schedule: the
//! scenario key `down = ["10s..20s", "30s..35s"]` on any link. While down,
//! both directions lose every frame that starts, and `Net::link(..).up` is
//! false, so a multi-homed receiver (R²CP) sees its interface go.

use joulenet_proto::{Duration, Time};

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Downtime {
    /// Sorted, disjoint `[start, end)` intervals.
    pub intervals: Vec<(Duration, Duration)>,
}

impl Downtime {
    pub fn is_down(&self, t: Time) -> bool {
        let t = Duration(t.as_nanos());
        self.intervals.iter().any(|&(a, b)| a <= t && t < b)
    }

    /// Parse `"A..B"` entries (durations in any unit the scenarios accept).
    pub fn parse(entries: &[String]) -> Result<Downtime, String> {
        let mut intervals = Vec::new();
        for e in entries {
            let (a, b) = e
                .split_once("..")
                .ok_or_else(|| format!("\"{e}\": expected \"start..end\""))?;
            let d = |s: &str| {
                joulenet_channel::units::parse_duration(s.trim())
                    .map_err(|err| format!("\"{e}\": {err}"))
            };
            let (a, b) = (d(a)?, d(b)?);
            if b <= a {
                return Err(format!("\"{e}\": the end must follow the start"));
            }
            intervals.push((a, b));
        }
        intervals.sort();
        if intervals.windows(2).any(|w| w[1].0 < w[0].1) {
            return Err("intervals overlap".into());
        }
        Ok(Downtime { intervals })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_answers() {
        let d = Downtime::parse(&["10s..20s".into(), "500ms..1s".into()]).unwrap();
        assert!(d.is_down(Time::from_millis(700)));
        assert!(!d.is_down(Time::from_secs(1)));
        assert!(d.is_down(Time::from_secs(10)));
        assert!(!d.is_down(Time::from_secs(20)));
        assert!(Downtime::parse(&["2s..1s".into()]).is_err());
        assert!(Downtime::parse(&["1s".into()]).is_err());
        assert!(Downtime::parse(&["1s..3s".into(), "2s..4s".into()]).is_err());
    }
}
