//! Time series sampled at a fixed interval: transport gauges per flow
//! (cwnd, srtt, ... of the sending agent; `receiver.<gauge>` of the
//! receiving one), sending rate and goodput per flow, queue length and
//! channel state per link direction; per node, the energy used so far
//! (`energy`) and the energy left in its battery (`residual`).

use joulenet_proto::Duration;
use serde::Serialize;

use crate::simulation::Simulation;

/// One sample, in long format.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SeriesRow {
    pub time_s: f64,
    pub series: String,
    /// "flow0", "link3" ...
    pub entity: String,
    pub value: f64,
}

pub struct Sampler {
    names: Vec<String>,
    interval: Duration,
    last_sent: Vec<u64>,
    last_delivered: Vec<u64>,
    pub rows: Vec<SeriesRow>,
}

impl Sampler {
    pub fn new(names: Vec<String>, interval: Duration) -> Sampler {
        Sampler {
            names,
            interval,
            last_sent: Vec::new(),
            last_delivered: Vec::new(),
            rows: Vec::new(),
        }
    }

    pub fn interval(&self) -> Duration {
        self.interval
    }

    pub fn sample(&mut self, sim: &mut Simulation) {
        let t = sim.core.now.as_secs_f64();
        let flows = sim.flow_agents.len();
        self.last_sent.resize(flows, 0);
        self.last_delivered.resize(flows, 0);
        let dt = self.interval.as_secs_f64();
        for name in &self.names {
            match name.as_str() {
                "queue" | "channel" => {
                    let now = sim.core.now;
                    for (l, link) in sim.core.links.iter_mut().enumerate() {
                        let value = if name == "queue" {
                            link.queue_len() as f64
                        } else {
                            link.loss.state_at(now, now) as f64
                        };
                        self.rows.push(SeriesRow {
                            time_s: t,
                            series: name.clone(),
                            entity: format!("link{l}"),
                            value,
                        });
                    }
                }
                "rate" | "goodput" => {
                    for f in 0..flows {
                        let (c, s) = sim.flow_agents[f];
                        let (current, last) = if name == "rate" {
                            (
                                sim.agents[c as usize].stats().total_bytes_sent(),
                                &mut self.last_sent[f],
                            )
                        } else {
                            (
                                sim.endpoints[s as usize].sink.delivered,
                                &mut self.last_delivered[f],
                            )
                        };
                        let value = (current - *last) as f64 * 8.0 / dt;
                        *last = current;
                        self.rows.push(SeriesRow {
                            time_s: t,
                            series: name.clone(),
                            entity: format!("flow{f}"),
                            value,
                        });
                    }
                }
                "delivered" => {
                    // Bytes delivered so far: the sequence-number
                    // progression the RCP paper's Figure 4c plots.
                    for f in 0..flows {
                        let (_, s) = sim.flow_agents[f];
                        self.rows.push(SeriesRow {
                            time_s: t,
                            series: name.clone(),
                            entity: format!("flow{f}"),
                            value: sim.endpoints[s as usize].sink.delivered as f64,
                        });
                    }
                }
                "residual" | "energy" => {
                    for n in 0..sim.core.nodes.len() {
                        let used = sim.core.node_energy(n as u32);
                        let value = match (name.as_str(), sim.core.nodes[n].battery) {
                            ("energy", _) => used,
                            (_, Some(mut battery)) => {
                                // The battery as of now, without touching
                                // the state its checks keep.
                                battery.draw(used, t);
                                battery.residual_j()
                            }
                            (_, None) => continue,
                        };
                        self.rows.push(SeriesRow {
                            time_s: t,
                            series: name.clone(),
                            entity: format!("node{n}"),
                            value,
                        });
                    }
                }
                gauge => {
                    // `receiver.<gauge>` reads the flow's receiving agent.
                    let (at_server, gauge_name) = match gauge.strip_prefix("receiver.") {
                        Some(g) => (true, g),
                        None => (false, gauge),
                    };
                    for f in 0..flows {
                        let (c, s) = sim.flow_agents[f];
                        let agent = if at_server { s } else { c };
                        if let Some(value) = sim.agents[agent as usize].gauge(gauge_name) {
                            self.rows.push(SeriesRow {
                                time_s: t,
                                series: gauge.to_string(),
                                entity: format!("flow{f}"),
                                value,
                            });
                        }
                    }
                }
            }
        }
    }
}
