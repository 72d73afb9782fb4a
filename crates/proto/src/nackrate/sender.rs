//! The nackrate sender: paced at the delivery model's rate ([`Model`]),
//! capped by its in-flight bound, repairing exactly the ranges the
//! receiver reports missing, with a probe timeout for a silent tail.
//!
//! Every transmission has a new packet number. A transmission is delivered
//! when an ACK shows its data arrived, and lost when the receiver reports
//! the data missing after `reorder_threshold` later packet numbers arrived;
//! only then is the data queued again. Neither event changes the rate.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use joulenet_wire::nackrate::{AckRepr, DataRepr, Repr, DATA_HEADER_LEN};

use super::config::NackrateConfig;
use super::late_wake::LateWakes;
use super::model::{Model, RateSample, CYCLE};
use super::{timers, unwrap32, PROTOCOL, TX};
use crate::net::{Addr, Agent, AppRead, Net, TransportEvent};
use crate::stats::TransportStats;
use crate::time::{Duration, Time};
use crate::timer::TimerTable;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum NackrateState {
    Sending,
    /// The receiver reported the whole stream.
    Done,
    Aborted,
}

struct Segment {
    data: Vec<u8>,
    fin: bool,
    /// Packet number of its newest transmission.
    last_packet: u64,
}

/// A transmission not yet known delivered or lost.
struct InFlight {
    offset: u64,
    bytes: u64,
    at: Time,
    /// The pacer's clock when it left ([`NackrateSender::paced`]).
    paced: Duration,
}

/// What one ACK said about the receiver's counters, for rate samples.
#[derive(Copy, Clone)]
struct Snapshot {
    receiver_us: u64,
    bytes: u64,
    packets: u64,
    largest: u64,
    /// When the sender sent the largest packet, and the pacer's clock
    /// then, if known.
    sent_at: Option<(Time, Duration)>,
}

/// Transmissions a rate sample spans at least, so that the share lost in
/// it says something (at 40% loss, 16 give a standard error of 0.12).
const MIN_SAMPLE_PACKETS: u64 = 16;

/// A sample whose transmissions left in less than this share of the time
/// the pacer meant them to take was sent in a catch-up burst (after a late
/// wake): what it measures is how fast the path passes a burst, not its
/// rate.
const MIN_PACED_SHARE: f64 = 0.75;

/// How long a late wake is remembered (`LateWakes`: one to two of these).
const LATE_WAKE_WINDOW: Duration = Duration::from_secs(5);

pub struct NackrateSender {
    cfg: NackrateConfig,
    peer: Addr,
    conn_id: u32,
    state: NackrateState,
    model: Model,
    /// Unacknowledged segments by offset.
    segs: BTreeMap<u64, Segment>,
    /// Offsets to send again, lowest first.
    repair: BTreeSet<u64>,
    flight: BTreeMap<u64, InFlight>,
    inflight: u64,
    next_packet: u64,
    snd_nxt: u64,
    app_finished: bool,
    /// The pacer's clock: the sum of the gaps it set between transmissions
    /// (how long they were meant to take, at the pacing rate of the time).
    paced: Duration,
    /// The next paced transmission may leave at this time.
    next_send: Time,
    round_end: u64,
    /// Start-up's next full-pipe check waits for this packet's ACK: a
    /// round trip and a rate sample's transmissions on.
    pipe_check_end: u64,
    largest_acked: Option<u64>,
    last_ack_at: Option<Time>,
    snapshots: VecDeque<Snapshot>,
    srtt: Option<Duration>,
    rttvar: Duration,
    latest_rtt: Duration,
    probes: u32,
    timers: TimerTable,
    stats: TransportStats,
    buf: Vec<u8>,
    /// The host's late wakes, and the allowance made for them now.
    late: LateWakes,
    late_allowance: Duration,
    diag: Diagnostics,
}

/// Where the sender's time went, for finding what holds it below its rate
/// on real hosts (the runtime reports these as gauges; the simulator's
/// timers are never late, so there they only measure the in-flight cap).
#[derive(Clone, Debug, Default)]
struct Diagnostics {
    /// Since when the in-flight cap has held back a sender with something
    /// to send.
    capped_since: Option<Time>,
    /// Total time held back by the in-flight cap.
    capped: Duration,
    /// The pacer was due when this send round began (a pacing wake, on
    /// time or late): it may make up what it missed.
    pace_wake: bool,
    /// Total lateness of the pacing timer's wakes, and how many there were.
    pace_late: Duration,
    pace_wakes: u64,
    /// Sending time given up because a wake came later than the catch-up
    /// allowance.
    pace_lost: Duration,
    /// Pacing wakes more than 10 ms late.
    pace_late_10ms: u64,
}

impl NackrateSender {
    pub fn new(cfg: NackrateConfig, peer: Addr) -> NackrateSender {
        let packet = cfg.mss as u64 + DATA_HEADER_LEN as u64;
        let late = LateWakes::new(LATE_WAKE_WINDOW, cfg.max_late_wake);
        NackrateSender {
            model: Model::new(&cfg, packet),
            buf: vec![0; cfg.mss as usize],
            cfg,
            peer,
            conn_id: 0,
            state: NackrateState::Sending,
            segs: BTreeMap::new(),
            repair: BTreeSet::new(),
            flight: BTreeMap::new(),
            inflight: 0,
            next_packet: 0,
            snd_nxt: 0,
            app_finished: false,
            paced: Duration::ZERO,
            next_send: Time::ZERO,
            round_end: 0,
            pipe_check_end: 0,
            largest_acked: None,
            last_ack_at: None,
            snapshots: VecDeque::new(),
            srtt: None,
            rttvar: Duration::ZERO,
            latest_rtt: Duration::ZERO,
            probes: 0,
            timers: TimerTable::new(),
            stats: TransportStats::default(),
            late,
            late_allowance: Duration::ZERO,
            diag: Diagnostics::default(),
        }
    }

    pub fn state(&self) -> NackrateState {
        self.state
    }
    pub fn model(&self) -> &Model {
        &self.model
    }
    pub fn inflight(&self) -> u64 {
        self.inflight
    }
    /// The allowance made now for the host's late wakes (`late_wake`).
    pub fn late_allowance(&self) -> Duration {
        self.late_allowance
    }

    /// Sends one transmission of the segment at `offset`.
    fn transmit(&mut self, net: &mut dyn Net, offset: u64, repair: bool) {
        let now = net.now();
        let pn = self.next_packet;
        self.next_packet += 1;
        let seg = self.segs.get_mut(&offset).expect("segment held");
        seg.last_packet = pn;
        let d = DataRepr {
            fin: seg.fin,
            retransmission: repair,
            conn_id: self.conn_id,
            packet_number: pn as u32,
            offset,
        };
        let mut p = net.packet_buffer();
        if d.emit(&seg.data, &mut p).is_err() {
            return;
        }
        let bytes = p.len() as u64;
        if repair {
            self.stats.retransmitted_packets += 1;
            self.stats.retransmitted_bytes += bytes;
        } else {
            self.stats.data_packets += 1;
            self.stats.data_bytes += bytes;
            self.stats.payload_bytes += seg.data.len() as u64;
        }
        net.send(self.peer, p, TX);
        self.flight.insert(
            pn,
            InFlight {
                offset,
                bytes,
                at: now,
                paced: self.paced,
            },
        );
        self.inflight += bytes;
        // Pacing, a token bucket: the next one may leave when this one
        // has, at the rate. A sender held back (by the cap, the
        // application) may catch up by at most two packets; a pacer that
        // was due and woke late, by the host's late-wake allowance (at
        // least this wake's lateness, at most `max_late_wake`), so that
        // what it missed goes now and queues at the bottleneck.
        let gap = Duration::from_secs_f64(bytes as f64 / self.model.pacing_rate());
        self.paced += gap;
        let catch_up = if self.diag.pace_wake {
            self.late_allowance.max(Duration(2 * gap.0))
        } else {
            Duration(2 * gap.0)
        };
        let earliest = Time(now.0.saturating_sub(catch_up.0));
        if self.diag.pace_wake && earliest > self.next_send {
            self.diag.pace_lost += earliest.saturating_since(self.next_send);
        }
        let from = self.next_send.max(earliest);
        self.next_send = from + gap;
        self.arm_pto(now);
    }

    /// The next segment to send: a repair first, else new data from the
    /// application (None: nothing to send now).
    fn next_segment(&mut self, net: &mut dyn Net) -> Option<(u64, bool)> {
        while let Some(off) = self.repair.pop_first() {
            if self.segs.contains_key(&off) {
                return Some((off, true));
            }
        }
        if self.app_finished {
            return None;
        }
        let off = self.snd_nxt;
        let (data, fin) = match net.app_read(&mut self.buf) {
            AppRead::Data(n) => (self.buf[..n].to_vec(), false),
            AppRead::Pending => return None,
            AppRead::Finished => {
                self.app_finished = true;
                (Vec::new(), true)
            }
        };
        self.snd_nxt += data.len() as u64;
        self.segs.insert(
            off,
            Segment {
                data,
                fin,
                last_packet: 0,
            },
        );
        Some((off, false))
    }

    /// Send what pacing and the in-flight cap allow now; arm the pacing
    /// timer for the rest.
    fn pump(&mut self, net: &mut dyn Net) {
        let due = self.timers.get(timers::PACE);
        self.pump_after(net, due);
    }

    /// `pump`, with the pacing timer's deadline before this round (the
    /// timer's own expiry takes it off the table). A pacer that was due
    /// is a pacing wake whichever event ran first: after a stall a host
    /// reads the ACKs that waited before it fires its timers.
    fn pump_after(&mut self, net: &mut dyn Net, pace_due: Option<Time>) {
        if self.state != NackrateState::Sending {
            return;
        }
        let now = net.now();
        self.timers.cancel(timers::PACE);
        if let Some(due) = pace_due.filter(|&d| d <= now) {
            self.on_pace_wake(now, now.saturating_since(due));
        }
        if let Some(t) = self.diag.capped_since.take() {
            self.diag.capped += now.saturating_since(t);
        }
        self.send_allowed(net, now);
        // A wake that sent nothing (no data yet, the cap) must not lend its
        // catch-up to a later, unrelated send.
        self.diag.pace_wake = false;
    }

    /// The pacer woke `late` after it was due: measured, and allowed for.
    fn on_pace_wake(&mut self, now: Time, late: Duration) {
        self.diag.pace_late += late;
        self.diag.pace_wakes += 1;
        if late > Duration::from_millis(10) {
            self.diag.pace_late_10ms += 1;
        }
        self.diag.pace_wake = true;
        self.late.record(now, late);
        self.refresh_late_allowance(now);
    }

    /// The late-wake allowance now (it lapses with time), for the pacer
    /// and the model's in-flight cap. (Not for the probe timeout: the
    /// round trips it is made of already vary with the late wakes.)
    fn refresh_late_allowance(&mut self, now: Time) {
        let a = self.late.allowance(now);
        if a != self.late_allowance {
            self.late_allowance = a;
            self.model.set_late_wake(a);
        }
    }

    fn send_allowed(&mut self, net: &mut dyn Net, now: Time) {
        loop {
            if self.inflight >= self.model.cwnd() {
                if self.has_work() {
                    self.diag.capped_since = Some(now);
                }
                return;
            }
            if now < self.next_send {
                if self.has_work() {
                    self.timers.set(timers::PACE, self.next_send);
                }
                return;
            }
            let Some((off, repair)) = self.next_segment(net) else {
                return;
            };
            self.transmit(net, off, repair);
        }
    }

    fn has_work(&self) -> bool {
        !self.repair.is_empty() || !self.app_finished
    }

    /// The probe timeout before back-off.
    fn pto_base(&self) -> Duration {
        self.pto_with(0)
    }

    fn pto(&self) -> Duration {
        self.pto_with(self.probes)
    }

    fn pto_with(&self, probes: u32) -> Duration {
        let base = match self.srtt {
            Some(s) => s + Duration(4 * self.rttvar.0).max(Duration::from_millis(1)),
            None => {
                Duration::from_secs_f64(
                    (self.cfg.initial_window as u64 * (self.cfg.mss as u64 + 20)) as f64
                        / self.cfg.initial_rate as f64,
                ) + Duration::from_millis(100)
            }
        };
        // Backed off at most 4×: on a path that loses packets at random a
        // run of lost probes is chance, not congestion, and a longer wait
        // is only a stall; a dead path still ends after `max_probes`.
        (base + self.cfg.ack_delay)
            .saturating_mul(1 << probes.min(2))
            .max(self.cfg.min_pto)
            .min(self.cfg.max_pto)
    }

    fn arm_pto(&mut self, now: Time) {
        if self.segs.is_empty() {
            self.timers.cancel(timers::PTO);
        } else {
            self.timers.set(timers::PTO, now + self.pto());
        }
    }

    /// No ACK for a probe timeout: whatever was sent a timeout ago has
    /// arrived or is lost, and at heavy random loss a run of lost packets
    /// or ACKs is chance. So the pipe is taken as empty and what the
    /// receiver has not confirmed is queued for repair, to go out at the
    /// unchanged rate within the in-flight cap; the first ACK that gets
    /// through brings the receiver's whole state and ends the guessing.
    fn on_pto(&mut self, net: &mut dyn Net) {
        self.stats.timeouts += 1;
        self.probes += 1;
        if self.probes > self.cfg.max_probes {
            self.state = NackrateState::Aborted;
            self.timers.clear();
            net.event(TransportEvent::Aborted);
            return;
        }
        for (pn, f) in std::mem::take(&mut self.flight) {
            if self
                .segs
                .get(&f.offset)
                .is_some_and(|s| s.last_packet == pn)
            {
                self.repair.insert(f.offset);
            }
        }
        self.inflight = 0;
        if self.repair.is_empty() {
            if let Some(&off) = self.segs.keys().next() {
                self.repair.insert(off);
            }
        }
        self.next_send = self.next_send.min(net.now());
        self.pump(net);
    }

    fn rtt_sample(&mut self, now: Time, largest: u64, ack_delay: Duration) {
        let Some(f) = self.flight.get(&largest) else {
            return;
        };
        let raw = now.saturating_since(f.at);
        let floor = self.model.min_rtt().unwrap_or(Duration::ZERO);
        // RFC 9002 §5.3: take the receiver's delay out unless that would
        // go below the smallest round trip seen.
        let rtt = if raw.saturating_sub(ack_delay) >= floor {
            raw.saturating_sub(ack_delay)
        } else {
            raw
        };
        self.latest_rtt = rtt;
        self.model.on_rtt(now, rtt);
        match self.srtt {
            None => {
                self.srtt = Some(rtt);
                self.rttvar = Duration(rtt.0 / 2);
            }
            Some(s) => {
                let err = if s > rtt { s - rtt } else { rtt - s };
                self.rttvar = Duration(3 * (self.rttvar.0 / 4) + err.0 / 4);
                self.srtt = Some(Duration(7 * (s.0 / 8) + rtt.0 / 8));
            }
        }
        self.stats.rtt.record(rtt);
        self.stats.rtt.smoothed = self.srtt;
        self.model.set_stall_after(self.pto_base());
    }

    /// The arrival rate over about a round trip of the receiver's clock.
    fn rate_sample(&mut self, a: &AckRepr, largest: u64) -> Option<RateSample> {
        let near = self.snapshots.back().copied();
        let unwrap = |prev: u64, v: u32| prev + v.wrapping_sub(prev as u32) as u64;
        let sent_at = self.flight.get(&largest).map(|f| (f.at, f.paced));
        let now = match near {
            None => Snapshot {
                receiver_us: a.receiver_time_us as u64,
                bytes: a.received_bytes as u64,
                packets: a.received_packets as u64,
                largest,
                sent_at,
            },
            Some(p) => Snapshot {
                receiver_us: unwrap(p.receiver_us, a.receiver_time_us),
                bytes: unwrap(p.bytes, a.received_bytes),
                packets: unwrap(p.packets, a.received_packets),
                largest,
                sent_at,
            },
        };
        if near.is_some_and(|p| now.receiver_us <= p.receiver_us || now.packets < p.packets) {
            return None; // an older ACK overtaken by a newer one
        }
        self.snapshots.push_back(now);
        let span_us = self.model.min_rtt().map_or(0, |d| d.as_nanos() / 1000);
        // The newest earlier snapshot at least a round trip and
        // MIN_SAMPLE_PACKETS transmissions back; older ones are not needed
        // again.
        let base = self.snapshots.iter().rposition(|s| {
            now.receiver_us - s.receiver_us >= span_us
                && now.largest.saturating_sub(s.largest) >= MIN_SAMPLE_PACKETS
        })?;
        self.snapshots.drain(..base);
        let from = self.snapshots[0];
        let packets = now.packets - from.packets;
        let sent = now.largest - from.largest;
        if packets < 2 {
            return None;
        }
        // Over the longer of the receiver's interval and the sender's
        // (Cheng et al., delivery rate estimation, as BBR does): a receiver
        // that reads a batch of datagrams at once — its process ran late,
        // they waited in the socket — stamps them microseconds apart, and
        // over the receiver's clock alone 16 of them measured gigabits per
        // second on a 10 Mbit/s link; they cannot have arrived faster than
        // they were sent.
        let received = (now.receiver_us - from.receiver_us) as f64 / 1e6;
        // (A send time is unknown only for a packet a probe timeout gave
        // up on: no sample across it.)
        let ((sent_now, paced_now), (sent_from, paced_from)) = (now.sent_at?, from.sent_at?);
        let sending = sent_now.saturating_since(sent_from).as_secs_f64();
        // Nor from a catch-up burst: a receiver that read late and a
        // sender that caught up after its own stall leave both clocks
        // short, and such samples read 7.1 Gbit/s on the 10 Mbit/s link
        // (issue 18: the sender then read 940 MB in 4 s).
        let meant = paced_now.saturating_sub(paced_from).as_secs_f64();
        if sending < MIN_PACED_SHARE * meant {
            return None;
        }
        let secs = received.max(sending);
        let bytes = (now.bytes - from.bytes) as f64;
        // The interval ends on an arrival (the ACK's largest packet), which
        // is therefore no sample of the loss: leave it out of the share.
        let loss = 1.0 - (packets - 1) as f64 / (sent - 1) as f64;
        Some(RateSample {
            arrival_rate: bytes / secs,
            transmission_rate: sent as f64 * (bytes / packets as f64) / secs,
            loss: loss.clamp(0.0, 1.0),
            transmissions: sent,
        })
    }

    /// Apply the receiver's state: drop what it has, queue again what it
    /// reports missing behind later arrivals.
    fn apply(&mut self, a: &AckRepr, largest: u64) {
        let top = a.cumulative + a.span as u64;
        let have = |off: u64, len: u64| {
            off + len <= a.cumulative
                || off + len <= top
                    && !a
                        .missing
                        .iter()
                        .any(|&(s, e)| s < off + len.max(1) && off < e)
        };
        // Cumulatively acknowledged segments go.
        while let Some(e) = self.segs.first_entry() {
            let end = *e.key() + e.get().data.len() as u64;
            let done = end < a.cumulative || end == a.cumulative && (!e.get().fin || a.fin);
            if !done {
                break;
            }
            let off = *e.key();
            e.remove();
            self.repair.remove(&off);
        }
        // A cut range list (as many ranges as ours allow) says nothing above
        // its span; a whole one says everything above it is missing too.
        let whole = a.missing.len() < self.cfg.max_ranges;
        let decided: Vec<u64> = self.flight.range(..=largest).map(|(&pn, _)| pn).collect();
        for pn in decided {
            let f = &self.flight[&pn];
            let seg = self.segs.get(&f.offset);
            let arrived = match seg {
                None => true,
                Some(s) => !s.fin && have(f.offset, s.data.len() as u64),
            };
            let lost = !arrived && pn + self.cfg.reorder_threshold as u64 <= largest;
            let reported =
                whole || seg.is_none_or(|s| f.offset + (s.data.len() as u64).max(1) <= top);
            if arrived || lost && reported {
                let f = self.flight.remove(&pn).expect("present");
                self.inflight -= f.bytes;
                if lost && seg.is_some_and(|s| s.last_packet == pn) {
                    self.repair.insert(f.offset);
                }
            }
        }
        // Segments the receiver has, held here only for a hole below them.
        let acked: Vec<u64> = self
            .segs
            .range(a.cumulative..top)
            .filter(|(&o, s)| !s.fin && have(o, s.data.len() as u64))
            .map(|(&o, _)| o)
            .collect();
        for o in acked {
            self.segs.remove(&o);
            self.repair.remove(&o);
        }
    }

    fn on_ack(&mut self, net: &mut dyn Net, a: AckRepr) {
        let now = net.now();
        let largest = unwrap32(self.next_packet.saturating_sub(1), a.largest_packet);
        if largest >= self.next_packet || a.cumulative > self.snd_nxt + 1 {
            self.stats.unexpected_dropped += 1;
            return;
        }
        self.refresh_late_allowance(now);
        if let Some(t) = self.last_ack_at {
            self.model.on_ack_gap(now, now.saturating_since(t));
        }
        self.last_ack_at = Some(now);
        let fresh = self.largest_acked.is_none_or(|l| largest > l);
        if fresh {
            self.rtt_sample(now, largest, Duration::from_micros(a.ack_delay_us as u64));
            self.largest_acked = Some(largest);
            if let Some(s) = self.rate_sample(&a, largest) {
                self.model.on_sample(s, self.inflight, self.latest_rtt);
            }
            if largest >= self.round_end {
                self.round_end = self.next_packet;
                self.model.on_round();
            }
            if largest >= self.pipe_check_end {
                self.pipe_check_end = self.next_packet.max(largest + MIN_SAMPLE_PACKETS);
                self.model.check_full_pipe();
            }
        }
        self.apply(&a, largest);
        self.probes = 0;
        if a.fin && self.app_finished && self.segs.is_empty() {
            self.state = NackrateState::Done;
            self.timers.clear();
            net.event(TransportEvent::Closed);
            return;
        }
        let start = (net.rng().next_u32() as usize) % (CYCLE.len() - 1);
        // Never start the cycle in its draining phase (BBR's rule).
        let start = if start >= 1 { start + 1 } else { start };
        self.model.advance(now, self.inflight, start);
        self.arm_pto(now);
        self.pump(net);
    }
}

impl Agent for NackrateSender {
    fn protocol(&self) -> &'static str {
        PROTOCOL
    }

    fn start(&mut self, net: &mut dyn Net) {
        if self.next_packet == 0 && self.state == NackrateState::Sending {
            self.conn_id = net.rng().next_u32();
            net.event(TransportEvent::Established);
            self.next_send = net.now();
            self.pump(net);
        }
    }

    fn on_packet(&mut self, net: &mut dyn Net, from: Addr, packet: &[u8]) {
        let Some((_, r)) = super::accept(&mut self.stats, packet) else {
            return;
        };
        match r {
            Repr::Ack(a) if from == self.peer && a.conn_id == self.conn_id => {
                if self.state == NackrateState::Sending {
                    self.on_ack(net, a);
                }
            }
            _ => self.stats.unexpected_dropped += 1,
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.timers.next()
    }

    fn on_timeout(&mut self, net: &mut dyn Net) {
        let pace_due = self.timers.get(timers::PACE);
        while let Some(t) = self.timers.pop_expired(net.now()) {
            match t {
                timers::PACE => self.pump_after(net, pace_due),
                timers::PTO => self.on_pto(net),
                _ => {}
            }
        }
    }

    fn on_app_ready(&mut self, net: &mut dyn Net) {
        self.pump(net);
    }

    fn stats(&self) -> &TransportStats {
        &self.stats
    }

    fn gauge(&self, name: &str) -> Option<f64> {
        match name {
            "cwnd" => Some(self.model.cwnd() as f64),
            "flight" => Some(self.inflight as f64),
            "pacing_rate_bps" => Some(self.model.pacing_rate() * 8.0),
            "bw_bps" => self.model.bw().map(|b| b * 8.0),
            "random_loss" => Some(self.model.random_loss),
            "srtt_ms" => self.srtt.map(|s| s.as_millis_f64()),
            "min_rtt_ms" => self.model.min_rtt().map(|s| s.as_millis_f64()),
            "capped_ms" => Some(self.diag.capped.as_millis_f64()),
            "pace_late_ms" => Some(self.diag.pace_late.as_millis_f64()),
            "pace_wakes" => Some(self.diag.pace_wakes as f64),
            "pace_lost_ms" => Some(self.diag.pace_lost.as_millis_f64()),
            "pace_late_10ms" => Some(self.diag.pace_late_10ms as f64),
            "late_wake_ms" => Some(self.late_allowance.as_millis_f64()),
            "bound_cuts" => Some(self.model.bound_cuts as f64),
            "inflight_hi" => self.model.inflight_hi(),
            "ack_gap_ms" => self.model.ack_gap().map(|g| g.as_millis_f64()),
            "timeouts" => Some(self.stats.timeouts as f64),
            "repairs" => Some(self.stats.retransmitted_packets as f64),
            _ => None,
        }
    }

    fn is_closed(&self) -> bool {
        self.state != NackrateState::Sending
    }
}
