//! The sending side of one block over one hop (§3.1).
//!
//! Rounds until the block is whole at the next hop: send the frames the
//! next hop is not known to hold, a TXOP's worth per burst (data, no link
//! ARQ); then a BSYN (control, with link ARQ); the BACK bitmap says which
//! frames arrived, and the next round resends only the others.
//!
//! A relay feeds its sender while the block is still arriving (spatial
//! pipelining): frames go on as soon as a TXOP's worth of new ones is held,
//! and the BSYN only once the block is whole here. A micro-block (§3.6)
//! rides on the BSYN itself. A virtual retransmission (§3.2) starts with a
//! virtual BSYN instead of data, so only frames the next hop lacks move.

use super::bitmap::FrameBitmap;
use super::block::BlockBuf;
use crate::time::{Duration, Time};

/// How the sender opens the transfer (and what its BSYNs are).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SendKind {
    /// Data first, then a BSYN.
    Plain,
    /// The whole block on the BSYN, sent in the voice category (§3.6): a
    /// micro-block of one frame.
    Micro,
    /// A micro-block of several frames (§3.6): its frames and its BSYN in
    /// the voice category with link ARQ (ours: a micro-block bigger than a
    /// frame does not ride whole on one oversized BSYN frame, which a
    /// hidden sender's burst collides with attempt after attempt).
    MicroFrames,
    /// A virtual BSYN first: data only where the next hop lacks it (§3.2).
    Virtual,
    /// A retransmission with virtual retransmission switched off: the
    /// whole block as data, whatever the next hop holds (the cost §3.2's
    /// virtual retransmission saves), then virtual BSYNs, so that a next
    /// hop that has moved the block on carries the retransmission on to the
    /// destination instead of answering for it.
    Resend,
}

/// What the sender wants sent now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SendAction {
    /// These frames, as one TXOP burst (data: one link attempt, background
    /// category).
    Frames(Vec<u16>),
    /// A BSYN (control: link ARQ); with the whole block if `micro`.
    Bsyn { micro: bool },
    /// A virtual BSYN (control).
    VirtualBsyn,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum State {
    /// Sending frames; a BSYN follows once the round is out.
    Sending,
    /// A BSYN is out; send it again at `retry_at` if no BACK came.
    Awaiting { retry_at: Time },
    /// The next hop holds the whole block.
    Done,
}

/// Counters of one block's transfer over one hop.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct SenderStats {
    pub frames_sent: u64,
    pub bsyns_sent: u64,
    /// BACKs taken (one per completed round).
    pub backs: u64,
}

/// One block's transfer toward one next hop.
#[derive(Clone, Debug)]
pub struct BlockSender {
    kind: SendKind,
    /// What the next hop holds, as its last BACK said.
    peer: FrameBitmap,
    /// Frames sent since that BACK.
    sent: FrameBitmap,
    state: State,
    /// The opening BSYN of a micro or virtual transfer is out.
    opened: bool,
    per_txop: usize,
    retry: Duration,
    /// Unanswered BSYNs in a row: each doubles the wait for the next (a
    /// BSYN may sit behind a whole round of frames in the interface queue,
    /// and every duplicate BSYN draws a BACK).
    unanswered: u32,
    /// When the BSYN now out is expected to have left the interface queue,
    /// if it was sent once this round: a BACK to it times the hop's round
    /// trip (after a repeat, which BSYN a BACK answers is ambiguous).
    left_at: Option<Time>,
    /// A virtual transfer that asks the next hop before this node holds
    /// the block ([`BlockSender::asking`]).
    asking: bool,
    /// A BACK has answered data sent (or a micro or virtual BSYN): frames
    /// sent from now on are retransmissions. A BACK to a plain opening BSYN
    /// (`open_with_bsyn`) is not, so the first round counts as first
    /// transmissions.
    repairing: bool,
    pub stats: SenderStats,
}

impl BlockSender {
    /// A transfer that sends `per_txop` frames per burst and repeats an
    /// unanswered BSYN every `retry`.
    pub fn new(kind: SendKind, per_txop: usize, retry: Duration) -> BlockSender {
        BlockSender {
            kind,
            peer: FrameBitmap::default(),
            sent: FrameBitmap::default(),
            state: State::Sending,
            opened: matches!(
                kind,
                SendKind::Plain | SendKind::MicroFrames | SendKind::Resend
            ),
            per_txop: per_txop.max(1),
            retry,
            unanswered: 0,
            left_at: None,
            asking: false,
            repairing: kind == SendKind::Resend,
            stats: SenderStats::default(),
        }
    }

    pub fn kind(&self) -> SendKind {
        self.kind
    }

    /// A micro-block (§3.6): prioritised, and sent in the voice category
    /// with link ARQ.
    pub fn is_micro(&self) -> bool {
        matches!(self.kind, SendKind::Micro | SendKind::MicroFrames)
    }

    /// A plain transfer that opens with a BSYN and sends data only once
    /// the next hop has answered it (§3.1 read as "in round i the sender
    /// sends a BSYN"; with ack withholding the next hop then takes one
    /// block at a time, first rounds included, §3.5).
    pub fn open_with_bsyn(mut self) -> BlockSender {
        if self.kind == SendKind::Plain {
            self.opened = false;
        }
        self
    }

    /// A virtual transfer of a block this node moved on once and no longer
    /// holds whole: its virtual BSYN goes with only the block's shape known
    /// here, and afterwards frames go (and the next virtual BSYN) once this
    /// node holds every frame the next hop's BACK says it lacks, not the
    /// whole block (§3.2: data move only where the next hop lacks them).
    pub fn asking(mut self) -> BlockSender {
        if self.kind == SendKind::Virtual {
            self.asking = true;
        }
        self
    }

    /// The next hop has answered at least once.
    pub fn is_answered(&self) -> bool {
        self.stats.backs > 0
    }

    /// BSYNs sent in a row without a BACK.
    pub fn unanswered(&self) -> u32 {
        self.unanswered
    }

    /// The frames held here (`local`) make the next hop whole: the whole
    /// block, or, for an asking transfer once answered, every frame the
    /// next hop lacks.
    fn covers(&self, local: &BlockBuf) -> bool {
        if local.is_complete() {
            return true;
        }
        let held = local.held();
        self.asking
            && self.is_answered()
            && !self.peer.is_empty()
            && self.peer.missing().all(|i| held.get(i))
    }

    /// Frames it sends now are retransmissions: an earlier round of them
    /// was answered, or the whole transfer is a retransmission.
    pub fn is_repairing(&self) -> bool {
        self.repairing
    }

    /// The next hop holds the whole block.
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// A BSYN is out and unanswered.
    pub fn is_awaiting(&self) -> bool {
        matches!(self.state, State::Awaiting { .. })
    }

    /// When the unanswered BSYN is due again.
    pub fn poll_timeout(&self) -> Option<Time> {
        match self.state {
            State::Awaiting { retry_at } => Some(retry_at),
            _ => None,
        }
    }

    /// The wait for a BACK before the BSYN is repeated (before doubling):
    /// the agent sets it from the hop's measured round trip.
    pub fn set_retry(&mut self, retry: Duration) {
        self.retry = retry;
    }

    /// The hop's round trip, if a BACK arriving `now` unambiguously answers
    /// the BSYN now out (sent once). Call before [`BlockSender::on_back`].
    pub fn round_trip(&self, now: Time) -> Option<Duration> {
        match (self.state, self.unanswered, self.left_at) {
            (State::Awaiting { .. }, 1, Some(left)) => Some(now.saturating_since(left)),
            _ => None,
        }
    }

    fn bsyn(&mut self, now: Time) -> SendAction {
        self.left_at = (self.unanswered == 0).then_some(now);
        let wait = self.retry.saturating_mul(1 << self.unanswered.min(6));
        self.unanswered += 1;
        self.state = State::Awaiting {
            retry_at: now + wait,
        };
        self.stats.bsyns_sent += 1;
        match self.kind {
            SendKind::Plain | SendKind::MicroFrames => SendAction::Bsyn { micro: false },
            SendKind::Micro => SendAction::Bsyn { micro: true },
            SendKind::Virtual | SendKind::Resend => SendAction::VirtualBsyn,
        }
    }

    /// What to send now, given the frames held here (`local`); call until
    /// `None`. Frames go when a TXOP's worth is ready or the block is whole
    /// here; the BSYN when the round is out and the block is whole here.
    pub fn poll_transmit(&mut self, now: Time, local: &BlockBuf) -> Option<SendAction> {
        let complete = self.covers(local);
        match self.state {
            State::Done => None,
            State::Awaiting { retry_at } => (now >= retry_at).then(|| self.bsyn(now)),
            State::Sending if !self.opened => {
                // A micro-block or virtual BSYN needs the whole block here;
                // a plain opening BSYN, or an asking one, only its shape.
                let shape_only = self.kind == SendKind::Plain || self.asking;
                let ready = complete || (shape_only && local.shape().is_some());
                if !ready {
                    return None;
                }
                self.opened = true;
                Some(self.bsyn(now))
            }
            State::Sending => {
                let ready: Vec<u16> = local
                    .held()
                    .held()
                    .filter(|&i| !self.peer.get(i) && !self.sent.get(i))
                    .map(|i| i as u16)
                    .take(self.per_txop)
                    .collect();
                if ready.len() >= self.per_txop || (complete && !ready.is_empty()) {
                    for &i in &ready {
                        self.sent.set(i as usize);
                    }
                    self.stats.frames_sent += ready.len() as u64;
                    Some(SendAction::Frames(ready))
                } else if complete {
                    Some(self.bsyn(now))
                } else {
                    None
                }
            }
        }
    }

    /// True if the unanswered BSYN is due again at `now`.
    pub fn retry_due(&self, now: Time) -> bool {
        matches!(self.state, State::Awaiting { retry_at } if retry_at <= now)
    }

    /// Holds a due BSYN retry until `until` without sending: the BSYN out
    /// may still sit in the interface queue (behind a busy medium), and a
    /// duplicate queued behind it would only draw a duplicate BACK. Its
    /// departure, for the round trip, moves as far.
    pub fn hold_retry(&mut self, until: Time) {
        if let State::Awaiting { retry_at } = &mut self.state {
            if until > *retry_at {
                let d = until.saturating_since(*retry_at);
                *retry_at = until;
                if let Some(left) = &mut self.left_at {
                    *left += d;
                }
            }
        }
    }

    /// Pushes the pending BSYN retry later by `d`: the driver knows how long
    /// the frames queued ahead of the BSYN take to leave.
    pub fn extend_retry(&mut self, d: Duration) {
        if let State::Awaiting { retry_at } = &mut self.state {
            *retry_at += d;
        }
        if let Some(left) = &mut self.left_at {
            *left += d;
        }
    }

    /// The next hop's BACK; true exactly once, when it shows the whole
    /// block. A BACK after that changes nothing. A BACK while no BSYN is
    /// out answers a duplicate BSYN of the previous round: what it shows is
    /// noted, but the frames resent since are not sent again.
    pub fn on_back(&mut self, back: FrameBitmap) -> bool {
        if self.state == State::Done {
            return false;
        }
        self.stats.backs += 1;
        self.unanswered = 0;
        if self.stats.frames_sent > 0 || self.kind != SendKind::Plain {
            self.repairing = true;
        }
        if self.state == State::Sending && self.opened && self.stats.bsyns_sent > 0 {
            for i in back.held() {
                self.peer.set(i);
            }
            if self.peer.is_full() && self.peer.len() == back.len() {
                self.state = State::Done;
                return true;
            }
            return false;
        }
        self.sent = FrameBitmap::default();
        if back.is_full() {
            self.peer = back;
            self.state = State::Done;
            return true;
        }
        self.peer = back;
        // A micro-block whose BSYN was answered with holes goes on as data.
        self.opened = true;
        self.state = State::Sending;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RETRY: Duration = Duration::from_millis(100);

    fn drain(s: &mut BlockSender, now: Time, local: &BlockBuf) -> Vec<SendAction> {
        std::iter::from_fn(|| s.poll_transmit(now, local)).collect()
    }

    #[test]
    fn first_round_is_txops_then_one_bsyn() {
        let local = BlockBuf::from_data(&[7; 12], 1);
        let mut s = BlockSender::new(SendKind::Plain, 5, RETRY);
        let acts = drain(&mut s, Time::ZERO, &local);
        assert_eq!(
            acts,
            vec![
                SendAction::Frames(vec![0, 1, 2, 3, 4]),
                SendAction::Frames(vec![5, 6, 7, 8, 9]),
                SendAction::Frames(vec![10, 11]),
                SendAction::Bsyn { micro: false },
            ]
        );
        assert!(s.is_awaiting());
        assert_eq!(s.poll_timeout(), Some(Time::ZERO + RETRY));
    }

    #[test]
    fn opening_with_a_bsyn_sends_data_only_once_it_is_answered() {
        let local = BlockBuf::from_data(&[7; 7], 1);
        let mut s = BlockSender::new(SendKind::Plain, 5, RETRY).open_with_bsyn();
        assert_eq!(
            drain(&mut s, Time::ZERO, &local),
            vec![SendAction::Bsyn { micro: false }]
        );
        assert!(s.is_awaiting(), "nothing more until the BACK");
        // The next hop holds frame 2 already (overheard).
        let mut back = FrameBitmap::new(7);
        back.set(2);
        assert!(!s.on_back(back));
        assert!(
            !s.is_repairing(),
            "the first round, after the opening BACK, is no retransmission"
        );
        assert_eq!(
            drain(&mut s, Time::ZERO, &local),
            vec![
                SendAction::Frames(vec![0, 1, 3, 4, 5]),
                SendAction::Frames(vec![6]),
                SendAction::Bsyn { micro: false },
            ]
        );
        let mut back = FrameBitmap::new(7);
        for i in [0, 1, 2, 3, 5, 6] {
            back.set(i);
        }
        assert!(!s.on_back(back));
        assert!(s.is_repairing(), "frame 4 again is a retransmission");
        assert_eq!(
            drain(&mut s, Time::ZERO, &local),
            vec![
                SendAction::Frames(vec![4]),
                SendAction::Bsyn { micro: false }
            ]
        );
        assert!(s.on_back(FrameBitmap::full(7)));
    }

    #[test]
    fn a_held_retry_sends_no_duplicate_until_released() {
        let local = BlockBuf::from_data(&[7; 3], 1);
        let mut s = BlockSender::new(SendKind::Plain, 5, RETRY);
        drain(&mut s, Time::ZERO, &local);
        let due = Time::ZERO + RETRY;
        assert!(s.retry_due(due));
        s.hold_retry(due + RETRY);
        assert!(!s.retry_due(due));
        assert_eq!(s.poll_transmit(due, &local), None, "no duplicate BSYN");
        assert_eq!(
            s.poll_transmit(due + RETRY, &local),
            Some(SendAction::Bsyn { micro: false })
        );
        assert_eq!(s.stats.bsyns_sent, 2);
    }

    #[test]
    fn a_back_with_holes_resends_only_the_holes() {
        let local = BlockBuf::from_data(&[7; 12], 1);
        let mut s = BlockSender::new(SendKind::Plain, 5, RETRY);
        drain(&mut s, Time::ZERO, &local);
        // Frames 3, 10 and 11 were lost.
        let mut back = FrameBitmap::new(12);
        for i in (0..12).filter(|i| ![3, 10, 11].contains(i)) {
            back.set(i);
        }
        assert!(!s.on_back(back));
        let acts = drain(&mut s, Time::ZERO, &local);
        assert_eq!(
            acts,
            vec![
                SendAction::Frames(vec![3, 10, 11]),
                SendAction::Bsyn { micro: false }
            ]
        );
        assert!(s.on_back(FrameBitmap::full(12)));
        assert!(!s.on_back(FrameBitmap::full(12)), "done exactly once");
        assert_eq!(s.poll_transmit(Time::ZERO, &local), None);
        assert_eq!(s.stats.frames_sent, 15);
    }

    #[test]
    fn an_unanswered_bsyn_is_repeated_with_backoff() {
        let local = BlockBuf::from_data(&[7; 2], 1);
        let mut s = BlockSender::new(SendKind::Plain, 5, RETRY);
        drain(&mut s, Time::ZERO, &local);
        assert_eq!(s.poll_transmit(Time::from_millis(99), &local), None);
        assert_eq!(
            s.poll_transmit(Time::from_millis(100), &local),
            Some(SendAction::Bsyn { micro: false })
        );
        assert_eq!(s.stats.bsyns_sent, 2);
        // The second waits twice as long, and the driver may add the
        // time the queue ahead of it takes.
        assert_eq!(s.poll_timeout(), Some(Time::from_millis(300)));
        s.extend_retry(Duration::from_millis(50));
        assert_eq!(s.poll_timeout(), Some(Time::from_millis(350)));
    }

    #[test]
    fn only_a_bsyn_sent_once_times_the_hops_round_trip() {
        let local = BlockBuf::from_data(&[7; 2], 1);
        let mut s = BlockSender::new(SendKind::Plain, 5, RETRY);
        drain(&mut s, Time::ZERO, &local);
        // It left the interface queue 10 ms after it was handed over.
        s.extend_retry(Duration::from_millis(10));
        assert_eq!(
            s.round_trip(Time::from_millis(25)),
            Some(Duration::from_millis(15))
        );
        // Repeated: a BACK may answer either copy, so it times nothing.
        s.poll_transmit(Time::from_millis(110), &local);
        assert_eq!(s.round_trip(Time::from_millis(120)), None);
        // The retry the agent sets is the one the next BSYN waits.
        let mut s = BlockSender::new(SendKind::Plain, 5, RETRY);
        s.set_retry(Duration::from_millis(7));
        drain(&mut s, Time::ZERO, &local);
        assert_eq!(s.poll_timeout(), Some(Time::from_millis(7)));
    }

    #[test]
    fn a_back_to_a_duplicate_bsyn_does_not_resend_the_round_again() {
        let local = BlockBuf::from_data(&[7; 4], 1);
        let mut s = BlockSender::new(SendKind::Plain, 5, RETRY);
        drain(&mut s, Time::ZERO, &local);
        // The BSYN was repeated while queued: two BACKs come back.
        s.poll_transmit(Time::from_millis(100), &local);
        let mut back = FrameBitmap::new(4);
        back.set(0);
        back.set(1);
        assert!(!s.on_back(back.clone()));
        assert_eq!(
            drain(&mut s, Time::from_millis(100), &local),
            vec![
                SendAction::Frames(vec![2, 3]),
                SendAction::Bsyn { micro: false }
            ]
        );
        // This one answers the repeated BSYN, but a BSYN is out again:
        // it is taken as the answer to it (the resent frames are in
        // flight), so the holes go once more only after the new BSYN.
        assert!(!s.on_back(back));
        let again = drain(&mut s, Time::from_millis(100), &local);
        assert_eq!(
            again,
            vec![
                SendAction::Frames(vec![2, 3]),
                SendAction::Bsyn { micro: false }
            ]
        );
        // A stale BACK with no BSYN out only adds what it shows.
        let mut s2 = BlockSender::new(SendKind::Plain, 5, RETRY);
        drain(&mut s2, Time::ZERO, &local);
        let mut b = FrameBitmap::new(4);
        b.set(0);
        assert!(!s2.on_back(b.clone()));
        assert_eq!(
            s2.poll_transmit(Time::ZERO, &local),
            Some(SendAction::Frames(vec![1, 2, 3]))
        );
        let mut b2 = FrameBitmap::new(4);
        b2.set(1);
        assert!(!s2.on_back(b2));
        assert_eq!(
            s2.poll_transmit(Time::ZERO, &local),
            Some(SendAction::Bsyn { micro: false }),
            "frames 2 and 3 were just sent: not again"
        );
    }

    #[test]
    fn a_relay_forwards_each_txop_of_new_frames_before_the_block_is_whole() {
        let whole = BlockBuf::from_data(&[1; 12], 1);
        let mut local = BlockBuf::new();
        let mut s = BlockSender::new(SendKind::Plain, 5, RETRY);
        for i in 0..4u16 {
            local.insert(i, whole.frame(i as usize).unwrap()).unwrap();
        }
        // Four new frames: less than a TXOP, and the block is not whole.
        assert_eq!(s.poll_transmit(Time::ZERO, &local), None);
        local.insert(4, whole.frame(4).unwrap()).unwrap();
        assert_eq!(
            drain(&mut s, Time::ZERO, &local),
            vec![SendAction::Frames(vec![0, 1, 2, 3, 4])]
        );
        // The rest arrives, with the shape: the remainder goes, then a BSYN.
        for i in 5..12u16 {
            local.insert(i, whole.frame(i as usize).unwrap()).unwrap();
        }
        local.set_shape(whole.shape().unwrap()).unwrap();
        assert_eq!(
            drain(&mut s, Time::ZERO, &local),
            vec![
                SendAction::Frames(vec![5, 6, 7, 8, 9]),
                SendAction::Frames(vec![10, 11]),
                SendAction::Bsyn { micro: false }
            ]
        );
    }

    #[test]
    fn a_micro_block_rides_on_the_bsyn() {
        let local = BlockBuf::from_data(&[1; 300], 300);
        let mut s = BlockSender::new(SendKind::Micro, 5, RETRY);
        assert_eq!(
            drain(&mut s, Time::ZERO, &local),
            vec![SendAction::Bsyn { micro: true }]
        );
        assert!(s.on_back(FrameBitmap::full(1)));
        assert_eq!(s.stats.frames_sent, 0);
    }

    #[test]
    fn a_virtual_transfer_asks_before_it_sends() {
        let local = BlockBuf::from_data(&[1; 10], 1);
        let mut s = BlockSender::new(SendKind::Virtual, 5, RETRY);
        assert_eq!(
            drain(&mut s, Time::ZERO, &local),
            vec![SendAction::VirtualBsyn]
        );
        // The next hop holds all but frame 6: only frame 6 moves.
        let mut back = FrameBitmap::new(10);
        for i in (0..10).filter(|&i| i != 6) {
            back.set(i);
        }
        assert!(!s.on_back(back));
        assert_eq!(
            drain(&mut s, Time::ZERO, &local),
            vec![SendAction::Frames(vec![6]), SendAction::VirtualBsyn]
        );
        assert!(s.on_back(FrameBitmap::full(10)));
        assert_eq!(s.stats.frames_sent, 1);
    }

    #[test]
    fn a_resend_sends_the_whole_block_then_a_virtual_bsyn() {
        let local = BlockBuf::from_data(&[1; 7], 1);
        let mut s = BlockSender::new(SendKind::Resend, 5, RETRY);
        assert_eq!(
            drain(&mut s, Time::ZERO, &local),
            vec![
                SendAction::Frames(vec![0, 1, 2, 3, 4]),
                SendAction::Frames(vec![5, 6]),
                SendAction::VirtualBsyn
            ]
        );
        assert!(s.on_back(FrameBitmap::full(7)));
    }

    #[test]
    fn a_virtual_transfer_waits_for_the_whole_block_here() {
        let mut s = BlockSender::new(SendKind::Virtual, 5, RETRY);
        let mut local = BlockBuf::new();
        local.insert(0, b"a").unwrap();
        assert_eq!(s.poll_transmit(Time::ZERO, &local), None);
    }
}
