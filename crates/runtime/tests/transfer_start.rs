//! `-t` and interval reports are timed from the start of the transfer, as
//! iperf3 times its test from the moment its streams are connected: a lost
//! opening answer costs the connection its 1 s initial RTO, and that second
//! must neither shorten the client's `-t` nor fall inside the receiver's
//! first interval.

mod common;

use std::io::Write;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::thread;

use common::Relay;

use joulenet_runtime::app::Limit;
use joulenet_runtime::frame::{self, Kind, Protocol};
use joulenet_runtime::report::Format;
use joulenet_runtime::{run_client, run_server, server, ClientApp, ClientOptions};
use joulenet_runtime::{ServerMode, ServerOptions};

/// A relay that drops the server's first transport answer (to the
/// client's SYN; the address-validation `Retry` before it passes) and
/// forwards everything else.
fn first_answer_eater(server: SocketAddr) -> Relay {
    let mut eaten = false;
    Relay::start(
        server,
        |_| {},
        move |d| {
            let answer = frame::parse(d).is_ok_and(|(h, _)| h.kind == Kind::Data);
            !answer || std::mem::replace(&mut eaten, true)
        },
    )
}

/// What the server writes, kept for the test to read.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_lost_opening_answer_delays_the_transfer_not_shortens_it() {
    let mut sopts = ServerOptions::new("127.0.0.1:0".parse().unwrap(), ServerMode::Discard);
    sopts.one_off = true;
    sopts.format = Format::JsonStream;
    sopts.interval = Some(joulenet_proto::Duration::from_millis(200));
    let sock = server::bind(&sopts).unwrap();
    let server_addr = sock.local_addr().unwrap();
    let server_out = Shared::default();
    let out = server_out.clone();
    let server = thread::spawn(move || run_server(&sopts, sock, Box::new(out)));
    let relay = first_answer_eater(server_addr);

    let mut copts = ClientOptions::new(
        &relay.addr.to_string(),
        Protocol::named("e2tcp"),
        ClientApp::Generate {
            limit: Limit::For(joulenet_proto::Duration::from_millis(600)),
            rate_bps: Some(20_000_000),
        },
    );
    copts.idle_timeout = joulenet_proto::Duration::from_secs(10);
    let client = run_client(&copts, Box::new(std::io::sink())).expect("client");
    let report = server.join().unwrap().expect("server");
    assert_eq!(relay.stop(), 1, "the relay drops exactly the first answer");

    // The SYN was repeated after E2TCP's 1 s initial RTO.
    let start = client.transfer_start_s.expect("the transfer started");
    assert!(start >= 0.9, "transfer started at {start} s");
    // `-t 0.6` sent for 0.6 s after that, not for what was left of 0.6 s.
    let sending = client.completion_time_s - start;
    assert!(sending >= 0.6, "sent for {sending} s");
    let delivered = client.bytes_delivered.expect("delivered") as f64;
    let (whole, transfer) = (
        client.goodput_bps.unwrap(),
        client.transfer_goodput_bps.unwrap(),
    );
    assert!((transfer - delivered * 8.0 / sending).abs() < 1.0);
    assert!(transfer > 2.0 * whole, "{transfer} vs {whole}");

    // The receiver's connection began with the first SYN; its transfer a
    // second later, and its intervals count from there.
    let receiver = &report.summaries[0];
    assert!(receiver.transfer_start_s.unwrap() >= 0.9, "{receiver:?}");
    let text = String::from_utf8(server_out.0.lock().unwrap().clone()).unwrap();
    let intervals: Vec<serde_json::Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["event"] == "interval")
        .map(|v| v["data"]["sum"].clone())
        .collect();
    assert!(intervals.len() >= 3, "{text}");
    assert_eq!(intervals[0]["start"], 0.0);
    // Timed from the connection's start, the first 200 ms interval would
    // fall inside the lost second and be empty (so would the four after
    // it). Asked of the bytes, not of a rate: how much a 20 Mbit/s
    // generator gets through in 200 ms depends on the CPU (3.1 Mbit/s with
    // the machine's two cores busy), an empty interval does not.
    let first = intervals[0]["bytes"].as_u64().unwrap();
    assert!(first > 0, "the first interval is empty: {text}");
}
