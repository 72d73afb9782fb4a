//! The Wireshark dissector `tools/wireshark/joulenet.lua` read by
//! `tshark -X lua_script:…` on captures of every joulenet wire format:
//!
//! * the simulator's pcaps (`joulenet run … --out DIR`) of WWP, E2TCP
//!   (compact and uncompressed), RCP, JTP (compact and paper layouts), Hop
//!   — under the private LINKTYPE_USER0 — and TCP (raw IPv4, Wireshark's own
//!   dissector): every frame decodes to its protocol's layer with the
//!   fields docs/wire.md names, sequence numbers as the transfer sent them,
//!   and no frame is malformed, a Lua error, or GSM RSL (what Wireshark
//!   made of some TCP payloads on the simulator's default port 5000);
//! * the runtime's datagrams (`joulenet send`/`recv` on loopback, relayed
//!   through a recording UDP proxy in this test that writes them to a pcap
//!   with the server on port 5201): framing version 2 with TCP, WWP, E2TCP
//!   and RCP inside, version 3 (`--node`/`--to-node`), sealed version 4
//!   (`--psk-file`) and 5 (both); the docs' golden datagrams (routed
//!   `Retry`, sealed `Data`); UDP inside the framing; and truncated or
//!   corrupt datagrams, which must be marked `joulenet.malformed`, never
//!   throw;
//! * golden bytes of every simulator format (crates/wire's tests,
//!   docs/wire.md) under LINKTYPE_USER0, field by field, and hostile
//!   records (cut, over-announcing, bad padding, unknown format).
//!
//! Needs tshark: when it is missing the test fails if the `CI` variable is
//! set (`.ci/run` installs it) and is skipped with a printed reason
//! otherwise.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn lua() -> PathBuf {
    root().join("tools/wireshark/joulenet.lua")
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("jn-wireshark-{}", std::process::id()));
    let d = d.join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Is tshark there? Missing: a failure on CI, a printed skip elsewhere.
fn have_tshark() -> bool {
    let ok = Command::new("tshark")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        let why = "tshark is not on the PATH (apt-get install tshark); the Wireshark dissector is not checked";
        if std::env::var_os("CI").is_some() {
            panic!("{why}, and CI is set: .ci/run installs it");
        }
        println!("skip: {why}");
    }
    ok
}

/// `tshark -r FILE [-Y FILTER] -T fields -e …`: one row per frame, one
/// string per field (several occurrences joined by ',').
fn fields(file: &Path, filter: Option<&str>, names: &[&str]) -> Vec<Vec<String>> {
    let mut c = Command::new("tshark");
    c.arg("-X")
        .arg(format!("lua_script:{}", lua().display()))
        .arg("-n")
        .arg("-r")
        .arg(file);
    if let Some(f) = filter {
        c.args(["-Y", f]);
    }
    c.args(["-T", "fields", "-E", "separator=/t", "-E", "occurrence=a"]);
    for n in names {
        c.args(["-e", n]);
    }
    let out = c.output().expect("run tshark");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "tshark failed on {}: {stderr}",
        file.display()
    );
    assert!(
        !stderr.contains("Lua") && !stderr.contains("lua"),
        "tshark complained about the dissector: {stderr}"
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

fn count(file: &Path, filter: &str) -> usize {
    fields(file, Some(filter), &["frame.number"]).len()
}

/// No frame malformed, no Lua error, nothing read as GSM RSL.
const BAD: &str = "_ws.malformed || _ws.lua.error || joulenet.malformed || gsm_abis_rsl \
                   || _ws.expert.severity == error";

fn assert_clean(file: &Path) {
    let bad = fields(
        file,
        Some(BAD),
        &["frame.number", "frame.protocols", "_ws.expert.message"],
    );
    assert!(
        bad.is_empty(),
        "{}: frames not cleanly decoded: {bad:?}",
        file.display()
    );
}

fn num(s: &str) -> u64 {
    s.parse().unwrap_or_else(|_| panic!("not a number: {s:?}"))
}

/// True if the values' first occurrences come in increasing order, i.e. new
/// data is sent in sequence (retransmissions repeat earlier values).
fn first_occurrences_increase(values: &[u64]) -> bool {
    let mut seen = BTreeSet::new();
    let mut last = None;
    for &v in values {
        if seen.insert(v) {
            if last.is_some_and(|l| v <= l) {
                return false;
            }
            last = Some(v);
        }
    }
    true
}

// ---------------------------------------------------------------------------
// Simulator captures
// ---------------------------------------------------------------------------

fn scenario(protocol: &str, extra: &str, hops: u32) -> String {
    format!(
        r#"
[topology]
kind = "chain"
hops = {hops}
[link]
rate = "2Mbps"
delay = "5ms"
loss = {{ model = "bernoulli", rate = 0.05 }}
[flow]
protocol = "{protocol}"
bytes = "40kB"
{extra}
[output]
pcap = true
"#
    )
}

/// Runs the scenario with `joulenet run --out`; the source node's capture
/// (node 0, its only link), whatever the pcap folder is called.
fn sim_capture(name: &str, text: &str) -> PathBuf {
    let d = scratch(&format!("sim-{name}"));
    let file = d.join("s.toml");
    std::fs::write(&file, text).unwrap();
    let out = d.join("out");
    let run = Command::new(env!("CARGO_BIN_EXE_joulenet"))
        .args(["run", "-q"])
        .arg(&file)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "joulenet run {name}: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    fn find(dir: &Path, found: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                find(&p, found);
            } else if p.file_name().is_some_and(|n| n == "node0-link0.pcap") {
                found.push(p);
            }
        }
    }
    let mut found = Vec::new();
    find(&out, &mut found);
    assert_eq!(found.len(), 1, "{name}: one node0-link0.pcap under {out:?}");
    found.pop().unwrap()
}

/// Column `i` of every row, as numbers.
fn col(rows: &[Vec<String>], i: usize) -> Vec<u64> {
    rows.iter().map(|r| num(&r[i])).collect()
}

fn check_sim_wwp() {
    let f = sim_capture("wwp", &scenario("wwp", "", 2));
    assert_clean(&f);
    let all = fields(&f, None, &["frame.encap_type", "joulenet.sim.format"]);
    assert!(!all.is_empty());
    for r in &all {
        // Wireshark's WTAP_ENCAP_USER0 is 45; format 3 is WWP.
        assert_eq!(r, &["45", "3"], "every WWP frame under LINKTYPE_USER0");
    }
    assert_eq!(
        count(&f, "joulenet.wwp"),
        all.len(),
        "a WWP layer on every frame"
    );
    let data = fields(
        &f,
        Some("joulenet.wwp.type == 3 && joulenet.sim.src_node == 0"),
        &["joulenet.wwp.seq", "joulenet.wwp.id", "joulenet.wwp.aux"],
    );
    let seqs = col(&data, 0);
    assert!(first_occurrences_increase(&seqs), "WWP DATA seq: {seqs:?}");
    // 40 kB in 1024-byte segments: segments 0..=39, each sent at least once.
    let distinct: BTreeSet<u64> = seqs.iter().copied().collect();
    assert_eq!(distinct, (0..40).collect(), "WWP DATA seq");
    for r in &data {
        assert!(num(&r[1]) < num(&r[2]), "WWP DATA id < aux: {r:?}");
    }
    assert_eq!(
        count(&f, "joulenet.wwp.type == 1"),
        1,
        "one SYN at the sender"
    );
    assert!(count(&f, "joulenet.wwp.type == 4") > 0, "N-S ACKs");
}

fn check_sim_e2tcp(compressed: bool) {
    let extra = if compressed {
        ""
    } else {
        "[flow.e2tcp]\ncompression = false"
    };
    let f = sim_capture(
        if compressed { "e2tcp" } else { "e2tcp-raw" },
        &scenario("e2tcp", extra, 1),
    );
    assert_clean(&f);
    let all = fields(
        &f,
        None,
        &[
            "joulenet.sim.network",
            "joulenet.e2tcp.layout",
            "joulenet.e2tcp.has_addrs",
            "joulenet.e2tcp.syn",
            "joulenet.e2tcp.conn_id",
        ],
    );
    let (network, layout) = if compressed {
        ("0", "compact (no network header)")
    } else {
        ("4", "uncompressed (behind IPv4)")
    };
    for (i, r) in all.iter().enumerate() {
        assert_eq!(r[0], network, "#{i}");
        assert_eq!(r[1], layout, "#{i}");
        if !compressed || r[3] == "1" {
            assert_eq!(
                r[2], "1",
                "#{i}: addresses on SYNs (and always uncompressed)"
            );
        }
        assert_eq!(r[4], all[0][4], "one connection id");
    }
    assert_eq!(all[0][3], "1", "the first frame is the SYN");
    let conn = &all[0][4];
    // Whole frames (SYNs, ACKs) carry a checksum that verifies.
    let checked = fields(
        &f,
        Some("joulenet.e2tcp.checksum_ok"),
        &["joulenet.e2tcp.checksum_ok"],
    );
    assert!(!checked.is_empty());
    assert!(
        checked.iter().all(|r| r[0] == "1"),
        "E2TCP checksums: {checked:?}"
    );
    let data = fields(
        &f,
        Some("joulenet.e2tcp.payload && joulenet.sim.src_node == 0"),
        &["joulenet.e2tcp.seq"],
    );
    let seqs = col(&data, 0);
    assert!(first_occurrences_increase(&seqs), "E2TCP seq: {seqs:?}");
    assert_eq!(seqs[0], 0);
    assert!(conn.parse::<u8>().is_ok());
    let acks = fields(
        &f,
        Some("joulenet.e2tcp.has_ack == 1 && joulenet.sim.src_node == 1"),
        &["joulenet.e2tcp.ack"],
    );
    let acks = col(&acks, 0);
    assert!(
        acks.iter().max() >= Some(&40_000),
        "the last ACK covers 40 kB"
    );
}

fn check_sim_rcp() {
    let f = sim_capture("rcp", &scenario("rcp", "", 2));
    assert_clean(&f);
    let n = fields(&f, None, &["frame.number"]).len();
    assert_eq!(count(&f, "joulenet.rcp"), n, "an RCP layer on every frame");
    let first = fields(
        &f,
        None,
        &[
            "joulenet.rcp.flags.syn",
            "joulenet.rcp.flags.lim",
            "joulenet.rcp.doff",
        ],
    );
    assert_eq!(
        first[0],
        ["1", "1", "5"],
        "the sender's SYN opens with SND.LIM"
    );
    assert!(
        count(&f, "joulenet.rcp.flags.req == 1") > 0,
        "REQs from the receiver"
    );
    let data = fields(
        &f,
        Some("joulenet.rcp.payload && joulenet.sim.src_node == 0"),
        &["joulenet.rcp.seq"],
    );
    let seqs = col(&data, 0);
    assert!(
        !seqs.is_empty() && first_occurrences_increase(&seqs),
        "RCP data seq: {seqs:?}"
    );
}

fn check_sim_jtp(paper: bool) {
    let extra = if paper {
        "[flow.jtp]\nformat = \"paper\""
    } else {
        ""
    };
    let f = sim_capture(
        if paper { "jtp-paper" } else { "jtp" },
        &scenario("jtp", extra, 2),
    );
    assert_clean(&f);
    let layout = if paper { "paper" } else { "compact" };
    let all = fields(&f, None, &["joulenet.jtp.layout", "joulenet.jtp.kind"]);
    assert!(all.iter().all(|r| r[0] == layout), "JTP layout {layout}");
    let data = fields(&f, Some("joulenet.jtp.kind == 1"), &["joulenet.jtp.seq"]);
    let seqs = col(&data, 0);
    assert!(first_occurrences_increase(&seqs), "JTP seq: {seqs:?}");
    assert_eq!(seqs[0], 0);
    let acks = fields(
        &f,
        Some("joulenet.jtp.kind == 2"),
        &[
            "frame.len",
            "joulenet.jtp.snack_count",
            "joulenet.jtp.local_count",
        ],
    );
    assert!(!acks.is_empty(), "JTP ACKs");
    for r in &acks {
        let ack_len = num(&r[0]) - 20 - 20; // pseudo-header, IPv4
        if paper {
            assert_eq!(ack_len, 200, "a paper ACK is 200 bytes");
        } else {
            let entries = num(&r[1]) + num(&r[2]);
            assert_eq!(ack_len, 28 + 4 * entries, "compact ACK length");
        }
    }
}

fn check_sim_hop() {
    let f = sim_capture("hop", &scenario("hop", "", 2));
    assert_clean(&f);
    let n = fields(&f, None, &["frame.number"]).len();
    assert_eq!(count(&f, "joulenet.hop"), n, "a Hop layer on every frame");
    let data = fields(
        &f,
        Some("joulenet.hop.type == 0 && joulenet.sim.src_node == 0"),
        &["joulenet.hop.block_num", "joulenet.hop.packet_num"],
    );
    assert!(!data.is_empty());
    assert_eq!(data[0], ["0", "0"], "block 0 starts with frame 0");
    assert!(count(&f, "joulenet.hop.type == 1") > 0, "BSYNs");
    assert!(count(&f, "joulenet.hop.type == 2") > 0, "BACKs");
}

fn check_sim_nackrate() {
    let f = sim_capture("nackrate", &scenario("nackrate", "", 2));
    assert_clean(&f);
    let n = fields(&f, None, &["frame.number"]).len();
    assert_eq!(
        count(&f, "joulenet.nackrate"),
        n,
        "a nackrate layer on every frame"
    );
    let data = fields(
        &f,
        Some("joulenet.nackrate.kind == 1 && joulenet.sim.src_node == 0"),
        &["joulenet.nackrate.packet", "joulenet.nackrate.offset"],
    );
    assert_eq!(data[0], ["0", "0"], "packet 0 carries offset 0");
    assert!(
        first_occurrences_increase(&col(&data, 1)),
        "new data in stream order"
    );
    let acks = count(&f, "joulenet.nackrate.kind == 2");
    assert!(acks > 0, "ACKs");
    // 5% loss over two hops: some ACK lists a missing range.
    assert!(count(&f, "joulenet.nackrate.ranges > 0") > 0, "NACK ranges");
}

fn check_sim_tcp() {
    let f = sim_capture("sack", &scenario("sack", "", 2));
    assert_clean(&f);
    let all = fields(&f, None, &["frame.encap_type", "frame.protocols"]);
    for r in &all {
        // WTAP_ENCAP_RAW_IP is 7: TCP captures stay plain raw IPv4.
        assert_eq!(r[0], "7");
        assert!(
            r[1].starts_with("raw:ip:tcp") && !r[1].contains("joulenet"),
            "Wireshark's own TCP, no joulenet layer: {}",
            r[1]
        );
    }
    let syn = fields(&f, None, &["tcp.flags.syn", "tcp.flags.ack"]);
    assert_eq!(syn[0], ["1", "0"]);
}

#[test]
fn simulator_captures_decode() {
    if !have_tshark() {
        return;
    }
    check_sim_wwp();
    check_sim_e2tcp(true);
    check_sim_e2tcp(false);
    check_sim_rcp();
    check_sim_jtp(false);
    check_sim_jtp(true);
    check_sim_hop();
    check_sim_nackrate();
    check_sim_tcp();
}

// ---------------------------------------------------------------------------
// Runtime captures
// ---------------------------------------------------------------------------

/// One datagram seen by the proxy: when, which way, the bytes.
struct Datagram {
    at: Duration,
    to_server: bool,
    bytes: Vec<u8>,
}

/// A UDP proxy between one client and the server at `server`, recording
/// every datagram; returns its address, the stop flag and the records.
#[allow(clippy::type_complexity)]
fn proxy(
    server: SocketAddr,
) -> (
    SocketAddr,
    Arc<AtomicBool>,
    Arc<Mutex<Vec<Datagram>>>,
    std::thread::JoinHandle<()>,
) {
    let front = UdpSocket::bind("127.0.0.1:0").unwrap();
    let back = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = front.local_addr().unwrap();
    front
        .set_read_timeout(Some(Duration::from_millis(2)))
        .unwrap();
    back.set_read_timeout(Some(Duration::from_millis(2)))
        .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let log = Arc::new(Mutex::new(Vec::new()));
    let (stop2, log2) = (stop.clone(), log.clone());
    let handle = std::thread::spawn(move || {
        let began = Instant::now();
        let mut client: Option<SocketAddr> = None;
        let mut buf = vec![0u8; 65_536];
        while !stop2.load(Ordering::Relaxed) {
            if let Ok((n, from)) = front.recv_from(&mut buf) {
                client = Some(from);
                log2.lock().unwrap().push(Datagram {
                    at: began.elapsed(),
                    to_server: true,
                    bytes: buf[..n].to_vec(),
                });
                let _ = back.send_to(&buf[..n], server);
            }
            if let Ok((n, _)) = back.recv_from(&mut buf) {
                log2.lock().unwrap().push(Datagram {
                    at: began.elapsed(),
                    to_server: false,
                    bytes: buf[..n].to_vec(),
                });
                if let Some(c) = client {
                    let _ = front.send_to(&buf[..n], c);
                }
            }
        }
    });
    (addr, stop, log, handle)
}

/// RFC 1071 over an even number of bytes.
fn internet_checksum(h: &[u8]) -> u16 {
    let mut sum: u32 = h
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], c[1]])))
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// A pcap file of `linktype` holding `records` (timestamp, bytes), each
/// captured whole.
fn write_records(path: &Path, linktype: u32, records: &[(Duration, Vec<u8>)]) {
    let mut out = Vec::new();
    out.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
    out.extend_from_slice(&4u16.to_le_bytes());
    out.extend_from_slice(&[0; 8]);
    out.extend_from_slice(&65_535u32.to_le_bytes());
    out.extend_from_slice(&linktype.to_le_bytes());
    for (ts, bytes) in records {
        out.extend_from_slice(&(ts.as_secs() as u32).to_le_bytes());
        out.extend_from_slice(&ts.subsec_micros().to_le_bytes());
        out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        out.extend_from_slice(bytes);
    }
    std::fs::write(path, out).unwrap();
}

/// A raw-IPv4 pcap of the datagrams, client 127.0.0.1:40000, server
/// 127.0.0.2:`server_port` (UDP checksum 0: none, as IPv4 allows).
fn write_pcap(path: &Path, datagrams: &[Datagram], server_port: u16) {
    let base = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    let (client, server) = ([127, 0, 0, 1], [127, 0, 0, 2]);
    let mut records = Vec::new();
    for d in datagrams {
        let (src, dst, sport, dport) = if d.to_server {
            (client, server, 40_000u16, server_port)
        } else {
            (server, client, server_port, 40_000)
        };
        let total = 20 + 8 + d.bytes.len();
        let mut ip = vec![0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 17, 0, 0];
        ip[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        ip.extend_from_slice(&src);
        ip.extend_from_slice(&dst);
        let c = internet_checksum(&ip);
        ip[10..12].copy_from_slice(&c.to_be_bytes());
        ip.extend_from_slice(&sport.to_be_bytes());
        ip.extend_from_slice(&dport.to_be_bytes());
        ip.extend_from_slice(&((8 + d.bytes.len()) as u16).to_be_bytes());
        ip.extend_from_slice(&[0, 0]);
        ip.extend_from_slice(&d.bytes);
        records.push((base + d.at, ip));
    }
    write_records(path, 101, &records); // LINKTYPE_RAW
}

/// A one-off `recv` (with `args`); its UDP address.
fn recv(out: &Path, args: &[&str]) -> (Child, SocketAddr) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_joulenet"))
        .args([
            "recv",
            "-1",
            "--bind",
            "127.0.0.1:0",
            "--idle-timeout",
            "5s",
        ])
        .arg("--out")
        .arg(out)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let addr = first
        .split_whitespace()
        .nth(3)
        .unwrap_or_else(|| panic!("recv's first line: {first}"))
        .parse()
        .unwrap();
    std::thread::spawn(move || for _ in lines {});
    (child, addr)
}

/// A file transfer with `proto` through the recording proxy: the datagrams.
fn transfer(name: &str, proto: &str, send_args: &[&str], recv_args: &[&str]) -> Vec<Datagram> {
    let d = scratch(&format!("rt-{name}"));
    let file = d.join("f.bin");
    std::fs::write(
        &file,
        (0..30_000u32).map(|i| (i * 7) as u8).collect::<Vec<_>>(),
    )
    .unwrap();
    let (mut r, server) = recv(&d.join("in"), recv_args);
    let (addr, stop, log, handle) = proxy(server);
    let out = Command::new(env!("CARGO_BIN_EXE_joulenet"))
        .arg("send")
        .arg(&file)
        .arg(addr.to_string())
        .args(["--proto", proto, "--idle-timeout", "10s", "-i", "0"])
        .args(send_args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{name}: send failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(r.wait().unwrap().success(), "{name}: recv failed");
    // Let the last verdicts through.
    std::thread::sleep(Duration::from_millis(50));
    stop.store(true, Ordering::Relaxed);
    handle.join().unwrap();
    let mut log = log.lock().unwrap();
    let mut d = std::mem::take(&mut *log);
    // The link layer's marks and reports (framing version 6, a host's
    // loss measurement) travel beside the connection's datagrams; the
    // golden test decodes them, the per-format checks look at the rest.
    d.retain(|d| !d.bytes.starts_with(b"JN\x06"));
    d
}

fn runtime_capture(name: &str, datagrams: &[Datagram], port: u16) -> PathBuf {
    let path = scratch(&format!("pcap-{name}")).join(format!("{name}.pcap"));
    write_pcap(&path, datagrams, port);
    path
}

/// A plain (version 2) transfer: framing on every frame, the agent's
/// protocol layer inside every `Data`.
fn check_runtime_plain(proto: &str, code: u8, inner: &str, data: &str, seq_field: &str) {
    let dgrams = transfer(proto, proto, &[], &[]);
    let f = runtime_capture(proto, &dgrams, 5201);
    assert_clean(&f);
    let all = fields(
        &f,
        None,
        &[
            "joulenet.version",
            "joulenet.kind",
            "joulenet.protocol",
            "joulenet.conn_id",
        ],
    );
    assert_eq!(all.len(), dgrams.len());
    let conn = all[0][3].clone();
    for (i, r) in all.iter().enumerate() {
        assert_eq!(r[0], "2", "{proto} #{i}: version");
        assert_eq!(r[2], code.to_string(), "{proto} #{i}: protocol code");
        assert_eq!(r[3], conn, "{proto} #{i}: one connection");
        assert_eq!(
            u64::from_str_radix(r[3].trim_start_matches("0x"), 16).map(|c| c != 0),
            Ok(true)
        );
    }
    // The file transfer opens with a Query (kind 6) and ends with a verdict.
    assert_eq!(all[0][1], "6", "{proto}: the first datagram is the Query");
    let verdicts = fields(
        &f,
        Some("joulenet.close.verdict"),
        &["joulenet.close.verdict"],
    );
    assert!(
        verdicts.iter().any(|r| r[0] == "1"),
        "{proto}: a `verified` verdict"
    );
    let names = fields(&f, Some("joulenet.query.name"), &["joulenet.query.name"]);
    assert_eq!(names[0][0], "f.bin");
    // Every Hello and Data with an agent packet shows the inner protocol.
    let carrying =
        "((joulenet.kind == 2 && udp.length > 24) || (joulenet.kind == 1 && udp.length > 40))";
    let n = count(&f, carrying);
    assert!(n > 0);
    assert_eq!(
        count(&f, &format!("{carrying} && {inner}")),
        n,
        "{proto}: {inner} inside every Hello and Data"
    );
    // The sender's data in sequence (first transmissions in order).
    let seqs = fields(
        &f,
        Some(&format!("udp.dstport == 5201 && {data}")),
        &[seq_field],
    );
    let seqs: Vec<u64> = seqs
        .iter()
        .filter_map(|r| r[0].split(',').next().map(num))
        .collect();
    assert!(!seqs.is_empty(), "{proto}: {seq_field}");
    assert!(
        first_occurrences_increase(&seqs),
        "{proto}: {seq_field}: {seqs:?}"
    );
}

#[test]
fn runtime_datagrams_decode() {
    if !have_tshark() {
        return;
    }
    check_runtime_plain("sack", 4, "tcp", "tcp.len > 0", "tcp.seq");
    let wwp_data = "joulenet.wwp.type == 3";
    check_runtime_plain("wwp", 17, "joulenet.wwp", wwp_data, "joulenet.wwp.seq");
    let e2tcp_data = "joulenet.e2tcp.payload";
    check_runtime_plain(
        "e2tcp",
        18,
        "joulenet.e2tcp",
        e2tcp_data,
        "joulenet.e2tcp.seq",
    );
    check_runtime_plain(
        "rcp",
        19,
        "joulenet.rcp",
        "joulenet.rcp.payload",
        "joulenet.rcp.seq",
    );
    // A 30 kB file is one Hop block: its frames' packet numbers increase.
    check_runtime_plain(
        "hop",
        22,
        "joulenet.hop",
        "joulenet.hop.data",
        "joulenet.hop.packet_num",
    );
    check_runtime_plain(
        "jtp",
        23,
        "joulenet.jtp",
        "joulenet.jtp.payload",
        "joulenet.jtp.seq",
    );
    check_runtime_plain(
        "nackrate",
        32,
        "joulenet.nackrate",
        "joulenet.nackrate.data",
        "joulenet.nackrate.offset",
    );
}

#[test]
fn runtime_routed_and_sealed_datagrams_decode() {
    if !have_tshark() {
        return;
    }
    // Version 3: both ends with node ids, no relay between them.
    let dgrams = transfer(
        "routed",
        "newreno",
        &["--node", "7", "--to-node", "9"],
        &["--node", "9"],
    );
    let f = runtime_capture("routed", &dgrams, 5201);
    assert_clean(&f);
    let all = fields(
        &f,
        None,
        &[
            "joulenet.version",
            "joulenet.route.src_node",
            "joulenet.route.dst_node",
            "joulenet.route.hop_limit",
            "udp.dstport",
        ],
    );
    assert_eq!(all.len(), dgrams.len());
    for r in &all {
        assert_eq!(r[0], "3");
        assert_eq!(r[3], "64", "no relay crossed");
        let (from, to) = if r[4] == "5201" {
            ("7", "9")
        } else {
            ("9", "7")
        };
        assert_eq!((r[1].as_str(), r[2].as_str()), (from, to));
    }
    assert!(
        count(&f, "joulenet.version == 3 && tcp") > 0,
        "TCP inside v3"
    );

    // Version 4: sealed; on another port than 5201, found by the heuristic.
    let d = scratch("key");
    let key = d.join("k");
    std::fs::write(&key, [5u8; 32]).unwrap();
    let key = key.to_str().unwrap();
    let dgrams = transfer(
        "sealed",
        "cubic",
        &["--psk-file", key],
        &["--psk-file", key],
    );
    let f = runtime_capture("sealed", &dgrams, 40_001);
    assert_clean(&f);
    let all = fields(
        &f,
        None,
        &[
            "joulenet.version",
            "joulenet.kind",
            "joulenet.sealed.pn",
            "joulenet.sealed.tag",
            "frame.protocols",
            "udp.dstport",
        ],
    );
    assert_eq!(all.len(), dgrams.len());
    for r in &all {
        assert_eq!(r[0], "4");
        assert_eq!(r[3].len(), 32, "a 16-byte tag");
        assert!(!r[4].contains("tcp"), "nothing decoded inside: {}", r[4]);
    }
    // The client's connection packets count up (stateful sender from 0).
    let client_pns: Vec<u64> = all
        .iter()
        .filter(|r| r[5] == "40001" && r[1] == "2")
        .map(|r| num(&r[2]))
        .collect();
    assert!(client_pns.len() > 5);
    assert!(client_pns.windows(2).all(|w| w[0] < w[1]), "{client_pns:?}");
    assert!(count(&f, "joulenet.sealed.ciphertext") > 0);
    assert!(
        count(&f, "joulenet.kind == 1 && joulenet.sealed.nonce") > 0,
        "Hello nonce"
    );

    // Version 5: sealed and routed; the route header stays readable.
    let dgrams = transfer(
        "sealed-routed",
        "sack",
        &["--psk-file", key, "--node", "3", "--to-node", "4"],
        &["--psk-file", key, "--node", "4"],
    );
    let f = runtime_capture("sealed-routed", &dgrams, 5201);
    assert_clean(&f);
    let all = fields(
        &f,
        None,
        &[
            "joulenet.version",
            "joulenet.route.src_node",
            "joulenet.route.dst_node",
            "joulenet.sealed.pn",
            "joulenet.sealed.tag",
            "udp.dstport",
        ],
    );
    assert_eq!(all.len(), dgrams.len());
    for r in &all {
        assert_eq!(r[0], "5");
        let (from, to) = if r[5] == "5201" {
            ("3", "4")
        } else {
            ("4", "3")
        };
        assert_eq!((r[1].as_str(), r[2].as_str()), (from, to));
        assert!(!r[3].is_empty() && r[4].len() == 32);
    }
}

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn dgram(to_server: bool, bytes: Vec<u8>) -> Datagram {
    Datagram {
        at: Duration::ZERO,
        to_server,
        bytes,
    }
}

#[test]
fn golden_and_hostile_datagrams() {
    if !have_tshark() {
        return;
    }
    // docs/wire.md's routed Retry (protocol 21, token 0x77 × 16) and
    // sealed Data (seal.rs's golden test), and UDP (code 16) inside v2.
    let mut retry =
        hex("4a4e 0305 1500 0000 0102 0304 0506 0708 0102 0304 1451 0000 0005 9c40 4000 0000");
    retry.extend_from_slice(&[0x77; 16]);
    let mut sealed = hex("4a4e 0402 1000 0000 0102 0304 0506 0708 0000 0000 0000 0005");
    sealed.extend(hex("e0e442b193"));
    sealed.extend(hex("ea45c84e05239958dd97bf946b135f30"));
    let mut udp = hex("4a4e 0202 1000 0000 0102 0304 0506 0708");
    udp.extend(hex("9c40 1451 000d 0000 6865 6c6c 6f"));
    // docs/wire.md's link report (mark 7, sent 1000, heard 951), version 6.
    let report =
        hex("4a4e 0602 0000 0000 0000 0000 0000 0007 0000 0000 0000 03e8 0000 0000 0000 03b7");
    let good = vec![
        dgram(false, retry),
        dgram(true, sealed),
        dgram(true, udp),
        dgram(true, report),
    ];
    let f = runtime_capture("golden", &good, 5201);
    assert_clean(&f);
    let rows = fields(
        &f,
        None,
        &[
            "joulenet.version",
            "joulenet.kind",
            "joulenet.protocol",
            "joulenet.conn_id",
            "joulenet.route.src_node",
            "joulenet.route.src_port",
            "joulenet.route.dst_node",
            "joulenet.route.dst_port",
            "joulenet.route.hop_limit",
            "joulenet.token",
            "joulenet.sealed.pn",
            "joulenet.sealed.ciphertext",
            "joulenet.sealed.tag",
            "joulenet.udp.src_port",
            "joulenet.udp.dst_port",
            "joulenet.udp.payload",
        ],
    );
    let e = |r: &[String]| -> Vec<String> { r.to_vec() };
    assert_eq!(
        e(&rows[0][..10]),
        [
            "3",
            "5",
            "21",
            "0x0102030405060708",
            "16909060",
            "5201",
            "5",
            "40000",
            "64",
            &"77".repeat(16)
        ]
    );
    assert_eq!(e(&rows[1][..4]), ["4", "2", "16", "0x0102030405060708"]);
    assert_eq!(
        e(&rows[1][10..13]),
        ["5", "e0e442b193", "ea45c84e05239958dd97bf946b135f30"]
    );
    assert_eq!(e(&rows[2][13..16]), ["40000", "5201", "68656c6c6f"]);
    let link = fields(
        &f,
        Some("joulenet.link.kind"),
        &[
            "joulenet.version",
            "joulenet.link.kind",
            "joulenet.link.mark",
            "joulenet.link.sent",
            "joulenet.link.heard",
        ],
    );
    assert_eq!(e(&link[0]), ["6", "2", "7", "1000", "951"]);

    // Hostile datagrams: each is marked malformed, none throws.
    let mut hello_short = hex("4a4e 0201 0400 0000 0102 0304 0506 0708");
    hello_short.extend_from_slice(&[0; 10]); // 10 of the token's 16 bytes
    let close_short = hex("4a4e 0203 0400 0000 0102 0304 0506 0708 01 0000");
    let mut wwp_short = hex("4a4e 0202 1100 0000 0102 0304 0506 0708");
    wwp_short.extend(hex("30 00 00"));
    // E2TCP bitmap announcing addresses, seq, ack and window in 4 bytes.
    let mut e2tcp_short = hex("4a4e 0202 1200 0000 0102 0304 0506 0708");
    e2tcp_short.extend(hex("3c01 0000"));
    // RCP with data offset 15.
    let mut rcp_bad = hex("4a4e 0202 1300 0000 0102 0304 0506 0708");
    rcp_bad.extend_from_slice(&[0; 12]);
    rcp_bad.extend(hex("f010 0000 0000 0000"));
    let routed_short = hex("4a4e 0302 0400 0000 0102 0304 0506 0708 0000 0005");
    let sealed_short = hex("4a4e 0402 1000 0000 0102 0304 0506 0708 0000 0000");
    let zero_conn = hex("4a4e 0203 0400 0000 0000 0000 0000 0000");
    let runt = hex("4a4e 0202 04");
    // A link report cut after its mark number.
    let link_short = hex("4a4e 0602 0000 0000 0000 0000 0000 0007");
    let hostile = [
        link_short,
        hello_short,
        close_short,
        wwp_short,
        e2tcp_short,
        rcp_bad,
        routed_short,
        sealed_short,
        zero_conn,
        runt,
    ];
    let n = hostile.len();
    let mut datagrams: Vec<Datagram> = hostile.into_iter().map(|b| dgram(true, b)).collect();
    // An empty datagram: Wireshark's UDP hands nothing on; no error either.
    datagrams.push(dgram(true, Vec::new()));
    let f = runtime_capture("hostile", &datagrams, 5201);
    assert_eq!(
        count(&f, "joulenet.malformed"),
        n,
        "every one marked malformed"
    );
    assert_eq!(count(&f, "_ws.lua.error"), 0, "no Lua error");
}

/// Hostile simulator records (LINKTYPE_USER0): each is marked, none throws.
#[test]
fn hostile_simulator_records() {
    if !have_tshark() {
        return;
    }
    let pseudo = |format: u8, network: u8| {
        let mut h = hex("4a53 01");
        h.extend([format, network, 0, 0, 0]);
        h.extend(hex("0000 0000 1388 0000 0001 1388"));
        h
    };
    // A pseudo-header cut short.
    let short = hex("4a53 0103 0400");
    // WWP: IPv4 header claiming 23 bytes, 3 bytes of WWP.
    let mut wwp = pseudo(3, 4);
    wwp.extend(hex(
        "4500 0017 0000 4000 40fd 0000 0a00 0001 0a00 0002 3000 00",
    ));
    // JTP ACK announcing 65535 SNACKs, no lists.
    let mut jtp = pseudo(6, 0);
    jtp.extend(hex(
        "1200 0001 0000 0000 0000 0000 0000 0000 0000 0000 0000 0000 ffff 0000",
    ));
    // Hop BACK of 10 frames with a padding bit set.
    let mut hop = pseudo(7, 0);
    hop.extend(hex("1232 000a 0102 0304 0000 0007 c060"));
    // E2TCP with n = 3.
    let mut e2tcp = pseudo(4, 0);
    e2tcp.extend(hex("1301 0000 0000 0000"));
    // RCP with PUL... and data offset 6.
    let mut rcp = pseudo(5, 0);
    rcp.extend(hex("1388 1388 0000 0001 0000 0002 6060 0000 0000 0000"));
    // Unknown format and pseudo-header version.
    let mut unknown = pseudo(9, 0);
    unknown.extend(hex("00"));
    let mut version = pseudo(3, 0);
    version[2] = 2;
    let hostile = [short, wwp, jtp, hop, e2tcp, rcp, unknown, version];
    let n = hostile.len();
    let records: Vec<(Duration, Vec<u8>)> =
        hostile.into_iter().map(|b| (Duration::ZERO, b)).collect();
    let path = scratch("sim-hostile").join("hostile.pcap");
    write_records(&path, 147, &records);
    assert_eq!(
        count(&path, "joulenet.malformed"),
        n,
        "every one marked malformed"
    );
    assert_eq!(count(&path, "_ws.lua.error"), 0, "no Lua error");

    // A whole E2TCP SYN with a wrong checksum: flagged, fields still shown.
    let mut bad = pseudo(4, 0);
    bad.extend(hex(
        "a459 0000 0000 0000 1388 0000 0001 1388 0000 0000 ffff",
    ));
    let path = scratch("sim-checksum").join("checksum.pcap");
    write_records(&path, 147, &[(Duration::ZERO, bad)]);
    let rows = fields(
        &path,
        Some("joulenet.bad_checksum"),
        &[
            "joulenet.e2tcp.checksum_ok",
            "joulenet.e2tcp.src_port",
            "joulenet.e2tcp.seq",
        ],
    );
    assert_eq!(rows, [["0", "5000", "0"]]);
}

/// Golden bytes (crates/wire's tests and docs/wire.md) under LINKTYPE_USER0
/// with no network header: every field the dissector shows, as written.
#[test]
fn golden_simulator_records() {
    if !have_tshark() {
        return;
    }
    let record = |format: u8, body: &str| {
        let mut r = hex("4a53 01");
        r.extend([format, 0, 0, 0, 0]);
        r.extend(hex("0000 0000 1388 0000 0001 1388"));
        r.extend(hex(body));
        (Duration::ZERO, r)
    };
    let records = [
        // jtp.rs compact_data_has_exact_bytes: FIN, flow 0x0102, "hi".
        record(
            6,
            "1101 0102 0a0b 0c0d 0003 d090 0001 0000 0000 0203 1999 0301 6869",
        ),
        // jtp.rs compact_ack_has_exact_bytes: URGENT, flow 7.
        record(
            6,
            "1202 0007 0000 0064 0000 fa00 0000 1388 0098 9680 0000 006a 0002 0001 \
             0000 0065 0000 0069 0000 0067",
        ),
        // docs/wire.md's Hop golden bytes: DATA, BSYN, virtual BSYN, BACK.
        record(7, "1032 0203 0102 0304 0000 0007 6869"),
        record(7, "1132 02ce 0102 0304 0000 0007 0010 0000"),
        record(7, "1303 0002 0102 0304 0000 0007 0000 07d0"),
        record(7, "1232 000a 0102 0304 0000 0007 c040"),
        // WWP DATA: level 3, id 2 of 8, segment 0x010203, one byte.
        record(3, "3302 0102 0308 ff"),
        // WWP NS_ACK: next 9, level 2, probe cycle, missing 4 and 6..=7.
        record(3, "4200 0000 0901 0000 0401 0000 0602"),
        // RCP pull REQ (REQ, ACK, PUL), DOff 7, 100 bytes from 1000, one block.
        record(
            5,
            "1388 1389 0000 03e8 0000 0064 7070 0064 0010 0000 0000 03e8 0000 044c",
        ),
    ];
    // E2TCP ACK (A, W, n = 2), connection 7: ack 1000, window 0x4000,
    // SACK [1100, 1200) and [1300, 1400); the checksum filled in.
    let mut e2tcp = hex("1a07 0000 0000 03e8 4000 0064 00c8 012c 0190");
    let c = internet_checksum(&e2tcp);
    e2tcp[2..4].copy_from_slice(&c.to_be_bytes());
    let mut records = records.to_vec();
    records.push(record(
        4,
        &e2tcp.iter().map(|b| format!("{b:02x}")).collect::<String>(),
    ));
    let path = scratch("sim-golden").join("golden.pcap");
    write_records(&path, 147, &records);
    assert_clean(&path);
    let get = |frame: usize, names: &[&str]| -> Vec<String> {
        fields(&path, Some(&format!("frame.number == {frame}")), names)
            .pop()
            .unwrap()
    };
    assert_eq!(
        get(
            1,
            &[
                "joulenet.jtp.version",
                "joulenet.jtp.kind",
                "joulenet.jtp.flags.fin",
                "joulenet.jtp.flags.retx",
                "joulenet.jtp.flow_id",
                "joulenet.jtp.seq",
                "joulenet.jtp.available_rate",
                "joulenet.jtp.energy_budget",
                "joulenet.jtp.energy_used",
                "joulenet.jtp.loss_tolerance",
                "joulenet.jtp.hops",
                "joulenet.jtp.priority",
                "joulenet.jtp.layout",
                "joulenet.jtp.payload",
            ]
        ),
        [
            "1",
            "1",
            "1",
            "0",
            "258",
            "168496141",
            "250000",
            "65536",
            "515",
            "6553",
            "3",
            "1",
            "compact",
            "6869"
        ]
    );
    assert_eq!(
        get(
            2,
            &[
                "joulenet.jtp.kind",
                "joulenet.jtp.flags.urgent",
                "joulenet.jtp.cum_ack",
                "joulenet.jtp.rate",
                "joulenet.jtp.ack_energy_budget",
                "joulenet.jtp.feedback_period",
                "joulenet.jtp.highest",
                "joulenet.jtp.snack",
                "joulenet.jtp.recovered",
            ]
        ),
        ["2", "1", "100", "64000", "5000", "10000000", "106", "101,105", "103"]
    );
    let hop = [
        "joulenet.hop.type",
        "joulenet.hop.ttl",
        "joulenet.hop.packet_num",
        "joulenet.hop.frames",
        "joulenet.hop.flow_id",
        "joulenet.hop.block_num",
        "joulenet.hop.block_len",
        "joulenet.hop.held",
    ];
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(
        get(3, &hop),
        s(&["0", "50", "515", "", "16909060", "7", "", ""])
    );
    assert_eq!(
        get(4, &hop),
        s(&["1", "50", "", "718", "16909060", "7", "1048576", ""])
    );
    assert_eq!(
        get(5, &hop),
        s(&["3", "3", "", "2", "16909060", "7", "2000", ""])
    );
    assert_eq!(
        get(6, &hop),
        s(&["2", "50", "", "10", "16909060", "7", "", "3"])
    );
    let wwp = [
        "joulenet.wwp.type",
        "joulenet.wwp.level",
        "joulenet.wwp.id",
        "joulenet.wwp.seq",
        "joulenet.wwp.aux",
        "joulenet.wwp.ns_ack.probe",
        "joulenet.wwp.range.start",
        "joulenet.wwp.range.count",
    ];
    assert_eq!(get(7, &wwp), s(&["3", "3", "2", "66051", "8", "", "", ""]));
    assert_eq!(
        get(8, &wwp),
        s(&["4", "2", "0", "9", "1", "1", "4,6", "1,2"])
    );
    assert_eq!(
        get(
            9,
            &[
                "joulenet.rcp.src_port",
                "joulenet.rcp.dst_port",
                "joulenet.rcp.seq",
                "joulenet.rcp.ack",
                "joulenet.rcp.doff",
                "joulenet.rcp.flags.req",
                "joulenet.rcp.flags.ack",
                "joulenet.rcp.flags.pul",
                "joulenet.rcp.flags.syn",
                "joulenet.rcp.length",
                "joulenet.rcp.window",
                "joulenet.rcp.block.start",
                "joulenet.rcp.block.end",
            ]
        ),
        s(&["5000", "5001", "1000", "100", "7", "1", "1", "1", "0", "100", "16", "1000", "1100"])
    );
    assert_eq!(
        get(
            10,
            &[
                "joulenet.e2tcp.has_ack",
                "joulenet.e2tcp.has_window",
                "joulenet.e2tcp.sack_count",
                "joulenet.e2tcp.conn_id",
                "joulenet.e2tcp.checksum_ok",
                "joulenet.e2tcp.ack",
                "joulenet.e2tcp.window",
                "joulenet.e2tcp.sack.left",
                "joulenet.e2tcp.sack.right",
                "joulenet.e2tcp.layout",
            ]
        ),
        s(&[
            "1",
            "1",
            "2",
            "7",
            "1",
            "1000",
            "16384",
            "1100,1300",
            "1200,1400",
            "compact (no network header)"
        ])
    );
}

/// Random bytes behind valid-looking headers (the simulator's
/// pseudo-header with every format; the runtime header with every version,
/// kind and protocol code, some cut short): the dissector never throws.
#[test]
fn random_bytes_never_make_a_lua_error() {
    if !have_tshark() {
        return;
    }
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    let mut sim = Vec::new();
    for _ in 0..1500 {
        let format = next(9) as u8;
        let network = [0u8, 4, 4, 7][next(4) as usize];
        let mut r = hex("4a53 01");
        r.extend([format, network, 0, 0, 0]);
        r.extend([0; 12]);
        if network == 4 {
            let body = next(60) as usize;
            let mut ip = hex("4500 0000 0000 4000 40fd 0000 0a00 0001 0a00 0002");
            ip[2..4].copy_from_slice(&((20 + body) as u16).to_be_bytes());
            ip.truncate(if next(5) == 0 { next(20) as usize } else { 20 });
            r.extend(ip);
        }
        // A plausible first byte (version / type) most of the time.
        let first = match format {
            3 => (1 + next(11) as u8) << 4,
            5 => 0x50 | (next(4) as u8 * 0x20),
            6 => 0x10 | (1 + next(2) as u8),
            7 => 0x10 | next(7) as u8,
            _ => next(256) as u8,
        };
        r.push(first);
        for _ in 0..next(80) {
            r.push(next(256) as u8);
        }
        sim.push((Duration::ZERO, r));
    }
    let path = scratch("fuzz-sim").join("fuzz.pcap");
    write_records(&path, 147, &sim);
    assert_eq!(
        count(&path, "_ws.lua.error"),
        0,
        "Lua errors on simulator records"
    );

    let mut rt = Vec::new();
    for _ in 0..1500 {
        let mut d = hex("4a4e");
        d.push(1 + next(6) as u8);
        d.push(next(9) as u8);
        d.push([4u8, 16, 17, 18, 19, 20, 21, 99][next(8) as usize]);
        d.extend([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
        for _ in 0..next(120) {
            d.push(next(256) as u8);
        }
        if next(10) == 0 {
            d.truncate(next(d.len() as u64) as usize);
        }
        rt.push(dgram(true, d));
    }
    let f = runtime_capture("fuzz", &rt, 5201);
    assert_eq!(
        count(&f, "_ws.lua.error"),
        0,
        "Lua errors on runtime datagrams"
    );
}
