//! Packet captures read back as valid raw-IPv4 pcaps: RAW link type,
//! nondecreasing timestamps, valid IPv4 header and TCP checksums, the
//! connection opening with a SYN; one record per transmission and per
//! reception.

mod common;

use std::io::Cursor;
use std::process::Command;

use common::{run, scratch_dir};
use joulenet_sim::pcap::SNAPLEN;
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
    let mut reader = PcapReader::new(Cursor::new(bytes)).expect("pcap header");
    assert_eq!(reader.header().datalink, DataLink::RAW);
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
    println!("skip: neither tcpdump nor tshark is on the PATH; external decoding not checked");
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

#[test]
fn no_capture_unless_asked() {
    let r = run("[flow]\nbytes = \"10kB\"");
    assert!(r.pcap.is_none());
}
