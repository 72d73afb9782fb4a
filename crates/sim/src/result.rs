//! What a run produces: per-flow, per-node and per-link results and a
//! summary, each serialisable, plus the context that made them.

use std::collections::BTreeMap;

use joulenet_channel::radio::{EnergyReport, FrameModel, FrameRole, RadioProfile};
use joulenet_proto::{Time, TransportStats};
use serde::Serialize;

use crate::medium::MediumStats;
use crate::metrics::jain_index;
use crate::series::SeriesRow;
use crate::simulation::Simulation;

/// How a number was made: attached to every row that leaves joulenet.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RunContext {
    pub scenario: String,
    pub scenario_hash: String,
    pub seed: u64,
    /// Parameter overrides applied to the scenario (sweep point, --set).
    pub params: BTreeMap<String, String>,
    pub joulenet_version: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FlowResult {
    pub flow: usize,
    pub label: String,
    pub protocol: String,
    pub app: String,
    pub from: u32,
    pub to: u32,
    pub start_s: f64,
    /// Bytes the receiving application got, in order.
    pub bytes_delivered: u64,
    /// Bytes the application wanted to send, when known (bulk transfers).
    pub bytes_requested: Option<u64>,
    pub completed: bool,
    /// From the flow's start to the last byte delivered.
    pub completion_time_s: Option<f64>,
    /// From the flow's start until both ends had closed.
    pub close_time_s: Option<f64>,
    pub goodput_bps: f64,
    pub data_packets: u64,
    pub data_bytes: u64,
    pub retransmitted_packets: u64,
    pub retransmitted_bytes: u64,
    /// Packets without application data from both ends (ACKs, SYN, FIN, ...).
    pub control_packets: u64,
    pub control_bytes: u64,
    /// Every transport byte both ends sent.
    pub transport_bytes: u64,
    /// transport_bytes − bytes_delivered.
    pub byte_overhead: i64,
    pub timeouts: u64,
    pub fast_recoveries: u64,
    pub malformed_dropped: u64,
    pub delay_mean_ms: Option<f64>,
    pub delay_p50_ms: Option<f64>,
    pub delay_p95_ms: Option<f64>,
    pub delay_p99_ms: Option<f64>,
    pub delay_max_ms: Option<f64>,
    pub rtt_mean_ms: Option<f64>,
    pub rtt_min_ms: Option<f64>,
    /// Deliveries whose bytes were not the stream's (a transport bug).
    pub corrupt_deliveries: u64,
    /// Datagram flows: messages that arrived and that were lost (skipped
    /// before one that arrived), and the conditional loss probability,
    /// P(lost | the previous message lost) (`crate::fates`).
    pub messages_received: Option<u64>,
    pub messages_lost: Option<u64>,
    pub conditional_loss_probability: Option<f64>,
    pub aborted: bool,
    /// When battery deaths first cut the flow's source off from its
    /// destination, if they did.
    pub partitioned_at_s: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NodeResult {
    pub node: u32,
    pub name: String,
    pub radios: usize,
    pub energy_j: f64,
    pub tx_j: f64,
    pub rx_j: f64,
    pub idle_j: f64,
    pub sleep_j: f64,
    pub off_j: f64,
    pub transition_j: f64,
    pub tx_s: f64,
    pub rx_s: f64,
    pub idle_s: f64,
    pub sleep_s: f64,
    pub frames_sent: u64,
    pub frames_received: u64,
    pub bytes_on_air: u64,
    pub battery_j: Option<f64>,
    /// The battery's model ("ideal", "kibam", "peukert") and the energy
    /// left in it at the end (KiBaM: both wells, so a dead node's stranded
    /// charge shows).
    pub battery_model: Option<String>,
    pub residual_j: Option<f64>,
    /// Per-frame energy included in `tx_j` and `rx_j`, and the frames it
    /// was charged for.
    pub frame_j: f64,
    pub frames_charged: u64,
    /// Initial position on a shared medium, metres (for lifetime maps).
    pub x_m: Option<f64>,
    pub y_m: Option<f64>,
    /// When the battery ran out (the node's lifetime), if it did.
    pub died_at_s: Option<f64>,
    /// Packets in transit that relay agents here passed on (possibly
    /// rewritten), took (a terminating relay), and dropped.
    pub transit_forwarded: u64,
    pub transit_consumed: u64,
    pub transit_dropped: u64,
    /// Transport bytes relay agents here sent (first transmissions,
    /// retransmissions and control).
    pub relay_bytes_sent: u64,
    /// On a shared medium: the transmit energy by what was sent (transport
    /// packets by the agent that made them, link control, routing); `None`
    /// on point-to-point links (`crate::medium::tx_kind`).
    pub tx_by_kind: Option<crate::medium::tx_kind::TxByKind>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LinkResult {
    pub link: usize,
    pub from: u32,
    pub to: u32,
    pub attempts: u64,
    pub attempts_lost: u64,
    pub frames_delivered: u64,
    pub queue_drops: u64,
    pub frames_lost: u64,
    pub frames_missed: u64,
    pub link_acks: u64,
    pub peak_queue: usize,
    pub utilisation: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    pub duration_s: f64,
    pub stopped_by_limit: bool,
    pub flows: usize,
    pub flows_completed: usize,
    pub bytes_delivered: u64,
    pub aggregate_goodput_bps: f64,
    pub jain_fairness: Option<f64>,
    pub energy_j: f64,
    pub energy_per_bit_j: Option<f64>,
    /// E2TCP's minimum energy M: every delivered byte once over each wireless
    /// hop of its path, no header, ACK or retransmission.
    pub minimum_energy_j: f64,
    /// ε = M / S.
    pub efficiency: Option<f64>,
    /// o = W / M = (S − M) / M.
    pub energy_overhead: Option<f64>,
    /// The energy model (`[energy] model`): "state", "cross-factor",
    /// `"cross-factor:<device>"` (a measured device's), "feeney-nilsson" or
    /// "custom".
    pub energy_model: String,
    /// Lifetime: the first node death, the time by which `dead_fraction`
    /// of the nodes had died, and the first partition of a measured flow's
    /// ends (all `None` if it did not happen within the run).
    pub first_death_s: Option<f64>,
    pub dead_fraction: f64,
    pub fraction_dead_s: Option<f64>,
    pub first_partition_s: Option<f64>,
    pub nodes_dead: usize,
    pub events: u64,
}

#[derive(Debug, Serialize)]
pub struct RunResult {
    pub context: RunContext,
    pub flows: Vec<FlowResult>,
    pub nodes: Vec<NodeResult>,
    pub links: Vec<LinkResult>,
    pub summary: Summary,
    pub series: Vec<SeriesRow>,
    /// Shared-medium counters (collisions, retries, ...), when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub medium: Option<crate::medium::MediumStats>,
    #[serde(skip)]
    pub pcap: Option<crate::pcap::Capture>,
}

fn ms(d: Option<joulenet_proto::Duration>) -> Option<f64> {
    d.map(|d| d.as_millis_f64())
}

pub(crate) fn collect(mut sim: Simulation) -> RunResult {
    let end = sim.end;
    let flows: Vec<FlowResult> = (0..sim.flow_agents.len())
        .map(|f| flow_result(&sim, f, end))
        .collect();
    let medium = sim.core.medium.as_ref().map(|m| m.snapshot());
    let nodes: Vec<NodeResult> = (0..sim.core.nodes.len())
        .map(|n| node_result(&mut sim, n, medium.as_ref()))
        .collect();
    let links = link_results(&sim, end);
    let summary = summary(&sim, &flows, &nodes, end);
    RunResult {
        context: RunContext {
            scenario: sim.spec.name.clone(),
            seed: sim.seed,
            ..RunContext::default()
        },
        flows,
        nodes,
        links,
        summary,
        series: sim.sampler.take().map(|s| s.rows).unwrap_or_default(),
        medium,
        pcap: sim.core.capture.take(),
    }
}

fn flow_result(sim: &Simulation, f: usize, end: Time) -> FlowResult {
    let spec = &sim.spec.flows[f];
    let (c, s) = sim.flow_agents[f];
    let (client, server) = (&sim.endpoints[c as usize], &sim.endpoints[s as usize]);
    let cs = &sending_stats(sim, f);
    let ss = sim.agents[s as usize].stats();
    let start = Time::ZERO + spec.start;
    let sink = &server.sink;
    let requested = spec.app.total_bytes();
    let completed = match requested {
        Some(n) => sink.delivered >= n,
        None => client.done && (server.done || spec.protocol.is_datagram()),
    };
    let completion = completed.then(|| {
        sink.last_delivery
            .unwrap_or(end)
            .saturating_since(start)
            .as_secs_f64()
    });
    let closed = match (client.closed_at, server.closed_at) {
        (Some(a), Some(b)) => Some(a.max(b).saturating_since(start).as_secs_f64()),
        _ => None,
    };
    let active = completion.unwrap_or_else(|| end.saturating_since(start).as_secs_f64());
    let transport_bytes = cs.total_bytes_sent() + ss.total_bytes_sent();
    FlowResult {
        flow: f,
        label: spec.label.clone(),
        protocol: spec.protocol.name().to_string(),
        app: spec.app.name().to_string(),
        from: spec.from,
        to: spec.to,
        start_s: spec.start.as_secs_f64(),
        bytes_delivered: sink.delivered,
        bytes_requested: requested,
        completed,
        completion_time_s: completion,
        close_time_s: closed,
        goodput_bps: if active > 0.0 {
            sink.delivered as f64 * 8.0 / active
        } else {
            0.0
        },
        data_packets: cs.data_packets + ss.data_packets,
        data_bytes: cs.data_bytes + ss.data_bytes,
        retransmitted_packets: cs.retransmitted_packets + ss.retransmitted_packets,
        retransmitted_bytes: cs.retransmitted_bytes + ss.retransmitted_bytes,
        control_packets: cs.control_packets + ss.control_packets,
        control_bytes: cs.control_bytes + ss.control_bytes,
        transport_bytes,
        byte_overhead: transport_bytes as i64 - sink.delivered as i64,
        timeouts: cs.timeouts + ss.timeouts,
        fast_recoveries: cs.fast_recoveries + ss.fast_recoveries,
        malformed_dropped: cs.malformed_dropped + ss.malformed_dropped,
        delay_mean_ms: ms(sink.delay.mean()),
        delay_p50_ms: ms(sink.delay.quantile(0.5)),
        delay_p95_ms: ms(sink.delay.quantile(0.95)),
        delay_p99_ms: ms(sink.delay.quantile(0.99)),
        delay_max_ms: ms(sink.delay.max()),
        rtt_mean_ms: ms(cs.rtt.mean()),
        rtt_min_ms: ms(cs.rtt.min),
        corrupt_deliveries: sink.corrupt_deliveries + client.sink.corrupt_deliveries,
        messages_received: sink.fates.as_ref().map(|f| f.received),
        messages_lost: sink.fates.as_ref().map(|f| f.lost),
        conditional_loss_probability: sink
            .fates
            .as_ref()
            .and_then(|f| f.conditional_loss_probability()),
        partitioned_at_s: sim.lifetime.partitioned_at[f].map(|t| t.as_secs_f64()),
        aborted: client.aborted_at.is_some() || server.aborted_at.is_some(),
    }
}

/// The sending side's counters: the flow's client, every extra agent that
/// sends for it (R²CP's senders beyond the first path's) and the proxies
/// that terminate it (a split E2TCP flow's base station, both halves), so
/// a flow's bytes and packets are all of its traffic whichever path or hop
/// carried it.
fn sending_stats(sim: &Simulation, f: usize) -> TransportStats {
    let (c, _) = sim.flow_agents[f];
    let mut stats = sim.agents[c as usize].stats().clone();
    for &a in &sim.flow_extra[f] {
        stats.add(sim.agents[a as usize].stats());
    }
    stats.add(&sim.relay_flow_stats(f));
    stats
}

fn node_result(sim: &mut Simulation, n: usize, medium: Option<&MediumStats>) -> NodeResult {
    let mut total = EnergyTotals::default();
    for &r in &sim.core.nodes[n].radios {
        total.add(&sim.core.radios[r as usize].energy());
    }
    let (mut sent, mut received, mut on_air) = (0, 0, 0);
    for l in &sim.core.links {
        if l.from as usize == n {
            sent += l.counters.attempts;
            on_air += l.counters.bytes_on_air;
        }
        if l.to as usize == n {
            received += l.counters.frames_delivered;
        }
    }
    if let Some(s) = medium {
        sent += s.frames_sent.get(n).copied().unwrap_or(0);
        received += s.frames_received.get(n).copied().unwrap_or(0);
        on_air += s.bytes_on_air.get(n).copied().unwrap_or(0);
    }
    let node = &sim.core.nodes[n];
    let position = sim
        .spec
        .medium
        .as_ref()
        .and_then(|m| m.positions.get(n).copied());
    NodeResult {
        node: n as u32,
        name: sim.spec.nodes[n].name.clone(),
        radios: node.radios.len(),
        energy_j: total.e.total_j,
        tx_j: total.e.tx.joules,
        rx_j: total.e.rx.joules,
        idle_j: total.e.idle.joules,
        sleep_j: total.e.sleep.joules,
        off_j: total.e.off.joules,
        transition_j: total.e.transition.joules,
        tx_s: total.e.tx.seconds,
        rx_s: total.e.rx.seconds,
        idle_s: total.e.idle.seconds,
        sleep_s: total.e.sleep.seconds,
        frames_sent: sent,
        frames_received: received,
        bytes_on_air: on_air,
        battery_j: node.battery.as_ref().map(|b| b.capacity_j),
        battery_model: node.battery.as_ref().map(|b| b.model.name().to_string()),
        residual_j: node.battery.as_ref().map(|b| b.residual_j()),
        frame_j: total.e.frame_j,
        frames_charged: total.e.frames,
        x_m: position.map(|p| p.0),
        y_m: position.map(|p| p.1),
        died_at_s: node.died_at.map(|t| t.as_secs_f64()),
        transit_forwarded: node.transit_forwarded,
        transit_consumed: node.transit_consumed,
        transit_dropped: node.transit_dropped,
        relay_bytes_sent: sim.relay_stats(n as u32).total_bytes_sent(),
        tx_by_kind: medium.and_then(|s| s.tx_by_kind.get(n).copied()),
    }
}

#[derive(Default)]
struct EnergyTotals {
    e: EnergyReport,
}

impl EnergyTotals {
    fn add(&mut self, r: &EnergyReport) {
        let e = &mut self.e;
        for (a, b) in [
            (&mut e.tx, &r.tx),
            (&mut e.rx, &r.rx),
            (&mut e.idle, &r.idle),
            (&mut e.sleep, &r.sleep),
            (&mut e.off, &r.off),
            (&mut e.transition, &r.transition),
        ] {
            a.seconds += b.seconds;
            a.joules += b.joules;
        }
        e.frames += r.frames;
        e.frame_j += r.frame_j;
        e.wake_transitions += r.wake_transitions;
        e.total_j += r.total_j;
    }
}

fn link_results(sim: &Simulation, end: Time) -> Vec<LinkResult> {
    let elapsed = end.as_secs_f64();
    sim.core
        .links
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let c = &l.counters;
            LinkResult {
                link: i,
                from: l.from,
                to: l.to,
                attempts: c.attempts,
                attempts_lost: c.attempts_lost,
                frames_delivered: c.frames_delivered,
                queue_drops: c.queue_drops,
                frames_lost: c.frames_lost,
                frames_missed: c.frames_missed,
                link_acks: c.link_acks,
                peak_queue: c.peak_queue,
                utilisation: if elapsed > 0.0 {
                    (c.busy_time.as_secs_f64() / elapsed).min(1.0)
                } else {
                    0.0
                },
            }
        })
        .collect()
}

/// E2TCP's M for one flow: its delivered bits over each wireless hop of the
/// path, at the sending radio's transmit power plus the receiver's receive
/// power. On a shared medium the path is the fewest hops of the initial
/// network (routes there change with failures and motion; M stays a lower
/// bound), each hop at the data rate without PLCP or MAC header.
/// `adjacency`: the medium's neighbour lists, if there is a medium.
fn minimum_energy(sim: &Simulation, adjacency: Option<&[Vec<u32>]>, f: &FlowResult) -> f64 {
    let (from, to, bytes) = (f.from, f.to, f.bytes_delivered);
    if let (Some(spec), Some(adjacency)) = (&sim.spec.medium, adjacency) {
        let Some(hops) = fewest_hops(adjacency, from as usize, to as usize) else {
            return 0.0;
        };
        let seconds = bytes as f64 * 8.0 / spec.phy.rate_bps as f64;
        let model = &sim.spec.frame_model;
        return hops as f64 * hop_energy(model, &spec.radio, &spec.radio, seconds, bytes);
    }
    let mut node = from as usize;
    let mut m = 0.0;
    let mut hops = 0;
    while node != to as usize && hops < sim.core.nodes.len() {
        let Some(l) = sim.core.next_link[node][to as usize] else {
            break;
        };
        let link = &sim.core.links[l as usize];
        if let (Some(tx), Some(rx)) = (link.from_radio, link.to_radio) {
            let seconds = bytes as f64 * 8.0 / link.params.rate_bps as f64;
            let (tx, rx) = (
                &sim.radio_profiles[tx as usize],
                &sim.radio_profiles[rx as usize],
            );
            m += hop_energy(&sim.spec.frame_model, tx, rx, seconds, bytes);
        }
        node = link.to as usize;
        hops += 1;
    }
    m
}

/// The least energy of carrying `bytes` over one hop in `seconds`: the
/// sender's and receiver's power while active (idle under a per-packet
/// model) plus the per-byte parts of the send and receive lines. A frame's
/// fixed cost is overhead, like its header, so M leaves it out and stays a
/// lower bound under every model.
fn hop_energy(
    model: &FrameModel,
    tx: &RadioProfile,
    rx: &RadioProfile,
    seconds: f64,
    bytes: u64,
) -> f64 {
    let (tx_w, rx_w) = match model.baseline_idle {
        true => (tx.idle_w, rx.idle_w),
        false => (tx.tx_w, rx.rx_w),
    };
    let per_byte =
        model.line(FrameRole::Send).per_byte_j + model.line(FrameRole::Receive).per_byte_j;
    seconds * (tx_w + rx_w) + (bytes as f64 * per_byte).max(0.0)
}

/// Breadth-first hop count from `from` to `to`.
fn fewest_hops(adjacency: &[Vec<u32>], from: usize, to: usize) -> Option<u32> {
    let mut hops = vec![u32::MAX; adjacency.len()];
    hops[from] = 0;
    let mut queue = std::collections::VecDeque::from([from]);
    while let Some(u) = queue.pop_front() {
        if u == to {
            return Some(hops[u]);
        }
        for &v in &adjacency[u] {
            if hops[v as usize] == u32::MAX {
                hops[v as usize] = hops[u] + 1;
                queue.push_back(v as usize);
            }
        }
    }
    None
}

/// Bits delivered by all flows over their common interval: from the first
/// flow's start to the last one's completion (or the run's end). Summing
/// each flow's own goodput instead counts a short flow's burst as if it
/// lasted the whole run, and reported more than a bottleneck can carry.
fn aggregate_goodput(flows: &[&FlowResult], end_s: f64) -> f64 {
    let start = flows
        .iter()
        .map(|f| f.start_s)
        .fold(f64::INFINITY, f64::min);
    let finish = flows
        .iter()
        .map(|f| f.start_s + f.completion_time_s.unwrap_or(end_s - f.start_s))
        .fold(f64::NEG_INFINITY, f64::max);
    let bits: f64 = flows.iter().map(|f| f.bytes_delivered as f64 * 8.0).sum();
    if finish > start {
        bits / (finish - start)
    } else {
        0.0
    }
}

fn summary(sim: &Simulation, flows: &[FlowResult], nodes: &[NodeResult], end: Time) -> Summary {
    let measured: Vec<&FlowResult> = flows
        .iter()
        .filter(|f| !sim.spec.flows[f.flow].background)
        .collect();
    let delivered: u64 = measured.iter().map(|f| f.bytes_delivered).sum();
    let energy: f64 = nodes.iter().map(|n| n.energy_j).sum();
    // The medium's neighbour lists, once for every flow: each costs a PER
    // for every pair of nodes (a million on a 1,000-node mesh).
    let adjacency = sim.spec.medium.as_ref().map(|m| m.adjacency());
    let m: f64 = measured
        .iter()
        .map(|f| minimum_energy(sim, adjacency.as_deref(), f))
        .sum();
    let goodputs: Vec<f64> = measured.iter().map(|f| f.goodput_bps).collect();
    let duration = end.as_secs_f64();
    let aggregate_goodput_bps = aggregate_goodput(&measured, duration);
    let died: Vec<Option<f64>> = nodes.iter().map(|n| n.died_at_s).collect();
    let (first_death, fraction_dead) = crate::lifetime::deaths(&died, sim.spec.dead_fraction);
    Summary {
        duration_s: duration,
        stopped_by_limit: sim.stopped_by_limit,
        flows: measured.len(),
        flows_completed: measured.iter().filter(|f| f.completed).count(),
        bytes_delivered: delivered,
        aggregate_goodput_bps,
        jain_fairness: jain_index(&goodputs),
        energy_j: energy,
        energy_per_bit_j: (delivered > 0 && energy > 0.0)
            .then(|| energy / (delivered as f64 * 8.0)),
        minimum_energy_j: m,
        efficiency: (energy > 0.0 && m > 0.0).then(|| m / energy),
        energy_overhead: (m > 0.0).then(|| (energy - m) / m),
        energy_model: sim.spec.frame_model.name.clone(),
        first_death_s: first_death,
        dead_fraction: sim.spec.dead_fraction,
        fraction_dead_s: fraction_dead,
        first_partition_s: measured
            .iter()
            .filter_map(|f| f.partitioned_at_s)
            .min_by(f64::total_cmp),
        nodes_dead: died.iter().flatten().count(),
        events: sim.core.queue.popped(),
    }
}
