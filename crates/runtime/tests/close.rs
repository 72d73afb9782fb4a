//! The end of a connection when the receiver's last answers are lost: the
//! server, done and then silent-but-for-retransmissions long enough, retires
//! and says `Close`; the client takes that as the end of a delivered
//! transfer instead of retransmitting its FIN until its idle timeout.

mod common;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use common::Relay;

use joulenet_runtime::app::Limit;
use joulenet_runtime::frame::{self, Kind, Protocol};
use joulenet_runtime::{run_client, run_server, server, ClientApp, ClientOptions};
use joulenet_runtime::{ServerMode, ServerOptions};
use joulenet_wire::tcp::{TcpPacket, TcpRepr};

/// Does this framed datagram carry a TCP segment with FIN set?
fn carries_fin(datagram: &[u8]) -> bool {
    let Ok((h, payload)) = frame::parse(datagram) else {
        return false;
    };
    if h.kind != Kind::Data {
        return false;
    }
    TcpPacket::new_checked(payload)
        .ok()
        .and_then(|p| TcpRepr::parse(&p).ok().map(|r| r.flags.fin))
        .unwrap_or(false)
}

/// A relay that forwards everything until the client's first FIN, then
/// drops every TCP segment from the server (its ACKs of that FIN), still
/// passing the runtime's own `Close`.
fn fin_answer_eater(server: SocketAddr) -> Relay {
    let fin_seen = Arc::new(AtomicBool::new(false));
    let seen = Arc::clone(&fin_seen);
    Relay::start(
        server,
        move |d| {
            if carries_fin(d) {
                seen.store(true, Ordering::Relaxed);
            }
        },
        move |d| {
            let answer_to_fin = fin_seen.load(Ordering::Relaxed)
                && frame::parse(d).is_ok_and(|(h, _)| h.kind == Kind::Data);
            !answer_to_fin
        },
    )
}

#[test]
fn a_sender_whose_fin_answers_are_lost_ends_on_the_servers_close() {
    let mut sopts = ServerOptions::new("127.0.0.1:0".parse().unwrap(), ServerMode::Discard);
    sopts.one_off = true;
    let sock = server::bind(&sopts).unwrap();
    let server_addr = sock.local_addr().unwrap();
    let server = thread::spawn(move || run_server(&sopts, sock, Box::new(std::io::sink())));
    let relay = fin_answer_eater(server_addr);

    let mut copts = ClientOptions::new(
        &relay.addr.to_string(),
        Protocol::named("tahoe"),
        ClientApp::Generate {
            limit: Limit::Bytes(200_000),
            rate_bps: None,
        },
    );
    // Without the server's Close the client would give up only here.
    copts.idle_timeout = joulenet_proto::Duration::from_secs(30);
    let started = Instant::now();
    let summary = run_client(&copts, Box::new(std::io::sink())).expect("client");
    let took = started.elapsed();
    let report = server.join().unwrap().expect("server");
    let dropped = relay.stop();

    assert!(dropped > 0, "the relay ate no answer to the FIN");
    assert_eq!(report.summaries[0].bytes_delivered, Some(200_000));
    assert_eq!(summary.bytes_delivered, Some(200_000), "{summary:?}");
    assert!(
        took < Duration::from_secs(25),
        "ended only at the idle timeout: {took:?}"
    );
}
