//! Hop (`docs/hop.md`): `hop`, options under `[flow.hop]`. The source and
//! the sink are the flow's ends, and one Hop agent on every node in
//! between is its relay, taking each block hop by hop.

use std::any::Any;

use joulenet_proto::hop::agent::HopAgent;
use joulenet_proto::hop::HopConfig;
use joulenet_proto::{Addr, Agent, ConfigError};
use toml::Value;

use crate::options::{Reader, Result};
use crate::protocol::{Entry, HostSettings, Protocol, RelayNodes, RelaySpec, Wire, WireFormat};

pub const ENTRIES: &[Entry] = &[Entry {
    name: "hop",
    about: "Hop: reliable per-hop transfer of blocks (TXOP bursts, BSYN/BACK bitmaps), backpressure, ack withholding, micro-blocks, virtual retransmission; a Hop relay on every node (NSDI 2009)",
    options: Some("hop"),
    wire: Wire::Code(22),
    make: || Box::new(Hop(HopConfig::default())),
}];

#[derive(Clone, Debug)]
pub struct Hop(pub HopConfig);

impl Protocol for Hop {
    fn name(&self) -> &'static str {
        "hop"
    }

    fn wire_format(&self) -> WireFormat {
        WireFormat::Hop
    }

    fn config(&self) -> &dyn Any {
        &self.0
    }

    fn configure(&mut self, flow: &Reader, _names: &[String]) -> Result<()> {
        configure(flow, &mut self.0)
    }

    /// On real hosts a frame is one datagram's segment, and a micro-block,
    /// which rides whole on its BSYN, must fit one datagram too (a 16 KB
    /// BSYN would be cut into a dozen IP fragments, any of which loses it).
    fn on_hosts(&mut self, s: &HostSettings) -> std::result::Result<(), ConfigError> {
        self.0.frame_len = s.segment as usize;
        // UDP sends each control message once per hop (no link ARQ under
        // it, as the paper's MAC has): a lost end-to-end BACK must not cost
        // the first block the paper's 60 s (docs/hop.md).
        self.0.measured_first_timeout = true;
        // Point-to-point UDP hops: no shared medium, so no hidden senders
        // for ack withholding to serialise, and each link is full duplex,
        // so a block's blind first round overlaps the next hop still moving
        // the previous block, where an opening BSYN would wait for
        // backpressure. docs/PERFORMANCE.md's figures were measured so.
        // (The 0.58 against 0.77 of the link rate once measured for this on
        // `agent_tests`' chain came from a world with no queue report;
        // with one, both meet the bound: docs/hop.md § One measurement.)
        self.0.bsyn_first = false;
        if self.0.micro_block.is_some() {
            self.0.micro_block = Some(s.segment as usize);
        }
        self.0.validate()
    }

    fn agents(&self, _client: Addr, server: Addr) -> (Box<dyn Agent>, Box<dyn Agent>) {
        (
            Box::new(HopAgent::source(self.0.clone(), server)),
            Box::new(HopAgent::sink(self.0.clone())),
        )
    }

    /// One Hop agent per node between the ends: a relay's cache, receiving
    /// side and round-robin scheduler are per node (flows with the same
    /// options share it).
    fn relay(&self) -> Option<RelaySpec> {
        let c = self.0.clone();
        Some(RelaySpec {
            nodes: RelayNodes::Every,
            make: Box::new(move || Box::new(HopAgent::relay(c.clone()))),
        })
    }
}

/// `[flow.hop]`: block_size (1 MiB), frame_len (1400), txop_frames (5: the
/// TXOP is 8 KB unless given),
/// backpressure (true), h (1), ack_withholding (true), bsyn_first (true),
/// micro_blocks (true),
/// micro_block_threshold (16 KiB), virtual_retransmission (true),
/// ask_next_hop (false),
/// initial_e2e_timeout (60 s), measured_first_timeout (false; true on real
/// hosts), ttl (50), bsyn_retry (200 ms),
/// withhold_idle (2 s), pace_queue (16, or false), pace_poll (2 ms).
fn configure(flow: &Reader, c: &mut HopConfig) -> Result<()> {
    let Some(t) = flow.table("hop")? else {
        return Ok(());
    };
    if let Some(n) = t.int_in("frame_len", 1, 65_000)? {
        c.frame_len = n as usize;
    }
    if let Some(b) = t.size("block_size")? {
        if b == 0 || b > u32::MAX as u64 {
            return Err(t.error("block_size", "must be between 1 byte and 4 GB"));
        }
        c.max_block = b as usize;
    }
    // Without `txop_frames` the TXOP stays 8 KB (§4.1's 8160 µs at
    // 11 Mbit/s), however many frames of `frame_len` that is.
    if let Some(n) = t.int_in("txop_frames", 1, 1000)? {
        c.txop_bytes = n as usize * c.frame_len;
    }
    match t.bool("backpressure")? {
        Some(false) => {
            if t.has("h") {
                return Err(t.error("h", "only meaningful with `backpressure = true`"));
            }
            c.backpressure = None;
        }
        Some(true) | None => {
            if let Some(h) = t.int_in("h", 1, 1_000_000)? {
                c.backpressure = Some(h as usize);
            }
        }
    }
    if let Some(on) = t.bool("ack_withholding")? {
        c.ack_withholding = on;
    }
    if let Some(on) = t.bool("bsyn_first")? {
        c.bsyn_first = on;
    }
    let threshold = t.size("micro_block_threshold")?;
    match t.bool("micro_blocks")? {
        Some(false) => {
            if threshold.is_some() {
                return Err(t.error(
                    "micro_block_threshold",
                    "only meaningful with `micro_blocks = true`",
                ));
            }
            c.micro_block = None;
        }
        Some(true) | None => {
            if let Some(b) = threshold {
                // A micro-block rides whole on its BSYN, one IP packet.
                if !(1..=65_000).contains(&b) {
                    return Err(t.error(
                        "micro_block_threshold",
                        "must be 1..=65000 bytes (a micro-block travels in one BSYN)",
                    ));
                }
                c.micro_block = Some(b as usize);
            }
        }
    }
    if let Some(on) = t.bool("virtual_retransmission")? {
        c.virtual_retransmission = on;
    }
    if let Some(on) = t.bool("ask_next_hop")? {
        c.ask_next_hop = on;
    }
    if let Some(d) = t.duration("initial_e2e_timeout")? {
        c.initial_e2e_timeout = d;
    }
    if let Some(on) = t.bool("measured_first_timeout")? {
        c.measured_first_timeout = on;
    }
    if let Some(n) = t.int_in("ttl", 1, 255)? {
        c.ttl = n as u8;
    }
    if let Some(d) = t.duration("bsyn_retry")? {
        c.bsyn_retry = d;
    }
    if let Some(d) = t.duration("withhold_idle")? {
        c.withhold_idle = d;
    }
    match t.get("pace_queue") {
        None => {}
        Some(Value::Boolean(false)) => c.pace_queue = None,
        Some(_) => {
            let n = t.int_in("pace_queue", 1, 100_000)?.expect("present");
            c.pace_queue = Some(n as usize);
        }
    }
    if let Some(d) = t.duration("pace_poll")? {
        c.pace_poll = d;
    }
    c.validate().map_err(|e| {
        // HopConfig's fields under the names the table gives them.
        let key = match e.key {
            "max_block" => "block_size",
            "txop_bytes" => "txop_frames",
            "backpressure" => "h",
            k => k,
        };
        t.error(key, e.reason)
    })?;
    t.finish()
}
