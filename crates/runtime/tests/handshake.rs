//! The handshake checks of the agents the runtime serves (issue 15): a
//! receiver in SYN-RECEIVED is established only by the ACK of its own
//! SYN-ACK (ack = ISS + 1, RFC 9293 §3.10.7.4). Before the fix TCP refused
//! only ack = ISS and RCP's receiver took any packet without the ACK flag,
//! so one guessed or replayed segment opened a connection.
//!
//! A stranger here is a raw socket that does what an attacker who can
//! receive at its address can: it validates its address (Hello, Retry,
//! Hello with the token), gets the SYN-ACK and answers it wrongly.

mod common;

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration as StdDuration, Instant};

use common::{quiet, Relay};
use joulenet_proto::Duration;
use joulenet_runtime::app::Limit;
use joulenet_runtime::frame::{self, Header, Kind, Protocol, TOKEN_LEN};
use joulenet_runtime::{
    run_client, run_server, server, ClientApp, ClientOptions, ServerMode, ServerOptions,
};
use joulenet_wire::rcp::{self, RcpFlags};
use joulenet_wire::tcp::{TcpPacket, TcpRepr};

/// A real client's first datagram (a `Hello` with its SYN), captured and
/// never delivered.
fn captured_syn(server: SocketAddr, protocol: Protocol) -> Vec<u8> {
    let first = Arc::new(Mutex::new(None::<Vec<u8>>));
    let keep = Arc::clone(&first);
    let relay = Relay::rewrite(
        server,
        Box::new(move |d| {
            keep.lock().unwrap().get_or_insert_with(|| d.to_vec());
            Vec::new()
        }),
        Box::new(|_| Vec::new()),
    );
    let mut o = ClientOptions::new(
        &relay.addr.to_string(),
        protocol,
        ClientApp::Generate {
            limit: Limit::Bytes(1000),
            rate_bps: None,
        },
    );
    o.idle_timeout = Duration::from_millis(200);
    let _ = run_client(&o, quiet());
    relay.stop();
    let syn = first.lock().unwrap().clone();
    syn.expect("the client sent nothing")
}

/// The agent packets of the server's `Data` datagrams arriving within `for_`.
fn answers(sock: &UdpSocket, for_: StdDuration) -> Vec<Vec<u8>> {
    sock.set_read_timeout(Some(StdDuration::from_millis(20)))
        .unwrap();
    let until = Instant::now() + for_;
    let mut buf = [0u8; 2048];
    let mut got = Vec::new();
    while Instant::now() < until {
        if let Ok(n) = sock.recv(&mut buf) {
            if let Ok((h, p)) = frame::parse(&buf[..n]) {
                if h.kind == Kind::Data {
                    got.push(p.to_vec());
                }
            }
        }
    }
    got
}

/// Opens a connection from a raw socket with `syn` (a framed `Hello`),
/// validating the address; returns the socket, the header to frame with
/// and the server's first answer (its SYN-ACK).
fn open(server: SocketAddr, syn: &[u8]) -> (UdpSocket, Header, Vec<u8>) {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.connect(server).unwrap();
    sock.send(syn).unwrap();
    sock.set_read_timeout(Some(StdDuration::from_secs(2)))
        .unwrap();
    let mut buf = [0u8; 2048];
    let n = sock.recv(&mut buf).expect("no Retry");
    let (h, token) = frame::parse(&buf[..n]).unwrap();
    assert_eq!(h.kind, Kind::Retry);
    let mut again = syn.to_vec();
    again[frame::HEADER_LEN..frame::HEADER_LEN + TOKEN_LEN].copy_from_slice(token);
    sock.send(&again).unwrap();
    let first = answers(&sock, StdDuration::from_millis(300));
    assert_eq!(first.len(), 1, "expected one SYN-ACK: {first:?}");
    (
        sock,
        Header {
            kind: Kind::Data,
            ..h
        },
        first[0].clone(),
    )
}

fn server_for(protocol: Protocol) -> (SocketAddr, Arc<AtomicBool>, thread::JoinHandle<()>) {
    let mut opts = ServerOptions::new("127.0.0.1:0".parse().unwrap(), ServerMode::Discard);
    opts.protocol = Some(protocol);
    let stop = Arc::new(AtomicBool::new(false));
    opts.stop = Some(Arc::clone(&stop));
    let sock = server::bind(&opts).unwrap();
    let addr = sock.local_addr().unwrap();
    let t = thread::spawn(move || {
        run_server(&opts, sock, quiet()).unwrap();
    });
    (addr, stop, t)
}

#[test]
fn tcp_in_syn_received_is_not_established_by_a_wrong_ack() {
    let reno = Protocol::named("reno");
    let (addr, stop, t) = server_for(reno);
    let syn_dgram = captured_syn(addr, reno);
    let (sock, h, syn_ack) = open(addr, &syn_dgram);
    let syn_ack = TcpRepr::parse(&TcpPacket::new_checked(&syn_ack[..]).unwrap()).unwrap();
    assert!(syn_ack.flags.syn && syn_ack.ack.is_some());
    let (_, token_and_syn) = frame::parse(&syn_dgram).unwrap();
    let syn = &token_and_syn[TOKEN_LEN..];
    let syn = TcpRepr::parse(&TcpPacket::new_checked(syn).unwrap()).unwrap();
    // ISS + 2: beyond anything the server sent.
    let mut ack = vec![0u8; 20];
    {
        let mut p = TcpPacket::new_unchecked(&mut ack[..]);
        p.set_src_port(syn.src_port);
        p.set_dst_port(syn.dst_port);
        p.set_seq_number(syn.seq.wrapping_add(1));
        p.set_ack_number(syn_ack.seq.wrapping_add(2));
        p.set_header_len(20);
        p.set_flags(0x10); // ACK
        p.set_window_len(65535);
    }
    sock.send(&frame::emit(&h, &ack)).unwrap();
    // Not established: the SYN-ACK is sent again when its 1 s timer fires.
    let again = answers(&sock, StdDuration::from_millis(2500));
    stop.store(true, Ordering::Relaxed);
    t.join().unwrap();
    let syn_acks = again
        .iter()
        .filter_map(|p| TcpPacket::new_checked(&p[..]).ok())
        .filter_map(|p| TcpRepr::parse(&p).ok().map(|r| r.flags.syn))
        .filter(|&syn| syn)
        .count();
    assert!(syn_acks >= 1, "a wrong ACK completed the handshake");
}

#[test]
fn rcp_receiver_in_syn_received_is_not_established_by_a_packet_without_ack() {
    let (addr, stop, t) = server_for(Protocol::named("rcp"));
    let syn_dgram = captured_syn(addr, Protocol::named("rcp"));
    let (sock, h, syn_ack) = open(addr, &syn_dgram);
    let (syn_ack, _) = rcp::parse(&syn_ack).unwrap();
    assert!(syn_ack.flags.has(RcpFlags::SYN | RcpFlags::ACK));
    let (_, token_and_syn) = frame::parse(&syn_dgram).unwrap();
    let (syn, _) = rcp::parse(&token_and_syn[TOKEN_LEN..]).unwrap();
    // A data segment where the ACK should be.
    let mut data = syn;
    data.flags = RcpFlags(0);
    data.seq = syn.seq.wrapping_add(1);
    data.length = 0; // a length is a REQ's; data carries none
    let mut bytes = Vec::new();
    data.emit(b"junk", &mut bytes);
    sock.send(&frame::emit(&h, &bytes)).unwrap();
    // Established, the receiver would request data at once.
    let got = answers(&sock, StdDuration::from_millis(600));
    stop.store(true, Ordering::Relaxed);
    t.join().unwrap();
    let reqs = got
        .iter()
        .filter_map(|p| rcp::parse(p).ok())
        .filter(|(r, _)| r.flags.has(RcpFlags::REQ))
        .count();
    assert_eq!(reqs, 0, "a packet without ACK completed the handshake");
}
