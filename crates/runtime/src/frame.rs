//! Runtime framing, version 2: the 16-byte header in front of every agent
//! packet in a UDP datagram, and the payloads of the runtime's own kinds
//! (documented in `docs/wire.md`, "Runtime framing").
//!
//! ```text
//!  0       2       3       4       5               8
//! +-------+-------+-------+-------+---------------+
//! | "JN"  |version| kind  | proto | reserved (0)  |
//! +-------+-------+-------+-------+---------------+
//! |          connection id (u64, big endian)      |   bytes 8..16
//! +-----------------------------------------------+
//! |          agent packet, unchanged ...          |
//! ```
//!
//! Version 2 (issue 15) added the address-validation token in front of a
//! `Hello`'s agent packet, the `Retry` kind that carries it, and the
//! receiver's verdict in `Close`: a version-1 peer is refused as
//! `BadVersion`, never misread.
//!
//! Through relays the same header carries version 3 and is followed by a
//! 16-byte route header ([`crate::route`]); the payloads of every kind are
//! the same in both formats.
//!
//! [`parse`], [`parse_hello`] and [`CloseRepr::parse`] return an error,
//! never panic, on any input.

use core::fmt;
use std::sync::OnceLock;

use joulenet_registry::{Entry, ProtocolSpec, Wire, WireFormat};

pub const MAGIC: [u8; 2] = *b"JN";
pub const VERSION: u8 = 2;
pub const HEADER_LEN: usize = 16;
/// The address-validation token in a `Hello` or `Retry`.
pub const TOKEN_LEN: usize = 16;
/// Longest reason in a `Close` or `Refused`, bytes: a reason is for a
/// person, and a bound keeps every answer small.
pub const MAX_REASON: usize = 200;
/// The fixed part of a `Close` with a verdict: verdict, stream bytes, SHA-256.
pub const CLOSE_FIXED_LEN: usize = 1 + 8 + 32;

/// What a datagram is for.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A packet of a connection the receiver may not know yet, behind a
    /// [`TOKEN_LEN`]-byte token (all zero until the server sent one in a
    /// `Retry`). The server creates the connection only on a `Hello` whose
    /// token proves the client receives at its address; a client sends
    /// `Hello` until it has heard from the server.
    Hello,
    /// A packet of an established connection.
    Data,
    /// The end of a connection. From the client: empty, it is done (or
    /// gave up) and has freed the connection. From the server: the
    /// receiver's verdict on the stream ([`CloseRepr`]).
    Close,
    /// The server refuses the connection (too many connections, or a
    /// protocol it does not serve); the payload is a UTF-8 reason. Sent
    /// only to a validated address, before the connection exists.
    Refused,
    /// The server's stateless answer to a `Hello` (or `Query`) without a
    /// valid token: the payload is the token to repeat it with.
    Retry,
    /// Before a file transfer, the client asks what the receiver already
    /// holds of the file ([`QueryRepr`]; carries a token like `Hello`).
    Query,
    /// The answer to a validated `Query`: the prefix of the file the
    /// receiver holds ([`OfferRepr`]).
    Offer,
}

impl Kind {
    pub const fn code(self) -> u8 {
        match self {
            Kind::Hello => 1,
            Kind::Data => 2,
            Kind::Close => 3,
            Kind::Refused => 4,
            Kind::Retry => 5,
            Kind::Query => 6,
            Kind::Offer => 7,
        }
    }
    pub const fn from_code(code: u8) -> Option<Kind> {
        Some(match code {
            1 => Kind::Hello,
            2 => Kind::Data,
            3 => Kind::Close,
            4 => Kind::Refused,
            5 => Kind::Retry,
            6 => Kind::Query,
            7 => Kind::Offer,
            _ => return None,
        })
    }
}

/// The transport protocol of a connection: an entry of the shared protocol
/// registry (`joulenet_registry`) that has a code on the wire. The
/// registry decides which protocols run on real hosts; this type only
/// carries the choice.
#[derive(Copy, Clone)]
pub struct Protocol {
    entry: &'static Entry,
    code: u8,
    /// Asked per datagram, so read from the registry once.
    datagram: bool,
    /// The receiver may give up holes (jtp10, jtp20): no file over it.
    gaps: bool,
    /// JTP's format: a rate from relays' stamps (`rate_from_stamps`).
    stamps: bool,
    /// The ends differ, joined by the relays' agent (`e2tcp-split`).
    split: bool,
}

impl Protocol {
    /// Every protocol the runtime carries, in registry order.
    pub fn all() -> impl Iterator<Item = Protocol> {
        // Built once: every datagram's header is looked up here
        // (`from_code`), and making an entry's configuration allocates.
        static TABLE: OnceLock<Vec<Protocol>> = OnceLock::new();
        TABLE
            .get_or_init(|| {
                joulenet_registry::entries()
                    .filter_map(|entry| match entry.wire {
                        Wire::Code(code) => {
                            let spec = (entry.make)();
                            Some(Protocol {
                                entry,
                                code,
                                datagram: spec.is_datagram(),
                                gaps: spec.delivers_with_gaps(),
                                stamps: spec.wire_format() == WireFormat::Jtp,
                                split: spec.needs_relay(),
                            })
                        }
                        // R²CP: its own driver (`crate::multihomed`).
                        Wire::Unavailable(_) | Wire::Multihomed(_) => None,
                    })
                    .collect()
            })
            .iter()
            .copied()
    }

    /// The protocols that repair losses (files can be sent over them)
    /// between two ends: not those that need a relay between the ends
    /// ([`Protocol::needs_relay`]).
    pub fn reliable() -> impl Iterator<Item = Protocol> {
        Protocol::all().filter(|p| p.is_reliable() && !p.needs_relay())
    }

    /// The ends speak different protocols and only a `joulenet relay`
    /// running the protocol's relay agent joins them (`e2tcp-split`: wired
    /// TCP to the relay, E2TCP beyond it).
    pub fn needs_relay(self) -> bool {
        self.split
    }

    /// The protocol a name written in code stands for.
    ///
    /// # Panics
    /// If `name` is not a runtime protocol: for literals only; names from
    /// users go through `str::parse`, which says what is wrong.
    pub fn named(name: &str) -> Protocol {
        name.parse()
            .unwrap_or_else(|e| panic!("Protocol::named({name:?}): {e}"))
    }

    pub fn code(self) -> u8 {
        self.code
    }

    pub fn from_code(code: u8) -> Option<Protocol> {
        Protocol::all().find(|p| p.code == code)
    }

    pub fn name(self) -> &'static str {
        self.entry.name
    }

    /// The protocol's default configuration, to be adapted to the host
    /// (`crate::conn::Tuning`).
    pub fn spec(self) -> ProtocolSpec {
        ProtocolSpec::new((self.entry.make)())
    }

    /// Whether the protocol repairs every loss (a file can be sent over
    /// it): not UDP, nor JTP with a loss tolerance (jtp10, jtp20), whose
    /// receiver gives up holes (`client` streams them).
    pub fn is_reliable(self) -> bool {
        !self.is_datagram() && !self.gaps
    }

    /// Whether the sending rate comes from what relays stamp against a
    /// measured link (JTP, ATP: the receiver raises it from the available
    /// rate, which a host measures only with `--link-rate`; without, it
    /// stays at the initial 64 kbit/s). Tests that move megabytes with
    /// every protocol leave these out (netns_multihop covers them).
    pub fn rate_from_stamps(self) -> bool {
        self.stamps
    }

    /// Messages stay whole, one per datagram (UDP).
    pub fn is_datagram(self) -> bool {
        self.datagram
    }
}

impl PartialEq for Protocol {
    fn eq(&self, other: &Protocol) -> bool {
        self.code == other.code
    }
}

impl Eq for Protocol {}

impl core::hash::Hash for Protocol {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        self.code.hash(state)
    }
}

impl fmt::Debug for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl core::str::FromStr for Protocol {
    type Err = String;
    fn from_str(s: &str) -> Result<Protocol, String> {
        let lower = s.to_ascii_lowercase();
        if let Some(p) = Protocol::all().find(|p| p.name() == lower) {
            return Ok(p);
        }
        let names: Vec<&str> = Protocol::all().map(|p| p.name()).collect();
        match joulenet_registry::entry(&lower).map(|e| e.wire) {
            Some(Wire::Unavailable(why)) => Err(format!(
                "{lower} cannot run on real hosts: {why} (the runtime runs {})",
                names.join(", ")
            )),
            Some(Wire::Multihomed(_)) => Err(format!(
                "{lower} runs on hosts only as a multi-homed receiver: `joulenet recv --proto \
                 {lower} --bind LOCAL --server HOST:PORT ...` pulling from `joulenet offer FILE`"
            )),
            _ => Err(format!(
                "unknown protocol {s:?} (expected {})",
                names.join(", ")
            )),
        }
    }
}

/// The parsed runtime header.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub kind: Kind,
    pub protocol: Protocol,
    /// Random, never zero.
    pub conn_id: u64,
}

/// Why a datagram was rejected.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FrameError {
    TooShort(usize),
    BadMagic,
    BadVersion(u8),
    BadKind(u8),
    BadProtocol(u8),
    ReservedNotZero,
    ZeroConnectionId,
    /// A `Hello` or `Retry` without its whole token.
    NoToken(usize),
    /// A `Close` payload that is neither empty nor a whole verdict.
    BadClose,
    /// A verdict code this version does not know.
    BadVerdict(u8),
    /// A reason longer than [`MAX_REASON`] or not UTF-8.
    BadReason,
    /// A `Query` or `Offer` of the wrong length or with a bad name.
    BadQuery,
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::TooShort(n) => {
                write!(f, "datagram of {n} bytes is shorter than the header")
            }
            FrameError::BadMagic => f.write_str("bad magic"),
            FrameError::BadVersion(v) => write!(f, "unsupported version {v}"),
            FrameError::BadKind(k) => write!(f, "unknown kind {k}"),
            FrameError::BadProtocol(p) => write!(f, "unknown protocol {p}"),
            FrameError::ReservedNotZero => f.write_str("reserved bytes not zero"),
            FrameError::ZeroConnectionId => f.write_str("connection id 0"),
            FrameError::NoToken(n) => {
                write!(f, "{n}-byte payload cannot hold a {TOKEN_LEN}-byte token")
            }
            FrameError::BadClose => f.write_str("Close payload is neither empty nor a verdict"),
            FrameError::BadVerdict(v) => write!(f, "unknown verdict {v}"),
            FrameError::BadReason => {
                write!(f, "reason not UTF-8 or longer than {MAX_REASON} bytes")
            }
            FrameError::BadQuery => f.write_str("malformed Query or Offer"),
        }
    }
}

impl std::error::Error for FrameError {}

/// Splits a datagram into its header and the agent packet.
pub fn parse(datagram: &[u8]) -> Result<(Header, &[u8]), FrameError> {
    if datagram.len() < HEADER_LEN {
        return Err(FrameError::TooShort(datagram.len()));
    }
    if datagram[0..2] != MAGIC {
        return Err(FrameError::BadMagic);
    }
    if datagram[2] != VERSION {
        return Err(FrameError::BadVersion(datagram[2]));
    }
    let kind = Kind::from_code(datagram[3]).ok_or(FrameError::BadKind(datagram[3]))?;
    let protocol = Protocol::from_code(datagram[4]).ok_or(FrameError::BadProtocol(datagram[4]))?;
    if datagram[5..8] != [0, 0, 0] {
        return Err(FrameError::ReservedNotZero);
    }
    let mut id = [0u8; 8];
    id.copy_from_slice(&datagram[8..16]);
    let conn_id = u64::from_be_bytes(id);
    if conn_id == 0 {
        return Err(FrameError::ZeroConnectionId);
    }
    Ok((
        Header {
            kind,
            protocol,
            conn_id,
        },
        &datagram[HEADER_LEN..],
    ))
}

/// Writes the header into the first [`HEADER_LEN`] bytes of `out`.
/// `out` must be at least that long.
pub fn write_header(header: &Header, out: &mut [u8]) {
    out[0..2].copy_from_slice(&MAGIC);
    out[2] = VERSION;
    out[3] = header.kind.code();
    out[4] = header.protocol.code();
    out[5..8].fill(0);
    out[8..16].copy_from_slice(&header.conn_id.to_be_bytes());
}

/// A whole datagram: header then payload.
pub fn emit(header: &Header, payload: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; HEADER_LEN + payload.len()];
    write_header(header, &mut out);
    out[HEADER_LEN..].copy_from_slice(payload);
    out
}

/// Splits a `Hello`'s payload into its token (`None` when all zero: the
/// client has not been sent one) and the agent packet.
pub fn parse_hello(payload: &[u8]) -> Result<(Option<[u8; TOKEN_LEN]>, &[u8]), FrameError> {
    if payload.len() < TOKEN_LEN {
        return Err(FrameError::NoToken(payload.len()));
    }
    let mut token = [0u8; TOKEN_LEN];
    token.copy_from_slice(&payload[..TOKEN_LEN]);
    let token = (token != [0; TOKEN_LEN]).then_some(token);
    Ok((token, &payload[TOKEN_LEN..]))
}

/// A `Retry`'s token.
pub fn parse_retry(payload: &[u8]) -> Result<[u8; TOKEN_LEN], FrameError> {
    payload
        .try_into()
        .map_err(|_| FrameError::NoToken(payload.len()))
}

/// What the receiver made of the stream, carried in its `Close`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// The file's bytes on disk match the announced size and SHA-256, and
    /// it was renamed into place.
    Verified,
    /// The bytes on disk do not match the announced size or SHA-256.
    Mismatch,
    /// Verified, but the rename into place failed.
    RenameFailed,
    /// The receiver would not take the file (bad header, unsafe name,
    /// more bytes than announced).
    Refused,
    /// Writing the partial file failed (disk full, permissions).
    WriteFailed,
    /// The stream did not end: the connection was closed, timed out or
    /// interrupted first.
    Incomplete,
    /// A stream without a file (`serve`) arrived whole.
    Delivered,
}

impl Verdict {
    pub const ALL: [Verdict; 7] = [
        Verdict::Verified,
        Verdict::Mismatch,
        Verdict::RenameFailed,
        Verdict::Refused,
        Verdict::WriteFailed,
        Verdict::Incomplete,
        Verdict::Delivered,
    ];

    pub const fn code(self) -> u8 {
        match self {
            Verdict::Verified => 1,
            Verdict::Mismatch => 2,
            Verdict::RenameFailed => 3,
            Verdict::Refused => 4,
            Verdict::WriteFailed => 5,
            Verdict::Incomplete => 6,
            Verdict::Delivered => 7,
        }
    }

    pub fn from_code(code: u8) -> Option<Verdict> {
        Verdict::ALL.into_iter().find(|v| v.code() == code)
    }

    /// The name in reports (`-J`'s `file.status`).
    pub const fn name(self) -> &'static str {
        match self {
            Verdict::Verified => "verified",
            Verdict::Mismatch => "mismatch",
            Verdict::RenameFailed => "rename_failed",
            Verdict::Refused => "refused",
            Verdict::WriteFailed => "write_failed",
            Verdict::Incomplete => "incomplete",
            Verdict::Delivered => "delivered",
        }
    }

    /// The stream arrived whole and (for a file) is in place.
    pub const fn is_success(self) -> bool {
        matches!(self, Verdict::Verified | Verdict::Delivered)
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The server's `Close` payload:
///
/// ```text
/// verdict u8 | stream bytes u64 | SHA-256 of the file on disk (32; zero if none) | reason (UTF-8, 0..=200)
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CloseRepr {
    pub verdict: Verdict,
    /// Stream bytes the receiving application got (file header included).
    pub stream_bytes: u64,
    /// The SHA-256 the receiver computed over the file it holds (zero when
    /// it holds none).
    pub sha256: [u8; 32],
    pub reason: String,
}

impl CloseRepr {
    /// `Ok(None)`: an empty `Close` (a client's).
    pub fn parse(payload: &[u8]) -> Result<Option<CloseRepr>, FrameError> {
        if payload.is_empty() {
            return Ok(None);
        }
        if payload.len() < CLOSE_FIXED_LEN {
            return Err(FrameError::BadClose);
        }
        let verdict = Verdict::from_code(payload[0]).ok_or(FrameError::BadVerdict(payload[0]))?;
        let mut n = [0u8; 8];
        n.copy_from_slice(&payload[1..9]);
        let mut sha256 = [0u8; 32];
        sha256.copy_from_slice(&payload[9..CLOSE_FIXED_LEN]);
        let reason = &payload[CLOSE_FIXED_LEN..];
        if reason.len() > MAX_REASON {
            return Err(FrameError::BadReason);
        }
        let reason = std::str::from_utf8(reason).map_err(|_| FrameError::BadReason)?;
        Ok(Some(CloseRepr {
            verdict,
            stream_bytes: u64::from_be_bytes(n),
            sha256,
            reason: reason.to_string(),
        }))
    }

    pub fn buffer_len(&self) -> usize {
        CLOSE_FIXED_LEN + truncated(&self.reason).len()
    }

    /// The payload; a reason longer than [`MAX_REASON`] is cut at a
    /// character boundary.
    pub fn emit(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.buffer_len());
        out.push(self.verdict.code());
        out.extend_from_slice(&self.stream_bytes.to_be_bytes());
        out.extend_from_slice(&self.sha256);
        out.extend_from_slice(truncated(&self.reason).as_bytes());
        out
    }
}

/// Longest file name in a `Query`, bytes (the file header's limit).
pub const MAX_QUERY_NAME: usize = 255;

/// A `Query`'s payload:
///
/// ```text
/// token (16) | file size u64 | file SHA-256 (32) | name (UTF-8, 1..=255)
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueryRepr {
    pub token: Option<[u8; TOKEN_LEN]>,
    pub size: u64,
    pub sha256: [u8; 32],
    pub name: String,
}

impl QueryRepr {
    const FIXED: usize = TOKEN_LEN + 8 + 32;

    pub fn parse(payload: &[u8]) -> Result<QueryRepr, FrameError> {
        let name = payload
            .get(QueryRepr::FIXED..)
            .ok_or(FrameError::BadQuery)?;
        if name.is_empty() || name.len() > MAX_QUERY_NAME {
            return Err(FrameError::BadQuery);
        }
        let name = std::str::from_utf8(name).map_err(|_| FrameError::BadQuery)?;
        let (token, _) = parse_hello(payload)?;
        let mut n = [0u8; 8];
        n.copy_from_slice(&payload[TOKEN_LEN..TOKEN_LEN + 8]);
        let mut sha256 = [0u8; 32];
        sha256.copy_from_slice(&payload[TOKEN_LEN + 8..QueryRepr::FIXED]);
        Ok(QueryRepr {
            token,
            size: u64::from_be_bytes(n),
            sha256,
            name: name.to_string(),
        })
    }

    pub fn emit(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(QueryRepr::FIXED + self.name.len());
        out.extend_from_slice(&self.token.unwrap_or([0; TOKEN_LEN]));
        out.extend_from_slice(&self.size.to_be_bytes());
        out.extend_from_slice(&self.sha256);
        out.extend_from_slice(self.name.as_bytes());
        out
    }
}

/// An `Offer`'s payload: `prefix length u64 | SHA-256 of that prefix (32)`.
/// Length 0: nothing to resume from.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct OfferRepr {
    pub prefix_len: u64,
    pub prefix_sha256: [u8; 32],
}

impl OfferRepr {
    pub const LEN: usize = 8 + 32;

    pub fn parse(payload: &[u8]) -> Result<OfferRepr, FrameError> {
        if payload.len() != OfferRepr::LEN {
            return Err(FrameError::BadQuery);
        }
        let mut n = [0u8; 8];
        n.copy_from_slice(&payload[..8]);
        let mut prefix_sha256 = [0u8; 32];
        prefix_sha256.copy_from_slice(&payload[8..]);
        Ok(OfferRepr {
            prefix_len: u64::from_be_bytes(n),
            prefix_sha256,
        })
    }

    pub fn emit(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(OfferRepr::LEN);
        out.extend_from_slice(&self.prefix_len.to_be_bytes());
        out.extend_from_slice(&self.prefix_sha256);
        out
    }
}

/// `reason` cut to at most [`MAX_REASON`] bytes at a character boundary.
pub fn truncated(reason: &str) -> &str {
    if reason.len() <= MAX_REASON {
        return reason;
    }
    let mut end = MAX_REASON;
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    &reason[..end]
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn round_trip_every_kind_and_protocol() {
        for protocol in Protocol::all() {
            for kind in [
                Kind::Hello,
                Kind::Data,
                Kind::Close,
                Kind::Refused,
                Kind::Retry,
            ] {
                let h = Header {
                    kind,
                    protocol,
                    conn_id: 0xdead_beef_0123_4567,
                };
                let d = emit(&h, b"payload");
                assert_eq!(d.len(), HEADER_LEN + 7);
                assert_eq!(parse(&d), Ok((h, &b"payload"[..])));
            }
        }
    }

    #[test]
    fn malformed_headers_are_errors() {
        let h = Header {
            kind: Kind::Data,
            protocol: Protocol::named("udp"),
            conn_id: 7,
        };
        let good = emit(&h, &[]);
        assert_eq!(parse(&good[..15]), Err(FrameError::TooShort(15)));
        let mut d = good.clone();
        d[0] = b'X';
        assert_eq!(parse(&d), Err(FrameError::BadMagic));
        let mut d = good.clone();
        d[2] = 9;
        assert_eq!(parse(&d), Err(FrameError::BadVersion(9)));
        let mut d = good.clone();
        d[3] = 0;
        assert_eq!(parse(&d), Err(FrameError::BadKind(0)));
        let mut d = good.clone();
        d[4] = 99;
        assert_eq!(parse(&d), Err(FrameError::BadProtocol(99)));
        let mut d = good.clone();
        d[6] = 1;
        assert_eq!(parse(&d), Err(FrameError::ReservedNotZero));
        let mut d = good;
        d[8..16].fill(0);
        assert_eq!(parse(&d), Err(FrameError::ZeroConnectionId));
    }

    #[test]
    fn protocol_names_parse() {
        for p in Protocol::all() {
            assert_eq!(p.name().parse::<Protocol>(), Ok(p));
            assert_eq!(p.name().to_uppercase().parse::<Protocol>(), Ok(p));
        }
        assert!("bbr".parse::<Protocol>().is_err());
        let eln = "rcp-eln".parse::<Protocol>().unwrap_err();
        assert!(eln.contains("link layer"), "{eln}");
        // Codes are distinct.
        let mut codes: Vec<u8> = Protocol::all().map(|p| p.code()).collect();
        codes.sort();
        codes.dedup();
        assert_eq!(codes.len(), Protocol::all().count());
        // R²CP runs on hosts through its own commands, not two-party.
        let r2cp = "r2cp".parse::<Protocol>().unwrap_err();
        assert!(r2cp.contains("multi-homed receiver"), "{r2cp}");
        let split = Protocol::named("e2tcp-split");
        assert!(split.needs_relay() && split.is_reliable());
        assert!(Protocol::reliable().all(|p| !p.needs_relay()));
        // Hop, JTP and ATP run on hosts (issues 13, 14).
        for name in ["hop", "jtp", "jtp0", "jtp10", "jtp20", "atp"] {
            assert_eq!(name.parse::<Protocol>().map(|p| p.name()), Ok(name));
        }
    }

    proptest! {
        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = parse(&bytes);
        }

        #[test]
        fn round_trip_any(kind in 1u8..=7, proto in 0usize..64, id in 1u64.., payload in proptest::collection::vec(any::<u8>(), 0..100)) {
            let h = Header { kind: Kind::from_code(kind).unwrap(), protocol: Protocol::all().nth(proto % Protocol::all().count()).unwrap(), conn_id: id };
            let d = emit(&h, &payload);
            let (h2, p2) = parse(&d).unwrap();
            prop_assert_eq!(h2, h);
            prop_assert_eq!(p2, &payload[..]);
        }

        #[test]
        fn header_prefix_mutations_never_panic(id in 1u64.., i in 0usize..16, b in any::<u8>()) {
            let mut d = emit(&Header { kind: Kind::Data, protocol: Protocol::named("udp"), conn_id: id }, b"x");
            d[i] = b;
            let _ = parse(&d);
        }
    }

    #[test]
    fn golden_version_2_close_with_a_verdict() {
        let h = Header {
            kind: Kind::Close,
            protocol: Protocol::named("cubic"),
            conn_id: 0x0102_0304_0506_0708,
        };
        let c = CloseRepr {
            verdict: Verdict::Mismatch,
            stream_bytes: 0x1234,
            sha256: [0xab; 32],
            reason: "no".into(),
        };
        let d = emit(&h, &c.emit());
        let mut want = vec![b'J', b'N', 2, 3, 5, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8];
        want.extend_from_slice(&[2, 0, 0, 0, 0, 0, 0, 0x12, 0x34]);
        want.extend_from_slice(&[0xab; 32]);
        want.extend_from_slice(b"no");
        assert_eq!(d, want);
        let (h2, p) = parse(&d).unwrap();
        assert_eq!(h2, h);
        assert_eq!(CloseRepr::parse(p), Ok(Some(c)));
        assert_eq!(CloseRepr::parse(&[]), Ok(None));
    }

    #[test]
    fn version_1_datagrams_are_refused_as_another_version() {
        let mut d = emit(
            &Header {
                kind: Kind::Hello,
                protocol: Protocol::named("udp"),
                conn_id: 1,
            },
            &[0; 16],
        );
        d[2] = 1;
        assert_eq!(parse(&d), Err(FrameError::BadVersion(1)));
    }

    #[test]
    fn malformed_payloads_are_errors() {
        assert_eq!(parse_hello(&[1; 15]), Err(FrameError::NoToken(15)));
        assert_eq!(parse_hello(&[0; 16]), Ok((None, &[][..])));
        assert_eq!(parse_hello(&[7; 18]), Ok((Some([7; 16]), &[7u8, 7][..])));
        assert_eq!(parse_retry(&[1; 17]), Err(FrameError::NoToken(17)));
        assert_eq!(CloseRepr::parse(&[1; 40]), Err(FrameError::BadClose));
        let mut c = vec![9u8; CLOSE_FIXED_LEN];
        assert_eq!(CloseRepr::parse(&c), Err(FrameError::BadVerdict(9)));
        c[0] = 1;
        c.extend_from_slice(&[0xff, 0xfe]);
        assert_eq!(CloseRepr::parse(&c), Err(FrameError::BadReason));
        c.truncate(CLOSE_FIXED_LEN);
        c.extend(std::iter::repeat_n(b'x', MAX_REASON + 1));
        assert_eq!(CloseRepr::parse(&c), Err(FrameError::BadReason));
        // A long reason is cut, never sent over the bound.
        let long = CloseRepr {
            verdict: Verdict::Incomplete,
            stream_bytes: 0,
            sha256: [0; 32],
            reason: "é".repeat(MAX_REASON),
        };
        let e = long.emit();
        assert!(e.len() <= CLOSE_FIXED_LEN + MAX_REASON);
        assert!(CloseRepr::parse(&e).unwrap().is_some());
    }

    proptest! {
        #[test]
        fn payload_parsers_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let _ = parse_hello(&bytes);
            let _ = parse_retry(&bytes);
            let _ = CloseRepr::parse(&bytes);
            let _ = QueryRepr::parse(&bytes);
            let _ = OfferRepr::parse(&bytes);
        }

        #[test]
        fn query_and_offer_round_trip(size in any::<u64>(), b in any::<u8>(), name in "[a-z.]{1,40}", len in any::<u64>()) {
            let q = QueryRepr { token: Some([b | 1; TOKEN_LEN]), size, sha256: [b; 32], name };
            prop_assert_eq!(QueryRepr::parse(&q.emit()), Ok(q));
            let o = OfferRepr { prefix_len: len, prefix_sha256: [b; 32] };
            prop_assert_eq!(OfferRepr::parse(&o.emit()), Ok(o));
        }
    }
}
