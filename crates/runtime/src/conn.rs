//! One connection: an agent, its [`RuntimeNet`], its peer's socket address
//! and what it sent and received, framed for the wire.

use std::net::SocketAddr;
use std::time::Instant;

use joulenet_proto::{Addr, Agent, Duration, Net, Time, TransportEvent};
use joulenet_registry::{HostSettings, ProtocolSpec};

use crate::app::{AppSink, AppSource};
use crate::frame::{self, CloseRepr, Header, Kind, Protocol, HEADER_LEN, TOKEN_LEN};
use crate::net::RuntimeNet;
use crate::route::{self, RouteInfo, ROUTED_HEADER_LEN};
use crate::seal::ConnSeal;

/// The agents' view of the two ends: the server is node 1, the client node 2.
/// The TCP ports written in segments are these, whatever the UDP ports are.
pub const SERVER_ADDR: Addr = Addr::new(1, 5201);
pub const CLIENT_ADDR: Addr = Addr::new(2, 40000);

/// Largest segment that keeps every protocol's datagram within a 1500-byte
/// MTU (IPv4 20 + UDP 8 + framing 16 + the largest transport header: TCP's
/// 20 with timestamps and SACK options, 56).
pub const MAX_SEGMENT: u16 = 1400;

/// Transport knobs the runtime chooses for its agents, given to every
/// protocol through the registry ([`joulenet_registry::Protocol::on_hosts`]):
/// the TCP family and RCP (a TCP clone) take `min_rto`, the buffers, the
/// segment and timestamps; WWP and E2TCP take the segment and keep their
/// papers' other defaults. Every protocol's segment is sized to the path
/// MTU, as a host's TCP sizes its MSS ([`MAX_SEGMENT`]). (The papers'
/// 1000-byte segments were simulation parameters; `--mss 1000` restores
/// them. Left at 1000 on a real link, E2TCP carried 68 bytes of headers per
/// 1000 against kernel TCP's 66 per 1448, a handicap in every comparison
/// with iperf3 that has nothing to do with the protocol.)
#[derive(Clone, Debug, PartialEq)]
pub struct Tuning {
    /// Lower bound of the retransmission timeout (TCP and RCP). The agents'
    /// defaults (1 s, RFC 6298) are for simulation fidelity; the runtime
    /// defaults to Linux's 200 ms.
    pub min_rto: Duration,
    pub send_buffer: usize,
    pub recv_buffer: usize,
    /// Payload bytes per segment, every protocol (`--mss`).
    pub mss: u16,
    /// RFC 7323 timestamps. On by default in the runtime: without them the
    /// agent times the newest newly acknowledged segment, and under heavy
    /// loss that segment may have waited behind a hole for seconds, which
    /// inflates SRTT and the RTO until transfers crawl (seen at 20% loss).
    pub timestamps: bool,
    /// The rate of the links out of this host (`--link-rate`), if known:
    /// datagrams then wait in a per-neighbour interface queue served at
    /// it, which the agents see ([`crate::pace`]). `None`: sent at once.
    pub link_rate_bps: Option<u64>,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            min_rto: Duration::from_millis(200),
            send_buffer: 4 << 20,
            recv_buffer: 4 << 20,
            // 1500-byte path MTU − IPv4 20 − UDP 8 − runtime 16 − TCP 20 − options
            // (SACK blocks up to 36): keeps every datagram unfragmented.
            mss: MAX_SEGMENT,
            timestamps: true,
            link_rate_bps: None,
        }
    }
}

impl Tuning {
    /// One segment size for every protocol (`--mss`): the TCP family's and
    /// RCP's MSS, E2TCP's MSS (its window stays 4–32 segments: at 1400
    /// bytes 44.8 kB, within its 16-bit SACK offsets) and WWP's fixed
    /// payload. Both ends must use the same (WWP's receiver times waves by
    /// it). Checked against every protocol the runtime carries.
    pub fn with_segment(mut self, bytes: u16) -> Result<Tuning, String> {
        if !(64..=MAX_SEGMENT).contains(&bytes) {
            return Err(format!(
                "segment size {bytes} outside 64..={MAX_SEGMENT} (a 1500-byte MTU)"
            ));
        }
        self.mss = bytes;
        for p in Protocol::all() {
            self.spec(p).map_err(|e| format!("{p}: {e}"))?;
        }
        Ok(self)
    }

    pub(crate) fn settings(&self) -> HostSettings {
        HostSettings {
            min_rto: self.min_rto,
            send_buffer: self.send_buffer,
            recv_buffer: self.recv_buffer,
            segment: self.mss,
            timestamps: self.timestamps,
        }
    }

    /// `protocol`'s configuration on this host.
    pub fn spec(&self, protocol: Protocol) -> Result<ProtocolSpec, String> {
        let mut spec = protocol.spec();
        spec.on_hosts(&self.settings()).map_err(String::from)?;
        Ok(spec)
    }

    fn host_spec(&self, protocol: Protocol) -> ProtocolSpec {
        // Every setting is checked when it is made (`with_segment`, the
        // command line), and the defaults by this crate's tests.
        self.spec(protocol)
            .unwrap_or_else(|e| panic!("tuning unchecked for {protocol}: {e}"))
    }

    /// The data source's agent (the client end), talking to the server.
    pub fn sender(&self, protocol: Protocol) -> Box<dyn Agent> {
        self.sender_to(protocol, SERVER_ADDR)
    }

    /// The data source's agent talking to the server at `server` (through
    /// relays the agents address each other by node: [`crate::route`]).
    pub fn sender_to(&self, protocol: Protocol, server: Addr) -> Box<dyn Agent> {
        self.host_spec(protocol).agents(CLIENT_ADDR, server).0
    }

    /// The data sink's agent (the server end).
    pub fn receiver(&self, protocol: Protocol) -> Box<dyn Agent> {
        self.host_spec(protocol).agents(CLIENT_ADDR, SERVER_ADDR).1
    }

    /// The relay agent a `joulenet relay` node runs for `protocol`, or
    /// `None` when relays simply forward its datagrams (every end-to-end
    /// protocol). The registry says which protocols run relays.
    pub fn relay_agent(&self, protocol: Protocol) -> Option<Box<dyn Agent>> {
        self.host_spec(protocol).relay().map(|r| (r.make)())
    }
}

/// Opening packets a client keeps to repeat with a `Retry`'s token: a
/// connection-oriented agent sends one or two before any answer, a UDP
/// sender at a high rate a few dozen within a loopback round trip.
const MAX_HELLOS: usize = 64;

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
    /// The server's address-validation token (zero until a `Retry`).
    token: [u8; TOKEN_LEN],
    /// The agent packets sent as `Hello` before a token (a few), to repeat at once
    /// with the token when the server answers with a `Retry` instead of
    /// waiting for the agent's retransmission timer.
    hellos: Vec<Vec<u8>>,
    pub counts: DatagramCounts,
    /// Time of the last datagram from the peer.
    pub last_heard: Time,
    pub established_at: Option<Time>,
    /// The test, in iperf3's sense, began: the sender's transport took its
    /// first byte, or the receiving application got its first byte.
    pub transfer_started_at: Option<Time>,
    pub closed_at: Option<Time>,
    pub aborted: bool,
    /// When the receiving application got end-of-stream.
    pub finished_at: Option<Time>,
    /// The peer said `Close`.
    pub peer_closed: bool,
    /// Through relays: the ends' addresses, and what arrived (`None`:
    /// two-party, version 2 framing).
    pub route: Option<RouteInfo>,
    /// Authenticated mode: the connection's keys and packet numbers
    /// (`None`: plain framing).
    pub seal: Option<ConnSeal>,
}

impl Connection {
    pub fn client(
        id: u64,
        protocol: Protocol,
        peer: SocketAddr,
        tuning: &Tuning,
        source: Box<dyn AppSource>,
        start: Instant,
    ) -> Connection {
        let agent = tuning.sender(protocol);
        let mut net = RuntimeNet::new(CLIENT_ADDR, start);
        net.source = Some(source);
        Connection::new(id, protocol, peer, agent, net, true)
    }

    pub fn server(
        id: u64,
        protocol: Protocol,
        peer: SocketAddr,
        tuning: &Tuning,
        sink: Box<dyn AppSink>,
        start: Instant,
    ) -> Connection {
        let agent = tuning.receiver(protocol);
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
            token: [0; TOKEN_LEN],
            hellos: Vec::new(),
            counts: DatagramCounts::default(),
            last_heard: Time::ZERO,
            established_at: None,
            transfer_started_at: None,
            closed_at: None,
            aborted: false,
            finished_at: None,
            peer_closed: false,
            route: None,
            seal: None,
        }
    }

    /// The same connection in authenticated mode: every datagram it sends
    /// is sealed ([`crate::seal`]); the caller opens what it receives with
    /// [`Connection::seal`].
    pub fn with_seal(mut self, seal: ConnSeal) -> Connection {
        self.seal = Some(seal);
        self
    }

    /// The same connection through relays, before [`Connection::start`]:
    /// its agents address each other as `route` names the ends (the
    /// relays' agents speak as them), and it frames routed datagrams.
    pub fn with_route(mut self, route: RouteInfo, tuning: &Tuning) -> Connection {
        if self.is_client {
            self.agent = tuning.sender_to(self.protocol, route.remote);
        }
        self.net.set_local(route.local);
        self.route = Some(route);
        self
    }

    /// The clock now (not the last callback's instant).
    pub fn now(&self) -> Time {
        self.net.clock()
    }

    pub fn start(&mut self) {
        self.net.begin_callback();
        self.agent.start(&mut self.net);
        self.after_callback();
    }

    /// An agent packet from the peer (header already checked by the caller).
    pub fn on_datagram(&mut self, payload: &[u8], datagram_len: usize) {
        self.heard_from_peer = true;
        self.counts.datagrams_received += 1;
        self.counts.udp_bytes_received += datagram_len as u64;
        self.last_heard = self.net.begin_callback();
        let from = match &self.route {
            Some(r) => r.remote,
            None if self.is_client => SERVER_ADDR,
            None => CLIENT_ADDR,
        };
        self.agent.on_packet(&mut self.net, from, payload);
        self.after_callback();
    }

    /// Whether a datagram of the established connection came from the peer
    /// (a client: the server has answered its `Hello`).
    pub fn heard_from_peer(&self) -> bool {
        self.heard_from_peer
    }

    /// Whether the server has validated our address (sent a token).
    pub fn has_token(&self) -> bool {
        self.token != [0; TOKEN_LEN]
    }

    /// A token the server gave before the connection (in answer to a
    /// `Query`), for the first `Hello`s.
    pub fn set_token(&mut self, token: [u8; TOKEN_LEN]) {
        self.token = token;
        if let Some(s) = &mut self.seal {
            s.set_token(&token);
        }
    }

    /// The server asked for its token in our `Hello`s: repeat the ones
    /// sent so far with it. Honoured only before the server has answered.
    pub fn on_retry(&mut self, token: [u8; TOKEN_LEN]) -> bool {
        if self.heard_from_peer || !self.is_client || self.token == token {
            return false;
        }
        self.set_token(token);
        let again = self.hellos.clone();
        self.net.outbox.extend(again);
        true
    }

    /// The peer is done (a `Close` datagram).
    pub fn on_close(&mut self) {
        self.peer_closed = true;
        if self.protocol.is_datagram() && !self.is_client {
            self.net.begin_callback();
            self.net.deliver_finished();
            self.after_callback();
        }
    }

    /// Fires due timers and wakes a paced source.
    pub fn poll(&mut self, now: Time) {
        if self.agent.poll_timeout().is_some_and(|t| t <= now) {
            self.net.begin_callback();
            self.agent.on_timeout(&mut self.net);
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
                self.net.begin_callback();
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
        if self.transfer_started_at.is_none()
            && (self.app_bytes_read() > 0 || self.app_bytes_delivered() > 0)
        {
            self.transfer_started_at = Some(self.net.now());
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
        match (self.agent.poll_timeout(), app) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Frames the agent's queued packets onto `out`, in datagram buffers
    /// taken from `pool` (sent datagrams go back to it: no allocation per
    /// packet once the flow is running).
    pub fn drain(&mut self, out: &mut Vec<(Vec<u8>, SocketAddr)>, pool: &mut Vec<Vec<u8>>) {
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
        // Runtime header, route header when routed, then a `Hello`'s token.
        let mut head = [0u8; ROUTED_HEADER_LEN + TOKEN_LEN];
        let mut head_len = match &self.route {
            Some(r) => {
                let (h, _) = head.split_at_mut(ROUTED_HEADER_LEN);
                // `h` is exactly ROUTED_HEADER_LEN long.
                if let Ok(h) = <&mut [u8; ROUTED_HEADER_LEN]>::try_from(h) {
                    route::write_headers(&header, &r.outgoing(), h);
                }
                ROUTED_HEADER_LEN
            }
            None => {
                frame::write_header(&header, &mut head[..HEADER_LEN]);
                HEADER_LEN
            }
        };
        if kind == Kind::Hello {
            head[head_len..head_len + TOKEN_LEN].copy_from_slice(&self.token);
            head_len += TOKEN_LEN;
        }
        for p in packets {
            if kind == Kind::Hello && self.token == [0; TOKEN_LEN] && self.hellos.len() < MAX_HELLOS
            {
                self.hellos.push(p.clone());
            }
            let mut d = pool
                .pop()
                .unwrap_or_else(|| Vec::with_capacity(head_len + p.len()));
            d.clear();
            match &mut self.seal {
                Some(s) if kind == Kind::Hello => {
                    let mut payload = Vec::with_capacity(TOKEN_LEN + p.len());
                    payload.extend_from_slice(&self.token);
                    payload.extend_from_slice(&p);
                    let r = self.route.as_ref().map(|r| r.outgoing());
                    s.seal(&header, r.as_ref(), &payload, &mut d);
                }
                Some(s) => {
                    let r = self.route.as_ref().map(|r| r.outgoing());
                    s.seal(&header, r.as_ref(), &p, &mut d);
                }
                None => {
                    d.extend_from_slice(&head[..head_len]);
                    d.extend_from_slice(&p);
                }
            }
            self.counts.datagrams_sent += 1;
            self.counts.udp_bytes_sent += d.len() as u64;
            out.push((d, self.peer));
            self.net.recycle(p);
        }
    }

    /// A `Close` datagram for this connection: empty (a client's), or with
    /// the receiver's verdict (a server's).
    pub fn close_datagram(&mut self, verdict: Option<&CloseRepr>) -> (Vec<u8>, SocketAddr) {
        let h = Header {
            kind: Kind::Close,
            protocol: self.protocol,
            conn_id: self.id,
        };
        let payload = verdict.map(|v| v.emit()).unwrap_or_default();
        (self.emit(&h, &payload), self.peer)
    }

    /// A whole datagram of this connection's framing: routed (version 3)
    /// through relays, two-party (version 2) otherwise; sealed (version 5
    /// or 4) in authenticated mode.
    pub fn emit(&mut self, h: &Header, payload: &[u8]) -> Vec<u8> {
        if let Some(s) = &mut self.seal {
            let mut out = Vec::new();
            let r = self.route.as_ref().map(|r| r.outgoing());
            s.seal(h, r.as_ref(), payload, &mut out);
            return out;
        }
        match &self.route {
            Some(r) => route::emit(h, &r.outgoing(), payload),
            None => frame::emit(h, payload),
        }
    }

    /// The sending application handed over its whole stream.
    pub fn source_finished(&self) -> bool {
        self.net.source_finished
    }

    /// The agent is done and has nothing more to send.
    pub fn is_done(&self) -> bool {
        if self.protocol.is_datagram() && !self.is_client {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::{CountingSink, Generator, Limit};
    use std::net::SocketAddr;

    /// Bytes the in-memory tests move: 200 kB, but 10 kB for JTP and ATP,
    /// whose rate stays at its initial 64 kbit/s without a link rate.
    fn stream_len(protocol: Protocol) -> u64 {
        if protocol.rate_from_stamps() {
            10_000
        } else {
            200_000
        }
    }

    fn pair(protocol: Protocol) -> (Connection, Connection) {
        let peer: SocketAddr = "127.0.0.1:9".parse().unwrap();
        let t = Tuning::default();
        let src = Box::new(Generator::new(Limit::Bytes(stream_len(protocol)), None));
        let client = Connection::client(7, protocol, peer, &t, src, Instant::now());
        let sink = Box::new(CountingSink::default());
        let server = Connection::server(7, protocol, peer, &t, sink, Instant::now());
        (client, server)
    }

    /// Moves every queued packet from `a` to `b` (runtime header stripped);
    /// returns how many moved.
    fn carry(a: &mut Connection, b: &mut Connection) -> usize {
        let mut out = Vec::new();
        a.drain(&mut out, &mut Vec::new());
        for (d, _) in &out {
            let (h, payload) = frame::parse(d).unwrap();
            let packet = if h.kind == Kind::Hello {
                frame::parse_hello(payload).unwrap().1
            } else {
                payload
            };
            b.on_datagram(packet, d.len());
        }
        out.len()
    }

    /// Without sockets: every protocol's two agents, driven through
    /// `Connection`, move the whole stream and close.
    #[test]
    fn every_protocol_completes_between_two_connections_in_memory() {
        for p in Protocol::reliable() {
            let (mut c, mut s) = pair(p);
            s.start();
            c.start();
            for _ in 0..100_000 {
                let now = c.now().max(s.now());
                c.poll(now);
                s.poll(now);
                let moved = carry(&mut c, &mut s) + carry(&mut s, &mut c);
                if c.is_done() && s.is_done() {
                    break;
                }
                if moved == 0 {
                    // Only timers can move things on: wait for the next one.
                    let next = [c.next_deadline(), s.next_deadline()]
                        .into_iter()
                        .flatten()
                        .min();
                    if let Some(t) = next {
                        let wait = t.0.saturating_sub(c.now().0).min(50_000_000);
                        std::thread::sleep(std::time::Duration::from_nanos(wait));
                    }
                }
            }
            assert!(c.is_done() && s.is_done(), "{p}: did not finish");
            assert_eq!(s.app_bytes_delivered(), stream_len(p), "{p}");
            assert!(s.net.sink_finished, "{p}");
            assert!(!c.aborted && !s.aborted, "{p}");
        }
    }

    /// A constant-rate UDP stream's datagrams fit a 1500-byte MTU behind
    /// IPv4 and UDP: a fragmented one is lost when either fragment is, and
    /// at 30% loss each way UDP delivered 0.44 of (1 − p) × rate.
    #[test]
    fn udp_datagrams_fit_the_path_mtu() {
        let (mut c, _) = pair(Protocol::named("udp"));
        c.start();
        let mut out = Vec::new();
        c.drain(&mut out, &mut Vec::new());
        assert!(out.len() > 10, "{} datagrams", out.len());
        for (d, _) in &out {
            assert!(d.len() + 28 <= 1500, "a {}-byte datagram", d.len());
        }
    }

    #[test]
    fn one_segment_size_for_every_protocol() {
        let segments = |t: &Tuning| {
            let e2tcp = t.spec(Protocol::named("e2tcp")).unwrap();
            let e2tcp = e2tcp
                .config_as::<joulenet_registry::e2tcp::E2tcp>()
                .unwrap();
            let wwp = t.spec(Protocol::named("wwp")).unwrap();
            let wwp = wwp.config_as::<joulenet_proto::wwp::WwpConfig>().unwrap();
            let rcp = t.spec(Protocol::named("rcp")).unwrap();
            let rcp = rcp.config_as::<joulenet_proto::rcp::RcpConfig>().unwrap();
            let tcp = t.spec(Protocol::named("cubic")).unwrap();
            let tcp = tcp.config_as::<joulenet_proto::tcp::TcpConfig>().unwrap();
            assert_eq!(e2tcp.config.max_window, 32);
            assert_eq!(rcp.min_rto, t.min_rto);
            assert!(tcp.timestamps);
            [e2tcp.config.mss, wwp.payload, rcp.mss, tcp.mss]
        };
        let t = Tuning::default();
        assert_eq!(segments(&t), [1400; 4]);
        let t = Tuning::default().with_segment(1000).unwrap();
        assert_eq!(segments(&t), [1000; 4]);
        assert!(Tuning::default().with_segment(1401).is_err());
        assert!(Tuning::default().with_segment(10).is_err());
    }

    /// Garbage inside a well-framed datagram (what a broken or hostile peer
    /// could send on an established connection) is counted by the agent,
    /// never a panic, at either end of every protocol.
    #[test]
    fn malformed_agent_packets_are_counted_at_both_ends_of_every_protocol() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for p in Protocol::all() {
            let (mut c, mut s) = pair(p);
            s.start();
            c.start();
            // A real first packet, then mutilated copies and random bytes.
            let mut hello = Vec::new();
            c.drain(&mut hello, &mut Vec::new());
            let real = hello
                .first()
                .map(|(d, _)| d[HEADER_LEN + TOKEN_LEN..].to_vec())
                .unwrap_or_default();
            for i in 0..2000 {
                let len = (next() % 80) as usize;
                let mut junk: Vec<u8> = (0..len).map(|_| next() as u8).collect();
                if i % 2 == 0 && !real.is_empty() {
                    junk = real[..(next() as usize % real.len())].to_vec();
                }
                s.on_datagram(&junk, junk.len() + HEADER_LEN);
                c.on_datagram(&junk, junk.len() + HEADER_LEN);
                let mut sink = Vec::new();
                s.drain(&mut sink, &mut Vec::new());
                c.drain(&mut sink, &mut Vec::new());
            }
            if !p.is_datagram() {
                let dropped = |k: &Connection| {
                    let st = k.agent.stats();
                    st.malformed_dropped + st.unexpected_dropped
                };
                assert!(dropped(&s) > 0, "{p}: receiver counted nothing");
                assert!(dropped(&c) > 0, "{p}: sender counted nothing");
            }
        }
    }
}
