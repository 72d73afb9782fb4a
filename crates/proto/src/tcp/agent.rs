//! The connection: handshake, state machine, timers and segment emission.
//! Sending and receiving data live in `sender.rs` and `receiver.rs`.

use joulenet_wire::tcp::{TcpFlags, TcpOptions, TcpPacket, TcpRepr};
use joulenet_wire::SackBlock;

use super::config::{TcpConfig, TcpVariant};
use super::profile::Growth;
use super::prr::Prr;
use super::rack::Rack;
use super::reassembly::Reassembly;
use super::rtt::RttEstimator;
use super::scoreboard::Scoreboard;
use super::send_buffer::SendBuffer;
use super::seq::SeqSpace;
use super::tlp::Tlp;
use crate::cc::{CongestionControl, Cubic, NewReno};
use crate::net::{Addr, Agent, Net, TimerId, TransportEvent, TxOpts};
use crate::stats::TransportStats;
use crate::time::Time;
use crate::timer::TimerTable;

/// RFC 9293 §3.3.2 connection states.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum TcpState {
    Closed,
    Listen,
    SynSent,
    SynReceived,
    Established,
    FinWait1,
    FinWait2,
    Closing,
    TimeWait,
    CloseWait,
    LastAck,
}

impl TcpState {
    /// States in which we may still send data or retransmit it.
    pub(crate) fn sends_data(self) -> bool {
        matches!(
            self,
            TcpState::Established
                | TcpState::CloseWait
                | TcpState::FinWait1
                | TcpState::Closing
                | TcpState::LastAck
        )
    }
    /// States after the handshake, in which the peer may send us data.
    pub(crate) fn synchronized(self) -> bool {
        !matches!(
            self,
            TcpState::Closed | TcpState::Listen | TcpState::SynSent
        )
    }
}

pub(crate) mod timer {
    use crate::net::TimerId;
    /// Retransmission timer, also for SYN and FIN.
    pub const RTO: TimerId = TimerId(0);
    pub const DELAYED_ACK: TimerId = TimerId(1);
    /// Zero-window persist timer.
    pub const PERSIST: TimerId = TimerId(2);
    pub const TIME_WAIT: TimerId = TimerId(3);
    /// The next paced transmission (`pacing.rs`).
    pub const PACE: TimerId = TimerId(4);
    /// RACK-TLP's probe timeout (`tlp.rs`).
    pub const LOSS_PROBE: TimerId = TimerId(5);
    /// RACK's reordering timer (`rack.rs`).
    pub const REORDER: TimerId = TimerId(6);
    /// STP's poll timer (`stp.rs`).
    pub const POLL: TimerId = TimerId(7);
}

/// What the application sending through us has said last.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum AppState {
    Open,
    Pending,
    Finished,
}

/// How a segment is counted in the statistics.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum SendKind {
    First,
    Retransmission,
}

/// One TCP endpoint; it sends what `Net::app_read` yields and delivers what
/// it receives, so both directions may carry data.
pub struct TcpAgent {
    /// Deadlines of the timers in [`timer`].
    pub(crate) timers: TimerTable,
    /// The receive window we last advertised, bytes (for window updates).
    pub(crate) advertised_window: u64,
    pub(crate) cfg: TcpConfig,
    pub(crate) state: TcpState,
    pub(crate) peer: Option<Addr>,
    pub(crate) local_port: u16,
    pub(crate) peer_port: u16,
    pub(crate) stats: TransportStats,
    pub(crate) cc: Box<dyn CongestionControl>,
    pub(crate) rtt: RttEstimator,
    /// Effective MSS: our configured one, lowered to the peer's MSS option.
    pub(crate) mss: u64,
    pub(crate) sack_ok: bool,
    pub(crate) ts_ok: bool,
    /// Window-scale shifts; both 0 unless both sides offered scaling.
    pub(crate) snd_wscale: u8,
    pub(crate) rcv_wscale: u8,
    pub(crate) peer_offered_wscale: bool,

    // Send side (offsets in our sequence space).
    pub(crate) iss: SeqSpace,
    pub(crate) snd_una: u64,
    /// Next new sequence offset to send (highest sent + 1).
    pub(crate) snd_max: u64,
    pub(crate) send_buf: SendBuffer,
    /// Sequence offset of `send_buf`'s first byte.
    pub(crate) buf_seq: u64,
    pub(crate) app: AppState,
    /// Offset of our FIN once sent.
    pub(crate) fin_seq: Option<u64>,
    pub(crate) board: Scoreboard,
    /// Peer's advertised window, bytes (scaled).
    pub(crate) peer_wnd: u64,
    pub(crate) dupacks: u32,
    /// Dupacks that did not open the window, for Limited Transmit.
    pub(crate) lt_dupacks: u32,
    /// Proportional Rate Reduction's state during a SACK recovery, when
    /// the profile uses it (`prr.rs`).
    pub(crate) prr: Option<Prr>,
    /// ns-3's Reno SACKs: segments after the head counted as delivered by
    /// dupacks (`reno_sack.rs`).
    pub(crate) reno_sacked: u64,
    /// RACK-TLP's state, when the profile uses it (`rack.rs`, `tlp.rs`),
    /// and how often each acted: probes sent, segments RACK marked lost.
    pub(crate) rack: Rack,
    pub(crate) tlp: Tlp,
    pub(crate) loss_probes: u64,
    pub(crate) rack_losses: u64,
    /// Recovery point while in fast recovery.
    pub(crate) recovery: Option<u64>,
    /// Partial ACKs seen in this recovery (the impatient timer rule).
    pub(crate) partial_acks: u32,
    /// RFC 6582 `recover`: no new fast retransmit until snd_una reaches it.
    pub(crate) recover: Option<u64>,
    pub(crate) consecutive_rtos: u32,
    /// F-RTO (`frto.rs`): a timeout's verdict is pending; this ACK's
    /// transmission is new data only (step 2.b); the window and ssthresh
    /// before the last reduction; timeouts found spurious and undone.
    pub(crate) frto: bool,
    pub(crate) frto_new_data_only: bool,
    pub(crate) undo_prior: Option<(u64, u64)>,
    pub(crate) spurious_rtos: u64,
    pub(crate) rto_deadline: Option<Time>,
    pub(crate) persist_backoff: u32,
    pub(crate) persist_armed: bool,
    pub(crate) syn_sent_at: Time,
    pub(crate) syn_retransmitted: bool,

    // Receive side (offsets in the peer's sequence space).
    pub(crate) irs: SeqSpace,
    pub(crate) rcv_nxt: u64,
    pub(crate) reasm: Reassembly,
    pub(crate) peer_fin: Option<u64>,
    pub(crate) fin_received: bool,
    /// In-order segments received and not yet acknowledged.
    pub(crate) unacked_segments: u32,
    /// An acknowledgment must go out before this callback returns.
    pub(crate) ack_now: bool,
    /// Quick ACKs left and the last in-order data's arrival (`quickack.rs`).
    pub(crate) quickacks: u32,
    pub(crate) last_in_order_at: Option<Time>,
    /// STP (`stp.rs`), sender: when the next POLL is due, whether the poll
    /// timer forces one on the next segment, and how many were sent.
    pub(crate) stp_next_poll: Time,
    pub(crate) stp_force_poll: bool,
    pub(crate) stp_polls: u64,
    /// STP, sender: retransmissions a report showed lost and resent.
    pub(crate) stp_resent_again: u64,
    /// STP, receiver: the end of the highest data received.
    pub(crate) stp_highest: u64,
    pub(crate) ts_recent: u32,

    // Explicit loss notification (`eln.rs`).
    /// Receiver: segments reported lost on the wireless hop, start → end,
    /// until RCV.NXT passes them.
    pub(crate) eln_lost: std::collections::BTreeMap<u64, u64>,
    pub(crate) eln_reports: u64,
    /// Sender: in an ELN recovery, the window to restore at its end.
    pub(crate) eln_cwnd: Option<u64>,
    pub(crate) eln_recoveries: u64,
    /// Sender: the head segment last fast-retransmitted, with the number
    /// of segments outstanding then, and the duplicate ACKs since.
    pub(crate) head_retransmitted: Option<(u64, u32)>,
    pub(crate) dupacks_since_retransmit: u32,
    /// Pacing (`pacing.rs`): no segment leaves before this.
    pub(crate) next_send: Time,
    /// PFTK's loss indications: fast recoveries, and timeout series (a
    /// run of backed-off timeouts counts once; PFTK's T₀ term holds the
    /// backoff).
    pub(crate) loss_indications: u64,

    pub(crate) established_reported: bool,
    pub(crate) closed_reported: bool,
    pub(crate) aborted: bool,
}

impl TcpAgent {
    /// An active opener that connects to `peer` when started.
    pub fn client(cfg: TcpConfig, peer: Addr) -> TcpAgent {
        let mut a = TcpAgent::new(cfg);
        a.peer = Some(peer);
        a.peer_port = peer.port;
        a
    }

    /// A passive opener that accepts the first SYN it receives.
    pub fn server(cfg: TcpConfig) -> TcpAgent {
        TcpAgent::new(cfg)
    }

    fn new(cfg: TcpConfig) -> TcpAgent {
        let mss = cfg.mss.max(1) as u64;
        TcpAgent {
            cc: make_cc(&cfg, mss),
            rtt: RttEstimator::new(cfg.initial_rto, cfg.min_rto, cfg.max_rto).with_rules(
                cfg.rules.clock_tick,
                cfg.rules.rto_formula,
                cfg.rules.max_backoff_shift,
            ),
            mss,
            send_buf: SendBuffer::new(cfg.send_buffer),
            state: TcpState::Closed,
            peer: None,
            local_port: 0,
            peer_port: 0,
            stats: TransportStats::default(),
            timers: TimerTable::new(),
            advertised_window: 0,
            sack_ok: false,
            ts_ok: false,
            snd_wscale: 0,
            rcv_wscale: 0,
            peer_offered_wscale: false,
            iss: SeqSpace::default(),
            snd_una: 0,
            snd_max: 0,
            buf_seq: 1,
            app: AppState::Open,
            fin_seq: None,
            board: Scoreboard::default(),
            peer_wnd: u16::MAX as u64,
            dupacks: 0,
            lt_dupacks: 0,
            prr: None,
            reno_sacked: 0,
            rack: Rack::default(),
            tlp: Tlp::default(),
            loss_probes: 0,
            rack_losses: 0,
            recovery: None,
            partial_acks: 0,
            recover: None,
            consecutive_rtos: 0,
            frto: false,
            frto_new_data_only: false,
            undo_prior: None,
            spurious_rtos: 0,
            rto_deadline: None,
            persist_backoff: 0,
            persist_armed: false,
            syn_sent_at: Time::ZERO,
            syn_retransmitted: false,
            irs: SeqSpace::default(),
            rcv_nxt: 0,
            reasm: Reassembly::default(),
            peer_fin: None,
            fin_received: false,
            unacked_segments: 0,
            ack_now: false,
            quickacks: 0,
            last_in_order_at: None,
            stp_next_poll: Time::ZERO,
            stp_force_poll: false,
            stp_polls: 0,
            stp_resent_again: 0,
            stp_highest: 0,
            ts_recent: 0,
            eln_lost: Default::default(),
            eln_reports: 0,
            eln_cwnd: None,
            eln_recoveries: 0,
            head_retransmitted: None,
            dupacks_since_retransmit: 0,
            next_send: Time::ZERO,
            loss_indications: 0,
            established_reported: false,
            closed_reported: false,
            aborted: false,
            cfg,
        }
    }

    pub fn state(&self) -> TcpState {
        self.state
    }

    pub fn variant(&self) -> TcpVariant {
        self.cfg.variant
    }

    /// Congestion window, bytes.
    pub fn cwnd(&self) -> u64 {
        self.cc.window()
    }

    pub fn ssthresh(&self) -> u64 {
        self.cc.ssthresh()
    }

    /// Current retransmission timeout, including backoff.
    pub fn rto(&self) -> crate::time::Duration {
        self.rtt.rto()
    }

    /// Bytes sent and not yet cumulatively acknowledged.
    pub fn flight(&self) -> u64 {
        self.snd_max - self.snd_una
    }

    /// Whether fast recovery is in progress.
    pub fn in_recovery(&self) -> bool {
        self.recovery.is_some()
    }

    pub(crate) fn rtt_sample(&mut self, rtt: crate::time::Duration) {
        self.rtt.sample(rtt);
        self.stats.rtt.record(rtt);
        self.stats.rtt.smoothed = self.rtt.srtt();
    }

    // ---- closing ----

    pub(crate) fn abort(&mut self, net: &mut dyn Net) {
        self.state = TcpState::Closed;
        self.aborted = true;
        self.cancel_all_timers();
        net.event(TransportEvent::Aborted);
    }

    pub(crate) fn enter_time_wait(&mut self, net: &mut dyn Net) {
        self.state = TcpState::TimeWait;
        self.disarm_rto();
        self.timers.cancel(timer::PERSIST);
        self.timers
            .set(timer::TIME_WAIT, net.now() + self.cfg.msl.saturating_mul(2));
        self.report_closed(net);
    }

    pub(crate) fn enter_closed(&mut self, net: &mut dyn Net) {
        self.state = TcpState::Closed;
        self.cancel_all_timers();
        self.report_closed(net);
    }

    fn report_closed(&mut self, net: &mut dyn Net) {
        if !self.closed_reported {
            self.closed_reported = true;
            net.event(TransportEvent::Closed);
        }
    }

    fn cancel_all_timers(&mut self) {
        self.rto_deadline = None;
        for t in [
            timer::RTO,
            timer::DELAYED_ACK,
            timer::PERSIST,
            timer::TIME_WAIT,
            timer::PACE,
            timer::LOSS_PROBE,
            timer::REORDER,
        ] {
            self.timers.cancel(t);
        }
    }

    /// After our connection ended, the former peer may still be resending
    /// (its FIN, when our last ACK was lost and TIME_WAIT has passed): a
    /// reset tells it we are gone (RFC 9293 §3.10.7.1).
    fn answer_with_reset(&mut self, net: &mut dyn Net, from: Addr, seg: &TcpRepr<'_>) {
        let ours = self.peer == Some(from) && seg.src_port == self.peer_port;
        if seg.flags.rst || !ours || !self.closed_reported {
            return;
        }
        let flags = TcpFlags {
            rst: true,
            ..TcpFlags::default()
        };
        let options = TcpOptions::default();
        match seg.ack {
            Some(ack) => {
                let seq = self.iss.unwrap(ack, self.snd_max);
                self.emit(net, seq, flags, None, options, None, SendKind::First);
            }
            None => {
                let ack = self.irs.unwrap(seg.seq, self.rcv_nxt) + seg.segment_len() as u64;
                self.emit(
                    net,
                    self.snd_max,
                    flags,
                    Some(ack),
                    options,
                    None,
                    SendKind::First,
                );
            }
        }
    }

    // ---- timers ----

    /// Starts the retransmission timer unless it is running (RFC 6298 §5.1).
    pub(crate) fn arm_rto(&mut self, net: &mut dyn Net) {
        if self.rto_deadline.is_none() {
            self.restart_rto(net);
        }
    }

    pub(crate) fn restart_rto(&mut self, net: &mut dyn Net) {
        let at = net.now() + self.rtt.rto();
        self.rto_deadline = Some(at);
        self.timers.set(timer::RTO, at);
    }

    pub(crate) fn disarm_rto(&mut self) {
        self.rto_deadline = None;
        self.timers.cancel(timer::RTO);
    }

    fn on_rto(&mut self, net: &mut dyn Net) {
        self.rto_deadline = None;
        if self.loss_probe_due(net.now()) && self.on_loss_probe(net) {
            return;
        }
        match self.state {
            TcpState::SynSent | TcpState::SynReceived => self.on_syn_timeout(net),
            s if s.sends_data() && self.snd_max > self.snd_una => self.on_data_timeout(net),
            _ => {}
        }
    }

    fn on_syn_timeout(&mut self, net: &mut dyn Net) {
        if self.count_timeout(net) {
            self.syn_retransmitted = true;
            self.send_syn(net);
        }
    }

    /// Counts a timeout and backs off; false if the connection gave up.
    pub(crate) fn count_timeout(&mut self, net: &mut dyn Net) -> bool {
        self.stats.timeouts += 1;
        self.consecutive_rtos += 1;
        if self.consecutive_rtos > self.cfg.max_consecutive_rtos {
            self.abort(net);
            return false;
        }
        self.rtt.back_off();
        true
    }

    // ---- emission ----

    /// Send a segment without payload at `seq`, acknowledging what we have,
    /// with the options every segment carries.
    pub(crate) fn emit_control(&mut self, net: &mut dyn Net, seq: u64, flags: TcpFlags) {
        let options = self.segment_options(net);
        let ack = Some(self.rcv_nxt);
        self.emit(net, seq, flags, ack, options, None, SendKind::First);
    }

    /// Builds and sends one segment. `data` is `(offset in send buffer,
    /// length)`; the payload is copied straight from the send buffer into
    /// the driver's packet buffer.
    // Every argument is a header field or how to count the segment; a
    // builder would only rename them.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn emit(
        &mut self,
        net: &mut dyn Net,
        seq: u64,
        flags: TcpFlags,
        ack: Option<u64>,
        mut options: TcpOptions,
        data: Option<(usize, usize)>,
        kind: SendKind,
    ) {
        let Some(peer) = self.peer else { return };
        let payload_len = data.map_or(0, |(_, len)| len);
        self.stp_mark_poll(net, &mut options, payload_len > 0 || flags.fin);
        let repr = TcpRepr {
            src_port: self.local_port,
            dst_port: self.peer_port,
            seq: self.iss.to_wire(seq),
            ack: ack.map(|a| self.irs.to_wire(a)),
            flags,
            window: self.window_field(flags.syn, net.app_room()),
            options,
            payload: &[],
        };
        self.advertised_window =
            (repr.window as u64) << if flags.syn { 0 } else { self.rcv_wscale };
        let header_len = repr.header_len();
        let mut packet = net.packet_buffer();
        packet.clear();
        packet.resize(header_len, 0);
        if let Some((offset, len)) = data {
            self.send_buf.append_to(offset, len, &mut packet);
        }
        repr.emit(&mut TcpPacket::new_unchecked(&mut packet[..]));
        self.count_sent(packet.len() as u64, payload_len as u64, kind);
        if let Some(prr) = self.prr.as_mut() {
            prr.sent(payload_len as u64);
        }
        self.paced(net, payload_len as u64);
        if ack.is_some() {
            self.ack_sent();
        }
        net.send(peer, packet, TxOpts::ipv4(joulenet_wire::tcp::PROTOCOL));
    }

    fn count_sent(&mut self, bytes: u64, payload: u64, kind: SendKind) {
        let s = &mut self.stats;
        match (payload > 0, kind) {
            (false, _) => {
                s.control_packets += 1;
                s.control_bytes += bytes;
            }
            (true, SendKind::First) => {
                s.data_packets += 1;
                s.data_bytes += bytes;
                s.payload_bytes += payload;
            }
            (true, SendKind::Retransmission) => {
                s.retransmitted_packets += 1;
                s.retransmitted_bytes += bytes;
            }
        }
    }

    /// Options of a segment after the handshake: timestamps and SACK blocks.
    #[inline]
    pub(crate) fn segment_options(&mut self, net: &dyn Net) -> TcpOptions {
        let mut o = TcpOptions::default();
        if self.ts_ok {
            o.timestamps = Some((ms_clock(net.now()), self.ts_recent));
        }
        o.eln = self.eln_flag();
        if self.sack_ok && !self.reasm.is_empty() {
            let max = o.max_sack_blocks();
            for (l, r) in self.reasm.sack_blocks(self.rcv_nxt, max) {
                o.sack_blocks.push(SackBlock {
                    left: self.irs.to_wire(l),
                    right: self.irs.to_wire(r),
                });
            }
        }
        o
    }

    /// Free receive space: the buffer (and the application's room, when it
    /// has a limit) less what is held.
    pub(crate) fn receive_window(&self, app_room: Option<usize>) -> u64 {
        let space = app_room.map_or(self.cfg.recv_buffer, |r| r.min(self.cfg.recv_buffer));
        space.saturating_sub(self.reasm.bytes()) as u64
    }

    /// The window field: free receive space, scaled (never in a SYN).
    fn window_field(&self, syn: bool, app_room: Option<usize>) -> u16 {
        let free = self.receive_window(app_room);
        let shift = if syn { 0 } else { self.rcv_wscale };
        (free >> shift).min(u16::MAX as u64) as u16
    }
}

/// The timestamp clock: milliseconds, wrapping (RFC 7323 §5.4).
pub(crate) fn ms_clock(now: Time) -> u32 {
    (now.as_nanos() / 1_000_000) as u32
}

pub(crate) fn make_cc(cfg: &TcpConfig, mss: u64) -> Box<dyn CongestionControl> {
    let iw = (cfg.initial_window.max(1) as u64).saturating_mul(mss);
    if cfg.stp.is_some() {
        // STP's reports are sparse: count every byte they acknowledge,
        // without RFC 3465's per-ACK cap (`cc/stp.rs`).
        return Box::new(NewReno::stp_like(mss, iw, cfg.initial_ssthresh));
    }
    match cfg.variant {
        TcpVariant::Cubic => {
            let mut cubic = Cubic::new(mss, iw, cfg.initial_ssthresh);
            if cfg.rules.cubic_whole_segments {
                cubic = cubic.with_whole_segment_reduction();
            }
            if cfg.rules.linux_cubic {
                cubic = cubic.with_linux_arithmetic(cfg.rules.jiffy);
            }
            Box::new(match cfg.rules.hystart {
                Some(flavour) => cubic.with_hystart(flavour),
                None => cubic,
            })
        }
        _ => {
            let reno = NewReno::new(mss, iw, cfg.initial_ssthresh);
            Box::new(match cfg.rules.growth {
                Growth::PerAck => reno.with_per_ack_growth(),
                Growth::ByteCounting => reno,
            })
        }
    }
}

impl Agent for TcpAgent {
    fn protocol(&self) -> &'static str {
        self.cfg.protocol_name()
    }

    fn start(&mut self, net: &mut dyn Net) {
        self.local_port = self.cfg.local_port.unwrap_or(net.local().port);
        if self.peer.is_some() {
            self.state = TcpState::SynSent;
            self.open(net);
        } else {
            self.state = TcpState::Listen;
        }
    }

    fn on_packet(&mut self, net: &mut dyn Net, from: Addr, packet: &[u8]) {
        self.stats.packets_received += 1;
        self.stats.bytes_received += packet.len() as u64;
        let seg = match TcpPacket::new_checked(packet).and_then(|p| TcpRepr::parse(&p)) {
            Ok(seg) => seg,
            Err(_) => {
                self.stats.malformed_dropped += 1;
                return;
            }
        };
        if seg.dst_port != self.local_port {
            self.stats.unexpected_dropped += 1;
            return;
        }
        match self.state {
            TcpState::Listen => return self.on_listen(net, from, &seg),
            TcpState::Closed => {
                self.stats.unexpected_dropped += 1;
                self.answer_with_reset(net, from, &seg);
                return;
            }
            _ => {}
        }
        if self.peer != Some(from) || seg.src_port != self.peer_port {
            self.stats.unexpected_dropped += 1;
            return;
        }
        if self.state == TcpState::SynSent {
            return self.on_syn_sent(net, &seg);
        }
        self.on_segment(net, &seg);
    }

    /// The link layer's explicit loss notification (TCP-ELN receivers).
    fn on_link_loss(&mut self, _net: &mut dyn Net, packet: &[u8]) {
        self.on_eln_report(packet);
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.timers.next()
    }

    fn on_timeout(&mut self, net: &mut dyn Net) {
        while let Some(timer) = self.timers.pop_expired(net.now()) {
            self.on_timer(net, timer);
        }
    }

    fn on_app_ready(&mut self, net: &mut dyn Net) {
        if self.app == AppState::Pending {
            self.app = AppState::Open;
        }
        if net.app_room().is_some() {
            self.on_room(net);
        }
        self.transmit(net);
        self.flush_ack(net);
    }

    fn stats(&self) -> &TransportStats {
        &self.stats
    }

    fn gauge(&self, name: &str) -> Option<f64> {
        Some(match name {
            "cwnd" => self.cc.window() as f64,
            "ssthresh" => self.cc.ssthresh() as f64,
            "srtt_ms" => self.rtt.srtt()?.as_millis_f64(),
            "rto_ms" => self.rtt.rto().as_millis_f64(),
            "flight" => self.flight() as f64,
            "rwnd" => self.peer_wnd as f64,
            "eln_recoveries" => self.eln_recoveries as f64,
            "eln_reports" => self.eln_reports as f64,
            "ooo_bytes" => self.reasm.bytes() as f64,
            "pacing_rate_pps" => self.pacing_rate_pps()?,
            "loss_event_rate" => self.loss_event_rate(),
            "loss_probes" => self.loss_probes as f64,
            "rack_losses" => self.rack_losses as f64,
            "spurious_rtos" => self.spurious_rtos as f64,
            "stp_polls" => self.stp_polls as f64,
            "stp_resent_again" => self.stp_resent_again as f64,
            _ => return None,
        })
    }

    fn is_closed(&self) -> bool {
        matches!(self.state, TcpState::Closed | TcpState::TimeWait)
            && (self.closed_reported || self.aborted)
    }
}

impl TcpAgent {
    fn on_timer(&mut self, net: &mut dyn Net, timer: TimerId) {
        match timer {
            timer::RTO => self.on_rto(net),
            timer::DELAYED_ACK if self.unacked_segments > 0 && self.state.synchronized() => {
                self.send_ack(net);
            }
            timer::PERSIST => self.on_persist(net),
            timer::TIME_WAIT if self.state == TcpState::TimeWait => self.enter_closed(net),
            timer::PACE => self.transmit(net),
            timer::LOSS_PROBE => {
                self.on_loss_probe(net);
            }
            timer::REORDER => self.on_reorder_timeout(net),
            timer::POLL => self.on_poll_timer(net),
            _ => {}
        }
    }
}
