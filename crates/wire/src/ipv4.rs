//! A minimal IPv4 header (RFC 791): no options, no fragmentation. joulenet
//! only writes it in front of transport bytes for pcap files; the simulator
//! itself routes by node id, not by IP address.

use crate::checksum;
use crate::{Error, Result};

mod field {
    use core::ops::Range;
    pub const VER_IHL: usize = 0;
    pub const TOS: usize = 1;
    pub const LENGTH: Range<usize> = 2..4;
    pub const IDENT: Range<usize> = 4..6;
    pub const FLAGS_FRAG: Range<usize> = 6..8;
    pub const TTL: usize = 8;
    pub const PROTOCOL: usize = 9;
    pub const CHECKSUM: Range<usize> = 10..12;
    pub const SRC: Range<usize> = 12..16;
    pub const DST: Range<usize> = 16..20;
}

/// Length of the header we emit and accept (IHL = 5).
pub const HEADER_LEN: usize = 20;
/// Don't Fragment: we never fragment.
const FLAG_DF: u16 = 0x4000;

/// A read/write view of an IPv4 packet in a byte buffer.
#[derive(Debug, Clone)]
pub struct Ipv4Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Ipv4Packet<T> {
    pub const fn new_unchecked(buffer: T) -> Ipv4Packet<T> {
        Ipv4Packet { buffer }
    }

    pub fn new_checked(buffer: T) -> Result<Ipv4Packet<T>> {
        let p = Ipv4Packet::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Checks that the fixed header fits and that the total length field
    /// covers the header and lies within the buffer.
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len < HEADER_LEN {
            return Err(Error::Truncated);
        }
        let total = self.total_len() as usize;
        if total < HEADER_LEN {
            return Err(Error::Malformed);
        }
        if total > len {
            return Err(Error::Truncated);
        }
        Ok(())
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn bytes(&self) -> &[u8] {
        self.buffer.as_ref()
    }
    fn u16_at(&self, r: core::ops::Range<usize>) -> u16 {
        let b = &self.bytes()[r];
        u16::from_be_bytes([b[0], b[1]])
    }
    pub fn version(&self) -> u8 {
        self.bytes()[field::VER_IHL] >> 4
    }
    /// Header length in bytes.
    pub fn header_len(&self) -> usize {
        (self.bytes()[field::VER_IHL] & 0x0f) as usize * 4
    }
    pub fn total_len(&self) -> u16 {
        self.u16_at(field::LENGTH)
    }
    pub fn ident(&self) -> u16 {
        self.u16_at(field::IDENT)
    }
    pub fn ttl(&self) -> u8 {
        self.bytes()[field::TTL]
    }
    pub fn protocol(&self) -> u8 {
        self.bytes()[field::PROTOCOL]
    }
    pub fn checksum(&self) -> u16 {
        self.u16_at(field::CHECKSUM)
    }
    pub fn src_addr(&self) -> [u8; 4] {
        let b = &self.bytes()[field::SRC];
        [b[0], b[1], b[2], b[3]]
    }
    pub fn dst_addr(&self) -> [u8; 4] {
        let b = &self.bytes()[field::DST];
        [b[0], b[1], b[2], b[3]]
    }
    /// True if the header checksum is correct.
    pub fn verify_checksum(&self) -> bool {
        checksum::data(&self.bytes()[..HEADER_LEN]) == 0
    }
    /// The bytes after the header, up to the total length.
    pub fn payload(&self) -> &[u8] {
        &self.bytes()[self.header_len()..self.total_len() as usize]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ipv4Packet<T> {
    fn set_u16(&mut self, r: core::ops::Range<usize>, v: u16) {
        self.buffer.as_mut()[r].copy_from_slice(&v.to_be_bytes());
    }
    /// Computes and stores the header checksum.
    pub fn fill_checksum(&mut self) {
        self.set_u16(field::CHECKSUM, 0);
        let c = checksum::data(&self.buffer.as_ref()[..HEADER_LEN]);
        self.set_u16(field::CHECKSUM, c);
    }
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let start = self.header_len();
        let end = self.total_len() as usize;
        &mut self.buffer.as_mut()[start..end]
    }
}

/// A parsed IPv4 header.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Ipv4Repr {
    pub src_addr: [u8; 4],
    pub dst_addr: [u8; 4],
    pub protocol: u8,
    /// Bytes after the header.
    pub payload_len: usize,
    pub ttl: u8,
}

impl Ipv4Repr {
    /// Parses a header; only version 4 without options (IHL 5) is accepted.
    /// The checksum is not verified (use [`Ipv4Packet::verify_checksum`]).
    pub fn parse<T: AsRef<[u8]>>(packet: &Ipv4Packet<T>) -> Result<Ipv4Repr> {
        packet.check_len()?;
        if packet.version() != 4 || packet.header_len() != HEADER_LEN {
            return Err(Error::Malformed);
        }
        Ok(Ipv4Repr {
            src_addr: packet.src_addr(),
            dst_addr: packet.dst_addr(),
            protocol: packet.protocol(),
            payload_len: packet.total_len() as usize - HEADER_LEN,
            ttl: packet.ttl(),
        })
    }

    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN + self.payload_len
    }

    /// Writes the header (with its checksum) into the first 20 bytes; the
    /// payload is left for the caller. `payload_len` must fit in 16 bits with
    /// the header; larger values are clamped so the length field stays valid.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Ipv4Packet<T>) {
        let total = self.buffer_len().min(u16::MAX as usize) as u16;
        let b = packet.buffer.as_mut();
        b[field::VER_IHL] = 0x45;
        b[field::TOS] = 0;
        b[field::LENGTH].copy_from_slice(&total.to_be_bytes());
        b[field::IDENT].copy_from_slice(&0u16.to_be_bytes());
        b[field::FLAGS_FRAG].copy_from_slice(&FLAG_DF.to_be_bytes());
        b[field::TTL] = self.ttl;
        b[field::PROTOCOL] = self.protocol;
        b[field::SRC].copy_from_slice(&self.src_addr);
        b[field::DST].copy_from_slice(&self.dst_addr);
        packet.fill_checksum();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn repr() -> Ipv4Repr {
        Ipv4Repr {
            src_addr: [10, 0, 0, 1],
            dst_addr: [10, 0, 0, 2],
            protocol: 6,
            payload_len: 4,
            ttl: 64,
        }
    }

    fn emit(r: &Ipv4Repr) -> Vec<u8> {
        let mut buf = vec![0; r.buffer_len()];
        r.emit(&mut Ipv4Packet::new_unchecked(&mut buf[..]));
        buf
    }

    #[test]
    fn round_trips_with_valid_checksum() {
        let buf = emit(&repr());
        let p = Ipv4Packet::new_checked(&buf[..]).unwrap();
        assert!(p.verify_checksum());
        assert_eq!(Ipv4Repr::parse(&p).unwrap(), repr());
        assert_eq!(&buf[..4], &[0x45, 0, 0, 24]);
        assert_eq!(p.payload().len(), 4);
    }

    #[test]
    fn known_header_checksum() {
        // Wikipedia's IPv4 checksum example: the checksum is 0xb861.
        let mut h = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        let mut full = h.to_vec();
        full.resize(0x73, 0);
        let mut p = Ipv4Packet::new_unchecked(&mut full[..]);
        p.fill_checksum();
        assert_eq!(p.checksum(), 0xb861);
        h[10..12].copy_from_slice(&[0xb8, 0x61]);
        assert_eq!(checksum::data(&h), 0);
    }

    #[test]
    fn rejects_wrong_version_ihl_and_lengths() {
        let good = emit(&repr());
        let parse = |b: &[u8]| Ipv4Repr::parse(&Ipv4Packet::new_unchecked(b));
        for n in 0..20 {
            assert_eq!(parse(&good[..n]), Err(Error::Truncated));
        }
        let mut b = good.clone();
        b[0] = 0x65;
        assert_eq!(parse(&b), Err(Error::Malformed));
        let mut b = good.clone();
        b[0] = 0x46;
        assert_eq!(parse(&b), Err(Error::Malformed));
        let mut b = good.clone();
        b[3] = 19;
        assert_eq!(parse(&b), Err(Error::Malformed));
        let mut b = good.clone();
        b[3] = 25;
        assert_eq!(parse(&b), Err(Error::Truncated));
        // Trailing bytes past total length (link padding) are allowed.
        let mut b = good;
        b.push(0);
        assert_eq!(parse(&b).unwrap().payload_len, 4);
    }

    proptest! {
        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let p = Ipv4Packet::new_unchecked(&bytes[..]);
            if Ipv4Repr::parse(&p).is_ok() {
                let _ = p.payload();
            }
        }

        #[test]
        fn emit_then_parse_round_trips(
            src: [u8; 4], dst: [u8; 4], protocol: u8, ttl: u8, payload_len in 0usize..100,
        ) {
            let r = Ipv4Repr { src_addr: src, dst_addr: dst, protocol, payload_len, ttl };
            let buf = emit(&r);
            let p = Ipv4Packet::new_checked(&buf[..]).unwrap();
            prop_assert!(p.verify_checksum());
            prop_assert_eq!(Ipv4Repr::parse(&p).unwrap(), r);
        }
    }
}
