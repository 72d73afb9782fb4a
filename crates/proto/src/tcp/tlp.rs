//! Tail Loss Probe (RFC 8985 §7): when no ACK has come for a probe timeout
//! (PTO, about two round trips) while nothing is being recovered, send one
//! segment — new data if there is some, else the last one again — so that
//! a lost tail draws SACKs and is repaired by fast recovery instead of by
//! the RTO and its slow start.
//!
//! Follows Linux (`tcp_schedule_loss_probe`, `tcp_send_loss_probe`,
//! `tcp_process_tlp_ack` in `net/ipv4/tcp_output.c` and `tcp_input.c`),
//! which the `linux` profile models; the glue is in `sender.rs`.

use crate::time::Duration;

/// Linux `TCP_RTO_MIN`: with one segment in flight, the probe also waits
/// for the peer's delayed ACK (RFC 8985's WCDelAckT).
const DELAYED_ACK_ALLOWANCE: Duration = Duration::from_millis(200);
/// Linux `TCP_TIMEOUT_MIN` (2 jiffies at HZ = 1000) otherwise.
const TIMEOUT_MIN: Duration = Duration::from_millis(2);
/// Linux `TCP_TIMEOUT_INIT`: the probe timeout before any RTT sample.
const WITHOUT_RTT: Duration = Duration::from_secs(1);

/// The probe timeout from now; the caller caps it at the RTO's expiry.
pub(crate) fn pto(srtt: Option<Duration>, one_segment_in_flight: bool) -> Duration {
    let Some(srtt) = srtt else {
        return WITHOUT_RTT;
    };
    let extra = if one_segment_in_flight {
        DELAYED_ACK_ALLOWANCE
    } else {
        TIMEOUT_MIN
    };
    srtt.saturating_mul(2).saturating_add(extra)
}

/// An outstanding probe: Linux's `tlp_high_seq` and `tlp_retrans`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Tlp {
    /// snd_max when the probe went out; no second probe until an ACK
    /// reaches it.
    pub high_seq: Option<u64>,
    /// The probe resent data (rather than sending new data).
    pub retrans: bool,
}

/// What an ACK says about an outstanding probe.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum ProbeOutcome {
    /// The ACK does not yet reach the probe.
    Pending,
    /// Settled without a loss: the probe was new data, or a pure
    /// duplicate ACK says the original and the probe both arrived.
    NoLoss,
    /// The ACK goes beyond the resent probe: the probe repaired a loss
    /// that no other mechanism saw, so the window must be reduced.
    Repaired,
}

impl Tlp {
    pub(crate) fn sent(&mut self, snd_max: u64, retrans: bool) {
        *self = Tlp {
            high_seq: Some(snd_max),
            retrans,
        };
    }

    /// `tcp_process_tlp_ack`: `ack` is the cumulative ACK, `news` whether
    /// it advanced snd_una or SACKed data. (Our receivers send no D-SACK,
    /// so Linux's `FLAG_DSACK_TLP` case never arises.)
    pub(crate) fn on_ack(&mut self, ack: u64, news: bool) -> ProbeOutcome {
        let Some(high) = self.high_seq else {
            return ProbeOutcome::Pending;
        };
        let outcome = if ack < high {
            ProbeOutcome::Pending
        } else if !self.retrans || (ack == high && !news) {
            ProbeOutcome::NoLoss
        } else if ack > high {
            ProbeOutcome::Repaired
        } else {
            ProbeOutcome::Pending
        };
        if outcome != ProbeOutcome::Pending {
            self.high_seq = None;
        }
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_waits_two_round_trips_and_a_delayed_ack_for_a_lone_segment() {
        let srtt = Some(Duration::from_millis(40));
        assert_eq!(pto(srtt, false), Duration::from_millis(82));
        assert_eq!(pto(srtt, true), Duration::from_millis(280));
        assert_eq!(pto(None, false), Duration::from_secs(1));
    }

    #[test]
    fn a_resent_probe_acked_beyond_it_repaired_a_loss() {
        let mut t = Tlp::default();
        t.sent(1000, true);
        assert_eq!(t.on_ack(900, true), ProbeOutcome::Pending);
        // Reaching the probe's end with news: still open (Linux waits).
        assert_eq!(t.on_ack(1000, true), ProbeOutcome::Pending);
        assert_eq!(t.on_ack(1500, true), ProbeOutcome::Repaired);
        assert_eq!(t.high_seq, None);
        assert_eq!(t.on_ack(2000, true), ProbeOutcome::Pending);
    }

    #[test]
    fn a_duplicate_ack_or_a_new_data_probe_settles_without_a_cut() {
        let mut t = Tlp::default();
        t.sent(1000, true);
        assert_eq!(t.on_ack(1000, false), ProbeOutcome::NoLoss);
        t.sent(1000, false);
        assert_eq!(t.on_ack(1000, true), ProbeOutcome::NoLoss);
    }
}
