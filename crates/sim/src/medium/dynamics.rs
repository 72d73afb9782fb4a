//! What changes on the medium over time: node outages (failure and
//! recovery, scheduled partitions), good/bad path-loss states per link, and
//! random-waypoint mobility. Each process draws from its own named stream
//! and depends only on time, so two protocols run with one seed face the
//! same network.

use joulenet_proto::{Duration, NodeId, RadioMode, Time};
use rand::Rng;
use rand_pcg::Pcg64Mcg;

use super::{Mac, Medium, MediumEvent};
use crate::core::Core;
use crate::event::Event;
use crate::rng::Streams;

/// A node is down (radio off, queue lost, routes around it) from `start`
/// for `duration`, repeating every `period` if given.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Outage {
    pub node: NodeId,
    pub start: Duration,
    pub duration: Duration,
    pub period: Option<Duration>,
}

/// Every link alternates between a good and a bad path-loss state with
/// exponentially distributed sojourns; the bad state adds `extra_loss_db`.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Fading {
    pub mean_good: Duration,
    pub mean_bad: Duration,
    pub extra_loss_db: f64,
}

/// Random waypoint: pause (exponential, mean `pause`), pick a point in the
/// field uniformly, walk there at a speed uniform in `speed`, repeat.
#[derive(Clone, Debug, PartialEq)]
pub struct Mobility {
    pub speed: (f64, f64),
    pub pause: Duration,
    pub field: (f64, f64),
    /// How often positions (and so ranges and routes) are brought up to date.
    pub update: Duration,
    /// Nodes that move; empty means all.
    pub nodes: Vec<NodeId>,
}

pub(super) struct Walker {
    node: usize,
    from: (f64, f64),
    to: (f64, f64),
    depart: Time,
    arrive: Time,
    rng: Pcg64Mcg,
}

#[derive(Default)]
pub(crate) struct Dynamics {
    pub(super) walkers: Vec<Walker>,
}

pub(super) fn exp(rng: &mut Pcg64Mcg, mean: Duration) -> Duration {
    let u: f64 = rng.random::<f64>();
    Duration::from_secs_f64(-mean.as_secs_f64() * (1.0 - u).ln())
}

impl Walker {
    fn position(&mut self, t: Time, m: &Mobility) -> (f64, f64) {
        while t >= self.arrive {
            self.from = self.to;
            self.depart = self.arrive + exp(&mut self.rng, m.pause);
            self.to = (
                self.rng.random::<f64>() * m.field.0,
                self.rng.random::<f64>() * m.field.1,
            );
            let speed = if m.speed.1 > m.speed.0 {
                self.rng.random_range(m.speed.0..m.speed.1)
            } else {
                m.speed.0
            };
            let d = ((self.to.0 - self.from.0).powi(2) + (self.to.1 - self.from.1).powi(2)).sqrt();
            self.arrive =
                self.depart + Duration::from_secs_f64(d / speed.max(1e-9)).max(Duration(1));
        }
        if t <= self.depart {
            return self.from;
        }
        let f = (t - self.depart).as_secs_f64() / (self.arrive - self.depart).as_secs_f64();
        (
            self.from.0 + f * (self.to.0 - self.from.0),
            self.from.1 + f * (self.to.1 - self.from.1),
        )
    }
}

impl Medium {
    /// Schedule the first events of the dynamic processes.
    pub(crate) fn start_dynamics(&mut self, core: &mut Core, streams: &Streams) {
        {
            let (mac, mut cx) = self.split(core);
            mac.start(&mut cx, streams);
        }
        for (i, o) in self.geo.spec.outages.iter().enumerate() {
            core.queue.push(
                Time::ZERO + o.start,
                Event::Medium(MediumEvent::NodeDown { outage: i as u32 }),
            );
        }
        match self.router.mode {
            super::Routing::LinkState {
                interval,
                over_air: false,
                ..
            } => core.queue.push(
                Time::ZERO + interval,
                Event::Medium(MediumEvent::RouteUpdate),
            ),
            super::Routing::LinkState {
                interval,
                min_samples,
                over_air: true,
            } => {
                // Converged at time zero; each node's first advertisement
                // at a random offset within the first interval.
                let n = self.nodes();
                let links = (0..n)
                    .map(|a| {
                        (0..n)
                            .filter(|&b| {
                                b != a && self.geo.per_of(a, b) < 1.0 && self.geo.per_of(b, a) < 1.0
                            })
                            .map(|b| (b as NodeId, self.etx_toward(a, b, min_samples)))
                            .collect()
                    })
                    .collect();
                self.router.ls = Some(super::link_state::LinkStateViews::new(interval, links));
                self.decoded.track_heard = true;
                for node in 0..n {
                    let mut rng = streams.stream(&format!("medium/{node}/advertise"));
                    let offset = Duration(rng.random_range(0..interval.0.max(1)));
                    core.queue.push(
                        Time::ZERO + offset,
                        Event::Medium(MediumEvent::Advertise { node: node as u32 }),
                    );
                }
            }
            _ => {}
        }
        if let Some(m) = self.geo.spec.mobility.clone() {
            let movers: Vec<usize> = if m.nodes.is_empty() {
                (0..self.nodes()).collect()
            } else {
                m.nodes.iter().map(|&n| n as usize).collect()
            };
            for node in movers {
                let p = self.geo.spec.positions[node];
                let mut rng = streams.stream(&format!("mobility/{node}"));
                let depart = Time::ZERO + exp(&mut rng, m.pause);
                self.dyn_.walkers.push(Walker {
                    node,
                    from: p,
                    to: p,
                    depart,
                    arrive: depart,
                    rng,
                });
            }
            core.queue
                .push(Time::ZERO + m.update, Event::Medium(MediumEvent::Move));
        }
    }

    pub(super) fn outage_event(&mut self, core: &mut Core, outage: u32, down: bool) {
        let o = self.geo.spec.outages[outage as usize];
        let node = o.node as usize;
        if down {
            self.down_count[node] += 1;
            core.queue.push(
                core.now + o.duration,
                Event::Medium(MediumEvent::NodeUp { outage }),
            );
            if self.down_count[node] == 1 {
                core.set_radio_mode(o.node, RadioMode::Off);
                self.set_up(core, node, false);
            }
        } else {
            self.down_count[node] = self.down_count[node].saturating_sub(1);
            if let Some(p) = o.period {
                let next = (core.now - o.duration) + p;
                core.queue.push(
                    next.max(core.now),
                    Event::Medium(MediumEvent::NodeDown { outage }),
                );
            }
            if self.down_count[node] == 0 {
                core.set_radio_mode(o.node, RadioMode::Awake);
                self.set_up(core, node, true);
            }
        }
    }

    pub(super) fn move_event(&mut self, core: &mut Core) {
        let Some(m) = self.geo.spec.mobility.clone() else {
            return;
        };
        let now = core.now;
        let mut walkers = std::mem::take(&mut self.dyn_.walkers);
        for w in &mut walkers {
            self.geo.spec.positions[w.node] = w.position(now, &m);
        }
        self.dyn_.walkers = walkers;
        self.rebuild_geometry();
        core.queue
            .push(now + m.update, Event::Medium(MediumEvent::Move));
    }
}
