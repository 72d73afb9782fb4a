//! UDP header (RFC 768), used by the simulator's datagram cross traffic.
//!
//! ```text
//!  0               2               4               6               8
//! +---------------+---------------+---------------+---------------+
//! |  source port  |   dest port   |    length     |   checksum    |
//! +---------------+---------------+---------------+---------------+
//! ```

use crate::{Error, Result};

mod field {
    pub const SRC_PORT: core::ops::Range<usize> = 0..2;
    pub const DST_PORT: core::ops::Range<usize> = 2..4;
    pub const LENGTH: core::ops::Range<usize> = 4..6;
}

pub const HEADER_LEN: usize = 8;

/// A read/write view of a UDP datagram.
#[derive(Debug)]
pub struct UdpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> UdpPacket<T> {
    /// Wrap a buffer, checking that the header and the stated length fit.
    pub fn new_checked(buffer: T) -> Result<UdpPacket<T>> {
        let p = UdpPacket { buffer };
        let b = p.buffer.as_ref();
        if b.len() < HEADER_LEN {
            return Err(Error::Truncated);
        }
        let len = p.length() as usize;
        if len < HEADER_LEN {
            return Err(Error::Malformed);
        }
        if len > b.len() {
            return Err(Error::Truncated);
        }
        Ok(p)
    }
    fn u16_at(&self, r: core::ops::Range<usize>) -> u16 {
        let b = &self.buffer.as_ref()[r];
        u16::from_be_bytes([b[0], b[1]])
    }
    pub fn src_port(&self) -> u16 {
        self.u16_at(field::SRC_PORT)
    }
    pub fn dst_port(&self) -> u16 {
        self.u16_at(field::DST_PORT)
    }
    pub fn length(&self) -> u16 {
        self.u16_at(field::LENGTH)
    }
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[HEADER_LEN..self.length() as usize]
    }
}

/// A parsed UDP header.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct UdpRepr {
    pub src_port: u16,
    pub dst_port: u16,
}

impl UdpRepr {
    pub fn parse<T: AsRef<[u8]>>(packet: &UdpPacket<T>) -> Result<UdpRepr> {
        Ok(UdpRepr {
            src_port: packet.src_port(),
            dst_port: packet.dst_port(),
        })
    }

    /// Append the header and `payload` to `out`. The checksum is left zero
    /// ("not computed", allowed by RFC 768 over IPv4).
    pub fn emit(&self, payload: &[u8], out: &mut Vec<u8>) -> Result<()> {
        let len = u16::try_from(HEADER_LEN + payload.len()).map_err(|_| Error::Malformed)?;
        out.extend_from_slice(&self.src_port.to_be_bytes());
        out.extend_from_slice(&self.dst_port.to_be_bytes());
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(&[0, 0]);
        out.extend_from_slice(payload);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let mut out = vec![];
        UdpRepr {
            src_port: 5000,
            dst_port: 6000,
        }
        .emit(b"hello", &mut out)
        .unwrap();
        assert_eq!(out.len(), 13);
        let p = UdpPacket::new_checked(&out[..]).unwrap();
        assert_eq!(
            UdpRepr::parse(&p).unwrap(),
            UdpRepr {
                src_port: 5000,
                dst_port: 6000
            }
        );
        assert_eq!(p.payload(), b"hello");
    }

    #[test]
    fn malformed_inputs_are_errors() {
        assert_eq!(
            UdpPacket::new_checked(&[0u8; 7][..]).unwrap_err(),
            Error::Truncated
        );
        // stated length below the header size
        assert_eq!(
            UdpPacket::new_checked(&[0, 1, 0, 2, 0, 7, 0, 0][..]).unwrap_err(),
            Error::Malformed
        );
        // stated length beyond the buffer
        assert_eq!(
            UdpPacket::new_checked(&[0, 1, 0, 2, 0, 9, 0, 0][..]).unwrap_err(),
            Error::Truncated
        );
        let too_big = vec![0u8; 70_000];
        assert!(UdpRepr {
            src_port: 1,
            dst_port: 2
        }
        .emit(&too_big, &mut vec![])
        .is_err());
    }

    proptest::proptest! {
        #[test]
        fn never_panics(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..64)) {
            if let Ok(p) = UdpPacket::new_checked(&bytes[..]) {
                let _ = UdpRepr::parse(&p);
                let _ = p.payload();
            }
        }
    }
}
