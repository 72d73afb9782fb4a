//! Every protocol joulenet knows, in one place, for the simulator and the
//! runtime alike: the names a scenario or `--proto` gives it, its options
//! (read with errors that name the key), its agents at the ends and on
//! relays, the link services it needs, and its code on the runtime's wire.
//!
//! Adding a protocol is one file here — a configuration type implementing
//! [`Protocol`] and an [`Entry`] table — plus its line in [`FAMILIES`].
//!
//! This crate must not depend on the simulator, the runtime, sockets or the
//! clock: it only describes protocols and makes their sans-IO agents.

mod error;
mod graph;
pub mod options;
mod protocol;

pub mod atp;
pub mod dtn;
pub mod e2tcp;
pub mod e2tcp_split;
pub mod hbh_tcp;
pub mod hop;
pub mod jtp;
pub mod nackrate;
pub mod r2cp;
pub mod rcp;
pub mod tcp;
pub mod udp;
pub mod wwp;

pub use error::OptionError;
pub use protocol::{
    CloneProtocol, Entry, HostSettings, MakeRelay, Placement, Protocol, ProtocolSpec, RelayNodes,
    RelaySpec, Services, Wire, WireFormat,
};

/// Every protocol family's names, in the order `joulenet list` shows them.
pub const FAMILIES: &[&[Entry]] = &[
    tcp::ENTRIES,
    hbh_tcp::ENTRIES,
    udp::ENTRIES,
    wwp::ENTRIES,
    e2tcp::ENTRIES,
    e2tcp_split::ENTRIES,
    nackrate::ENTRIES,
    rcp::ENTRIES,
    r2cp::ENTRIES,
    jtp::ENTRIES,
    atp::ENTRIES,
    hop::ENTRIES,
    dtn::ENTRIES,
];

/// Every name, with its entry.
pub fn entries() -> impl Iterator<Item = &'static Entry> {
    FAMILIES.iter().flat_map(|f| f.iter())
}

/// The entry a scenario's `protocol = "…"` or `--proto` names (exact,
/// lower case, as `joulenet list` shows it).
pub fn entry(name: &str) -> Option<&'static Entry> {
    entries().find(|e| e.name == name)
}

/// The entry the runtime's header code stands for.
pub fn by_code(code: u8) -> Option<&'static Entry> {
    entries().find(|e| e.wire == Wire::Code(code))
}

/// Every option table a flow may carry (`tcp`, `wwp`, …).
pub fn option_tables() -> impl Iterator<Item = &'static str> {
    let mut seen: Vec<&'static str> = Vec::new();
    entries().filter_map(move |e| {
        let t = e.options?;
        (!seen.contains(&t)).then(|| {
            seen.push(t);
            t
        })
    })
}

#[cfg(test)]
mod tests;
