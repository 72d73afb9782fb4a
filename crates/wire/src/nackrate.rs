//! nackrate (joulenet's own protocol, not from the papers): a rate-paced
//! sender repaired by NACK ranges. Two packet kinds share an 8-byte prefix:
//!
//! ```text
//!  0       4       8               16                              32
//! +-------+-------+---------------+-------------------------------+
//! |version| kind  |     flags     |           checksum            |  0
//! +-------+-------+---------------+-------------------------------+
//! |                       connection id (32)                      |  4
//! +---------------------------------------------------------------+
//! DATA (kind 1):
//! |                       packet number (32)                      |  8
//! |                 stream offset (64) …                          | 12
//! |                 … stream offset                               | 16
//! | payload …                                                     | 20
//! ACK (kind 2):
//! |            largest packet number received (32)                |  8
//! |                ack delay (32, microseconds)                   | 12
//! |        receiver time (32, microseconds, wrapping)             | 16
//! |   data bytes received, duplicates included (32, wrapping)     | 20
//! |  data packets received, duplicates included (32, wrapping)    | 24
//! |                 cumulative offset (64) …                      | 28
//! |                 … cumulative offset                           | 32
//! |      span: bytes above the cumulative offset reported (32)    | 36
//! |        range count (16)       | n × { start − cum (32), length (32) } 40
//! ```
//!
//! Every ACK repeats the receiver's whole state: everything below the
//! cumulative offset arrived; in `[cum, cum + span)` everything arrived
//! except the listed ranges (missing bytes, ascending, disjoint); above
//! `cum + span` nothing is reported. A lost ACK therefore costs nothing:
//! the next one says all it said. The counters let the sender measure the
//! rate at which its packets arrive, on the receiver's clock.
//!
//! Every field is big-endian; the checksum is the Internet checksum of the
//! whole packet with the checksum field zero. See docs/wire.md.

use crate::checksum;
use crate::{Error, Result};

/// The header version this module reads and writes.
pub const VERSION: u8 = 1;
/// IPv4 protocol number it travels behind in captures (experimental).
pub const PROTOCOL: u8 = 253;
pub const PREFIX_LEN: usize = 8;
pub const DATA_HEADER_LEN: usize = 20;
/// An ACK without ranges.
pub const ACK_HEADER_LEN: usize = 42;
pub const RANGE_LEN: usize = 8;

mod kind {
    pub const DATA: u8 = 1;
    pub const ACK: u8 = 2;
}

pub mod flags {
    /// DATA: the stream ends with this packet's last byte (an empty DATA
    /// packet with FIN marks the end at its offset). ACK: the receiver has
    /// the whole stream, its end included.
    pub const FIN: u8 = 0x01;
    /// DATA: a retransmission (informational: captures tell repairs apart).
    pub const RETX: u8 = 0x02;
    pub const DATA_ALL: u8 = FIN | RETX;
    pub const ACK_ALL: u8 = FIN;
}

/// A data packet's header fields.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct DataRepr {
    pub fin: bool,
    pub retransmission: bool,
    pub conn_id: u32,
    /// A new number for every transmission, retransmissions included.
    pub packet_number: u32,
    /// Stream offset of the first payload byte.
    pub offset: u64,
}

/// An ACK: the receiver's whole state.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AckRepr {
    /// The receiver has the whole stream.
    pub fin: bool,
    pub conn_id: u32,
    pub largest_packet: u32,
    /// Time from the arrival of `largest_packet` to this ACK, µs.
    pub ack_delay_us: u32,
    /// The receiver's clock when it sent this ACK, µs (wraps).
    pub receiver_time_us: u32,
    /// Transport bytes and packets of data received so far, duplicates
    /// included (both wrap).
    pub received_bytes: u32,
    pub received_packets: u32,
    pub cumulative: u64,
    pub span: u32,
    /// Missing ranges `(start, end)` as absolute stream offsets, ascending,
    /// disjoint, non-empty, within `[cumulative, cumulative + span)`.
    pub missing: Vec<(u64, u64)>,
}

/// A parsed packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Repr {
    Data(DataRepr),
    Ack(AckRepr),
}

/// A checked, read-only view of a packet.
#[derive(Debug)]
pub struct NackratePacket<T: AsRef<[u8]>> {
    buffer: T,
}

fn u16_at(b: &[u8], i: usize) -> u16 {
    u16::from_be_bytes([b[i], b[i + 1]])
}
fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}
fn u64_at(b: &[u8], i: usize) -> u64 {
    (u32_at(b, i) as u64) << 32 | u32_at(b, i + 4) as u64
}

impl<T: AsRef<[u8]>> NackratePacket<T> {
    /// Checks version, kind, flags, lengths and the checksum, so that
    /// [`Repr::parse`] may read every field.
    pub fn new_checked(buffer: T) -> Result<NackratePacket<T>> {
        let b = buffer.as_ref();
        if b.len() < PREFIX_LEN {
            return Err(Error::Truncated);
        }
        if b[0] >> 4 != VERSION {
            return Err(Error::Malformed);
        }
        let (min, allowed) = match b[0] & 0x0f {
            kind::DATA => (DATA_HEADER_LEN, flags::DATA_ALL),
            kind::ACK => (ACK_HEADER_LEN, flags::ACK_ALL),
            _ => return Err(Error::Malformed),
        };
        if b[1] & !allowed != 0 {
            return Err(Error::Malformed);
        }
        if b.len() < min {
            return Err(Error::Truncated);
        }
        if b[0] & 0x0f == kind::ACK {
            let n = u16_at(b, 40) as usize;
            if b.len() != ACK_HEADER_LEN + n * RANGE_LEN {
                return Err(if b.len() < ACK_HEADER_LEN + n * RANGE_LEN {
                    Error::Truncated
                } else {
                    Error::Malformed
                });
            }
        } else if b.len() == DATA_HEADER_LEN && b[1] & flags::FIN == 0 {
            // Only the end of the stream may travel without payload.
            return Err(Error::Malformed);
        }
        if checksum::data(b) != 0 {
            return Err(Error::Checksum);
        }
        Ok(NackratePacket { buffer })
    }

    /// A data packet's payload (empty for an ACK).
    pub fn payload(&self) -> &[u8] {
        let b = self.buffer.as_ref();
        if b[0] & 0x0f == kind::DATA {
            &b[DATA_HEADER_LEN..]
        } else {
            &[]
        }
    }
}

impl Repr {
    pub fn parse<T: AsRef<[u8]>>(p: &NackratePacket<T>) -> Result<Repr> {
        let b = p.buffer.as_ref();
        let conn_id = u32_at(b, 4);
        if b[0] & 0x0f == kind::DATA {
            return Ok(Repr::Data(DataRepr {
                fin: b[1] & flags::FIN != 0,
                retransmission: b[1] & flags::RETX != 0,
                conn_id,
                packet_number: u32_at(b, 8),
                offset: u64_at(b, 12),
            }));
        }
        let cumulative = u64_at(b, 28);
        let span = u32_at(b, 36);
        let mut missing = Vec::with_capacity(u16_at(b, 40) as usize);
        let mut floor = 0u64;
        for i in (ACK_HEADER_LEN..b.len()).step_by(RANGE_LEN) {
            let (start, len) = (u32_at(b, i) as u64, u32_at(b, i + 4) as u64);
            if len == 0 || start < floor || start + len > span as u64 {
                return Err(Error::Malformed);
            }
            floor = start + len;
            let at = cumulative.checked_add(start).ok_or(Error::Malformed)?;
            missing.push((at, at + len));
        }
        cumulative
            .checked_add(span as u64)
            .ok_or(Error::Malformed)?;
        Ok(Repr::Ack(AckRepr {
            fin: b[1] & flags::FIN != 0,
            conn_id,
            largest_packet: u32_at(b, 8),
            ack_delay_us: u32_at(b, 12),
            receiver_time_us: u32_at(b, 16),
            received_bytes: u32_at(b, 20),
            received_packets: u32_at(b, 24),
            cumulative,
            span,
            missing,
        }))
    }
}

fn finish(out: &mut [u8]) {
    let sum = checksum::data(out);
    out[2..4].copy_from_slice(&sum.to_be_bytes());
}

impl DataRepr {
    /// Appends the packet (header, payload, checksum) to `out`. Fails on an
    /// empty payload without FIN, which the parser would refuse.
    pub fn emit(&self, payload: &[u8], out: &mut Vec<u8>) -> Result<()> {
        if payload.is_empty() && !self.fin {
            return Err(Error::Malformed);
        }
        let start = out.len();
        let mut f = 0;
        if self.fin {
            f |= flags::FIN;
        }
        if self.retransmission {
            f |= flags::RETX;
        }
        out.extend_from_slice(&[VERSION << 4 | kind::DATA, f, 0, 0]);
        out.extend_from_slice(&self.conn_id.to_be_bytes());
        out.extend_from_slice(&self.packet_number.to_be_bytes());
        out.extend_from_slice(&self.offset.to_be_bytes());
        out.extend_from_slice(payload);
        finish(&mut out[start..]);
        Ok(())
    }
}

impl AckRepr {
    pub fn buffer_len(&self) -> usize {
        ACK_HEADER_LEN + self.missing.len() * RANGE_LEN
    }

    /// Appends the ACK to `out`. Fails if the ranges are not ascending,
    /// disjoint, non-empty and within the span, or more than 65 535.
    pub fn emit(&self, out: &mut Vec<u8>) -> Result<()> {
        if self.missing.len() > u16::MAX as usize {
            return Err(Error::Malformed);
        }
        let top = self.cumulative + self.span as u64;
        let mut floor = self.cumulative;
        for &(s, e) in &self.missing {
            if s < floor || e <= s || e > top {
                return Err(Error::Malformed);
            }
            floor = e;
        }
        let start = out.len();
        let f = if self.fin { flags::FIN } else { 0 };
        out.extend_from_slice(&[VERSION << 4 | kind::ACK, f, 0, 0]);
        for v in [
            self.conn_id,
            self.largest_packet,
            self.ack_delay_us,
            self.receiver_time_us,
            self.received_bytes,
            self.received_packets,
        ] {
            out.extend_from_slice(&v.to_be_bytes());
        }
        out.extend_from_slice(&self.cumulative.to_be_bytes());
        out.extend_from_slice(&self.span.to_be_bytes());
        out.extend_from_slice(&(self.missing.len() as u16).to_be_bytes());
        for &(s, e) in &self.missing {
            out.extend_from_slice(&((s - self.cumulative) as u32).to_be_bytes());
            out.extend_from_slice(&((e - s) as u32).to_be_bytes());
        }
        finish(&mut out[start..]);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn parse(b: &[u8]) -> Result<Repr> {
        Repr::parse(&NackratePacket::new_checked(b)?)
    }

    #[test]
    fn data_golden_bytes() {
        let r = DataRepr {
            fin: true,
            retransmission: true,
            conn_id: 0x0102_0304,
            packet_number: 7,
            offset: 0x1_0000_0002,
        };
        let mut out = Vec::new();
        r.emit(b"hi", &mut out).unwrap();
        let mut golden = vec![
            0x11, 0x03, 0, 0, 1, 2, 3, 4, 0, 0, 0, 7, 0, 0, 0, 1, 0, 0, 0, 2, b'h', b'i',
        ];
        let sum = checksum::data(&golden);
        golden[2..4].copy_from_slice(&sum.to_be_bytes());
        assert_eq!(out, golden);
        assert_eq!(&out[2..4], &[0x82, 0x83]);
        assert_eq!(parse(&out).unwrap(), Repr::Data(r));
        assert_eq!(
            NackratePacket::new_checked(&out[..]).unwrap().payload(),
            b"hi"
        );
    }

    #[test]
    fn ack_golden_bytes() {
        let r = AckRepr {
            fin: false,
            conn_id: 9,
            largest_packet: 300,
            ack_delay_us: 1000,
            receiver_time_us: 0xffff_fff0,
            received_bytes: 14_200,
            received_packets: 10,
            cumulative: 2800,
            span: 7000,
            missing: vec![(2800, 4200), (5600, 7000)],
        };
        let mut out = Vec::new();
        r.emit(&mut out).unwrap();
        assert_eq!(out.len(), 42 + 16);
        assert_eq!(r.buffer_len(), out.len());
        let mut golden = vec![0x12, 0x00, 0, 0, 0, 0, 0, 9];
        for v in [300u32, 1000, 0xffff_fff0, 14_200, 10] {
            golden.extend_from_slice(&v.to_be_bytes());
        }
        golden.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0x0a, 0xf0]); // 2800
        golden.extend_from_slice(&[0, 0, 0x1b, 0x58, 0, 2]); // span 7000, 2 ranges
        golden.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0x05, 0x78]); // +0, 1400
        golden.extend_from_slice(&[0, 0, 0x0a, 0xf0, 0, 0, 0x05, 0x78]); // +2800, 1400
        let sum = checksum::data(&golden);
        golden[2..4].copy_from_slice(&sum.to_be_bytes());
        assert_eq!(out, golden);
        assert_eq!(&out[2..4], &[0x75, 0x45]);
        assert_eq!(parse(&out).unwrap(), Repr::Ack(r));
    }

    #[test]
    fn malformed_inputs_are_rejected() {
        assert_eq!(parse(&[0x11, 0, 0]).unwrap_err(), Error::Truncated);
        // Version 2, kind 3, an unknown flag.
        assert_eq!(
            parse(&[0x21, 0, 0, 0, 0, 0, 0, 0]).unwrap_err(),
            Error::Malformed
        );
        assert_eq!(
            parse(&[0x13, 0, 0, 0, 0, 0, 0, 0]).unwrap_err(),
            Error::Malformed
        );
        let mut d = Vec::new();
        DataRepr::default().emit(b"x", &mut d).unwrap();
        let mut bad = d.clone();
        bad[1] = 0x80;
        assert_eq!(parse(&bad).unwrap_err(), Error::Malformed);
        // Empty payload without FIN.
        assert!(DataRepr::default().emit(b"", &mut Vec::new()).is_err());
        assert_eq!(parse(&d[..20]).unwrap_err(), Error::Malformed);
        // Flipped payload bit.
        let mut flipped = d.clone();
        flipped[20] ^= 1;
        assert_eq!(parse(&flipped).unwrap_err(), Error::Checksum);
        // ACK: a range count past the end; overlapping, empty, beyond span.
        let ack = AckRepr {
            cumulative: 100,
            span: 50,
            missing: vec![(100, 110), (120, 130)],
            ..AckRepr::default()
        };
        let mut a = Vec::new();
        ack.emit(&mut a).unwrap();
        assert_eq!(parse(&a[..a.len() - 1]).unwrap_err(), Error::Truncated);
        let mut extra = a.clone();
        extra.push(0);
        assert_eq!(parse(&extra).unwrap_err(), Error::Malformed);
        for missing in [
            vec![(100, 110), (105, 130)],
            vec![(110, 110)],
            vec![(140, 151)],
        ] {
            let r = AckRepr {
                missing,
                ..ack.clone()
            };
            assert!(r.emit(&mut Vec::new()).is_err());
        }
        // The same faults forged on the wire, checksum fixed up.
        let mut forged = a.clone();
        forged[42 + 8..42 + 12].copy_from_slice(&5u32.to_be_bytes());
        forged[2..4].copy_from_slice(&[0, 0]);
        let sum = checksum::data(&forged);
        forged[2..4].copy_from_slice(&sum.to_be_bytes());
        assert_eq!(parse(&forged).unwrap_err(), Error::Malformed);
    }

    proptest! {
        #[test]
        fn parser_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
            let _ = parse(&bytes);
        }

        #[test]
        fn ack_round_trips(cum in 0u64..1 << 40, gaps in proptest::collection::vec((0u32..5000, 1u32..5000), 0..20),
                           fin: bool, id: u32, pn: u32, t: u32, rb: u32, rp: u32) {
            let mut at = cum;
            let mut missing = Vec::new();
            for (skip, len) in gaps {
                let s = at + skip as u64;
                missing.push((s, s + len as u64));
                at = s + len as u64;
            }
            let r = AckRepr { fin, conn_id: id, largest_packet: pn, ack_delay_us: t / 2,
                receiver_time_us: t, received_bytes: rb, received_packets: rp,
                cumulative: cum, span: (at - cum) as u32 + 3, missing };
            let mut out = Vec::new();
            r.emit(&mut out).unwrap();
            prop_assert_eq!(out.len(), r.buffer_len());
            prop_assert_eq!(parse(&out).unwrap(), Repr::Ack(r));
        }

        #[test]
        fn data_round_trips(fin: bool, retx: bool, id: u32, pn: u32, off: u64,
                            payload in proptest::collection::vec(any::<u8>(), 1..40)) {
            let r = DataRepr { fin, retransmission: retx, conn_id: id, packet_number: pn, offset: off };
            let mut out = Vec::new();
            r.emit(&payload, &mut out).unwrap();
            let p = NackratePacket::new_checked(&out[..]).unwrap();
            prop_assert_eq!(p.payload(), &payload[..]);
            prop_assert_eq!(Repr::parse(&p).unwrap(), Repr::Data(r));
        }
    }
}
