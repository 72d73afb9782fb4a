//! The 802.11 devices Serrano et al. measured, as radio profiles and
//! cross-factors.
//!
//! P. Serrano, A. Garcia-Saavedra, G. Bianchi, A. Banchs and A. Azcorra,
//! "Per-frame energy consumption in 802.11 devices and its implication on
//! modeling and design", IEEE/ACM Transactions on Networking 23(4),
//! 1243–1256, 2015 (doi 10.1109/TNET.2014.2322262), model a whole device's
//! mean power as
//!
//! P = ρ_id + ρ_tx·τ_tx + ρ_rx·τ_rx + γ_xg·λ_g (+ γ_xr·λ_r),
//!
//! where τ is the share of airtime spent sending or receiving and λ the
//! frames per second generated or received: a device draws ρ_id awake,
//! ρ_id + ρ_tx while it transmits, ρ_id + ρ_rx while it receives, and pays
//! the cross-factor γ_xg for every frame it generates. That is our state model
//! ([`RadioProfile`]) with a cross-factor ([`super::FrameModel::cross_factor`]).
//!
//! The numbers are not read from the paper, which we could not open: they
//! are the transcription of its tables in I. Úcar's thesis repository
//! (Universidad Carlos III de Madrid, Serrano's group; github.com/Enchufa2/
//! thesis, `data/06/devices.R`, the input of the thesis's Chapter 6 "Rate
//! Adaptation and Power Control in 802.11"). ρ_tx was measured at four
//! 802.11a/g rates (MCS 6, 12, 24, 48 Mbit/s) and four transmit powers (6,
//! 9, 12, 15 dBm), ρ_rx at the four rates; the handhelds' figures are given
//! there in mW and are stored here in W. Only the generation cross-factor
//! γ_xg is transcribed; the reception cross-factor γ_xr is not, so these
//! presets charge none unless a scenario gives `rx`. Nothing here is
//! interpolated: a profile exists only at a measured operating point.
//!
//! The powers are the whole device's (CPU, memory, radio), not the NIC's,
//! and the sources give no sleep power: the profiles sleep at ρ_id, so no
//! policy saves energy by sleeping them.

use super::RadioProfile;
use joulenet_proto::Duration;

/// One measured device.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct SerranoDevice {
    pub name: &'static str,
    pub description: &'static str,
    /// ρ_id: awake and idle, W.
    pub idle_w: f64,
    /// γ_xg: the generation cross-factor, J per frame sent.
    pub cross_factor_tx_j: f64,
    /// ρ_tx above idle, W, by (MCS Mbit/s, transmit power dBm).
    pub tx: &'static [(u32, u32, f64)],
    /// ρ_rx above idle, W, by MCS Mbit/s.
    pub rx: &'static [(u32, f64)],
}

const MJ: f64 = 1e-3;

/// Every device of the transcription, in its order.
pub const DEVICES: &[SerranoDevice] = &[
    SerranoDevice {
        name: "serrano-soekris",
        description: "Soekris net4826-48 embedded board, Atheros AR5414 card",
        idle_w: 3.56,
        cross_factor_tx_j: 0.93 * MJ,
        tx: &[
            (6, 6, 0.52),
            (6, 9, 0.57),
            (6, 12, 0.70),
            (6, 15, 0.86),
            (12, 6, 0.55),
            (12, 9, 0.59),
            (12, 12, 0.73),
            (12, 15, 0.89),
            (24, 6, 0.81),
            (24, 9, 0.88),
            (24, 12, 1.02),
            (24, 15, 1.17),
            (48, 6, 1.2),
            (48, 9, 1.24),
            (48, 12, 1.37),
            (48, 15, 1.58),
        ],
        rx: &[(6, 0.16), (12, 0.27), (24, 0.6), (48, 1.14)],
    },
    SerranoDevice {
        name: "serrano-linksys",
        description: "Linksys WRT54G wireless router",
        idle_w: 2.73,
        cross_factor_tx_j: 0.46 * MJ,
        tx: &[
            (6, 6, 0.70),
            (6, 9, 0.77),
            (6, 12, 0.84),
            (6, 15, 0.97),
            (12, 6, 0.72),
            (12, 9, 0.81),
            (12, 12, 0.85),
            (12, 15, 1.0),
            (24, 6, 0.75),
            (24, 9, 0.84),
            (24, 12, 0.92),
            (24, 15, 1.04),
            (48, 6, 0.81),
            (48, 9, 0.88),
            (48, 12, 0.99),
            (48, 15, 1.08),
        ],
        rx: &[(6, 0.19), (12, 0.29), (24, 0.53), (48, 0.74)],
    },
    SerranoDevice {
        name: "serrano-htc-legend",
        description: "HTC Legend smartphone",
        idle_w: 0.63527,
        cross_factor_tx_j: 0.1295 * MJ,
        tx: &[
            (6, 6, 0.41265),
            (6, 9, 0.42226),
            (6, 12, 0.46826),
            (6, 15, 0.50098),
            (12, 6, 0.45660),
            (12, 9, 0.47150),
            (12, 12, 0.51960),
            (12, 15, 0.57078),
            (24, 6, 0.53440),
            (24, 9, 0.54162),
            (24, 12, 0.55996),
            (24, 15, 0.60303),
            (48, 6, 0.66535),
            (48, 9, 0.67364),
            (48, 12, 0.68250),
            (48, 15, 0.69537),
        ],
        rx: &[(6, 0.05202), (12, 0.09654), (24, 0.15597), (48, 0.32508)],
    },
    SerranoDevice {
        name: "serrano-galaxy-note",
        description: "Samsung Galaxy Note 10.1 tablet",
        idle_w: 0.59159,
        cross_factor_tx_j: 0.088 * MJ,
        tx: &[
            (6, 6, 0.60515),
            (6, 9, 0.61622),
            (6, 12, 0.62649),
            (6, 15, 0.64394),
            (12, 6, 0.60973),
            (12, 9, 0.61739),
            (12, 12, 0.63065),
            (12, 15, 0.65371),
            (24, 6, 0.63782),
            (24, 9, 0.63926),
            (24, 12, 0.64154),
            (24, 15, 0.67427),
            (48, 6, 0.67706),
            (48, 9, 0.67923),
            (48, 12, 0.69842),
            (48, 15, 0.70858),
        ],
        rx: &[(6, 0.05408), (12, 0.05820), (24, 0.08235), (48, 0.12419)],
    },
    SerranoDevice {
        name: "serrano-raspberry-pi",
        description: "Raspberry Pi single-board computer",
        idle_w: 2.2203,
        cross_factor_tx_j: 0.126 * MJ,
        tx: &[
            (6, 6, 0.5936),
            (6, 9, 0.6277),
            (6, 12, 0.6878),
            (6, 15, 0.6922),
            (12, 6, 0.5833),
            (12, 9, 0.6118),
            (12, 12, 0.6746),
            (12, 15, 0.7163),
            (24, 6, 0.5652),
            (24, 9, 0.5875),
            (24, 12, 0.65382),
            (24, 15, 0.7488),
            (48, 6, 0.5997),
            (48, 9, 0.6219),
            (48, 12, 0.6937),
            (48, 15, 0.8066),
        ],
        rx: &[(6, 0.0051), (12, 0.0065), (24, 0.0316), (48, 0.0634)],
    },
];

pub fn device(name: &str) -> Option<&'static SerranoDevice> {
    DEVICES.iter().find(|d| d.name == name)
}

pub fn device_names() -> Vec<&'static str> {
    DEVICES.iter().map(|d| d.name).collect()
}

impl SerranoDevice {
    /// The measured rates, Mbit/s.
    pub fn rates_mbps(&self) -> Vec<u32> {
        self.rx.iter().map(|&(mcs, _)| mcs).collect()
    }

    /// The measured transmit powers at `mcs`, dBm.
    pub fn powers_dbm(&self, mcs: u32) -> Vec<u32> {
        self.tx
            .iter()
            .filter(|&&(m, _, _)| m == mcs)
            .map(|&(_, p, _)| p)
            .collect()
    }

    /// The device as a radio at a measured rate and transmit power, or
    /// `None` if that point was not measured.
    pub fn profile(&self, mcs: u32, txp_dbm: u32) -> Option<RadioProfile> {
        let &(_, _, rho_tx) = self
            .tx
            .iter()
            .find(|&&(m, p, _)| m == mcs && p == txp_dbm)?;
        let &(_, rho_rx) = self.rx.iter().find(|&&(m, _)| m == mcs)?;
        Some(RadioProfile {
            name: format!("{}@{mcs}Mbps/{txp_dbm}dBm", self.name),
            tx_w: self.idle_w + rho_tx,
            rx_w: self.idle_w + rho_rx,
            idle_w: self.idle_w,
            // No sleep figure was measured: sleeping saves nothing.
            sleep_w: self.idle_w,
            off_w: 0.0,
            sleep_to_idle: Duration::ZERO,
            off_to_on: Duration::ZERO,
            transition_w: self.idle_w,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_device_is_measured_on_a_full_grid() {
        for d in DEVICES {
            assert_eq!(d.rates_mbps(), [6, 12, 24, 48], "{}", d.name);
            for mcs in d.rates_mbps() {
                assert_eq!(d.powers_dbm(mcs), [6, 9, 12, 15], "{} {mcs}", d.name);
                for p in d.powers_dbm(mcs) {
                    let profile = d.profile(mcs, p).unwrap();
                    profile.validate().unwrap();
                    assert!(profile.tx_w > profile.idle_w && profile.rx_w > profile.idle_w);
                }
            }
            assert!(d.cross_factor_tx_j > 0.0 && d.cross_factor_tx_j < 1e-2);
        }
        assert!(device("serrano-linksys").unwrap().profile(54, 15).is_none());
        assert!(device("serrano-linksys").unwrap().profile(48, 14).is_none());
    }

    /// A device draws ρ_id + ρ_tx while it sends: the Linksys at 24 Mbit/s
    /// and 15 dBm, 2.73 + 1.04 W; and ρ_id + ρ_rx = 2.73 + 0.53 W receiving.
    #[test]
    fn a_profile_adds_the_measured_increments_to_idle() {
        let p = device("serrano-linksys").unwrap().profile(24, 15).unwrap();
        assert!((p.tx_w - 3.77).abs() < 1e-12, "{}", p.tx_w);
        assert!((p.rx_w - 3.26).abs() < 1e-12, "{}", p.rx_w);
        assert_eq!(p.idle_w, 2.73);
        assert_eq!(p.name, "serrano-linksys@24Mbps/15dBm");
        let htc = device("serrano-htc-legend").unwrap().profile(6, 6).unwrap();
        assert!((htc.tx_w - (0.63527 + 0.41265)).abs() < 1e-12);
    }

    /// Least squares of `y` on the columns of `x` (with an intercept), by
    /// the normal equations and Gauss–Jordan elimination.
    fn least_squares<const N: usize>(rows: &[([f64; N], f64)]) -> Vec<f64> {
        let n = N + 1;
        let mut a = vec![vec![0.0; n + 1]; n];
        for (x, y) in rows {
            let v: Vec<f64> = std::iter::once(1.0).chain(x.iter().copied()).collect();
            for i in 0..n {
                for j in 0..n {
                    a[i][j] += v[i] * v[j];
                }
                a[i][n] += v[i] * y;
            }
        }
        for col in 0..n {
            let pivot = a[col][col];
            let row = a[col].clone();
            for (r, line) in a.iter_mut().enumerate() {
                let f = if r == col {
                    1.0 - 1.0 / pivot
                } else {
                    line[col] / pivot
                };
                for (cell, p) in line.iter_mut().zip(&row) {
                    *cell -= f * p;
                }
            }
        }
        a.iter().map(|line| line[n]).collect()
    }

    /// The transcription reproduces the thesis's own Table 6.2, its linear
    /// fits of these very numbers (ρ_tx = α0 + α1·MCS + α2·TXP with TXP in
    /// "mW" as the thesis converts it, 10^(dBm/20); ρ_rx = β0 + β1·MCS), to
    /// the digits printed there: a typo in any of our 100 values would show.
    #[test]
    fn the_transcription_reproduces_the_thesis_regressions() {
        // Device, then (value, decimals printed) for α0, α1, α2, β0, β1.
        let table: [(&str, [(f64, i32); 5]); 5] = [
            (
                "serrano-htc-legend",
                [(0.35, 2), (0.0052, 4), (0.021, 3), (0.013, 3), (0.0064, 4)],
            ),
            (
                "serrano-linksys",
                [(0.54, 2), (0.0028, 4), (0.075, 3), (0.14, 2), (0.0130, 4)],
            ),
            (
                "serrano-raspberry-pi",
                [
                    (0.48, 2),
                    (0.0008, 4),
                    (0.044, 3),
                    (-0.006, 3),
                    (0.00146, 5),
                ],
            ),
            (
                "serrano-galaxy-note",
                [
                    (0.572, 3),
                    (0.00166, 5),
                    (0.0105, 4),
                    (0.041, 3),
                    (0.00173, 5),
                ],
            ),
            (
                "serrano-soekris",
                [(0.17, 2), (0.0170, 4), (0.101, 3), (0.010, 3), (0.0237, 4)],
            ),
        ];
        for (name, published) in table {
            let d = device(name).unwrap();
            let tx: Vec<([f64; 2], f64)> =
                d.tx.iter()
                    .map(|&(m, p, w)| ([m as f64, 10f64.powf(p as f64 / 20.0)], w))
                    .collect();
            let rx: Vec<([f64; 1], f64)> = d.rx.iter().map(|&(m, w)| ([m as f64], w)).collect();
            let ours = [least_squares(&tx), least_squares(&rx)].concat();
            for (i, (&(value, decimals), fit)) in published.iter().zip(&ours).enumerate() {
                let half_digit = 0.5 * 10f64.powi(-decimals) + 1e-12;
                assert!(
                    (fit - value).abs() <= half_digit,
                    "{name} estimate {i}: ours {fit}, thesis {value}"
                );
            }
        }
    }

    /// The thesis chose the Soekris for its validation "because it is the
    /// one with the largest cross-factor" (Úcar, Ch. 3): the transcription
    /// must agree.
    #[test]
    fn the_soekris_has_the_largest_cross_factor() {
        let max = DEVICES
            .iter()
            .max_by(|a, b| a.cross_factor_tx_j.total_cmp(&b.cross_factor_tx_j))
            .unwrap();
        assert_eq!(max.name, "serrano-soekris");
    }
}
