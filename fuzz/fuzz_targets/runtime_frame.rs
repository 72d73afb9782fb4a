//! The runtime's framing (both versions: two-party and routed): the header,
//! then each kind's payload parser, on
//! whatever a UDP socket hands over. None may panic.
#![no_main]

use joulenet_runtime::frame::{self, CloseRepr, Kind, OfferRepr, QueryRepr};
use joulenet_runtime::route;
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
    // Each payload parser on its own, too: they see bytes after any header.
    let _ = frame::parse_hello(data);
    let _ = CloseRepr::parse(data);
    let _ = QueryRepr::parse(data);
    let _ = OfferRepr::parse(data);
});
