//! Loopback helpers shared by the runtime's integration tests: a relay
//! between a client and a server that lets a test decide, datagram by
//! datagram, what passes (and what is changed or injected), and small
//! file and server helpers.
//!
//! Each test binary uses a different subset of these helpers.
#![allow(dead_code)]

use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

/// A running relay: where clients connect, how to stop it, and its thread
/// (which returns how many answers it dropped).
pub struct Relay {
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: thread::JoinHandle<u64>,
}

/// What a relay does with one datagram: the datagrams to pass on in its
/// place (none: drop it; a changed copy; or extra ones).
pub type Rewrite = Box<dyn FnMut(&[u8]) -> Vec<Vec<u8>> + Send>;

impl Relay {
    /// Forwards every client datagram to `server` after showing it to
    /// `seen_from_client`; forwards a server datagram only if
    /// `keep_answer` says so.
    pub fn start(
        server: SocketAddr,
        mut seen_from_client: impl FnMut(&[u8]) + Send + 'static,
        mut keep_answer: impl FnMut(&[u8]) -> bool + Send + 'static,
    ) -> Relay {
        Relay::rewrite(
            server,
            Box::new(move |d| {
                seen_from_client(d);
                vec![d.to_vec()]
            }),
            Box::new(move |d| {
                if keep_answer(d) {
                    vec![d.to_vec()]
                } else {
                    Vec::new()
                }
            }),
        )
    }

    /// Passes what `up` returns for each client datagram to the server and
    /// what `down` returns for each server datagram to the client (the
    /// last client address seen). Answers `down` drops are counted.
    pub fn rewrite(server: SocketAddr, mut up: Rewrite, mut down: Rewrite) -> Relay {
        let front = UdpSocket::bind("127.0.0.1:0").unwrap();
        let back = UdpSocket::bind("127.0.0.1:0").unwrap();
        back.connect(server).unwrap();
        for s in [&front, &back] {
            s.set_read_timeout(Some(Duration::from_millis(2))).unwrap();
        }
        let addr = front.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let st = Arc::clone(&stop);
        let thread = thread::spawn(move || {
            let mut buf = vec![0u8; 65536];
            let (mut client, mut dropped) = (None, 0u64);
            while !st.load(Ordering::Relaxed) {
                while let Ok((n, from)) = front.recv_from(&mut buf) {
                    client = Some(from);
                    for d in up(&buf[..n]) {
                        // Once the server has exited, sends bounce (ECONNREFUSED).
                        let _ = back.send(&d);
                    }
                }
                while let Ok(n) = back.recv(&mut buf) {
                    let out = down(&buf[..n]);
                    match client {
                        Some(c) if !out.is_empty() => {
                            for d in out {
                                let _ = front.send_to(&d, c);
                            }
                        }
                        _ => dropped += 1,
                    }
                }
            }
            dropped
        });
        Relay { addr, stop, thread }
    }

    /// Stops the relay; returns how many answers it dropped.
    pub fn stop(self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap()
    }
}

/// A fresh directory under the system's temporary directory.
pub fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("jn-rt-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Writes `len` pseudo-random bytes (from `seed`) to `dir/name`.
pub fn make_file(dir: &Path, name: &str, len: usize, seed: u32) -> PathBuf {
    let mut x = seed | 1;
    let data: Vec<u8> = (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect();
    let p = dir.join(name);
    std::fs::write(&p, data).unwrap();
    p
}

pub fn quiet() -> Box<dyn std::io::Write + Send> {
    Box::new(std::io::sink())
}

/// The names in a directory, sorted.
pub fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A writer whose bytes a test can read afterwards (for `-J` output).
#[derive(Clone, Default)]
pub struct Captured(pub Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}
