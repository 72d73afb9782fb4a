//! Runtime framing: the 16-byte header in front of every agent packet in a
//! UDP datagram (documented in `docs/wire.md`, "Runtime framing").
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
//! [`parse`] returns an error, never panics, on any input.

use core::fmt;

use joulenet_proto::tcp::TcpVariant;

pub const MAGIC: [u8; 2] = *b"JN";
pub const VERSION: u8 = 1;
pub const HEADER_LEN: usize = 16;

/// What a datagram is for.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A packet of a connection the receiver may not know yet: the server
    /// creates the connection on the first one (a client sends `Hello` until
    /// it has heard from the server).
    Hello,
    /// A packet of an established connection.
    Data,
    /// The sender is done with the connection and has freed it.
    Close,
    /// The server refuses the connection (too many connections, or a
    /// protocol it does not serve); the payload is a UTF-8 reason.
    Refused,
}

impl Kind {
    pub const fn code(self) -> u8 {
        match self {
            Kind::Hello => 1,
            Kind::Data => 2,
            Kind::Close => 3,
            Kind::Refused => 4,
        }
    }
    pub const fn from_code(code: u8) -> Option<Kind> {
        Some(match code {
            1 => Kind::Hello,
            2 => Kind::Data,
            3 => Kind::Close,
            4 => Kind::Refused,
            _ => return None,
        })
    }
}

/// The transport protocol of a connection.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Protocol {
    Tcp(TcpVariant),
    Udp,
    /// Wave & Wait (`joulenet_proto::wwp`).
    Wwp,
    /// E2TCP end to end (`joulenet_proto::e2tcp`; no split proxy).
    E2tcp,
    /// RCP with NewReno at the receiver (`joulenet_proto::rcp`).
    Rcp,
    /// RCP-STP: the STP-like controller and batched requests.
    RcpStp,
    /// Hop-by-hop TCP: NewReno at the ends, and every `joulenet relay` on
    /// the path terminates the connection and opens the next hop.
    HbhTcp,
}

impl Protocol {
    pub const ALL: [Protocol; 11] = [
        Protocol::Tcp(TcpVariant::Tahoe),
        Protocol::Tcp(TcpVariant::Reno),
        Protocol::Tcp(TcpVariant::NewReno),
        Protocol::Tcp(TcpVariant::Sack),
        Protocol::Tcp(TcpVariant::Cubic),
        Protocol::Udp,
        Protocol::Wwp,
        Protocol::E2tcp,
        Protocol::Rcp,
        Protocol::RcpStp,
        Protocol::HbhTcp,
    ];

    /// The protocols that repair losses (files can be sent over them).
    pub fn reliable() -> impl Iterator<Item = Protocol> {
        Protocol::ALL.into_iter().filter(|p| p.is_reliable())
    }

    pub const fn code(self) -> u8 {
        match self {
            Protocol::Tcp(TcpVariant::Tahoe) => 1,
            Protocol::Tcp(TcpVariant::Reno) => 2,
            Protocol::Tcp(TcpVariant::NewReno) => 3,
            Protocol::Tcp(TcpVariant::Sack) => 4,
            Protocol::Tcp(TcpVariant::Cubic) => 5,
            Protocol::Udp => 16,
            Protocol::Wwp => 17,
            Protocol::E2tcp => 18,
            Protocol::Rcp => 19,
            Protocol::RcpStp => 20,
            Protocol::HbhTcp => 21,
        }
    }

    pub fn from_code(code: u8) -> Option<Protocol> {
        Protocol::ALL.into_iter().find(|p| p.code() == code)
    }

    pub fn name(self) -> &'static str {
        match self {
            Protocol::Tcp(v) => v.name(),
            Protocol::Udp => "udp",
            Protocol::Wwp => "wwp",
            Protocol::E2tcp => "e2tcp",
            Protocol::Rcp => "rcp",
            Protocol::RcpStp => "rcp-stp",
            Protocol::HbhTcp => "hbh-tcp",
        }
    }

    /// Whether the protocol repairs losses (a file can be sent over it).
    pub fn is_reliable(self) -> bool {
        !matches!(self, Protocol::Udp)
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
        if s.eq_ignore_ascii_case("rcp-eln") {
            // ELN is the receiver's link layer handing RCP the header of a
            // frame it received corrupted; a UDP socket never sees such a frame.
            return Err(
                "rcp-eln needs explicit loss notification from the receiver's \
                        link layer, which a UDP socket cannot provide; use rcp or rcp-stp"
                    .into(),
            );
        }
        Protocol::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| {
                let names: Vec<&str> = Protocol::ALL.iter().map(|p| p.name()).collect();
                format!("unknown protocol {s:?} (expected {})", names.join(", "))
            })
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn round_trip_every_kind_and_protocol() {
        for protocol in Protocol::ALL {
            for kind in [Kind::Hello, Kind::Data, Kind::Close, Kind::Refused] {
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
            protocol: Protocol::Udp,
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
        for p in Protocol::ALL {
            assert_eq!(p.name().parse::<Protocol>(), Ok(p));
        }
        assert!("bbr".parse::<Protocol>().is_err());
        let eln = "rcp-eln".parse::<Protocol>().unwrap_err();
        assert!(eln.contains("link layer"), "{eln}");
        // Codes are distinct.
        let mut codes: Vec<u8> = Protocol::ALL.iter().map(|p| p.code()).collect();
        codes.sort();
        codes.dedup();
        assert_eq!(codes.len(), Protocol::ALL.len());
    }

    proptest! {
        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = parse(&bytes);
        }

        #[test]
        fn round_trip_any(kind in 1u8..=4, proto in 0usize..Protocol::ALL.len(), id in 1u64.., payload in proptest::collection::vec(any::<u8>(), 0..100)) {
            let h = Header { kind: Kind::from_code(kind).unwrap(), protocol: Protocol::ALL[proto], conn_id: id };
            let d = emit(&h, &payload);
            let (h2, p2) = parse(&d).unwrap();
            prop_assert_eq!(h2, h);
            prop_assert_eq!(p2, &payload[..]);
        }

        #[test]
        fn header_prefix_mutations_never_panic(id in 1u64.., i in 0usize..16, b in any::<u8>()) {
            let mut d = emit(&Header { kind: Kind::Data, protocol: Protocol::Udp, conn_id: id }, b"x");
            d[i] = b;
            let _ = parse(&d);
        }
    }
}
