//! The sender's window, in segments: E2TCP's burst-aware rules, or TCP-like
//! AIMD when window management is switched off.

use super::config::E2tcpConfig;

#[derive(Clone, Debug)]
pub struct Window {
    cwnd: f64,
    ssthresh: f64,
    managed: bool,
    max: f64,
    min: f64,
    burst: f64,
    limit: u32,
    once_per_round_trip: bool,
}

/// How the last ACK was classified.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AckClass {
    /// No new losses reported.
    Clean,
    /// A few losses: random errors.
    Random,
    /// At least the error limit: a burst error.
    Burst,
}

impl Window {
    pub fn new(cfg: &E2tcpConfig) -> Window {
        let managed = cfg.window_management;
        Window {
            cwnd: if managed { cfg.min_window as f64 } else { 1.0 },
            ssthresh: cfg.max_window as f64,
            managed,
            max: cfg.max_window as f64,
            min: cfg.min_window as f64,
            burst: cfg.burst_window as f64,
            limit: cfg.error_limit,
            once_per_round_trip: cfg.reduce_once_per_round_trip,
        }
    }

    /// Whole segments the window allows in flight.
    pub fn segments(&self) -> u32 {
        self.cwnd.floor().max(1.0) as u32
    }

    pub fn classify(&self, new_losses: u32) -> AckClass {
        match new_losses {
            0 => AckClass::Clean,
            n if n < self.limit => AckClass::Random,
            _ => AckClass::Burst,
        }
    }

    /// An ACK that acknowledged something new and reported `new_losses`.
    /// `in_recovery` is true while losses of the last reduction are still
    /// being repaired: TCP-like mode reduces once per window, and so do
    /// E2TCP's random-loss halvings unless `reduce_once_per_round_trip` is
    /// off. A burst always cuts to the burst window.
    pub fn on_ack(&mut self, acked_segments: u32, new_losses: u32, in_recovery: bool) -> AckClass {
        let class = self.classify(new_losses);
        if self.managed {
            match class {
                // "Enlarged up to the maximum": one segment per ACK.
                AckClass::Clean => {
                    if acked_segments > 0 {
                        self.cwnd = (self.cwnd + 1.0).min(self.max)
                    }
                }
                AckClass::Random if in_recovery && self.once_per_round_trip => {}
                AckClass::Random => self.cwnd = (self.cwnd / 2.0).max(self.min),
                AckClass::Burst => self.cwnd = self.burst,
            }
        } else if class == AckClass::Clean || in_recovery {
            for _ in 0..acked_segments {
                if self.cwnd < self.ssthresh {
                    self.cwnd += 1.0;
                } else {
                    self.cwnd += 1.0 / self.cwnd;
                }
            }
            self.cwnd = self.cwnd.min(self.max);
        } else {
            self.ssthresh = (self.cwnd / 2.0).max(2.0);
            self.cwnd = self.ssthresh;
        }
        class
    }

    /// Either timer expired.
    pub fn on_timeout(&mut self) {
        if self.managed {
            self.cwnd = self.min;
        } else {
            self.ssthresh = (self.cwnd / 2.0).max(2.0);
            self.cwnd = 1.0;
        }
    }

    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e2tcp_rules() {
        let cfg = E2tcpConfig::default();
        let mut w = Window::new(&cfg);
        assert_eq!(w.segments(), 4);
        for _ in 0..100 {
            w.on_ack(1, 0, false);
        }
        assert_eq!(w.segments(), 32);
        assert_eq!(w.on_ack(1, 2, false), AckClass::Random);
        assert_eq!(w.segments(), 16);
        for _ in 0..5 {
            w.on_ack(1, 1, false);
        }
        assert_eq!(w.segments(), 4, "never below the minimum window");
        assert_eq!(w.on_ack(1, 3, false), AckClass::Burst);
        assert_eq!(w.segments(), 1);
        w.on_ack(1, 0, false);
        w.on_timeout();
        assert_eq!(w.segments(), 4);
    }

    /// Two random losses of one window, reported by two ACKs, halve the
    /// window once; the paper's per-ACK reading halves it twice.
    #[test]
    fn random_losses_halve_once_per_round_trip_unless_asked_per_ack() {
        for (once, after) in [(true, 16), (false, 8)] {
            let cfg = E2tcpConfig {
                reduce_once_per_round_trip: once,
                ..E2tcpConfig::default()
            };
            let mut w = Window::new(&cfg);
            for _ in 0..100 {
                w.on_ack(1, 0, false);
            }
            assert_eq!(w.on_ack(1, 1, false), AckClass::Random);
            assert_eq!(w.on_ack(1, 1, true), AckClass::Random);
            assert_eq!(w.segments(), after, "once per round trip: {once}");
            // A burst inside the same round trip still cuts.
            assert_eq!(w.on_ack(1, 3, true), AckClass::Burst);
            assert_eq!(w.segments(), 1);
        }
    }

    #[test]
    fn tcp_like_rules_without_window_management() {
        let cfg = E2tcpConfig {
            window_management: false,
            ..E2tcpConfig::default()
        };
        let mut w = Window::new(&cfg);
        assert_eq!(w.segments(), 1);
        w.on_ack(1, 0, false);
        w.on_ack(2, 0, false);
        assert_eq!(w.segments(), 4);
        w.on_ack(1, 1, false);
        assert_eq!(w.segments(), 2);
        w.on_timeout();
        assert_eq!(w.segments(), 1);
    }
}
