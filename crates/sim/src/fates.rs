//! Which messages of a datagram flow arrived: each delivered datagram is
//! matched by its content to the message the source logged (every stream
//! byte is known, `pattern.rs`), so the messages skipped before it were
//! lost. From the fates come the loss rate, the per-message delay and the
//! conditional loss probability of the Hop paper's §5.8 (the probability
//! that a message is lost given that the one before it was).

use std::collections::VecDeque;

use joulenet_proto::Time;

use crate::pattern;

/// How far past the oldest outstanding message a datagram is looked for:
/// a datagram reordered further back, or one of a source whose messages
/// were logged together, counts as unmatched rather than costing a scan of
/// the whole log.
const WINDOW: usize = 64;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MessageFates {
    /// Stream offset of the oldest message not yet given a fate.
    front: u64,
    pub received: u64,
    pub lost: u64,
    /// Messages whose predecessor was lost, and those of them lost too.
    pub after_loss: u64,
    pub lost_after_loss: u64,
    /// Deliveries that matched no message near the front.
    pub unmatched: u64,
    previous_lost: Option<bool>,
}

impl MessageFates {
    /// Match `data`, delivered at `now`, against the logged messages
    /// (`(end offset, generation time)`, oldest first); returns the matched
    /// message's generation time. Messages before it are lost; both leave
    /// the log.
    pub fn deliver(&mut self, data: &[u8], chunks: &mut VecDeque<(u64, Time)>) -> Option<Time> {
        let mut start = self.front;
        let hit = chunks.iter().take(WINDOW).position(|&(end, _)| {
            let is = end - start == data.len() as u64 && pattern::matches(start, data);
            start = end;
            is
        });
        let Some(i) = hit else {
            self.unmatched += 1;
            return None;
        };
        for _ in 0..i {
            let (end, _) = chunks.pop_front().expect("within the window");
            self.front = end;
            self.fate(true);
        }
        let (end, generated) = chunks.pop_front().expect("the match");
        self.front = end;
        self.fate(false);
        Some(generated)
    }

    fn fate(&mut self, lost: bool) {
        if self.previous_lost == Some(true) {
            self.after_loss += 1;
            self.lost_after_loss += u64::from(lost);
        }
        self.previous_lost = Some(lost);
        if lost {
            self.lost += 1;
        } else {
            self.received += 1;
        }
    }

    /// P(lost | the previous message lost); `None` before any loss was
    /// followed by a known fate.
    pub fn conditional_loss_probability(&self) -> Option<f64> {
        (self.after_loss > 0).then(|| self.lost_after_loss as f64 / self.after_loss as f64)
    }

    /// Lost messages over messages with a fate.
    pub fn loss_rate(&self) -> Option<f64> {
        let n = self.lost + self.received;
        (n > 0).then(|| self.lost as f64 / n as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ten 20-byte messages; those in `arrive` are delivered, in order.
    fn run(arrive: &[u64]) -> MessageFates {
        let mut chunks: VecDeque<(u64, Time)> = (1..=10).map(|k| (20 * k, Time(k))).collect();
        let mut fates = MessageFates::default();
        for &k in arrive {
            let mut data = vec![0; 20];
            pattern::fill(20 * k, &mut data);
            assert_eq!(fates.deliver(&data, &mut chunks), Some(Time(k + 1)));
        }
        fates
    }

    #[test]
    fn losses_and_their_bursts_are_counted() {
        // Fates: ok, lost, lost, lost, ok, lost, ok, ok, ok, ok.
        let f = run(&[0, 4, 6, 7, 8, 9]);
        assert_eq!((f.received, f.lost, f.unmatched), (6, 4, 0));
        // After a loss: lost, lost, ok (the burst), ok: 2 of 4.
        assert_eq!((f.after_loss, f.lost_after_loss), (4, 2));
        assert_eq!(f.conditional_loss_probability(), Some(0.5));
        assert_eq!(f.loss_rate(), Some(0.4));
    }

    #[test]
    fn nothing_lost_has_no_conditional_probability() {
        let f = run(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
        assert_eq!((f.received, f.lost), (10, 0));
        assert_eq!(f.conditional_loss_probability(), None);
    }

    #[test]
    fn a_datagram_of_no_logged_message_is_unmatched_and_loses_nothing() {
        let mut chunks: VecDeque<(u64, Time)> = (1..=3).map(|k| (20 * k, Time(k))).collect();
        let mut fates = MessageFates::default();
        assert_eq!(fates.deliver(&[9; 20], &mut chunks), None);
        assert_eq!((fates.unmatched, fates.lost, chunks.len()), (1, 0, 3));
    }
}
