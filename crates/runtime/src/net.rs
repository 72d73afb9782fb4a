//! [`RuntimeNet`]: the `Net` context of one connection in the runtime.
//!
//! Time is nanoseconds since the connection's start on the monotonic clock,
//! read once per callback ([`RuntimeNet::begin_callback`]): like the
//! simulator's event time, `now()` is the instant the packet or timer was
//! taken up, and reading the clock on every `now()` cost ~6% of a loopback
//! flow's CPU;
//! `send` queues the agent's packet for the driver (which frames and batches
//! it onto the socket); the agent owns its timers, and the connection asks
//! it for its next deadline ([`joulenet_proto::Agent::poll_timeout`]).

use std::time::Instant;

use joulenet_proto::{
    Addr, AppRead, LinkInfo, Net, NodeId, RadioControl, RadioMode, Route, Time, TransportEvent,
    TxOpts,
};
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

use crate::app::{AppSink, AppSource};

/// A radio that only records the mode an agent asks for (the runtime has no
/// radio to switch); the energy estimate charges the recorded time.
#[derive(Clone, Debug)]
pub struct RecordedRadio {
    pub mode: RadioMode,
    pub changes: u64,
}

impl RadioControl for RecordedRadio {
    fn set_mode(&mut self, mode: RadioMode) {
        if mode != self.mode {
            self.changes += 1;
        }
        self.mode = mode;
    }
    fn mode(&self) -> RadioMode {
        self.mode
    }
}

/// Bound on packets an agent may queue in one callback before the driver
/// sends them; beyond it packets are dropped (as a full interface queue would).
pub const MAX_OUTBOX: usize = 4096;

/// The runtime's `Net` for one connection.
pub struct RuntimeNet {
    start: Instant,
    /// The clock as read by the last `begin_callback`.
    now: Time,
    local: Addr,
    /// Agent packets waiting to be framed and sent.
    pub outbox: Vec<Vec<u8>>,
    pub outbox_dropped: u64,
    /// Spent packet buffers, reused by `packet_buffer`.
    pub spare: Vec<Vec<u8>>,
    rng: Pcg64Mcg,
    pub source: Option<Box<dyn AppSource>>,
    pub sink: Option<Box<dyn AppSink>>,
    pub events: Vec<(Time, TransportEvent)>,
    pub sink_finished: bool,
    /// The source said `Finished`: the agent has taken the whole stream.
    pub source_finished: bool,
    /// Whether the source said `Pending` (the driver calls `on_app_ready`
    /// when it may have data again).
    pub source_pending: bool,
    pub radio: RecordedRadio,
    /// The rate `link()` reports for the direct peer (bit/s).
    pub link_rate_bps: u64,
    /// Datagrams waiting in the driver's interface queue toward the peer
    /// (`crate::pace`), set by the driver before each callback.
    pub link_queue: usize,
    /// The rate left on the link to the peer, where measured (`crate::pace`).
    pub link_available_bps: Option<f64>,
    /// The loss of the link to the peer, where measured
    /// (`crate::link_loss`).
    pub link_loss: Option<f64>,
    /// Hops to the peer, where known (a routed connection:
    /// `crate::route::RouteInfo::hops`); 1 otherwise.
    pub hops: Option<u32>,
}

impl RuntimeNet {
    pub fn new(local: Addr, start: Instant) -> RuntimeNet {
        RuntimeNet {
            start,
            now: Time::ZERO,
            local,
            outbox: Vec::new(),
            outbox_dropped: 0,
            spare: Vec::new(),
            rng: Pcg64Mcg::from_os_rng(),
            source: None,
            sink: None,
            events: Vec::new(),
            sink_finished: false,
            source_finished: false,
            source_pending: false,
            radio: RecordedRadio {
                mode: RadioMode::Awake,
                changes: 0,
            },
            link_rate_bps: 1_000_000_000,
            link_queue: 0,
            link_available_bps: None,
            link_loss: None,
            hops: None,
        }
    }

    /// Names this end anew (a routed connection: [`crate::route`]).
    pub fn set_local(&mut self, local: Addr) {
        self.local = local;
    }

    pub fn start_instant(&self) -> Instant {
        self.start
    }

    /// The monotonic clock now, in ns since the connection's start.
    pub fn clock(&self) -> Time {
        Time(self.start.elapsed().as_nanos() as u64)
    }

    /// Reads the clock for the callback about to run; `now()` answers this
    /// instant until the next call.
    pub fn begin_callback(&mut self) -> Time {
        self.now = self.clock().max(self.now);
        self.now
    }

    /// Returns a sent packet's buffer for reuse.
    pub fn recycle(&mut self, mut buf: Vec<u8>) {
        if self.spare.len() < 256 {
            buf.clear();
            self.spare.push(buf);
        }
    }
}

impl Net for RuntimeNet {
    fn now(&self) -> Time {
        self.now
    }
    fn local(&self) -> Addr {
        self.local
    }
    fn send(&mut self, _to: Addr, packet: Vec<u8>, _opts: TxOpts) {
        // A connection has exactly one peer, so `to` needs no mapping.
        if self.outbox.len() >= MAX_OUTBOX {
            self.outbox_dropped += 1;
            return;
        }
        self.outbox.push(packet);
    }
    fn packet_buffer(&mut self) -> Vec<u8> {
        self.spare.pop().unwrap_or_else(|| Vec::with_capacity(2048))
    }
    /// A two-party connection has no relays: the source address is the
    /// connection's own, whatever the agent names.
    fn send_as(&mut self, _from: Addr, to: Addr, packet: Vec<u8>, opts: TxOpts) {
        self.send(to, packet, opts)
    }
    /// Every datagram comes straight from the connection's peer.
    fn previous_hop(&self) -> Option<NodeId> {
        None
    }
    fn rng(&mut self) -> &mut dyn rand_core::RngCore {
        &mut self.rng
    }
    fn app_read(&mut self, buf: &mut [u8]) -> AppRead {
        let now = self.now();
        let r = match &mut self.source {
            Some(s) => s.read(now, buf),
            None => AppRead::Finished,
        };
        self.source_pending = r == AppRead::Pending;
        self.source_finished |= r == AppRead::Finished;
        r
    }
    fn deliver(&mut self, data: &[u8]) {
        if let Some(s) = &mut self.sink {
            s.deliver(data);
        }
    }
    fn deliver_finished(&mut self) {
        if !self.sink_finished {
            self.sink_finished = true;
            if let Some(s) = &mut self.sink {
                s.finish();
            }
        }
    }
    fn event(&mut self, event: TransportEvent) {
        let now = self.now();
        self.events.push((now, event));
    }
    fn route(&self, dst: NodeId) -> Option<Route> {
        // The peer is one (UDP) hop away unless its datagrams' hop limits
        // said otherwise.
        Some(Route {
            next_hop: dst,
            hops: self.hops.unwrap_or(1),
        })
    }
    fn link(&self, _neighbour: NodeId) -> Option<LinkInfo> {
        Some(LinkInfo {
            rate_bps: self.link_rate_bps,
            up: true,
            queue_len: self.link_queue + self.outbox.len(),
            loss_estimate: self.link_loss,
            available_rate_bps: self.link_available_bps,
            etx: None,
        })
    }
    fn radio(&mut self) -> &mut dyn RadioControl {
        &mut self.radio
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn net_clock_is_monotonic_and_outbox_bounded() {
        let mut n = RuntimeNet::new(Addr::new(0, 1), Instant::now());
        let a = n.begin_callback();
        std::thread::sleep(std::time::Duration::from_millis(1));
        assert_eq!(n.now(), a, "the callback's instant holds");
        let b = n.begin_callback();
        assert!(b > a);
        for _ in 0..MAX_OUTBOX + 10 {
            n.send(Addr::new(1, 1), vec![0], TxOpts::default());
        }
        assert_eq!(n.outbox.len(), MAX_OUTBOX);
        assert_eq!(n.outbox_dropped, 10);
        assert_eq!(n.app_read(&mut [0u8; 4]), AppRead::Finished);
    }
}
