//! What every protocol tells the simulator and the runtime about itself.
//!
//! A protocol is one file of this crate (`tcp.rs`, `jtp.rs`, …) that
//! implements [`Protocol`] for its configuration and lists its names in an
//! [`Entry`] table. Drivers never match on protocols: they ask the
//! configured [`ProtocolSpec`] for agents, relays and services.

use std::any::Any;
use std::fmt;
use std::ops::Deref;

use joulenet_proto::{Addr, Agent, ConfigError, Duration, NodeId};

use crate::options::{Reader, Result};

/// Makes the relay agent of one node.
pub type MakeRelay = Box<dyn Fn() -> Box<dyn Agent>>;

/// Which intermediate nodes run a protocol's relay agent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RelayNodes {
    /// Every node the flow crosses (iJTP, Hop, hop-by-hop TCP).
    Every,
    /// Only these (the E2TCP base station).
    Only(Vec<NodeId>),
}

impl RelayNodes {
    pub fn contains(&self, node: NodeId) -> bool {
        match self {
            RelayNodes::Every => true,
            RelayNodes::Only(nodes) => nodes.contains(&node),
        }
    }
}

/// What a protocol asks of its driver to run its relays.
pub struct RelaySpec {
    pub nodes: RelayNodes,
    pub make: MakeRelay,
}

/// Link-layer services the flow's receiving agent subscribes to (the
/// simulator provides them; a UDP socket cannot).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Services {
    /// Explicit loss notification: frames the receiver's radio got
    /// corrupted are handed to the agent.
    pub eln: bool,
    /// The channel's current state as the loss estimate.
    pub channel_state: bool,
}

/// The runtime's settings for agents on real hosts: Linux-like timer
/// floors and buffers, and one segment size that fits the path MTU
/// (`joulenet send --mss`, `--min-rto`, …). Each protocol maps them onto
/// its own configuration ([`Protocol::on_hosts`]).
#[derive(Clone, Debug, PartialEq)]
pub struct HostSettings {
    /// Lower bound of the retransmission timeout.
    pub min_rto: Duration,
    pub send_buffer: usize,
    pub recv_buffer: usize,
    /// Payload bytes per segment.
    pub segment: u16,
    /// RFC 7323 timestamps (TCP family).
    pub timestamps: bool,
}

/// The ends of a flow and the links between nodes, for checks that need
/// the topology (R²CP's paths, a split proxy's node).
pub struct Placement<'a> {
    pub from: NodeId,
    pub to: NodeId,
    pub port: u16,
    /// Undirected links (a, b); empty when the medium decides neighbours.
    pub links: &'a [(NodeId, NodeId)],
    /// Node names, for messages.
    pub names: &'a [String],
}

/// One configured protocol. Everything a driver needs, with defaults for
/// an end-to-end protocol that runs no relays and needs no link services.
pub trait Protocol: CloneProtocol + fmt::Debug + Send + Sync + 'static {
    /// The name a scenario or `--proto` gives it.
    fn name(&self) -> &'static str;

    /// The format of the packets its agents send (what a capture of its
    /// traffic holds; `crates/sim/src/pcap.rs`).
    fn wire_format(&self) -> WireFormat;

    /// The configuration itself, for callers that know its type (tests).
    fn config(&self) -> &dyn Any;

    /// Reads the protocol's own options from a flow's table (`[flow.tcp]`);
    /// `names` are the topology's node names, for options naming nodes.
    fn configure(&mut self, flow: &Reader, names: &[String]) -> Result<()>;

    /// Checks that need the flow's ends and the topology.
    fn check_placement(&self, flow: &Reader, place: &Placement) -> Result<()> {
        let _ = (flow, place);
        Ok(())
    }

    /// Applies the runtime's settings; `Err` if the protocol cannot run on
    /// real hosts or the settings do not fit it.
    fn on_hosts(&mut self, settings: &HostSettings) -> std::result::Result<(), ConfigError>;

    /// The client (data source) and server (data sink) agents of a flow.
    fn agents(&self, client: Addr, server: Addr) -> (Box<dyn Agent>, Box<dyn Agent>);

    /// The relays it runs on intermediate nodes, if any.
    fn relay(&self) -> Option<RelaySpec> {
        None
    }

    /// Flows whose keys are equal share one relay agent per node: by
    /// default the whole configuration.
    fn relay_key(&self) -> String {
        format!("{self:?}")
    }

    fn services(&self) -> Services {
        Services::default()
    }

    /// Messages stay whole (one per datagram) rather than forming a stream.
    fn is_datagram(&self) -> bool {
        false
    }

    /// The receiver may deliver the stream with holes it gave up on, so a
    /// sink cannot match content by stream offset.
    fn delivers_with_gaps(&self) -> bool {
        false
    }

    /// The two ends speak different protocols, joined only by the relay
    /// agent between them (a split proxy): there is no two-party flow.
    fn needs_relay(&self) -> bool {
        false
    }

    /// Agents beyond the flow's client and server (R²CP's other senders),
    /// each with the address it is bound at.
    fn extra_agents(&self, client: Addr) -> Vec<(Addr, Box<dyn Agent>)> {
        let _ = client;
        Vec::new()
    }

    /// Where [`Self::extra_agents`] bind, without making them.
    fn extra_addrs(&self, client: Addr) -> Vec<Addr> {
        let _ = client;
        Vec::new()
    }

    /// Connections to pin to an interface: (remote agent's address, the
    /// flow server's neighbour its traffic goes through).
    fn pinned(&self, client: Addr) -> Vec<(Addr, NodeId)> {
        let _ = client;
        Vec::new()
    }
}

/// Copies a boxed protocol; every `Clone` protocol has it.
pub trait CloneProtocol {
    fn clone_box(&self) -> Box<dyn Protocol>;
}

impl<T: Protocol + Clone> CloneProtocol for T {
    fn clone_box(&self) -> Box<dyn Protocol> {
        Box::new(self.clone())
    }
}

/// The packet formats of `crates/wire`, as captures name them. The codes
/// are the format byte of the simulator's capture pseudo-header
/// (docs/wire.md, "Reading captures in Wireshark"); never reused.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum WireFormat {
    /// RFC 9293 TCP behind IPv4 (protocol 6).
    Tcp = 1,
    /// RFC 768 UDP behind IPv4 (protocol 17).
    Udp = 2,
    Wwp = 3,
    /// Compact (no network header) or uncompressed (IPv4 protocol 254).
    E2tcp = 4,
    Rcp = 5,
    Jtp = 6,
    Hop = 7,
    /// joulenet's own high-loss transport (IPv4 protocol 253).
    Nackrate = 8,
}

/// How the runtime carries a protocol.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Wire {
    /// Its code in the runtime header (docs/wire.md); never reused.
    Code(u8),
    /// On hosts only as a multi-homed receiver with its own commands
    /// (R²CP: `joulenet recv --proto r2cp --bind A --bind B`, senders
    /// `joulenet offer`), not through the two-party client and server;
    /// its code in the runtime header, never reused.
    Multihomed(u8),
    /// Not on real hosts, and why.
    Unavailable(&'static str),
}

/// One name a scenario or the runtime accepts.
pub struct Entry {
    pub name: &'static str,
    /// One line for `joulenet list`.
    pub about: &'static str,
    /// The flow's option table the protocol reads (`[flow.tcp]`).
    pub options: Option<&'static str>,
    pub wire: Wire,
    /// The default configuration.
    pub make: fn() -> Box<dyn Protocol>,
}

impl fmt::Debug for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Entry")
            .field("name", &self.name)
            .field("wire", &self.wire)
            .finish()
    }
}

/// A configured protocol, as a flow (or a `joulenet send`) uses it.
pub struct ProtocolSpec(Box<dyn Protocol>);

impl ProtocolSpec {
    /// The default configuration of a named protocol, or `None` if unknown.
    pub fn named(name: &str) -> Option<ProtocolSpec> {
        crate::entry(name).map(|e| ProtocolSpec((e.make)()))
    }

    pub fn new(protocol: Box<dyn Protocol>) -> ProtocolSpec {
        ProtocolSpec(protocol)
    }

    /// The configuration as `T`, if that is its type.
    pub fn config_as<T: 'static>(&self) -> Option<&T> {
        self.0.config().downcast_ref()
    }
}

impl Deref for ProtocolSpec {
    type Target = dyn Protocol;
    fn deref(&self) -> &(dyn Protocol + 'static) {
        &*self.0
    }
}

impl std::ops::DerefMut for ProtocolSpec {
    fn deref_mut(&mut self) -> &mut (dyn Protocol + 'static) {
        &mut *self.0
    }
}

impl Clone for ProtocolSpec {
    fn clone(&self) -> Self {
        ProtocolSpec(self.0.clone_box())
    }
}

impl fmt::Debug for ProtocolSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}
