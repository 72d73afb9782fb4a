//! Presets for a few common cells: a nominal capacity and the parameters of
//! each non-ideal model.
//!
//! Capacities are the manufacturers' nominal ratings. The model parameters
//! are typical values for the chemistry from the battery-modelling
//! literature; we could not check them against a source we could read while
//! writing this (docs/scenarios.md says which), so treat them as
//! illustrative, and give `c`, `k` or `exponent` explicitly when a cell's
//! measured values matter.

use super::{KibamParams, PeukertParams};

/// A cell preset.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Cell {
    pub name: &'static str,
    pub description: &'static str,
    pub capacity_j: f64,
    pub kibam: KibamParams,
    pub peukert: PeukertParams,
}

const HOUR: f64 = 3600.0;

/// Every preset, for `joulenet list`.
pub const CELLS: &[Cell] = &[
    Cell {
        name: "aa-alkaline-2s",
        description: "two AA alkaline cells in series, 2500 mAh at 3.0 V",
        capacity_j: 2.5 * HOUR * 3.0,
        kibam: KibamParams {
            c: 0.166,
            k: 2.03e-3,
        },
        peukert: PeukertParams {
            exponent: 1.3,
            rated_s: 20.0 * HOUR,
        },
    },
    Cell {
        name: "li-ion-18650",
        description: "one 18650 Li-ion cell, 3400 mAh at 3.6 V",
        capacity_j: 3.4 * HOUR * 3.6,
        kibam: KibamParams {
            c: 0.625,
            k: 4.5e-5,
        },
        peukert: PeukertParams {
            exponent: 1.05,
            rated_s: 5.0 * HOUR,
        },
    },
    Cell {
        name: "lead-acid-12v-7ah",
        description: "a 12 V 7 Ah sealed lead-acid battery, rated at 20 h",
        capacity_j: 7.0 * HOUR * 12.0,
        kibam: KibamParams { c: 0.3, k: 1.5e-4 },
        peukert: PeukertParams {
            exponent: 1.2,
            rated_s: 20.0 * HOUR,
        },
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
            c.kibam.validate().unwrap();
            c.peukert.validate().unwrap();
        }
        assert_eq!(cell("li-ion-18650").unwrap().capacity_j, 3.4 * 3600.0 * 3.6);
        assert!(cell("d-cell").is_none());
    }
}
