//! Interval reports and final summaries, for people (iperf3-like lines) and
//! programs: `-J` prints one JSON object laid out like iperf3's (`start`,
//! `intervals`, `end`); `--json-stream` prints one JSON object per line as
//! events happen (`{"event":"start"|"interval"|"end","data":{...}}`).
//!
//! Metric names follow the simulator's flow results (`bytes_delivered`,
//! `goodput_bps`, `retransmitted_packets`, `rtt_mean_ms`, `energy_j`, ...).

use std::io::Write;

use joulenet_proto::{Duration, Time};
use serde::Serialize;
use serde_json::{json, Value};

use crate::conn::{Connection, DatagramCounts};
use crate::energy::EnergyEstimate;
use crate::wake::WakeLateness;

/// Agent gauges reported with every interval and at the end when the
/// agent has them: where a rate-paced sender's time went (nackrate's
/// model and its diagnostics), for comparing a host's run with the
/// simulator's twin.
pub const DIAGNOSTIC_GAUGES: [&str; 16] = [
    "pacing_rate_bps",
    "bw_bps",
    "random_loss",
    "min_rtt_ms",
    "flight",
    "inflight_hi",
    "ack_gap_ms",
    "capped_ms",
    "pace_wakes",
    "pace_late_ms",
    "pace_lost_ms",
    "pace_late_10ms",
    "late_wake_ms",
    "bound_cuts",
    "timeouts",
    "repairs",
];

/// The diagnostic gauges `conn`'s agent answers, by name.
fn diagnostic_gauges(conn: &Connection) -> serde_json::Map<String, Value> {
    DIAGNOSTIC_GAUGES
        .iter()
        .filter_map(|&n| conn.gauge(n).map(|v| (n.to_string(), json!(v))))
        .collect()
}

#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Format {
    #[default]
    Human,
    Json,
    JsonStream,
}

/// Counters at one instant, for interval differences.
#[derive(Copy, Clone, Debug, Default)]
struct Snapshot {
    at: Time,
    app_bytes: u64,
    retransmitted_packets: u64,
    transport_bytes: u64,
}

fn snapshot(conn: &Connection, at: Time) -> Snapshot {
    let s = conn.agent.stats();
    Snapshot {
        at,
        app_bytes: if conn.is_client {
            s.payload_bytes
        } else {
            conn.app_bytes_delivered()
        },
        retransmitted_packets: s.retransmitted_packets,
        transport_bytes: s.total_bytes_sent(),
    }
}

/// Writes reports for one connection as it runs. Intervals are timed from
/// the start of the transfer (`Connection::transfer_started_at`), as
/// iperf3's are from the start of its test: the handshake, and any SYN it
/// had to repeat, falls before the first interval (its packets are counted
/// in the first interval's transport bytes and retransmissions).
pub struct Reporter {
    format: Format,
    interval: Option<Duration>,
    /// The transfer's start, once it has started.
    origin: Option<Time>,
    next_tick: Time,
    prev: Snapshot,
    intervals: Vec<Value>,
    start: Value,
    out: Box<dyn Write + Send>,
}

impl Reporter {
    pub fn new(format: Format, interval: Option<Duration>, out: Box<dyn Write + Send>) -> Reporter {
        let interval = interval.filter(|d| d.0 > 0);
        Reporter {
            format,
            next_tick: Time::NEVER,
            origin: None,
            interval,
            prev: Snapshot::default(),
            intervals: Vec::new(),
            start: Value::Null,
            out,
        }
    }

    /// The connection started: `start` holds what iperf3 puts there.
    pub fn start(&mut self, start: Value) {
        match self.format {
            Format::Human => {
                if let Some(line) = start.get("line").and_then(|l| l.as_str()) {
                    let _ = writeln!(self.out, "{line}");
                }
            }
            Format::JsonStream => self.stream("start", &start),
            Format::Json => {}
        }
        self.start = start;
    }

    pub fn next_tick(&self) -> Option<Time> {
        (!self.next_tick.is_never()).then_some(self.next_tick)
    }

    /// Emits every interval report due by `now`.
    pub fn tick(&mut self, now: Time, conn: &Connection) {
        let Some(iv) = self.interval else { return };
        if self.origin.is_none() {
            let Some(origin) = conn.transfer_started_at else {
                return;
            };
            self.origin = Some(origin);
            self.prev.at = origin;
            self.next_tick = origin + iv;
        }
        while now >= self.next_tick {
            let at = self.next_tick;
            self.report_interval(conn, at);
            self.next_tick = Time(at.0 + iv.0);
        }
    }

    fn report_interval(&mut self, conn: &Connection, at: Time) {
        let cur = snapshot(conn, at);
        let origin = self.origin.unwrap_or(Time::ZERO);
        let since = |t: Time| t.saturating_since(origin).as_secs_f64();
        let secs = (cur.at.0.saturating_sub(self.prev.at.0)) as f64 / 1e9;
        let bytes = cur.app_bytes - self.prev.app_bytes.min(cur.app_bytes);
        let bps = if secs > 0.0 {
            bytes as f64 * 8.0 / secs
        } else {
            0.0
        };
        let v = json!({
            "sum": {
                "start": since(self.prev.at),
                "end": since(cur.at),
                "seconds": secs,
                "bytes": bytes,
                "bits_per_second": bps,
                "retransmits": cur.retransmitted_packets - self.prev.retransmitted_packets.min(cur.retransmitted_packets),
                "transport_bytes": cur.transport_bytes - self.prev.transport_bytes.min(cur.transport_bytes),
                "cwnd": conn.gauge("cwnd"),
                "srtt_ms": conn.gauge("srtt_ms"),
                "sender": conn.is_client,
                "gauges": diagnostic_gauges(conn),
            }
        });
        match self.format {
            Format::Human => {
                let _ = writeln!(
                    self.out,
                    "[{:>4x}] {:6.2}-{:<6.2} sec {:>10} {:>14}  retr {:<5} cwnd {:>9} srtt {}",
                    conn.id & 0xffff,
                    since(self.prev.at),
                    since(cur.at),
                    human_bytes(bytes),
                    human_rate(bps),
                    v["sum"]["retransmits"],
                    conn.gauge("cwnd")
                        .map_or("-".into(), |c| human_bytes(c as u64)),
                    conn.gauge("srtt_ms")
                        .map_or("-".into(), |s| format!("{s:.2} ms")),
                );
            }
            Format::JsonStream => self.stream("interval", &v),
            Format::Json => {}
        }
        self.intervals.push(v);
        self.prev = cur;
    }

    /// The connection ended: the final summary.
    pub fn end(&mut self, summary: &Summary) {
        let end = serde_json::to_value(summary).unwrap_or(Value::Null);
        match self.format {
            Format::Human => {
                let _ = writeln!(self.out, "{}", summary.human());
            }
            Format::JsonStream => self.stream("end", &end),
            Format::Json => {
                let doc = json!({
                    "start": self.start,
                    "intervals": self.intervals,
                    "end": end,
                });
                let _ = writeln!(
                    self.out,
                    "{}",
                    serde_json::to_string_pretty(&doc).unwrap_or_default()
                );
            }
        }
        let _ = self.out.flush();
    }

    /// Free-form message (human mode only; JSON modes stay parseable).
    pub fn note(&mut self, msg: &str) {
        if self.format == Format::Human {
            let _ = writeln!(self.out, "{msg}");
        }
    }

    fn stream(&mut self, event: &str, data: &Value) {
        let _ = writeln!(self.out, "{}", json!({"event": event, "data": data}));
        let _ = self.out.flush();
    }
}

/// The end-of-run metrics of one connection at one end.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub role: &'static str,
    pub protocol: String,
    pub connection_id: String,
    pub peer: String,
    /// Bytes the receiving application got (known at the receiver; at a
    /// sender of a reliable protocol, the bytes sent once the peer
    /// acknowledged the end of the stream).
    pub bytes_delivered: Option<u64>,
    pub bytes_requested: Option<u64>,
    pub completed: bool,
    pub aborted: bool,
    /// From the connection's start to the end of the stream.
    pub completion_time_s: f64,
    /// `bytes_delivered` over `completion_time_s`: the simulator's goodput,
    /// handshake included.
    pub goodput_bps: Option<f64>,
    /// From the connection's start to the transfer's (iperf3's test start:
    /// the handshake, with any repeated SYNs).
    pub transfer_start_s: Option<f64>,
    /// `bytes_delivered` over the time from the transfer's start to the end
    /// of the stream: iperf3's convention, comparable with its
    /// `bits_per_second`.
    pub transfer_goodput_bps: Option<f64>,
    pub data_packets: u64,
    pub data_bytes: u64,
    pub retransmitted_packets: u64,
    pub retransmitted_bytes: u64,
    pub control_packets: u64,
    pub control_bytes: u64,
    /// Transport bytes this end sent: data, retransmissions and control.
    pub transport_bytes: u64,
    pub timeouts: u64,
    pub fast_recoveries: u64,
    pub malformed_dropped: u64,
    pub unexpected_dropped: u64,
    pub rtt_samples: u64,
    pub rtt_mean_ms: Option<f64>,
    pub rtt_min_ms: Option<f64>,
    pub rtt_max_ms: Option<f64>,
    pub srtt_ms: Option<f64>,
    #[serde(flatten)]
    pub datagrams: DatagramCounts,
    pub energy: EnergyEstimate,
    /// File transfers: what became of the file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<Value>,
    /// Why this end failed (refused, aborted, no verdict, or the
    /// receiver's verdict and its reason), when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Stopped by a signal before the end (the client's SIGINT/SIGTERM):
    /// the counters are what was measured until then.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// Through relays: the ends' node addresses and the hop limits the
    /// received datagrams arrived with (64 minus the relays they crossed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub route: Option<Value>,
    /// The agent's diagnostic gauges at the end ([`DIAGNOSTIC_GAUGES`]).
    #[serde(skip_serializing_if = "serde_json::Map::is_empty")]
    pub gauges: serde_json::Map<String, Value>,
    /// How late this host's event loop woke for its deadlines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wake_late: Option<WakeLateness>,
}

impl Summary {
    pub fn build(
        conn: &Connection,
        end: Time,
        bytes_delivered: Option<u64>,
        energy: EnergyEstimate,
    ) -> Summary {
        let s = conn.agent.stats();
        let secs = end.as_secs_f64();
        let transfer_start = conn.transfer_started_at.map(|t| t.as_secs_f64());
        let transfer_secs = transfer_start.map(|t| secs - t).filter(|&d| d > 0.0);
        let ms = |d: Option<Duration>| d.map(|d| d.as_millis_f64());
        Summary {
            role: if conn.is_client { "sender" } else { "receiver" },
            protocol: conn.protocol.name().to_string(),
            connection_id: format!("{:016x}", conn.id),
            peer: conn.peer.to_string(),
            bytes_delivered,
            bytes_requested: conn.net.source.as_ref().and_then(|s| s.total_bytes()),
            completed: !conn.aborted && (conn.closed_at.is_some() || conn.finished_at.is_some()),
            aborted: conn.aborted,
            completion_time_s: secs,
            goodput_bps: bytes_delivered
                .filter(|_| secs > 0.0)
                .map(|b| b as f64 * 8.0 / secs),
            transfer_start_s: transfer_start,
            transfer_goodput_bps: bytes_delivered
                .zip(transfer_secs)
                .map(|(b, d)| b as f64 * 8.0 / d),
            data_packets: s.data_packets,
            data_bytes: s.data_bytes,
            retransmitted_packets: s.retransmitted_packets,
            retransmitted_bytes: s.retransmitted_bytes,
            control_packets: s.control_packets,
            control_bytes: s.control_bytes,
            transport_bytes: s.total_bytes_sent(),
            timeouts: s.timeouts,
            fast_recoveries: s.fast_recoveries,
            malformed_dropped: s.malformed_dropped,
            unexpected_dropped: s.unexpected_dropped,
            rtt_samples: s.rtt.samples,
            rtt_mean_ms: ms(s.rtt.mean()),
            rtt_min_ms: ms(s.rtt.min),
            rtt_max_ms: ms(s.rtt.max),
            srtt_ms: ms(s.rtt.smoothed),
            datagrams: conn.counts,
            energy,
            file: None,
            error: None,
            interrupted: false,
            route: conn.route.map(|r| {
                serde_json::json!({
                    "local": r.local.to_string(),
                    "remote": r.remote.to_string(),
                    "hop_limit_min": r.hop_limit_min,
                    "hop_limit_max": r.hop_limit_max,
                })
            }),
            gauges: diagnostic_gauges(conn),
            wake_late: None,
        }
    }

    pub fn human(&self) -> String {
        let mut s = format!(
            "- - - - - - - - - - - - - - - - - - - - - - - - -\n\
             {} {} {}: {:.2} s, delivered {}, goodput {}, transport bytes sent {}, \
             retransmissions {} ({}), timeouts {}, rtt mean/min/max {} / {} / {} ms, \
             energy {:.3} J ({} at {})",
            self.protocol,
            self.role,
            if self.interrupted {
                "INTERRUPTED"
            } else if self.aborted {
                "ABORTED"
            } else if self.completed {
                "done"
            } else {
                "incomplete"
            },
            self.completion_time_s,
            self.bytes_delivered.map_or("?".into(), human_bytes),
            self.goodput_bps.map_or("?".into(), human_rate),
            human_bytes(self.transport_bytes),
            self.retransmitted_packets,
            human_bytes(self.retransmitted_bytes),
            self.timeouts,
            opt(self.rtt_mean_ms),
            opt(self.rtt_min_ms),
            opt(self.rtt_max_ms),
            self.energy.energy_j,
            self.energy.radio,
            human_rate(self.energy.radio_rate_bps as f64),
        );
        if let (Some(t), Some(g)) = (self.transfer_start_s, self.transfer_goodput_bps) {
            s.push_str(&format!(
                "\ntransfer from {t:.3} s (after the handshake): goodput {}",
                human_rate(g)
            ));
        }
        if let Some(f) = &self.file {
            s.push_str(&format!("\nfile: {f}"));
        }
        if let Some(e) = &self.error {
            s.push_str(&format!("\nfailed: {e}"));
        }
        s
    }
}

fn opt(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.2}"))
}

pub fn human_bytes(b: u64) -> String {
    let b = b as f64;
    if b >= 1e9 {
        format!("{:.2} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.2} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.1} kB", b / 1e3)
    } else {
        format!("{b} B")
    }
}

pub fn human_rate(bps: f64) -> String {
    if bps >= 1e9 {
        format!("{:.2} Gbit/s", bps / 1e9)
    } else if bps >= 1e6 {
        format!("{:.2} Mbit/s", bps / 1e6)
    } else {
        format!("{:.1} kbit/s", bps / 1e3)
    }
}
