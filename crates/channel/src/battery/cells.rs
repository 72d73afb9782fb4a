//! Presets for a few common cells: a nominal capacity, and the parameters of
//! a non-ideal model only where a source gives them.
//!
//! Capacities are the manufacturers' nominal ratings (or, for the Itsy
//! cell, the capacity of the published model). A cell carries KiBaM or
//! Peukert parameters only when we can name where they come from (see
//! [`Cell::source`]); asking for a model a cell has no parameters for is a
//! scenario error that asks for them explicitly, rather than a silent guess.

use super::{KibamParams, PeukertParams};

/// A cell preset.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Cell {
    pub name: &'static str,
    pub description: &'static str,
    pub capacity_j: f64,
    /// KiBaM's c and k, if a source gives them for this cell.
    pub kibam: Option<KibamParams>,
    /// Peukert's exponent and rated time, if a source gives them.
    pub peukert: Option<PeukertParams>,
    /// Where the capacity and the model parameters come from.
    pub source: &'static str,
}

const HOUR: f64 = 3600.0;
const MINUTE: f64 = 60.0;

/// The Itsy cell's KiBaM fit: Jongerden and Haverkort give c = 0.166 and
/// k' = 0.122 per minute, where k' = k / (c·(1 − c)) is the rate at which
/// the wells' heads equalise; our `k` is the flow constant, so
/// k = k'·c·(1 − c) = 0.01689 per minute.
const ITSY_C: f64 = 0.166;
const ITSY_K_PRIME_PER_MIN: f64 = 0.122;

/// Every preset, for `joulenet list`.
pub const CELLS: &[Cell] = &[
    Cell {
        name: "itsy-li-ion",
        description: "the Compaq Itsy's Li-ion cell, 40375 mA·min at a nominal 3.7 V",
        // α = 40375 mA·min, the capacity of Rakhmatov et al.'s model.
        capacity_j: 40.375 * MINUTE * 3.7,
        kibam: Some(KibamParams {
            c: ITSY_C,
            k: ITSY_K_PRIME_PER_MIN * ITSY_C * (1.0 - ITSY_C) / MINUTE,
        }),
        peukert: None,
        source: "capacity α = 40375 mA·min: D. Rakhmatov, S. Vrudhula, D. A. Wallach, \
                 \"A model for battery lifetime analysis for organizing applications on a \
                 pocket computer\", IEEE Trans. VLSI Systems 11(6), 2003; KiBaM c = 0.166, \
                 k' = 0.122/min: M. R. Jongerden, B. R. Haverkort, \"Which battery model to \
                 use?\", IET Software 3(6), 2009; the 3.7 V that turns charge into energy is \
                 the chemistry's nominal voltage, our assumption",
    },
    Cell {
        name: "aa-alkaline-2s",
        description: "two AA alkaline cells in series, 2500 mAh at 3.0 V",
        capacity_j: 2.5 * HOUR * 3.0,
        kibam: None,
        peukert: None,
        source: "nominal rating only; no model parameters we could cite",
    },
    Cell {
        name: "li-ion-18650",
        description: "one 18650 Li-ion cell, 3400 mAh at 3.6 V",
        capacity_j: 3.4 * HOUR * 3.6,
        kibam: None,
        peukert: None,
        source: "nominal rating only; no model parameters we could cite",
    },
    Cell {
        name: "lead-acid-12v-7ah",
        description: "a 12 V 7 Ah sealed (AGM) lead-acid battery, rated at 20 h",
        capacity_j: 7.0 * HOUR * 12.0,
        kibam: None,
        peukert: Some(PeukertParams {
            exponent: 1.1,
            rated_s: 20.0 * HOUR,
        }),
        source: "Peukert n = 1.1: the middle of the 1.05–1.15 range quoted for AGM \
                 valve-regulated lead-acid batteries (Wikipedia, \"Peukert's law\"), \
                 not a measurement of this battery",
    },
];

pub fn cell(name: &str) -> Option<&'static Cell> {
    CELLS.iter().find(|c| c.name == name)
}

pub fn cell_names() -> Vec<&'static str> {
    CELLS.iter().map(|c| c.name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cell_is_valid() {
        for c in CELLS {
            assert!(c.capacity_j > 0.0, "{}", c.name);
            assert!(!c.source.is_empty(), "{}", c.name);
            if let Some(k) = c.kibam {
                k.validate().unwrap();
            }
            if let Some(p) = c.peukert {
                p.validate().unwrap();
            }
        }
        assert_eq!(cell("li-ion-18650").unwrap().capacity_j, 3.4 * 3600.0 * 3.6);
        assert!(cell("d-cell").is_none());
    }

    /// The Itsy fit is published as c and k' (the heads' equalising rate,
    /// per minute); the preset must hold the flow constant k, whose k' is
    /// the published 0.122/min, not k' itself (an earlier preset did).
    #[test]
    fn the_itsy_fit_reproduces_the_published_k_prime() {
        let p = cell("itsy-li-ion").unwrap().kibam.unwrap();
        let k_prime_per_min = p.k / (p.c * (1.0 - p.c)) * 60.0;
        assert!((k_prime_per_min - 0.122).abs() < 1e-12, "{k_prime_per_min}");
        assert!((p.k * 60.0 - 0.016890168).abs() < 1e-9, "{}", p.k * 60.0);
        assert_eq!(p.c, 0.166);
    }
}
