//! Two opt-in services of the link layer to the transport above it, for
//! receiver-centric protocols at a mobile host (RCP, docs/rcp.md):
//!
//! * **Explicit loss notification.** When a frame is lost on a wireless hop
//!   whose far end is the frame's destination, and that radio was listening,
//!   the destination's link layer received it corrupted. If the destination
//!   agent subscribed, it gets the frame's bytes through
//!   `Agent::on_overheard` at the frame's would-be arrival time (after the
//!   last attempt with link ARQ). This models ELN with an intact header
//!   (or base-station assistance): the agent learns *which* packet was lost
//!   to the channel, never a congestion drop.
//! * **Channel-state estimate.** A subscribed agent's `Net::link(..)
//!   .loss_estimate` is the state of its first interface's channel now —
//!   0.0 in the good (error-free) state, 1.0 in the bad one — as a
//!   signal-strength reading would tell a power-managed host, instead of
//!   the long-run measured loss ratio other agents see.
//!
//! Agents that do not subscribe see no change.

use std::collections::BTreeMap;

use joulenet_proto::{Addr, NodeId, Time};

use crate::core::Core;
use crate::frame::Frame;

/// What one endpoint subscribed to.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct LinkHooks {
    pub eln: bool,
    pub channel_state: bool,
    /// The channel estimate handed to the agent in its current callback.
    pub channel_loss: Option<f64>,
}

impl From<joulenet_registry::Services> for LinkHooks {
    fn from(s: joulenet_registry::Services) -> LinkHooks {
        LinkHooks {
            eln: s.eln,
            channel_state: s.channel_state,
            channel_loss: None,
        }
    }
}

/// Corrupted frames waiting for their arrival time, and who wants them.
#[derive(Debug, Default)]
pub struct ElnReports {
    subscribers: Vec<Addr>,
    pending: BTreeMap<(Time, u64), Frame>,
    next: u64,
}

impl ElnReports {
    pub fn subscribe(&mut self, addr: Addr) {
        self.subscribers.push(addr);
    }
    pub fn wants(&self, dst: Addr) -> bool {
        !self.subscribers.is_empty() && self.subscribers.contains(&dst)
    }
    pub fn push(&mut self, at: Time, frame: Frame) {
        self.pending.insert((at, self.next), frame);
        self.next += 1;
    }
    /// The earliest pending report (events fire in time order).
    pub fn pop(&mut self) -> Option<Frame> {
        self.pending.pop_first().map(|(_, f)| f)
    }
}

/// The channel state of `node`'s first wireless interface now, if any.
pub fn channel_state(core: &mut Core, node: NodeId) -> Option<f64> {
    let now = core.now;
    let l = core.nodes[node as usize]
        .links_out
        .iter()
        .copied()
        .find(|&l| core.links[l as usize].wireless)?;
    Some(core.links[l as usize].loss.state_at(now, now) as f64)
}
