//! Building a simulation from a [`Spec`] and running it to the end.

use joulenet_channel::radio::{RadioLedger, RadioProfile};
use joulenet_proto::{Addr, Agent, Duration, NodeId, Time};

use crate::app::{Sink, Source};
use crate::core::{Core, FlowObserver, NodeState};
use crate::ctx::Ctx;
use crate::endpoint::{Endpoint, Side};
use crate::event::{AgentIndex, Event, LinkIndex};
use crate::link::{LinkCounters, Transmitter};
use crate::pcap::Capture;
use crate::result::{collect, RunResult};
use crate::rng::Streams;
use crate::series::Sampler;
use crate::spec::{ReverseLoss, Spec};

/// Progress of a running simulation, for progress bars.
#[derive(Copy, Clone, Debug)]
pub struct Progress {
    pub now: Time,
    pub stop: Option<Time>,
    pub bytes_delivered: u64,
    pub bytes_expected: Option<u64>,
}

/// A simulation built from a spec and a seed, ready to run once.
pub struct Simulation {
    pub(crate) spec: Spec,
    pub(crate) seed: u64,
    pub(crate) core: Core,
    pub(crate) agents: Vec<Box<dyn Agent>>,
    pub(crate) endpoints: Vec<Endpoint>,
    /// Per flow: (client agent, server agent).
    pub(crate) flow_agents: Vec<(AgentIndex, AgentIndex)>,
    /// Protocol configurations whose flows run relays (`crate::relays`).
    pub(crate) relay_classes: Vec<crate::relays::RelayClass>,
    /// Relay agents made so far (names each one's random stream).
    pub(crate) relays_made: u64,
    pub(crate) streams: Streams,
    /// Per flow: further agents the protocol needs (R²CP's other senders).
    pub(crate) flow_extra: Vec<Vec<AgentIndex>>,
    pub(crate) radio_profiles: Vec<RadioProfile>,
    /// Measured agents not yet closed; the run ends when none remain.
    open: usize,
    pub(crate) sampler: Option<Sampler>,
    pub(crate) end: Time,
    pub(crate) stopped_by_limit: bool,
    pub(crate) lifetime: crate::lifetime::Lifetime,
    /// The run's time limit, and whether any flow is measured (the run
    /// ends when every measured one has closed): set by `run`.
    limit: Time,
    measured: bool,
}

/// The longest gap between battery checks when frames cost energy of their
/// own: a depletion is detected at most this late.
pub const FRAME_CHECK: Duration = Duration::from_millis(100);

/// Simulated runs end at the latest here even without a stop time, so a flow
/// that can never finish (a dead link) still ends the run.
pub const DEFAULT_STOP: Duration = Duration::from_secs(24 * 3600);

/// Events handled between two progress reports.
const PROGRESS_EVENTS: u64 = 65_536;

impl Simulation {
    pub fn new(spec: &Spec, seed: u64) -> Simulation {
        let streams = Streams::new(seed);
        let mut nodes: Vec<NodeState> = spec
            .nodes
            .iter()
            .map(|n| NodeState {
                battery: n.battery,
                ..NodeState::default()
            })
            .collect();
        let mut links = Vec::with_capacity(spec.links.len() * 2);
        let mut radios = Vec::new();
        let mut radio_node = Vec::new();
        let mut radio_profiles = Vec::new();
        for (i, l) in spec.links.iter().enumerate() {
            let (ra, rb) = match &l.radio {
                Some(profile) => {
                    let mut add = |node: NodeId| {
                        let id = radios.len() as u32;
                        radios.push(RadioLedger::new(profile.clone(), spec.energy_policy));
                        radio_node.push(node);
                        radio_profiles.push(profile.clone());
                        nodes[node as usize].radios.push(id);
                        Some(id)
                    };
                    (add(l.a), add(l.b))
                }
                None => (None, None),
            };
            let state_seed = streams.seed(&format!("link/{i}/channel"));
            let forward_loss = l.loss.build(
                state_seed,
                streams.seed(&format!("link/{i}/forward/frames")),
            );
            let reverse_loss = match &l.loss_reverse {
                ReverseLoss::SharedChannel => l.loss.build(
                    state_seed,
                    streams.seed(&format!("link/{i}/reverse/frames")),
                ),
                ReverseLoss::Independent(spec) => spec.build(
                    streams.seed(&format!("link/{i}/reverse/channel")),
                    streams.seed(&format!("link/{i}/reverse/frames")),
                ),
            };
            let (fwd, rev) = (2 * i as u32, 2 * i as u32 + 1);
            let jitter = |dir: &str| streams.stream(&format!("link/{i}/{dir}/jitter"));
            let direction =
                |from, to, from_radio, to_radio, reverse, loss, jitter_rng| Transmitter {
                    params: l.params.clone(),
                    from,
                    to,
                    from_radio,
                    to_radio,
                    reverse,
                    loss,
                    queue: Default::default(),
                    free_at: Time::ZERO,
                    in_flight: Default::default(),
                    counters: LinkCounters::default(),
                    wireless: l.radio.is_some(),
                    jitter_rng,
                };
            links.push(direction(
                l.a,
                l.b,
                ra,
                rb,
                rev,
                forward_loss,
                jitter("forward"),
            ));
            links.push(direction(
                l.b,
                l.a,
                rb,
                ra,
                fwd,
                reverse_loss,
                jitter("reverse"),
            ));
            nodes[l.a as usize].links_out.push(fwd);
            nodes[l.b as usize].links_out.push(rev);
        }
        let mut core = Core::new(links, radios, radio_node, nodes);
        if let Some(m) = &spec.medium {
            crate::medium::driver::build(
                m,
                &mut core,
                &mut radio_profiles,
                spec.energy_policy,
                &streams,
            );
        }
        for ledger in &mut core.radios {
            ledger.set_frame_model(spec.frame_model.clone());
        }
        let mut sim = Simulation {
            spec: spec.clone(),
            seed,
            core: Core::new(Vec::new(), Vec::new(), Vec::new(), Vec::new()),
            agents: Vec::new(),
            endpoints: Vec::new(),
            flow_agents: Vec::new(),
            relay_classes: Vec::new(),
            relays_made: 0,
            streams,
            flow_extra: Vec::new(),
            radio_profiles,
            open: 0,
            sampler: None,
            end: Time::ZERO,
            stopped_by_limit: false,
            lifetime: Default::default(),
            limit: Time::NEVER,
            measured: false,
        };
        for (f, flow) in spec.flows.iter().enumerate() {
            let client = Addr::new(flow.from, flow.port);
            let server = Addr::new(flow.to, flow.port);
            let (ca, sa) = flow.protocol.agents(client, server);
            let start = Time::ZERO + flow.start;
            let stop = flow.stop.map(|d| Time::ZERO + d);
            let datagram = flow.protocol.is_datagram();
            let client_source = Source::new(
                &flow.app,
                start,
                stop,
                datagram,
                streams.stream(&format!("app/{f}/client")),
            );
            let ci = sim.add_agent(
                &mut core,
                ca,
                (client, f as u32, Side::Client),
                client_source,
                &streams,
            );
            let si = sim.add_agent(
                &mut core,
                sa,
                (server, f as u32, Side::Server),
                Source::receive_only(),
                &streams,
            );
            if datagram {
                sim.endpoints[si as usize].sink = Sink::messages();
            } else if flow.protocol.delivers_with_gaps() {
                sim.endpoints[si as usize].sink = Sink::datagram();
            }
            let hooks = crate::link_hooks::LinkHooks::from(flow.protocol.services());
            if hooks.eln {
                core.eln.subscribe(server);
            }
            sim.endpoints[si as usize].hooks = hooks;
            if !flow.background {
                sim.open += 2;
            }
            // Relays on the way: every packet the flow's ends send carries
            // the class, so the nodes it crosses meet the protocol's relay.
            if let Some(class) = sim.relay_class_of(f as u32) {
                sim.endpoints[ci as usize].relay_class = Some(class);
                sim.endpoints[si as usize].relay_class = Some(class);
            }
            sim.flow_agents.push((ci, si));
            let mut extra = Vec::new();
            for (k, (addr, agent)) in flow.protocol.extra_agents(client).into_iter().enumerate() {
                // More senders of the same content: they log generation
                // times on the unused server-side log (`Side::Server`).
                let source = Source::new(
                    &flow.app,
                    start,
                    stop,
                    datagram,
                    streams.stream(&format!("app/{f}/extra/{k}")),
                );
                let index = sim.agents.len() as AgentIndex;
                let rng = streams.stream(&format!("agent/{f}/extra/{k}"));
                let mut ep = Endpoint::new(index, addr, f as u32, Side::Server, rng, source);
                // Not measured: never counted among the agents a run waits for.
                ep.done = true;
                sim.endpoints.push(ep);
                core.bind(addr, index, agent.hears_overheard());
                sim.agents.push(agent);
                extra.push(index);
            }
            sim.flow_extra.push(extra);
            // Two pipes to one server through two interfaces: pin each
            // pipe's both directions to its interface (validated when the
            // scenario was read, so a failure here is a bug).
            for (remote, via) in flow.protocol.pinned(client) {
                let local = Addr::new(server.node, flow.port);
                core.pin_path(local, via, remote)
                    .unwrap_or_else(|e| panic!("flow {f}: cannot pin a path: {e}"));
            }
            for ep in sim.endpoints.iter_mut().filter(|e| e.flow == f as u32) {
                ep.access_class = flow.access_class;
            }
            core.flows.push(FlowObserver::default());
            core.queue.push(start, Event::FlowStart(f as u32));
        }
        for (n, node) in spec.nodes.iter().enumerate() {
            if node.battery.is_some() {
                core.queue.push(Time::ZERO, Event::BatteryCheck(n as u32));
            }
        }
        if let Some(stop) = spec.stop {
            core.queue.push(Time::ZERO + stop, Event::Stop);
        }
        if spec.output.pcap {
            core.capture = Some(Capture::new(
                spec.flows
                    .iter()
                    .map(|f| f.protocol.wire_format())
                    .collect(),
            ));
        }
        if !spec.output.series.is_empty() {
            sim.sampler = Some(Sampler::new(
                spec.output.series.clone(),
                spec.output.series_interval,
            ));
            core.queue.push(Time::ZERO, Event::Sample);
        }
        sim.core = core;
        sim.lifetime = crate::lifetime::Lifetime::new(&sim);
        sim
    }

    /// Bind `agent` at `addr` as the `side` end of `flow`.
    fn add_agent(
        &mut self,
        core: &mut Core,
        agent: Box<dyn Agent>,
        (addr, flow, side): (Addr, u32, Side),
        source: Source,
        streams: &Streams,
    ) -> AgentIndex {
        let index = self.agents.len() as AgentIndex;
        let rng = streams.stream(&format!("agent/{flow}/{}", side as u8));
        self.endpoints
            .push(Endpoint::new(index, addr, flow, side, rng, source));
        core.bind(addr, index, agent.hears_overheard());
        self.agents.push(agent);
        index
    }

    /// Run to the end: every measured flow finished, the stop time, or no
    /// events left. `progress` is called now and then.
    /// The neighbour a frame from `src` to `dst` is forwarded to from
    /// `node` (policy routes first, then the route by destination), if any.
    pub fn next_hop(&self, node: NodeId, src: Addr, dst: Addr) -> Option<NodeId> {
        let l = self.core.out_link(node, src, dst)?;
        Some(self.core.links[l as usize].to)
    }

    /// How many policy routes are installed (pinned R²CP paths).
    pub fn policy_routes(&self) -> usize {
        self.core.policy.len()
    }

    pub fn run(mut self, progress: &mut dyn FnMut(Progress)) -> RunResult {
        let limit = Time::ZERO + self.spec.stop.unwrap_or(DEFAULT_STOP);
        let expected: Option<u64> = self
            .spec
            .flows
            .iter()
            .filter(|f| !f.background)
            .map(|f| f.app.total_bytes())
            .sum();
        let measured = self.spec.flows.iter().any(|f| !f.background);
        self.limit = limit;
        self.measured = measured;
        let mut next_progress = PROGRESS_EVENTS;
        while let Some((t, event)) = self.core.queue.pop() {
            if t > limit {
                self.core.now = limit;
                self.stopped_by_limit = true;
                break;
            }
            self.core.now = t;
            if event == Event::Stop {
                self.stopped_by_limit = true;
                break;
            }
            self.handle(event);
            if self.finished() {
                break;
            }
            // Counted in events handled, some of them without the queue
            // (`arrivals`).
            if self.core.queue.popped() >= next_progress {
                next_progress = self.core.queue.popped() + PROGRESS_EVENTS;
                progress(Progress {
                    now: t,
                    stop: self.spec.stop.map(|d| Time::ZERO + d),
                    bytes_delivered: self.endpoints.iter().map(|e| e.sink.delivered).sum(),
                    bytes_expected: expected,
                });
            }
        }
        self.end = self.core.now;
        self.core.advance_radios();
        collect(self)
    }

    fn handle(&mut self, event: Event) {
        match event {
            Event::TransmitDone(l) => self.core.transmit_done(l),
            Event::Arrival(l) => self.arrivals(l),
            Event::Loopback => {
                if let Some(frame) = self.core.loopback.pop_front() {
                    self.receive(frame.dst.node, frame);
                }
            }
            Event::Timer(a) => {
                let now = self.core.now;
                if self.endpoints[a as usize].timer_event(now) {
                    let due = self.agents[a as usize]
                        .poll_timeout()
                        .is_some_and(|t| t <= now);
                    // Not due (postponed): the dispatch only re-arms.
                    self.dispatch(a, |agent, ctx| {
                        if due {
                            agent.on_timeout(ctx)
                        }
                    });
                }
            }
            Event::FlowStart(f) => self.start_flow(f),
            Event::AppWake(a) => self.app_wake(a),
            Event::BatteryCheck(n) => self.battery_check(n),
            Event::Sample => self.sample(),
            Event::Stop => {}
            Event::Medium(ev) => self.medium_event(ev),
            Event::Corrupted => {
                if let Some(frame) = self.core.eln.pop() {
                    if let Some(a) = self.core.agent_at(frame.dst) {
                        self.dispatch(a, |agent, ctx| agent.on_link_loss(ctx, &frame.packet));
                    }
                    self.core.recycle(frame.packet);
                }
            }
        }
    }

    /// The run is over: every measured flow has closed.
    fn finished(&self) -> bool {
        self.open == 0 && self.measured
    }

    /// Frames arriving over `l`, the first now. The next frame in flight
    /// gets its place in the order of events as this one arrives (where it
    /// used to be queued); once this one is handled, if nothing queued
    /// comes before that place, it is handled at once instead of going
    /// through the queue — the same order, times and event count as
    /// popping it, without a push and a pop per frame on a busy link.
    fn arrivals(&mut self, l: LinkIndex) {
        loop {
            let (frame, next) = self.core.arrival(l);
            if let Some(frame) = frame {
                let node = self.core.links[l as usize].to;
                self.receive(node, frame);
            }
            let Some(next) = next else { return };
            // What the run loop checks between events: past the limit or
            // finished, the event stays queued as it would have been.
            if next.time() > self.limit || self.finished() || !self.core.queue.is_next(next) {
                self.core.queue.push_reserved(next, Event::Arrival(l));
                return;
            }
            self.core.now = self.core.queue.take(next);
        }
    }

    pub(crate) fn receive(&mut self, node: NodeId, mut frame: crate::frame::Frame) {
        if frame.dst.node != node {
            if let Some(class) = frame.relay {
                match self.transit(node, class, frame) {
                    crate::relays::Passage::Forward(f) => frame = f,
                    crate::relays::Passage::Ended => return,
                }
            }
            self.core.nodes[node as usize].forwarded += 1;
            self.core.forward(node, frame);
            return;
        }
        match self.core.agent_at(frame.dst) {
            Some(a) => {
                let from = frame.src;
                let prev = (frame.prev != node).then_some(frame.prev);
                self.dispatch_from(a, prev, |agent, ctx| {
                    agent.on_packet(ctx, from, &frame.packet)
                });
                self.core.recycle(frame.packet);
            }
            None => {
                self.core.nodes[node as usize].unroutable += 1;
                self.core.recycle(frame.packet);
            }
        }
    }

    fn start_flow(&mut self, f: u32) {
        let (client, server) = self.flow_agents[f as usize];
        for a in self.flow_extra[f as usize].clone() {
            self.dispatch(a, |agent, ctx| agent.start(ctx));
            self.schedule_app_wake(a);
        }
        self.dispatch(server, |agent, ctx| agent.start(ctx));
        self.dispatch(client, |agent, ctx| agent.start(ctx));
        self.schedule_app_wake(client);
    }

    fn schedule_app_wake(&mut self, a: AgentIndex) {
        if let Some(t) = self.endpoints[a as usize].source.next_wake() {
            self.core
                .queue
                .push(t.max(self.core.now), Event::AppWake(a));
        }
    }

    fn app_wake(&mut self, a: AgentIndex) {
        let now = self.core.now;
        self.endpoints[a as usize].source.wake(now);
        self.dispatch(a, |agent, ctx| agent.on_app_ready(ctx));
        self.schedule_app_wake(a);
    }

    /// Run one agent callback with its context, then settle what it left.
    pub(crate) fn dispatch(&mut self, a: AgentIndex, f: impl FnOnce(&mut dyn Agent, &mut Ctx)) {
        self.dispatch_from(a, None, f)
    }

    /// [`Self::dispatch`] for a packet that came from neighbour `prev`.
    // Every packet delivered goes through here: inlined into each
    // caller, the agent call's closure is no call of its own.
    #[inline]
    pub(crate) fn dispatch_from(
        &mut self,
        a: AgentIndex,
        prev: Option<NodeId>,
        f: impl FnOnce(&mut dyn Agent, &mut Ctx),
    ) {
        let ep = &mut self.endpoints[a as usize];
        if !self.core.nodes[ep.addr.node as usize].alive() {
            return;
        }
        if ep.hooks.channel_state {
            ep.hooks.channel_loss = crate::link_hooks::channel_state(&mut self.core, ep.addr.node);
        }
        let agent = self.agents[a as usize].as_mut();
        let mut ctx = Ctx {
            core: &mut self.core,
            ep,
            prev,
        };
        f(agent, &mut ctx);
        if ctx.ep.app_ready_pending {
            ctx.ep.app_ready_pending = false;
            ctx.prev = None;
            agent.on_app_ready(&mut ctx);
        }
        let now = self.core.now;
        ep.schedule_timer(&mut self.core.queue, agent.poll_timeout(), now);
        if ep.side == Side::Relay {
            return self.forget_if_idle(a);
        }
        if !ep.done && agent.is_closed() {
            ep.done = true;
            if !self.spec.flows[ep.flow as usize].background {
                self.open -= 1;
            }
        }
    }

    fn battery_check(&mut self, n: u32) {
        let node = n as usize;
        let Some(mut battery) = self.core.nodes[node].battery else {
            return;
        };
        if !self.core.nodes[node].alive() {
            return;
        }
        let used = self.core.node_energy(n);
        battery.draw(used, self.core.now.as_secs_f64());
        self.core.nodes[node].battery = Some(battery);
        let max_power: f64 = self.core.nodes[node]
            .radios
            .iter()
            .map(|&r| self.core.radios[r as usize].max_power_w())
            .sum();
        if max_power <= 0.0 {
            return;
        }
        if battery.depleted(max_power) {
            self.core.kill_node(n);
            self.note_death();
            return;
        }
        let mut after = battery.next_check(max_power);
        // Per-frame costs arrive at once, beyond the power bound: look at
        // least this often so that depletion is caught within it.
        if self.spec.frame_model.charges_frames() {
            after = after.min(FRAME_CHECK);
        }
        self.core
            .queue
            .push(self.core.now + after, Event::BatteryCheck(n));
    }

    fn sample(&mut self) {
        let Some(mut sampler) = self.sampler.take() else {
            return;
        };
        sampler.sample(self);
        let next = self.core.now + sampler.interval();
        self.sampler = Some(sampler);
        self.core.queue.push(next, Event::Sample);
    }
}
