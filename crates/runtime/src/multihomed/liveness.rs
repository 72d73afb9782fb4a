//! Whether a path is up, from what its socket sees: the engine reads it
//! through `Net::link(..).up` (the simulator answers the same question
//! from its link schedule).
//!
//! * **Socket errors.** A path whose interface is down has no route from
//!   its local address to its sender: `sendto(2)` fails with
//!   `ENETUNREACH` and so does `connect(2)` of a probe socket bound to
//!   the same address, which asks the kernel's routing without sending
//!   anything ([`route_exists`]). The driver probes every path at the
//!   engine's poll interval, so an `ip link set down` is seen within
//!   50 ms, and an interface that comes back is seen the same way.
//! * **Silence.** A path can also fail beyond the host (an access point
//!   that vanished, a dead link further on): then nothing comes back.
//!   After the receiver sent on a path, `silence` without a datagram from
//!   its sender takes it down; it is reported up again after the same
//!   time, and the engine's new pipe (its SYN) probes it.

use std::net::{SocketAddr, UdpSocket};

use joulenet_proto::{Duration, Time};

/// Why a path was last taken down.
#[derive(Copy, Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DownReason {
    /// No route from the local address to the sender (interface down).
    NoRoute,
    /// A send failed with a network error.
    SendFailed,
    /// Nothing heard for the silence time after sending.
    Silence,
}

#[derive(Clone, Debug)]
pub struct Liveness {
    silence: Duration,
    up: bool,
    /// The first send since the last datagram heard (`None`: nothing
    /// awaited).
    awaiting_since: Option<Time>,
    /// A path taken down by silence stays down until then.
    hold_until: Time,
    /// Times the path went down and came back up.
    pub downs: u64,
    pub ups: u64,
    pub last_down: Option<DownReason>,
}

impl Liveness {
    /// A path not yet probed: down until the first [`Liveness::refresh`].
    pub fn new(silence: Duration) -> Liveness {
        Liveness {
            silence,
            up: false,
            awaiting_since: None,
            hold_until: Time::ZERO,
            downs: 0,
            ups: 0,
            last_down: None,
        }
    }

    pub fn is_up(&self) -> bool {
        self.up
    }

    pub fn heard(&mut self) {
        self.awaiting_since = None;
    }

    pub fn sent(&mut self, now: Time) {
        self.awaiting_since.get_or_insert(now);
    }

    /// A send failed with an error that means the network is unreachable
    /// from this address.
    pub fn send_failed(&mut self, now: Time) {
        self.go_down(now, DownReason::SendFailed, Time::ZERO);
    }

    /// Re-evaluates the path at `now`, given whether the kernel has a
    /// route from its address to its sender.
    pub fn refresh(&mut self, now: Time, route: bool) {
        if !route {
            self.go_down(now, DownReason::NoRoute, Time::ZERO);
            return;
        }
        let silent = self
            .awaiting_since
            .is_some_and(|t| now.0.saturating_sub(t.0) >= self.silence.0);
        if self.up && silent {
            self.go_down(now, DownReason::Silence, now + self.silence);
        } else if !self.up && now >= self.hold_until {
            self.up = true;
            self.ups += 1;
        }
    }

    fn go_down(&mut self, _now: Time, why: DownReason, hold_until: Time) {
        self.awaiting_since = None;
        self.hold_until = self.hold_until.max(hold_until);
        if self.up {
            self.up = false;
            self.downs += 1;
            self.last_down = Some(why);
        }
    }
}

/// Whether the kernel would route a datagram from `local`'s address to
/// `remote`: `connect(2)` of a fresh UDP socket bound to that address (any
/// port) looks the route up and sends nothing. `false` also when the
/// address is gone from the host.
pub fn route_exists(local: SocketAddr, remote: SocketAddr) -> bool {
    let probe = SocketAddr::new(local.ip(), 0);
    UdpSocket::bind(probe)
        .and_then(|s| s.connect(remote))
        .is_ok()
}

/// Whether a send error says the path is unusable (rather than a full
/// socket buffer, which is congestion at this host).
pub fn is_network_error(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ENETUNREACH)
            | Some(libc::ENETDOWN)
            | Some(libc::EHOSTUNREACH)
            | Some(libc::EADDRNOTAVAIL)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_millis(1000);

    fn at(ms: u64) -> Time {
        Time(ms * 1_000_000)
    }

    #[test]
    fn up_once_routed_down_without_a_route_and_back() {
        let mut l = Liveness::new(S);
        assert!(!l.is_up());
        l.refresh(at(0), true);
        assert!(l.is_up());
        l.refresh(at(50), false);
        assert!(!l.is_up());
        assert_eq!(l.last_down, Some(DownReason::NoRoute));
        l.refresh(at(100), true);
        assert!(l.is_up(), "no hold after a routing failure");
        assert_eq!((l.downs, l.ups), (1, 2));
    }

    #[test]
    fn silence_after_sending_takes_a_path_down_for_the_silence_time() {
        let mut l = Liveness::new(S);
        l.refresh(at(0), true);
        l.sent(at(10));
        l.sent(at(500));
        l.refresh(at(900), true);
        assert!(
            l.is_up(),
            "not yet silent for 1 s since the first unanswered send"
        );
        l.heard();
        l.refresh(at(1200), true);
        assert!(l.is_up(), "an answer resets the wait");
        l.sent(at(1300));
        l.refresh(at(2300), true);
        assert!(!l.is_up());
        assert_eq!(l.last_down, Some(DownReason::Silence));
        l.refresh(at(3000), true);
        assert!(!l.is_up(), "held down");
        l.refresh(at(3300), true);
        assert!(l.is_up(), "reported up again for a new pipe to probe");
    }

    #[test]
    fn a_quiet_path_that_sent_nothing_stays_up() {
        let mut l = Liveness::new(S);
        l.refresh(at(0), true);
        l.refresh(at(60_000), true);
        assert!(l.is_up());
        l.send_failed(at(60_001));
        assert!(!l.is_up());
        assert_eq!(l.last_down, Some(DownReason::SendFailed));
    }

    #[test]
    fn loopback_is_routed_and_a_foreign_address_is_not() {
        let lo: SocketAddr = "127.0.0.1:0".parse().unwrap();
        assert!(route_exists(lo, "127.0.0.1:9".parse().unwrap()));
        // 192.0.2.1 (TEST-NET-1) is no address of this host.
        assert!(!route_exists(
            "192.0.2.1:0".parse().unwrap(),
            "127.0.0.1:9".parse().unwrap()
        ));
    }
}
