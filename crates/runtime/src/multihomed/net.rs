//! [`MultiNet`]: the receiver's `Net` over several paths. The engine
//! addresses path *i*'s sender as node [`FIRST_SENDER`] + *i*; what it
//! sends there waits in the outbox with the path's index until the driver
//! puts it on that path's socket. `link()` answers whether the path is up
//! ([`super::liveness`]); nothing else about the link is measured.

use std::time::Instant;

use joulenet_proto::{
    Addr, AppRead, LinkInfo, Net, NodeId, RadioControl, RadioMode, Route, Time, TransportEvent,
    TxOpts,
};
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

use super::{FIRST_SENDER, RECEIVER_PORT, SENDER_PORT};
use crate::app::AppSink;
use crate::net::{RecordedRadio, MAX_OUTBOX};

pub struct MultiNet {
    start: Instant,
    now: Time,
    rng: Pcg64Mcg,
    /// (path, packet) the engine sent, for the driver.
    pub outbox: Vec<(usize, Vec<u8>)>,
    /// Packets the engine addressed to no path, or beyond [`MAX_OUTBOX`].
    pub dropped: u64,
    /// Whether each path is up, set by the driver before callbacks.
    pub up: Vec<bool>,
    /// The path the packet being handled came in on.
    pub arrived_on: Option<usize>,
    pub sink: Box<dyn AppSink>,
    pub sink_finished: bool,
    pub events: Vec<(Time, TransportEvent)>,
    radio: RecordedRadio,
}

/// The engine's address of path `i`'s sender.
pub fn sender_addr(i: usize) -> Addr {
    Addr::new(FIRST_SENDER + i as NodeId, SENDER_PORT)
}

fn path_of(node: NodeId, paths: usize) -> Option<usize> {
    let i = node.checked_sub(FIRST_SENDER)? as usize;
    (i < paths).then_some(i)
}

impl MultiNet {
    pub fn new(paths: usize, sink: Box<dyn AppSink>, start: Instant) -> MultiNet {
        MultiNet {
            start,
            now: Time::ZERO,
            rng: Pcg64Mcg::from_os_rng(),
            outbox: Vec::new(),
            dropped: 0,
            up: vec![false; paths],
            arrived_on: None,
            sink,
            sink_finished: false,
            events: Vec::new(),
            radio: RecordedRadio {
                mode: RadioMode::Awake,
                changes: 0,
            },
        }
    }

    /// The monotonic clock now, ns since the receiver started.
    pub fn clock(&self) -> Time {
        Time(self.start.elapsed().as_nanos() as u64)
    }

    /// Reads the clock for the callback about to run.
    pub fn begin_callback(&mut self) -> Time {
        self.now = self.clock().max(self.now);
        self.now
    }
}

impl Net for MultiNet {
    fn now(&self) -> Time {
        self.now
    }
    fn local(&self) -> Addr {
        Addr::new(1, RECEIVER_PORT)
    }
    fn send(&mut self, to: Addr, packet: Vec<u8>, _opts: TxOpts) {
        match path_of(to.node, self.up.len()) {
            Some(i) if self.outbox.len() < MAX_OUTBOX => self.outbox.push((i, packet)),
            _ => self.dropped += 1,
        }
    }
    fn send_as(&mut self, _from: Addr, to: Addr, packet: Vec<u8>, opts: TxOpts) {
        self.send(to, packet, opts)
    }
    fn previous_hop(&self) -> Option<NodeId> {
        self.arrived_on.map(|i| sender_addr(i).node)
    }
    fn rng(&mut self) -> &mut dyn rand_core::RngCore {
        &mut self.rng
    }
    /// The receiver sends no application data.
    fn app_read(&mut self, _buf: &mut [u8]) -> AppRead {
        AppRead::Finished
    }
    fn deliver(&mut self, data: &[u8]) {
        self.sink.deliver(data);
    }
    fn deliver_finished(&mut self) {
        if !self.sink_finished {
            self.sink_finished = true;
            self.sink.finish();
        }
    }
    fn event(&mut self, event: TransportEvent) {
        self.events.push((self.now, event));
    }
    /// Every sender is one hop away, through its own path.
    fn route(&self, dst: NodeId) -> Option<Route> {
        path_of(dst, self.up.len()).map(|_| Route {
            next_hop: dst,
            hops: 1,
        })
    }
    fn link(&self, neighbour: NodeId) -> Option<LinkInfo> {
        let i = path_of(neighbour, self.up.len())?;
        Some(LinkInfo {
            rate_bps: 1_000_000_000,
            up: self.up[i],
            queue_len: self.outbox.iter().filter(|(p, _)| *p == i).count(),
            loss_estimate: None,
            available_rate_bps: None,
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
    use crate::app::CountingSink;

    #[test]
    fn packets_go_to_their_path_and_strangers_nowhere() {
        let mut n = MultiNet::new(2, Box::new(CountingSink::default()), Instant::now());
        n.up = vec![true, false];
        n.send(sender_addr(1), vec![1], TxOpts::default());
        n.send(sender_addr(0), vec![0], TxOpts::default());
        n.send(
            Addr::new(FIRST_SENDER + 2, SENDER_PORT),
            vec![2],
            TxOpts::default(),
        );
        n.send(Addr::new(3, SENDER_PORT), vec![3], TxOpts::default());
        assert_eq!(n.outbox, vec![(1, vec![1]), (0, vec![0])]);
        assert_eq!(n.dropped, 2);
        assert!(n.link(sender_addr(0).node).unwrap().up);
        assert!(!n.link(sender_addr(1).node).unwrap().up);
        assert!(n.link(FIRST_SENDER + 2).is_none());
        assert_eq!(
            n.route(sender_addr(1).node).unwrap().next_hop,
            FIRST_SENDER + 1
        );
    }
}
