//! The sender's use of RACK-TLP (RFC 8985), for profiles that set
//! `TcpRules::rack_tlp` and connections that negotiated SACK: RACK's loss
//! detection on every ACK and on its reordering timer (`rack.rs`), and the
//! tail loss probe (`tlp.rs`), whose timer Linux arms in the RTO's place
//! while no loss is being recovered.

use super::agent::{timer, TcpAgent};
use super::tlp::{self, ProbeOutcome};
use crate::net::Net;
use crate::time::Time;

impl TcpAgent {
    pub(crate) fn rack_tlp_on(&self) -> bool {
        self.cfg.rules.rack_tlp && self.recovery_kind() == super::sender::Recovery::Sack
    }

    /// Linux's `icsk_ca_state` ≥ Recovery: a fast recovery, or the loss
    /// state after a timeout until snd_una passes what was outstanding.
    pub(crate) fn recovering(&self) -> bool {
        self.recovery.is_some() || !self.may_fast_retransmit()
    }

    /// Before an ACK is applied: retransmissions acknowledged sooner than
    /// RACK's min_RTT are not to advance RACK.
    pub(crate) fn rack_before_ack(&mut self, now: Time) {
        if self.rack_tlp_on() {
            let cutoff = self.rack.resent_cutoff(now);
            self.board.set_resent_cutoff(cutoff);
        }
    }

    /// After an ACK: advance RACK and detect losses by time, settle an
    /// outstanding probe, and (when snd_una advanced) re-arm the probe.
    pub(crate) fn rack_tlp_on_ack(&mut self, net: &mut dyn Net, ack: u64, una_advanced: bool) {
        let delivered = self.board.take_newest_delivered();
        if !self.rack_tlp_on() {
            return;
        }
        let news = una_advanced || delivered.is_some();
        if self.rack.on_delivered(delivered, net.now()) {
            self.rack_detect_loss(net);
        }
        if self.tlp.on_ack(ack, news) == ProbeOutcome::Repaired && self.recovery.is_none() {
            self.probe_repaired_a_loss(net);
        }
        if una_advanced {
            self.schedule_loss_probe(net);
        }
    }

    /// RACK's scan; a loss found outside a recovery starts one (Linux
    /// `tcp_time_to_recover`: any segment marked lost).
    fn rack_detect_loss(&mut self, net: &mut dyn Net) {
        let Some(newest) = self.rack.newest() else {
            return;
        };
        let dupthresh_sacked = self.board.sacked_segments() >= self.cfg.dupack_threshold as usize;
        let reo_wnd = self.rack.reo_wnd(
            self.board.reordering_seen(),
            self.recovering(),
            dupthresh_sacked,
            self.rtt.srtt(),
        );
        let wait = self.rack.wait(reo_wnd);
        let (marked, pending) = self.board.rack_mark_lost(newest, wait, net.now());
        self.rack_losses += marked as u64;
        match pending {
            Some(at) => {
                let at = self.reorder_deadline(net.now(), at);
                self.timers.set(timer::REORDER, at)
            }
            None => self.timers.cancel(timer::REORDER),
        }
        if marked > 0 && !self.recovering() {
            self.enter_recovery(net);
        }
    }

    /// The reordering window of a segment sent before RACK's newest has
    /// passed (Linux `tcp_rack_reo_timeout`).
    pub(crate) fn on_reorder_timeout(&mut self, net: &mut dyn Net) {
        if !self.rack_tlp_on() || !self.state.sends_data() {
            return;
        }
        self.rack_detect_loss(net);
        self.transmit(net);
    }

    /// Arms the probe timer PTO from now, but no later than the RTO
    /// (`tcp_schedule_loss_probe`); only outside recovery and with no
    /// probe outstanding.
    pub(crate) fn schedule_loss_probe(&mut self, net: &mut dyn Net) {
        let flight = self.flight();
        if !self.rack_tlp_on() || self.recovering() || flight == 0 || self.tlp.high_seq.is_some() {
            self.timers.cancel(timer::LOSS_PROBE);
            return;
        }
        let pto = tlp::pto(self.rtt.srtt(), flight <= self.mss, self.cfg.rules.jiffy);
        let mut at = net.now() + pto;
        if let Some(rto) = self.rto_deadline {
            at = at.min(rto);
        }
        self.timers.set(timer::LOSS_PROBE, at);
    }

    /// Whether the probe is due now: at the RTO's instant the probe goes
    /// instead (Linux has one timer, and the probe holds it).
    pub(crate) fn loss_probe_due(&self, now: Time) -> bool {
        self.timers.get(timer::LOSS_PROBE).is_some_and(|t| t <= now)
    }

    /// `tcp_send_loss_probe`: one new segment if the receive window allows
    /// (whatever the congestion window), else the last segment again;
    /// then the RTO restarts from now. False if no probe was due.
    pub(crate) fn on_loss_probe(&mut self, net: &mut dyn Net) -> bool {
        self.timers.cancel(timer::LOSS_PROBE);
        let idle = !self.state.sends_data() || self.flight() == 0;
        if !self.rack_tlp_on() || idle || self.recovering() || self.tlp.high_seq.is_some() {
            return false;
        }
        self.fill_from_app(net);
        let retrans = if let Some(len) = self.new_data_len() {
            self.send_new(net, len);
            false
        } else if let Some(idx) = self.board.last_unsacked() {
            self.retransmit(net, idx);
            true
        } else {
            return false;
        };
        self.tlp.sent(self.snd_max, retrans);
        self.loss_probes += 1;
        self.restart_rto(net);
        true
    }

    /// `tcp_process_tlp_ack`: the probe repaired a loss nothing else saw,
    /// so the window is reduced once, as for a recovery that ended at
    /// once (`tcp_init_cwnd_reduction`, `tcp_end_cwnd_reduction`).
    fn probe_repaired_a_loss(&mut self, net: &mut dyn Net) {
        self.loss_indications += 1;
        let base = self.loss_base();
        let ssthresh = self.cc.on_congestion_event(net.now(), base);
        self.cc.set_window(ssthresh);
    }

    /// When the reordering timer fires for a wait ending at `at`: Linux
    /// arms it in whole jiffies and two more (`tcp_rack_mark_lost`:
    /// `usecs_to_jiffies(timeout) + TCP_TIMEOUT_MIN`), so at HZ = 250 a
    /// sub-millisecond wait lasts 12 ms and a third dupack, which makes the
    /// wait 0, often comes first.
    fn reorder_deadline(&self, now: Time, at: Time) -> Time {
        match self.cfg.rules.jiffy {
            None => at,
            Some(j) => now + tlp::whole_jiffies(at.saturating_since(now), j) + j.saturating_mul(2),
        }
    }

    /// A timeout ends any probe and reordering wait (`tcp_retransmit_timer`
    /// clears `tlp_high_seq`).
    pub(crate) fn rack_tlp_on_timeout(&mut self) {
        self.tlp = Default::default();
        self.timers.cancel(timer::LOSS_PROBE);
        self.timers.cancel(timer::REORDER);
    }
}
