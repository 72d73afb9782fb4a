//! Counters every transport agent keeps, read by the drivers' observers.
//!
//! Byte counts are transport bytes: transport header plus payload. Network and
//! link headers are counted by the layers that add them.

use crate::time::Duration;

/// Round-trip time samples a sender has taken.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct RttStats {
    pub samples: u64,
    pub sum_ns: u128,
    pub min: Option<Duration>,
    pub max: Option<Duration>,
    /// The smoothed RTT now (RFC 6298 SRTT, or the protocol's equivalent).
    pub smoothed: Option<Duration>,
}

impl RttStats {
    pub fn record(&mut self, rtt: Duration) {
        self.samples += 1;
        self.sum_ns += rtt.0 as u128;
        self.min = Some(self.min.map_or(rtt, |m| m.min(rtt)));
        self.max = Some(self.max.map_or(rtt, |m| m.max(rtt)));
    }
    pub fn mean(&self) -> Option<Duration> {
        (self.samples > 0).then(|| Duration((self.sum_ns / self.samples as u128) as u64))
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct TransportStats {
    /// First transmissions of segments carrying application data.
    pub data_packets: u64,
    pub data_bytes: u64,
    /// Application bytes in first transmissions (no headers).
    pub payload_bytes: u64,
    /// Retransmissions of segments carrying application data.
    pub retransmitted_packets: u64,
    pub retransmitted_bytes: u64,
    /// Segments carrying no application data: ACKs, SYN, FIN, probes, requests.
    pub control_packets: u64,
    pub control_bytes: u64,
    pub packets_received: u64,
    pub bytes_received: u64,
    /// Packets that failed to parse: counted and dropped.
    pub malformed_dropped: u64,
    /// Well-formed packets that did not fit the connection's state
    /// (duplicates, strangers, replays): counted and dropped.
    pub unexpected_dropped: u64,
    pub timeouts: u64,
    /// Loss-recovery episodes entered without a timeout (fast retransmit).
    pub fast_recoveries: u64,
    pub rtt: RttStats,
}

impl TransportStats {
    /// Count an arriving packet of `len` bytes by how it parsed: received
    /// when well formed (its parse is handed back), else malformed and
    /// dropped.
    pub fn count_arrival<T, E>(&mut self, len: usize, parsed: Result<T, E>) -> Option<T> {
        match parsed {
            Ok(p) => {
                self.packets_received += 1;
                self.bytes_received += len as u64;
                Some(p)
            }
            Err(_) => {
                self.malformed_dropped += 1;
                None
            }
        }
    }

    /// Add another agent's counters to these (a relay or proxy reporting the
    /// agents it runs as one). RTT samples are pooled; the smoothed RTT is
    /// the other's when it has one.
    pub fn add(&mut self, other: &TransportStats) {
        self.data_packets += other.data_packets;
        self.data_bytes += other.data_bytes;
        self.payload_bytes += other.payload_bytes;
        self.retransmitted_packets += other.retransmitted_packets;
        self.retransmitted_bytes += other.retransmitted_bytes;
        self.control_packets += other.control_packets;
        self.control_bytes += other.control_bytes;
        self.packets_received += other.packets_received;
        self.bytes_received += other.bytes_received;
        self.malformed_dropped += other.malformed_dropped;
        self.unexpected_dropped += other.unexpected_dropped;
        self.timeouts += other.timeouts;
        self.fast_recoveries += other.fast_recoveries;
        let (a, b) = (&mut self.rtt, &other.rtt);
        a.samples += b.samples;
        a.sum_ns += b.sum_ns;
        a.min = [a.min, b.min].into_iter().flatten().min();
        a.max = [a.max, b.max].into_iter().flatten().max();
        a.smoothed = b.smoothed.or(a.smoothed);
    }

    /// Every transport byte this agent put on the network.
    pub fn total_bytes_sent(&self) -> u64 {
        self.data_bytes + self.retransmitted_bytes + self.control_bytes
    }
    pub fn total_packets_sent(&self) -> u64 {
        self.data_packets + self.retransmitted_packets + self.control_packets
    }
}
