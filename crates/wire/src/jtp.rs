//! JTP (JAVeLEN Transport Protocol) headers: the data packet and the ACK
//! (Riga, Matta, Medina, Partridge, Redi; §2.1 of the paper).
//!
//! Both kinds share a 4-byte prefix (version and kind, flags, flow id). A data
//! packet carries the fields iJTP rewrites on every hop (minimum effective
//! available rate, loss tolerance, energy used, hops travelled) so a relay
//! can change them in place through [`JtpPacket`] without re-emitting. An ACK
//! carries the cumulative ACK, the SNACK list, the locally-recovered list,
//! and the receiver's orders to the source (rate, energy budget, feedback
//! period).
//!
//! Two layouts, told apart on the wire by the `P` flag so that a relay needs
//! no configuration to read either ([`Format`]):
//! * [`Format::Compact`], our default: a 24-byte data header, a 28-byte ACK
//!   plus 4 bytes per list entry;
//! * [`Format::Paper`], the prototype's sizes for the reproduction (§6.1: "the
//!   JTP header is 28 bytes and the JTP ACK header is 200 bytes"): the same
//!   fields zero-padded to 28 bytes, and every ACK padded to 200 bytes, which
//!   bounds its two lists to [`PAPER_ACK_ENTRIES`] entries together.
//!
//! Every field is big-endian. See docs/wire.md for the byte diagrams.

use core::fmt;

use crate::{Error, Result};

/// Byte offsets of the fields.
mod field {
    use core::ops::Range;
    /// Version in the high nibble, kind in the low nibble.
    pub const VERSION_KIND: usize = 0;
    pub const FLAGS: usize = 1;
    pub const FLOW: Range<usize> = 2..4;

    // Data packet.
    pub const SEQ: Range<usize> = 4..8;
    pub const AVAILABLE_RATE: Range<usize> = 8..12;
    pub const ENERGY_BUDGET: Range<usize> = 12..16;
    pub const ENERGY_USED: Range<usize> = 16..20;
    pub const LOSS_TOLERANCE: Range<usize> = 20..22;
    pub const HOPS: usize = 22;
    pub const PRIORITY: usize = 23;

    // ACK.
    pub const CUM_ACK: Range<usize> = 4..8;
    pub const RATE: Range<usize> = 8..12;
    pub const ACK_ENERGY_BUDGET: Range<usize> = 12..16;
    pub const FEEDBACK_PERIOD: Range<usize> = 16..20;
    pub const HIGHEST: Range<usize> = 20..24;
    pub const SNACK_COUNT: Range<usize> = 24..26;
    pub const LOCAL_COUNT: Range<usize> = 26..28;
}

/// The header version this module reads and writes.
pub const VERSION: u8 = 1;
/// IPv4 protocol number JTP travels behind (experimental, RFC 3692).
pub const PROTOCOL: u8 = 253;
/// Compact data header length.
pub const DATA_HEADER_LEN: usize = 24;
/// The paper's prototype data header length (§6.1).
pub const PAPER_DATA_HEADER_LEN: usize = 28;
/// ACK length without its lists.
pub const ACK_HEADER_LEN: usize = 28;
/// The paper's prototype ACK length, lists and padding included (§6.1).
pub const PAPER_ACK_LEN: usize = 200;
/// Bytes per SNACK or locally-recovered entry (a sequence number).
pub const ENTRY_LEN: usize = 4;
/// Most list entries (SNACK and locally recovered together) a paper-sized
/// ACK holds: (200 − 28) / 4.
pub const PAPER_ACK_ENTRIES: usize = (PAPER_ACK_LEN - ACK_HEADER_LEN) / ENTRY_LEN;
/// Most entries one list of a compact ACK can announce (a 16-bit count).
pub const MAX_LIST_ENTRIES: usize = u16::MAX as usize;
/// The available-rate value meaning "no estimate yet / no limit".
pub const RATE_UNKNOWN: u32 = u32::MAX;

mod kind {
    pub const DATA: u8 = 1;
    pub const ACK: u8 = 2;
}

mod flag {
    /// The packet is laid out in the paper's prototype sizes.
    pub const PAPER: u8 = 0x80;
    /// Data: the last packet of the stream. ACK: the receiver has everything.
    pub const FIN: u8 = 0x01;
    /// Data: an end-to-end retransmission by the source.
    pub const RETX: u8 = 0x02;
    /// Data: retransmitted from a relay's cache on the source's behalf.
    pub const LOCAL: u8 = 0x04;
    /// ACK: sent early because the path monitor saw a persistent change.
    pub const URGENT: u8 = 0x02;
    pub const DATA_ALL: u8 = PAPER | FIN | RETX | LOCAL;
    pub const ACK_ALL: u8 = PAPER | FIN | URGENT;
}

/// Which layout a packet uses.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Format {
    /// Our default: no padding.
    #[default]
    Compact,
    /// The paper's prototype sizes: 28-byte data header, 200-byte ACK.
    Paper,
}

impl Format {
    /// Data header length in this format.
    pub const fn data_header_len(self) -> usize {
        match self {
            Format::Compact => DATA_HEADER_LEN,
            Format::Paper => PAPER_DATA_HEADER_LEN,
        }
    }

    /// Most list entries (SNACK plus locally recovered) an ACK can carry.
    pub const fn max_ack_entries(self) -> usize {
        match self {
            Format::Compact => 2 * MAX_LIST_ENTRIES,
            Format::Paper => PAPER_ACK_ENTRIES,
        }
    }

    fn from_flags(flags: u8) -> Format {
        if flags & flag::PAPER != 0 {
            Format::Paper
        } else {
            Format::Compact
        }
    }

    fn flag(self) -> u8 {
        match self {
            Format::Compact => 0,
            Format::Paper => flag::PAPER,
        }
    }
}

/// The two kinds of JTP packet.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Data,
    Ack,
}

/// An end-to-end loss tolerance as a 16-bit fraction: `0` asks for every
/// packet, `u16::MAX` tolerates losing all of them.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LossTolerance(pub u16);

impl LossTolerance {
    /// Full reliability (the paper's jtp0).
    pub const ZERO: LossTolerance = LossTolerance(0);

    /// The nearest encoding of a fraction; values outside [0, 1] (and NaN,
    /// as 0) are clamped.
    pub fn from_fraction(f: f64) -> LossTolerance {
        let f = if f.is_nan() { 0.0 } else { f.clamp(0.0, 1.0) };
        LossTolerance((f * u16::MAX as f64).round() as u16)
    }

    /// The tolerance as a fraction in [0, 1].
    pub fn fraction(self) -> f64 {
        self.0 as f64 / u16::MAX as f64
    }
}

/// A read/write view of a JTP packet (data or ACK) in a byte buffer.
#[derive(Debug, Clone)]
pub struct JtpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> JtpPacket<T> {
    /// Wraps a buffer without checking it; accessors may panic on short
    /// buffers, so use [`JtpPacket::new_checked`] on untrusted input.
    pub const fn new_unchecked(buffer: T) -> JtpPacket<T> {
        JtpPacket { buffer }
    }

    /// Wraps a buffer after [`JtpPacket::check_len`].
    pub fn new_checked(buffer: T) -> Result<JtpPacket<T>> {
        let packet = JtpPacket::new_unchecked(buffer);
        packet.check_len()?;
        Ok(packet)
    }

    /// Checks that every accessor of the packet's kind is safe: the version
    /// and kind are known, the header (and an ACK's lists) fit, and a
    /// paper-sized ACK's lists fit in its 200 bytes.
    pub fn check_len(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        if b.len() < 4 {
            return Err(Error::Truncated);
        }
        if b[field::VERSION_KIND] >> 4 != VERSION {
            return Err(Error::Malformed);
        }
        let kind = self.kind().ok_or(Error::Malformed)?;
        let format = self.format();
        match kind {
            Kind::Data => {
                if b.len() < format.data_header_len() {
                    return Err(Error::Truncated);
                }
            }
            Kind::Ack => {
                if b.len() < ACK_HEADER_LEN {
                    return Err(Error::Truncated);
                }
                let lists = self.ack_lists_len();
                if format == Format::Paper && lists > PAPER_ACK_LEN {
                    return Err(Error::Malformed);
                }
                let need = match format {
                    Format::Compact => lists,
                    Format::Paper => PAPER_ACK_LEN,
                };
                if b.len() < need {
                    return Err(Error::Truncated);
                }
            }
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

    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[field::VERSION_KIND] >> 4
    }
    /// The packet's kind, `None` if the kind nibble is unknown.
    pub fn kind(&self) -> Option<Kind> {
        match self.buffer.as_ref()[field::VERSION_KIND] & 0x0f {
            kind::DATA => Some(Kind::Data),
            kind::ACK => Some(Kind::Ack),
            _ => None,
        }
    }
    pub fn flags(&self) -> u8 {
        self.buffer.as_ref()[field::FLAGS]
    }
    pub fn format(&self) -> Format {
        Format::from_flags(self.flags())
    }
    pub fn flow(&self) -> u16 {
        self.u16_at(field::FLOW)
    }

    // Data accessors.
    pub fn seq(&self) -> u32 {
        self.u32_at(field::SEQ)
    }
    pub fn available_rate(&self) -> u32 {
        self.u32_at(field::AVAILABLE_RATE)
    }
    pub fn energy_budget(&self) -> u32 {
        self.u32_at(field::ENERGY_BUDGET)
    }
    pub fn energy_used(&self) -> u32 {
        self.u32_at(field::ENERGY_USED)
    }
    pub fn loss_tolerance(&self) -> LossTolerance {
        LossTolerance(self.u16_at(field::LOSS_TOLERANCE))
    }
    pub fn hops(&self) -> u8 {
        self.buffer.as_ref()[field::HOPS]
    }
    pub fn priority(&self) -> u8 {
        self.buffer.as_ref()[field::PRIORITY]
    }
    /// The payload of a data packet (after the format's header).
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.format().data_header_len()..]
    }

    // ACK accessors.
    pub fn cum_ack(&self) -> u32 {
        self.u32_at(field::CUM_ACK)
    }
    pub fn rate(&self) -> u32 {
        self.u32_at(field::RATE)
    }
    pub fn ack_energy_budget(&self) -> u32 {
        self.u32_at(field::ACK_ENERGY_BUDGET)
    }
    pub fn feedback_period_us(&self) -> u32 {
        self.u32_at(field::FEEDBACK_PERIOD)
    }
    pub fn highest(&self) -> u32 {
        self.u32_at(field::HIGHEST)
    }
    pub fn snack_count(&self) -> u16 {
        self.u16_at(field::SNACK_COUNT)
    }
    pub fn local_count(&self) -> u16 {
        self.u16_at(field::LOCAL_COUNT)
    }
    /// Where an ACK's lists end (header plus both lists).
    fn ack_lists_len(&self) -> usize {
        ACK_HEADER_LEN + ENTRY_LEN * (self.snack_count() as usize + self.local_count() as usize)
    }
    /// The `i`th SNACK entry (`i < snack_count()`).
    pub fn snack(&self, i: usize) -> u32 {
        let at = ACK_HEADER_LEN + ENTRY_LEN * i;
        self.u32_at(at..at + ENTRY_LEN)
    }
    /// The `i`th locally-recovered entry (`i < local_count()`).
    pub fn local(&self, i: usize) -> u32 {
        let at = ACK_HEADER_LEN + ENTRY_LEN * (self.snack_count() as usize + i);
        self.u32_at(at..at + ENTRY_LEN)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> JtpPacket<T> {
    fn set_u16(&mut self, range: core::ops::Range<usize>, v: u16) {
        self.buffer.as_mut()[range].copy_from_slice(&v.to_be_bytes());
    }
    fn set_u32(&mut self, range: core::ops::Range<usize>, v: u32) {
        self.buffer.as_mut()[range].copy_from_slice(&v.to_be_bytes());
    }
    pub fn set_version_kind(&mut self, kind: Kind) {
        let k = match kind {
            Kind::Data => kind::DATA,
            Kind::Ack => kind::ACK,
        };
        self.buffer.as_mut()[field::VERSION_KIND] = (VERSION << 4) | k;
    }
    pub fn set_flags(&mut self, v: u8) {
        self.buffer.as_mut()[field::FLAGS] = v;
    }
    pub fn set_flow(&mut self, v: u16) {
        self.set_u16(field::FLOW, v)
    }
    pub fn set_seq(&mut self, v: u32) {
        self.set_u32(field::SEQ, v)
    }
    pub fn set_available_rate(&mut self, v: u32) {
        self.set_u32(field::AVAILABLE_RATE, v)
    }
    pub fn set_energy_budget(&mut self, v: u32) {
        self.set_u32(field::ENERGY_BUDGET, v)
    }
    pub fn set_energy_used(&mut self, v: u32) {
        self.set_u32(field::ENERGY_USED, v)
    }
    pub fn set_loss_tolerance(&mut self, v: LossTolerance) {
        self.set_u16(field::LOSS_TOLERANCE, v.0)
    }
    pub fn set_hops(&mut self, v: u8) {
        self.buffer.as_mut()[field::HOPS] = v;
    }
    pub fn set_priority(&mut self, v: u8) {
        self.buffer.as_mut()[field::PRIORITY] = v;
    }
    /// Marks (or unmarks) a data packet as retransmitted from a cache.
    pub fn set_local(&mut self, on: bool) {
        let f = self.flags();
        self.set_flags(if on {
            f | flag::LOCAL
        } else {
            f & !flag::LOCAL
        });
    }
    pub fn set_cum_ack(&mut self, v: u32) {
        self.set_u32(field::CUM_ACK, v)
    }
    pub fn set_rate(&mut self, v: u32) {
        self.set_u32(field::RATE, v)
    }
    pub fn set_ack_energy_budget(&mut self, v: u32) {
        self.set_u32(field::ACK_ENERGY_BUDGET, v)
    }
    pub fn set_feedback_period_us(&mut self, v: u32) {
        self.set_u32(field::FEEDBACK_PERIOD, v)
    }
    pub fn set_highest(&mut self, v: u32) {
        self.set_u32(field::HIGHEST, v)
    }
    pub fn set_snack_count(&mut self, v: u16) {
        self.set_u16(field::SNACK_COUNT, v)
    }
    pub fn set_local_count(&mut self, v: u16) {
        self.set_u16(field::LOCAL_COUNT, v)
    }
}

/// Flags of a data packet (the format flag is [`JtpData::format`]).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct DataFlags {
    /// The last packet of the stream.
    pub fin: bool,
    /// An end-to-end retransmission by the source.
    pub retx: bool,
    /// Retransmitted from a relay's cache on the source's behalf.
    pub local: bool,
}

/// A parsed JTP data packet.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct JtpData<'a> {
    pub format: Format,
    pub flags: DataFlags,
    /// Tells apart connections between the same two endpoints.
    pub flow: u16,
    /// Packet sequence number (packets, not bytes; the stream starts at 0).
    pub seq: u32,
    /// The minimum effective available rate stamped so far along the path,
    /// bits per second ([`RATE_UNKNOWN`] until a hop stamps it).
    pub available_rate: u32,
    /// The energy the network may spend on this packet, microjoules.
    pub energy_budget: u32,
    /// The energy spent on it so far, microjoules.
    pub energy_used: u32,
    /// The loss tolerance left for the rest of the path.
    pub loss_tolerance: LossTolerance,
    /// Links crossed so far (saturating; informational, not a TTL: the energy
    /// budget bounds loops).
    pub hops: u8,
    /// Application priority (0 = default), for the application module.
    pub priority: u8,
    pub payload: &'a [u8],
}

/// A parsed JTP ACK.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JtpAck {
    pub format: Format,
    /// The receiver has every packet of the stream (through the FIN).
    pub fin: bool,
    /// Early feedback triggered by the path monitor, not the regular period.
    pub urgent: bool,
    pub flow: u16,
    /// Every packet below this sequence number arrived.
    pub cum_ack: u32,
    /// The sending rate the source must use from now on, bits per second.
    pub rate: u32,
    /// The energy budget the source should give each packet, microjoules.
    pub energy_budget: u32,
    /// When the source should expect the next regular ACK, microseconds.
    pub feedback_period_us: u32,
    /// One past the highest sequence number received (0: none yet). The
    /// SNACK can name only holes below it; packets at or above it are
    /// unseen, which tells the source a lost tail from one in flight.
    pub highest: u32,
    /// Packets the receiver asks for again (selective negative ACK).
    pub snack: Vec<u32>,
    /// Packets a relay already retransmitted from its cache for this ACK.
    pub local: Vec<u32>,
}

impl JtpAck {
    /// How many entries of each list are emitted: the locally-recovered list
    /// first (the source's back-off depends on it), the SNACK list in the
    /// room left; entries past the format's room are left out (a SNACK left
    /// out is asked again in the next ACK).
    pub fn emitted_lists(&self) -> (usize, usize) {
        let room = self.format.max_ack_entries();
        let local = self.local.len().min(room).min(MAX_LIST_ENTRIES);
        let snack = self.snack.len().min(room - local).min(MAX_LIST_ENTRIES);
        (snack, local)
    }

    /// Bytes on the wire.
    pub fn buffer_len(&self) -> usize {
        match self.format {
            Format::Compact => {
                let (s, l) = self.emitted_lists();
                ACK_HEADER_LEN + ENTRY_LEN * (s + l)
            }
            Format::Paper => PAPER_ACK_LEN,
        }
    }
}

/// A parsed JTP packet of either kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JtpRepr<'a> {
    Data(JtpData<'a>),
    Ack(JtpAck),
}

impl<'a> JtpRepr<'a> {
    /// Parses a packet. Bytes after an ACK (and its padding) are ignored;
    /// unknown flag bits are ignored.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &JtpPacket<&'a T>) -> Result<JtpRepr<'a>> {
        packet.check_len()?;
        let bytes: &'a [u8] = packet.buffer.as_ref();
        let flags = packet.flags();
        let format = packet.format();
        match packet.kind().ok_or(Error::Malformed)? {
            Kind::Data => Ok(JtpRepr::Data(JtpData {
                format,
                flags: DataFlags {
                    fin: flags & flag::FIN != 0,
                    retx: flags & flag::RETX != 0,
                    local: flags & flag::LOCAL != 0,
                },
                flow: packet.flow(),
                seq: packet.seq(),
                available_rate: packet.available_rate(),
                energy_budget: packet.energy_budget(),
                energy_used: packet.energy_used(),
                loss_tolerance: packet.loss_tolerance(),
                hops: packet.hops(),
                priority: packet.priority(),
                payload: &bytes[format.data_header_len()..],
            })),
            Kind::Ack => Ok(JtpRepr::Ack(JtpAck {
                format,
                fin: flags & flag::FIN != 0,
                urgent: flags & flag::URGENT != 0,
                flow: packet.flow(),
                cum_ack: packet.cum_ack(),
                rate: packet.rate(),
                energy_budget: packet.ack_energy_budget(),
                feedback_period_us: packet.feedback_period_us(),
                highest: packet.highest(),
                snack: (0..packet.snack_count() as usize)
                    .map(|i| packet.snack(i))
                    .collect(),
                local: (0..packet.local_count() as usize)
                    .map(|i| packet.local(i))
                    .collect(),
            })),
        }
    }

    pub fn kind(&self) -> Kind {
        match self {
            JtpRepr::Data(_) => Kind::Data,
            JtpRepr::Ack(_) => Kind::Ack,
        }
    }

    /// Header length (data) or whole length (ACK).
    pub fn header_len(&self) -> usize {
        match self {
            JtpRepr::Data(d) => d.format.data_header_len(),
            JtpRepr::Ack(a) => a.buffer_len(),
        }
    }

    /// Bytes on the wire.
    pub fn buffer_len(&self) -> usize {
        match self {
            JtpRepr::Data(d) => d.format.data_header_len() + d.payload.len(),
            JtpRepr::Ack(a) => a.buffer_len(),
        }
    }

    /// Writes the packet; the view must be over at least `buffer_len()`
    /// bytes. Padding is written as zeros.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut JtpPacket<T>) {
        let len = self.buffer_len();
        packet.buffer.as_mut()[..len].fill(0);
        match self {
            JtpRepr::Data(d) => {
                packet.set_version_kind(Kind::Data);
                let mut f = d.format.flag();
                if d.flags.fin {
                    f |= flag::FIN;
                }
                if d.flags.retx {
                    f |= flag::RETX;
                }
                if d.flags.local {
                    f |= flag::LOCAL;
                }
                packet.set_flags(f & flag::DATA_ALL);
                packet.set_flow(d.flow);
                packet.set_seq(d.seq);
                packet.set_available_rate(d.available_rate);
                packet.set_energy_budget(d.energy_budget);
                packet.set_energy_used(d.energy_used);
                packet.set_loss_tolerance(d.loss_tolerance);
                packet.set_hops(d.hops);
                packet.set_priority(d.priority);
                let start = d.format.data_header_len();
                packet.buffer.as_mut()[start..start + d.payload.len()].copy_from_slice(d.payload);
            }
            JtpRepr::Ack(a) => {
                packet.set_version_kind(Kind::Ack);
                let mut f = a.format.flag();
                if a.fin {
                    f |= flag::FIN;
                }
                if a.urgent {
                    f |= flag::URGENT;
                }
                packet.set_flags(f & flag::ACK_ALL);
                packet.set_flow(a.flow);
                packet.set_cum_ack(a.cum_ack);
                packet.set_rate(a.rate);
                packet.set_ack_energy_budget(a.energy_budget);
                packet.set_feedback_period_us(a.feedback_period_us);
                packet.set_highest(a.highest);
                let (s, l) = a.emitted_lists();
                packet.set_snack_count(s as u16);
                packet.set_local_count(l as u16);
                let entries = a.snack[..s].iter().chain(&a.local[..l]);
                for (i, seq) in entries.enumerate() {
                    let at = ACK_HEADER_LEN + ENTRY_LEN * i;
                    packet.set_u32(at..at + ENTRY_LEN, *seq);
                }
            }
        }
    }

    /// Appends the packet to `out` (reusing its capacity).
    pub fn emit_to_vec(&self, out: &mut Vec<u8>) {
        let start = out.len();
        out.resize(start + self.buffer_len(), 0);
        self.emit(&mut JtpPacket::new_unchecked(&mut out[start..]));
    }
}

fn rate(f: &mut fmt::Formatter<'_>, bps: u32) -> fmt::Result {
    if bps == RATE_UNKNOWN {
        write!(f, "?")
    } else {
        write!(f, "{bps}b/s")
    }
}

impl fmt::Display for JtpData<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JTP data flow={} seq={}", self.flow, self.seq)?;
        for (on, name) in [
            (self.flags.fin, " FIN"),
            (self.flags.retx, " RETX"),
            (self.flags.local, " LOCAL"),
        ] {
            if on {
                f.write_str(name)?;
            }
        }
        write!(f, " avail=")?;
        rate(f, self.available_rate)?;
        write!(
            f,
            " lt={:.4} energy={}/{}uJ hops={} prio={} len={}",
            self.loss_tolerance.fraction(),
            self.energy_used,
            self.energy_budget,
            self.hops,
            self.priority,
            self.payload.len()
        )?;
        if self.format == Format::Paper {
            write!(f, " (paper)")?;
        }
        Ok(())
    }
}

impl fmt::Display for JtpAck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JTP ack flow={} cum={}", self.flow, self.cum_ack)?;
        if self.fin {
            f.write_str(" FIN")?;
        }
        if self.urgent {
            f.write_str(" URGENT")?;
        }
        write!(f, " rate=")?;
        rate(f, self.rate)?;
        write!(
            f,
            " budget={}uJ T={}us highest={} snack={:?} local={:?}",
            self.energy_budget, self.feedback_period_us, self.highest, self.snack, self.local
        )?;
        if self.format == Format::Paper {
            write!(f, " (paper)")?;
        }
        Ok(())
    }
}

impl fmt::Display for JtpRepr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JtpRepr::Data(d) => d.fmt(f),
            JtpRepr::Ack(a) => a.fmt(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn data(payload: &[u8]) -> JtpData<'_> {
        JtpData {
            format: Format::Compact,
            flags: DataFlags {
                fin: true,
                ..DataFlags::default()
            },
            flow: 0x0102,
            seq: 0x0a0b_0c0d,
            available_rate: 250_000,
            energy_budget: 0x0001_0000,
            energy_used: 0x0203,
            loss_tolerance: LossTolerance(0x1999),
            hops: 3,
            priority: 1,
            payload,
        }
    }

    fn ack() -> JtpAck {
        JtpAck {
            format: Format::Compact,
            fin: false,
            urgent: true,
            flow: 7,
            cum_ack: 100,
            rate: 64_000,
            energy_budget: 5_000,
            feedback_period_us: 10_000_000,
            highest: 106,
            snack: vec![101, 105],
            local: vec![103],
        }
    }

    fn parse(bytes: &[u8]) -> Result<JtpRepr<'_>> {
        JtpRepr::parse(&JtpPacket::new_unchecked(bytes))
    }

    fn round_trip(r: &JtpRepr<'_>) -> Vec<u8> {
        let mut buf = Vec::new();
        r.emit_to_vec(&mut buf);
        assert_eq!(buf.len(), r.buffer_len());
        assert_eq!(&parse(&buf).unwrap(), r);
        buf
    }

    #[test]
    fn compact_data_has_exact_bytes() {
        let buf = round_trip(&JtpRepr::Data(data(b"hi")));
        assert_eq!(
            buf,
            [
                0x11, 0x01, 0x01, 0x02, // version 1 data, FIN, flow
                0x0a, 0x0b, 0x0c, 0x0d, // seq
                0x00, 0x03, 0xd0, 0x90, // available rate 250 000
                0x00, 0x01, 0x00, 0x00, // energy budget
                0x00, 0x00, 0x02, 0x03, // energy used
                0x19, 0x99, 0x03, 0x01, // loss tolerance, hops, priority
                b'h', b'i',
            ]
        );
    }

    #[test]
    fn paper_data_header_is_28_bytes_zero_padded() {
        let mut d = data(b"xyz");
        d.format = Format::Paper;
        d.flags = DataFlags {
            fin: false,
            retx: true,
            local: true,
        };
        let buf = round_trip(&JtpRepr::Data(d));
        assert_eq!(buf.len(), 28 + 3);
        assert_eq!(&buf[..2], &[0x11, 0x86]);
        assert_eq!(&buf[24..28], &[0, 0, 0, 0]);
        assert_eq!(&buf[28..], b"xyz");
    }

    #[test]
    fn compact_ack_has_exact_bytes() {
        let buf = round_trip(&JtpRepr::Ack(ack()));
        assert_eq!(
            buf,
            [
                0x12, 0x02, 0x00, 0x07, // version 1 ACK, URGENT, flow
                0x00, 0x00, 0x00, 0x64, // cumulative ACK 100
                0x00, 0x00, 0xfa, 0x00, // rate 64 000
                0x00, 0x00, 0x13, 0x88, // energy budget 5 000
                0x00, 0x98, 0x96, 0x80, // feedback period 10 s
                0x00, 0x00, 0x00, 0x6a, // highest received + 1 = 106
                0x00, 0x02, 0x00, 0x01, // two SNACK entries, one local
                0x00, 0x00, 0x00, 0x65, // SNACK 101
                0x00, 0x00, 0x00, 0x69, // SNACK 105
                0x00, 0x00, 0x00, 0x67, // locally recovered 103
            ]
        );
    }

    #[test]
    fn paper_ack_is_200_bytes_and_holds_43_entries() {
        let mut a = ack();
        a.format = Format::Paper;
        let buf = round_trip(&JtpRepr::Ack(a.clone()));
        assert_eq!(buf.len(), 200);
        assert_eq!(buf[1], 0x82);
        assert!(buf[40..].iter().all(|&b| b == 0));

        a.snack = (0..50).collect();
        a.local = vec![1000, 1001];
        assert_eq!(a.emitted_lists(), (41, 2));
        let mut buf = Vec::new();
        JtpRepr::Ack(a).emit_to_vec(&mut buf);
        assert_eq!(buf.len(), 200);
        let JtpRepr::Ack(parsed) = parse(&buf).unwrap() else {
            panic!("not an ACK")
        };
        assert_eq!(parsed.snack, (0..41).collect::<Vec<u32>>());
        assert_eq!(parsed.local, vec![1000, 1001]);
    }

    #[test]
    fn relays_rewrite_data_fields_in_place() {
        let mut buf = Vec::new();
        JtpRepr::Data(data(b"p")).emit_to_vec(&mut buf);
        let mut p = JtpPacket::new_checked(&mut buf[..]).unwrap();
        p.set_available_rate(1000);
        p.set_loss_tolerance(LossTolerance(7));
        p.set_energy_used(9);
        p.set_hops(4);
        p.set_local(true);
        let JtpRepr::Data(d) = parse(&buf).unwrap() else {
            panic!("not data")
        };
        assert_eq!(
            (d.available_rate, d.loss_tolerance, d.energy_used, d.hops),
            (1000, LossTolerance(7), 9, 4)
        );
        assert!(d.flags.local && d.flags.fin && !d.flags.retx);
        assert_eq!(d.payload, b"p");
    }

    #[test]
    fn short_or_foreign_buffers_are_errors() {
        let mut buf = Vec::new();
        JtpRepr::Data(data(&[])).emit_to_vec(&mut buf);
        for n in 0..buf.len() {
            assert_eq!(parse(&buf[..n]), Err(Error::Truncated), "{n}");
        }
        let mut bad = buf.clone();
        bad[0] = 0x21; // version 2
        assert_eq!(parse(&bad), Err(Error::Malformed));
        bad[0] = 0x13; // kind 3
        assert_eq!(parse(&bad), Err(Error::Malformed));

        let mut buf = Vec::new();
        JtpRepr::Ack(ack()).emit_to_vec(&mut buf);
        for n in 0..buf.len() {
            assert_eq!(parse(&buf[..n]), Err(Error::Truncated), "{n}");
        }
        // A paper ACK announcing more entries than 200 bytes hold.
        let mut a = ack();
        a.format = Format::Paper;
        let mut buf = Vec::new();
        JtpRepr::Ack(a).emit_to_vec(&mut buf);
        buf[24..26].copy_from_slice(&44u16.to_be_bytes());
        buf.resize(400, 0);
        assert_eq!(parse(&buf), Err(Error::Malformed));
        buf[24..26].copy_from_slice(&42u16.to_be_bytes());
        assert!(parse(&buf).is_ok());
    }

    #[test]
    fn loss_tolerance_encodes_fractions() {
        assert_eq!(LossTolerance::from_fraction(0.0), LossTolerance(0));
        assert_eq!(LossTolerance::from_fraction(1.0), LossTolerance(65535));
        assert_eq!(LossTolerance::from_fraction(0.1), LossTolerance(6554));
        assert_eq!(LossTolerance::from_fraction(-3.0), LossTolerance(0));
        assert_eq!(LossTolerance::from_fraction(f64::NAN), LossTolerance(0));
        assert!((LossTolerance(6554).fraction() - 0.1).abs() < 1e-5);
    }

    #[test]
    fn display_names_the_fields() {
        let s = JtpRepr::Data(data(b"hi")).to_string();
        assert_eq!(
            s,
            "JTP data flow=258 seq=168496141 FIN avail=250000b/s lt=0.1000 \
             energy=515/65536uJ hops=3 prio=1 len=2"
        );
        let s = JtpRepr::Ack(ack()).to_string();
        assert_eq!(
            s,
            "JTP ack flow=7 cum=100 URGENT rate=64000b/s budget=5000uJ T=10000000us \
             highest=106 snack=[101, 105] local=[103]"
        );
    }

    fn arb_data_fields(
    ) -> impl Strategy<Value = (bool, [bool; 3], u16, u32, u32, u32, u32, u16, u8, u8)> {
        (
            any::<bool>(),
            any::<[bool; 3]>(),
            any::<u16>(),
            any::<u32>(),
            any::<u32>(),
            any::<u32>(),
            any::<u32>(),
            any::<u16>(),
            any::<u8>(),
            any::<u8>(),
        )
    }

    proptest! {
        #[test]
        fn parse_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let _ = parse(&bytes);
        }

        #[test]
        fn parse_never_panics_on_plausible_acks(
            paper: bool,
            counts in any::<(u8, u8)>(),
            rest in proptest::collection::vec(any::<u8>(), 0..300),
        ) {
            let mut buf = vec![0x12, if paper { 0x80 } else { 0 }];
            buf.resize(24, 0);
            buf.extend_from_slice(&(counts.0 as u16).to_be_bytes());
            buf.extend_from_slice(&(counts.1 as u16).to_be_bytes());
            buf.extend_from_slice(&rest);
            if let Ok(JtpRepr::Ack(a)) = parse(&buf) {
                prop_assert_eq!(a.snack.len(), counts.0 as usize);
                prop_assert_eq!(a.local.len(), counts.1 as usize);
            }
        }

        #[test]
        fn data_round_trips(
            f in arb_data_fields(),
            payload in proptest::collection::vec(any::<u8>(), 0..64),
        ) {
            let (paper, [fin, retx, local], flow, seq, avail, budget, used, lt, hops, prio) = f;
            let d = JtpData {
                format: if paper { Format::Paper } else { Format::Compact },
                flags: DataFlags { fin, retx, local },
                flow, seq, available_rate: avail, energy_budget: budget,
                energy_used: used, loss_tolerance: LossTolerance(lt),
                hops, priority: prio, payload: &payload,
            };
            let r = JtpRepr::Data(d);
            let mut buf = Vec::new();
            r.emit_to_vec(&mut buf);
            prop_assert_eq!(parse(&buf).unwrap(), r);
        }

        #[test]
        fn acks_round_trip_what_fits(
            paper: bool, fin: bool, urgent: bool, flow: u16,
            nums in any::<(u32, u32, u32, u32, u32)>(),
            snack in proptest::collection::vec(any::<u32>(), 0..60),
            local in proptest::collection::vec(any::<u32>(), 0..60),
        ) {
            let a = JtpAck {
                format: if paper { Format::Paper } else { Format::Compact },
                fin, urgent, flow,
                cum_ack: nums.0, rate: nums.1, energy_budget: nums.2,
                feedback_period_us: nums.3, highest: nums.4, snack, local,
            };
            let (s, l) = a.emitted_lists();
            let mut buf = Vec::new();
            JtpRepr::Ack(a.clone()).emit_to_vec(&mut buf);
            prop_assert_eq!(buf.len(), a.buffer_len());
            let JtpRepr::Ack(p) = parse(&buf).unwrap() else { panic!("not an ACK") };
            let mut want = a.clone();
            want.snack.truncate(s);
            want.local.truncate(l);
            prop_assert_eq!(p, want);
        }
    }
}
