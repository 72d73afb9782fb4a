//! The validated description of a simulation: what a scenario file becomes
//! after every key has been checked. Building a [`crate::Simulation`] from a
//! `Spec` cannot fail on user input.

use joulenet_channel::battery::Battery;
use joulenet_channel::loss::LossSpec;
use joulenet_channel::radio::{FrameModel, RadioPolicy, RadioProfile};
use joulenet_proto::{Duration, NodeId};

use crate::app::AppSpec;
use crate::link::LinkParams;
use crate::protocols::ProtocolSpec;

#[derive(Clone, Debug)]
pub struct Spec {
    pub name: String,
    pub description: String,
    pub nodes: Vec<NodeSpec>,
    pub links: Vec<LinkSpec>,
    pub flows: Vec<FlowSpec>,
    pub energy_policy: RadioPolicy,
    /// What each frame costs beside the radio's state × time (`[energy]
    /// model`).
    pub frame_model: FrameModel,
    /// The fraction of nodes whose death the lifetime metrics time.
    pub dead_fraction: f64,
    /// Hard stop; `None` runs until every measured flow has finished.
    pub stop: Option<Duration>,
    pub output: OutputSpec,
    /// The shared wireless medium (`[medium]`), replacing point-to-point
    /// links between the nodes it covers.
    pub medium: Option<crate::medium::MediumSpec>,
}

#[derive(Clone, Debug, Default)]
pub struct NodeSpec {
    pub name: String,
    pub battery: Option<Battery>,
}

/// How the reverse direction of a link loses frames.
#[derive(Clone, Debug, PartialEq)]
pub enum ReverseLoss {
    /// The same wireless channel: the same model and the same state
    /// trajectory (a fade hits both directions), independent per-frame draws.
    SharedChannel,
    /// Its own model and state process.
    Independent(LossSpec),
}

#[derive(Clone, Debug)]
pub struct LinkSpec {
    pub a: NodeId,
    pub b: NodeId,
    pub params: LinkParams,
    /// The radio at each end of a wireless link; `None` for a wired link.
    pub radio: Option<RadioProfile>,
    /// Loss from `a` to `b`.
    pub loss: LossSpec,
    /// Loss from `b` to `a`.
    pub loss_reverse: ReverseLoss,
}

#[derive(Clone, Debug)]
pub struct FlowSpec {
    pub label: String,
    pub protocol: ProtocolSpec,
    pub from: NodeId,
    pub to: NodeId,
    pub port: u16,
    pub start: Duration,
    pub stop: Option<Duration>,
    pub app: AppSpec,
    /// Cross traffic does not keep the run going once measured flows end.
    pub background: bool,
    /// EDCA access category of every packet of the flow (both directions),
    /// overriding what the protocol asks for; only on a `[medium]` with
    /// `edca = true`.
    pub access_class: Option<joulenet_proto::AccessClass>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct OutputSpec {
    /// Time series to sample: "cwnd", "ssthresh", "srtt_ms", "rto_ms",
    /// "flight", "rate", "goodput", "delivered", "queue", "channel", or any agent gauge.
    pub series: Vec<String>,
    pub series_interval: Duration,
    pub pcap: bool,
}

impl Default for OutputSpec {
    fn default() -> Self {
        OutputSpec {
            series: Vec::new(),
            series_interval: Duration::from_millis(100),
            pcap: false,
        }
    }
}
