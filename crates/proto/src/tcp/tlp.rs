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
/// Linux `TCP_TIMEOUT_MIN` (2 jiffies) otherwise, at HZ = 1000 when the
/// profile does not count in jiffies.
const TIMEOUT_MIN: Duration = Duration::from_millis(2);
/// Linux `TCP_TIMEOUT_INIT`: the probe timeout before any RTT sample.
const WITHOUT_RTT: Duration = Duration::from_secs(1);

/// The probe timeout from now; the caller caps it at the RTO's expiry.
/// With a `jiffy` (the kernel's timer tick, 1/HZ), two round trips are
/// rounded up to whole jiffies and `TCP_TIMEOUT_MIN` is two of them
/// (`tcp_schedule_loss_probe`: `usecs_to_jiffies(srtt_us >> 2)`).
pub(crate) fn pto(
    srtt: Option<Duration>,
    one_segment_in_flight: bool,
    jiffy: Option<Duration>,
) -> Duration {
    let Some(srtt) = srtt else {
        return WITHOUT_RTT;
    };
    let extra = match (one_segment_in_flight, jiffy) {
        (true, _) => DELAYED_ACK_ALLOWANCE,
        (false, None) => TIMEOUT_MIN,
        (false, Some(j)) => j.saturating_mul(2),
    };
    let two_rtts = srtt.saturating_mul(2);
    let two_rtts = jiffy.map_or(two_rtts, |j| whole_jiffies(two_rtts, j));
    two_rtts.saturating_add(extra)
}

/// `d` rounded up to whole jiffies (`usecs_to_jiffies`).
pub(crate) fn whole_jiffies(d: Duration, jiffy: Duration) -> Duration {
    let j = jiffy.as_nanos().max(1);
    Duration::from_nanos(d.as_nanos().div_ceil(j) * j)
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
        assert_eq!(pto(srtt, false, None), Duration::from_millis(82));
        assert_eq!(pto(srtt, true, None), Duration::from_millis(280));
        assert_eq!(pto(None, false, None), Duration::from_secs(1));
    }

    #[test]
    fn at_hz_250_the_probe_counts_whole_four_ms_jiffies() {
        let jiffy = Some(Duration::from_millis(4));
        let srtt = Some(Duration::from_micros(2_100)); // two round trips: 4.2 ms
        assert_eq!(pto(srtt, false, jiffy), Duration::from_millis(8 + 8));
        assert_eq!(pto(srtt, true, jiffy), Duration::from_millis(8 + 200));
        assert_eq!(pto(srtt, false, None), Duration::from_micros(4_200 + 2_000));
        let exact = Duration::from_millis(8);
        assert_eq!(whole_jiffies(exact, Duration::from_millis(4)), exact);
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
