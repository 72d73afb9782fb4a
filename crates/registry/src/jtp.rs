//! JTP: `jtp` (full reliability unless `[flow.jtp] loss_tolerance` says
//! otherwise), and the paper's `jtp0`, `jtp10`, `jtp20` (end-to-end loss
//! tolerance 0, 10, 20%). The ends run the eJTP source and destination of
//! `joulenet_proto::jtp`; every other node the flow crosses runs one iJTP
//! relay. Options under `[flow.jtp]`, named as `JtpConfig`'s fields.

use std::any::Any;

use joulenet_proto::jtp::{JtpConfig, JtpReceiver, JtpRelay, JtpSender};
use joulenet_proto::{Addr, Agent, ConfigError};
use joulenet_wire::jtp::Format;

use crate::options::{Reader, Result};
use crate::protocol::{Entry, HostSettings, Protocol, RelayNodes, RelaySpec, Wire, WireFormat};

pub const ENTRIES: &[Entry] = &[
    Entry {
        name: "jtp",
        about: "JTP: receiver-set rate (flip-flop monitor, PI²/MD), per-packet link attempts from the loss tolerance, iJTP packet cache on every hop answering SNACKs; full reliability unless [flow.jtp] loss_tolerance says otherwise",
        options: Some("jtp"),
        wire: Wire::Code(23),
        make: || Box::new(with_tolerance(0.0)),
    },
    Entry {
        name: "jtp0",
        about: "JTP with loss tolerance 0: every packet delivered (the paper's jtp0)",
        options: Some("jtp"),
        wire: Wire::Code(24),
        make: || Box::new(with_tolerance(0.0)),
    },
    Entry {
        name: "jtp10",
        about: "JTP with 10% end-to-end loss tolerance: fewer link attempts per hop, holes within 10% given up (the paper's jtp10)",
        options: Some("jtp"),
        wire: Wire::Code(25),
        make: || Box::new(with_tolerance(0.1)),
    },
    Entry {
        name: "jtp20",
        about: "JTP with 20% end-to-end loss tolerance (the paper's jtp20)",
        options: Some("jtp"),
        wire: Wire::Code(26),
        make: || Box::new(with_tolerance(0.2)),
    },
];

#[derive(Clone, Debug)]
pub struct Jtp(pub JtpConfig);

fn with_tolerance(loss_tolerance: f64) -> Jtp {
    Jtp(JtpConfig {
        loss_tolerance,
        ..JtpConfig::default()
    })
}

impl Protocol for Jtp {
    fn name(&self) -> &'static str {
        name(&self.0)
    }

    fn wire_format(&self) -> WireFormat {
        WireFormat::Jtp
    }

    fn config(&self) -> &dyn Any {
        &self.0
    }

    fn configure(&mut self, flow: &Reader, _names: &[String]) -> Result<()> {
        configure(flow, &mut self.0)
    }

    /// On real hosts: a packet's payload is the runtime's segment, and
    /// the feedback period's lower bound is the host's retransmission
    /// floor (`--min-rto`, 200 ms) instead of the paper's 10 s, which its
    /// own rule rules out at link rates: T_lb must leave SNACKed packets in
    /// the caches, T_lb ≤ C / rate − RTT (§5.1), about 1 s for 1000
    /// cached 1400-byte packets at 10 Mbit/s.
    fn on_hosts(&mut self, s: &HostSettings) -> std::result::Result<(), ConfigError> {
        self.0.packet_size = s.segment as usize;
        self.0.feedback_lower_bound = s.min_rto;
        self.0.validate()
    }

    /// The eJTP source (client) and destination (server).
    fn agents(&self, _client: Addr, server: Addr) -> (Box<dyn Agent>, Box<dyn Agent>) {
        (
            Box::new(JtpSender::new(self.0.clone(), server).expect("validated by configure")),
            Box::new(JtpReceiver::new(self.0.clone()).expect("validated by configure")),
        )
    }

    /// iJTP runs on every hop (§2.2.2), one agent per node.
    fn relay(&self) -> Option<RelaySpec> {
        let c = self.0.clone();
        Some(RelaySpec {
            nodes: RelayNodes::Every,
            make: Box::new(move || {
                Box::new(JtpRelay::new(c.clone()).expect("validated by configure"))
            }),
        })
    }

    /// Flows share a node's iJTP (its one packet cache, §4) when the
    /// options the relay uses agree; the ends' options (loss tolerance,
    /// rates, feedback) do not split it.
    fn relay_key(&self) -> String {
        let c = &self.0;
        format!(
            "jtp relay: attempt_energy_uj {} max_attempts {} assumed_link_loss {:?} cache_packets {}",
            c.attempt_energy_uj, c.max_attempts, c.assumed_link_loss, c.cache_packets
        )
    }

    fn delivers_with_gaps(&self) -> bool {
        self.0.loss_tolerance > 0.0
    }
}

fn name(c: &JtpConfig) -> &'static str {
    if c.loss_tolerance == 0.1 {
        "jtp10"
    } else if c.loss_tolerance == 0.2 {
        "jtp20"
    } else {
        "jtp"
    }
}

/// `[flow.jtp]`: every option is a `JtpConfig` field of the same name
/// (`initial_rate` is `initial_rate_bps`, with units), plus `monitor` and
/// `controller` sub-tables for the flip-flop filter and PI²/MD. Each value
/// is checked by `JtpConfig::validate`, whose error names the key.
fn configure(flow: &Reader, c: &mut JtpConfig) -> Result<()> {
    let Some(t) = flow.table("jtp")? else {
        return Ok(());
    };
    if let Some(lt) = t.probability("loss_tolerance")? {
        if c.loss_tolerance != 0.0 && lt != c.loss_tolerance {
            return Err(t.error(
                "loss_tolerance",
                format!(
                    "{} fixes the loss tolerance at {}; name protocol \"jtp\" to choose another",
                    name(c),
                    c.loss_tolerance
                ),
            ));
        }
        c.loss_tolerance = lt;
    }
    if let Some(f) = format(&t)? {
        c.format = f;
    }
    if let Some(v) = t.int_in("packet_size", 1, 65_000)? {
        c.packet_size = v as usize;
    }
    if let Some(v) = t.int_in("priority", 0, 255)? {
        c.priority = v as u8;
    }
    if let Some(v) = t.numbers("priority_pattern")? {
        c.priorities.pattern = v
            .iter()
            .map(|&p| {
                if p.fract() == 0.0 && (0.0..=255.0).contains(&p) {
                    Ok(p as u8)
                } else {
                    Err(t.error(
                        "priority_pattern",
                        format!("priorities are 0..=255, got {p}"),
                    ))
                }
            })
            .collect::<Result<Vec<_>>>()?;
    }
    if let Some(v) = t.numbers("priority_tolerance")? {
        c.priorities.tolerance = v;
    }
    if let Some(v) = t.int_in("energy_budget_uj", 1, u32::MAX as u64)? {
        c.energy_budget_uj = v as u32;
    }
    if let Some(v) = t.f64("budget_factor")? {
        c.budget_factor = v;
    }
    if let Some(v) = t.int_in("attempt_energy_uj", 0, u32::MAX as u64)? {
        c.attempt_energy_uj = v as u32;
    }
    if let Some(v) = t.int_in("max_attempts", 1, 255)? {
        c.max_attempts = v as u8;
    }
    if let Some(v) = t.f64("assumed_link_loss")? {
        c.assumed_link_loss = Some(v);
    }
    if let Some(v) = t.rate("initial_rate")? {
        c.initial_rate_bps = v as f64;
    }
    if let Some(d) = t.duration("feedback_lower_bound")? {
        c.feedback_lower_bound = d;
    }
    if let Some(v) = t.int_in("feedback_packets", 1, 1_000_000)? {
        c.feedback_packets = v as u32;
    }
    if let Some(d) = t.duration("ack_grace")? {
        c.ack_grace = d;
    }
    if let Some(v) = t.f64("late_backoff")? {
        c.late_backoff = v;
    }
    if let Some(v) = t.bool("local_backoff")? {
        c.local_backoff = v;
    }
    if let Some(d) = t.duration("constant_feedback")? {
        c.constant_feedback = Some(d);
    }
    if let Some(v) = t.int_in("max_snack", 1, 1_000_000)? {
        c.max_snack = v as usize;
    }
    if let Some(v) = t.int_in("cache_packets", 0, 10_000_000)? {
        c.cache_packets = v as usize;
    }
    if let Some(m) = t.table("monitor")? {
        if let Some(v) = m.f64("alpha_stable")? {
            c.monitor.alpha_stable = v;
        }
        if let Some(v) = m.f64("alpha_agile")? {
            c.monitor.alpha_agile = v;
        }
        if let Some(v) = m.f64("beta")? {
            c.monitor.beta = v;
        }
        if let Some(v) = m.int_in("outliers_to_switch", 1, 1_000)? {
            c.monitor.outliers_to_switch = v as u32;
        }
        c.monitor.validate().map_err(|e| m.error(e.key, e.reason))?;
        m.finish()?;
    }
    if let Some(p) = t.table("controller")? {
        for (key, field) in [
            ("k_i", &mut c.controller.k_i),
            ("k_d", &mut c.controller.k_d),
            ("delta", &mut c.controller.delta),
            ("min_rate", &mut c.controller.min_rate),
            ("max_rate", &mut c.controller.max_rate),
        ] {
            if let Some(v) = p.f64(key)? {
                *field = v;
            }
        }
        c.controller
            .validate()
            .map_err(|e| p.error(e.key, e.reason))?;
        p.finish()?;
    }
    c.validate().map_err(|e| {
        let key = match e.key {
            "initial_rate_bps" => "initial_rate",
            k => k,
        };
        t.error(key, e.reason)
    })?;
    t.finish()
}

/// `format = "compact" | "paper"`: the header layout (JTP's, and ATP's,
/// which reuses it).
pub(crate) fn format(t: &Reader) -> Result<Option<Format>> {
    match t.str("format")? {
        None => Ok(None),
        Some("compact") => Ok(Some(Format::Compact)),
        Some("paper") => Ok(Some(Format::Paper)),
        Some(other) => Err(t.error(
            "format",
            format!("expected \"compact\" or \"paper\" (28-byte data headers, 200-byte ACKs), got \"{other}\""),
        )),
    }
}
