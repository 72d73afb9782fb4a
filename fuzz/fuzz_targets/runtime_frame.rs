//! The runtime's framing (two-party and routed, plain and sealed): the
//! header, then each kind's payload parser, on whatever a UDP socket hands
//! over. None may panic.
#![no_main]

use joulenet_runtime::frame::{self, CloseRepr, Kind, OfferRepr, QueryRepr};
use joulenet_runtime::route;
use joulenet_runtime::seal::{self, ConnSeal, Psk};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Two-party (version 2) and routed (version 3) framing, as endpoints
    // and relays read it.
    if let Ok(dg) = route::parse(data) {
        let (h, payload) = (dg.header, dg.payload);
        let _ = match h.kind {
            Kind::Hello => frame::parse_hello(payload).map(|_| ()),
            Kind::Retry => frame::parse_retry(payload).map(|_| ()),
            Kind::Close => CloseRepr::parse(payload).map(|_| ()),
            Kind::Query => QueryRepr::parse(payload).map(|_| ()),
            Kind::Offer => OfferRepr::parse(payload).map(|_| ()),
            Kind::Data | Kind::Refused => Ok(()),
        };
    }
    // Sealed framing (versions 4 and 5, authenticated mode): the headers,
    // then opening as a server without a connection and as a connection
    // would, under a fixed key (the seed corpus holds datagrams sealed
    // under it, so the fuzzer also reaches the code after a tag check).
    if let Ok(s) = seal::parse(data) {
        let psk = Psk::from_bytes(&[7; 32]).expect("a 32-byte key");
        let mut out = Vec::new();
        if seal::open_opening(&psk, &s, &mut out).is_ok() {
            let _ = frame::parse_hello(&out);
            let _ = QueryRepr::parse(&out);
        }
        let nonce = s.nonce.unwrap_or([1; 16]);
        let mut conn = ConnSeal::server(&psk, s.header.conn_id, nonce, &[2; 16], 0);
        if conn.open(&s, &mut out).is_ok() {
            let _ = CloseRepr::parse(&out);
        }
    }
    // Each payload parser on its own, too: they see bytes after any header.
    let _ = frame::parse_hello(data);
    let _ = CloseRepr::parse(data);
    let _ = QueryRepr::parse(data);
    let _ = OfferRepr::parse(data);
});
