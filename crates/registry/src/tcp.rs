//! The TCP family: `tahoe`, `reno`, `newreno`, `sack`, `cubic`, the JTP
//! paper's `rate-sack` (SACK paced at the PFTK rate), and the RCP paper's
//! `tcp-eln` and `stp` (Henderson and Katz's Satellite Transport Protocol). Options under `[flow.tcp]`.

use std::any::Any;

use joulenet_proto::tcp::{DelayedAck, TcpAgent, TcpConfig, TcpProfile, TcpVariant};
use joulenet_proto::{Addr, Agent, ConfigError, Duration};
use toml::Value;

use crate::options::{Reader, Result};
use crate::protocol::{Entry, HostSettings, Protocol, Services, Wire, WireFormat};

/// ELN needs the receiver's link layer; a UDP socket has none.
const NO_ELN_ON_HOSTS: &str = "needs explicit loss notification from the receiver's link \
    layer, which a UDP socket cannot provide";

pub const ENTRIES: &[Entry] = &[
    Entry {
        name: "tahoe",
        about: "TCP Tahoe: fast retransmit, then slow start from one segment",
        options: Some("tcp"),
        wire: Wire::Code(1),
        make: || Box::new(Tcp(TcpConfig::new(TcpVariant::Tahoe))),
    },
    Entry {
        name: "reno",
        about: "TCP Reno: fast retransmit and fast recovery (RFC 5681)",
        options: Some("tcp"),
        wire: Wire::Code(2),
        make: || Box::new(Tcp(TcpConfig::new(TcpVariant::Reno))),
    },
    Entry {
        name: "newreno",
        about: "TCP NewReno: Reno with partial-ACK recovery (RFC 6582)",
        options: Some("tcp"),
        wire: Wire::Code(3),
        make: || Box::new(Tcp(TcpConfig::new(TcpVariant::NewReno))),
    },
    Entry {
        name: "sack",
        about: "TCP SACK: scoreboard-based loss recovery (RFC 6675)",
        options: Some("tcp"),
        wire: Wire::Code(4),
        make: || Box::new(Tcp(TcpConfig::new(TcpVariant::Sack))),
    },
    Entry {
        name: "cubic",
        about: "TCP CUBIC: RFC 9438 window growth with SACK recovery",
        options: Some("tcp"),
        wire: Wire::Code(5),
        make: || Box::new(Tcp(TcpConfig::new(TcpVariant::Cubic))),
    },
    Entry {
        name: "rate-sack",
        about: "rate-based TCP-SACK, the JTP paper's baseline: SACK paced at the PFTK throughput equation's rate, delayed ACKs (one per two segments), Linux's RTT sampling",
        options: Some("tcp"),
        wire: Wire::Code(6),
        make: || Box::new(Tcp(TcpConfig::rate_sack())),
    },
    Entry {
        name: "stp",
        about: "STP (Henderson & Katz), the RCP paper's sender-side satellite baseline: the sender polls, the receiver reports (cumulative ACK and SACK gaps) only when polled or on a new gap, every reported gap is resent",
        options: Some("tcp"),
        wire: Wire::Code(7),
        make: || Box::new(Tcp(TcpConfig::stp())),
    },
    Entry {
        name: "tcp-eln",
        about: "TCP-ELN: NewReno whose receiver marks ACKs of holes its link layer saw lost on the wireless hop; the sender resends those without a window cut",
        options: Some("tcp"),
        wire: Wire::Unavailable(NO_ELN_ON_HOSTS),
        make: || {
            Box::new(Tcp(TcpConfig {
                eln: true,
                ..TcpConfig::new(TcpVariant::NewReno)
            }))
        },
    },
];

/// An end-to-end TCP connection.
#[derive(Clone, Debug)]
pub struct Tcp(pub TcpConfig);

impl Protocol for Tcp {
    fn name(&self) -> &'static str {
        self.0.protocol_name()
    }

    fn wire_format(&self) -> WireFormat {
        WireFormat::Tcp
    }

    fn config(&self) -> &dyn Any {
        &self.0
    }

    fn configure(&mut self, flow: &Reader, _names: &[String]) -> Result<()> {
        configure(flow, &mut self.0)
    }

    fn on_hosts(&mut self, s: &HostSettings) -> std::result::Result<(), ConfigError> {
        if self.0.eln {
            return Err(ConfigError::new("protocol", NO_ELN_ON_HOSTS));
        }
        on_hosts(&mut self.0, s)
    }

    fn agents(&self, _client: Addr, server: Addr) -> (Box<dyn Agent>, Box<dyn Agent>) {
        (
            Box::new(TcpAgent::client(self.0.clone(), server)),
            Box::new(TcpAgent::server(self.0.clone())),
        )
    }

    fn services(&self) -> Services {
        Services {
            eln: self.0.eln,
            ..Services::default()
        }
    }
}

/// `[flow.tcp]`, shared by every protocol built of TCP connections.
pub(crate) fn configure(flow: &Reader, c: &mut TcpConfig) -> Result<()> {
    let Some(t) = flow.table("tcp")? else {
        return Ok(());
    };
    options(&t, c)?;
    c.validate().map_err(|e| t.error(e.key, e.reason))?;
    t.finish()
}

/// The runtime's settings as a TCP configuration: Linux's RTO floor, an
/// initial RTO of 1 s (RFC 6298) unless the floor is higher, the
/// MTU-sized segment.
pub(crate) fn on_hosts(
    c: &mut TcpConfig,
    s: &HostSettings,
) -> std::result::Result<(), ConfigError> {
    c.min_rto = s.min_rto;
    c.initial_rto = Duration::from_secs(1).max(s.min_rto);
    c.send_buffer = s.send_buffer;
    c.recv_buffer = s.recv_buffer;
    c.mss = s.segment;
    c.timestamps = s.timestamps;
    c.validate()
}

fn options(t: &Reader, c: &mut TcpConfig) -> Result<()> {
    // The profile first: it sets rules and timer values the keys below
    // may then override.
    if let Some(p) = t.str("profile")? {
        let profile: TcpProfile = p.parse().map_err(|e: String| t.error("profile", e))?;
        *c = profile.apply(c.clone());
    }
    if let Some(mss) = t.int_in("mss", 64, 65_000)? {
        c.mss = mss as u16;
    }
    if let Some(iw) = t.int_in("initial_window", 1, 10_000)? {
        c.initial_window = iw as u32;
    }
    if let Some(ss) = t.size("initial_ssthresh")? {
        c.initial_ssthresh = ss.max(2 * c.mss as u64);
    }
    if let Some(d) = t.duration("min_rto")? {
        c.min_rto = d;
    }
    if let Some(d) = t.duration("initial_rto")? {
        c.initial_rto = d.max(Duration::from_millis(1));
    }
    if let Some(d) = t.duration("max_rto")? {
        c.max_rto = d;
    }
    if c.max_rto < c.min_rto {
        return Err(t.error(
            "max_rto",
            format!("must be at least min_rto ({})", c.min_rto),
        ));
    }
    if let Some(n) = t.int_in("max_consecutive_rtos", 1, 1_000)? {
        c.max_consecutive_rtos = n as u32;
    }
    delayed_ack(t, c)?;
    if let Some(sack) = t.bool("sack")? {
        if !sack && c.variant.uses_sack() {
            return Err(t.error(
                "sack",
                format!(
                    "{} recovers with SACK and cannot turn it off",
                    c.variant.name()
                ),
            ));
        }
        c.sack = sack;
    }
    if let Some(ts) = t.bool("timestamps")? {
        c.timestamps = ts;
    }
    if let Some(eln) = t.bool("eln")? {
        if eln && c.variant != TcpVariant::NewReno {
            return Err(t.error(
                "eln",
                format!(
                    "ELN is the paper's TCP-ELN, built on newreno (protocol \"tcp-eln\"), not {}",
                    c.variant.name()
                ),
            ));
        }
        c.eln = eln;
    }
    if let Some(b) = t.size("send_buffer")? {
        c.send_buffer = b.clamp(c.mss as u64, 1 << 30) as usize;
    }
    if let Some(b) = t.size("recv_buffer")? {
        c.recv_buffer = b.clamp(c.mss as u64, 1 << 30) as usize;
    }
    if let Some(n) = t.int_in("dupack_threshold", 1, 100)? {
        c.dupack_threshold = n as u32;
    }
    if let Some(on) = t.bool("rack_tlp")? {
        c.rules.rack_tlp = on;
    }
    if let Some(on) = t.bool("frto")? {
        c.rules.frto = on;
    }
    if let Some(on) = t.bool("quickack")? {
        c.rules.quickack = on;
    }
    if let Some(on) = t.bool("linux_prr")? {
        c.rules.linux_prr = on;
    }
    if let Some(on) = t.bool("linux_cubic")? {
        c.rules.linux_cubic = on;
    }
    // The kernel's HZ: RACK's and the loss probe's timers in whole jiffies
    // (0: exact times).
    if let Some(hz) = t.int_in("kernel_hz", 0, 10_000)? {
        c.rules.jiffy = (hz > 0).then(|| Duration::from_nanos(1_000_000_000 / hz));
    }
    if let Some(r) = t.str("rtt_sampling")? {
        c.rtt_sampling = r.parse().map_err(|e: String| t.error("rtt_sampling", e))?;
    }
    if let Some(n) = t.int_in("stp_polls_per_rtt", 1, 64)? {
        let Some(stp) = c.stp.as_mut() else {
            return Err(t.error("stp_polls_per_rtt", "only meaningful with protocol \"stp\""));
        };
        stp.polls_per_rtt = n as u32;
    }
    Ok(())
}

/// `delayed_ack = true | false | { every, timeout }`.
fn delayed_ack(t: &Reader, c: &mut TcpConfig) -> Result<()> {
    match t.get("delayed_ack") {
        None => {}
        Some(Value::Boolean(false)) => c.delayed_ack = None,
        Some(Value::Boolean(true)) => c.delayed_ack = Some(DelayedAck::default()),
        Some(Value::Table(_)) => {
            let d = t.table("delayed_ack")?.expect("checked to be a table");
            let mut ack = DelayedAck::default();
            if let Some(every) = d.int_in("every", 1, 64)? {
                ack.every = every as u8;
            }
            if let Some(timeout) = d.duration("timeout")? {
                ack.timeout = timeout;
            }
            d.finish()?;
            c.delayed_ack = Some(ack);
        }
        Some(_) => return Err(t.error("delayed_ack", "expected true, false or { every, timeout }")),
    }
    Ok(())
}
