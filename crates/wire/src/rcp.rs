//! RCP (Reception Control Protocol) header: the receiver-centric TCP clone of
//! Hsieh et al., "A Receiver-Centric Transport Protocol for Mobile Hosts with
//! Heterogeneous Wireless Interfaces". Documented in `docs/wire.md`.
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |          Source Port          |       Destination Port        |  0
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |          Sequence Number (DATA, SYN, FIN) / SEG.REQ (REQ)     |  4
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |   Acknowledgment (ACK) / SEG.DEQ (REQ) / SND.LIM (LIM)        |  8
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! | DOff  |  Rsv  |E|P|R|A|L|R|S|F|        Request Length         | 12
//! |       |       |L|U|E|C|I|S|Y|I|                               |
//! |       |       |N|L|Q|K|M|T|N|N|                               |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |            Window             |           Reserved (0)        | 16
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |  Request blocks: n x (start 32, end 32), n = (DOff - 5) / 2   | 20
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                            Payload                            |
//! ```

use crate::{Error, Result};

mod field {
    use core::ops::Range;
    pub const SRC_PORT: Range<usize> = 0..2;
    pub const DST_PORT: Range<usize> = 2..4;
    pub const SEQ: Range<usize> = 4..8;
    pub const ACK: Range<usize> = 8..12;
    pub const DOFF: usize = 12;
    pub const FLAGS: usize = 13;
    pub const LENGTH: Range<usize> = 14..16;
    pub const WINDOW: Range<usize> = 16..18;
    pub const RESERVED: Range<usize> = 18..20;
}

/// Bytes of the fixed header.
pub const HEADER_LEN: usize = 20;
/// Most request blocks a REQ carries (the paper's three, as in SACK).
pub const MAX_BLOCKS: usize = 3;

/// The flag byte.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct RcpFlags(pub u8);

impl RcpFlags {
    pub const FIN: u8 = 0x01;
    pub const SYN: u8 = 0x02;
    pub const RST: u8 = 0x04;
    /// The acknowledgment field carries SND.LIM, the sender's request limit.
    pub const LIM: u8 = 0x08;
    /// The acknowledgment field acknowledges (SYN, FIN; in a REQ: SEG.DEQ).
    pub const ACK: u8 = 0x10;
    /// A request from the receiver.
    pub const REQ: u8 = 0x20;
    /// Pull mode: send exactly [SEG.REQ, SEG.REQ + length).
    pub const PUL: u8 = 0x40;
    /// Reserved for explicit loss notification; never set by our agents
    /// (RCP's ELN is local to the receiver) and rejected on parse.
    pub const ELN: u8 = 0x80;

    pub fn has(self, f: u8) -> bool {
        self.0 & f == f
    }
}

/// A range of sequence numbers `[start, end)` the receiver requested.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct RequestBlock {
    pub start: u32,
    pub end: u32,
}

/// A read view of an RCP packet.
#[derive(Debug)]
pub struct RcpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> RcpPacket<T> {
    /// Wrap a buffer, checking that the header and its blocks fit.
    pub fn new_checked(buffer: T) -> Result<RcpPacket<T>> {
        let p = RcpPacket { buffer };
        let b = p.buffer.as_ref();
        if b.len() < HEADER_LEN {
            return Err(Error::Truncated);
        }
        let words = (b[field::DOFF] >> 4) as usize;
        if words < 5 || !(words - 5).is_multiple_of(2) || (words - 5) / 2 > MAX_BLOCKS {
            return Err(Error::Malformed);
        }
        if words * 4 > b.len() {
            return Err(Error::Truncated);
        }
        Ok(p)
    }
    fn u16_at(&self, r: core::ops::Range<usize>) -> u16 {
        let b = &self.buffer.as_ref()[r];
        u16::from_be_bytes([b[0], b[1]])
    }
    fn u32_at(&self, at: usize) -> u32 {
        let b = &self.buffer.as_ref()[at..at + 4];
        u32::from_be_bytes([b[0], b[1], b[2], b[3]])
    }
    pub fn src_port(&self) -> u16 {
        self.u16_at(field::SRC_PORT)
    }
    pub fn dst_port(&self) -> u16 {
        self.u16_at(field::DST_PORT)
    }
    pub fn seq(&self) -> u32 {
        self.u32_at(field::SEQ.start)
    }
    pub fn ack(&self) -> u32 {
        self.u32_at(field::ACK.start)
    }
    pub fn header_len(&self) -> usize {
        (self.buffer.as_ref()[field::DOFF] >> 4) as usize * 4
    }
    pub fn flags(&self) -> RcpFlags {
        RcpFlags(self.buffer.as_ref()[field::FLAGS])
    }
    pub fn length(&self) -> u16 {
        self.u16_at(field::LENGTH)
    }
    pub fn window(&self) -> u16 {
        self.u16_at(field::WINDOW)
    }
    pub fn reserved(&self) -> u16 {
        self.u16_at(field::RESERVED)
    }
    pub fn block_count(&self) -> usize {
        (self.header_len() - HEADER_LEN) / 8
    }
    pub fn block(&self, i: usize) -> RequestBlock {
        let at = HEADER_LEN + 8 * i;
        RequestBlock {
            start: self.u32_at(at),
            end: self.u32_at(at + 4),
        }
    }
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len()..]
    }
}

/// A parsed RCP header.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct RcpRepr {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: RcpFlags,
    /// Pull mode: bytes requested from `seq`.
    pub length: u16,
    /// The receiver's free receive buffer, in 64-byte units (saturating);
    /// informational.
    pub window: u16,
    pub blocks: [RequestBlock; MAX_BLOCKS],
    pub block_count: u8,
}

impl RcpRepr {
    /// Check the semantic rules of docs/wire.md and read the header.
    pub fn parse<T: AsRef<[u8]>>(p: &RcpPacket<T>) -> Result<RcpRepr> {
        let flags = p.flags();
        let req = flags.has(RcpFlags::REQ);
        let n = p.block_count();
        if flags.has(RcpFlags::ELN)
            || p.reserved() != 0
            || (p.buffer.as_ref()[field::DOFF] & 0x0f) != 0
        {
            return Err(Error::Malformed);
        }
        if req {
            // A request carries no data, opens nothing and cannot limit.
            if flags.has(RcpFlags::SYN) || flags.has(RcpFlags::LIM) || !p.payload().is_empty() {
                return Err(Error::Malformed);
            }
            if flags.has(RcpFlags::PUL) && p.length() == 0 {
                return Err(Error::Malformed);
            }
        } else if flags.has(RcpFlags::PUL) || n > 0 || p.length() != 0 {
            return Err(Error::Malformed);
        }
        if flags.has(RcpFlags::SYN) && !p.payload().is_empty() {
            return Err(Error::Malformed);
        }
        let mut blocks = [RequestBlock::default(); MAX_BLOCKS];
        for (i, b) in blocks.iter_mut().enumerate().take(n) {
            *b = p.block(i);
            let len = b.end.wrapping_sub(b.start);
            if len == 0 || len > 0x8000_0000 {
                return Err(Error::Malformed);
            }
        }
        Ok(RcpRepr {
            src_port: p.src_port(),
            dst_port: p.dst_port(),
            seq: p.seq(),
            ack: p.ack(),
            flags,
            length: p.length(),
            window: p.window(),
            blocks,
            block_count: n as u8,
        })
    }

    pub fn blocks(&self) -> &[RequestBlock] {
        &self.blocks[..self.block_count as usize]
    }

    pub fn header_len(&self) -> usize {
        HEADER_LEN + 8 * self.block_count as usize
    }

    pub fn buffer_len(&self, payload: usize) -> usize {
        self.header_len() + payload
    }

    /// Append the header and `payload` to `out`.
    pub fn emit(&self, payload: &[u8], out: &mut Vec<u8>) {
        let n = (self.block_count as usize).min(MAX_BLOCKS);
        out.extend_from_slice(&self.src_port.to_be_bytes());
        out.extend_from_slice(&self.dst_port.to_be_bytes());
        out.extend_from_slice(&self.seq.to_be_bytes());
        out.extend_from_slice(&self.ack.to_be_bytes());
        out.push(((5 + 2 * n) as u8) << 4);
        out.push(self.flags.0);
        out.extend_from_slice(&self.length.to_be_bytes());
        out.extend_from_slice(&self.window.to_be_bytes());
        out.extend_from_slice(&[0, 0]);
        for b in &self.blocks[..n] {
            out.extend_from_slice(&b.start.to_be_bytes());
            out.extend_from_slice(&b.end.to_be_bytes());
        }
        out.extend_from_slice(payload);
    }
}

/// Parse a whole packet: header and payload.
pub fn parse(buf: &[u8]) -> Result<(RcpRepr, &[u8])> {
    let p = RcpPacket::new_checked(buf)?;
    let repr = RcpRepr::parse(&p)?;
    let at = p.header_len();
    Ok((repr, &buf[at..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req() -> RcpRepr {
        let mut r = RcpRepr {
            src_port: 5000,
            dst_port: 5001,
            seq: 0xfffffff0,
            ack: 7,
            flags: RcpFlags(RcpFlags::REQ | RcpFlags::PUL | RcpFlags::ACK),
            length: 1460,
            window: 512,
            ..RcpRepr::default()
        };
        r.blocks[0] = RequestBlock {
            start: 1,
            end: 1461,
        };
        r.blocks[1] = RequestBlock {
            start: 0xffffff00,
            end: 0x10,
        };
        r.block_count = 2;
        r
    }

    #[test]
    fn round_trips_a_pull_request_with_blocks() {
        let r = req();
        let mut out = Vec::new();
        r.emit(&[], &mut out);
        assert_eq!(out.len(), 36);
        assert_eq!(out[12], 0x90, "DOff 9 words");
        assert_eq!(out[13], 0x70);
        let (back, payload) = parse(&out).unwrap();
        assert_eq!(back, r);
        assert!(payload.is_empty());
    }

    #[test]
    fn round_trips_data() {
        let r = RcpRepr {
            src_port: 1,
            dst_port: 2,
            seq: 99,
            ack: 1_000_000,
            flags: RcpFlags(RcpFlags::LIM | RcpFlags::FIN),
            ..RcpRepr::default()
        };
        let mut out = Vec::new();
        r.emit(b"hello", &mut out);
        assert_eq!(out.len(), 25);
        let (back, payload) = parse(&out).unwrap();
        assert_eq!(back, r);
        assert_eq!(payload, b"hello");
    }

    #[test]
    fn rejects_malformed_headers() {
        let mut good = Vec::new();
        req().emit(&[], &mut good);
        assert_eq!(parse(&good[..19]), Err(Error::Truncated));
        assert_eq!(parse(&good[..30]), Err(Error::Truncated));
        let mut cases: Vec<Vec<u8>> = Vec::new();
        for doff in [0x00u8, 0x40, 0x60, 0xd0, 0xf0, 0x91] {
            let mut b = good.clone();
            b[12] = doff;
            cases.push(b);
        }
        // Pull with zero length; PUL without REQ; REQ with SYN; REQ with data;
        // ELN; reserved bits; an empty block.
        let mut b = good.clone();
        b[14] = 0;
        b[15] = 0;
        cases.push(b);
        let mut b = good.clone();
        b[13] = RcpFlags::PUL;
        cases.push(b);
        let mut b = good.clone();
        b[13] |= RcpFlags::SYN;
        cases.push(b);
        let mut b = good.clone();
        b.push(1);
        cases.push(b);
        let mut b = good.clone();
        b[13] |= RcpFlags::ELN;
        cases.push(b);
        let mut b = good.clone();
        b[19] = 1;
        cases.push(b);
        let mut b = good.clone();
        b[24..28].copy_from_slice(&1u32.to_be_bytes());
        cases.push(b);
        for c in cases {
            assert!(parse(&c).is_err(), "{c:02x?}");
        }
    }

    #[test]
    fn never_panics_on_arbitrary_bytes() {
        // A cheap deterministic fuzz: every prefix of many pseudo-random buffers.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..2_000 {
            let mut buf = Vec::new();
            let len = (x % 64) as usize;
            for _ in 0..len {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                buf.push(x as u8);
            }
            if buf.len() > 12 {
                buf[12] &= 0xf0; // reserved bits clear more often
            }
            let _ = parse(&buf);
            x = x.wrapping_add(1);
        }
    }
}
