//! R²CP's configuration: the paths, the scheduler, aggregation or handoff,
//! the token bucket, and the per-pipe RCP settings.

use crate::net::{Addr, NodeId};
use crate::rcp::{RcpConfig, RcpController};
use crate::time::Duration;

/// How a pipe with room is given data.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Scheduler {
    /// R²CP: the segment whose arrival through this pipe keeps order.
    #[default]
    Rank,
    /// R²CP-s: first come, first served (the next unbound segment).
    Fcfs,
    /// Application-level striping: blocks of this many segments are dealt
    /// to the paths round robin, each path fetching its own in order.
    Stripe(u32),
}

/// A path of the connection: a sender reached through the interface the
/// route to it uses, or through the neighbour `via` when the network pins
/// the path to an interface (two paths to the same server: the driver
/// routes each pipe by its ports, and `via` is whose link tells whether
/// the path is up).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PathSpec {
    pub sender: Addr,
    pub via: Option<NodeId>,
    /// This path's congestion controller (§4.1.1: "network (or interface)
    /// specific congestion control"); `None`: the connection's
    /// (`R2cpConfig::rcp.controller`).
    pub controller: Option<RcpController>,
}

impl PathSpec {
    /// A path over the route to `sender`, with the connection's controller.
    pub fn to(sender: Addr) -> PathSpec {
        PathSpec {
            sender,
            via: None,
            controller: None,
        }
    }
}

/// Policy aggregation (§4.4.3): tokens at `rate_bps`, consumed on binding;
/// the first path spends first, later paths only what it leaves.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct TokenBucket {
    pub rate_bps: u64,
    pub depth_bytes: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct R2cpConfig {
    /// Per-pipe settings (MSS, initial window, RTOs, dupthresh, controller)
    /// and the connection's receive buffer (`recv_buffer`).
    pub rcp: RcpConfig,
    pub paths: Vec<PathSpec>,
    pub scheduler: Scheduler,
    /// Use every live path at once; otherwise only the newest takes new
    /// bindings (handoff) and older pipes retire.
    pub aggregate: bool,
    pub token_bucket: Option<TokenBucket>,
    /// How often paths are checked for coming up or going down.
    pub poll: Duration,
}

impl Default for R2cpConfig {
    fn default() -> R2cpConfig {
        R2cpConfig {
            rcp: RcpConfig {
                recv_buffer: 256 * 1024,
                ..RcpConfig::default()
            },
            paths: Vec::new(),
            scheduler: Scheduler::Rank,
            aggregate: true,
            token_bucket: None,
            poll: Duration::from_millis(50),
        }
    }
}
