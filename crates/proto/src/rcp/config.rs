//! RCP configuration: one struct for both ends (each reads what it needs).

use crate::cc::{CongestionControl, NewReno, StpLike};
use crate::time::Duration;

/// Which window arithmetic the receiver runs. The sender never knows.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum RcpController {
    #[default]
    NewReno,
    /// The STP-like controller of `cc::StpLike` (RCP-STP).
    Stp,
}

/// Energy-frugal power management at the receiver (the paper's §3.4.4).
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct PowerSave {
    /// How often a sleeping receiver wakes to hear a beacon.
    pub beacon_interval: Duration,
    /// How long it stays awake for the beacon.
    pub beacon_duration: Duration,
    /// The channel is judged bad when the link layer's per-attempt loss
    /// estimate toward the access point is at least this.
    pub bad_loss: f64,
}

impl Default for PowerSave {
    fn default() -> PowerSave {
        PowerSave {
            beacon_interval: Duration::from_millis(100),
            beacon_duration: Duration::from_millis(2),
            bad_loss: 0.01,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct RcpConfig {
    /// Largest payload per DATA segment; requests are cut at multiples of it.
    pub mss: u16,
    /// Initial congestion window, segments.
    pub initial_window: u32,
    /// Initial slow-start threshold, bytes (`u64::MAX`: infinite).
    pub initial_ssthresh: u64,
    pub min_rto: Duration,
    pub initial_rto: Duration,
    pub max_rto: Duration,
    /// Consecutive timeouts tolerated before giving up.
    pub max_consecutive_rtos: u32,
    /// Receive buffer, bytes: requests never reach past `RCV.NXT` + this.
    pub recv_buffer: usize,
    /// Sender's buffer, bytes: its request limit runs this far past SEG.DEQ.
    pub send_buffer: usize,
    /// Later-requested arrivals that declare a hole lost (every hole alike).
    pub dupthresh: u32,
    pub controller: RcpController,
    /// Requests for new data wait until this many segments can be asked
    /// for at once (1: request on every arrival, as TCP acknowledges).
    pub request_every: u32,
    /// Use explicit loss notification from the local link layer.
    pub eln: bool,
    pub power_save: Option<PowerSave>,
    /// Port written in our packets; `None` takes `Net::local`'s.
    pub local_port: Option<u16>,
}

impl Default for RcpConfig {
    fn default() -> RcpConfig {
        RcpConfig {
            mss: 1460,
            initial_window: 10,
            initial_ssthresh: u64::MAX,
            min_rto: Duration::from_secs(1),
            initial_rto: Duration::from_secs(1),
            max_rto: Duration::from_secs(60),
            max_consecutive_rtos: 15,
            recv_buffer: 1024 * 1024,
            send_buffer: 2 * 1024 * 1024,
            dupthresh: 3,
            controller: RcpController::NewReno,
            request_every: 1,
            eln: false,
            power_save: None,
            local_port: None,
        }
    }
}

impl RcpConfig {
    /// Check the options against each other; the error names the option.
    pub fn validate(&self) -> Result<(), crate::ConfigError> {
        use crate::ConfigError;
        crate::config_error::check_segment_options(
            self.mss,
            self.initial_window,
            (self.min_rto, self.max_rto),
            (self.recv_buffer, self.send_buffer),
        )?;
        if self.request_every == 0 {
            return Err(ConfigError::new("request_every", "must be at least 1"));
        }
        Ok(())
    }

    /// RCP-STP: the STP-like controller with batched requests.
    pub fn stp() -> RcpConfig {
        RcpConfig {
            controller: RcpController::Stp,
            request_every: 4,
            ..RcpConfig::default()
        }
    }

    pub(crate) fn controller(&self) -> Box<dyn CongestionControl> {
        let mss = self.mss as u64;
        let iw = self.initial_window as u64 * mss;
        match self.controller {
            RcpController::NewReno => Box::new(NewReno::new(mss, iw, self.initial_ssthresh)),
            RcpController::Stp => Box::new(StpLike::stp_like(mss, iw, self.initial_ssthresh)),
        }
    }
}
