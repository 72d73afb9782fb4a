//! The protocols a scenario can name: the shared registry
//! (`joulenet_registry`), which the runtime uses too.

pub use joulenet_registry::{entries, entry, Entry, Protocol, ProtocolSpec, Services, Wire};
