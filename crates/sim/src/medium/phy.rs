//! 802.11 physical-layer timing: slot, SIFS, DIFS/AIFS, contention windows,
//! and the airtime of a frame including its PLCP preamble and header.
//!
//! Presets follow IEEE 802.11-2016: clause 16 (DSSS/HR-DSSS, 802.11b) and
//! clause 18/19 (OFDM / ERP-OFDM, 802.11g without protection).

use joulenet_proto::{AccessClass, Duration};

/// How a PPDU's duration is computed.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Modulation {
    /// DSSS/HR-DSSS: a PLCP preamble and header sent at 1 (long) or 2
    /// (short) Mbit/s, taking `plcp` in all, then the PSDU at the data rate.
    Dsss { plcp: Duration },
    /// OFDM: 16 µs preamble + 4 µs SIGNAL, 4 µs symbols carrying the
    /// 16-bit SERVICE field, the PSDU and 6 tail bits, plus a signal
    /// extension (6 µs for ERP-OFDM).
    Ofdm { signal_extension: Duration },
}

/// The timing of one 802.11 PHY at one data rate.
#[derive(Clone, Debug, PartialEq)]
pub struct Phy {
    pub name: String,
    pub rate_bps: u64,
    /// Rate of control responses (ACK, CTS) and RTS: the highest basic rate
    /// not above the data rate.
    pub basic_rate_bps: u64,
    pub modulation: Modulation,
    pub slot: Duration,
    pub sifs: Duration,
    pub cw_min: u32,
    pub cw_max: u32,
    /// MAC bytes around a data frame's payload: 24-byte header, 4-byte FCS
    /// and the 8-byte LLC/SNAP header.
    pub data_overhead: u32,
}

pub const ACK_BYTES: u32 = 14;
pub const CTS_BYTES: u32 = 14;
pub const RTS_BYTES: u32 = 20;

pub const STANDARDS: &[&str] = &["802.11b", "802.11g-24", "802.11g-54"];

impl Phy {
    /// A preset by name; `short_preamble` applies to 802.11b only.
    pub fn preset(name: &str, short_preamble: bool) -> Option<Phy> {
        let dsss = |rate| Phy {
            name: name.to_string(),
            rate_bps: rate,
            basic_rate_bps: 2_000_000,
            modulation: Modulation::Dsss {
                plcp: Duration::from_micros(if short_preamble { 96 } else { 192 }),
            },
            slot: Duration::from_micros(20),
            sifs: Duration::from_micros(10),
            cw_min: 31,
            cw_max: 1023,
            data_overhead: 36,
        };
        let ofdm = |rate| Phy {
            name: name.to_string(),
            rate_bps: rate,
            basic_rate_bps: 24_000_000,
            modulation: Modulation::Ofdm {
                signal_extension: Duration::from_micros(6),
            },
            slot: Duration::from_micros(9),
            sifs: Duration::from_micros(10),
            cw_min: 15,
            cw_max: 1023,
            data_overhead: 36,
        };
        match name {
            "802.11b" => Some(dsss(11_000_000)),
            "802.11g-24" => Some(ofdm(24_000_000)),
            "802.11g-54" => Some(ofdm(54_000_000)),
            _ => None,
        }
    }

    /// Airtime of a PSDU of `bytes` at `rate_bps`.
    pub fn airtime(&self, bytes: u32, rate_bps: u64) -> Duration {
        match self.modulation {
            Modulation::Dsss { plcp } => plcp + Duration::transmission(bytes as u64 * 8, rate_bps),
            Modulation::Ofdm { signal_extension } => {
                let bits_per_symbol = rate_bps * 4 / 1_000_000;
                let bits = 16 + 8 * bytes as u64 + 6;
                let symbols = bits.div_ceil(bits_per_symbol.max(1));
                Duration::from_micros(20 + 4 * symbols) + signal_extension
            }
        }
    }

    /// Bytes on the air (MAC header, FCS and LLC/SNAP header included) of
    /// a data frame carrying `network_len` bytes of network-layer packet.
    pub fn psdu_bytes(&self, network_len: usize) -> u32 {
        network_len as u32 + self.data_overhead
    }

    /// A data frame carrying `network_len` bytes of network-layer packet.
    pub fn data_airtime(&self, network_len: usize) -> Duration {
        self.airtime(self.psdu_bytes(network_len), self.rate_bps)
    }

    pub fn control_airtime(&self, bytes: u32) -> Duration {
        self.airtime(bytes, self.basic_rate_bps)
    }

    pub fn ack_airtime(&self) -> Duration {
        self.control_airtime(ACK_BYTES)
    }

    /// DIFS = SIFS + 2 slots.
    pub fn difs(&self) -> Duration {
        self.sifs + self.slot.saturating_mul(2)
    }

    /// EIFS = SIFS + ACK at the basic rate + DIFS: the wait after a frame
    /// that could not be decoded.
    pub fn eifs(&self) -> Duration {
        self.sifs + self.ack_airtime() + self.difs()
    }
}

/// EDCA parameters of one access category.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct AcParams {
    pub aifsn: u32,
    pub cw_min: u32,
    pub cw_max: u32,
    /// Longest transmit opportunity (back-to-back frames separated by SIFS);
    /// zero means one frame per channel access.
    pub txop: Duration,
}

/// The four access categories in `AccessClass` order (VO, VI, BE, BK).
pub fn edca_params(phy: &Phy, txop: Duration, edca: bool) -> [AcParams; 4] {
    let (min, max) = (phy.cw_min, phy.cw_max);
    if !edca {
        // Plain DCF: every category uses DIFS and the PHY's window.
        let p = AcParams {
            aifsn: 2,
            cw_min: min,
            cw_max: max,
            txop,
        };
        return [p; 4];
    }
    [
        AcParams {
            aifsn: 2,
            cw_min: (min + 1) / 4 - 1,
            cw_max: min.div_ceil(2) - 1,
            txop,
        },
        AcParams {
            aifsn: 2,
            cw_min: min.div_ceil(2) - 1,
            cw_max: min,
            txop,
        },
        AcParams {
            aifsn: 3,
            cw_min: min,
            cw_max: max,
            txop,
        },
        AcParams {
            aifsn: 7,
            cw_min: min,
            cw_max: max,
            txop,
        },
    ]
}

pub fn ac_index(ac: AccessClass) -> usize {
    match ac {
        AccessClass::Voice => 0,
        AccessClass::Video => 1,
        AccessClass::BestEffort => 2,
        AccessClass::Background => 3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn airtimes_match_the_standard() {
        let b = Phy::preset("802.11b", false).unwrap();
        // 14-byte ACK at 2 Mbit/s with a long preamble: 192 + 56 µs.
        assert_eq!(b.ack_airtime(), Duration::from_micros(248));
        assert_eq!(b.difs(), Duration::from_micros(50));
        // 1500-byte PSDU at 11 Mbit/s: 192 µs + 1090.9 µs.
        let t = b.airtime(1500, 11_000_000);
        assert!((t.as_secs_f64() * 1e6 - 1282.9).abs() < 0.1, "{t:?}");
        let g = Phy::preset("802.11g-54", false).unwrap();
        // 1500 bytes at 54 Mbit/s: ceil((16+12000+6)/216) = 56 symbols.
        assert_eq!(
            g.airtime(1500, 54_000_000),
            Duration::from_micros(20 + 224 + 6)
        );
        assert_eq!(g.difs(), Duration::from_micros(28));
    }
}
