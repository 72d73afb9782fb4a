//! `joulenet recv` stopped by SIGTERM in the middle of a transfer (issue
//! 15): it used to die at once and leave its partial file behind, and the
//! sender kept retransmitting to nobody. Now it ends the transfer, keeps
//! what arrived only as a prefix to resume from (never as a partial file),
//! tells the sender why and exits non-zero.
//!
//! And a client stopped by SIGINT (issue 18: the bench's `timeout -s INT`
//! killed a nackrate client that had outlived its window, and it printed
//! nothing): it reports what it measured, marked interrupted, and exits
//! non-zero, as iperf3 does.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Starts a receiving command (`recv` or `serve`) and returns it with the
/// address from its first line, "Server listening on 127.0.0.1:PORT (...)";
/// the rest of its output is drained so that it never blocks on a pipe.
fn listening(command: &mut Command) -> (std::process::Child, String) {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let addr = first
        .split_whitespace()
        .nth(3)
        .unwrap_or_else(|| panic!("{first}"))
        .to_string();
    std::thread::spawn(move || for _ in lines {});
    (child, addr)
}

#[test]
fn sigterm_mid_transfer_leaves_no_partial_file_and_both_ends_fail() {
    let bin = env!("CARGO_BIN_EXE_joulenet");
    let dir = std::env::temp_dir().join(format!("jn-sigterm-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = dir.join("out");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("big.bin");
    std::fs::write(&file, vec![7u8; 4 << 20]).unwrap();

    let (mut recv, addr) = listening(
        Command::new(bin)
            .args(["recv", "--bind", "127.0.0.1:0", "--out"])
            .arg(&out),
    );

    // 4 MB at 8 Mbit/s: about 4 s, so the signal falls in the middle.
    // (`emulate` does not print its port: pick a free one.)
    let relay_port = {
        let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        s.local_addr().unwrap().port()
    };
    let relay_addr = format!("127.0.0.1:{relay_port}");
    let mut relay = Command::new(bin)
        .args(["emulate", "--listen", &relay_addr, "--forward", &addr])
        .args(["--rate", "8Mbps", "--duration", "20s"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let mut send = Command::new(bin)
        .arg("send")
        .arg(&file)
        .arg(&relay_addr)
        .args(["--proto", "cubic", "-J"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();

    // Wait until the receiver writes, then stop it.
    let until = Instant::now() + Duration::from_secs(5);
    let partial = || {
        std::fs::read_dir(&out).ok().is_some_and(|d| {
            d.flatten()
                .any(|e| e.file_name().to_string_lossy().ends_with(".partial"))
        })
    };
    while !partial() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(partial(), "the transfer never started");
    std::thread::sleep(Duration::from_millis(500));
    Command::new("kill")
        .args(["-TERM", &recv.id().to_string()])
        .status()
        .unwrap();
    let recv_status = wait_for(&mut recv, Duration::from_secs(5));
    let send_status = wait_for(&mut send, Duration::from_secs(10));
    let mut json = String::new();
    std::io::Read::read_to_string(&mut send.stdout.take().unwrap(), &mut json).unwrap();
    let _ = relay.kill();
    let _ = relay.wait();

    let left: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    // No partial file; what arrived is kept (one `.resume` file) for the
    // next transfer of the same file to resume from.
    assert_eq!(left.len(), 1, "left behind: {left:?}");
    assert!(
        left[0].starts_with(".big.bin.") && left[0].ends_with(".resume"),
        "left behind: {left:?}"
    );
    assert_eq!(recv_status.and_then(|s| s.code()), Some(2), "recv");
    assert!(
        send_status.is_some_and(|s| !s.success()),
        "send: {send_status:?}"
    );
    assert!(json.contains("the receiver was stopped"), "{json}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sigint_mid_run_prints_the_client_report_marked_interrupted() {
    let bin = env!("CARGO_BIN_EXE_joulenet");
    let (mut serve, addr) =
        listening(Command::new(bin).args(["serve", "--bind", "127.0.0.1:0", "-1"]));
    // A minute at 20 Mbit/s: the signal comes long before the end.
    let mut client = Command::new(bin)
        .args([
            "client", &addr, "--proto", "nackrate", "-t", "60", "-b", "20Mbps",
        ])
        .args(["-i", "0.2", "--json-stream"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(client.stdout.take().unwrap()).lines();
    // Wait for an interval that sent something, then interrupt.
    let mut seen = Vec::new();
    for line in out.by_ref() {
        let line = line.unwrap();
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        seen.push(line);
        if v["event"] == "interval" && v["data"]["sum"]["transport_bytes"].as_u64() > Some(0) {
            break;
        }
    }
    Command::new("kill")
        .args(["-INT", &client.id().to_string()])
        .status()
        .unwrap();
    let status = wait_for(&mut client, Duration::from_secs(5));
    let rest: Vec<String> = out.map_while(Result::ok).collect();
    let _ = wait_for(&mut serve, Duration::from_secs(5));
    assert!(status.is_some_and(|s| !s.success()), "{status:?}");
    let end = rest
        .iter()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["event"] == "end")
        .unwrap_or_else(|| panic!("no report after SIGINT: {seen:?} {rest:?}"));
    let d = &end["data"];
    assert_eq!(d["interrupted"], true, "{d}");
    assert_eq!(d["completed"], false, "{d}");
    assert!(d["data_packets"].as_u64() > Some(0), "{d}");
    assert!(
        d["error"]
            .as_str()
            .is_some_and(|e| e.contains("interrupted")),
        "{d}"
    );
    // Nothing is claimed delivered that the receiver did not confirm.
    assert!(d["bytes_delivered"].is_null(), "{d}");
}

/// The exit status within `limit`, or `None` (the process is killed).
fn wait_for(child: &mut std::process::Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if let Ok(Some(s)) = child.try_wait() {
            return Some(s);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}
