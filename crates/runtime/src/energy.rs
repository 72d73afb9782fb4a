//! Energy estimate of a real run with the simulator's radio model.
//!
//! The runtime has no radio, so it asks: what would a radio of profile P,
//! sending at `rate_bps`, have spent to put this run's bytes on the air and
//! take the peer's off it, over the run's elapsed time? Each datagram is
//! charged its UDP payload plus 28 bytes of IPv4 and UDP headers (link-layer
//! framing is not counted). Airtime is bits / rate; transmissions are laid
//! end to end, then receptions, and the rest of the elapsed time is idle
//! (an always-active radio: [`RadioPolicy::AlwaysActive`]). When the airtime
//! exceeds the elapsed time (the run was faster than the radio could have
//! been), the radio time is the airtime and `airtime_exceeds_run` says so.

use joulenet_channel::{RadioLedger, RadioPolicy, RadioProfile};
use joulenet_proto::{Duration, Time};
use serde::Serialize;

/// Bytes of IPv4 + UDP header charged per datagram.
pub const IP_UDP_OVERHEAD: u64 = 28;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EnergyEstimate {
    pub radio: String,
    pub radio_rate_bps: u64,
    pub energy_j: f64,
    pub tx_j: f64,
    pub rx_j: f64,
    pub idle_j: f64,
    pub tx_s: f64,
    pub rx_s: f64,
    pub idle_s: f64,
    pub airtime_exceeds_run: bool,
}

/// Estimates a run's radio energy; see the module documentation.
#[allow(clippy::too_many_arguments)]
pub fn estimate(
    profile: &RadioProfile,
    rate_bps: u64,
    datagrams_sent: u64,
    udp_bytes_sent: u64,
    datagrams_received: u64,
    udp_bytes_received: u64,
    elapsed: Duration,
) -> EnergyEstimate {
    let rate = rate_bps.max(1) as u128;
    let airtime = |datagrams: u64, bytes: u64| {
        let bits = (bytes as u128 + datagrams as u128 * IP_UDP_OVERHEAD as u128) * 8;
        (bits * 1_000_000_000 / rate).min(u64::MAX as u128) as u64
    };
    let tx_ns = airtime(datagrams_sent, udp_bytes_sent);
    let rx_ns = airtime(datagrams_received, udp_bytes_received);
    let busy = tx_ns.saturating_add(rx_ns);
    let end = elapsed.0.max(busy);
    let mut ledger = RadioLedger::new(profile.clone(), RadioPolicy::AlwaysActive);
    ledger.add_tx(Time::ZERO, Time(tx_ns));
    ledger.add_rx(Time(tx_ns), Time(busy));
    ledger.advance(Time(end));
    let e = ledger.energy();
    EnergyEstimate {
        radio: profile.name.clone(),
        radio_rate_bps: rate_bps,
        energy_j: e.total_j,
        tx_j: e.tx.joules,
        rx_j: e.rx.joules,
        idle_j: e.idle.joules,
        tx_s: e.tx.seconds,
        rx_s: e.rx.seconds,
        idle_s: e.idle.seconds,
        airtime_exceeds_run: busy > elapsed.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn energy_is_power_times_time() {
        let p = RadioProfile::preset("ns3-wifi").unwrap();
        // 1000 datagrams of 972 bytes (+28) = 8 Mbit at 8 Mbit/s = 1 s tx;
        // no rx; 3 s elapsed → 2 s idle.
        let e = estimate(&p, 8_000_000, 1000, 972_000, 0, 0, Duration::from_secs(3));
        assert!((e.tx_s - 1.0).abs() < 1e-9, "{e:?}");
        assert!((e.idle_s - 2.0).abs() < 1e-9, "{e:?}");
        let want = p.tx_w * 1.0 + p.idle_w * 2.0;
        assert!((e.energy_j - want).abs() < 1e-9, "{} vs {want}", e.energy_j);
        assert!(!e.airtime_exceeds_run);
    }

    #[test]
    fn airtime_longer_than_the_run_is_flagged() {
        let p = RadioProfile::preset("80211b").unwrap();
        let e = estimate(
            &p,
            1_000_000,
            10,
            1_000_000,
            10,
            1000,
            Duration::from_millis(1),
        );
        assert!(e.airtime_exceeds_run);
        assert_eq!(e.idle_s, 0.0);
        assert!(e.rx_s > 0.0);
    }
}
