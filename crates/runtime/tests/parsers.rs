//! Every parser of untrusted bytes on random and on mutated real input, a
//! bounded stand-in in the normal test suite for the long fuzzing runs of
//! `fuzz/` (docs/fuzzing.md): the runtime's framing and its payloads, the
//! file-stream header, and each wire format an agent parses. The real
//! input is every datagram of a short transfer with each protocol,
//! captured on loopback. None may panic.

mod common;

use std::sync::{Arc, Mutex, OnceLock};

use common::{quiet, Relay};
use joulenet_proto::{Addr, Duration};
use joulenet_runtime::app::{FileHeader, Limit};
use joulenet_runtime::frame::{self, CloseRepr, Kind, OfferRepr, Protocol, QueryRepr};
use joulenet_runtime::link_loss::LinkFrame;
use joulenet_runtime::route::{self, RouteRepr};
use joulenet_runtime::{run_client, run_server, server, ClientApp, ClientOptions};
use joulenet_runtime::{ServerMode, ServerOptions};
use joulenet_wire::{e2tcp, ipv4, rcp, tcp, udp, wwp};
use proptest::prelude::*;

/// Every datagram, both ways, of a 20 kB transfer with each protocol.
fn captures() -> &'static Vec<Vec<u8>> {
    static CAPTURES: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    CAPTURES.get_or_init(|| {
        let all = Arc::new(Mutex::new(Vec::new()));
        for p in Protocol::all() {
            let mut opts = ServerOptions::new("127.0.0.1:0".parse().unwrap(), ServerMode::Discard);
            // Stopped, not one-off: a server that never got a connection
            // must not keep the test waiting.
            let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
            opts.stop = Some(Arc::clone(&stop));
            opts.idle_timeout = Duration::from_secs(2);
            let sock = server::bind(&opts).unwrap();
            let addr = sock.local_addr().unwrap();
            let server = std::thread::spawn(move || run_server(&opts, sock, quiet()));
            let (up, down) = (Arc::clone(&all), Arc::clone(&all));
            let relay = Relay::rewrite(
                addr,
                Box::new(move |d| {
                    up.lock().unwrap().push(d.to_vec());
                    vec![d.to_vec()]
                }),
                Box::new(move |d| {
                    down.lock().unwrap().push(d.to_vec());
                    vec![d.to_vec()]
                }),
            );
            let mut o = ClientOptions::new(
                &relay.addr.to_string(),
                p,
                ClientApp::Generate {
                    limit: Limit::Bytes(20_000),
                    rate_bps: Some(50_000_000),
                },
            );
            o.idle_timeout = Duration::from_secs(2);
            let _ = run_client(&o, quiet());
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            let _ = server.join();
            relay.stop();
        }
        let v = all.lock().unwrap().clone();
        assert!(v.len() > 100, "captured only {} datagrams", v.len());
        v
    })
}

/// Every parser that could see these bytes.
fn parse_everything(d: &[u8]) {
    if let Ok((h, payload)) = frame::parse(d) {
        let agent = match h.kind {
            Kind::Hello => frame::parse_hello(payload).map_or(&[][..], |(_, p)| p),
            Kind::Data => payload,
            _ => &[][..],
        };
        parse_agent_packet(agent);
    }
    // Either version, as endpoints and relays read it (routed: version 3).
    if let Ok(dg) = route::parse(d) {
        let _ = match dg.header.kind {
            Kind::Hello => frame::parse_hello(dg.payload).map(|_| ()),
            Kind::Retry => frame::parse_retry(dg.payload).map(|_| ()),
            Kind::Close => CloseRepr::parse(dg.payload).map(|_| ()),
            Kind::Query => QueryRepr::parse(dg.payload).map(|_| ()),
            Kind::Offer => OfferRepr::parse(dg.payload).map(|_| ()),
            Kind::Data | Kind::Refused => Ok(()),
        };
    }
    let _ = frame::parse_hello(d);
    let _ = frame::parse_retry(d);
    let _ = CloseRepr::parse(d);
    let _ = QueryRepr::parse(d);
    let _ = OfferRepr::parse(d);
    let _ = FileHeader::decode(d);
    let _ = LinkFrame::parse(d);
    parse_agent_packet(d);
}

fn parse_agent_packet(p: &[u8]) {
    if let Ok(v) = tcp::TcpPacket::new_checked(p) {
        let _ = tcp::TcpRepr::parse(&v);
    }
    if let Ok(v) = ipv4::Ipv4Packet::new_checked(p) {
        let _ = ipv4::Ipv4Repr::parse(&v);
    }
    if let Ok(v) = udp::UdpPacket::new_checked(p) {
        let _ = udp::UdpRepr::parse(&v);
    }
    if let Ok(v) = e2tcp::E2tcpPacket::new_checked(p) {
        let _ = e2tcp::E2tcpRepr::parse(&v);
    }
    if let Ok(v) = wwp::WwpPacket::new_checked(p) {
        let _ = wwp::WwpRepr::parse(&v);
    }
    let _ = rcp::parse(p);
}

#[test]
fn the_captures_parse_as_what_they_are() {
    // The seed is real: every captured datagram is a well-formed frame,
    // or a link frame (the client's marks, the server's reports).
    let mut links = 0;
    for d in captures() {
        if LinkFrame::is_link(d) {
            assert!(LinkFrame::parse(d).is_ok(), "{d:?}");
            links += 1;
        } else {
            assert!(frame::parse(d).is_ok(), "{d:?}");
        }
    }
    assert!(links < captures().len(), "connection datagrams captured");
}

/// Writes a seed corpus for `fuzz/` from the captures (run by hand:
/// `cargo test -p joulenet-runtime --test parsers -- --ignored`).
#[test]
#[ignore]
fn write_fuzz_corpus() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus");
    let all = captures();
    let step = (all.len() / 64).max(1);
    for (i, d) in all.iter().step_by(step).enumerate() {
        let dir = root.join("runtime_frame");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("capture-{i:03}")), d).unwrap();
        // The agent packet alone, behind the wire target's format byte.
        if let Ok((h, payload)) = frame::parse(d) {
            let agent = match h.kind {
                Kind::Hello => frame::parse_hello(payload).map_or(&[][..], |(_, p)| p),
                Kind::Data => payload,
                _ => continue,
            };
            let which = match h.protocol.name() {
                "udp" => 2u8,
                "e2tcp" => 3,
                "wwp" => 4,
                "rcp" | "rcp-stp" => 5,
                _ => 0, // the TCP family, end to end or hop by hop
            };
            let dir = root.join("wire");
            std::fs::create_dir_all(&dir).unwrap();
            let mut seed = vec![which];
            seed.extend_from_slice(agent);
            std::fs::write(dir.join(format!("capture-{i:03}")), seed).unwrap();
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic_a_parser(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        parse_everything(&bytes);
    }

    #[test]
    fn mutated_captures_never_panic_a_parser(
        pick in any::<prop::sample::Index>(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        cut in any::<prop::sample::Index>(),
        routed in any::<bool>(),
    ) {
        let all = captures();
        let mut d = all[pick.index(all.len())].clone();
        if routed && !LinkFrame::is_link(&d) {
            // The same datagram as it crosses relays (version 3).
            let (h, payload) = frame::parse(&d).unwrap();
            let r = RouteRepr::new(Addr::new(2, 40000), Addr::new(1, 5201));
            d = route::emit(&h, &r, payload);
        }
        for (at, b) in edits {
            let i = at.index(d.len().max(1));
            if i < d.len() {
                d[i] = b;
            }
        }
        d.truncate(cut.index(d.len() + 1));
        parse_everything(&d);
    }
}
