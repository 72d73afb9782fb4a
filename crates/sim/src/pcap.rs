//! Packet captures of simulated traffic, one pcap per node interface, as
//! ns-3 writes them.
//!
//! A capture whose every frame is real TCP or UDP over IPv4 is written as
//! raw IPv4 (LINKTYPE_RAW, 101): the network header the simulator
//! represents as addresses is synthesised as a real IPv4 header (node n is
//! 10.0.x.y with x·256 + y = n + 1) and TCP checksums are filled in, so
//! tcpdump and tshark decode everything.
//!
//! A capture holding any other frame — WWP, E2TCP, RCP, JTP, Hop (IPv4
//! protocols 253 and 254 are experimental, so tools decode them as
//! whatever claims those numbers), compressed headers that have no
//! network header at all, a frame of no flow — is written with the private
//! link type LINKTYPE_USER0 (147), so no real protocol's dissector is
//! applied to it. Each record then starts with a 20-byte
//! pseudo-header ([`PSEUDO_HEADER_LEN`], big-endian; docs/wire.md,
//! "Reading captures in Wireshark"):
//!
//! ```text
//! 'J' 'S' | version = 1 | format | network header (0 none, 4 IPv4) | 0 0 0
//!   | src node (u32) | src port (u16) | dst node (u32) | dst port (u16)
//! ```
//!
//! `format` is the packet's [`WireFormat`] code (0: a frame of no flow,
//! such as the shared medium's link-state advertisements). The frame
//! follows as it travels: its synthetic IPv4 header if it has one, then
//! the transport bytes, so the record's original length is the
//! pseudo-header plus the on-air network bytes.
//! `tools/wireshark/joulenet.lua` decodes both link types; it also shows
//! the flows' default ports (TCP/UDP 5000 + flow index) as data, since
//! Wireshark gives TCP 5000 to GSM IPA (the "GSM RSL" frames of issue 17).
//!
//! Captures keep the first [`SNAPLEN`] bytes of each packet (after the
//! pseudo-header), like `tcpdump -s 256`, so memory stays proportional to
//! the packet count. One exception: in a run with a flow of joulenet's own
//! formats, TCP and UDP frames are kept whole, since they may land in a
//! LINKTYPE_USER0 file where Wireshark's IPv4 and TCP dissectors are
//! handed them by the Lua dissector, and a Lua dissector cannot pass on
//! the original length of a cut record (Wireshark issue 15655).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use joulenet_proto::{Addr, NodeId, Time};
use joulenet_registry::WireFormat;
use joulenet_wire::ipv4::{Ipv4Packet, Ipv4Repr, HEADER_LEN};
use joulenet_wire::tcp::TcpPacket;
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::{DataLink, TsResolution};

use crate::frame::Frame;
use crate::link::LinkIndex;

pub const SNAPLEN: usize = 256;

/// LINKTYPE_USER0 (147, `DataLink::USER0`): the link type of captures
/// that hold joulenet's own formats.
pub const LINKTYPE_JOULENET: u32 = 147;

/// Bytes of the pseudo-header before each LINKTYPE_USER0 record.
pub const PSEUDO_HEADER_LEN: usize = 20;

/// The pseudo-header's first two bytes, "JS" (joulenet simulator).
pub const PSEUDO_HEADER_MAGIC: [u8; 2] = *b"JS";

/// The pseudo-header's version byte.
pub const PSEUDO_HEADER_VERSION: u8 = 1;

/// The IPv4 address joulenet gives node `n` in captures.
pub fn node_ip(n: NodeId) -> [u8; 4] {
    let k = n + 1;
    [10, (k >> 16) as u8, (k >> 8) as u8, k as u8]
}

/// One frame as seen by one node, kept until the file's link type is known.
struct Record {
    at: Time,
    src: Addr,
    dst: Addr,
    /// Real TCP or UDP over IPv4, which a raw-IPv4 capture shows as it is.
    real_ip: bool,
    /// The pseudo-header's format code.
    format: u8,
    has_ipv4: bool,
    /// The network bytes (synthetic IPv4 header, if any, and the packet),
    /// cut at [`SNAPLEN`] unless kept whole (`keep_ip_whole`).
    snap: Vec<u8>,
    /// Their length before the cut.
    len: usize,
}

/// In-memory captures keyed by (node, undirected link).
#[derive(Default)]
pub struct Capture {
    /// Each flow's packet format, by flow index.
    formats: Vec<WireFormat>,
    /// Keep TCP/UDP frames whole: a flow of another format may put them in
    /// a LINKTYPE_USER0 file, where Wireshark's IPv4 and TCP dissectors are
    /// handed them from a Lua dissector, which cannot pass on the length
    /// of a cut record.
    keep_ip_whole: bool,
    files: BTreeMap<(NodeId, u32), Vec<Record>>,
}

impl std::fmt::Debug for Capture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Capture")
            .field("files", &self.files.len())
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

fn header(datalink: DataLink) -> PcapHeader {
    PcapHeader {
        datalink,
        snaplen: HEADER_SNAPLEN,
        ts_resolution: TsResolution::NanoSecond,
        ..PcapHeader::default()
    }
}

impl Capture {
    /// A capture of a run whose flow `i` speaks `formats[i]`.
    pub fn new(formats: Vec<WireFormat>) -> Capture {
        let keep_ip_whole = formats
            .iter()
            .any(|f| !matches!(f, WireFormat::Tcp | WireFormat::Udp));
        Capture {
            formats,
            keep_ip_whole,
            files: BTreeMap::new(),
        }
    }

    /// Record a frame seen by `node` on link direction `l` at `now`.
    pub fn record(&mut self, now: Time, node: NodeId, l: LinkIndex, frame: &Frame) {
        let mut bytes = synthesize(frame);
        let len = bytes.len();
        let ip = frame.ip_protocol();
        let real_ip = matches!(ip, Some(joulenet_wire::tcp::PROTOCOL | UDP_PROTOCOL));
        if !(real_ip && self.keep_ip_whole) {
            bytes.truncate(SNAPLEN);
        }
        let format = match ip {
            Some(joulenet_wire::tcp::PROTOCOL) => WireFormat::Tcp as u8,
            Some(UDP_PROTOCOL) => WireFormat::Udp as u8,
            _ => frame
                .flow
                .and_then(|f| self.formats.get(f as usize))
                .map_or(0, |&f| f as u8),
        };
        self.files.entry((node, l / 2)).or_default().push(Record {
            at: now,
            src: frame.src,
            dst: frame.dst,
            real_ip,
            format,
            has_ipv4: ip.is_some(),
            snap: bytes,
            len,
        });
    }

    /// The capture files: (file name, pcap bytes).
    pub fn into_files(self) -> Vec<(String, Vec<u8>)> {
        self.files
            .into_iter()
            .map(|((node, link), records)| (format!("node{node}-link{link}.pcap"), write(&records)))
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

const UDP_PROTOCOL: u8 = 17;

/// One pcap file: raw IPv4 if every record is real TCP/UDP over IPv4,
/// joulenet's link type with a pseudo-header per record otherwise.
fn write(records: &[Record]) -> Vec<u8> {
    let raw = records.iter().all(|r| r.real_ip);
    let datalink = if raw { DataLink::RAW } else { DataLink::USER0 };
    let mut w = PcapWriter::with_header(Vec::new(), header(datalink))
        .expect("writing to memory cannot fail");
    let mut buf = Vec::new();
    for r in records {
        buf.clear();
        if !raw {
            buf.extend_from_slice(&pseudo_header(r));
        }
        let snap = if raw {
            &r.snap[..r.snap.len().min(SNAPLEN)]
        } else {
            &r.snap[..]
        };
        buf.extend_from_slice(snap);
        let orig_len = buf.len() - snap.len() + r.len;
        let packet = PcapPacket::new(
            std::time::Duration::from_nanos(r.at.0),
            orig_len as u32,
            &buf,
        );
        w.write_packet(&packet)
            .expect("writing to memory cannot fail");
    }
    w.into_writer()
}

fn pseudo_header(r: &Record) -> [u8; PSEUDO_HEADER_LEN] {
    let mut h = [0u8; PSEUDO_HEADER_LEN];
    h[0..2].copy_from_slice(&PSEUDO_HEADER_MAGIC);
    h[2] = PSEUDO_HEADER_VERSION;
    h[3] = r.format;
    h[4] = if r.has_ipv4 { 4 } else { 0 };
    h[8..12].copy_from_slice(&r.src.node.to_be_bytes());
    h[12..14].copy_from_slice(&r.src.port.to_be_bytes());
    h[14..18].copy_from_slice(&r.dst.node.to_be_bytes());
    h[18..20].copy_from_slice(&r.dst.port.to_be_bytes());
    h
}

/// The frame's network bytes: a synthetic IPv4 header (if its protocol
/// sends one) and the transport packet.
fn synthesize(frame: &Frame) -> Vec<u8> {
    let Some(protocol) = frame.ip_protocol() else {
        return frame.packet.clone();
    };
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
