//! Wave & Wait Protocol (WWP) segment: a fixed 6-byte header on every
//! segment, data and control alike (Tsaoussidis et al., §3.2).
//!
//! ```text
//!  0       4       8              16                              40      48
//! +-------+-------+---------------+-------------------------------+-------+
//! | type  | level |      id       |        seq (24 bits)          |  aux  |
//! +-------+-------+---------------+-------------------------------+-------+
//! | payload: DATA = application bytes (fixed size, the last may be short);
//! |          NS_ACK = missing ranges, 4 bytes each: start (24 bits), count (8 bits)
//! ```
//!
//! | type | name    | level        | id                     | seq                 | aux |
//! |------|---------|--------------|------------------------|---------------------|-----|
//! | 1    | SYN     | 0            | 0                      | initial segment number | 0 |
//! | 2    | SYN_ACK | 0            | 0                      | 0                   | 0 |
//! | 3    | DATA    | wave level   | index in wave          | segment number      | wave size (segments) |
//! | 4    | NS_ACK  | next level   | echo of PROBE3's seq (low 8 bits) or 0 | next = 1 + highest segment received | flags: bit0 answers a probe cycle |
//! | 5    | PROBE1  | 0            | 0                      | probe seq           | flags: bit0 resent on PROBE_T |
//! | 6    | PR1_ACK | 0            | 0                      | echoed PROBE1 seq   | 0 |
//! | 7    | PROBE2  | 0            | echoed PR1_ACK seq (low 8 bits), 0 if resent | probe seq  | flags: bit0 resent on PROBE_T |
//! | 8    | PR2_ACK | 0            | 0                      | echoed PROBE2 seq   | 0 |
//! | 9    | PROBE3  | 0            | echoed PR2_ACK seq (low 8 bits), 0 if resent | probe seq  | flags: bit0 resent on PROBE_T |
//! | 10   | FIN     | 0            | 0                      | one past the last segment | 0 |
//! | 11   | FIN_ACK | 0            | 0                      | echoed FIN seq      | 0 |
//!
//! Segment and probe numbers are 24-bit serial numbers (RFC 1982): they
//! wrap, and the ends read them relative to what they expect.

use crate::{Error, Result};

pub const HEADER_LEN: usize = 6;
/// One missing range in an N-S ACK payload.
pub const RANGE_LEN: usize = 4;
/// Largest 24-bit sequence number.
pub const SEQ_MAX: u32 = (1 << 24) - 1;

mod field {
    pub const TYPE_LEVEL: usize = 0;
    pub const ID: usize = 1;
    pub const SEQ: core::ops::Range<usize> = 2..5;
    pub const AUX: usize = 5;
}

/// Segment types.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum WwpType {
    Syn = 1,
    SynAck = 2,
    Data = 3,
    NsAck = 4,
    Probe1 = 5,
    Pr1Ack = 6,
    Probe2 = 7,
    Pr2Ack = 8,
    Probe3 = 9,
    Fin = 10,
    FinAck = 11,
}

impl WwpType {
    pub fn from_u8(v: u8) -> Option<WwpType> {
        use WwpType::*;
        Some(match v {
            1 => Syn,
            2 => SynAck,
            3 => Data,
            4 => NsAck,
            5 => Probe1,
            6 => Pr1Ack,
            7 => Probe2,
            8 => Pr2Ack,
            9 => Probe3,
            10 => Fin,
            11 => FinAck,
            _ => return None,
        })
    }
}

/// N-S ACK flag: this N-S ACK ends a probe cycle (answers a PROBE3).
pub const NS_FLAG_PROBE: u8 = 0x01;

/// Probe flag: the sender resent this probe when PROBE_T expired; it
/// answers no PR ACK, so the receiver must not time a round trip by it
/// (the paper pairs each probe with the acknowledgment it answers "so that
/// RTTs \[are\] correctly measured").
pub const PROBE_FLAG_RESENT: u8 = 0x01;

/// A read-only view of a WWP segment.
#[derive(Debug)]
pub struct WwpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> WwpPacket<T> {
    /// Wrap a buffer, checking the header length, the type and the payload
    /// rules (control segments other than N-S ACK carry no payload; an N-S
    /// ACK payload is a whole number of ranges).
    pub fn new_checked(buffer: T) -> Result<WwpPacket<T>> {
        let p = WwpPacket { buffer };
        let b = p.buffer.as_ref();
        if b.len() < HEADER_LEN {
            return Err(Error::Truncated);
        }
        let ty = WwpType::from_u8(b[field::TYPE_LEVEL] >> 4).ok_or(Error::Malformed)?;
        let payload = b.len() - HEADER_LEN;
        match ty {
            WwpType::Data => {
                let size = b[field::AUX];
                if size == 0 || b[field::ID] >= size || payload == 0 {
                    return Err(Error::Malformed);
                }
            }
            WwpType::NsAck => {
                if !payload.is_multiple_of(RANGE_LEN) {
                    return Err(Error::Malformed);
                }
            }
            _ => {
                if payload != 0 {
                    return Err(Error::Malformed);
                }
            }
        }
        Ok(p)
    }
    pub fn kind(&self) -> WwpType {
        WwpType::from_u8(self.buffer.as_ref()[field::TYPE_LEVEL] >> 4).expect("checked")
    }
    pub fn level(&self) -> u8 {
        self.buffer.as_ref()[field::TYPE_LEVEL] & 0x0f
    }
    pub fn id(&self) -> u8 {
        self.buffer.as_ref()[field::ID]
    }
    pub fn seq(&self) -> u32 {
        let b = &self.buffer.as_ref()[field::SEQ];
        u32::from_be_bytes([0, b[0], b[1], b[2]])
    }
    pub fn aux(&self) -> u8 {
        self.buffer.as_ref()[field::AUX]
    }
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[HEADER_LEN..]
    }
}

/// A run of `count` consecutive missing segments starting at `start`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct MissingRange {
    pub start: u32,
    pub count: u8,
}

/// A parsed WWP segment header (the payload stays in the buffer, except the
/// N-S ACK's missing ranges, which are decoded by [`WwpRepr::missing`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct WwpRepr {
    pub kind: WwpType,
    pub level: u8,
    pub id: u8,
    pub seq: u32,
    pub aux: u8,
}

impl WwpRepr {
    pub fn new(kind: WwpType) -> WwpRepr {
        WwpRepr {
            kind,
            level: 0,
            id: 0,
            seq: 0,
            aux: 0,
        }
    }

    pub fn parse<T: AsRef<[u8]>>(p: &WwpPacket<T>) -> WwpRepr {
        WwpRepr {
            kind: p.kind(),
            level: p.level(),
            id: p.id(),
            seq: p.seq(),
            aux: p.aux(),
        }
    }

    /// Append the header and `payload` to `out`. Fails if a field is out of
    /// range (level > 15, seq > 2^24 − 1).
    pub fn emit(&self, payload: &[u8], out: &mut Vec<u8>) -> Result<()> {
        if self.level > 15 || self.seq > SEQ_MAX {
            return Err(Error::Malformed);
        }
        out.push(((self.kind as u8) << 4) | self.level);
        out.push(self.id);
        out.extend_from_slice(&self.seq.to_be_bytes()[1..]);
        out.push(self.aux);
        out.extend_from_slice(payload);
        Ok(())
    }

    /// Decode an N-S ACK payload into missing ranges.
    pub fn missing(payload: &[u8]) -> Result<Vec<MissingRange>> {
        if !payload.len().is_multiple_of(RANGE_LEN) {
            return Err(Error::Malformed);
        }
        payload
            .chunks_exact(RANGE_LEN)
            .map(|c| {
                let r = MissingRange {
                    start: u32::from_be_bytes([0, c[0], c[1], c[2]]),
                    count: c[3],
                };
                if r.count == 0 {
                    Err(Error::Malformed)
                } else {
                    Ok(r)
                }
            })
            .collect()
    }

    /// Encode missing ranges as an N-S ACK payload.
    pub fn emit_missing(ranges: &[MissingRange], out: &mut Vec<u8>) -> Result<()> {
        for r in ranges {
            if r.start > SEQ_MAX || r.count == 0 {
                return Err(Error::Malformed);
            }
            out.extend_from_slice(&r.start.to_be_bytes()[1..]);
            out.push(r.count);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn data_segment_layout_is_byte_exact() {
        let mut out = Vec::new();
        let r = WwpRepr {
            kind: WwpType::Data,
            level: 3,
            id: 5,
            seq: 0x01_02_03,
            aux: 36,
        };
        r.emit(&[0xaa; 4], &mut out).unwrap();
        assert_eq!(&out[..6], &[0x33, 5, 1, 2, 3, 36]);
        let p = WwpPacket::new_checked(&out[..]).unwrap();
        assert_eq!(WwpRepr::parse(&p), r);
        assert_eq!(p.payload(), &[0xaa; 4]);
    }

    #[test]
    fn ns_ack_ranges_round_trip() {
        let ranges = vec![
            MissingRange { start: 7, count: 2 },
            MissingRange {
                start: SEQ_MAX,
                count: 255,
            },
        ];
        let mut payload = Vec::new();
        WwpRepr::emit_missing(&ranges, &mut payload).unwrap();
        let mut out = Vec::new();
        let mut r = WwpRepr::new(WwpType::NsAck);
        r.level = 2;
        r.seq = 100;
        r.aux = NS_FLAG_PROBE;
        r.emit(&payload, &mut out).unwrap();
        let p = WwpPacket::new_checked(&out[..]).unwrap();
        assert_eq!(WwpRepr::parse(&p), r);
        assert_eq!(WwpRepr::missing(p.payload()).unwrap(), ranges);
    }

    #[test]
    fn malformed_inputs_are_rejected() {
        assert_eq!(
            WwpPacket::new_checked(&[0x30u8; 5][..]).unwrap_err(),
            Error::Truncated
        );
        // Unknown type 0 and 12.
        assert!(WwpPacket::new_checked(&[0x00u8, 0, 0, 0, 0, 0][..]).is_err());
        assert!(WwpPacket::new_checked(&[0xc0u8, 0, 0, 0, 0, 0][..]).is_err());
        // Data with an index beyond the wave size, or no payload.
        assert!(WwpPacket::new_checked(&[0x31u8, 3, 0, 0, 1, 3, 9][..]).is_err());
        assert!(WwpPacket::new_checked(&[0x31u8, 0, 0, 0, 1, 3][..]).is_err());
        // A probe with a payload; an N-S ACK with a partial range.
        assert!(WwpPacket::new_checked(&[0x50u8, 0, 0, 0, 1, 0, 1][..]).is_err());
        assert!(WwpPacket::new_checked(&[0x40u8, 0, 0, 0, 1, 0, 1, 2][..]).is_err());
        assert!(WwpRepr::missing(&[0, 0, 1, 0]).is_err());
        // Emit refuses out-of-range fields.
        let mut r = WwpRepr::new(WwpType::Fin);
        r.seq = SEQ_MAX + 1;
        assert!(r.emit(&[], &mut Vec::new()).is_err());
    }

    proptest! {
        #[test]
        fn parser_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            if let Ok(p) = WwpPacket::new_checked(&bytes[..]) {
                let r = WwpRepr::parse(&p);
                let mut out = Vec::new();
                r.emit(p.payload(), &mut out).unwrap();
                prop_assert_eq!(&out[..], &bytes[..]);
                if r.kind == WwpType::NsAck { let _ = WwpRepr::missing(p.payload()); }
            }
        }

        #[test]
        fn header_round_trips(ty in 1u8..=11, level in 0u8..16, id in any::<u8>(), seq in 0..=SEQ_MAX, aux in 1u8..=255) {
            let kind = WwpType::from_u8(ty).unwrap();
            let r = WwpRepr { kind, level, id: if kind == WwpType::Data { id % aux } else { id }, seq, aux };
            let payload: &[u8] = if kind == WwpType::Data { &[1, 2, 3] } else { &[] };
            let mut out = Vec::new();
            r.emit(payload, &mut out).unwrap();
            prop_assert_eq!(out.len(), HEADER_LEN + payload.len());
            let p = WwpPacket::new_checked(&out[..]).unwrap();
            prop_assert_eq!(WwpRepr::parse(&p), r);
        }
    }
}
