//! `emulate` as a long-lived relay (issue 15): it used to keep every
//! client's slot forever and, after 64 source addresses, silently drop
//! every new client.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;

use common::quiet;
use joulenet_proto::tcp::TcpVariant;
use joulenet_proto::Duration;
use joulenet_runtime::app::Limit;
use joulenet_runtime::frame::Protocol;
use joulenet_runtime::{
    emulate, parse_loss, run_client, run_emulator, run_server, server, ClientApp, ClientOptions,
    EmulateOptions, ServerMode, ServerOptions,
};

#[test]
fn a_long_lived_relay_serves_its_hundredth_client() {
    let mut sopts = ServerOptions::new("127.0.0.1:0".parse().unwrap(), ServerMode::Discard);
    let stop = Arc::new(AtomicBool::new(false));
    sopts.stop = Some(Arc::clone(&stop));
    let sock = server::bind(&sopts).unwrap();
    let server_addr = sock.local_addr().unwrap();
    let server = thread::spawn(move || run_server(&sopts, sock, quiet()));
    let e = EmulateOptions::new(
        "127.0.0.1:0".parse().unwrap(),
        &server_addr.to_string(),
        parse_loss("none").unwrap(),
    );
    let s = emulate::bind(&e).unwrap();
    let relay = s.local_addr().unwrap();
    let relay_stop = Arc::new(AtomicBool::new(false));
    let rs = Arc::clone(&relay_stop);
    let emulator = thread::spawn(move || run_emulator(&e, s, rs));
    // Each client binds a new port: a new source address for the relay.
    for i in 0..100 {
        let mut o = ClientOptions::new(
            &relay.to_string(),
            Protocol::Tcp(TcpVariant::Reno),
            ClientApp::Generate {
                limit: Limit::Bytes(2000),
                rate_bps: None,
            },
        );
        o.idle_timeout = Duration::from_secs(2);
        let s = run_client(&o, quiet()).unwrap_or_else(|e| panic!("client {i}: {e}"));
        assert_eq!(s.bytes_delivered, Some(2000), "client {i}");
    }
    relay_stop.store(true, Ordering::Relaxed);
    stop.store(true, Ordering::Relaxed);
    emulator.join().unwrap().unwrap();
    let report = server.join().unwrap().unwrap();
    assert_eq!(report.summaries.len(), 100);
}
