//! Geometry and propagation: where the nodes are and what that means for
//! every ordered pair — the packet error rate from distance (and its bad
//! path-loss state under fading), who hears, senses and suffers whom, the
//! received power for capture, and the propagation delay.
//!
//! It knows nothing of MACs or routes: a MAC asks it about pairs, routing
//! reads its PER matrix, and mobility moves its positions
//! ([`Geometry::rebuild`]).

use std::collections::HashMap;

use joulenet_proto::{Duration, NodeId, Time};
use rand::Rng;
use rand_pcg::Pcg64Mcg;

use super::dynamics::exp;
use super::MediumSpec;
use crate::rng::Streams;

/// Flags of a `near` entry: the node hears (can decode), senses (carrier
/// sense) and suffers (interference from) the transmitter.
pub const RX: u8 = 1;
pub const CS: u8 = 2;
pub const INTF: u8 = 4;

/// Speed of light, m/s.
pub const LIGHT: f64 = 299_792_458.0;

/// Good/bad state of one link under fading.
struct PairState {
    bad: bool,
    next: Time,
    rng: Pcg64Mcg,
}

pub struct Geometry {
    /// The medium's description; its `positions` move with mobility.
    pub spec: MediumSpec,
    pub n: usize,
    /// PER of a 1000-byte frame per ordered pair, row-major.
    pub per: Vec<f32>,
    /// PER in the bad path-loss state (empty without fading).
    pub per_bad: Vec<f32>,
    /// Per node, who hears, senses or suffers its transmissions.
    pub near: Vec<Vec<(NodeId, u8)>>,
    /// Propagation delay in ns per ordered pair (empty: not modelled).
    pub delay: Vec<u32>,
    /// Twice the propagation delay over the range, added to the ACK/CTS
    /// timeout (802.11's coverage class).
    pub round_trip: Duration,
    /// Relative received power per ordered pair (empty without capture).
    power: Vec<f32>,
    /// Fading: each link's state, drawn lazily from its own stream.
    pairs: HashMap<(NodeId, NodeId), PairState>,
    master: u64,
}

impl Geometry {
    pub fn new(spec: &MediumSpec, streams: &Streams) -> Geometry {
        let per = spec.per_matrix();
        Geometry {
            n: spec.positions.len(),
            per_bad: spec
                .fading
                .map(|f| spec.per_matrix_with_loss(f.extra_loss_db))
                .unwrap_or_default(),
            near: near_lists(spec, &per),
            per,
            delay: delay_matrix(spec),
            round_trip: match spec.propagation_delay {
                true => Duration::from_secs_f64(2.0 * spec.range / LIGHT),
                false => Duration::ZERO,
            },
            power: power_matrix(spec),
            pairs: HashMap::new(),
            master: streams.master(),
            spec: spec.clone(),
        }
    }

    /// Positions or ranges changed: recompute PER, neighbourhoods, delays
    /// and powers.
    pub fn rebuild(&mut self) {
        self.per = self.spec.per_matrix();
        if let Some(f) = self.spec.fading {
            self.per_bad = self.spec.per_matrix_with_loss(f.extra_loss_db);
        }
        self.near = near_lists(&self.spec, &self.per);
        self.delay = delay_matrix(&self.spec);
        self.power = power_matrix(&self.spec);
    }

    /// PER of a 1000-byte frame from `a` to `b` (1: out of range).
    #[inline]
    pub fn per_of(&self, a: usize, b: usize) -> f32 {
        self.per[a * self.n + b]
    }

    pub fn distance(&self, a: usize, b: usize) -> f64 {
        self.spec.distance(a, b)
    }

    /// Propagation delay from `a` to `b` (zero unless modelled).
    #[inline]
    pub fn delay_to(&self, a: usize, b: NodeId) -> Duration {
        match self.delay.is_empty() {
            true => Duration::ZERO,
            false => Duration(self.delay[a * self.n + b as usize] as u64),
        }
    }

    /// Whether propagation delay is modelled.
    #[inline]
    pub fn delayed(&self) -> bool {
        !self.delay.is_empty()
    }

    /// Whether receptions may survive overlap (capture).
    #[inline]
    pub fn capture(&self) -> bool {
        self.spec.capture_db.is_some()
    }

    /// Received power at `r` of a transmission from `a` (relative, linear).
    #[inline]
    pub fn power(&self, a: usize, r: usize) -> f64 {
        self.power[a * self.n + r] as f64
    }

    /// Whether a reception from `src` at `r` survives interference of total
    /// power `interference` (capture), or there is none.
    pub fn clear_of(&self, src: usize, r: usize, interference: f64) -> bool {
        match self.spec.capture_db {
            _ if interference <= 0.0 => true,
            None => false,
            Some(db) => 10.0 * (self.power(src, r) / interference).log10() >= db,
        }
    }

    /// PER from `s` to `r` at `now`, in the link's current fading state.
    #[inline]
    pub fn per_now(&mut self, s: usize, r: usize, now: Time) -> f64 {
        let mut p = self.per[s * self.n + r] as f64;
        if !self.per_bad.is_empty() && self.link_bad(s as NodeId, r as NodeId, now) {
            p = self.per_bad[s * self.n + r] as f64;
        }
        p
    }

    /// Whether the link a–b is in its bad state at `now` (fading only).
    pub fn link_bad(&mut self, a: NodeId, b: NodeId, now: Time) -> bool {
        let Some(f) = self.spec.fading else {
            return false;
        };
        let key = (a.min(b), a.max(b));
        let master = self.master;
        let st = self.pairs.entry(key).or_insert_with(|| {
            let mut rng =
                Streams::new(master).stream(&format!("medium/fading/{}/{}", key.0, key.1));
            let p_bad = f.mean_bad.as_secs_f64() / (f.mean_good + f.mean_bad).as_secs_f64();
            let bad = rng.random::<f64>() < p_bad;
            let next = Time::ZERO + exp(&mut rng, if bad { f.mean_bad } else { f.mean_good });
            PairState { bad, next, rng }
        });
        while now >= st.next {
            st.bad = !st.bad;
            let mean = if st.bad { f.mean_bad } else { f.mean_good };
            st.next += exp(&mut st.rng, mean).max(Duration(1));
        }
        st.bad
    }
}

/// Propagation delay in ns between every ordered pair within interference
/// or carrier-sense range; empty when the medium neglects it.
fn delay_matrix(spec: &MediumSpec) -> Vec<u32> {
    if !spec.propagation_delay {
        return Vec::new();
    }
    let n = spec.positions.len();
    let mut d = vec![0u32; n * n];
    for a in 0..n {
        for b in 0..n {
            d[a * n + b] = (spec.distance(a, b) / LIGHT * 1e9)
                .round()
                .min(u32::MAX as f64) as u32;
        }
    }
    d
}

/// Received power per ordered pair relative to 1 m, from the path-loss
/// exponent (the reception model's, 3 under `disc`); empty without capture.
fn power_matrix(spec: &MediumSpec) -> Vec<f32> {
    if spec.capture_db.is_none() {
        return Vec::new();
    }
    let exponent = match spec.reception {
        crate::medium::Reception::LogDistance { exponent, .. } => exponent,
        crate::medium::Reception::Disc => 3.0,
    };
    let n = spec.positions.len();
    let mut p = vec![0f32; n * n];
    for a in 0..n {
        for b in 0..n {
            if a != b {
                p[a * n + b] = spec.distance(a, b).max(1.0).powf(-exponent) as f32;
            }
        }
    }
    p
}

/// Who hears (RX), senses (CS) and is interfered with by (INTF) each node.
fn near_lists(spec: &MediumSpec, per: &[f32]) -> Vec<Vec<(NodeId, u8)>> {
    let n = spec.positions.len();
    let mut near = vec![Vec::new(); n];
    for (a, list) in near.iter_mut().enumerate() {
        for b in 0..n {
            if a == b {
                continue;
            }
            let d = spec.distance(a, b);
            let mut fl = 0;
            if per[a * n + b] < 1.0 {
                fl |= RX | INTF;
            }
            if d <= spec.cs_range {
                fl |= CS;
            }
            if d <= spec.interference_range {
                fl |= INTF;
            }
            if fl != 0 {
                list.push((b as NodeId, fl));
            }
        }
    }
    near
}
