//! One connection: an agent, its [`RuntimeNet`], its peer's socket address
//! and what it sent and received, framed for the wire.

use std::net::SocketAddr;
use std::time::Instant;

use joulenet_proto::tcp::{TcpAgent, TcpConfig, TcpVariant};
use joulenet_proto::udp::{UdpReceiver, UdpSender};
use joulenet_proto::{Addr, Agent, Duration, Net, Time, TransportEvent};

use crate::app::{AppSink, AppSource};
use crate::frame::{self, Header, Kind, Protocol, HEADER_LEN};
use crate::net::RuntimeNet;

/// The agents' view of the two ends: the server is node 1, the client node 2.
/// The TCP ports written in segments are these, whatever the UDP ports are.
pub const SERVER_ADDR: Addr = Addr::new(1, 5201);
pub const CLIENT_ADDR: Addr = Addr::new(2, 40000);

/// Transport knobs the runtime chooses for its TCP agents.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpTuning {
    /// Lower bound of the retransmission timeout. The agent's default (1 s,
    /// RFC 6298) is for simulation fidelity; the runtime defaults to Linux's
    /// 200 ms.
    pub min_rto: Duration,
    pub send_buffer: usize,
    pub recv_buffer: usize,
    pub mss: u16,
    /// RFC 7323 timestamps. On by default in the runtime: without them the
    /// agent times the newest newly acknowledged segment, and under heavy
    /// loss that segment may have waited behind a hole for seconds, which
    /// inflates SRTT and the RTO until transfers crawl (seen at 20% loss).
    pub timestamps: bool,
}

impl Default for TcpTuning {
    fn default() -> Self {
        TcpTuning {
            min_rto: Duration::from_millis(200),
            send_buffer: 4 << 20,
            recv_buffer: 4 << 20,
            // 1500-byte path MTU − IPv4 20 − UDP 8 − runtime 16 − TCP 20 − options
            // (SACK blocks up to 36): keeps every datagram unfragmented.
            mss: 1400,
            timestamps: true,
        }
    }
}

impl TcpTuning {
    pub fn config(&self, variant: TcpVariant) -> TcpConfig {
        let mut c = TcpConfig::new(variant);
        c.min_rto = self.min_rto;
        c.initial_rto = Duration::from_secs(1).max(self.min_rto);
        c.send_buffer = self.send_buffer;
        c.recv_buffer = self.recv_buffer;
        c.mss = self.mss;
        c.timestamps = self.timestamps;
        c
    }
}

/// Datagram counters of one connection (runtime framing included).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct DatagramCounts {
    pub datagrams_sent: u64,
    pub udp_bytes_sent: u64,
    pub datagrams_received: u64,
    pub udp_bytes_received: u64,
}

pub struct Connection {
    pub id: u64,
    pub protocol: Protocol,
    pub peer: SocketAddr,
    pub agent: Box<dyn Agent>,
    pub net: RuntimeNet,
    pub is_client: bool,
    /// The client frames as `Hello` until the server has answered.
    heard_from_peer: bool,
    pub counts: DatagramCounts,
    /// Time of the last datagram from the peer.
    pub last_heard: Time,
    pub established_at: Option<Time>,
    pub closed_at: Option<Time>,
    pub aborted: bool,
    /// When the receiving application got end-of-stream.
    pub finished_at: Option<Time>,
    /// The peer said `Close`.
    pub peer_closed: bool,
}

impl Connection {
    pub fn client(
        id: u64,
        protocol: Protocol,
        peer: SocketAddr,
        tuning: &TcpTuning,
        source: Box<dyn AppSource>,
        start: Instant,
    ) -> Connection {
        let agent: Box<dyn Agent> = match protocol {
            Protocol::Tcp(v) => Box::new(TcpAgent::client(tuning.config(v), SERVER_ADDR)),
            Protocol::Udp => Box::new(UdpSender::new(SERVER_ADDR)),
        };
        let mut net = RuntimeNet::new(CLIENT_ADDR, start);
        net.source = Some(source);
        Connection::new(id, protocol, peer, agent, net, true)
    }

    pub fn server(
        id: u64,
        protocol: Protocol,
        peer: SocketAddr,
        tuning: &TcpTuning,
        sink: Box<dyn AppSink>,
        start: Instant,
    ) -> Connection {
        let agent: Box<dyn Agent> = match protocol {
            Protocol::Tcp(v) => Box::new(TcpAgent::server(tuning.config(v))),
            Protocol::Udp => Box::new(UdpReceiver::new()),
        };
        let mut net = RuntimeNet::new(SERVER_ADDR, start);
        net.sink = Some(sink);
        Connection::new(id, protocol, peer, agent, net, false)
    }

    fn new(
        id: u64,
        protocol: Protocol,
        peer: SocketAddr,
        agent: Box<dyn Agent>,
        net: RuntimeNet,
        is_client: bool,
    ) -> Connection {
        Connection {
            id,
            protocol,
            peer,
            agent,
            net,
            is_client,
            heard_from_peer: !is_client,
            counts: DatagramCounts::default(),
            last_heard: Time::ZERO,
            established_at: None,
            closed_at: None,
            aborted: false,
            finished_at: None,
            peer_closed: false,
        }
    }

    pub fn now(&self) -> Time {
        self.net.now()
    }

    pub fn start(&mut self) {
        self.agent.start(&mut self.net);
        self.after_callback();
    }

    /// An agent packet from the peer (header already checked by the caller).
    pub fn on_datagram(&mut self, payload: &[u8], datagram_len: usize) {
        self.heard_from_peer = true;
        self.counts.datagrams_received += 1;
        self.counts.udp_bytes_received += datagram_len as u64;
        self.last_heard = self.net.now();
        let from = if self.is_client {
            SERVER_ADDR
        } else {
            CLIENT_ADDR
        };
        self.agent.on_packet(&mut self.net, from, payload);
        self.after_callback();
    }

    /// The peer is done (a `Close` datagram).
    pub fn on_close(&mut self) {
        self.peer_closed = true;
        if self.protocol == Protocol::Udp && !self.is_client {
            self.net.deliver_finished();
            self.after_callback();
        }
    }

    /// Fires due timers and wakes a paced source.
    pub fn poll(&mut self, now: Time) {
        while let Some(id) = self.net.timers.pop_expired(now) {
            self.agent.on_timer(&mut self.net, id);
            self.after_callback();
        }
        if self.net.source_pending {
            let ready = self
                .net
                .source
                .as_ref()
                .and_then(|s| s.next_ready())
                .is_none_or(|t| t <= now);
            if ready {
                self.net.source_pending = false;
                self.agent.on_app_ready(&mut self.net);
                self.after_callback();
            }
        }
    }

    fn after_callback(&mut self) {
        for (t, e) in self.net.events.drain(..) {
            match e {
                TransportEvent::Established => {
                    self.established_at = self.established_at.or(Some(t))
                }
                TransportEvent::Closed => self.closed_at = self.closed_at.or(Some(t)),
                TransportEvent::Aborted => {
                    self.aborted = true;
                    self.closed_at = self.closed_at.or(Some(t));
                }
            }
        }
        if self.net.sink_finished && self.finished_at.is_none() {
            self.finished_at = Some(self.net.now());
        }
    }

    /// The next instant `poll` has work.
    pub fn next_deadline(&self) -> Option<Time> {
        let app = if self.net.source_pending {
            self.net.source.as_ref().and_then(|s| s.next_ready())
        } else {
            None
        };
        match (self.net.timers.next(), app) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Frames the agent's queued packets onto `out`.
    pub fn drain(&mut self, out: &mut Vec<(Vec<u8>, SocketAddr)>) {
        let kind = if self.heard_from_peer {
            Kind::Data
        } else {
            Kind::Hello
        };
        let header = Header {
            kind,
            protocol: self.protocol,
            conn_id: self.id,
        };
        let packets = std::mem::take(&mut self.net.outbox);
        for p in packets {
            let mut d = Vec::with_capacity(HEADER_LEN + p.len());
            d.resize(HEADER_LEN, 0);
            frame::write_header(&header, &mut d);
            d.extend_from_slice(&p);
            self.counts.datagrams_sent += 1;
            self.counts.udp_bytes_sent += d.len() as u64;
            out.push((d, self.peer));
            self.net.recycle(p);
        }
    }

    /// A `Close` datagram for this connection.
    pub fn close_datagram(&self) -> (Vec<u8>, SocketAddr) {
        let h = Header {
            kind: Kind::Close,
            protocol: self.protocol,
            conn_id: self.id,
        };
        (frame::emit(&h, &[]), self.peer)
    }

    /// The agent is done and has nothing more to send.
    pub fn is_done(&self) -> bool {
        if self.protocol == Protocol::Udp && !self.is_client {
            // A datagram receiver never closes by itself: the sender's
            // `Close` (or silence) ends it.
            return self.peer_closed;
        }
        self.aborted || (self.agent.is_closed() && self.net.outbox.is_empty())
    }

    /// Bytes the sending application handed to the agent.
    pub fn app_bytes_read(&self) -> u64 {
        self.net.source.as_ref().map_or(0, |s| s.bytes_read())
    }

    /// Bytes the receiving application got.
    pub fn app_bytes_delivered(&self) -> u64 {
        self.net.sink.as_ref().map_or(0, |s| s.bytes())
    }

    pub fn gauge(&self, name: &str) -> Option<f64> {
        self.agent.gauge(name)
    }
}
