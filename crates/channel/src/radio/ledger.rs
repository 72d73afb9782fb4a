//! Exact energy integration for one radio.
//!
//! Activity (transmissions, receptions) is registered at or before it
//! starts, in any order and possibly overlapping; the ledger keeps the
//! pending activity as two sets of disjoint intervals (transmit, receive)
//! and integrates power over time in integer nanoseconds as `advance` moves
//! forward. Time in every
//! state is counted in whole nanoseconds and only converted to joules in a
//! report, so no rounding accumulates and splitting an advance into many
//! small ones changes nothing.
//!
//! Idle gaps (awake, nothing to send or receive) are charged when they end,
//! because the ideal radio's choice between idling and sleeping depends on
//! the gap's full length; a report closes the open gap provisionally at the
//! last advance.

use super::activity::ActivitySet;
use super::{EnergyReport, FrameModel, FrameRole, RadioPolicy, RadioProfile, StateEnergy};
use joulenet_proto::{Duration, RadioMode, Time};

/// What the radio is doing over a stretch of time with no edge inside it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Condition {
    Tx,
    Rx,
    Transition,
    Sleep,
    Off,
    IdleGap,
}

/// Nanoseconds per state. Idle gaps are tallied twice, as the always-active
/// radio and as the ideal radio would spend them, and mixed by the policy's
/// weight only in a report.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
struct Tally {
    tx_ns: u64,
    rx_ns: u64,
    sleep_ns: u64,
    off_ns: u64,
    transition_ns: u64,
    wakes: u64,
    gap_ns: u64,
    ideal_idle_ns: u64,
    ideal_sleep_ns: u64,
    ideal_transition_ns: u64,
    ideal_wakes: u64,
}

/// Energy bookkeeping for one radio; see the module documentation.
#[derive(Clone, Debug)]
pub struct RadioLedger {
    profile: RadioProfile,
    policy: RadioPolicy,
    active_weight: f64,
    /// Power has been integrated up to here.
    cursor: Time,
    mode: RadioMode,
    /// A wake-up transition runs until this instant (none if <= cursor).
    transition_end: Time,
    tx: ActivitySet,
    rx: ActivitySet,
    /// Start of the idle gap in progress, if the radio is idling.
    gap_start: Option<Time>,
    tally: Tally,
    frames: FrameModel,
    /// Per-frame energy so far, of frames sent and of frames received.
    frame_tx_j: f64,
    frame_rx_j: f64,
    frame_count: u64,
}

impl RadioLedger {
    /// A radio that starts awake at `Time::ZERO`. Validate the profile and
    /// policy first; an out-of-range policy weight is clamped to [0, 1].
    pub fn new(profile: RadioProfile, policy: RadioPolicy) -> Self {
        RadioLedger {
            profile,
            policy,
            active_weight: policy.active_weight(),
            cursor: Time::ZERO,
            mode: RadioMode::Awake,
            transition_end: Time::ZERO,
            tx: ActivitySet::default(),
            rx: ActivitySet::default(),
            gap_start: None,
            tally: Tally::default(),
            frames: FrameModel::state(),
            frame_tx_j: 0.0,
            frame_rx_j: 0.0,
            frame_count: 0,
        }
    }

    /// Charges frames by `model` from now on (validate it first).
    pub fn set_frame_model(&mut self, model: FrameModel) {
        self.frames = model;
    }

    pub fn frame_model(&self) -> &FrameModel {
        &self.frames
    }

    /// Charges one data frame of `bytes` that took `airtime` on the air,
    /// by what the radio did with it. Its time is integrated separately
    /// (`add_tx`, `add_rx`); this is the cost per frame on top.
    /// Returns what it charged, J.
    pub fn add_frame(&mut self, role: FrameRole, bytes: u32, airtime: Duration) -> f64 {
        let baseline = if role.is_tx() {
            self.active_tx_w()
        } else {
            self.active_rx_w()
        };
        let cost = self.frames.cost(role, bytes, airtime, baseline);
        if role.is_tx() {
            self.frame_tx_j += cost;
        } else {
            self.frame_rx_j += cost;
        }
        self.frame_count += 1;
        cost
    }

    /// Energy of transmitting for `airtime` at the transmit power, J (what
    /// `add_tx` integrates, before any per-frame cost).
    pub fn tx_energy_j(&self, airtime: Duration) -> f64 {
        self.active_tx_w() * airtime.as_secs_f64()
    }

    /// Power while transmitting: idle under a per-packet model, whose frame
    /// lines are incremental over idle.
    fn active_tx_w(&self) -> f64 {
        match self.frames.baseline_idle {
            true => self.profile.idle_w,
            false => self.profile.tx_w,
        }
    }

    fn active_rx_w(&self) -> f64 {
        match self.frames.baseline_idle {
            true => self.profile.idle_w,
            false => self.profile.rx_w,
        }
    }

    pub fn profile(&self) -> &RadioProfile {
        &self.profile
    }

    pub fn policy(&self) -> RadioPolicy {
        self.policy
    }

    /// Registers a transmission over [start, end). `start` must not be
    /// before the last advance (checked in debug builds; clamped otherwise).
    pub fn add_tx(&mut self, start: Time, end: Time) {
        let start = self.clamp_start(start);
        self.tx.insert(start, end);
    }

    /// Registers a reception over [start, end), like [`RadioLedger::add_tx`].
    pub fn add_rx(&mut self, start: Time, end: Time) {
        let start = self.clamp_start(start);
        self.rx.insert(start, end);
    }

    fn clamp_start(&self, start: Time) -> Time {
        debug_assert!(
            start >= self.cursor,
            "activity registered at {start}, after the ledger advanced to {}",
            self.cursor
        );
        start.max(self.cursor)
    }

    /// Integrates power up to `now`; an earlier `now` is ignored.
    pub fn advance(&mut self, now: Time) {
        while let Some(boundary) = self.next_boundary().filter(|&b| b <= now) {
            self.integrate_to(boundary);
            self.apply_edges_until(boundary);
        }
        self.integrate_to(now);
    }

    /// Switches the radio's mode at `now` and returns when it can next send
    /// or receive: `now` plus the wake-up transition (sleep_to_idle from
    /// Sleep, off_to_on from Off, drawn at transition_w) when waking, the end
    /// of a wake-up still in progress when already Awake, and `Time::NEVER`
    /// when going to Sleep or Off (it stays unusable until woken). Going down
    /// is instantaneous and cuts short any wake-up in progress; Off→Sleep is
    /// also taken as instantaneous.
    pub fn set_mode(&mut self, now: Time, mode: RadioMode) -> Time {
        let now = now.max(self.cursor);
        self.advance(now);
        let wake_up = match (self.mode, mode) {
            (RadioMode::Awake, RadioMode::Awake) => return self.transition_end.max(now),
            (RadioMode::Sleep, RadioMode::Awake) => self.profile.sleep_to_idle,
            (RadioMode::Off, RadioMode::Awake) => self.profile.off_to_on,
            (_, target) => {
                self.transition_end = self.transition_end.min(now);
                self.mode = target;
                return Time::NEVER;
            }
        };
        self.mode = RadioMode::Awake;
        self.transition_end = now + wake_up;
        self.tally.wakes += 1;
        self.transition_end
    }

    pub fn mode(&self) -> RadioMode {
        self.mode
    }

    /// Awake and past any wake-up transition at `t`, if no mode change
    /// happens before `t`.
    pub fn usable_at(&self, t: Time) -> bool {
        self.mode == RadioMode::Awake && t >= self.transition_end
    }

    /// The energy spent up to the last advance, the idle gap in progress
    /// closed there provisionally.
    pub fn energy(&self) -> EnergyReport {
        self.report(&self.closed_tally())
    }

    /// The same total as [`RadioLedger::energy`], without the breakdown.
    pub fn consumed_j(&self) -> f64 {
        self.report(&self.closed_tally()).total_j
    }

    /// An upper bound on the instantaneous power, for battery scheduling.
    pub fn max_power_w(&self) -> f64 {
        self.profile.max_power_w()
    }

    fn next_boundary(&self) -> Option<Time> {
        let transition = (self.transition_end > self.cursor).then_some(self.transition_end);
        [
            self.tx.next_edge(self.cursor),
            self.rx.next_edge(self.cursor),
            transition,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    fn apply_edges_until(&mut self, t: Time) {
        self.tx.forget_ended(t);
        self.rx.forget_ended(t);
    }

    /// What the radio does from the cursor until the next boundary.
    /// Activity dominates every mode: if it happens while asleep, it is
    /// charged as activity.
    fn condition(&self) -> Condition {
        if self.tx.active_at(self.cursor) {
            Condition::Tx
        } else if self.rx.active_at(self.cursor) {
            Condition::Rx
        } else {
            match self.mode {
                RadioMode::Awake if self.cursor < self.transition_end => Condition::Transition,
                RadioMode::Awake => Condition::IdleGap,
                RadioMode::Sleep => Condition::Sleep,
                RadioMode::Off => Condition::Off,
            }
        }
    }

    /// Integrates from the cursor to `t`, across which nothing changes.
    fn integrate_to(&mut self, t: Time) {
        if t <= self.cursor {
            return;
        }
        let span = (t - self.cursor).as_nanos();
        let condition = self.condition();
        if condition == Condition::IdleGap {
            self.gap_start.get_or_insert(self.cursor);
        } else if let Some(start) = self.gap_start.take() {
            charge_gap(&mut self.tally, &self.profile, self.cursor - start);
        }
        let tally = &mut self.tally;
        match condition {
            Condition::Tx => tally.tx_ns += span,
            Condition::Rx => tally.rx_ns += span,
            Condition::Transition => tally.transition_ns += span,
            Condition::Sleep => tally.sleep_ns += span,
            Condition::Off => tally.off_ns += span,
            Condition::IdleGap => {}
        }
        self.cursor = t;
    }

    fn closed_tally(&self) -> Tally {
        let mut tally = self.tally;
        if let Some(start) = self.gap_start {
            charge_gap(&mut tally, &self.profile, self.cursor - start);
        }
        tally
    }

    fn report(&self, tally: &Tally) -> EnergyReport {
        let w = self.active_weight;
        let secs = |ns: u64| ns as f64 * 1e-9;
        let state = |seconds: f64, watts: f64| StateEnergy {
            seconds,
            joules: seconds * watts,
        };
        let p = &self.profile;
        let mut tx = state(secs(tally.tx_ns), self.active_tx_w());
        let mut rx = state(secs(tally.rx_ns), self.active_rx_w());
        tx.joules += self.frame_tx_j;
        rx.joules += self.frame_rx_j;
        let idle = state(
            w * secs(tally.gap_ns) + (1.0 - w) * secs(tally.ideal_idle_ns),
            p.idle_w,
        );
        let sleep = state(
            secs(tally.sleep_ns) + (1.0 - w) * secs(tally.ideal_sleep_ns),
            p.sleep_w,
        );
        let off = state(secs(tally.off_ns), p.off_w);
        let transition = state(
            secs(tally.transition_ns) + (1.0 - w) * secs(tally.ideal_transition_ns),
            p.transition_w,
        );
        let ideal_wakes = if w < 1.0 { tally.ideal_wakes } else { 0 };
        EnergyReport {
            tx,
            rx,
            idle,
            sleep,
            off,
            transition,
            wake_transitions: tally.wakes + ideal_wakes,
            frames: self.frame_count,
            frame_j: self.frame_tx_j + self.frame_rx_j,
            total_j: tx.joules
                + rx.joules
                + idle.joules
                + sleep.joules
                + off.joules
                + transition.joules,
        }
    }
}

/// Charges one idle gap both ways: idling throughout, and as the ideal
/// radio, which sleeps through it only when that is strictly cheaper and
/// the gap is long enough to wake up in.
fn charge_gap(tally: &mut Tally, profile: &RadioProfile, gap: Duration) {
    let g = gap.as_nanos();
    if g == 0 {
        return;
    }
    tally.gap_ns += g;
    let wake = profile.sleep_to_idle.as_nanos();
    let idle_cost = profile.idle_w * g as f64;
    let sleep_cost =
        profile.sleep_w * g.saturating_sub(wake) as f64 + profile.transition_w * wake as f64;
    if g >= wake && sleep_cost < idle_cost {
        tally.ideal_sleep_ns += g - wake;
        tally.ideal_transition_ns += wake;
        tally.ideal_wakes += 1;
    } else {
        tally.ideal_idle_ns += g;
    }
}

#[cfg(test)]
#[path = "ledger_tests.rs"]
mod tests;
