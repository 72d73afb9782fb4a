//! TCP segment header (RFC 9293) with the options joulenet uses: MSS, window
//! scale (RFC 7323), SACK-permitted and SACK (RFC 2018), timestamps (RFC 7323),
//! and explicit loss notification (ELN, an RFC 6994 experimental option).
//!
//! The checksum is neither checked by [`TcpRepr::parse`] nor filled by
//! [`TcpRepr::emit`]: the simulator carries no IP addresses and leaves it 0;
//! whoever writes real packets (pcap, a raw socket) calls
//! [`TcpPacket::fill_checksum_ipv4`].

use crate::checksum;
use crate::{Error, Result};

/// Byte offsets of the fixed header fields.
mod field {
    use core::ops::Range;
    pub const SRC_PORT: Range<usize> = 0..2;
    pub const DST_PORT: Range<usize> = 2..4;
    pub const SEQ: Range<usize> = 4..8;
    pub const ACK: Range<usize> = 8..12;
    /// Data offset in the high nibble (in 32-bit words).
    pub const DATA_OFFSET: usize = 12;
    pub const FLAGS: usize = 13;
    pub const WINDOW: Range<usize> = 14..16;
    pub const CHECKSUM: Range<usize> = 16..18;
    pub const URGENT: Range<usize> = 18..20;
}

/// Length of the header without options.
pub const HEADER_LEN: usize = 20;
/// Most option bytes a header can carry (data offset is at most 15 words).
pub const MAX_OPTIONS_LEN: usize = 40;
/// Most SACK blocks one option can carry (4 · 8 + 2 = 34 bytes).
pub const MAX_SACK_BLOCKS: usize = 4;
/// IP protocol number of TCP.
pub const PROTOCOL: u8 = 6;

mod flag {
    pub const FIN: u8 = 0x01;
    pub const SYN: u8 = 0x02;
    pub const RST: u8 = 0x04;
    pub const PSH: u8 = 0x08;
    pub const ACK: u8 = 0x10;
}

mod option {
    pub const END: u8 = 0;
    pub const NOP: u8 = 1;
    pub const MSS: u8 = 2;
    pub const WINDOW_SCALE: u8 = 3;
    pub const SACK_PERMITTED: u8 = 4;
    pub const SACK: u8 = 5;
    pub const TIMESTAMPS: u8 = 8;
    /// RFC 6994 shared experimental option (kind 253), told apart by its ExID.
    pub const EXPERIMENT: u8 = 253;
}

/// The 16-bit experiment identifier of the ELN option (ASCII "EL"). It is
/// joulenet's own and not registered with IANA.
pub const ELN_EXID: u16 = 0x454c;

/// The experiment identifier of STP's POLL (ASCII "PL"; Henderson & Katz's
/// Satellite Transport Protocol asks the receiver for a status report with
/// it). joulenet's own, not registered with IANA.
pub const POLL_EXID: u16 = 0x504c;

/// A read/write view of a TCP segment in a byte buffer.
#[derive(Debug, Clone)]
pub struct TcpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> TcpPacket<T> {
    /// Wraps a buffer without checking it; accessors may panic on short
    /// buffers, so use [`TcpPacket::new_checked`] on untrusted input.
    pub const fn new_unchecked(buffer: T) -> TcpPacket<T> {
        TcpPacket { buffer }
    }

    /// Wraps a buffer after checking that the header and its options fit.
    pub fn new_checked(buffer: T) -> Result<TcpPacket<T>> {
        let packet = TcpPacket::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// Checks that every accessor is safe: the fixed header fits, the data
    /// offset is at least 5 words and within the buffer.
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len < HEADER_LEN {
            return Err(Error::Truncated);
        }
        let header_len = self.header_len() as usize;
        if header_len < HEADER_LEN {
            return Err(Error::Malformed);
        }
        if header_len > len {
            return Err(Error::Truncated);
        }
        Ok(())
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn u16_at(&self, range: core::ops::Range<usize>) -> u16 {
        let b = &self.buffer.as_ref()[range];
        u16::from_be_bytes([b[0], b[1]])
    }

    fn u32_at(&self, range: core::ops::Range<usize>) -> u32 {
        let b = &self.buffer.as_ref()[range];
        u32::from_be_bytes([b[0], b[1], b[2], b[3]])
    }

    pub fn src_port(&self) -> u16 {
        self.u16_at(field::SRC_PORT)
    }
    pub fn dst_port(&self) -> u16 {
        self.u16_at(field::DST_PORT)
    }
    pub fn seq_number(&self) -> u32 {
        self.u32_at(field::SEQ)
    }
    pub fn ack_number(&self) -> u32 {
        self.u32_at(field::ACK)
    }
    /// Header length in bytes, from the data offset field.
    pub fn header_len(&self) -> u8 {
        (self.buffer.as_ref()[field::DATA_OFFSET] >> 4) * 4
    }
    pub fn flags(&self) -> u8 {
        self.buffer.as_ref()[field::FLAGS]
    }
    pub fn window_len(&self) -> u16 {
        self.u16_at(field::WINDOW)
    }
    pub fn checksum(&self) -> u16 {
        self.u16_at(field::CHECKSUM)
    }
    pub fn urgent_at(&self) -> u16 {
        self.u16_at(field::URGENT)
    }
    pub fn options(&self) -> &[u8] {
        &self.buffer.as_ref()[HEADER_LEN..self.header_len() as usize]
    }
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_len() as usize..]
    }

    /// True if the checksum over the IPv4 pseudo-header and the whole
    /// segment is correct.
    pub fn verify_checksum_ipv4(&self, src: [u8; 4], dst: [u8; 4]) -> bool {
        checksum_ipv4(src, dst, self.buffer.as_ref()) == 0
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> TcpPacket<T> {
    fn set_u16(&mut self, range: core::ops::Range<usize>, v: u16) {
        self.buffer.as_mut()[range].copy_from_slice(&v.to_be_bytes());
    }
    fn set_u32(&mut self, range: core::ops::Range<usize>, v: u32) {
        self.buffer.as_mut()[range].copy_from_slice(&v.to_be_bytes());
    }
    pub fn set_src_port(&mut self, v: u16) {
        self.set_u16(field::SRC_PORT, v)
    }
    pub fn set_dst_port(&mut self, v: u16) {
        self.set_u16(field::DST_PORT, v)
    }
    pub fn set_seq_number(&mut self, v: u32) {
        self.set_u32(field::SEQ, v)
    }
    pub fn set_ack_number(&mut self, v: u32) {
        self.set_u32(field::ACK, v)
    }
    /// Sets the data offset; `len` must be a multiple of 4 in 20..=60.
    pub fn set_header_len(&mut self, len: u8) {
        self.buffer.as_mut()[field::DATA_OFFSET] = (len / 4) << 4;
    }
    pub fn set_flags(&mut self, v: u8) {
        self.buffer.as_mut()[field::FLAGS] = v
    }
    pub fn set_window_len(&mut self, v: u16) {
        self.set_u16(field::WINDOW, v)
    }
    pub fn set_checksum(&mut self, v: u16) {
        self.set_u16(field::CHECKSUM, v)
    }
    pub fn set_urgent_at(&mut self, v: u16) {
        self.set_u16(field::URGENT, v)
    }
    pub fn options_mut(&mut self) -> &mut [u8] {
        let end = self.header_len() as usize;
        &mut self.buffer.as_mut()[HEADER_LEN..end]
    }
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let start = self.header_len() as usize;
        &mut self.buffer.as_mut()[start..]
    }

    /// Computes and stores the checksum over the IPv4 pseudo-header and the
    /// whole buffer (which must be exactly the segment).
    pub fn fill_checksum_ipv4(&mut self, src: [u8; 4], dst: [u8; 4]) {
        self.set_checksum(0);
        let c = checksum_ipv4(src, dst, self.buffer.as_ref());
        self.set_checksum(c);
    }
}

/// TCP checksum of `segment` (header with its checksum field as it stands,
/// plus payload) under the IPv4 pseudo-header. Zero the field before filling;
/// a segment carrying a correct checksum gives 0.
pub fn checksum_ipv4(src: [u8; 4], dst: [u8; 4], segment: &[u8]) -> u16 {
    // A TCP segment longer than 65535 bytes cannot travel in IPv4; the length
    // is truncated rather than trusted, and such a checksum is meaningless.
    let len = segment.len().min(u16::MAX as usize) as u16;
    let pseudo = checksum::ipv4_pseudo_header(src, dst, PROTOCOL, len);
    checksum::finish(&[pseudo, checksum::sum(segment)])
}

// The small accessors below are `#[inline]`: every segment sent and
// received calls them from the protocol crate, and without link-time
// optimisation (the dev profile) a function that is not generic is
// inlined across crates only when marked.

/// The control flags joulenet sets (ACK is `TcpRepr::ack.is_some()`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct TcpFlags {
    pub syn: bool,
    pub fin: bool,
    pub rst: bool,
    pub psh: bool,
}

impl TcpFlags {
    #[inline]
    fn from_bits(bits: u8) -> TcpFlags {
        TcpFlags {
            syn: bits & flag::SYN != 0,
            fin: bits & flag::FIN != 0,
            rst: bits & flag::RST != 0,
            psh: bits & flag::PSH != 0,
        }
    }
    #[inline]
    fn bits(self) -> u8 {
        let mut b = 0;
        if self.syn {
            b |= flag::SYN;
        }
        if self.fin {
            b |= flag::FIN;
        }
        if self.rst {
            b |= flag::RST;
        }
        if self.psh {
            b |= flag::PSH;
        }
        b
    }
}

/// One SACK block: the wire sequence numbers of `[left, right)`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct SackBlock {
    pub left: u32,
    pub right: u32,
}

/// Up to [`MAX_SACK_BLOCKS`] SACK blocks in a fixed array (no allocation).
/// Equality looks only at the blocks in use.
#[derive(Copy, Clone, Debug, Default)]
pub struct SackBlocks {
    blocks: [SackBlock; MAX_SACK_BLOCKS],
    len: u8,
}

impl SackBlocks {
    #[inline]
    pub const fn new() -> SackBlocks {
        SackBlocks {
            blocks: [SackBlock { left: 0, right: 0 }; MAX_SACK_BLOCKS],
            len: 0,
        }
    }
    /// Appends a block; returns false (and drops it) when full.
    #[inline]
    pub fn push(&mut self, block: SackBlock) -> bool {
        if (self.len as usize) < MAX_SACK_BLOCKS {
            self.blocks[self.len as usize] = block;
            self.len += 1;
            true
        } else {
            false
        }
    }
    #[inline]
    pub fn as_slice(&self) -> &[SackBlock] {
        &self.blocks[..self.len as usize]
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Keeps only the first `n` blocks.
    pub fn truncate(&mut self, n: usize) {
        self.len = self.len.min(n as u8);
    }
}

impl PartialEq for SackBlocks {
    fn eq(&self, other: &SackBlocks) -> bool {
        self.as_slice() == other.as_slice()
    }
}
impl Eq for SackBlocks {}
impl core::hash::Hash for SackBlocks {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state)
    }
}

impl<'a> IntoIterator for &'a SackBlocks {
    type Item = &'a SackBlock;
    type IntoIter = core::slice::Iter<'a, SackBlock>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

/// The options of one segment.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct TcpOptions {
    pub mss: Option<u16>,
    /// Shift count; RFC 7323 caps it at 14, larger values are kept as sent.
    pub window_scale: Option<u8>,
    pub sack_permitted: bool,
    pub sack_blocks: SackBlocks,
    /// (TSval, TSecr).
    pub timestamps: Option<(u32, u32)>,
    /// Explicit loss notification (Balakrishnan & Katz): the segment that
    /// starts at this ACK's acknowledgment number was lost on the
    /// receiver's wireless hop, not to congestion. One flag, so it can name
    /// only the first hole.
    pub eln: bool,
    /// STP's POLL: the sender asks for a status report (an ACK with SACK
    /// blocks) now; an STP receiver acknowledges nothing else but new gaps.
    pub poll: bool,
}

// Emitted sizes: every option is aligned to 4 bytes with leading NOPs, which
// keeps the layout fixed and easy to read in a hex dump.
const MSS_LEN: usize = 4;
const WINDOW_SCALE_LEN: usize = 4; // NOP + kind, len, shift
const SACK_PERMITTED_LEN: usize = 4; // NOP NOP + kind, len
const TIMESTAMPS_LEN: usize = 12; // NOP NOP + kind, len, TSval, TSecr
const SACK_BASE_LEN: usize = 4; // NOP NOP + kind, len
const SACK_BLOCK_LEN: usize = 8;
const ELN_LEN: usize = 4; // kind 253, len 4, ExID

impl TcpOptions {
    #[inline]
    fn fixed_len(&self) -> usize {
        let mut n = 0;
        if self.mss.is_some() {
            n += MSS_LEN;
        }
        if self.window_scale.is_some() {
            n += WINDOW_SCALE_LEN;
        }
        if self.sack_permitted {
            n += SACK_PERMITTED_LEN;
        }
        if self.timestamps.is_some() {
            n += TIMESTAMPS_LEN;
        }
        if self.eln {
            n += ELN_LEN;
        }
        if self.poll {
            n += ELN_LEN;
        }
        n
    }

    /// How many SACK blocks fit beside the other options: 4 alone, 3 with
    /// timestamps (2 with timestamps and ELN).
    #[inline]
    pub fn max_sack_blocks(&self) -> usize {
        Self::sack_room(self.fixed_len())
    }

    /// SACK blocks that fit beside `fixed` bytes of other options.
    #[inline]
    fn sack_room(fixed: usize) -> usize {
        let room = MAX_OPTIONS_LEN.saturating_sub(fixed);
        (room.saturating_sub(SACK_BASE_LEN) / SACK_BLOCK_LEN).min(MAX_SACK_BLOCKS)
    }

    /// SACK blocks actually emitted: those beyond the option space are left out.
    #[inline]
    fn emitted_sack_blocks(&self) -> usize {
        // Most segments carry none: skip measuring the other options.
        match self.sack_blocks.len() {
            0 => 0,
            n => n.min(self.max_sack_blocks()),
        }
    }

    /// Emitted option bytes (a multiple of 4, at most 40). Every segment
    /// sent asks (twice: to size the buffer, then to write the header), so
    /// the other options are measured once here.
    #[inline]
    pub fn len(&self) -> usize {
        let fixed = self.fixed_len();
        let sack = match self.sack_blocks.len().min(Self::sack_room(fixed)) {
            0 => 0,
            n => SACK_BASE_LEN + n * SACK_BLOCK_LEN,
        };
        (fixed + sack).min(MAX_OPTIONS_LEN)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Parses an option list into `self` (the defaults), skipping unknown
    /// options. In place: a returned `TcpOptions` was moved three times
    /// per segment on the way into its `TcpRepr`.
    fn parse_into(&mut self, mut bytes: &[u8]) -> Result<()> {
        let opts = self;
        while let Some(&kind) = bytes.first() {
            match kind {
                option::END => break,
                option::NOP => bytes = &bytes[1..],
                _ => {
                    let len = *bytes.get(1).ok_or(Error::Truncated)? as usize;
                    if len < 2 {
                        return Err(Error::Malformed);
                    }
                    let body = bytes.get(2..len).ok_or(Error::Truncated)?;
                    opts.parse_one(kind, body)?;
                    bytes = &bytes[len..];
                }
            }
        }
        Ok(())
    }

    fn parse_one(&mut self, kind: u8, body: &[u8]) -> Result<()> {
        match (kind, body.len()) {
            (option::MSS, 2) => self.mss = Some(u16::from_be_bytes([body[0], body[1]])),
            (option::WINDOW_SCALE, 1) => self.window_scale = Some(body[0]),
            (option::SACK_PERMITTED, 0) => self.sack_permitted = true,
            (option::TIMESTAMPS, 8) => {
                let val = u32::from_be_bytes([body[0], body[1], body[2], body[3]]);
                let ecr = u32::from_be_bytes([body[4], body[5], body[6], body[7]]);
                self.timestamps = Some((val, ecr));
            }
            (option::SACK, n) if n > 0 && n % 8 == 0 && n / 8 <= MAX_SACK_BLOCKS => {
                self.sack_blocks = SackBlocks::new();
                for b in body.chunks_exact(8) {
                    self.sack_blocks.push(SackBlock {
                        left: u32::from_be_bytes([b[0], b[1], b[2], b[3]]),
                        right: u32::from_be_bytes([b[4], b[5], b[6], b[7]]),
                    });
                }
            }
            (option::EXPERIMENT, n)
                if n >= 2 && u16::from_be_bytes([body[0], body[1]]) == ELN_EXID =>
            {
                if n != 2 {
                    return Err(Error::Malformed);
                }
                self.eln = true;
            }
            (option::EXPERIMENT, n)
                if n >= 2 && u16::from_be_bytes([body[0], body[1]]) == POLL_EXID =>
            {
                if n != 2 {
                    return Err(Error::Malformed);
                }
                self.poll = true;
            }
            (option::MSS | option::WINDOW_SCALE | option::SACK_PERMITTED, _)
            | (option::TIMESTAMPS | option::SACK, _) => return Err(Error::Malformed),
            _ => {} // Unknown options are skipped, as RFC 9293 §3.1 requires.
        }
        Ok(())
    }

    /// Writes the options into `out`, which is exactly `self.len()` long.
    fn emit(&self, out: &mut [u8]) {
        let mut w = Writer { out, at: 0 };
        if let Some(mss) = self.mss {
            w.put(&[option::MSS, 4]);
            w.put(&mss.to_be_bytes());
        }
        if let Some(shift) = self.window_scale {
            w.put(&[option::NOP, option::WINDOW_SCALE, 3, shift]);
        }
        if self.sack_permitted {
            w.put(&[option::NOP, option::NOP, option::SACK_PERMITTED, 2]);
        }
        if let Some((val, ecr)) = self.timestamps {
            w.put(&[option::NOP, option::NOP, option::TIMESTAMPS, 10]);
            w.put(&val.to_be_bytes());
            w.put(&ecr.to_be_bytes());
        }
        if self.eln {
            w.put(&[option::EXPERIMENT, ELN_LEN as u8]);
            w.put(&ELN_EXID.to_be_bytes());
        }
        if self.poll {
            w.put(&[option::EXPERIMENT, ELN_LEN as u8]);
            w.put(&POLL_EXID.to_be_bytes());
        }
        let n = self.emitted_sack_blocks();
        if n > 0 {
            let len = (2 + n * SACK_BLOCK_LEN) as u8;
            w.put(&[option::NOP, option::NOP, option::SACK, len]);
            for b in &self.sack_blocks.as_slice()[..n] {
                w.put(&b.left.to_be_bytes());
                w.put(&b.right.to_be_bytes());
            }
        }
    }
}

struct Writer<'a> {
    out: &'a mut [u8],
    at: usize,
}

impl Writer<'_> {
    fn put(&mut self, bytes: &[u8]) {
        self.out[self.at..self.at + bytes.len()].copy_from_slice(bytes);
        self.at += bytes.len();
    }
}

/// A parsed TCP segment.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TcpRepr<'a> {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u32,
    /// The acknowledgment number; `Some` iff the ACK flag is set.
    pub ack: Option<u32>,
    pub flags: TcpFlags,
    /// The window field as sent, before window scaling.
    pub window: u16,
    pub options: TcpOptions,
    pub payload: &'a [u8],
}

impl<'a> TcpRepr<'a> {
    /// Parses a segment. The checksum is not verified (see the module docs).
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &TcpPacket<&'a T>) -> Result<TcpRepr<'a>> {
        packet.check_len()?;
        let bytes: &'a [u8] = packet.buffer.as_ref();
        let header_len = packet.header_len() as usize;
        // Every segment received is parsed: the fixed header is read as
        // one array, so no field needs a bounds check of its own.
        let h: &[u8; HEADER_LEN] = bytes.first_chunk().ok_or(Error::Truncated)?;
        let u16_at = |i: usize| u16::from_be_bytes([h[i], h[i + 1]]);
        let u32_at = |i: usize| u32::from_be_bytes([h[i], h[i + 1], h[i + 2], h[i + 3]]);
        let bits = h[field::FLAGS];
        let mut repr = TcpRepr {
            src_port: u16_at(field::SRC_PORT.start),
            dst_port: u16_at(field::DST_PORT.start),
            seq: u32_at(field::SEQ.start),
            ack: (bits & flag::ACK != 0).then(|| u32_at(field::ACK.start)),
            flags: TcpFlags::from_bits(bits),
            window: u16_at(field::WINDOW.start),
            options: TcpOptions::default(),
            payload: &bytes[header_len..],
        };
        // Most segments carry no options (no timestamps, no SACK blocks).
        if header_len > HEADER_LEN {
            repr.options.parse_into(&bytes[HEADER_LEN..header_len])?;
        }
        Ok(repr)
    }

    /// Header length with options, padded to 4 bytes.
    #[inline]
    pub fn header_len(&self) -> usize {
        HEADER_LEN + self.options.len()
    }

    /// Header plus payload.
    #[inline]
    pub fn buffer_len(&self) -> usize {
        self.header_len() + self.payload.len()
    }

    /// Writes the segment; the buffer must be at least `buffer_len()` long
    /// and the packet view is over exactly the bytes to send. The checksum
    /// field is written as 0.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut TcpPacket<T>) {
        let header_len = self.header_len();
        let ack = if self.ack.is_some() { flag::ACK } else { 0 };
        // Every segment sent is written here: the fixed header is built as
        // one array and stored at once instead of field by field, each
        // with its own bounds check. Checksum and urgent pointer stay 0.
        let mut h = [0u8; HEADER_LEN];
        h[field::SRC_PORT].copy_from_slice(&self.src_port.to_be_bytes());
        h[field::DST_PORT].copy_from_slice(&self.dst_port.to_be_bytes());
        h[field::SEQ].copy_from_slice(&self.seq.to_be_bytes());
        h[field::ACK].copy_from_slice(&self.ack.unwrap_or(0).to_be_bytes());
        h[field::DATA_OFFSET] = ((header_len / 4) as u8) << 4;
        h[field::FLAGS] = self.flags.bits() | ack;
        h[field::WINDOW].copy_from_slice(&self.window.to_be_bytes());
        let buffer = packet.buffer.as_mut();
        buffer[..HEADER_LEN].copy_from_slice(&h);
        // Most segments carry no options: the call would check each kind.
        if header_len > HEADER_LEN {
            self.options.emit(&mut buffer[HEADER_LEN..header_len]);
        }
        buffer[header_len..header_len + self.payload.len()].copy_from_slice(self.payload);
    }

    /// Appends the segment to `out` (reusing its capacity).
    pub fn emit_to_vec(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.resize(start + self.buffer_len(), 0);
        self.emit(&mut TcpPacket::new_unchecked(&mut out[start..]));
    }

    /// Number of bytes of sequence space used: payload plus SYN and FIN.
    #[inline]
    pub fn segment_len(&self) -> usize {
        self.payload.len() + self.flags.syn as usize + self.flags.fin as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sack(blocks: &[(u32, u32)]) -> SackBlocks {
        let mut s = SackBlocks::new();
        for &(left, right) in blocks {
            s.push(SackBlock { left, right });
        }
        s
    }

    fn repr(payload: &[u8]) -> TcpRepr<'_> {
        TcpRepr {
            src_port: 4000,
            dst_port: 80,
            seq: 0xdead_beef,
            ack: Some(0x0102_0304),
            flags: TcpFlags {
                psh: true,
                ..TcpFlags::default()
            },
            window: 65_000,
            options: TcpOptions::default(),
            payload,
        }
    }

    fn round_trip(r: &TcpRepr<'_>) -> Vec<u8> {
        let mut buf = Vec::new();
        r.emit_to_vec(&mut buf);
        assert_eq!(buf.len(), r.buffer_len());
        let parsed = TcpRepr::parse(&TcpPacket::new_checked(&buf[..]).unwrap()).unwrap();
        assert_eq!(&parsed, r);
        buf
    }

    #[test]
    fn plain_segment_round_trips_with_exact_bytes() {
        let buf = round_trip(&repr(b"hi"));
        assert_eq!(
            &buf[..20],
            &[
                0x0f, 0xa0, 0x00, 0x50, 0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0x03, 0x04, 0x50, 0x18,
                0xfd, 0xe8, 0, 0, 0, 0
            ]
        );
        assert_eq!(&buf[20..], b"hi");
    }

    #[test]
    fn syn_with_every_handshake_option_round_trips() {
        let mut r = repr(&[]);
        r.ack = None;
        r.flags = TcpFlags {
            syn: true,
            ..TcpFlags::default()
        };
        r.options = TcpOptions {
            mss: Some(1460),
            window_scale: Some(7),
            sack_permitted: true,
            sack_blocks: SackBlocks::new(),
            timestamps: Some((1, 0)),
            eln: false,
            poll: false,
        };
        let buf = round_trip(&r);
        assert_eq!(r.header_len(), 44);
        assert_eq!(&buf[20..28], &[2, 4, 0x05, 0xb4, 1, 3, 3, 7]);
        assert_eq!(buf[13], flag::SYN);
    }

    #[test]
    fn each_option_alone_round_trips() {
        let all = [
            TcpOptions {
                mss: Some(536),
                ..Default::default()
            },
            TcpOptions {
                window_scale: Some(14),
                ..Default::default()
            },
            TcpOptions {
                sack_permitted: true,
                ..Default::default()
            },
            TcpOptions {
                timestamps: Some((u32::MAX, 7)),
                ..Default::default()
            },
            TcpOptions {
                sack_blocks: sack(&[(1, 2)]),
                ..Default::default()
            },
        ];
        for o in all {
            let mut r = repr(b"x");
            r.options = o;
            round_trip(&r);
            assert_eq!(r.header_len() % 4, 0);
        }
    }

    #[test]
    fn four_sack_blocks_fit_alone_three_with_timestamps() {
        let blocks = sack(&[(1, 2), (3, 4), (5, 6), (7, 8)]);
        let mut r = repr(&[]);
        r.options.sack_blocks = blocks;
        assert_eq!(r.header_len(), 20 + 36);
        round_trip(&r);

        r.options.timestamps = Some((9, 10));
        assert_eq!(r.options.max_sack_blocks(), 3);
        assert_eq!(r.header_len(), 20 + 12 + 28);
        let mut buf = Vec::new();
        r.emit_to_vec(&mut buf);
        let parsed = TcpRepr::parse(&TcpPacket::new_checked(&buf[..]).unwrap()).unwrap();
        assert_eq!(parsed.options.sack_blocks, sack(&[(1, 2), (3, 4), (5, 6)]));
    }

    #[test]
    fn eln_option_has_exact_bytes_and_takes_sack_room() {
        let mut r = repr(&[]);
        r.options.eln = true;
        r.options.sack_blocks = sack(&[(1, 2), (3, 4), (5, 6), (7, 8)]);
        let buf = round_trip(&r);
        // ELN first, then four SACK blocks: 4 + 4 + 32 = 40 option bytes.
        assert_eq!(r.header_len(), 60);
        assert_eq!(
            &buf[20..28],
            &[0xfd, 0x04, 0x45, 0x4c, 0x01, 0x01, 0x05, 0x22]
        );

        r.options.timestamps = Some((9, 10));
        assert_eq!(r.options.max_sack_blocks(), 2);
        let mut buf = Vec::new();
        r.emit_to_vec(&mut buf);
        assert_eq!(&buf[32..36], &[0xfd, 0x04, 0x45, 0x4c]);
        let parsed = parse(&buf).unwrap();
        assert!(parsed.options.eln);
        assert_eq!(parsed.options.sack_blocks, sack(&[(1, 2), (3, 4)]));
    }

    #[test]
    fn other_experiments_are_skipped_and_a_long_eln_is_malformed() {
        let other = header_with_options(&[option::EXPERIMENT, 4, 0x12, 0x34]);
        assert!(!parse(&other).unwrap().options.eln);
        let long = header_with_options(&[option::EXPERIMENT, 5, 0x45, 0x4c, 0]);
        assert_eq!(parse(&long).err(), Some(Error::Malformed));
        let eln =
            header_with_options(&[option::NOP, option::NOP, option::EXPERIMENT, 4, 0x45, 0x4c]);
        assert!(parse(&eln).unwrap().options.eln);
    }

    #[test]
    fn stp_poll_round_trips_and_a_long_one_is_malformed() {
        let mut r = repr(&[]);
        r.options.poll = true;
        let buf = round_trip(&r);
        let parsed = parse(&buf).unwrap();
        assert!(parsed.options.poll && !parsed.options.eln);
        let long = header_with_options(&[option::EXPERIMENT, 5, 0x50, 0x4c, 0]);
        assert_eq!(parse(&long).err(), Some(Error::Malformed));
    }

    #[test]
    fn header_never_exceeds_sixty_bytes() {
        let mut r = repr(&[]);
        r.options = TcpOptions {
            mss: Some(1),
            window_scale: Some(1),
            sack_permitted: true,
            sack_blocks: sack(&[(1, 2), (3, 4), (5, 6), (7, 8)]),
            timestamps: Some((1, 2)),
            eln: true,
            poll: true,
        };
        assert!(r.header_len() <= 60);
        let mut buf = Vec::new();
        r.emit_to_vec(&mut buf);
        assert!(TcpRepr::parse(&TcpPacket::new_checked(&buf[..]).unwrap()).is_ok());
    }

    #[test]
    fn flags_map_to_their_bits() {
        let mut r = repr(&[]);
        r.ack = None;
        r.flags = TcpFlags {
            syn: true,
            fin: true,
            rst: true,
            psh: true,
        };
        let buf = round_trip(&r);
        assert_eq!(buf[13], 0x0f);
    }

    fn parse(bytes: &[u8]) -> Result<TcpRepr<'_>> {
        TcpRepr::parse(&TcpPacket::new_unchecked(bytes))
    }

    fn header_with_options(opts: &[u8]) -> Vec<u8> {
        let mut buf = Vec::new();
        repr(&[]).emit_to_vec(&mut buf);
        let words = opts.len().div_ceil(4);
        buf.extend_from_slice(opts);
        buf.resize(20 + words * 4, option::END);
        buf[12] = ((5 + words) as u8) << 4;
        buf
    }

    #[test]
    fn short_buffers_are_truncated() {
        for n in 0..20 {
            assert_eq!(parse(&[0x50; 20][..n]), Err(Error::Truncated));
        }
    }

    #[test]
    fn data_offset_below_five_is_malformed() {
        let mut buf = header_with_options(&[]);
        for off in 0..5u8 {
            buf[12] = off << 4;
            assert_eq!(parse(&buf), Err(Error::Malformed));
        }
    }

    #[test]
    fn data_offset_past_buffer_is_truncated() {
        let mut buf = header_with_options(&[]);
        buf[12] = 6 << 4;
        assert_eq!(parse(&buf), Err(Error::Truncated));
    }

    #[test]
    fn bad_options_are_rejected() {
        let cases: &[(&[u8], Error)] = &[
            (
                &[option::NOP, option::NOP, option::NOP, option::MSS],
                Error::Truncated,
            ),
            (&[option::MSS], Error::Malformed),
            (&[option::MSS, 0], Error::Malformed),
            (&[option::MSS, 1], Error::Malformed),
            (&[option::MSS, 3, 0], Error::Malformed),
            (&[option::MSS, 8, 0, 0], Error::Truncated),
            (&[option::WINDOW_SCALE, 4, 0, 0], Error::Malformed),
            (&[option::SACK_PERMITTED, 3, 0], Error::Malformed),
            (&[option::TIMESTAMPS, 6, 0, 0, 0, 0], Error::Malformed),
            (&[option::SACK, 2], Error::Malformed),
            (&[option::SACK, 6, 0, 0, 0, 0], Error::Malformed),
            (&[99, 1], Error::Malformed),
        ];
        for (opts, err) in cases {
            assert_eq!(
                parse(&header_with_options(opts)).err(),
                Some(*err),
                "{opts:?}"
            );
        }
    }

    #[test]
    fn unknown_options_and_padding_are_skipped() {
        let buf = header_with_options(&[option::NOP, 99, 4, 1, 2, option::MSS, 4, 0, 100]);
        assert_eq!(parse(&buf).unwrap().options.mss, Some(100));
        // Everything after END is ignored, even garbage.
        let buf = header_with_options(&[option::END, 0xff, 0xff, 0xff]);
        assert_eq!(parse(&buf).unwrap().options, TcpOptions::default());
    }

    #[test]
    fn checksum_fills_and_verifies_and_parse_ignores_it() {
        let mut buf = Vec::new();
        repr(b"payload!").emit_to_vec(&mut buf);
        let (src, dst) = ([10, 0, 0, 1], [10, 0, 0, 2]);
        let mut p = TcpPacket::new_unchecked(&mut buf[..]);
        p.fill_checksum_ipv4(src, dst);
        assert_ne!(p.checksum(), 0);
        assert!(p.verify_checksum_ipv4(src, dst));
        assert!(!p.verify_checksum_ipv4(src, [10, 0, 0, 3]));
        buf[16] ^= 0xff;
        assert!(parse(&buf).is_ok());
    }

    #[test]
    fn checksum_matches_a_known_segment() {
        // A SYN captured from Linux: 192.168.0.1:49152 -> 192.168.0.2:80.
        let mut seg = [
            0xc0, 0x00, 0x00, 0x50, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x50, 0x02,
            0x72, 0x10, 0x00, 0x00, 0x00, 0x00,
        ];
        let src = [192, 168, 0, 1];
        let dst = [192, 168, 0, 2];
        let c = checksum_ipv4(src, dst, &seg);
        seg[16..18].copy_from_slice(&c.to_be_bytes());
        // Recompute by hand: pseudo header + header words, folded.
        let words: u32 = [0xc0a8u32, 0x0001, 0xc0a8, 0x0002, 0x0006, 0x0014]
            .iter()
            .sum::<u32>()
            + [0xc000u32, 0x0050, 0, 1, 0, 0, 0x5002, 0x7210, 0, 0]
                .iter()
                .sum::<u32>();
        let folded = (words & 0xffff) + (words >> 16);
        assert_eq!(c, !(folded as u16));
        assert_eq!(checksum_ipv4(src, dst, &seg), 0);
    }

    fn arb_options() -> impl Strategy<Value = TcpOptions> {
        (
            any::<Option<u16>>(),
            any::<Option<u8>>(),
            any::<bool>(),
            proptest::collection::vec(any::<(u32, u32)>(), 0..=4),
            any::<Option<(u32, u32)>>(),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(
                |(mss, window_scale, sack_permitted, blocks, timestamps, eln, poll)| {
                    let mut o = TcpOptions {
                        mss,
                        window_scale,
                        sack_permitted,
                        sack_blocks: sack(&blocks),
                        timestamps,
                        eln,
                        poll,
                    };
                    let fit = o.max_sack_blocks();
                    o.sack_blocks.truncate(fit);
                    o
                },
            )
    }

    proptest! {
        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..100)) {
            let _ = parse(&bytes);
        }

        #[test]
        fn parse_never_panics_on_plausible_headers(
            opts in proptest::collection::vec(any::<u8>(), 0..40),
            payload in proptest::collection::vec(any::<u8>(), 0..8),
        ) {
            let mut buf = header_with_options(&opts);
            buf.extend_from_slice(&payload);
            let _ = parse(&buf);
        }

        #[test]
        fn emit_then_parse_round_trips(
            src_port: u16, dst_port: u16, seq: u32, ack: Option<u32>,
            syn: bool, fin: bool, rst: bool, psh: bool, window: u16,
            options in arb_options(),
            payload in proptest::collection::vec(any::<u8>(), 0..64),
        ) {
            let r = TcpRepr {
                src_port, dst_port, seq, ack,
                flags: TcpFlags { syn, fin, rst, psh },
                window, options, payload: &payload,
            };
            let mut buf = Vec::new();
            r.emit_to_vec(&mut buf);
            let parsed = TcpRepr::parse(&TcpPacket::new_checked(&buf[..]).unwrap()).unwrap();
            prop_assert_eq!(parsed, r);
        }
    }
}
