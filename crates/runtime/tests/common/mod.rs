//! A loopback relay between a client and a server that lets a test decide,
//! datagram by datagram, which of the server's answers reach the client.

use std::net::{SocketAddr, UdpSocket};
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

impl Relay {
    /// Forwards every client datagram to `server` after showing it to
    /// `seen_from_client`; forwards a server datagram only if
    /// `keep_answer` says so.
    pub fn start(
        server: SocketAddr,
        mut seen_from_client: impl FnMut(&[u8]) + Send + 'static,
        mut keep_answer: impl FnMut(&[u8]) -> bool + Send + 'static,
    ) -> Relay {
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
                    seen_from_client(&buf[..n]);
                    // Once the server has exited, sends bounce (ECONNREFUSED).
                    let _ = back.send(&buf[..n]);
                }
                while let Ok(n) = back.recv(&mut buf) {
                    match client {
                        Some(c) if keep_answer(&buf[..n]) => {
                            let _ = front.send_to(&buf[..n], c);
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
