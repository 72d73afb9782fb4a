//! E2TCP compact header (Donckers, Havinga, Smit & Smit): addresses and
//! ports only at connection set-up, a one-byte connection identifier after
//! that, a presence bitmap for the optional fields, and SACK blocks of two
//! 16-bit edges relative to the acknowledgement number.
//!
//! ```text
//!  0               1               2               3               4
//! +-+-+-+-+-+-+-+-+---------------+-------------------------------+
//! |S|F|Q|A|W|D| n |  conn id      |           checksum            |  always (4 bytes)
//! +-+-+-+-+-+-+-+-+---------------+-------------------------------+
//! | src node (32) | src port (16) | dst node (32) | dst port (16) |  if D (12 bytes)
//! | sequence number (32)                                          |  if Q
//! | acknowledgement number (32)                                   |  if A
//! | window (16, bytes)                                            |  if W
//! | n × { left − ack (16), right − ack (16) }                     |  n = 0..2 SACK blocks, needs A
//! | payload                                                       |
//! ```
//!
//! Bitmap: S = SYN (0x80), F = FIN (0x40), Q = sequence number present
//! (0x20), A = acknowledgement present (0x10), W = window present (0x08),
//! D = addresses present (0x04), n = SACK block count (0x03; 3 is invalid).
//! The checksum is the Internet checksum of the whole segment with the
//! checksum field zero. A data segment is 8 bytes of header (bitmap, id,
//! checksum, seq); a pure ACK 8, 12 or 16 bytes with 0, 1 or 2 SACK blocks.

use crate::checksum;
use crate::{Error, Result};

pub const MIN_HEADER_LEN: usize = 4;
pub const ADDR_LEN: usize = 12;
pub const MAX_SACK: usize = 2;

pub mod flags {
    pub const SYN: u8 = 0x80;
    pub const FIN: u8 = 0x40;
    pub const SEQ: u8 = 0x20;
    pub const ACK: u8 = 0x10;
    pub const WIN: u8 = 0x08;
    pub const ADDR: u8 = 0x04;
    pub const SACK_MASK: u8 = 0x03;
}

/// The endpoints, carried only while a connection is set up.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct E2tcpAddrs {
    pub src_node: u32,
    pub src_port: u16,
    pub dst_node: u32,
    pub dst_port: u16,
}

/// A parsed E2TCP segment. SACK blocks are absolute `[left, right)` sequence
/// numbers here; on the wire they are 16-bit offsets from `ack`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct E2tcpRepr {
    pub syn: bool,
    pub fin: bool,
    pub conn_id: u8,
    pub addrs: Option<E2tcpAddrs>,
    pub seq: Option<u32>,
    pub ack: Option<u32>,
    pub window: Option<u16>,
    pub sack: Vec<(u32, u32)>,
}

/// A read-only, checked view of an E2TCP segment.
#[derive(Debug)]
pub struct E2tcpPacket<T: AsRef<[u8]>> {
    buffer: T,
    header_len: usize,
}

fn header_len_for(bitmap: u8) -> usize {
    let mut n = MIN_HEADER_LEN;
    if bitmap & flags::ADDR != 0 {
        n += ADDR_LEN;
    }
    if bitmap & flags::SEQ != 0 {
        n += 4;
    }
    if bitmap & flags::ACK != 0 {
        n += 4;
    }
    if bitmap & flags::WIN != 0 {
        n += 2;
    }
    n + 4 * (bitmap & flags::SACK_MASK) as usize
}

impl<T: AsRef<[u8]>> E2tcpPacket<T> {
    /// Check the bitmap, the length and the checksum.
    pub fn new_checked(buffer: T) -> Result<E2tcpPacket<T>> {
        let b = buffer.as_ref();
        if b.len() < MIN_HEADER_LEN {
            return Err(Error::Truncated);
        }
        let bitmap = b[0];
        let n_sack = bitmap & flags::SACK_MASK;
        if n_sack as usize > MAX_SACK || (n_sack > 0 && bitmap & flags::ACK == 0) {
            return Err(Error::Malformed);
        }
        let header_len = header_len_for(bitmap);
        if b.len() < header_len {
            return Err(Error::Truncated);
        }
        if checksum::data(b) != 0 {
            return Err(Error::Checksum);
        }
        Ok(E2tcpPacket { buffer, header_len })
    }
    pub fn header_len(&self) -> usize {
        self.header_len
    }
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len..]
    }
}

fn u16_at(b: &[u8], i: usize) -> u16 {
    u16::from_be_bytes([b[i], b[i + 1]])
}
fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

impl E2tcpRepr {
    pub fn parse<T: AsRef<[u8]>>(p: &E2tcpPacket<T>) -> Result<E2tcpRepr> {
        let b = p.buffer.as_ref();
        let bitmap = b[0];
        let mut r = E2tcpRepr {
            syn: bitmap & flags::SYN != 0,
            fin: bitmap & flags::FIN != 0,
            conn_id: b[1],
            ..E2tcpRepr::default()
        };
        let mut i = MIN_HEADER_LEN;
        if bitmap & flags::ADDR != 0 {
            r.addrs = Some(E2tcpAddrs {
                src_node: u32_at(b, i),
                src_port: u16_at(b, i + 4),
                dst_node: u32_at(b, i + 6),
                dst_port: u16_at(b, i + 10),
            });
            i += ADDR_LEN;
        }
        if bitmap & flags::SEQ != 0 {
            r.seq = Some(u32_at(b, i));
            i += 4;
        }
        if bitmap & flags::ACK != 0 {
            r.ack = Some(u32_at(b, i));
            i += 4;
        }
        if bitmap & flags::WIN != 0 {
            r.window = Some(u16_at(b, i));
            i += 2;
        }
        let ack = r.ack.unwrap_or(0);
        for _ in 0..(bitmap & flags::SACK_MASK) {
            let (l, rt) = (u16_at(b, i), u16_at(b, i + 2));
            if l >= rt {
                return Err(Error::Malformed);
            }
            r.sack
                .push((ack.wrapping_add(l as u32), ack.wrapping_add(rt as u32)));
            i += 4;
        }
        Ok(r)
    }

    pub fn header_len(&self) -> usize {
        header_len_for(self.bitmap())
    }

    fn bitmap(&self) -> u8 {
        let mut m = self.sack.len().min(3) as u8;
        if self.syn {
            m |= flags::SYN;
        }
        if self.fin {
            m |= flags::FIN;
        }
        if self.seq.is_some() {
            m |= flags::SEQ;
        }
        if self.ack.is_some() {
            m |= flags::ACK;
        }
        if self.window.is_some() {
            m |= flags::WIN;
        }
        if self.addrs.is_some() {
            m |= flags::ADDR;
        }
        m
    }

    /// Append the segment (header, payload, checksum) to `out`. Fails if more
    /// than two SACK blocks are given, SACK without an ACK number, or a block
    /// edge is not within 65 535 bytes above the ACK number.
    pub fn emit(&self, payload: &[u8], out: &mut Vec<u8>) -> Result<()> {
        if self.sack.len() > MAX_SACK || (!self.sack.is_empty() && self.ack.is_none()) {
            return Err(Error::Malformed);
        }
        let ack = self.ack.unwrap_or(0);
        let mut edges = Vec::with_capacity(self.sack.len());
        for &(l, r) in &self.sack {
            let (lo, hi) = (l.wrapping_sub(ack), r.wrapping_sub(ack));
            if lo >= hi || hi > u16::MAX as u32 {
                return Err(Error::Malformed);
            }
            edges.push((lo as u16, hi as u16));
        }
        let start = out.len();
        out.push(self.bitmap());
        out.push(self.conn_id);
        out.extend_from_slice(&[0, 0]);
        if let Some(a) = self.addrs {
            out.extend_from_slice(&a.src_node.to_be_bytes());
            out.extend_from_slice(&a.src_port.to_be_bytes());
            out.extend_from_slice(&a.dst_node.to_be_bytes());
            out.extend_from_slice(&a.dst_port.to_be_bytes());
        }
        if let Some(s) = self.seq {
            out.extend_from_slice(&s.to_be_bytes());
        }
        if let Some(a) = self.ack {
            out.extend_from_slice(&a.to_be_bytes());
        }
        if let Some(w) = self.window {
            out.extend_from_slice(&w.to_be_bytes());
        }
        for (l, r) in edges {
            out.extend_from_slice(&l.to_be_bytes());
            out.extend_from_slice(&r.to_be_bytes());
        }
        out.extend_from_slice(payload);
        let sum = checksum::data(&out[start..]);
        out[start + 2..start + 4].copy_from_slice(&sum.to_be_bytes());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn round_trip(r: &E2tcpRepr, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        r.emit(payload, &mut out).unwrap();
        let p = E2tcpPacket::new_checked(&out[..]).unwrap();
        assert_eq!(&E2tcpRepr::parse(&p).unwrap(), r);
        assert_eq!(p.payload(), payload);
        out
    }

    #[test]
    fn typical_sizes_match_the_paper() {
        let data = E2tcpRepr {
            conn_id: 9,
            seq: Some(1000),
            ..Default::default()
        };
        assert_eq!(round_trip(&data, &[7; 10]).len(), 8 + 10);
        let mut ack = E2tcpRepr {
            conn_id: 9,
            ack: Some(5000),
            ..Default::default()
        };
        assert_eq!(round_trip(&ack, &[]).len(), 8);
        ack.sack = vec![(6000, 7000)];
        assert_eq!(round_trip(&ack, &[]).len(), 12);
        ack.sack = vec![(6000, 7000), (8000, 9000)];
        let bytes = round_trip(&ack, &[]);
        assert_eq!(bytes.len(), 16);
        assert_eq!(bytes[0], flags::ACK | 2);
        assert_eq!(&bytes[8..12], &[0x03, 0xe8, 0x07, 0xd0]);
    }

    #[test]
    fn syn_carries_addresses() {
        let syn = E2tcpRepr {
            syn: true,
            conn_id: 1,
            addrs: Some(E2tcpAddrs {
                src_node: 1,
                src_port: 5000,
                dst_node: 2,
                dst_port: 5000,
            }),
            seq: Some(0),
            window: Some(32_000),
            ..Default::default()
        };
        assert_eq!(round_trip(&syn, &[]).len(), 4 + 12 + 4 + 2);
    }

    #[test]
    fn malformed_inputs_are_rejected() {
        assert_eq!(
            E2tcpPacket::new_checked(&[0u8; 3][..]).unwrap_err(),
            Error::Truncated
        );
        // Three SACK blocks; SACK without ACK.
        assert!(E2tcpPacket::new_checked(&[0x13u8, 0, 0, 0][..]).is_err());
        assert!(E2tcpPacket::new_checked(&[0x01u8, 0, 0, 0, 0, 0, 0, 0][..]).is_err());
        // Seq announced but missing.
        assert_eq!(
            E2tcpPacket::new_checked(&[0x20u8, 0, 0, 0, 1][..]).unwrap_err(),
            Error::Truncated
        );
        // Bad checksum.
        let mut out = Vec::new();
        E2tcpRepr {
            seq: Some(1),
            ..Default::default()
        }
        .emit(b"x", &mut out)
        .unwrap();
        out[8] ^= 1;
        assert_eq!(
            E2tcpPacket::new_checked(&out[..]).unwrap_err(),
            Error::Checksum
        );
        // SACK edge too far above the ACK number.
        let r = E2tcpRepr {
            ack: Some(0),
            sack: vec![(1, 70_000)],
            ..Default::default()
        };
        assert!(r.emit(&[], &mut Vec::new()).is_err());
    }

    proptest! {
        #[test]
        fn parser_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..48)) {
            if let Ok(p) = E2tcpPacket::new_checked(&bytes[..]) {
                let _ = E2tcpRepr::parse(&p);
            }
        }

        #[test]
        fn repr_round_trips(syn: bool, fin: bool, id: u8, seq: Option<u32>, ack: Option<u32>,
                            win: Option<u16>, n in 0usize..=2, a in 1u16..1000, len in 1u16..1000,
                            payload in proptest::collection::vec(any::<u8>(), 0..20)) {
            let sack = match ack {
                Some(k) => (0..n).map(|i| {
                    let l = k.wrapping_add(a as u32 + i as u32 * 2000);
                    (l, l.wrapping_add(len as u32))
                }).collect(),
                None => Vec::new(),
            };
            let r = E2tcpRepr { syn, fin, conn_id: id, addrs: None, seq, ack, window: win, sack };
            let mut out = Vec::new();
            r.emit(&payload, &mut out).unwrap();
            prop_assert_eq!(out.len(), r.header_len() + payload.len());
            let p = E2tcpPacket::new_checked(&out[..]).unwrap();
            prop_assert_eq!(E2tcpRepr::parse(&p).unwrap(), r);
        }
    }
}
