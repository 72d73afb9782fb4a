//! Routed framing: the route header that lets a datagram cross relays
//! (documented in `docs/wire.md`, "Routed framing").
//!
//! A routed datagram is the 16-byte runtime header ([`crate::frame`]) with
//! version 3, then this 16-byte route header, then the payload of the kind
//! exactly as in a two-party (version 2) datagram — a `Hello`'s token and
//! agent packet, a `Retry`'s token, a `Close`'s verdict, a `Query`, an
//! `Offer`:
//!
//! ```text
//!  0               4       6               10      12  13          16
//! +---------------+-------+---------------+-------+---+-----------+
//! | source node   | sport | dest. node    | dport |hop| reserved 0|
//! +---------------+-------+---------------+-------+---+-----------+
//! ```
//!
//! All fields big endian. The hop limit starts at [`DEFAULT_HOP_LIMIT`] and
//! every relay decrements it; a relay that would pass it on as 0 drops the
//! datagram instead (and counts it), so a routing loop cannot circulate a
//! datagram for ever. Version 2 datagrams have no route header and mean
//! what they always meant: two parties, one UDP hop. (The routed format
//! was developed as "version 2" beside the integrity work's version 2; it
//! is version 3 on the wire, so neither is misread as the other.)
//!
//! Style of smoltcp's `wire`: [`RoutePacket`] is a checked view over bytes,
//! [`RouteRepr`] the plain values, [`RouteRepr::parse`]/[`RouteRepr::emit`]
//! convert; every parser returns an error, never panics.

use core::fmt;

use joulenet_proto::{Addr, NodeId};

use crate::frame::{self, FrameError, Header, HEADER_LEN};

/// The runtime header's version byte of a routed datagram.
pub const ROUTED_VERSION: u8 = 3;
/// Length of the route header.
pub const ROUTE_LEN: usize = 16;
/// Runtime header plus route header.
pub const ROUTED_HEADER_LEN: usize = HEADER_LEN + ROUTE_LEN;
/// The hop limit an endpoint or a relay agent starts a datagram with.
pub const DEFAULT_HOP_LIMIT: u8 = 64;

mod field {
    use core::ops::Range;
    pub const SRC_NODE: Range<usize> = 0..4;
    pub const SRC_PORT: Range<usize> = 4..6;
    pub const DST_NODE: Range<usize> = 6..10;
    pub const DST_PORT: Range<usize> = 10..12;
    pub const HOP_LIMIT: usize = 12;
    pub const RESERVED: Range<usize> = 13..16;
}

/// Why a route header was rejected.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RouteError {
    /// Fewer than [`ROUTE_LEN`] bytes.
    Truncated(usize),
    ReservedNotZero,
}

impl fmt::Display for RouteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RouteError::Truncated(n) => {
                write!(f, "route header of {n} bytes, {ROUTE_LEN} expected")
            }
            RouteError::ReservedNotZero => f.write_str("route header reserved bytes not zero"),
        }
    }
}

impl std::error::Error for RouteError {}

/// A read-only (or, over `&mut [u8]`, writable) view of a route header.
#[derive(Debug)]
pub struct RoutePacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> RoutePacket<T> {
    /// Wraps without checking; accessors may then panic on short input, so
    /// only [`RoutePacket::new_checked`] is public.
    const fn new_unchecked(buffer: T) -> RoutePacket<T> {
        RoutePacket { buffer }
    }

    /// Wraps `buffer` after checking it holds a whole route header.
    pub fn new_checked(buffer: T) -> Result<RoutePacket<T>, RouteError> {
        let len = buffer.as_ref().len();
        if len < ROUTE_LEN {
            return Err(RouteError::Truncated(len));
        }
        Ok(RoutePacket::new_unchecked(buffer))
    }

    fn u32_at(&self, r: core::ops::Range<usize>) -> u32 {
        let b = &self.buffer.as_ref()[r];
        u32::from_be_bytes([b[0], b[1], b[2], b[3]])
    }
    fn u16_at(&self, r: core::ops::Range<usize>) -> u16 {
        let b = &self.buffer.as_ref()[r];
        u16::from_be_bytes([b[0], b[1]])
    }

    pub fn src(&self) -> Addr {
        Addr::new(self.u32_at(field::SRC_NODE), self.u16_at(field::SRC_PORT))
    }
    pub fn dst(&self) -> Addr {
        Addr::new(self.u32_at(field::DST_NODE), self.u16_at(field::DST_PORT))
    }
    pub fn hop_limit(&self) -> u8 {
        self.buffer.as_ref()[field::HOP_LIMIT]
    }
    pub fn reserved_is_zero(&self) -> bool {
        self.buffer.as_ref()[field::RESERVED]
            .iter()
            .all(|&b| b == 0)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> RoutePacket<T> {
    /// A relay rewrites only this field of a datagram it forwards.
    pub fn set_hop_limit(&mut self, value: u8) {
        self.buffer.as_mut()[field::HOP_LIMIT] = value;
    }
}

/// The route header's values.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct RouteRepr {
    pub src: Addr,
    pub dst: Addr,
    pub hop_limit: u8,
}

impl RouteRepr {
    /// A fresh header from `src` to `dst` with the default hop limit.
    pub const fn new(src: Addr, dst: Addr) -> RouteRepr {
        RouteRepr {
            src,
            dst,
            hop_limit: DEFAULT_HOP_LIMIT,
        }
    }

    pub fn parse<T: AsRef<[u8]>>(packet: &RoutePacket<T>) -> Result<RouteRepr, RouteError> {
        if !packet.reserved_is_zero() {
            return Err(RouteError::ReservedNotZero);
        }
        Ok(RouteRepr {
            src: packet.src(),
            dst: packet.dst(),
            hop_limit: packet.hop_limit(),
        })
    }

    pub const fn buffer_len(&self) -> usize {
        ROUTE_LEN
    }

    /// Writes the header into the first [`ROUTE_LEN`] bytes of `out`.
    pub fn emit(&self, out: &mut [u8]) -> Result<(), RouteError> {
        if out.len() < ROUTE_LEN {
            return Err(RouteError::Truncated(out.len()));
        }
        out[field::SRC_NODE].copy_from_slice(&self.src.node.to_be_bytes());
        out[field::SRC_PORT].copy_from_slice(&self.src.port.to_be_bytes());
        out[field::DST_NODE].copy_from_slice(&self.dst.node.to_be_bytes());
        out[field::DST_PORT].copy_from_slice(&self.dst.port.to_be_bytes());
        out[field::HOP_LIMIT] = self.hop_limit;
        out[field::RESERVED].fill(0);
        Ok(())
    }

    /// The same flow seen from the other end (an answer's header).
    pub const fn reversed(&self) -> RouteRepr {
        RouteRepr::new(self.dst, self.src)
    }
}

/// Why a datagram was rejected: its runtime header or its route header.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DatagramError {
    Frame(FrameError),
    Route(RouteError),
    /// Well formed, but routed where the endpoint is two-party, two-party
    /// where it is routed, or between other ends.
    NotOurs,
}

impl fmt::Display for DatagramError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DatagramError::Frame(e) => e.fmt(f),
            DatagramError::Route(e) => e.fmt(f),
            DatagramError::NotOurs => f.write_str("datagram of another flow"),
        }
    }
}

impl std::error::Error for DatagramError {}

/// A parsed datagram of either version.
#[derive(Debug, PartialEq, Eq)]
pub struct Datagram<'a> {
    pub header: Header,
    /// `Some` for a routed (version 3) datagram.
    pub route: Option<RouteRepr>,
    pub payload: &'a [u8],
}

/// Parses a version 2 (two-party) or version 3 (routed) datagram.
///
/// The version 3 runtime header is the version 2 header with another
/// version byte, so it is checked by [`frame::parse`] on a 16-byte copy
/// with the version byte set to 2: one definition of the base header,
/// and [`crate::frame`] stays the two-party format it always was.
pub fn parse(datagram: &[u8]) -> Result<Datagram<'_>, DatagramError> {
    if datagram.len() < 3 || datagram[2] != ROUTED_VERSION {
        let (header, payload) = frame::parse(datagram).map_err(DatagramError::Frame)?;
        return Ok(Datagram {
            header,
            route: None,
            payload,
        });
    }
    if datagram.len() < HEADER_LEN {
        return Err(DatagramError::Frame(FrameError::TooShort(datagram.len())));
    }
    let mut base = [0u8; HEADER_LEN];
    base.copy_from_slice(&datagram[..HEADER_LEN]);
    base[2] = frame::VERSION;
    let (header, _) = frame::parse(&base).map_err(DatagramError::Frame)?;
    let packet = RoutePacket::new_checked(&datagram[HEADER_LEN..]).map_err(DatagramError::Route)?;
    let route = RouteRepr::parse(&packet).map_err(DatagramError::Route)?;
    Ok(Datagram {
        header,
        route: Some(route),
        payload: &datagram[ROUTED_HEADER_LEN..],
    })
}

/// Parses a datagram for an endpoint whose route is `route` (`None`: a
/// two-party endpoint): a datagram must be routed exactly when the endpoint
/// is, and then between its two ends. When `ours` accepts the header (the
/// endpoint's connection), the route's hop limit is recorded.
pub fn parse_for<'a>(
    datagram: &'a [u8],
    route: &mut Option<RouteInfo>,
    ours: impl FnOnce(&Header) -> bool,
) -> Result<(Header, &'a [u8]), DatagramError> {
    let d = parse(datagram)?;
    match (route, d.route) {
        (None, None) => {}
        (Some(info), Some(r)) if info.accepts(&r) => {
            if ours(&d.header) {
                info.saw(&r);
            }
        }
        _ => return Err(DatagramError::NotOurs),
    }
    Ok((d.header, d.payload))
}

/// Writes a routed datagram's two headers into the first
/// [`ROUTED_HEADER_LEN`] bytes of `out` (which must be that long).
pub fn write_headers(header: &Header, route: &RouteRepr, out: &mut [u8; ROUTED_HEADER_LEN]) {
    frame::write_header(header, &mut out[..HEADER_LEN]);
    out[2] = ROUTED_VERSION;
    // Cannot fail: the slice is exactly ROUTE_LEN long.
    let _ = route.emit(&mut out[HEADER_LEN..]);
}

/// A whole routed datagram: headers then payload.
pub fn emit(header: &Header, route: &RouteRepr, payload: &[u8]) -> Vec<u8> {
    let mut head = [0u8; ROUTED_HEADER_LEN];
    write_headers(header, route, &mut head);
    let mut out = Vec::with_capacity(ROUTED_HEADER_LEN + payload.len());
    out.extend_from_slice(&head);
    out.extend_from_slice(payload);
    out
}

/// An endpoint's place in a routed network: its own address and its
/// peer's, as the agents and the route headers name them, and what the
/// route headers it received said (the transit probe: every datagram's
/// hop limit tells how many relays it crossed).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RouteInfo {
    pub local: Addr,
    pub remote: Addr,
    /// Smallest and largest hop limit seen on a received datagram.
    pub hop_limit_min: Option<u8>,
    pub hop_limit_max: Option<u8>,
}

impl RouteInfo {
    pub const fn new(local: Addr, remote: Addr) -> RouteInfo {
        RouteInfo {
            local,
            remote,
            hop_limit_min: None,
            hop_limit_max: None,
        }
    }

    /// The header of a datagram this endpoint sends.
    pub const fn outgoing(&self) -> RouteRepr {
        RouteRepr::new(self.local, self.remote)
    }

    /// Records a received datagram's hop limit.
    pub fn saw(&mut self, route: &RouteRepr) {
        let h = route.hop_limit;
        self.hop_limit_min = Some(self.hop_limit_min.map_or(h, |m| m.min(h)));
        self.hop_limit_max = Some(self.hop_limit_max.map_or(h, |m| m.max(h)));
    }

    /// Hops to the peer, from the most relays a datagram from it crossed
    /// (all start at [`DEFAULT_HOP_LIMIT`]; routes are symmetric): the
    /// routing layer's view of the hops left that iJTP asks for. The most,
    /// because a relay may send on the peer's behalf (a local recovery)
    /// with a fresh hop limit, which makes it look nearer, never farther.
    pub fn hops(&self) -> Option<u32> {
        self.hop_limit_min.map(hops_travelled)
    }

    /// Whether a received datagram belongs to this endpoint's flow.
    pub fn accepts(&self, route: &RouteRepr) -> bool {
        route.src == self.remote && route.dst == self.local
    }
}

/// The hops a datagram that arrived with `hop_limit` travelled (a relay
/// passes on one less than it got: the first hop leaves the hop limit as
/// the sender set it), at least 1.
pub fn hops_travelled(hop_limit: u8) -> u32 {
    u32::from(DEFAULT_HOP_LIMIT.saturating_sub(hop_limit)) + 1
}

/// Parses a node id as given on the command line.
pub fn parse_node(s: &str) -> Result<NodeId, String> {
    s.trim()
        .parse::<NodeId>()
        .map_err(|_| format!("node {s:?} is not a number in 0..=4294967295"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::{Kind, Protocol};
    use proptest::prelude::*;

    const GOLDEN_ROUTE: [u8; 16] = [
        0x00, 0x00, 0x00, 0x05, // source node 5
        0x9c, 0x40, // source port 40000
        0x01, 0x02, 0x03, 0x04, // destination node 0x01020304
        0x14, 0x51, // destination port 5201
        0x40, // hop limit 64
        0, 0, 0, // reserved
    ];

    fn repr() -> RouteRepr {
        RouteRepr::new(Addr::new(5, 40000), Addr::new(0x0102_0304, 5201))
    }

    #[test]
    fn route_header_golden_bytes() {
        let mut out = [0xffu8; 16];
        repr().emit(&mut out).unwrap();
        assert_eq!(out, GOLDEN_ROUTE);
        let p = RoutePacket::new_checked(&GOLDEN_ROUTE[..]).unwrap();
        assert_eq!(RouteRepr::parse(&p), Ok(repr()));
        assert_eq!(repr().buffer_len(), ROUTE_LEN);
    }

    #[test]
    fn routed_datagram_golden_bytes() {
        let h = Header {
            kind: Kind::Data,
            protocol: Protocol::named("sack"),
            conn_id: 0x0102_0304_0506_0708,
        };
        let d = emit(&h, &repr(), b"hi");
        let mut want = vec![b'J', b'N', 3, 2, 4, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8];
        want.extend_from_slice(&GOLDEN_ROUTE);
        want.extend_from_slice(b"hi");
        assert_eq!(d, want);
        let got = parse(&d).unwrap();
        assert_eq!(got.header, h);
        assert_eq!(got.route, Some(repr()));
        assert_eq!(got.payload, b"hi");
    }

    /// The integrity kinds keep their payloads when routed: a `Hello`'s
    /// token, a `Retry`, a `Close` with the receiver's verdict.
    #[test]
    fn routed_integrity_kinds_golden_bytes() {
        let h = Header {
            kind: Kind::Hello,
            protocol: Protocol::named("hbh-tcp"),
            conn_id: 0x0102_0304_0506_0708,
        };
        let mut payload = vec![0x5a; frame::TOKEN_LEN];
        payload.extend_from_slice(b"syn");
        let d = emit(&h, &repr(), &payload);
        let mut want = vec![b'J', b'N', 3, 1, 21, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8];
        want.extend_from_slice(&GOLDEN_ROUTE);
        want.extend_from_slice(&[0x5a; 16]);
        want.extend_from_slice(b"syn");
        assert_eq!(d, want);
        let got = parse(&d).unwrap();
        assert_eq!(got.header, h);
        assert_eq!(
            frame::parse_hello(got.payload),
            Ok((Some([0x5a; 16]), &b"syn"[..]))
        );
        // The server's answer: swapped ends, a fresh hop limit.
        let retry = Header {
            kind: Kind::Retry,
            ..h
        };
        let d = emit(&retry, &repr().reversed(), &[0x77; 16]);
        assert_eq!(d.len(), ROUTED_HEADER_LEN + frame::TOKEN_LEN);
        assert_eq!(&d[..5], &[b'J', b'N', 3, 5, 21]);
        assert_eq!(
            &d[HEADER_LEN..ROUTED_HEADER_LEN],
            &[1, 2, 3, 4, 0x14, 0x51, 0, 0, 0, 5, 0x9c, 0x40, 0x40, 0, 0, 0]
        );
        let got = parse(&d).unwrap();
        assert_eq!(got.route, Some(repr().reversed()));
        assert_eq!(frame::parse_retry(got.payload), Ok([0x77; 16]));
        let close = frame::CloseRepr {
            verdict: frame::Verdict::Verified,
            stream_bytes: 9,
            sha256: [1; 32],
            reason: String::new(),
        };
        let c = Header {
            kind: Kind::Close,
            ..h
        };
        let d = emit(&c, &repr().reversed(), &close.emit());
        assert_eq!(d[3], 3);
        let got = parse(&d).unwrap();
        assert_eq!(frame::CloseRepr::parse(got.payload), Ok(Some(close)));
    }

    #[test]
    fn two_party_version_is_unchanged_and_has_no_route() {
        let h = Header {
            kind: Kind::Hello,
            protocol: Protocol::named("udp"),
            conn_id: 9,
        };
        let d = frame::emit(&h, b"abc");
        let got = parse(&d).unwrap();
        assert_eq!(got.route, None);
        assert_eq!(got.header, h);
        assert_eq!(got.payload, b"abc");
    }

    #[test]
    fn malformed_route_headers_are_errors() {
        let h = Header {
            kind: Kind::Data,
            protocol: Protocol::named("udp"),
            conn_id: 1,
        };
        let good = emit(&h, &repr(), &[]);
        assert_eq!(
            parse(&good[..20]),
            Err(DatagramError::Route(RouteError::Truncated(4)))
        );
        assert_eq!(
            parse(&good[..10]),
            Err(DatagramError::Frame(FrameError::TooShort(10)))
        );
        let mut d = good.clone();
        d[HEADER_LEN + 15] = 1;
        assert_eq!(
            parse(&d),
            Err(DatagramError::Route(RouteError::ReservedNotZero))
        );
        let mut d = good.clone();
        d[0] = b'X';
        assert_eq!(parse(&d), Err(DatagramError::Frame(FrameError::BadMagic)));
        let mut d = good.clone();
        d[2] = 4;
        assert_eq!(
            parse(&d),
            Err(DatagramError::Frame(FrameError::BadVersion(4)))
        );
        // Version 1 (before address validation) is neither format.
        let mut d = good;
        d[2] = 1;
        assert_eq!(
            parse(&d),
            Err(DatagramError::Frame(FrameError::BadVersion(1)))
        );
        assert!(RouteRepr::new(Addr::default(), Addr::default())
            .emit(&mut [0u8; 15])
            .is_err());
    }

    #[test]
    fn endpoints_take_only_their_own_framing() {
        let h = Header {
            kind: Kind::Data,
            protocol: Protocol::named("udp"),
            conn_id: 5,
        };
        let me = RouteInfo::new(Addr::new(1, 5201), Addr::new(5, 40000));
        let mut routed = Some(me);
        let mut two_party = None;
        let to_me = emit(
            &h,
            &RouteRepr {
                hop_limit: 60,
                ..me.outgoing().reversed()
            },
            b"p",
        );
        let v1 = frame::emit(&h, b"p");
        assert_eq!(parse_for(&to_me, &mut routed, |_| true), Ok((h, &b"p"[..])));
        assert_eq!(routed.unwrap().hop_limit_min, Some(60));
        assert_eq!(parse_for(&v1, &mut two_party, |_| true), Ok((h, &b"p"[..])));
        assert_eq!(
            parse_for(&v1, &mut routed, |_| true),
            Err(DatagramError::NotOurs)
        );
        assert_eq!(
            parse_for(&to_me, &mut two_party, |_| true),
            Err(DatagramError::NotOurs)
        );
        let elsewhere = emit(&h, &me.outgoing(), b"p");
        assert_eq!(
            parse_for(&elsewhere, &mut routed, |_| true),
            Err(DatagramError::NotOurs)
        );
        // Another connection's datagram teaches nothing about our hops.
        let mut fresh = Some(me);
        let _ = parse_for(&to_me, &mut fresh, |_| false);
        assert_eq!(fresh.unwrap().hop_limit_min, None);
    }

    #[test]
    fn hops_travelled_count_the_relays_crossed() {
        assert_eq!(
            hops_travelled(DEFAULT_HOP_LIMIT),
            1,
            "straight from the sender"
        );
        assert_eq!(hops_travelled(61), 4, "three relays");
        assert_eq!(hops_travelled(200), 1, "a foreign start is no less than 1");
        let mut info = RouteInfo::new(Addr::new(0, 1), Addr::new(4, 1));
        assert_eq!(info.hops(), None);
        for hop_limit in [61, 64] {
            info.saw(&RouteRepr {
                hop_limit,
                ..RouteRepr::new(Addr::new(4, 1), Addr::new(0, 1))
            });
        }
        assert_eq!(
            info.hops(),
            Some(4),
            "a relay's local recovery looks nearer"
        );
    }

    #[test]
    fn hop_limit_is_rewritten_in_place() {
        let mut bytes = GOLDEN_ROUTE;
        let mut p = RoutePacket::new_checked(&mut bytes[..]).unwrap();
        p.set_hop_limit(63);
        assert_eq!(p.hop_limit(), 63);
        assert_eq!(bytes[12], 63);
    }

    #[test]
    fn route_info_records_hop_limits_and_filters_flows() {
        let mut i = RouteInfo::new(Addr::new(1, 5201), Addr::new(5, 40000));
        let mut r = i.outgoing().reversed();
        assert!(i.accepts(&r));
        r.hop_limit = 61;
        i.saw(&r);
        r.hop_limit = 62;
        i.saw(&r);
        assert_eq!((i.hop_limit_min, i.hop_limit_max), (Some(61), Some(62)));
        assert!(!i.accepts(&i.outgoing()));
    }

    proptest! {
        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = parse(&bytes);
        }

        #[test]
        fn routed_prefix_mutations_never_panic(i in 0usize..32, b in any::<u8>(), cut in 0usize..40) {
            let h = Header { kind: Kind::Data, protocol: Protocol::named("udp"), conn_id: 3 };
            let mut d = emit(&h, &repr(), b"xyz");
            d[i] = b;
            d.truncate(cut);
            let _ = parse(&d);
        }

        #[test]
        fn round_trip_any(sn: u32, sp: u16, dn: u32, dp: u16, hl: u8, payload in proptest::collection::vec(any::<u8>(), 0..50)) {
            let r = RouteRepr { src: Addr::new(sn, sp), dst: Addr::new(dn, dp), hop_limit: hl };
            let h = Header { kind: Kind::Hello, protocol: Protocol::named("wwp"), conn_id: 77 };
            let d = emit(&h, &r, &payload);
            let got = parse(&d).unwrap();
            prop_assert_eq!(got.route, Some(r));
            prop_assert_eq!(got.payload, &payload[..]);
        }
    }
}
