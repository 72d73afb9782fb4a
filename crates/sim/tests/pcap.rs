//! Packet captures read back as valid pcaps: TCP and UDP as raw IPv4 (RAW
//! link type, nondecreasing timestamps, valid IPv4 header and TCP
//! checksums, the connection opening with a SYN; one record per
//! transmission and per reception); joulenet's own formats (WWP, E2TCP,
//! ...) under the private LINKTYPE_USER0 with the pseudo-header, never as
//! IPv4 protocol 253/254 a real dissector would claim.

mod common;

use std::io::Cursor;
use std::process::Command;

use common::{run, scratch_dir};
use joulenet_sim::pcap::{PSEUDO_HEADER_LEN, SNAPLEN};
use joulenet_wire::ipv4::{Ipv4Packet, HEADER_LEN};
use joulenet_wire::tcp::TcpPacket;
use pcap_file::pcap::PcapReader;
use pcap_file::DataLink;

const SYN: u8 = 0x02;
const ACK: u8 = 0x10;

struct Record {
    ts: std::time::Duration,
    orig_len: u32,
    data: Vec<u8>,
}

fn read(bytes: &[u8]) -> Vec<Record> {
    read_as(bytes, DataLink::RAW)
}

fn read_as(bytes: &[u8], datalink: DataLink) -> Vec<Record> {
    let mut reader = PcapReader::new(Cursor::new(bytes)).expect("pcap header");
    assert_eq!(reader.header().datalink, datalink);
    assert!(reader.header().snaplen as usize >= SNAPLEN);
    let mut out = Vec::new();
    while let Some(p) = reader.next_packet() {
        let p = p.expect("pcap record");
        out.push(Record {
            ts: p.timestamp,
            orig_len: p.orig_len,
            data: p.data.into_owned(),
        });
    }
    out
}

/// Check every record of one file; returns its packet count.
fn check_file(name: &str, records: &[Record], protocol: u8) -> usize {
    assert!(!records.is_empty(), "{name} is empty");
    for w in records.windows(2) {
        assert!(w[0].ts <= w[1].ts, "{name}: timestamps go back");
    }
    let mut full_tcp_checked = 0;
    for (i, rec) in records.iter().enumerate() {
        assert!(rec.data.len() <= SNAPLEN);
        assert_eq!(rec.data.len(), (rec.orig_len as usize).min(SNAPLEN));
        let ip = Ipv4Packet::new_unchecked(&rec.data[..]);
        assert_eq!(ip.version(), 4, "{name} #{i}");
        assert!(
            ip.verify_checksum(),
            "{name} #{i}: bad IPv4 header checksum"
        );
        assert_eq!(ip.total_len() as u32, rec.orig_len, "{name} #{i}: length");
        assert_eq!(ip.protocol(), protocol, "{name} #{i}");
        let addrs = (ip.src_addr(), ip.dst_addr());
        assert_eq!(addrs.0[0], 10, "node addresses are 10.0.x.y");
        if protocol == 6 {
            let segment = &rec.data[HEADER_LEN..];
            let tcp = TcpPacket::new_unchecked(segment);
            if i == 0 {
                assert_eq!(
                    tcp.flags() & (SYN | ACK),
                    SYN,
                    "{name}: the first packet is the SYN"
                );
            }
            if rec.data.len() == rec.orig_len as usize {
                let tcp = TcpPacket::new_checked(segment).expect("TCP header");
                assert!(
                    tcp.verify_checksum_ipv4(addrs.0, addrs.1),
                    "{name} #{i}: bad TCP checksum"
                );
                full_tcp_checked += 1;
            }
        }
    }
    if protocol == 6 {
        assert!(full_tcp_checked > 0, "{name}: no whole segment to checksum");
    }
    records.len()
}

/// Is an external reader's absence a failure (on CI) or a skip?
fn tool_missing(what: &str) {
    if std::env::var_os("CI").is_some() {
        panic!("{what} (CI is set: .ci/run installs tcpdump and tshark)");
    }
    println!("skip: {what}");
}

fn external_reader_check(file: &std::path::Path, expected: usize) {
    for tool in ["tcpdump", "tshark"] {
        let args: Vec<&str> = if tool == "tcpdump" {
            vec!["-nn", "-r"]
        } else {
            vec!["-n", "-r"]
        };
        match Command::new(tool).args(&args).arg(file).output() {
            Ok(out) => {
                assert!(
                    out.status.success(),
                    "{tool} failed: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                let lines = String::from_utf8_lossy(&out.stdout).lines().count();
                assert_eq!(lines, expected, "{tool} read a different packet count");
                return;
            }
            Err(_) => continue,
        }
    }
    tool_missing("neither tcpdump nor tshark is on the PATH; external decoding not checked");
}

#[test]
fn tcp_captures_over_a_two_hop_chain_read_back() {
    let r = run(r#"
[topology]
kind = "chain"
hops = 2
[link]
rate = "5Mbps"
delay = "2ms"
loss = { model = "bernoulli", rate = 0.02 }
[flow]
protocol = "sack"
bytes = "60kB"
[output]
pcap = true
"#);
    assert!(r.flows[0].completed);
    let files = r.pcap.expect("pcap = true makes captures").into_files();
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    // Node 1 forwards, so it has a capture on each of its two links.
    assert_eq!(
        names,
        [
            "node0-link0.pcap",
            "node1-link0.pcap",
            "node1-link1.pcap",
            "node2-link1.pcap"
        ]
    );
    let mut total = 0;
    for (name, bytes) in &files {
        total += check_file(name, &read(bytes), 6);
    }
    // One record per transmission (no ARQ: one per attempt) and one per
    // frame received.
    let expected: u64 = r
        .links
        .iter()
        .map(|l| l.attempts + l.frames_delivered)
        .sum();
    assert_eq!(total as u64, expected);

    let dir = scratch_dir().join("pcap-chain");
    let _ = std::fs::remove_dir_all(&dir);
    let (name, bytes) = &files[0];
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    external_reader_check(&path, read(bytes).len());
}

#[test]
fn udp_captures_carry_protocol_17() {
    let r = run(r#"
stop = "1.1s"
[link]
rate = "1Mbps"
[flow]
protocol = "udp"
app = "cbr"
rate = "80kbps"
message = 500
stop = "1s"
[output]
pcap = true
"#);
    let files = r.pcap.unwrap().into_files();
    assert_eq!(files.len(), 2);
    for (name, bytes) in &files {
        let n = check_file(name, &read(bytes), 17);
        assert_eq!(n, 20, "{name}: 20 datagrams of 500 B in 1 s at 80 kbit/s");
    }
}

/// Records under joulenet's link type: the pseudo-header (magic, version,
/// format, network header, addresses) and the frame after it; returns the
/// frames (network bytes).
fn check_joulenet_file(name: &str, records: &[Record], format: u8) -> Vec<Vec<u8>> {
    assert!(!records.is_empty(), "{name} is empty");
    let mut frames = Vec::new();
    for (i, rec) in records.iter().enumerate() {
        let d = &rec.data;
        assert!(d.len() <= PSEUDO_HEADER_LEN + SNAPLEN, "{name} #{i}");
        assert_eq!(&d[..3], b"JS\x01", "{name} #{i}: magic and version");
        assert_eq!(d[3], format, "{name} #{i}: format");
        assert_eq!(&d[5..8], [0, 0, 0], "{name} #{i}: reserved");
        let frame = &d[PSEUDO_HEADER_LEN..];
        match d[4] {
            0 => {}
            4 => {
                let ip = Ipv4Packet::new_unchecked(frame);
                assert_eq!(ip.version(), 4, "{name} #{i}");
                assert!(ip.verify_checksum(), "{name} #{i}");
                assert_eq!(
                    ip.total_len() as usize + PSEUDO_HEADER_LEN,
                    rec.orig_len as usize,
                    "{name} #{i}: length"
                );
                let src = u32::from_be_bytes(d[8..12].try_into().unwrap());
                assert_eq!(ip.src_addr(), joulenet_sim::pcap::node_ip(src));
            }
            other => panic!("{name} #{i}: network header {other}"),
        }
        frames.push(frame.to_vec());
    }
    frames
}

#[test]
fn wwp_captures_use_joulenet_link_type() {
    let r = run(r#"
[link]
rate = "2Mbps"
delay = "5ms"
[flow]
protocol = "wwp"
bytes = "20kB"
[output]
pcap = true
"#);
    assert!(r.flows[0].completed);
    let files = r.pcap.unwrap().into_files();
    assert_eq!(files.len(), 2);
    for (name, bytes) in &files {
        let frames = check_joulenet_file(name, &read_as(bytes, DataLink::USER0), 3);
        for f in &frames {
            // IPv4 protocol 253 behind the synthetic header, WWP after it.
            assert_eq!(f[9], 253, "{name}");
            let ty = f[HEADER_LEN] >> 4;
            assert!((1..=11).contains(&ty), "{name}: WWP type {ty}");
        }
    }
}

#[test]
fn compressed_e2tcp_has_no_network_header_in_captures() {
    let r = run(r#"
[link]
rate = "2Mbps"
delay = "5ms"
[flow]
protocol = "e2tcp"
bytes = "20kB"
[output]
pcap = true
"#);
    assert!(r.flows[0].completed);
    let files = r.pcap.unwrap().into_files();
    for (name, bytes) in &files {
        let records = read_as(bytes, DataLink::USER0);
        let frames = check_joulenet_file(name, &records, 4);
        for (rec, f) in records.iter().zip(&frames) {
            assert_eq!(rec.data[4], 0, "{name}: compact E2TCP has no IPv4 header");
            // The E2TCP checksum covers the whole segment.
            if rec.orig_len as usize == rec.data.len() {
                assert_eq!(joulenet_wire::checksum::data(f), 0, "{name}");
            }
        }
        // The client's SYN carries the addresses (S and D set).
        assert_eq!(frames[0][0] & 0x84, 0x84, "{name}: first is the SYN");
    }
}

#[test]
fn no_capture_unless_asked() {
    let r = run("[flow]\nbytes = \"10kB\"");
    assert!(r.pcap.is_none());
}
