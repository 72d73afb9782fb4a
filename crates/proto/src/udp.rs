//! UDP: unreliable datagrams, for cross traffic and constant-rate streams.
//!
//! The sender sends each application message as one datagram the moment the
//! application has it; the receiver delivers what arrives. Losses are not
//! repaired, so the receiving application sees gaps: it is handed the bytes
//! that arrived, and the stream offsets of lost messages are simply skipped by
//! the sender (a datagram application counts what it got).

use joulenet_wire::udp::{UdpPacket, UdpRepr, HEADER_LEN};

use crate::net::{Addr, Agent, AppRead, Net, TransportEvent, TxOpts};
use crate::stats::TransportStats;
use crate::time::Time;

/// Largest datagram payload the sender asks the application for.
pub const MAX_PAYLOAD: usize = 1472;

pub struct UdpSender {
    peer: Addr,
    /// Link-layer attempts per datagram (`Some(1)`: no link ARQ); `None`
    /// leaves it to the link's retry limit.
    link_attempts: Option<u8>,
    /// Application bytes per datagram (at most [`MAX_PAYLOAD`]).
    payload: usize,
    stats: TransportStats,
    finished: bool,
    buf: Vec<u8>,
}

impl UdpSender {
    pub fn new(peer: Addr) -> UdpSender {
        UdpSender {
            peer,
            link_attempts: None,
            payload: MAX_PAYLOAD,
            stats: TransportStats::default(),
            finished: false,
            buf: vec![0; MAX_PAYLOAD],
        }
    }

    /// Send every datagram with `attempts` link-layer attempts (`Some(1)`:
    /// the Hop paper's UDP/no-ARQ), or with the link's own retry limit.
    pub fn with_link_attempts(mut self, attempts: Option<u8>) -> UdpSender {
        self.link_attempts = attempts;
        self
    }

    /// At most `bytes` of application data per datagram: on hosts, what
    /// keeps a datagram within the path's MTU behind the runtime's framing
    /// (1472 would make IP fragment every one, and a share p of losses
    /// then loses about 2p of the datagrams).
    pub fn with_payload(mut self, bytes: u16) -> UdpSender {
        self.payload = (bytes as usize).clamp(1, MAX_PAYLOAD);
        self
    }

    fn drain_app(&mut self, net: &mut dyn Net) {
        while !self.finished {
            match net.app_read(&mut self.buf[..self.payload]) {
                AppRead::Data(n) => self.send(net, n),
                AppRead::Pending => return,
                AppRead::Finished => {
                    self.finished = true;
                    net.event(TransportEvent::Closed);
                }
            }
        }
    }

    fn send(&mut self, net: &mut dyn Net, n: usize) {
        let mut packet = net.packet_buffer();
        let repr = UdpRepr {
            src_port: net.local().port,
            dst_port: self.peer.port,
        };
        if repr.emit(&self.buf[..n], &mut packet).is_err() {
            return;
        }
        self.stats.data_packets += 1;
        self.stats.data_bytes += packet.len() as u64;
        self.stats.payload_bytes += n as u64;
        let opts = TxOpts {
            link_attempts: self.link_attempts,
            ..TxOpts::ipv4(17)
        };
        net.send(self.peer, packet, opts);
    }
}

impl Agent for UdpSender {
    fn protocol(&self) -> &'static str {
        "udp"
    }
    fn start(&mut self, net: &mut dyn Net) {
        net.event(TransportEvent::Established);
        self.drain_app(net);
    }
    fn on_packet(&mut self, _net: &mut dyn Net, _from: Addr, _packet: &[u8]) {
        self.stats.unexpected_dropped += 1;
    }
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    fn on_timeout(&mut self, _net: &mut dyn Net) {}
    fn on_app_ready(&mut self, net: &mut dyn Net) {
        self.drain_app(net);
    }
    fn stats(&self) -> &TransportStats {
        &self.stats
    }
    fn is_closed(&self) -> bool {
        self.finished
    }
}

#[derive(Default)]
pub struct UdpReceiver {
    stats: TransportStats,
}

impl UdpReceiver {
    pub fn new() -> UdpReceiver {
        UdpReceiver::default()
    }
}

impl Agent for UdpReceiver {
    fn protocol(&self) -> &'static str {
        "udp"
    }
    fn start(&mut self, _net: &mut dyn Net) {}
    fn on_packet(&mut self, net: &mut dyn Net, _from: Addr, packet: &[u8]) {
        let Ok(p) = UdpPacket::new_checked(packet) else {
            self.stats.malformed_dropped += 1;
            return;
        };
        self.stats.packets_received += 1;
        self.stats.bytes_received += (HEADER_LEN + p.payload().len()) as u64;
        net.deliver(p.payload());
    }
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    fn on_timeout(&mut self, _net: &mut dyn Net) {}
    fn stats(&self) -> &TransportStats {
        &self.stats
    }
    /// A datagram receiver holds nothing open.
    fn is_closed(&self) -> bool {
        true
    }
}
