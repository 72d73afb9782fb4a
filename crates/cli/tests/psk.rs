//! `--psk-file` from the command line (issue 15): a transfer with the same
//! key at both ends verifies; another key, or none at one end, makes
//! `send` exit non-zero within seconds with the reason; a key file too
//! short to be a key is refused before anything is sent.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("jn-cli-psk-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A one-off `recv` into `out` (with `key` if given); its address.
fn recv(out: &Path, key: Option<&Path>) -> (Child, String) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_joulenet"));
    c.args([
        "recv",
        "-1",
        "--bind",
        "127.0.0.1:0",
        "--idle-timeout",
        "5s",
        "--out",
    ])
    .arg(out);
    if let Some(k) = key {
        c.arg("--psk-file").arg(k);
    }
    let mut child = c
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let addr = first.split_whitespace().nth(3).unwrap().to_string();
    std::thread::spawn(move || for _ in lines {});
    (child, addr)
}

/// `joulenet send FILE ADDR` (with `key`): exit code, stderr, time taken.
fn send(file: &Path, addr: &str, key: Option<&Path>) -> (Option<i32>, String, Duration) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_joulenet"));
    c.arg("send")
        .arg(file)
        .arg(addr)
        .args(["--proto", "sack", "--idle-timeout", "20s"]);
    if let Some(k) = key {
        c.arg("--psk-file").arg(k);
    }
    let began = Instant::now();
    let out = c.output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        began.elapsed(),
    )
}

#[test]
fn same_key_verifies_and_another_key_or_none_fails_fast() {
    let d = dir();
    let (a, b, short) = (d.join("a.key"), d.join("b.key"), d.join("short.key"));
    std::fs::write(&a, [1u8; 32]).unwrap();
    std::fs::write(&b, [2u8; 32]).unwrap();
    std::fs::write(&short, b"secret\n").unwrap();
    let file = d.join("f.bin");
    std::fs::write(&file, vec![9u8; 200_000]).unwrap();

    let out = d.join("same");
    let (mut r, addr) = recv(&out, Some(&a));
    let (code, err, _) = send(&file, &addr, Some(&a));
    assert_eq!(code, Some(0), "{err}");
    assert!(r.wait().unwrap().success());
    assert_eq!(
        std::fs::read(out.join("f.bin")).unwrap(),
        vec![9u8; 200_000]
    );

    for (tag, at_recv, at_send, says) in [
        ("other", Some(&b), Some(&a), "authentication failed"),
        ("none-at-recv", None, Some(&a), "has none"),
        ("none-at-send", Some(&a), None, "authenticated mode"),
    ] {
        let out = d.join(tag);
        let (mut r, addr) = recv(&out, at_recv.map(|p| p.as_path()));
        let (code, err, took) = send(&file, &addr, at_send.map(|p| p.as_path()));
        let _ = r.kill();
        let _ = r.wait();
        assert!(code.is_some_and(|c| c != 0), "{tag}: exit {code:?}");
        assert!(
            err.contains(says) && err.contains("--psk-file"),
            "{tag}: {err}"
        );
        assert!(took < Duration::from_secs(8), "{tag}: took {took:?}");
        assert!(!out.join("f.bin").exists(), "{tag}");
    }

    let (code, err, _) = send(&file, "127.0.0.1:9", Some(&short));
    assert!(code.is_some_and(|c| c != 0), "short key: exit {code:?}");
    assert!(err.contains("head -c 32 /dev/urandom"), "{err}");
    let _ = std::fs::remove_dir_all(&d);
}
