//! Hop's header (Li, Agrawal, Ganesan, Venkataramani: *Block-switched
//! networks*, §4.2): every frame names its message type, its flow and its
//! block; data frames add their offset in the block (`packet_num`), which
//! also indexes the bitmap a BACK returns.
//!
//! A 12-byte common header, big-endian, then a body that depends on the type:
//!
//! * `DATA`: the frame's bytes.
//! * `BSYN` and virtual `BSYN`: the block's length in bytes (u32); a BSYN
//!   may carry a whole *micro-block* after it (§3.6), a virtual BSYN never
//!   carries data.
//! * `BACK`: the bitmap of frames held, one bit per frame, first frame in
//!   the most significant bit of the first byte, padded with zero bits.
//! * end-to-end `BACK`, `FIN`, `FIN-ACK`: nothing.
//!
//! Addresses are not in the header: the network header (in joulenet, the
//! `Transit` a relay is handed) carries the flow's two ends.

use core::fmt;

use crate::{Error, Result};

/// Byte offsets of the header fields.
mod field {
    use core::ops::Range;
    /// Version in the high nibble, message type in the low nibble.
    pub const VERSION_TYPE: usize = 0;
    pub const TTL: usize = 1;
    /// `packet_num` in DATA, the block's frame count in BSYN, virtual BSYN
    /// and BACK, zero otherwise.
    pub const COUNT: Range<usize> = 2..4;
    pub const FLOW_ID: Range<usize> = 4..8;
    pub const BLOCK_NUM: Range<usize> = 8..12;
    /// BSYN and virtual BSYN only.
    pub const BLOCK_LEN: Range<usize> = 12..16;
}

/// Length of the header every message starts with.
pub const HEADER_LEN: usize = 12;
/// Length of a BSYN or virtual BSYN header (common header + block length).
pub const BSYN_HEADER_LEN: usize = 16;
/// The only version this module reads and writes.
pub const VERSION: u8 = 1;
/// IP protocol number Hop travels under in joulenet (experimental range).
pub const PROTOCOL: u8 = 253;
/// TTL of a fresh virtual retransmission (§4.2: 50 hops).
pub const DEFAULT_TTL: u8 = 50;

/// The message types, as numbered on the wire.
mod kind {
    pub const DATA: u8 = 0;
    pub const BSYN: u8 = 1;
    pub const BACK: u8 = 2;
    pub const VIRTUAL_BSYN: u8 = 3;
    pub const END_TO_END_BACK: u8 = 4;
    pub const FIN: u8 = 5;
    pub const FIN_ACK: u8 = 6;
}

/// Bytes of a BACK bitmap for a block of `frames` frames.
pub const fn bitmap_len(frames: u16) -> usize {
    (frames as usize).div_ceil(8)
}

/// A read/write view of a Hop message in a byte buffer.
#[derive(Debug, Clone)]
pub struct HopPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> HopPacket<T> {
    /// Wraps a buffer without checking it; accessors may panic on short
    /// buffers, so use [`HopPacket::new_checked`] on untrusted input.
    pub const fn new_unchecked(buffer: T) -> HopPacket<T> {
        HopPacket { buffer }
    }

    /// Wraps a buffer after checking that every accessor is safe.
    pub fn new_checked(buffer: T) -> Result<HopPacket<T>> {
        let packet = HopPacket::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// Checks the version and type, and that the header of that type and
    /// (for a BACK) the whole bitmap fit in the buffer.
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len < HEADER_LEN {
            return Err(Error::Truncated);
        }
        if self.version() != VERSION || self.msg_type() > kind::FIN_ACK {
            return Err(Error::Malformed);
        }
        if len < self.header_len() {
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

    pub fn version(&self) -> u8 {
        self.bytes()[field::VERSION_TYPE] >> 4
    }
    pub fn msg_type(&self) -> u8 {
        self.bytes()[field::VERSION_TYPE] & 0x0f
    }
    pub fn ttl(&self) -> u8 {
        self.bytes()[field::TTL]
    }
    /// `packet_num` of a DATA frame; the frame count of a BSYN, virtual BSYN
    /// or BACK.
    pub fn count(&self) -> u16 {
        let b = &self.bytes()[field::COUNT];
        u16::from_be_bytes([b[0], b[1]])
    }
    pub fn flow_id(&self) -> u32 {
        let b = &self.bytes()[field::FLOW_ID];
        u32::from_be_bytes([b[0], b[1], b[2], b[3]])
    }
    pub fn block_num(&self) -> u32 {
        let b = &self.bytes()[field::BLOCK_NUM];
        u32::from_be_bytes([b[0], b[1], b[2], b[3]])
    }
    /// The block length of a BSYN or virtual BSYN (only those).
    pub fn block_len(&self) -> u32 {
        let b = &self.bytes()[field::BLOCK_LEN];
        u32::from_be_bytes([b[0], b[1], b[2], b[3]])
    }

    /// Bytes before the body of this message type: the common header, the
    /// block length of a (virtual) BSYN, the bitmap of a BACK.
    pub fn header_len(&self) -> usize {
        match self.msg_type() {
            kind::BSYN | kind::VIRTUAL_BSYN => BSYN_HEADER_LEN,
            kind::BACK => HEADER_LEN + bitmap_len(self.count()),
            _ => HEADER_LEN,
        }
    }

    /// The BACK bitmap (only for a BACK).
    pub fn bitmap(&self) -> &[u8] {
        &self.bytes()[HEADER_LEN..self.header_len()]
    }

    /// What follows the header: a DATA frame's bytes, a BSYN's micro-block.
    pub fn payload(&self) -> &[u8] {
        &self.bytes()[self.header_len()..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> HopPacket<T> {
    pub fn set_version_and_type(&mut self, version: u8, msg_type: u8) {
        self.buffer.as_mut()[field::VERSION_TYPE] = (version << 4) | (msg_type & 0x0f);
    }
    pub fn set_ttl(&mut self, v: u8) {
        self.buffer.as_mut()[field::TTL] = v;
    }
    pub fn set_count(&mut self, v: u16) {
        self.buffer.as_mut()[field::COUNT].copy_from_slice(&v.to_be_bytes());
    }
    pub fn set_flow_id(&mut self, v: u32) {
        self.buffer.as_mut()[field::FLOW_ID].copy_from_slice(&v.to_be_bytes());
    }
    pub fn set_block_num(&mut self, v: u32) {
        self.buffer.as_mut()[field::BLOCK_NUM].copy_from_slice(&v.to_be_bytes());
    }
    pub fn set_block_len(&mut self, v: u32) {
        self.buffer.as_mut()[field::BLOCK_LEN].copy_from_slice(&v.to_be_bytes());
    }
    pub fn bitmap_mut(&mut self) -> &mut [u8] {
        let end = self.header_len();
        &mut self.buffer.as_mut()[HEADER_LEN..end]
    }
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let start = self.header_len();
        &mut self.buffer.as_mut()[start..]
    }
}

/// What a Hop message says, by type.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum HopMessage<'a> {
    /// A frame of a block: frame `packet_num` (from 0) and its bytes.
    Data { packet_num: u16, payload: &'a [u8] },
    /// "Which frames of this block do you hold?" (§3.1). `frames` is the
    /// block's frame count and `block_len` its length in bytes; `micro` is
    /// empty, or the whole block when it is a micro-block (§3.6), in which
    /// case its length is `block_len`.
    Bsyn {
        frames: u16,
        block_len: u32,
        micro: &'a [u8],
    },
    /// The frames of the block the sender of the BACK holds: bit `i` (most
    /// significant first) for frame `i`; exactly [`bitmap_len`]`(frames)`
    /// bytes, unused trailing bits zero.
    Back { frames: u16, bitmap: &'a [u8] },
    /// A virtual retransmission (§3.2): a BSYN that travels the route and
    /// moves data only where the next hop lacks it. The TTL limits its hops.
    VirtualBsyn { frames: u16, block_len: u32 },
    /// The destination holds the whole block (§3.2), toward the source.
    EndToEndBack,
    /// The source has sent its last block: `block_num` is the number of
    /// blocks of the flow (§4.2).
    Fin,
    /// The destination has every block of the flow and forgets it.
    FinAck,
}

impl HopMessage<'_> {
    fn kind(&self) -> u8 {
        match self {
            HopMessage::Data { .. } => kind::DATA,
            HopMessage::Bsyn { .. } => kind::BSYN,
            HopMessage::Back { .. } => kind::BACK,
            HopMessage::VirtualBsyn { .. } => kind::VIRTUAL_BSYN,
            HopMessage::EndToEndBack => kind::END_TO_END_BACK,
            HopMessage::Fin => kind::FIN,
            HopMessage::FinAck => kind::FIN_ACK,
        }
    }

    /// True for the messages Hop sends with link-layer ARQ (everything but
    /// DATA frames, §3.1 and §4.1).
    pub fn is_control(&self) -> bool {
        !matches!(self, HopMessage::Data { .. })
    }
}

/// A parsed Hop message.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct HopRepr<'a> {
    pub flow_id: u32,
    pub block_num: u32,
    /// Hops the message may still travel; checked by relays for virtual
    /// BSYNs, carried unchanged by everything else.
    pub ttl: u8,
    pub message: HopMessage<'a>,
}

impl<'a> HopRepr<'a> {
    /// Parses a message, rejecting what the format does not allow: zero
    /// frames in a BSYN, virtual BSYN or BACK; a block shorter than its
    /// frame count; a micro-block whose length is not the block's; a
    /// virtual BSYN with data; non-zero padding bits in a bitmap; a count
    /// or body where the type has none.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &HopPacket<&'a T>) -> Result<HopRepr<'a>> {
        packet.check_len()?;
        let bytes: &'a [u8] = packet.buffer.as_ref();
        let header_len = packet.header_len();
        let body = &bytes[header_len..];
        let count = packet.count();
        let frames_ok = |frames: u16, block_len: u32| frames > 0 && block_len >= u32::from(frames);
        let message = match packet.msg_type() {
            kind::DATA => HopMessage::Data {
                packet_num: count,
                payload: body,
            },
            kind::BSYN => {
                let block_len = packet.block_len();
                if !frames_ok(count, block_len)
                    || (!body.is_empty() && body.len() as u64 != u64::from(block_len))
                {
                    return Err(Error::Malformed);
                }
                HopMessage::Bsyn {
                    frames: count,
                    block_len,
                    micro: body,
                }
            }
            kind::BACK => {
                let bitmap = &bytes[HEADER_LEN..header_len];
                let spare = (bitmap.len() * 8 - count as usize) as u32;
                let last = bitmap.last().copied().unwrap_or(0);
                if count == 0 || !body.is_empty() || last & ((1u16 << spare) - 1) as u8 != 0 {
                    return Err(Error::Malformed);
                }
                HopMessage::Back {
                    frames: count,
                    bitmap,
                }
            }
            kind::VIRTUAL_BSYN => {
                let block_len = packet.block_len();
                if !frames_ok(count, block_len) || !body.is_empty() {
                    return Err(Error::Malformed);
                }
                HopMessage::VirtualBsyn {
                    frames: count,
                    block_len,
                }
            }
            other => {
                if count != 0 || !body.is_empty() {
                    return Err(Error::Malformed);
                }
                match other {
                    kind::END_TO_END_BACK => HopMessage::EndToEndBack,
                    kind::FIN => HopMessage::Fin,
                    _ => HopMessage::FinAck,
                }
            }
        };
        Ok(HopRepr {
            flow_id: packet.flow_id(),
            block_num: packet.block_num(),
            ttl: packet.ttl(),
            message,
        })
    }

    /// Header length of this message (with a BSYN's block length or a BACK's
    /// bitmap).
    pub fn header_len(&self) -> usize {
        match self.message {
            HopMessage::Bsyn { .. } | HopMessage::VirtualBsyn { .. } => BSYN_HEADER_LEN,
            HopMessage::Back { frames, .. } => HEADER_LEN + bitmap_len(frames),
            _ => HEADER_LEN,
        }
    }

    /// Header plus body.
    pub fn buffer_len(&self) -> usize {
        self.header_len()
            + match self.message {
                HopMessage::Data { payload, .. } => payload.len(),
                HopMessage::Bsyn { micro, .. } => micro.len(),
                _ => 0,
            }
    }

    /// Writes the message; the packet view must be exactly `buffer_len()`
    /// bytes. A BACK's bitmap must be `bitmap_len(frames)` bytes long.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut HopPacket<T>) {
        packet.set_version_and_type(VERSION, self.message.kind());
        packet.set_ttl(self.ttl);
        packet.set_flow_id(self.flow_id);
        packet.set_block_num(self.block_num);
        match self.message {
            HopMessage::Data {
                packet_num,
                payload,
            } => {
                packet.set_count(packet_num);
                packet.payload_mut()[..payload.len()].copy_from_slice(payload);
            }
            HopMessage::Bsyn {
                frames,
                block_len,
                micro,
            } => {
                packet.set_count(frames);
                packet.set_block_len(block_len);
                packet.payload_mut()[..micro.len()].copy_from_slice(micro);
            }
            HopMessage::Back { frames, bitmap } => {
                packet.set_count(frames);
                packet.bitmap_mut().copy_from_slice(bitmap);
            }
            HopMessage::VirtualBsyn { frames, block_len } => {
                packet.set_count(frames);
                packet.set_block_len(block_len);
            }
            HopMessage::EndToEndBack | HopMessage::Fin | HopMessage::FinAck => packet.set_count(0),
        }
    }

    /// Appends the message to `out` (reusing its capacity).
    pub fn emit_to_vec(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.resize(start + self.buffer_len(), 0);
        self.emit(&mut HopPacket::new_unchecked(&mut out[start..]));
    }
}

impl fmt::Display for HopRepr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Hop flow={} block={} ", self.flow_id, self.block_num)?;
        match self.message {
            HopMessage::Data {
                packet_num,
                payload,
            } => write!(f, "DATA #{packet_num} len={}", payload.len()),
            HopMessage::Bsyn {
                frames,
                block_len,
                micro,
            } => {
                write!(f, "BSYN frames={frames} block_len={block_len}")?;
                if !micro.is_empty() {
                    write!(f, " micro")?;
                }
                Ok(())
            }
            HopMessage::Back { frames, bitmap } => {
                let held: u32 = bitmap.iter().map(|b| b.count_ones()).sum();
                write!(f, "BACK {held}/{frames}")
            }
            HopMessage::VirtualBsyn { frames, block_len } => write!(
                f,
                "VBSYN frames={frames} block_len={block_len} ttl={}",
                self.ttl
            ),
            HopMessage::EndToEndBack => write!(f, "E2E-BACK"),
            HopMessage::Fin => write!(f, "FIN"),
            HopMessage::FinAck => write!(f, "FIN-ACK"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn round_trip(r: &HopRepr<'_>) -> Vec<u8> {
        let mut buf = Vec::new();
        r.emit_to_vec(&mut buf);
        assert_eq!(buf.len(), r.buffer_len());
        let parsed = HopRepr::parse(&HopPacket::new_checked(&buf[..]).unwrap()).unwrap();
        assert_eq!(&parsed, r);
        buf
    }

    fn repr(message: HopMessage<'_>) -> HopRepr<'_> {
        HopRepr {
            flow_id: 0x0102_0304,
            block_num: 7,
            ttl: DEFAULT_TTL,
            message,
        }
    }

    fn parse(bytes: &[u8]) -> Result<HopRepr<'_>> {
        HopRepr::parse(&HopPacket::new_checked(bytes)?)
    }

    #[test]
    fn data_frame_has_exact_bytes() {
        let buf = round_trip(&repr(HopMessage::Data {
            packet_num: 0x0203,
            payload: b"hi",
        }));
        assert_eq!(
            buf,
            [0x10, 50, 0x02, 0x03, 1, 2, 3, 4, 0, 0, 0, 7, b'h', b'i']
        );
    }

    #[test]
    fn bsyn_has_exact_bytes_with_and_without_a_micro_block() {
        let buf = round_trip(&repr(HopMessage::Bsyn {
            frames: 718,
            block_len: 1 << 20,
            micro: &[],
        }));
        assert_eq!(
            buf,
            [0x11, 50, 0x02, 0xce, 1, 2, 3, 4, 0, 0, 0, 7, 0, 0x10, 0, 0]
        );
        let buf = round_trip(&repr(HopMessage::Bsyn {
            frames: 1,
            block_len: 3,
            micro: b"abc",
        }));
        assert_eq!(
            buf,
            [0x11, 50, 0, 1, 1, 2, 3, 4, 0, 0, 0, 7, 0, 0, 0, 3, b'a', b'b', b'c']
        );
    }

    #[test]
    fn back_bitmap_is_msb_first_and_padded() {
        // Ten frames: 0, 1 and 9 held.
        let bitmap = [0b1100_0000, 0b0100_0000];
        let buf = round_trip(&repr(HopMessage::Back {
            frames: 10,
            bitmap: &bitmap,
        }));
        assert_eq!(buf, [0x12, 50, 0, 10, 1, 2, 3, 4, 0, 0, 0, 7, 0xc0, 0x40]);
        assert_eq!(bitmap_len(8), 1);
        assert_eq!(bitmap_len(9), 2);
    }

    #[test]
    fn virtual_bsyn_and_bodiless_messages_have_exact_bytes() {
        let mut r = repr(HopMessage::VirtualBsyn {
            frames: 2,
            block_len: 2000,
        });
        r.ttl = 3;
        let buf = round_trip(&r);
        assert_eq!(
            buf,
            [0x13, 3, 0, 2, 1, 2, 3, 4, 0, 0, 0, 7, 0, 0, 0x07, 0xd0]
        );
        for (message, t) in [
            (HopMessage::EndToEndBack, 0x14),
            (HopMessage::Fin, 0x15),
            (HopMessage::FinAck, 0x16),
        ] {
            let buf = round_trip(&repr(message));
            assert_eq!(buf, [t, 50, 0, 0, 1, 2, 3, 4, 0, 0, 0, 7]);
        }
    }

    #[test]
    fn control_is_everything_but_data() {
        assert!(!HopMessage::Data {
            packet_num: 0,
            payload: &[]
        }
        .is_control());
        assert!(HopMessage::EndToEndBack.is_control());
    }

    #[test]
    fn short_and_unknown_messages_are_rejected() {
        assert_eq!(parse(&[]), Err(Error::Truncated));
        assert_eq!(parse(&[0x10; 11]), Err(Error::Truncated));
        // Version 2, and type 7.
        assert_eq!(
            parse(&[0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
            Err(Error::Malformed)
        );
        assert_eq!(
            parse(&[0x17, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
            Err(Error::Malformed)
        );
        // A BSYN without its block length; a BACK without its whole bitmap.
        assert_eq!(
            parse(&[0x11, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0]),
            Err(Error::Truncated)
        );
        assert_eq!(
            parse(&[0x12, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0xff]),
            Err(Error::Truncated)
        );
    }

    #[test]
    fn inconsistent_fields_are_malformed() {
        let head = |t: u8, count: u16| {
            let mut v = vec![0x10 | t, 0];
            v.extend_from_slice(&count.to_be_bytes());
            v.extend_from_slice(&[0; 8]);
            v
        };
        // BSYN: no frames; fewer bytes than frames; a micro-block of the
        // wrong length.
        let mut b = head(1, 0);
        b.extend_from_slice(&5u32.to_be_bytes());
        assert_eq!(parse(&b), Err(Error::Malformed));
        let mut b = head(1, 6);
        b.extend_from_slice(&5u32.to_be_bytes());
        assert_eq!(parse(&b), Err(Error::Malformed));
        let mut b = head(1, 1);
        b.extend_from_slice(&5u32.to_be_bytes());
        b.extend_from_slice(b"four");
        assert_eq!(parse(&b), Err(Error::Malformed));
        // Virtual BSYN with data.
        let mut b = head(3, 1);
        b.extend_from_slice(&5u32.to_be_bytes());
        b.push(0);
        assert_eq!(parse(&b), Err(Error::Malformed));
        // BACK: padding bit set; trailing bytes; zero frames.
        let mut b = head(2, 10);
        b.extend_from_slice(&[0xff, 0xe0]);
        assert_eq!(parse(&b), Err(Error::Malformed));
        let mut b = head(2, 8);
        b.extend_from_slice(&[0xff, 0]);
        assert_eq!(parse(&b), Err(Error::Malformed));
        assert_eq!(parse(&head(2, 0)), Err(Error::Malformed));
        // FIN with a count or a body.
        assert_eq!(parse(&head(5, 1)), Err(Error::Malformed));
        let mut b = head(5, 0);
        b.push(1);
        assert_eq!(parse(&b), Err(Error::Malformed));
    }

    #[test]
    fn display_names_the_message() {
        let bitmap = [0xc0];
        let r = repr(HopMessage::Back {
            frames: 3,
            bitmap: &bitmap,
        });
        assert_eq!(r.to_string(), "Hop flow=16909060 block=7 BACK 2/3");
        let r = repr(HopMessage::Bsyn {
            frames: 1,
            block_len: 1,
            micro: b"x",
        });
        assert_eq!(
            r.to_string(),
            "Hop flow=16909060 block=7 BSYN frames=1 block_len=1 micro"
        );
    }

    /// flow_id, block_num, ttl, message type, frames, bytes beyond frames.
    fn arb_fields() -> impl Strategy<Value = (u32, u32, u8, u8, u16, u32)> {
        (
            any::<u32>(),
            any::<u32>(),
            any::<u8>(),
            0u8..7,
            1u16..600,
            0u32..4000,
        )
    }

    proptest! {
        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..120)) {
            let _ = parse(&bytes);
        }

        #[test]
        fn parse_never_panics_on_plausible_headers(
            t in 0u8..8,
            count in 0u16..40,
            rest in proptest::collection::vec(any::<u8>(), 0..40),
        ) {
            let mut b = vec![0x10 | t, 0];
            b.extend_from_slice(&count.to_be_bytes());
            b.extend_from_slice(&rest);
            if let Ok(r) = parse(&b) {
                // What parses emits to the same bytes.
                let mut out = Vec::new();
                r.emit_to_vec(&mut out);
                prop_assert_eq!(out, b);
            }
        }

        #[test]
        fn every_valid_message_round_trips(
            (flow_id, block_num, ttl, t, frames, extra) in arb_fields(),
            data in proptest::collection::vec(any::<u8>(), 0..64),
            held in proptest::collection::vec(any::<bool>(), 600),
        ) {
            let block_len = u32::from(frames) + extra;
            let mut bitmap = vec![0u8; bitmap_len(frames)];
            for i in 0..frames as usize {
                if held[i] {
                    bitmap[i / 8] |= 0x80 >> (i % 8);
                }
            }
            let micro: Vec<u8> = vec![9; block_len as usize];
            let message = match t {
                0 => HopMessage::Data { packet_num: frames, payload: &data },
                1 if data.len() % 2 == 0 => HopMessage::Bsyn { frames, block_len, micro: &[] },
                1 => HopMessage::Bsyn { frames, block_len, micro: &micro },
                2 => HopMessage::Back { frames, bitmap: &bitmap },
                3 => HopMessage::VirtualBsyn { frames, block_len },
                4 => HopMessage::EndToEndBack,
                5 => HopMessage::Fin,
                _ => HopMessage::FinAck,
            };
            round_trip(&HopRepr { flow_id, block_num, ttl, message });
        }
    }
}
