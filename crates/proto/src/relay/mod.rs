//! Protocol code on intermediate nodes: relays.
//!
//! A relay is an [`Agent`] registered for a protocol on a node that is not
//! an end of the flow; the driver hands it every packet of that protocol
//! crossing the node ([`Agent::on_transit`]). Two styles fit this one hook:
//!
//! * *transit* relays pass packets on, possibly rewritten (iJTP stamps rates
//!   and loss tolerance, sets per-hop link attempts, caches data and answers
//!   SNACKs from its cache);
//! * *terminating* relays consume them and open the next hop themselves
//!   ([`split::SplitConnection`]: the E2TCP base-station proxy, hop-by-hop
//!   TCP; later Hop's per-hop block transfer and DTN custody).
//!
//! A node does not know in advance which flows will cross it, so per-flow
//! state is made the first time a flow's packet arrives and forgotten when
//! it holds nothing: [`PerFlow`] does that bookkeeping for any
//! [`FlowRelay`], with a bound on the flows it keeps.

pub mod split;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use crate::net::{Addr, Agent, Net, Transit, TransitVerdict};
use crate::stats::TransportStats;
use crate::time::Time;

/// A flow as a relay sees it: the two endpoints, in either direction.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlowKey {
    low: Addr,
    high: Addr,
}

impl FlowKey {
    /// The flow a packet from `src` to `dst` belongs to (either direction).
    pub fn of(src: Addr, dst: Addr) -> FlowKey {
        FlowKey {
            low: src.min(dst),
            high: src.max(dst),
        }
    }
}

/// One flow's state at one relay.
pub trait FlowRelay {
    /// Called once, right after the state is made, before the packet that
    /// made it is handed to [`FlowRelay::on_transit`].
    fn start(&mut self, net: &mut dyn Net);
    fn on_transit(&mut self, net: &mut dyn Net, transit: &mut Transit<'_>) -> TransitVerdict;
    fn on_overheard(&mut self, _net: &mut dyn Net, _src: Addr, _dst: Addr, _packet: &[u8]) {}
    fn poll_timeout(&self) -> Option<Time>;
    fn on_timeout(&mut self, net: &mut dyn Net);
    /// What this flow's relay has sent and received, for reports.
    fn stats(&self) -> TransportStats;
    /// A named gauge ("relay_buffer").
    fn gauge(&self, _name: &str) -> Option<f64> {
        None
    }
    /// Holds nothing and expects nothing: the relay may forget the flow.
    fn is_idle(&self) -> bool;
}

/// Makes a flow's relay state from the first packet seen of it, or refuses
/// (`None`: that packet cannot open a flow, e.g. a TCP segment without SYN).
pub type Opener<F> = Box<dyn FnMut(&Transit<'_>) -> Option<F>>;

/// Counters of a [`PerFlow`] relay beyond its flows' own.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct RelayCounters {
    /// Flows whose state was made here.
    pub flows_opened: u64,
    /// Flows forgotten once idle.
    pub flows_forgotten: u64,
    /// Packets of unknown flows that could not open one, or found the flow
    /// table full; dropped.
    pub refused: u64,
    /// Most flows held at once.
    pub peak_flows: usize,
}

/// Forgotten flows whose counters a relay accounting per flow keeps; later
/// ones count in its totals only (a long-lived relay must not grow without
/// bound).
pub const MAX_ACCOUNTS: usize = 4096;

/// The relay agent of one protocol on one node: per-flow state made lazily,
/// bounded in number, forgotten when idle.
pub struct PerFlow<F: FlowRelay> {
    name: &'static str,
    open: Opener<F>,
    flows: BTreeMap<FlowKey, F>,
    max_flows: usize,
    /// Totals of flows already forgotten.
    forgotten: TransportStats,
    /// With [`PerFlow::accounting_per_flow`]: each flow's counters, live or
    /// forgotten (at most [`MAX_ACCOUNTS`] flows), for
    /// [`Agent::flow_stats`].
    accounts: Option<BTreeMap<FlowKey, TransportStats>>,
    /// Totals of all flows, kept current after every callback.
    stats: TransportStats,
    pub counters: RelayCounters,
}

impl<F: FlowRelay> PerFlow<F> {
    /// A relay named `name` (its protocol) holding at most `max_flows` flows.
    pub fn new(name: &'static str, max_flows: usize, open: Opener<F>) -> PerFlow<F> {
        PerFlow {
            name,
            open,
            flows: BTreeMap::new(),
            max_flows: max_flows.max(1),
            forgotten: TransportStats::default(),
            accounts: None,
            stats: TransportStats::default(),
            counters: RelayCounters::default(),
        }
    }

    /// Keep each flow's counters after it is forgotten, so the flow's
    /// totals can include this relay's traffic (a split connection's proxy
    /// is an end of both halves).
    pub fn accounting_per_flow(mut self) -> PerFlow<F> {
        self.accounts = Some(BTreeMap::new());
        self
    }

    /// Flows held now.
    pub fn flows(&self) -> usize {
        self.flows.len()
    }

    /// The state of the flow between `a` and `b`, if held.
    pub fn flow(&self, a: Addr, b: Addr) -> Option<&F> {
        self.flows.get(&FlowKey::of(a, b))
    }

    /// Forget idle flows and bring the totals up to date.
    fn settle(&mut self) {
        let idle: Vec<FlowKey> = self
            .flows
            .iter()
            .filter(|(_, f)| f.is_idle())
            .map(|(k, _)| *k)
            .collect();
        for k in idle {
            if let Some(f) = self.flows.remove(&k) {
                let stats = f.stats();
                self.forgotten.add(&stats);
                self.counters.flows_forgotten += 1;
                if let Some(accounts) = self.accounts.as_mut() {
                    if accounts.len() < MAX_ACCOUNTS || accounts.contains_key(&k) {
                        accounts.entry(k).or_default().add(&stats);
                    }
                }
            }
        }
        let mut total = self.forgotten.clone();
        for f in self.flows.values() {
            total.add(&f.stats());
        }
        self.stats = total;
    }
}

impl<F: FlowRelay> Agent for PerFlow<F> {
    fn protocol(&self) -> &'static str {
        self.name
    }

    fn start(&mut self, _net: &mut dyn Net) {}

    /// A relay has no packets addressed to it: anything that is counts as
    /// unexpected.
    fn on_packet(&mut self, _net: &mut dyn Net, _from: Addr, _packet: &[u8]) {
        self.forgotten.unexpected_dropped += 1;
        self.settle();
    }

    fn on_transit(&mut self, net: &mut dyn Net, transit: &mut Transit<'_>) -> TransitVerdict {
        let key = FlowKey::of(transit.src, transit.dst);
        if !self.flows.contains_key(&key) {
            let fresh = if self.flows.len() < self.max_flows {
                (self.open)(transit)
            } else {
                None
            };
            let Some(mut flow) = fresh else {
                self.counters.refused += 1;
                return TransitVerdict::Drop;
            };
            flow.start(net);
            self.flows.insert(key, flow);
            self.counters.flows_opened += 1;
            self.counters.peak_flows = self.counters.peak_flows.max(self.flows.len());
        }
        let verdict = self
            .flows
            .get_mut(&key)
            .map_or(TransitVerdict::Drop, |f| f.on_transit(net, transit));
        self.settle();
        verdict
    }

    fn hears_overheard(&self) -> bool {
        true
    }

    fn on_overheard(&mut self, net: &mut dyn Net, src: Addr, dst: Addr, packet: &[u8]) {
        if let Some(f) = self.flows.get_mut(&FlowKey::of(src, dst)) {
            f.on_overheard(net, src, dst, packet);
            self.settle();
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.flows.values().filter_map(|f| f.poll_timeout()).min()
    }

    fn on_timeout(&mut self, net: &mut dyn Net) {
        let now = net.now();
        for f in self.flows.values_mut() {
            if f.poll_timeout().is_some_and(|t| t <= now) {
                f.on_timeout(net);
            }
        }
        self.settle();
    }

    fn stats(&self) -> &TransportStats {
        &self.stats
    }

    fn flow_stats(&self, a: Addr, b: Addr) -> Option<TransportStats> {
        let accounts = self.accounts.as_ref()?;
        let key = FlowKey::of(a, b);
        let live = self.flows.get(&key).map(|f| f.stats());
        let done = accounts.get(&key);
        if live.is_none() && done.is_none() {
            return None;
        }
        let mut total = done.cloned().unwrap_or_default();
        if let Some(live) = live {
            total.add(&live);
        }
        Some(total)
    }

    fn gauge(&self, name: &str) -> Option<f64> {
        match name {
            "relay_flows" => Some(self.flows.len() as f64),
            _ => {
                let values: Vec<f64> = self.flows.values().filter_map(|f| f.gauge(name)).collect();
                (!values.is_empty()).then(|| values.iter().sum())
            }
        }
    }

    /// A relay holding no flow has nothing left to do: the driver may drop it.
    fn is_closed(&self) -> bool {
        self.flows.is_empty()
    }
}
