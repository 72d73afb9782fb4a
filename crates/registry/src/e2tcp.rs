//! E2TCP (`e2tcp`): compact headers, 2-byte SACK, burst-aware window, two
//! timers. With `split_at` the flow is split at a base station: wired TCP
//! on one side, E2TCP on the other, joined by a relay with a bounded
//! buffer (`joulenet_proto::e2tcp::split_proxy`). Options under
//! `[flow.e2tcp]`.

use std::any::Any;

use joulenet_proto::e2tcp::{split_proxy, E2tcpConfig, E2tcpReceiver, E2tcpSender, WiredSide};
use joulenet_proto::tcp::{TcpAgent, TcpConfig, TcpVariant};
use joulenet_proto::{Addr, Agent, ConfigError, NodeId};

use crate::options::{node_ref, Reader, Result};
use crate::protocol::{
    Entry, HostSettings, Placement, Protocol, RelayNodes, RelaySpec, Wire, WireFormat,
};

pub const ENTRIES: &[Entry] = &[Entry {
    name: "e2tcp",
    about: "E2TCP: compact headers, 2-byte SACK, burst-aware window, two timers; `split_at` for a base-station proxy",
    options: Some("e2tcp"),
    wire: Wire::Code(18),
    make: || Box::new(E2tcp::default()),
}];

/// The split proxy's relay buffer unless `[flow.e2tcp] relay_buffer` says
/// otherwise: a socket buffer's worth, as a base station's TCP would have.
pub const DEFAULT_SPLIT_BUFFER: usize = 256 * 1024;

/// A split connection: a proxy on node `at` joins wired TCP and E2TCP
/// through a relay buffer of `buffer` bytes.
#[derive(Clone, Debug)]
pub struct Split {
    pub at: NodeId,
    pub wired: TcpConfig,
    pub wired_side: WiredSide,
    pub buffer: usize,
}

#[derive(Clone, Debug, Default)]
pub struct E2tcp {
    pub config: E2tcpConfig,
    pub split: Option<Split>,
}

impl Protocol for E2tcp {
    fn name(&self) -> &'static str {
        "e2tcp"
    }

    fn wire_format(&self) -> WireFormat {
        WireFormat::E2tcp
    }

    fn config(&self) -> &dyn Any {
        self
    }

    fn configure(&mut self, flow: &Reader, names: &[String]) -> Result<()> {
        let Some(t) = flow.table("e2tcp")? else {
            return Ok(());
        };
        options(&t, &mut self.config)?;
        self.split = split(&t, names)?;
        t.finish()
    }

    /// The proxy must sit between the ends, on a shortest route (routes
    /// are shortest paths): elsewhere it would never see the flow.
    fn check_placement(&self, flow: &Reader, place: &Placement) -> Result<()> {
        let Some(split) = &self.split else {
            return Ok(());
        };
        let at = split.at;
        if at == place.from || at == place.to {
            return Err(flow.error("e2tcp", "split_at must name a node between the flow's ends"));
        }
        if place.links.is_empty() {
            return Ok(());
        }
        let hops = |a, b| crate::graph::hops(place.links, a, b);
        let on_route = match (
            hops(place.from, place.to),
            hops(place.from, at),
            hops(at, place.to),
        ) {
            (Some(d), Some(a), Some(b)) => a + b == d,
            _ => false,
        };
        if on_route {
            return Ok(());
        }
        let t = flow.table("e2tcp")?.expect("split_at was read from it");
        Err(t.error(
            "split_at",
            format!(
                "{} is not on a shortest route from {} to {}, so the flow would never cross it",
                place.names[at as usize],
                place.names[place.from as usize],
                place.names[place.to as usize]
            ),
        ))
    }

    /// E2TCP end to end with the MTU-sized segment; a split proxy needs a
    /// scenario's node numbers and is simulator-only.
    fn on_hosts(&mut self, s: &HostSettings) -> std::result::Result<(), ConfigError> {
        if self.split.is_some() {
            return Err(ConfigError::new(
                "split_at",
                "a split proxy runs in the simulator only",
            ));
        }
        self.config.mss = s.segment;
        self.config.validate()
    }

    fn agents(&self, _client: Addr, server: Addr) -> (Box<dyn Agent>, Box<dyn Agent>) {
        let c = &self.config;
        match &self.split {
            None => (
                Box::new(E2tcpSender::new(c.clone(), server)),
                Box::new(E2tcpReceiver::new(c.clone())),
            ),
            // The ends address each other; the base station's relay takes
            // the flow over as it crosses (`Self::relay`).
            Some(split) => match split.wired_side {
                WiredSide::Client => (
                    Box::new(TcpAgent::client(split.wired.clone(), server)),
                    Box::new(E2tcpReceiver::new(c.clone())),
                ),
                WiredSide::Server => (
                    Box::new(E2tcpSender::new(c.clone(), server)),
                    Box::new(TcpAgent::server(split.wired.clone())),
                ),
            },
        }
    }

    fn relay(&self) -> Option<RelaySpec> {
        let split = self.split.clone()?;
        let c = self.config.clone();
        Some(RelaySpec {
            nodes: RelayNodes::Only(vec![split.at]),
            make: Box::new(move || {
                Box::new(split_proxy(
                    c.clone(),
                    split.wired.clone(),
                    split.wired_side,
                    split.buffer,
                ))
            }),
        })
    }
}

pub(crate) fn options(t: &Reader, c: &mut E2tcpConfig) -> Result<()> {
    if let Some(v) = t.int_in("mss", 16, 60_000)? {
        c.mss = v as u16;
    }
    for (key, field) in [
        ("max_window", &mut c.max_window),
        ("min_window", &mut c.min_window),
        ("burst_window", &mut c.burst_window),
        ("error_limit", &mut c.error_limit),
    ] {
        if let Some(v) = t.int_in(key, 1, 10_000)? {
            *field = v as u32;
        }
    }
    if let Some(v) = t.bool("compression")? {
        c.compression = v;
    }
    if let Some(v) = t.bool("window_management")? {
        c.window_management = v;
    }
    if let Some(v) = t.bool("reduce_once_per_round_trip")? {
        c.reduce_once_per_round_trip = v;
    }
    if let Some(d) = t.duration("initial_rto")? {
        c.initial_rto = d;
    }
    if let Some(d) = t.duration("min_rto")? {
        c.min_rto = d;
    }
    if let Some(d) = t.duration("max_rto")? {
        c.max_rto = d;
    }
    if let Some(n) = t.int_in("max_timeouts", 1, 1_000_000)? {
        c.max_timeouts = n as u32;
    }
    c.validate().map_err(|e| t.error(e.key, e.reason))
}

/// `split_at`, `wired`, `wired_side`, `relay_buffer`.
fn split(t: &Reader, names: &[String]) -> Result<Option<Split>> {
    if !t.has("split_at") {
        for k in ["wired", "wired_side", "relay_buffer"] {
            if t.has(k) {
                return Err(t.error(k, "only meaningful with `split_at`"));
            }
        }
        return Ok(None);
    }
    let at = node_ref(t, "split_at", names)?;
    let variant: TcpVariant = t.str("wired")?.unwrap_or("newreno").parse().map_err(|_| {
        t.error(
            "wired",
            "expected a TCP variant (tahoe, reno, newreno, sack, cubic)",
        )
    })?;
    let wired_side = match t.str("wired_side")?.unwrap_or("client") {
        "client" => WiredSide::Client,
        "server" => WiredSide::Server,
        other => {
            return Err(t.error(
                "wired_side",
                format!("expected \"client\" or \"server\", got \"{other}\""),
            ))
        }
    };
    let buffer = match t.size("relay_buffer")? {
        None => DEFAULT_SPLIT_BUFFER,
        Some(b) if (1024..=1 << 30).contains(&b) => b as usize,
        Some(_) => return Err(t.error("relay_buffer", "must be between 1 KB and 1 GB")),
    };
    Ok(Some(Split {
        at,
        wired: TcpConfig::new(variant),
        wired_side,
        buffer,
    }))
}
