//! The contract between a protocol agent and the driver that runs it.
//!
//! Both the simulator and the real-network runtime implement [`Net`]; every
//! protocol implements [`Agent`]. Callbacks run to completion: an agent reacts
//! to one packet, timer or application event, calls `Net` to act, and returns.
//! The driver never calls back into an agent from inside a `Net` method.

use crate::stats::TransportStats;
use crate::time::Time;
pub use crate::timer::{TimerId, TimerTable};

/// A node of the network (a host, router, base station or mesh node).
pub type NodeId = u32;

/// A transport endpoint: a node and a port on it. In the simulator the port
/// selects the agent on the node; in the runtime an `Addr` stands for a peer
/// socket address that the runtime maps.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Addr {
    pub node: NodeId,
    pub port: u16,
}

impl Addr {
    pub const fn new(node: NodeId, port: u16) -> Addr {
        Addr { node, port }
    }
}

impl core::fmt::Display for Addr {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}:{}", self.node, self.port)
    }
}

/// The network-layer header that travels in front of the transport bytes.
/// It decides the per-packet overhead a link charges and what a pcap shows.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum NetworkHeader {
    /// A 20-byte IPv4 header with this protocol number (6 = TCP, 17 = UDP,
    /// 253/254 = experimental, used by the papers' protocols).
    Ipv4 { protocol: u8 },
    /// No separate network header: the transport header already carries (or
    /// has compressed away) the addressing, as E2TCP's compact header does.
    None,
}

impl NetworkHeader {
    // Asked for every frame a link sends, from the simulator's crate.
    #[inline]
    pub const fn len(self) -> usize {
        match self {
            NetworkHeader::Ipv4 { .. } => 20,
            NetworkHeader::None => 0,
        }
    }
    pub const fn is_empty(self) -> bool {
        self.len() == 0
    }
}

impl Default for NetworkHeader {
    fn default() -> Self {
        NetworkHeader::Ipv4 { protocol: 253 }
    }
}

/// 802.11e access category, lowest priority last.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum AccessClass {
    Voice,
    Video,
    #[default]
    BestEffort,
    Background,
}

/// Per-packet requests to the layers below.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct TxOpts {
    pub network_header: NetworkHeader,
    /// Link-layer transmission attempts for this packet (1 = no link
    /// retransmission), overriding the link's configured retry limit. JTP sets
    /// this per packet from its loss tolerance.
    pub link_attempts: Option<u8>,
    pub access_class: AccessClass,
    /// The packet may share a transmit opportunity with the next ones queued.
    pub burst: bool,
}

impl TxOpts {
    pub const fn ipv4(protocol: u8) -> TxOpts {
        TxOpts {
            network_header: NetworkHeader::Ipv4 { protocol },
            link_attempts: None,
            access_class: AccessClass::BestEffort,
            burst: false,
        }
    }
}

/// What the layers below know about the link to a neighbour.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct LinkInfo {
    pub rate_bps: u64,
    pub up: bool,
    /// Packets waiting in the interface queue toward this neighbour.
    pub queue_len: usize,
    /// Estimated probability that one link-layer attempt fails.
    pub loss_estimate: Option<f64>,
    /// Estimated rate still available toward this neighbour (TDMA idle slots).
    pub available_rate_bps: Option<f64>,
    /// Expected transmission count (1 / delivery ratio), where measured.
    pub etx: Option<f64>,
}

/// The next hop toward a destination, as the routing layer sees it now.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Route {
    pub next_hop: NodeId,
    /// Estimated hops left to the destination.
    pub hops: u32,
}

/// The answer to [`Net::app_read`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AppRead {
    /// This many bytes were written into the buffer (at least one).
    Data(usize),
    /// Nothing to send now; [`Agent::on_app_ready`] will be called when there is.
    Pending,
    /// The application has no more data, ever: close the sending direction.
    Finished,
}

/// Milestones of a connection, reported to the driver for metrics and apps.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TransportEvent {
    /// The handshake completed.
    Established,
    /// Both directions are closed; the agent will send nothing more.
    Closed,
    /// The connection gave up (too many retransmissions, reset by the peer).
    Aborted,
}

/// Radio power modes an agent may request (for power management such as
/// RCP's sleep-while-the-channel-is-bad).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum RadioMode {
    Awake,
    Sleep,
    Off,
}

/// The node's radio as an agent may drive it.
pub trait RadioControl {
    /// Request a mode; waking takes the radio's transition time, during which
    /// it neither sends nor receives.
    fn set_mode(&mut self, mode: RadioMode);
    fn mode(&self) -> RadioMode;
}

/// What an agent may see and do. Implemented by the simulator and the runtime.
pub trait Net {
    /// The current time. In the simulator, the time of the event being handled.
    fn now(&self) -> Time;
    /// This agent's own endpoint.
    fn local(&self) -> Addr;
    /// Send a packet toward `to`. The driver routes it, queues it, and may drop
    /// it (full queue, link loss): delivery is never promised.
    fn send(&mut self, to: Addr, packet: Vec<u8>, opts: TxOpts);
    /// An empty buffer to build a packet in, recycled by the driver when it can
    /// (an optimisation only: a fresh `Vec` is always acceptable to `send`).
    fn packet_buffer(&mut self) -> Vec<u8> {
        Vec::with_capacity(2048)
    }
    /// Send a packet toward `to` with another endpoint's source address:
    /// a relay answering for the destination (a cache retransmitting on the
    /// source's behalf, a hop-by-hop proxy acknowledging for the server).
    /// The driver routes it from this node exactly as [`Net::send`] would.
    fn send_as(&mut self, from: Addr, to: Addr, packet: Vec<u8>, opts: TxOpts);
    /// Send a packet of the flow from `from` to `to` over one link, to the
    /// neighbour `via` only, whatever the route toward `to` says: a per-hop
    /// reply (Hop's BACK) goes to the node that sent the frames, which
    /// holds the hop's state, even where routes are asymmetric. The
    /// neighbour's agent sees it as it would a routed packet
    /// ([`Agent::on_transit`], or [`Agent::on_packet`] if it is `to`'s
    /// node).
    /// Drivers where the route toward `to` always leads to `via` (a
    /// two-party connection, a test's chain) keep the default, `send_as`.
    fn send_link_local(
        &mut self,
        via: NodeId,
        from: Addr,
        to: Addr,
        packet: Vec<u8>,
        opts: TxOpts,
    ) {
        let _ = via;
        self.send_as(from, to, packet, opts);
    }
    /// The neighbour the packet being handled came from, during
    /// [`Agent::on_packet`], [`Agent::on_transit`] and [`Agent::on_overheard`];
    /// `None` in other callbacks or when the packet did not cross a link
    /// (sent by an agent on the same node).
    fn previous_hop(&self) -> Option<NodeId>;
    /// The agent's own random stream (seeded and named in the simulator).
    fn rng(&mut self) -> &mut dyn rand_core::RngCore;
    /// Take bytes from the sending application into `buf`.
    fn app_read(&mut self, buf: &mut [u8]) -> AppRead;
    /// How many more bytes the receiving application can take now; `None`
    /// for no limit (every endpoint application). A relay's bounded buffer
    /// answers its free space: a receiver then delivers no more than this,
    /// holds the rest, and advertises no more, so the limit pushes back on
    /// the sender; [`Agent::on_app_ready`] says when room opens.
    fn app_room(&self) -> Option<usize> {
        None
    }
    /// Hand bytes, in order and exactly once, to the receiving application.
    fn deliver(&mut self, data: &[u8]);
    /// The peer will send nothing more: end of stream for the application.
    fn deliver_finished(&mut self);
    /// Report a connection milestone.
    fn event(&mut self, event: TransportEvent);
    /// Routing: the next hop toward `dst`, if any is known.
    fn route(&self, dst: NodeId) -> Option<Route>;
    /// What the link layer knows of the link toward a neighbour.
    fn link(&self, neighbour: NodeId) -> Option<LinkInfo>;
    /// The local radio, for power management.
    fn radio(&mut self) -> &mut dyn RadioControl;
    /// State that every agent of this agent's protocol configuration on this
    /// node shares: one receiver for all the flows a node receives (Hop's
    /// ack withholding answers one BSYN at a time across them, §3.5, while
    /// each flow's destination is its own agent). A slot the agent takes
    /// at the start of a callback and puts back before it returns; the
    /// driver keeps it between callbacks and drops it when the node fails.
    /// `None` where the driver keeps no such state: each agent then keeps
    /// its own.
    fn node_shared(&mut self) -> Option<&mut Option<Box<dyn std::any::Any>>> {
        None
    }
}

/// A protocol state machine living on one node.
pub trait Agent {
    /// Short protocol name, as used in scenarios and reports ("newreno").
    fn protocol(&self) -> &'static str;
    /// Called once when the agent's flow starts: a client opens its
    /// connection, a server starts listening.
    fn start(&mut self, net: &mut dyn Net);
    /// A packet addressed to this agent arrived from `from` (the source
    /// address; [`Net::previous_hop`] tells the neighbour it came through).
    fn on_packet(&mut self, net: &mut dyn Net, from: Addr, packet: &[u8]);
    /// The earliest instant at which the agent needs [`Agent::on_timeout`],
    /// if any: the driver asks after every callback. Agents keep their
    /// deadlines in a [`TimerTable`]; an agent that wraps others answers the
    /// earliest of theirs.
    fn poll_timeout(&self) -> Option<Time>;
    /// The clock reached [`Agent::poll_timeout`]: handle every expired timer.
    fn on_timeout(&mut self, net: &mut dyn Net);
    /// The application has data (or end of data) that it did not have when
    /// [`Net::app_read`] last answered `Pending`, or made room to receive
    /// when it has a limit ([`Net::app_room`]).
    fn on_app_ready(&mut self, _net: &mut dyn Net) {}
    /// A packet of this agent's protocol crosses this node on its way from
    /// `transit.src` to `transit.dst` (only for agents registered as relays:
    /// see [`Transit`]). The agent may rewrite the packet and its per-hop
    /// options in place and pass it on, keep it, or drop it, and may send
    /// packets of its own meanwhile (an answer, a retransmission from cache).
    fn on_transit(&mut self, _net: &mut dyn Net, _transit: &mut Transit<'_>) -> TransitVerdict {
        TransitVerdict::Forward
    }
    /// A frame addressed to another node, overheard on a shared medium
    /// (promiscuous mode), for agents that cache what passes by. Called
    /// only on agents whose [`Agent::hears_overheard`] is true.
    fn on_overheard(&mut self, _net: &mut dyn Net, _src: Addr, _dst: Addr, _packet: &[u8]) {}
    /// Whether this agent wants [`Agent::on_overheard`]; an agent that
    /// overrides it must say so here. A driver hands overheard frames only
    /// to agents that do: in a mesh every data frame is overheard by every
    /// node within range, and a call on an agent that ignores it is a visit
    /// to state that is cold by then (issue 18).
    fn hears_overheard(&self) -> bool {
        false
    }
    /// The link layer received a frame addressed to this agent corrupted and
    /// hands up what it could read of it (explicit loss notification, ELN):
    /// a loss report, never data.
    fn on_link_loss(&mut self, _net: &mut dyn Net, _packet: &[u8]) {}
    /// Counters every protocol keeps.
    fn stats(&self) -> &TransportStats;
    /// A named instantaneous value for time series ("cwnd", "ssthresh",
    /// "srtt", "wave_level"); `None` if the agent has no such value.
    fn gauge(&self, _name: &str) -> Option<f64> {
        None
    }
    /// A relay that terminates flows (a split-connection proxy): what it
    /// sent and received for the flow between `a` and `b`, whose traffic
    /// is the flow's as much as its ends'. `None`: the agent keeps no such
    /// account (every other agent; relays that only forward).
    fn flow_stats(&self, _a: Addr, _b: Addr) -> Option<TransportStats> {
        None
    }
    /// True when the agent has finished: it will send nothing more and needs
    /// no more timers.
    fn is_closed(&self) -> bool;
}

/// A packet crossing a relay: what [`Agent::on_transit`] sees and may change.
///
/// A relay agent is registered for a protocol on intermediate nodes; the
/// driver creates it the first time a packet of that protocol crosses the
/// node (relay state is lazy: routes change, and a node cannot know in
/// advance which flows will cross it) and drops it once it reports
/// [`Agent::is_closed`] with no timer armed (a relay that holds nothing
/// forgets). Packets an agent on this node sends itself, and packets
/// addressed to this node, are not transit.
#[derive(Debug)]
pub struct Transit<'a> {
    /// The packet's source and destination endpoints (end to end).
    pub src: Addr,
    pub dst: Addr,
    /// The neighbour it arrived from.
    pub previous_hop: NodeId,
    /// The transport bytes, to rewrite in place (they may change length).
    pub packet: &'a mut Vec<u8>,
    /// Per-hop requests for the next link (link attempts, access class).
    pub opts: &'a mut TxOpts,
}

/// What a relay decided about a packet in transit.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TransitVerdict {
    /// Pass it on toward its destination, as (possibly) rewritten.
    Forward,
    /// The relay took it: a terminating relay (hop-by-hop TCP, a split
    /// proxy, Hop's per-hop transfer) ends the hop here.
    Consumed,
    /// Discard it (an iJTP node whose energy budget ran out); counted by the
    /// driver as a relay drop.
    Drop,
}
