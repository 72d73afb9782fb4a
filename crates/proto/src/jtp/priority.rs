//! Packet priorities (§3): "by assigning a loss tolerance target to each
//! individual packet, JTP enables the application to prioritize its
//! packets (e.g. video frames of varying importance)". A priority is thus
//! a loss tolerance: the source stamps each packet with its priority's,
//! every iJTP hop gives it link attempts from that tolerance (equations
//! 2–4: an important packet gets more attempts on a lossy link), and the
//! destination gives up holes of a priority only within that priority's
//! tolerance.
//!
//! The application's choice is a repeating pattern of priorities over the
//! stream's packets (`pattern[seq % len]`: a video GOP is one key frame
//! then less important ones) and a tolerance per priority. The pattern is
//! part of the flow's configuration at both ends, as the loss tolerance
//! is: the destination must know the priority of a packet it never got.

use crate::config_error::ConfigError;

/// The priorities of a stream's packets and their loss tolerances.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Priorities {
    /// Packet `seq` has priority `pattern[seq % pattern.len()]`.
    pub pattern: Vec<u8>,
    /// The loss tolerance of priority `p` is `tolerance[p]`.
    pub tolerance: Vec<f64>,
}

impl Priorities {
    /// No pattern: every packet has the flow's priority and tolerance.
    pub fn is_set(&self) -> bool {
        !self.pattern.is_empty()
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.pattern.is_empty() {
            if !self.tolerance.is_empty() {
                return Err(ConfigError::new(
                    "priority_tolerance",
                    "needs priority_pattern (which packets have which priority)",
                ));
            }
            return Ok(());
        }
        if let Some(t) = self.tolerance.iter().find(|t| !(0.0..=1.0).contains(*t)) {
            return Err(ConfigError::new(
                "priority_tolerance",
                format!("every tolerance must be in [0, 1], got {t}"),
            ));
        }
        if let Some(p) = self
            .pattern
            .iter()
            .find(|p| usize::from(**p) >= self.tolerance.len())
        {
            return Err(ConfigError::new(
                "priority_pattern",
                format!(
                    "priority {p} has no tolerance (priority_tolerance has {})",
                    self.tolerance.len()
                ),
            ));
        }
        Ok(())
    }

    /// The priority of packet `seq` (`flow` without a pattern).
    pub fn of(&self, seq: u32, flow: u8) -> u8 {
        if self.pattern.is_empty() {
            return flow;
        }
        self.pattern[seq as usize % self.pattern.len()]
    }

    /// The loss tolerance of packet `seq` (`flow` without a pattern).
    pub fn tolerance_of(&self, seq: u32, flow: f64) -> f64 {
        if self.pattern.is_empty() {
            return flow;
        }
        let p = usize::from(self.of(seq, 0));
        self.tolerance.get(p).copied().unwrap_or(0.0)
    }

    /// Packets of packet `seq`'s priority among packets `0..=top` (all of
    /// them without a pattern).
    pub fn peers_up_to(&self, seq: u32, top: u32) -> u64 {
        let n = u64::from(top) + 1;
        if self.pattern.is_empty() {
            return n;
        }
        let p = self.of(seq, 0);
        let len = self.pattern.len() as u64;
        let per_cycle = self.pattern.iter().filter(|&&x| x == p).count() as u64;
        let tail = self.pattern[..(n % len) as usize]
            .iter()
            .filter(|&&x| x == p)
            .count() as u64;
        (n / len) * per_cycle + tail
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gop() -> Priorities {
        // One key packet (priority 1, tolerance 0) then three of priority
        // 0 (tolerance 30%).
        Priorities {
            pattern: vec![1, 0, 0, 0],
            tolerance: vec![0.3, 0.0],
        }
    }

    #[test]
    fn the_pattern_gives_each_packet_its_priority_and_tolerance() {
        let g = gop();
        assert_eq!(
            (g.of(0, 9), g.of(1, 9), g.of(4, 9), g.of(7, 9)),
            (1, 0, 1, 0)
        );
        assert_eq!(g.tolerance_of(8, 0.5), 0.0);
        assert_eq!(g.tolerance_of(9, 0.5), 0.3);
        let none = Priorities::default();
        assert_eq!((none.of(5, 3), none.tolerance_of(5, 0.1)), (3, 0.1));
        assert_eq!(none.peers_up_to(5, 9), 10);
    }

    #[test]
    fn peers_count_the_packets_of_the_same_priority() {
        let g = gop();
        // 0..=9: key packets 0, 4, 8; the rest 7.
        assert_eq!(g.peers_up_to(4, 9), 3);
        assert_eq!(g.peers_up_to(5, 9), 7);
        assert_eq!(g.peers_up_to(0, 0), 1);
        assert_eq!(g.peers_up_to(1, 0), 0);
    }

    #[test]
    fn bad_plans_are_refused_naming_the_key() {
        let e = |p: Priorities| p.validate().unwrap_err().key;
        assert_eq!(
            e(Priorities {
                pattern: vec![0, 2],
                tolerance: vec![0.1, 0.2]
            }),
            "priority_pattern"
        );
        assert_eq!(
            e(Priorities {
                pattern: vec![0],
                tolerance: vec![1.5]
            }),
            "priority_tolerance"
        );
        assert_eq!(
            e(Priorities {
                pattern: vec![],
                tolerance: vec![0.1]
            }),
            "priority_tolerance"
        );
        assert!(gop().validate().is_ok());
    }
}
