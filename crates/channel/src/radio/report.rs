//! Where a radio's energy went.

/// Time spent and energy drawn in one radio state.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct StateEnergy {
    pub seconds: f64,
    pub joules: f64,
}

/// A radio's energy broken down by state. Under an intermediate policy the
/// idle, sleep and transition entries hold the weighted mix of the
/// always-active and ideal charges of the idle gaps.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct EnergyReport {
    pub tx: StateEnergy,
    pub rx: StateEnergy,
    pub idle: StateEnergy,
    pub sleep: StateEnergy,
    pub off: StateEnergy,
    pub transition: StateEnergy,
    /// Wake-ups from sleep or off: explicit ones, plus those of the ideal
    /// radio's sleeps in idle gaps when the policy has an ideal share.
    pub wake_transitions: u64,
    /// Data frames charged per frame, and their per-frame energy (included
    /// in `tx` and `rx`).
    pub frames: u64,
    pub frame_j: f64,
    /// The sum of the six states' joules.
    pub total_j: f64,
}
