//! `joulenet recv` stopped by SIGTERM in the middle of a transfer (issue
//! 15): it used to die at once and leave its partial file behind, and the
//! sender kept retransmitting to nobody. Now it ends the transfer, keeps
//! what arrived only as a prefix to resume from (never as a partial file),
//! tells the sender why and exits non-zero.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn sigterm_mid_transfer_leaves_no_partial_file_and_both_ends_fail() {
    let bin = env!("CARGO_BIN_EXE_joulenet");
    let dir = std::env::temp_dir().join(format!("jn-sigterm-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = dir.join("out");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("big.bin");
    std::fs::write(&file, vec![7u8; 4 << 20]).unwrap();

    let mut recv = Command::new(bin)
        .args(["recv", "--bind", "127.0.0.1:0", "--out"])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(recv.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    // "Server listening on 127.0.0.1:PORT (...)"
    let addr = first
        .split_whitespace()
        .nth(3)
        .unwrap_or_else(|| panic!("{first}"))
        .to_string();
    std::thread::spawn(move || for _ in lines {});

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
