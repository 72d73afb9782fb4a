//! The sending half: filling the send buffer, transmitting within the
//! congestion and receive windows, processing ACKs, loss recovery per
//! variant, retransmission timeout and zero-window probing.

use joulenet_wire::tcp::{TcpFlags, TcpRepr};

use super::agent::{timer, AppState, SendKind, TcpAgent, TcpState};
use super::config::{RttSampling, TcpVariant};
use super::frto::FrtoAck;
use super::prr::Prr;
use super::scoreboard::Acked;
use crate::net::{AppRead, Net};
use crate::time::{Duration, Time};

/// How holes are found and resent; SACK variants fall back to NewReno when
/// the peer does not permit SACK.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Recovery {
    Tahoe,
    Reno,
    NewReno,
    Sack,
}

impl TcpAgent {
    pub(crate) fn recovery_kind(&self) -> Recovery {
        match self.cfg.variant {
            TcpVariant::Tahoe => Recovery::Tahoe,
            TcpVariant::Reno => Recovery::Reno,
            v if v.uses_sack() && self.sack_ok => Recovery::Sack,
            _ => Recovery::NewReno,
        }
    }

    fn uses_sack(&self) -> bool {
        self.recovery_kind() == Recovery::Sack
    }

    /// Application bytes buffered but never sent.
    fn unsent(&self) -> u64 {
        (self.buf_seq + self.send_buf.len() as u64).saturating_sub(self.snd_max)
    }

    // ---- transmission ----

    /// Sends all that the windows allow: lost segments first, then new
    /// data, then (in SACK recovery) a rescue retransmission, then a lone FIN.
    pub(crate) fn transmit(&mut self, net: &mut dyn Net) {
        if !self.state.sends_data() {
            return;
        }
        if self.nothing_to_send() {
            // A receiver's ACK clock: every segment it gets lands here.
            // What the loop below would do: the application is not read,
            // the pacer is asked (it may arm its timer), no segment is
            // chosen, no new data goes out.
            self.pacing_holds(net);
            self.update_persist(net);
            return;
        }
        let snd_max = self.snd_max;
        self.send_while_allowed(net);
        if self.frto_after_new_data() {
            self.send_while_allowed(net);
        }
        if self.snd_max > snd_max {
            // New data out: the tail may be lost (Linux `tcp_write_xmit`).
            self.schedule_loss_probe(net);
        }
        self.update_persist(net);
    }

    /// Nothing is outstanding, buffered or about to be: the application
    /// is not to be read (it said it has nothing now, or ever), and no FIN
    /// waits, and F-RTO has no step to take (`frto_after_new_data`).
    /// `send_one` would find nothing.
    fn nothing_to_send(&self) -> bool {
        !self.frto_new_data_only
            && self.app != AppState::Open
            && self.unsent() == 0
            && self.board.is_empty()
            && !self.fin_ready()
    }

    fn send_while_allowed(&mut self, net: &mut dyn Net) {
        loop {
            self.fill_from_app(net);
            if self.pacing_holds(net) || !self.send_one(net) {
                break;
            }
        }
    }

    /// Reads from the application only as far as the windows could use soon,
    /// so the buffer does not hold data that cannot be sent.
    pub(crate) fn fill_from_app(&mut self, net: &mut dyn Net) {
        let want = self.cc.window().min(self.peer_wnd).max(self.mss);
        while self.app == AppState::Open && self.send_buf.free() > 0 && self.unsent() < want {
            match self.send_buf.fill(|slot| net.app_read(slot)) {
                AppRead::Data(n) if n > 0 => {}
                AppRead::Data(_) => break,
                AppRead::Pending => self.app = AppState::Pending,
                AppRead::Finished => self.app = AppState::Finished,
            }
        }
    }

    fn send_one(&mut self, net: &mut dyn Net) -> bool {
        let pipe = self.send_pipe();
        let room = self.cc.window().saturating_sub(pipe);
        // A window too small for one segment still lets one go when nothing
        // is in flight, or the connection would stall until a timeout.
        let fits = |len: u64| room >= len || pipe == 0;
        let lt_room = (self.cc.window() + self.limited_transmit_room()).saturating_sub(pipe);
        let lost = if self.frto_new_data_only {
            None // F-RTO step 2.b: new data decides whether the loss was real.
        } else {
            self.board.next_lost()
        };
        if let Some(idx) = lost {
            if !fits(self.board.get(idx).len()) {
                return false;
            }
            self.retransmit(net, idx);
            return true;
        }
        if let Some(len) = self.new_data_len() {
            if !fits(len) && lt_room < len {
                return false;
            }
            self.send_new(net, len);
            return true;
        }
        if self.recovery.is_some() && self.uses_sack() && room >= self.mss {
            if let Some(idx) = self.board.rescue_candidate() {
                self.board.mark_lost(idx);
                self.retransmit(net, idx);
                return true;
            }
        }
        if self.fin_ready() {
            self.send_fin_alone(net);
            return true;
        }
        false
    }

    /// RFC 3042 Limited Transmit: without SACK, each of the first two
    /// dupacks (window updates aside) lets one new segment beyond the
    /// window. (A SACKed segment
    /// already leaves the pipe, which frees the same room.)
    fn limited_transmit_room(&self) -> u64 {
        if !self.cfg.rules.limited_transmit
            || self.recovery.is_some()
            || self.uses_sack()
            || self.reno_sack_on()
        {
            return 0;
        }
        self.lt_dupacks.min(2) as u64 * self.mss
    }

    /// Length of the next new segment the receive window allows.
    pub(crate) fn new_data_len(&self) -> Option<u64> {
        if self.fin_seq.is_some() {
            return None;
        }
        let rwnd_room = (self.snd_una + self.peer_wnd).saturating_sub(self.snd_max);
        let len = self.unsent().min(self.mss).min(rwnd_room);
        (len > 0).then_some(len)
    }

    pub(crate) fn send_new(&mut self, net: &mut dyn Net, len: u64) {
        let seq = self.snd_max;
        let last = len == self.unsent();
        let fin = last && self.app == AppState::Finished;
        let end = seq + len + fin as u64;
        self.board.push(seq, end, fin, net.now());
        self.snd_max = end;
        if fin {
            self.fin_sent(seq + len);
        }
        let flags = TcpFlags {
            fin,
            psh: last,
            ..TcpFlags::default()
        };
        let options = self.segment_options(net);
        let data = Some(((seq - self.buf_seq) as usize, len as usize));
        self.emit(
            net,
            seq,
            flags,
            Some(self.rcv_nxt),
            options,
            data,
            SendKind::First,
        );
        self.arm_rto(net);
    }

    fn fin_ready(&self) -> bool {
        self.app == AppState::Finished
            && self.fin_seq.is_none()
            && self.unsent() == 0
            && matches!(self.state, TcpState::Established | TcpState::CloseWait)
    }

    fn send_fin_alone(&mut self, net: &mut dyn Net) {
        let seq = self.snd_max;
        self.board.push(seq, seq + 1, true, net.now());
        self.snd_max = seq + 1;
        self.fin_sent(seq);
        let flags = TcpFlags {
            fin: true,
            ..TcpFlags::default()
        };
        self.emit_control(net, seq, flags);
        self.arm_rto(net);
    }

    fn fin_sent(&mut self, fin_seq: u64) {
        self.fin_seq = Some(fin_seq);
        self.state = match self.state {
            TcpState::Established => TcpState::FinWait1,
            TcpState::CloseWait => TcpState::LastAck,
            s => s,
        };
    }

    pub(crate) fn retransmit(&mut self, net: &mut dyn Net, idx: usize) {
        let seg = *self.board.get(idx);
        self.board.retransmitted(idx, net.now());
        let payload = seg.payload_len();
        let data = (payload > 0).then(|| ((seg.start - self.buf_seq) as usize, payload as usize));
        let flags = TcpFlags {
            fin: seg.fin,
            ..TcpFlags::default()
        };
        let options = self.segment_options(net);
        self.emit(
            net,
            seg.start,
            flags,
            Some(self.rcv_nxt),
            options,
            data,
            SendKind::Retransmission,
        );
        self.arm_rto(net);
    }

    /// Fast retransmit of the first unacknowledged segment, regardless of
    /// the window (RFC 5681 §3.2 step 2, RFC 6582 step 3, RFC 6675 §5 (4.3)).
    pub(crate) fn retransmit_head(&mut self, net: &mut dyn Net) {
        if self.board.is_empty() {
            return;
        }
        self.board.mark_lost(0);
        if self.board.get(0).lost {
            self.retransmit(net, 0);
            let outstanding = self.flight().div_ceil(self.mss) as u32;
            self.head_retransmitted = Some((self.board.get(0).start, outstanding));
            self.dupacks_since_retransmit = 0;
        }
    }

    // ---- acknowledgments ----

    /// Processes the ACK field, window and SACK blocks of an incoming segment.
    pub(crate) fn process_ack(&mut self, net: &mut dyn Net, seg: &TcpRepr<'_>) {
        let Some(wire) = seg.ack else { return };
        let ack = self.iss.unwrap(wire, self.snd_una);
        if ack > self.snd_max {
            // Acknowledges data never sent: RFC 9293 says drop and ACK.
            self.stats.unexpected_dropped += 1;
            self.ack_now = true;
            return;
        }
        if ack < self.snd_una {
            return; // An old, reordered ACK: nothing to learn.
        }
        let old_wnd = self.peer_wnd;
        let old_una = self.snd_una;
        self.rack_before_ack(net.now());
        let rack_losses_before = self.rack_losses;
        self.peer_wnd = (seg.window as u64) << self.snd_wscale;
        let delivered_before = self.snd_una + self.board.sacked_bytes();
        let sack_changed = self.uses_sack() && self.apply_sacks(seg);
        let (mut dupack, mut retransmitted_acked) = (false, false);
        if ack > self.snd_una {
            retransmitted_acked = self.on_new_ack(net, ack, seg);
        } else if self.is_dupack(seg) {
            dupack = true;
            // A window update (the receiver's application read) is no
            // sign that a segment left the network.
            if self.peer_wnd <= old_wnd {
                self.lt_dupacks += 1;
            }
            self.on_dupack(net, seg.options.eln);
        }
        if sack_changed {
            self.on_sack_change(net);
        }
        let mut original_delivered = self.board.take_lowest_original_delivered();
        if retransmitted_acked && !self.uses_sack() {
            // Without SACK an ACK of the resent head says nothing of what
            // else arrived (Linux clears FLAG_ORIG_SACK_ACKED for Reno).
            original_delivered = None;
        }
        let frto_ack = FrtoAck {
            una_advanced: ack > old_una,
            sacked_or_dupack: sack_changed || dupack,
            original_delivered,
        };
        self.frto_on_ack(net, frto_ack);
        self.rack_tlp_on_ack(net, ack, ack > old_una);
        if self.is_stp() {
            self.stp_on_report(net, sack_changed);
        }
        if self.recovery.is_some() && !self.reno_sack_on() {
            let delivered =
                (self.snd_una + self.board.sacked_bytes()).saturating_sub(delivered_before);
            if self.cfg.rules.ns3_prr {
                self.prr_window_ns3(delivered, sack_changed, ack > old_una);
            } else {
                let newly_lost = self.rack_losses > rack_losses_before;
                self.prr_window(delivered, ack > old_una && !newly_lost);
            }
        }
    }

    /// RFC 6937: in a PRR recovery, each ACK sets the window to the pipe
    /// plus what proportional reduction allows for `delivered` bytes;
    /// Linux's variant (`linux_prr`) grants the slow-start segment only on
    /// a `clean_advance` (snd_una moved, nothing newly marked lost).
    fn prr_window(&mut self, delivered: u64, clean_advance: bool) {
        let (pipe, ssthresh, mss) = (self.board.pipe(), self.cc.ssthresh(), self.mss);
        let linux = self.cfg.rules.linux_prr;
        let Some(prr) = self.prr.as_mut() else { return };
        let cwnd = if linux {
            prr.on_ack_linux(delivered, clean_advance, pipe, ssthresh, mss)
        } else {
            Some(prr.on_ack(delivered, pipe, ssthresh, mss))
        };
        if let Some(cwnd) = cwnd {
            self.cc.set_window(cwnd);
        }
    }

    /// ns-3.44 with SACK: an ACK that updated the scoreboard is a dupack
    /// (`DupAck` → `DoRecovery(currentDelivered, true)`, which also adds a
    /// segment while prr_delivered < RecoverFS), and one that also advanced
    /// snd_una by a segment or more calls `DoRecovery` again from
    /// `ProcessAck`'s partial-ACK branch, counting the same bytes twice.
    fn prr_window_ns3(&mut self, delivered: u64, dupack: bool, partial: bool) {
        let (pipe, ssthresh, mss) = (self.board.pipe(), self.cc.ssthresh(), self.mss);
        let Some(prr) = self.prr.as_mut() else { return };
        let mut cwnd = None;
        if dupack {
            cwnd = prr
                .on_ack_ns3(delivered, true, false, pipe, ssthresh, mss)
                .or(cwnd);
        }
        if partial && delivered >= mss {
            cwnd = prr
                .on_ack_ns3(delivered, false, false, pipe, ssthresh, mss)
                .or(cwnd);
        }
        if let Some(cwnd) = cwnd {
            self.cc.set_window(cwnd);
        }
    }

    fn apply_sacks(&mut self, seg: &TcpRepr<'_>) -> bool {
        let mut changed = false;
        for b in &seg.options.sack_blocks {
            let left = self.iss.unwrap(b.left, self.snd_una);
            let right = self.iss.unwrap(b.right, self.snd_una);
            if left < right && right <= self.snd_max {
                changed |= self.board.sack(left, right);
            }
        }
        changed
    }

    /// New SACK information: find holes (IsLost) and enter recovery when the
    /// first unacknowledged segment is lost (RFC 6675 §5).
    fn on_sack_change(&mut self, net: &mut dyn Net) {
        let (thresh, mss) = (self.cfg.dupack_threshold, self.mss);
        if self.recovery.is_some() {
            self.board.mark_lost_by_sacks(thresh, mss);
        } else if self.may_fast_retransmit() {
            self.board.mark_lost_by_sacks(thresh, mss);
            if self.board.head_lost() {
                self.enter_recovery(net);
            }
        }
    }

    /// RFC 5681 duplicate ACK. The "window unchanged" condition is left out:
    /// our receivers shrink the window as out-of-order data fills the buffer,
    /// so it would hide exactly the dupacks that signal a loss.
    fn is_dupack(&self, seg: &TcpRepr<'_>) -> bool {
        // STP's reports answer polls: only their SACK blocks tell of loss.
        !self.is_stp()
            && seg.payload.is_empty()
            && !seg.flags.syn
            && !seg.flags.fin
            && self.snd_max > self.snd_una
    }

    /// Returns whether the ACK covered retransmitted data.
    fn on_new_ack(&mut self, net: &mut dyn Net, ack: u64, seg: &TcpRepr<'_>) -> bool {
        let acked = ack - self.snd_una;
        let info = self.board.ack_to(ack);
        self.reno_sacks_acked(acked);
        let buf_end = self.buf_seq + self.send_buf.len() as u64;
        let new_buf_seq = ack.clamp(self.buf_seq, buf_end);
        self.send_buf.consume((new_buf_seq - self.buf_seq) as usize);
        self.buf_seq = new_buf_seq;
        self.snd_una = ack;
        self.consecutive_rtos = 0;
        self.persist_backoff = 0;
        let rtt = self.take_rtt_sample(net.now(), info, seg);
        let new_data_acked = self.recover.is_some_and(|r| ack > r);
        if self.cfg.rules.new_ack_clears_backoff
            || (self.cfg.rules.new_data_ack_clears_backoff && new_data_acked)
        {
            self.rtt.clear_backoff();
        }
        let partial = self.recovery.is_some_and(|point| ack < point);
        match self.recovery {
            Some(point) if ack >= point => {
                self.exit_recovery();
                if self.cfg.rules.newreno_exit_at_ssthresh
                    && self.recovery_kind() == Recovery::NewReno
                {
                    let flight = self.flight();
                    self.cc
                        .on_ack(net.now(), acked, rtt.or(self.rtt.srtt()), flight);
                }
            }
            Some(_) => self.partial_ack(net, acked, seg.options.eln, info.retransmitted_acked),
            None => {
                let flight = self.flight();
                let counted = self.growth_credit(ack, acked);
                if counted > 0 {
                    self.cc
                        .on_ack(net.now(), counted, rtt.or(self.rtt.srtt()), flight);
                }
            }
        }
        self.dupacks = 0;
        self.lt_dupacks = 0;
        if self.snd_max > self.snd_una {
            self.restart_rto_on_new_ack(net, partial);
        } else {
            self.disarm_rto();
        }
        if self.fin_seq.is_some_and(|fin| ack > fin) {
            self.our_fin_acked(net);
        }
        info.retransmitted_acked
    }

    /// Bytes an ACK outside recovery counts towards window growth: all it
    /// acknowledges, except that under `loss_exit_counts_beyond_recover`
    /// the ACK that ends a timeout's go-back-N (crossing the recovery
    /// point) counts only whole segments beyond that point (ns-3's
    /// `ProcessAck` leaving CA_LOSS: `segsAcked = (ackNumber − m_recover) /
    /// segmentSize`).
    fn growth_credit(&self, ack: u64, acked: u64) -> u64 {
        match self.recover {
            Some(r)
                if self.cfg.rules.loss_exit_counts_beyond_recover
                    && ack - acked < r
                    && ack >= r =>
            {
                let beyond = ack - r;
                beyond - beyond % self.mss
            }
            _ => acked,
        }
    }

    /// RTT from the echoed timestamp if negotiated, else from the newest
    /// newly acknowledged segment never retransmitted (Karn) — and, under
    /// [`RttSampling::Linux`], none from an ACK that also covers
    /// retransmitted data.
    fn take_rtt_sample(&mut self, now: Time, info: Acked, seg: &TcpRepr<'_>) -> Option<Duration> {
        let rtt = if self.ts_ok {
            let (_, ecr) = seg.options.timestamps?;
            let ms = super::agent::ms_clock(now).wrapping_sub(ecr);
            // An echo from the future or from long ago is not a sample.
            (ms < 1 << 30).then(|| Duration::from_millis(ms as u64))?
        } else {
            if info.retransmitted_acked && self.cfg.rtt_sampling == RttSampling::Linux {
                return None;
            }
            now.saturating_since(info.rtt_sent_at?)
        };
        self.rtt_sample(rtt);
        Some(rtt)
    }

    fn our_fin_acked(&mut self, net: &mut dyn Net) {
        match self.state {
            TcpState::FinWait1 => self.state = TcpState::FinWait2,
            TcpState::Closing => self.enter_time_wait(net),
            TcpState::LastAck => self.enter_closed(net),
            _ => {}
        }
    }

    fn on_dupack(&mut self, net: &mut dyn Net, eln: bool) {
        self.dupacks += 1;
        self.dupacks_since_retransmit += 1;
        let eln = eln && matches!(self.recovery_kind(), Recovery::Reno | Recovery::NewReno);
        if self.reno_sack_on() && self.reno_sack_dupack() {
            return;
        }
        if self.recovery.is_some() {
            if matches!(self.recovery_kind(), Recovery::Reno | Recovery::NewReno) {
                // RFC 5681 §3.2 step 4: each dupack means a segment left.
                self.cc.set_window(self.cc.window() + self.mss);
            }
            if eln {
                self.eln_resend_lost_retransmission(net);
            }
            return;
        }
        if eln && self.enter_eln_recovery(net) {
            return;
        }
        if self.dupacks == self.cfg.dupack_threshold && self.may_fast_retransmit() {
            self.enter_recovery(net);
        }
    }

    /// RFC 6298 §5.3: a new ACK restarts the timer. Under the impatient
    /// rule only the first partial ACK of a recovery does (RFC 6582 §4.3's
    /// Impatient variant, ns-3's `NewAck(ack, m_isFirstPartialAck)`): a
    /// recovery that repairs one hole per round trip ends in a timeout
    /// once the holes outlast the RTO.
    fn restart_rto_on_new_ack(&mut self, net: &mut dyn Net, partial: bool) {
        if partial && self.cfg.rules.impatient_partial_acks {
            self.partial_acks += 1;
            if self.partial_acks > 1 {
                self.arm_rto(net);
                return;
            }
        }
        self.restart_rto(net);
    }

    /// RFC 6582 §4 (and RFC 6675 §5's equivalent): no new fast retransmit
    /// for dupacks of data sent before the previous recovery or timeout.
    pub(crate) fn may_fast_retransmit(&self) -> bool {
        match self.recover {
            None => true,
            Some(r) => self.snd_una >= r,
        }
    }

    pub(crate) fn enter_recovery(&mut self, net: &mut dyn Net) {
        self.save_undo_state();
        self.stats.fast_recoveries += 1;
        self.partial_acks = 0;
        self.loss_indications += 1;
        let base = self.loss_base();
        let prior_cwnd = self.cc.window();
        let ssthresh = self.cc.on_congestion_event(net.now(), base);
        self.recover = Some(self.snd_max);
        match self.recovery_kind() {
            Recovery::Tahoe => {
                // Fast retransmit, then slow start from one segment, resending
                // everything outstanding (BSD Tahoe sets snd_nxt = snd_una).
                self.cc.set_window(self.mss);
                self.board.mark_all_lost();
            }
            Recovery::NewReno if self.reno_sack_on() => self.reno_sack_enter_recovery(net),
            Recovery::Reno | Recovery::NewReno => {
                self.recovery = Some(self.snd_max);
                self.cc.set_window(ssthresh + 3 * self.mss);
                self.retransmit_head(net);
            }
            Recovery::Sack => {
                self.recovery = Some(self.snd_max);
                self.cc.set_window(ssthresh);
                if self.cfg.rules.prr {
                    // ns-3.44's RecoverFS is the pipe (`tcb->m_bytesInFlight`),
                    // Linux's the window (`tcp_init_cwnd_reduction`'s
                    // `prior_cwnd`).
                    let recover_fs = if self.cfg.rules.ns3_prr {
                        self.board.pipe()
                    } else if self.cfg.rules.linux_prr {
                        prior_cwnd
                    } else {
                        self.flight()
                    };
                    self.prr = Some(Prr::start(recover_fs));
                }
                // RACK may start a recovery for a loss above the head.
                if !self.rack_tlp_on() || self.board.head_lost() {
                    self.retransmit_head(net);
                }
            }
        }
    }

    /// What a loss halves into ssthresh, by the profile's rule. Without
    /// SACK the pipe counts each dupack as a segment that left and the
    /// head as lost, plus the one about to be resent: ns-3's
    /// `EnterRecovery` calls `AddRenoSack` and `MarkHeadAsLost` before
    /// `BytesInFlight() + segmentSize`, so the head and the resend cancel.
    pub(crate) fn loss_base(&self) -> u64 {
        let pipe = if self.uses_sack() {
            self.board.pipe()
        } else {
            let dupacked = if self.reno_sack_on() {
                self.reno_sacked
            } else {
                self.dupacks as u64
            };
            self.board.pipe().saturating_sub(dupacked * self.mss)
        };
        let cwnd = self.cc.window();
        self.cfg
            .rules
            .ssthresh_base
            .pick(self.flight(), pipe, cwnd, self.peer_wnd)
    }

    /// An ACK that advances snd_una but not past the recovery point.
    fn partial_ack(&mut self, net: &mut dyn Net, acked: u64, eln: bool, safe: bool) {
        match self.recovery_kind() {
            Recovery::Reno => {
                // Reno leaves recovery on any new ACK (RFC 5681 §3.2 step 6).
                self.exit_recovery();
            }
            Recovery::NewReno if self.eln_cut_on_partial_ack(net, eln) => {
                self.retransmit_head(net);
            }
            Recovery::NewReno if self.reno_sack_on() => {
                self.reno_sack_partial_ack(net, acked, safe);
            }
            Recovery::NewReno => {
                // RFC 6582 §3.2 step 5: resend the next hole, partially deflate.
                let add_back = if acked >= self.mss { self.mss } else { 0 };
                let cwnd = self.cc.window().saturating_sub(acked) + add_back;
                self.cc.set_window(cwnd);
                self.retransmit_head(net);
            }
            Recovery::Sack | Recovery::Tahoe => {}
        }
    }

    fn exit_recovery(&mut self) {
        if let Some(cwnd) = self.eln_cwnd.take() {
            // An ELN recovery ends where it began: no cut.
            self.cc.set_window(cwnd);
            self.recovery = None;
            return;
        }
        self.prr = None;
        let ssthresh = self.cc.ssthresh();
        let cwnd = match self.recovery_kind() {
            // RFC 6582 §3.2 step 6, option (1): avoid a burst.
            Recovery::NewReno if self.cfg.rules.newreno_exit_at_ssthresh => ssthresh,
            Recovery::NewReno => ssthresh.min(self.flight().max(self.mss) + self.mss),
            _ => ssthresh,
        };
        self.cc.set_window(cwnd);
        self.recovery = None;
    }

    // ---- timeouts ----

    /// RFC 6298 §5.4–5.6 and RFC 5681 §3.1: collapse the window and resend
    /// from snd_una; SACK variants skip SACKed data.
    pub(crate) fn on_data_timeout(&mut self, net: &mut dyn Net) {
        if !self.count_timeout(net) {
            return;
        }
        if self.consecutive_rtos == 1 {
            self.loss_indications += 1;
        }
        let was_recovering = self.recovering();
        let rules = self.cfg.rules;
        let repeated = self.consecutive_rtos > 1 && rules.repeated_rto_keeps_ssthresh;
        // A fast recovery, not the loss state of an earlier timeout
        // (`tcp_enter_loss` cuts again there once an ACK has advanced).
        let in_recovery = self.recovery.is_some() && rules.timeout_in_recovery_keeps_ssthresh;
        if repeated || in_recovery {
            // The timer already resent this segment (RFC 5681 §3.1), or
            // the recovery it interrupts already cut ssthresh for this
            // window (Linux): the window goes back to one segment,
            // ssthresh stays.
            self.cc.set_window(self.mss);
        } else {
            if self.recovery.is_none() {
                // A fast recovery's own state is what an undo restores.
                self.save_undo_state();
            }
            let base = self.timeout_base();
            self.cc.on_timeout(net.now(), base);
        }
        self.prr = None;
        self.reno_sacked = 0;
        self.recovery = None;
        self.eln_cwnd = None;
        self.rack_tlp_on_timeout();
        self.recover = Some(self.snd_max);
        self.dupacks = 0;
        self.board.mark_all_lost();
        self.frto_on_timeout(was_recovering);
        self.transmit(net);
        self.arm_rto(net);
    }

    /// What a timeout halves: as for a loss, but with nothing marked by
    /// dupacks (ns-3 takes `BytesInFlight()` before marking all lost).
    fn timeout_base(&self) -> u64 {
        let cwnd = self.cc.window();
        self.cfg
            .rules
            .ssthresh_base
            .pick(self.flight(), self.send_pipe(), cwnd, self.peer_wnd)
    }

    /// Whether new data waits only for the peer's window to open.
    fn window_stalled(&self) -> bool {
        self.snd_max == self.snd_una
            && self.unsent() > 0
            && self.snd_una + self.peer_wnd <= self.snd_max
    }

    /// Arms the persist timer when the window stalls (once: later calls
    /// must not push the probe further away), disarms it when it opens.
    // Called after every transmit; the window is rarely stalled.
    #[inline]
    fn update_persist(&mut self, net: &mut dyn Net) {
        if !self.window_stalled() {
            if self.persist_armed {
                self.persist_armed = false;
                self.timers.cancel(timer::PERSIST);
            }
            return;
        }
        if !self.persist_armed {
            let backoff = self
                .rtt
                .rto()
                .saturating_mul(1 << self.persist_backoff.min(16));
            self.timers
                .set(timer::PERSIST, net.now() + backoff.min(self.cfg.max_rto));
            self.persist_armed = true;
        }
    }

    /// Zero-window probe: an empty segment below snd_una, which the peer
    /// must answer with an ACK carrying its current window.
    pub(crate) fn on_persist(&mut self, net: &mut dyn Net) {
        self.persist_armed = false;
        if !self.window_stalled() || !self.state.sends_data() {
            return;
        }
        self.emit_control(net, self.snd_una - 1, TcpFlags::default());
        self.persist_backoff += 1;
        self.update_persist(net);
    }
}
