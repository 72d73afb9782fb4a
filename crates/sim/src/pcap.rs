//! Packet captures of simulated traffic, one pcap per node interface, as
//! ns-3 writes them.
//!
//! Frames are written as raw IPv4 (LINKTYPE_RAW): the network header the
//! simulator represents as addresses is synthesised as a real IPv4 header
//! (node n is 10.0.x.y with x·256 + y = n + 1) and TCP checksums are filled
//! in, so tcpdump and tshark decode everything. Frames whose protocol sends
//! no network header (compressed headers) are shown inside a synthetic IPv4
//! header with protocol 254; their on-air size does not include it.
//! Captures keep the first [`SNAPLEN`] bytes of each packet, like
//! `tcpdump -s 256`, so memory stays proportional to the packet count.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use joulenet_proto::{NodeId, Time};
use joulenet_wire::ipv4::{Ipv4Packet, Ipv4Repr, HEADER_LEN};
use joulenet_wire::tcp::TcpPacket;
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, TsResolution};

use crate::frame::Frame;
use crate::link::LinkIndex;

pub const SNAPLEN: usize = 256;

/// The IPv4 address joulenet gives node `n` in captures.
pub fn node_ip(n: NodeId) -> [u8; 4] {
    let k = n + 1;
    [10, (k >> 16) as u8, (k >> 8) as u8, k as u8]
}

/// In-memory captures keyed by (node, undirected link).
#[derive(Default)]
pub struct Capture {
    writers: BTreeMap<(NodeId, u32), PcapWriter<Vec<u8>>>,
}

impl std::fmt::Debug for Capture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Capture")
            .field("files", &self.writers.len())
            .finish()
    }
}

/// The snap length declared in the file header. Records are still cut at
/// [`SNAPLEN`]; the header declares the largest IPv4 packet because readers
/// such as pcap-file 2 (our own writer's crate) reject a record whose
/// original length exceeds the header's snap length, which made every
/// capture with a full-size segment unreadable to them. tcpdump and tshark
/// read either form and still see records as truncated (incl_len < orig_len).
const HEADER_SNAPLEN: u32 = 65_535;

fn header() -> PcapHeader {
    PcapHeader {
        datalink: DataLink::RAW,
        snaplen: HEADER_SNAPLEN,
        ts_resolution: TsResolution::NanoSecond,
        ..PcapHeader::default()
    }
}

impl Capture {
    pub fn new() -> Capture {
        Capture::default()
    }

    /// Record a frame seen by `node` on link direction `l` at `now`.
    pub fn record(&mut self, now: Time, node: NodeId, l: LinkIndex, frame: &Frame) {
        let bytes = synthesize(frame);
        let writer = self.writers.entry((node, l / 2)).or_insert_with(|| {
            PcapWriter::with_header(Vec::new(), header()).expect("writing to memory cannot fail")
        });
        let snap = &bytes[..bytes.len().min(SNAPLEN)];
        let packet = PcapPacket::new(
            std::time::Duration::from_nanos(now.0),
            bytes.len() as u32,
            snap,
        );
        writer
            .write_packet(&packet)
            .expect("writing to memory cannot fail");
    }

    /// The capture files: (file name, pcap bytes).
    pub fn into_files(self) -> Vec<(String, Vec<u8>)> {
        self.writers
            .into_iter()
            .map(|((node, link), w)| (format!("node{node}-link{link}.pcap"), w.into_writer()))
            .collect()
    }

    /// Write every capture into `dir` as `node<N>-link<L>.pcap`.
    pub fn write_to(self, dir: &Path) -> std::io::Result<Vec<std::path::PathBuf>> {
        std::fs::create_dir_all(dir)?;
        let mut written = Vec::new();
        for (name, data) in self.into_files() {
            let path = dir.join(name);
            std::fs::File::create(&path)?.write_all(&data)?;
            written.push(path);
        }
        Ok(written)
    }
}

/// The frame as an IPv4 packet.
fn synthesize(frame: &Frame) -> Vec<u8> {
    let protocol = frame.ip_protocol().unwrap_or(254);
    let repr = Ipv4Repr {
        src_addr: node_ip(frame.src.node),
        dst_addr: node_ip(frame.dst.node),
        protocol,
        payload_len: frame.packet.len(),
        ttl: 64,
    };
    let mut bytes = vec![0u8; HEADER_LEN + frame.packet.len()];
    bytes[HEADER_LEN..].copy_from_slice(&frame.packet);
    repr.emit(&mut Ipv4Packet::new_unchecked(&mut bytes[..]));
    if protocol == joulenet_wire::tcp::PROTOCOL {
        if let Ok(mut tcp) = TcpPacket::new_checked(&mut bytes[HEADER_LEN..]) {
            tcp.fill_checksum_ipv4(repr.src_addr, repr.dst_addr);
        }
    }
    bytes
}
