//! TCP behaviour profiles: which stack's rules a connection follows where
//! the RFCs leave a choice or real stacks depart from them.
//!
//! A profile is a bundle of [`TcpRules`] plus the timer values its stack
//! uses. Each rule is a separate mechanism with its own test
//! (`tests/tcp_profiles.rs`, `cc/`, `rtt.rs`); docs/validation.md lists
//! them side by side with their sources:
//!
//! - `rfc`: RFC 5681 (byte-counting growth, ssthresh = FlightSize/2),
//!   RFC 6675 recovery, RFC 6298 timer (minimum 1 s; the back-off ends
//!   once data sent after the timeout is acknowledged, §5's note). What every
//!   reproduction used before profiles existed; the default.
//! - `linux`: PRR (RFC 6937), ssthresh from cwnd (`tcp_reno_ssthresh`), no
//!   second ssthresh cut on a repeated RTO (`tcp_enter_loss`),
//!   RTO = SRTT + max(4·RTTVAR, 200 ms) (`tcp_rtt_estimator`'s
//!   `rttvar ≥ tcp_rto_min`), 120 s maximum, HyStart for CUBIC, no RTT
//!   sample from an ACK covering retransmitted data, no ssthresh cut at a
//!   timeout that interrupts a fast recovery (`tcp_enter_loss`), Limited Transmit
//!   (RFC 3042; Linux gets it from counting dupacks out of the flight),
//!   RACK-TLP (RFC 8985; `net.ipv4.tcp_recovery = 1`, with SACK), F-RTO
//!   with undo of a spurious timeout's window cut (RFC 5682 §3;
//!   `tcp_process_loss`, `net.ipv4.tcp_frto = 2`); at the receiver,
//!   quick-ACK mode (`quickack.rs`) and a 40 ms delayed-ACK timer
//!   (`TCP_ATO_MIN`, `tcp_send_delayed_ack`).
//! - `ns3`: ns-3's TcpSocketBase with TcpNewReno: +1 MSS per ACK in slow
//!   start and MSS²/cwnd per ACK in congestion avoidance
//!   (`TcpNewReno::SlowStart`/`CongestionAvoidance`), ssthresh = half the
//!   RFC 6675 pipe (`GetSsThresh(tcb, BytesInFlight())`), no second cut on
//!   a repeated RTO (`ReTxTimeout`), PRR (`TcpPrrRecovery`, the default
//!   `RecoveryType`), Limited Transmit (attribute default true), HyStart
//!   for CUBIC with ns-3's delay threshold (`TcpCubic`'s `HyStart`
//!   attribute, default true), only a recovery's first partial ACK
//!   restarts the retransmission timer (`NewAck(ack, m_isFirstPartialAck)`,
//!   RFC 6582's Impatient variant), a new ACK
//!   recomputes the RTO from the estimator and so clears the back-off
//!   (`NewAck`), minimum RTO 1 s, 6 data retries (`DataRetries`). Found by
//!   diffing packet traces against ns-3.44 (`validation/ns3/tracediff.py`):
//!   without SACK each dupack is a Reno SACK and PRR sets the recovery
//!   window (`reno_sack.rs`), PRR's arithmetic is 3.44's, a NewReno
//!   recovery ends at ssthresh, the ACK ending CA_LOSS grows the window
//!   only beyond the recovery point, CUBIC reduces in whole segments, the
//!   SYN timer is 3 s (`ConnTimeout`) and the first data segment is ACKed
//!   at once.
//! - `xkernel-1998`: the WWP paper's baseline, the x-kernel's TCP Reno, a
//!   port of BSD's: per-ACK growth (maxseg²/cwnd), ssthresh = min(cwnd,
//!   rwnd)/2, 500 ms timer ticks, initial RTO 6 s, minimum 1 s, maximum
//!   64 s, back-off capped at 64×, 12 retransmissions, initial window one
//!   segment, and 8 KB socket buffers (4.4BSD's `tcp_sendspace` /
//!   `tcp_recvspace`): a window-limited TCP. The paper gives none of these;
//!   they are BSD's (Stevens, *TCP/IP Illustrated* vol. 2).
//! - `ns2`: the E2TCP paper's baseline, ns-2's one-way `Agent/TCP` with its
//!   defaults before the 2004–2006 changes (the values ns-2's own test
//!   suites restore): 100 ms `tcpTick_`, initial RTO 6 s (`rtxcur_init_`),
//!   RTO floor of two ticks (`minrto_` 0), back-off capped at 64×
//!   (`maxbackoff_`), per-ACK growth, ssthresh = min(cwnd, window)/2,
//!   initial window one segment (`windowInit_`).

use core::fmt;
use core::str::FromStr;

use super::config::{DelayedAck, RttSampling, TcpConfig};
use crate::cc::HyStartFlavour;
use crate::time::Duration;

#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum TcpProfile {
    #[default]
    Rfc,
    Linux,
    Ns3,
    Xkernel1998,
    Ns2,
}

impl TcpProfile {
    pub const ALL: [TcpProfile; 5] = [
        TcpProfile::Rfc,
        TcpProfile::Linux,
        TcpProfile::Ns3,
        TcpProfile::Xkernel1998,
        TcpProfile::Ns2,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            TcpProfile::Rfc => "rfc",
            TcpProfile::Linux => "linux",
            TcpProfile::Ns3 => "ns3",
            TcpProfile::Xkernel1998 => "xkernel-1998",
            TcpProfile::Ns2 => "ns2",
        }
    }

    /// The rules of this profile.
    pub fn rules(self) -> TcpRules {
        let rfc = TcpRules::default();
        match self {
            TcpProfile::Rfc => rfc,
            TcpProfile::Linux => TcpRules {
                ssthresh_base: SsthreshBase::Cwnd,
                repeated_rto_keeps_ssthresh: true,
                prr: true,
                limited_transmit: true,
                hystart: Some(HyStartFlavour::Linux),
                rto_formula: RtoFormula::LinuxRttvarFloor,
                rack_tlp: true,
                frto: true,
                quickack: true,
                timeout_in_recovery_keeps_ssthresh: true,
                jiffy: Some(Duration::from_millis(4)),
                linux_prr: true,
                linux_cubic: true,
                // `icsk_backoff` is cleared only by a valid RTT sample
                // (`tcp_ack_update_rtt`).
                new_data_ack_clears_backoff: false,
                ..rfc
            },
            TcpProfile::Ns3 => TcpRules {
                growth: Growth::PerAck,
                ssthresh_base: SsthreshBase::Pipe,
                repeated_rto_keeps_ssthresh: true,
                prr: true,
                limited_transmit: true,
                hystart: Some(HyStartFlavour::Ns3),
                new_ack_clears_backoff: true,
                impatient_partial_acks: true,
                ack_first_data_at_once: true,
                syn_timeout: Some(Duration::from_secs(3)),
                newreno_exit_at_ssthresh: true,
                reno_sack_prr: true,
                loss_exit_counts_beyond_recover: true,
                cubic_whole_segments: true,
                ns3_prr: true,
                ..rfc
            },
            TcpProfile::Xkernel1998 => TcpRules {
                growth: Growth::PerAck,
                ssthresh_base: SsthreshBase::WindowMin,
                clock_tick: Duration::from_millis(500),
                max_backoff_shift: 6,
                // `t_rxtshift` is cleared by a timed segment's ACK only.
                new_data_ack_clears_backoff: false,
                ..rfc
            },
            TcpProfile::Ns2 => TcpRules {
                growth: Growth::PerAck,
                ssthresh_base: SsthreshBase::WindowMin,
                clock_tick: Duration::from_millis(100),
                max_backoff_shift: 6,
                new_data_ack_clears_backoff: false,
                ..rfc
            },
        }
    }

    /// `cfg` following this profile: its rules and its stack's timer
    /// values (and, for the papers' baselines, their windows). Options
    /// set after this (scenario keys) override it.
    pub fn apply(self, cfg: TcpConfig) -> TcpConfig {
        let base = TcpConfig {
            profile: self,
            rules: self.rules(),
            ..cfg
        };
        match self {
            TcpProfile::Rfc => base,
            TcpProfile::Linux => TcpConfig {
                // The delayed-ACK timer is `ato`, which starts at and
                // settles to TCP_ATO_MIN (40 ms) when segments come faster
                // than every 20 ms, and `tcp_send_delayed_ack` caps it at
                // max(receiver's SRTT, TCP_DELACK_MIN = 40 ms).
                delayed_ack: base.delayed_ack.map(|d| DelayedAck {
                    timeout: Duration::from_millis(40),
                    ..d
                }),
                min_rto: Duration::from_millis(200),
                initial_rto: Duration::from_secs(1),
                max_rto: Duration::from_secs(120),
                max_consecutive_rtos: 15,
                rtt_sampling: RttSampling::Linux,
                ..base
            },
            TcpProfile::Ns3 => TcpConfig {
                min_rto: Duration::from_secs(1),
                initial_rto: Duration::from_secs(1),
                max_rto: Duration::from_secs(60),
                max_consecutive_rtos: 6,
                ..base
            },
            TcpProfile::Xkernel1998 => TcpConfig {
                min_rto: Duration::from_secs(1),
                initial_rto: Duration::from_secs(6),
                max_rto: Duration::from_secs(64),
                max_consecutive_rtos: 12,
                initial_window: 1,
                send_buffer: 8 * 1024,
                recv_buffer: 8 * 1024,
                ..base
            },
            TcpProfile::Ns2 => TcpConfig {
                min_rto: Duration::from_millis(200),
                initial_rto: Duration::from_secs(6),
                max_rto: Duration::from_secs(100_000),
                initial_window: 1,
                ..base
            },
        }
    }
}

impl fmt::Display for TcpProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TcpProfile {
    type Err = String;
    fn from_str(s: &str) -> Result<TcpProfile, String> {
        TcpProfile::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                format!("unknown TCP profile {s:?} (expected rfc, linux, ns3, xkernel-1998 or ns2)")
            })
    }
}

/// The rules in which stacks differ. `Default` is the `rfc` profile.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TcpRules {
    pub growth: Growth,
    /// What ssthresh halves at a loss (CUBIC always takes β·cwnd).
    pub ssthresh_base: SsthreshBase,
    /// A second RTO in a row, whose segment the timer already resent,
    /// leaves ssthresh alone (RFC 5681 §3.1 asks the cut only when the
    /// segment "has not yet been resent by way of the retransmission
    /// timer"; Linux and ns-3 follow it).
    pub repeated_rto_keeps_ssthresh: bool,
    /// Proportional Rate Reduction (RFC 6937) sizes the window in SACK
    /// recovery instead of setting it to ssthresh at once.
    pub prr: bool,
    /// Limited Transmit (RFC 3042): without SACK, the first two dupacks
    /// each let one new segment out. (With SACK the pipe already falls by
    /// each SACKed segment.)
    pub limited_transmit: bool,
    /// CUBIC leaves slow start when the RTT rises (HyStart's delay test
    /// with Linux's or ns-3's threshold, `cc/hystart.rs`); `None`: at the
    /// first loss.
    pub hystart: Option<HyStartFlavour>,
    pub rto_formula: RtoFormula,
    /// Every new cumulative ACK recomputes the RTO from SRTT and RTTVAR,
    /// ending any back-off (ns-3's `NewAck`); otherwise the back-off stays
    /// until a fresh RTT sample (RFC 6298 §5.7's note, Karn).
    pub new_ack_clears_backoff: bool,
    /// An ACK for data first sent after the last timeout (beyond the
    /// `recover` point it set) recomputes the RTO from SRTT and RTTVAR,
    /// ending the back-off even when it brings no RTT sample (it also
    /// covers retransmitted data, which Karn's rule as Linux applies it
    /// does not sample): RFC 6298 §5's note, "once new data has been sent
    /// and acknowledged … collapsing RTO back down". Otherwise the
    /// back-off waits for a fresh sample, which at heavy loss may not come.
    pub new_data_ack_clears_backoff: bool,
    /// Only the first partial ACK of a recovery restarts the retransmission
    /// timer (RFC 6582 §4.3's Impatient variant; ns-3 restarts it with
    /// `NewAck(ack, m_isFirstPartialAck)`); otherwise every new ACK does
    /// (RFC 6298 §5.3, Linux).
    pub impatient_partial_acks: bool,
    /// Clock granularity G: RTT samples are counted in whole ticks
    /// (rounded up) and the RTO in whole ticks above SRTT; 1 ms except
    /// for the coarse timers of BSD (500 ms) and old ns-2 (100 ms).
    pub clock_tick: Duration,
    /// The back-off stops doubling after this many timeouts (BSD's
    /// `tcp_backoff` table and ns-2's `maxbackoff_` stop at 64×).
    pub max_backoff_shift: u32,
    /// RACK-TLP (RFC 8985) with SACK: losses found by time, lost
    /// retransmissions included (`rack.rs`), and a tail loss probe after
    /// about two round trips without an ACK (`tlp.rs`). Linux's default.
    pub rack_tlp: bool,
    /// The receiver acknowledges the first data segment of a connection at
    /// once instead of delaying it (ns-3's `ProcessSynRcvd`: "Always
    /// respond to first data packet to speed up the connection"). It
    /// shifts which segments every later delayed ACK pairs up.
    pub ack_first_data_at_once: bool,
    /// The SYN and SYN-ACK are resent on their own timer, doubling from
    /// this value (ns-3's `ConnTimeout`, 3 s, with `SendEmptyPacket`'s
    /// `m_cnTimeout * backoffCount`) instead of the RTO's initial value.
    pub syn_timeout: Option<Duration>,
    /// A NewReno recovery ends with cwnd = ssthresh, and the ACK that
    /// ends it also grows the window (ns-3's `ProcessAck`: `m_cWnd =
    /// m_ssThresh` on leaving CA_RECOVERY, then `IncreaseWindow`);
    /// otherwise RFC 6582 §3.2 step 6's option (1), min(ssthresh,
    /// FlightSize + SMSS), which avoids a burst.
    pub newreno_exit_at_ssthresh: bool,
    /// Without SACK, each dupack counts as a SACK of the segment after the
    /// head (ns-3's `AddRenoSack`) and PRR sizes the recovery window with
    /// ns-3's counting (`reno_sack.rs`); otherwise RFC 6582's window
    /// inflation.
    pub reno_sack_prr: bool,
    /// The ACK that ends a timeout's go-back-N repair grows the window only
    /// by the whole segments it acknowledges beyond the recovery point
    /// (ns-3's `ProcessAck` leaving CA_LOSS); otherwise by all it
    /// acknowledges.
    pub loss_exit_counts_beyond_recover: bool,
    /// CUBIC's reduction counts the window in whole segments (ns-3's
    /// `TcpCubic::GetSsThresh`, `cc/cubic.rs`).
    pub cubic_whole_segments: bool,
    /// PRR with SACK counts as ns-3.44's `TcpPrrRecovery` does (RecoverFS =
    /// the pipe, a segment added per dupack, sndcnt never below 0, a
    /// partial ACK counted twice; `prr_window_ns3`) instead of RFC 6937.
    pub ns3_prr: bool,
    /// F-RTO (RFC 5682 §3, SACK-enhanced; `frto.rs`): after a timeout,
    /// an ACK of data sent before it and never resent shows the timeout
    /// was spurious, and the window cut is undone instead of resending
    /// go-back-N (Linux `net.ipv4.tcp_frto = 2`, the default).
    pub frto: bool,
    /// The receiver acknowledges every in-order segment at once for 16
    /// segments after the first data, after a gap in arrivals longer than
    /// its RTO and after a duplicate segment (Linux's quick-ACK mode,
    /// `quickack.rs`); otherwise every second segment from the start.
    pub quickack: bool,
    /// A timeout that interrupts a fast recovery leaves ssthresh as the
    /// recovery set it: Linux's `tcp_enter_loss` reduces it only "if it
    /// has not yet been made inside this window" (CA state Open or
    /// Disorder, or the recovery point reached); otherwise a second cut.
    pub timeout_in_recovery_keeps_ssthresh: bool,
    /// The kernel's timer tick (1/HZ): RACK's reordering timer and the
    /// loss probe's timeout are counted in whole jiffies plus Linux's
    /// `TCP_TIMEOUT_MIN` of two (`rack_tlp.rs`, `tlp.rs`); `None`: exact
    /// times. HZ is a kernel build option: 250 in the kernel
    /// validation/linux measures (`CONFIG_HZ_250`), 1000 in others.
    pub jiffy: Option<Duration>,
    /// PRR as Linux runs it (`tcp_cwnd_reduction`, `prr.rs`'s
    /// `on_ack_linux`): RecoverFS is the window, and below ssthresh the
    /// extra segment only on an ACK that advances snd_una and marks
    /// nothing newly lost; otherwise RFC 6937 with PRR-SSRB.
    pub linux_prr: bool,
    /// CUBIC grows, reduces and resets as Linux's `tcp_cubic.c` does
    /// (`cc/cubic_linux.rs`: whole segments, β = 717/1024, and its
    /// increment recomputed at most once per 1/32 s while the window is
    /// unchanged); otherwise RFC 9438's continuous curve.
    pub linux_cubic: bool,
}

impl Default for TcpRules {
    fn default() -> TcpRules {
        TcpRules {
            growth: Growth::ByteCounting,
            ssthresh_base: SsthreshBase::Flight,
            repeated_rto_keeps_ssthresh: false,
            prr: false,
            limited_transmit: false,
            hystart: None,
            rto_formula: RtoFormula::Rfc6298,
            new_ack_clears_backoff: false,
            new_data_ack_clears_backoff: true,
            impatient_partial_acks: false,
            clock_tick: Duration::from_millis(1),
            max_backoff_shift: 16,
            rack_tlp: false,
            ack_first_data_at_once: false,
            syn_timeout: None,
            newreno_exit_at_ssthresh: false,
            reno_sack_prr: false,
            loss_exit_counts_beyond_recover: false,
            cubic_whole_segments: false,
            ns3_prr: false,
            frto: false,
            quickack: false,
            timeout_in_recovery_keeps_ssthresh: false,
            jiffy: None,
            linux_prr: false,
            linux_cubic: false,
        }
    }
}

/// How the Reno-family window grows per ACK.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Growth {
    /// RFC 3465 byte counting (L = 2 in slow start; one MSS per window of
    /// acknowledged bytes in congestion avoidance).
    #[default]
    ByteCounting,
    /// One MSS per ACK in slow start, MSS²/cwnd (at least one byte) per
    /// ACK in congestion avoidance, whatever the ACK covers (ns-3
    /// TcpNewReno, BSD, ns-2).
    PerAck,
}

/// What a loss halves into ssthresh.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum SsthreshBase {
    /// RFC 5681 eq. (4): FlightSize = snd_max − snd_una.
    #[default]
    Flight,
    /// The congestion window (Linux `tcp_reno_ssthresh`).
    Cwnd,
    /// The RFC 6675 pipe: outstanding data neither SACKed nor lost
    /// (ns-3 `BytesInFlight`).
    Pipe,
    /// min(cwnd, peer's window) (BSD `tcp_timers`/`tcp_input`, ns-2
    /// `window()`).
    WindowMin,
}

impl SsthreshBase {
    /// The bytes the loss response halves.
    pub fn pick(self, flight: u64, pipe: u64, cwnd: u64, peer_wnd: u64) -> u64 {
        match self {
            SsthreshBase::Flight => flight,
            SsthreshBase::Cwnd => cwnd,
            SsthreshBase::Pipe => pipe,
            SsthreshBase::WindowMin => cwnd.min(peer_wnd),
        }
    }
}

/// How SRTT and RTTVAR make the RTO.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum RtoFormula {
    /// RFC 6298 §2: max(min_rto, SRTT + max(G, 4·RTTVAR)).
    #[default]
    Rfc6298,
    /// Linux: SRTT + max(4·RTTVAR, min_rto) — the floor is on the
    /// variation term, so the RTO is never closer than 200 ms to SRTT.
    LinuxRttvarFloor,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_parse_from_their_names() {
        for p in TcpProfile::ALL {
            assert_eq!(p.name().parse::<TcpProfile>(), Ok(p));
        }
        assert!("bsd".parse::<TcpProfile>().is_err());
        assert_eq!(TcpProfile::Rfc.rules(), TcpRules::default());
    }

    #[test]
    fn each_profile_differs_from_rfc_and_sets_its_timers() {
        for p in &TcpProfile::ALL[1..] {
            assert_ne!(p.rules(), TcpRules::default(), "{p}");
        }
        let linux = TcpProfile::Linux.apply(TcpConfig::default());
        assert_eq!(linux.min_rto, Duration::from_millis(200));
        assert_eq!(linux.rtt_sampling, RttSampling::Linux);
        assert_eq!(linux.profile, TcpProfile::Linux);
        let x = TcpProfile::Xkernel1998.apply(TcpConfig::default());
        assert_eq!((x.recv_buffer, x.initial_window), (8192, 1));
        x.validate().unwrap();
        for p in TcpProfile::ALL {
            p.apply(TcpConfig::default()).validate().unwrap();
        }
    }

    #[test]
    fn ssthresh_bases_pick_what_each_stack_halves() {
        let (flight, pipe, cwnd, rwnd) = (20_000, 6_000, 15_000, 8_000);
        let pick = |b: SsthreshBase| b.pick(flight, pipe, cwnd, rwnd);
        assert_eq!(pick(SsthreshBase::Flight), 20_000);
        assert_eq!(pick(SsthreshBase::Pipe), 6_000);
        assert_eq!(pick(SsthreshBase::Cwnd), 15_000);
        assert_eq!(pick(SsthreshBase::WindowMin), 8_000);
    }
}
