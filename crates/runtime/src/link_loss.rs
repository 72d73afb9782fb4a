//! The loss of a link between two hosts, measured by the sender from what
//! it sends and what the neighbour says it heard (issue 14: iJTP's *pᵢ* on
//! real hosts).
//!
//! Why: a radio MAC counts link-layer attempts and their ACKs; a UDP hop
//! has neither, so nothing on a host knew a link's loss. Here the sender
//! counts the datagrams it sends to each neighbour and, every
//! [`MARK_INTERVAL`] while it sends, follows them with a *mark* carrying
//! that count; the neighbour counts what it hears from each address and
//! answers each mark with a *report*: the mark's count and its own.
//! Between two reports, the datagrams heard over the datagrams sent is the
//! link's delivery ratio, whatever lost the rest (the radio, a full queue
//! on the way, the neighbour's socket). A datagram sent before a mark
//! arrives before it (one FIFO path, no reordering on a link), so the two
//! counts are aligned; a lost mark or report only merges two samples.
//!
//! Link frames are hop-local: never routed, never passed to an agent, and
//! not counted themselves. Their format is a version of the runtime
//! framing of its own (docs/wire.md, "Link frames"):
//!
//! ```text
//!  0      2       3      4          8              16             24             32
//! +------+-------+------+----------+--------------+--------------+--------------+
//! | "JN" | 6     | kind | reserved | mark number  | sent         | heard        |
//! +------+-------+------+----------+--------------+--------------+--------------+
//! kind 1 = mark (heard = 0), 2 = report; numbers u64 big endian.
//! ```

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;

use joulenet_proto::{Duration, Time};

use crate::frame::MAGIC;

/// The framing version of link frames (2 and 3 are plain, 4 and 5 sealed).
pub const LINK_VERSION: u8 = 6;
/// Every link frame's length.
pub const LINK_FRAME_LEN: usize = 32;
/// How often a sender marks a link it is sending on: ten samples a second
/// follow a change within a second, at 32 bytes each way.
pub const MARK_INTERVAL: Duration = Duration::from_millis(100);
/// Reports an estimate spans at most: the last 3.2 s at [`MARK_INTERVAL`].
pub const WINDOW_REPORTS: usize = 32;
/// Datagrams sent in the window below which there is no estimate: with
/// fewer, one loss more or less moves it by more than a few percent.
pub const MIN_SAMPLE: u64 = 50;
/// Addresses a host counts datagrams from (beyond it new ones are not
/// counted, so a flood of sources cannot grow the table).
pub const MAX_PEERS: usize = 65_536;

/// Mark or report.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LinkFrameKind {
    Mark,
    Report,
}

/// A link frame, parsed.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LinkFrame {
    pub kind: LinkFrameKind,
    pub mark: u64,
    /// Datagrams the mark's sender had sent to this neighbour before it.
    pub sent: u64,
    /// (Report) datagrams the neighbour had heard from the sender before
    /// the mark.
    pub heard: u64,
}

impl LinkFrame {
    /// Whether `d` is a link frame at all (magic and version): one that is
    /// but does not parse is malformed, not another framing's.
    pub fn is_link(d: &[u8]) -> bool {
        d.len() >= 3 && d[..2] == MAGIC && d[2] == LINK_VERSION
    }

    pub fn parse(d: &[u8]) -> Result<LinkFrame, &'static str> {
        if !LinkFrame::is_link(d) {
            return Err("not a link frame");
        }
        if d.len() != LINK_FRAME_LEN {
            return Err("link frame of the wrong length");
        }
        let kind = match d[3] {
            1 => LinkFrameKind::Mark,
            2 => LinkFrameKind::Report,
            _ => return Err("unknown link frame kind"),
        };
        if d[4..8] != [0; 4] {
            return Err("link frame reserved bytes not zero");
        }
        let word = |at: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&d[at..at + 8]);
            u64::from_be_bytes(b)
        };
        Ok(LinkFrame {
            kind,
            mark: word(8),
            sent: word(16),
            heard: word(24),
        })
    }

    pub fn emit(&self) -> Vec<u8> {
        let mut d = Vec::with_capacity(LINK_FRAME_LEN);
        d.extend_from_slice(&MAGIC);
        d.push(LINK_VERSION);
        d.push(match self.kind {
            LinkFrameKind::Mark => 1,
            LinkFrameKind::Report => 2,
        });
        d.extend_from_slice(&[0; 4]);
        for w in [self.mark, self.sent, self.heard] {
            d.extend_from_slice(&w.to_be_bytes());
        }
        d
    }
}

/// The send side of one link: what was sent, the marks, the reports.
#[derive(Clone, Debug, Default)]
pub struct LinkLoss {
    sent: u64,
    /// `sent` when the last mark left, and when.
    marked_sent: u64,
    marked_at: Option<Time>,
    marks: u64,
    /// (sent, heard) of the last reports, oldest first.
    reports: VecDeque<(u64, u64)>,
    /// Over the whole run: datagrams sent and heard between reports.
    pub total_sent: u64,
    pub total_heard: u64,
}

impl LinkLoss {
    /// One datagram (not a link frame) left toward the neighbour at `now`.
    pub fn count_sent(&mut self, now: Time) {
        self.sent += 1;
        // The first mark follows the first datagram by an interval, as
        // every later one does: a link used for a moment is not marked at
        // once.
        self.marked_at.get_or_insert(now);
    }

    /// The mark due now, if the link carried anything since the last one.
    pub fn mark(&mut self, now: Time) -> Option<LinkFrame> {
        if self.sent == self.marked_sent
            || self
                .marked_at
                .is_some_and(|t| now.saturating_since(t) < MARK_INTERVAL)
        {
            return None;
        }
        self.marks += 1;
        self.marked_sent = self.sent;
        self.marked_at = Some(now);
        Some(LinkFrame {
            kind: LinkFrameKind::Mark,
            mark: self.marks,
            sent: self.sent,
            heard: 0,
        })
    }

    /// When the next mark may leave (if anything was sent since the last).
    pub fn next_mark(&self) -> Option<Time> {
        if self.sent == self.marked_sent {
            return None;
        }
        self.marked_at.map(|t| t + MARK_INTERVAL)
    }

    /// The neighbour's report on one of our marks.
    pub fn on_report(&mut self, r: &LinkFrame) {
        if let Some(&(s, h)) = self.reports.back() {
            if r.sent <= s {
                // A late or repeated report: nothing new.
                return;
            }
            if r.heard < h || r.sent > self.sent {
                // The neighbour restarted (its count went back) or the
                // report names datagrams never sent: start afresh.
                self.reports.clear();
            } else {
                self.total_sent += r.sent - s;
                // More heard than sent (a duplicate on the way) is none lost.
                self.total_heard += (r.heard - h).min(r.sent - s);
            }
        }
        if self.reports.len() == WINDOW_REPORTS {
            self.reports.pop_front();
        }
        self.reports.push_back((r.sent, r.heard));
    }

    /// The probability that one datagram sent on the link is lost, over
    /// the last reports; `None` until [`MIN_SAMPLE`] datagrams span them.
    pub fn estimate(&self) -> Option<f64> {
        let (&(s0, h0), &(s1, h1)) = (self.reports.front()?, self.reports.back()?);
        let sent = s1 - s0;
        if sent < MIN_SAMPLE {
            return None;
        }
        let heard = h1.saturating_sub(h0).min(sent);
        Some(1.0 - heard as f64 / sent as f64)
    }

    /// The loss over the whole run (every pair of successive reports).
    pub fn run_estimate(&self) -> Option<f64> {
        (self.total_sent >= MIN_SAMPLE)
            .then(|| 1.0 - self.total_heard as f64 / self.total_sent as f64)
    }

    pub fn marks_sent(&self) -> u64 {
        self.marks
    }
}

/// The receive side: datagrams heard from each address, to answer marks.
#[derive(Clone, Debug, Default)]
pub struct Hearing {
    heard: HashMap<SocketAddr, u64>,
}

impl Hearing {
    /// One datagram (not a link frame) heard from `from`.
    pub fn count(&mut self, from: SocketAddr) {
        if let Some(n) = self.heard.get_mut(&from) {
            *n += 1;
        } else if self.heard.len() < MAX_PEERS {
            self.heard.insert(from, 1);
        }
    }

    /// The report answering `mark` from `from`.
    pub fn answer(&self, mark: &LinkFrame, from: SocketAddr) -> LinkFrame {
        LinkFrame {
            kind: LinkFrameKind::Report,
            mark: mark.mark,
            sent: mark.sent,
            heard: self.heard.get(&from).copied().unwrap_or(0),
        }
    }
}

/// Every link of a host: the send side per neighbour, the receive side.
#[derive(Default)]
pub struct Links {
    pub out: HashMap<SocketAddr, LinkLoss>,
    pub hearing: Hearing,
    /// Link frames that did not parse, or reports from an address we
    /// never marked.
    pub malformed: u64,
}

impl Links {
    /// A datagram left toward `to` at `now` ([`Links::marks`] then says
    /// when a mark follows).
    pub fn sent(&mut self, to: SocketAddr, now: Time) {
        if let Some(l) = self.out.get_mut(&to) {
            l.count_sent(now);
        } else if self.out.len() < MAX_PEERS {
            self.out.entry(to).or_default().count_sent(now);
        }
    }

    /// The marks due now, one per link that carried something since its
    /// last.
    pub fn marks(&mut self, now: Time, out: &mut Vec<(Vec<u8>, SocketAddr)>) {
        for (to, l) in self.out.iter_mut() {
            if let Some(m) = l.mark(now) {
                out.push((m.emit(), *to));
            }
        }
    }

    /// When the next mark is due, if any link owes one.
    pub fn next_mark(&self) -> Option<Time> {
        self.out.values().filter_map(LinkLoss::next_mark).min()
    }

    /// Takes a datagram heard from `from`: a link frame is handled here
    /// (a mark answered onto `out`) and `true` returned; any other is
    /// counted and `false` returned, for the caller to handle.
    pub fn on_datagram(
        &mut self,
        d: &[u8],
        from: SocketAddr,
        out: &mut Vec<(Vec<u8>, SocketAddr)>,
    ) -> bool {
        if !LinkFrame::is_link(d) {
            self.hearing.count(from);
            return false;
        }
        match LinkFrame::parse(d) {
            Ok(f) if f.kind == LinkFrameKind::Mark => {
                out.push((self.hearing.answer(&f, from).emit(), from));
            }
            Ok(f) => match self.out.get_mut(&from) {
                Some(l) => l.on_report(&f),
                None => self.malformed += 1,
            },
            Err(_) => self.malformed += 1,
        }
        true
    }

    /// The loss estimate of the link toward `to`, where measured.
    pub fn estimate(&self, to: SocketAddr) -> Option<f64> {
        self.out.get(&to).and_then(LinkLoss::estimate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(p: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], p))
    }

    #[test]
    fn frames_round_trip_and_bad_ones_are_refused() {
        let f = LinkFrame {
            kind: LinkFrameKind::Report,
            mark: 7,
            sent: 1000,
            heard: 951,
        };
        let d = f.emit();
        assert_eq!(d.len(), LINK_FRAME_LEN);
        assert_eq!(&d[..8], b"JN\x06\x02\0\0\0\0");
        assert_eq!(&d[8..16], &7u64.to_be_bytes());
        assert_eq!(LinkFrame::parse(&d), Ok(f));
        assert!(LinkFrame::parse(&d[..31]).is_err());
        let mut bad = d.clone();
        bad[3] = 9;
        assert!(LinkFrame::parse(&bad).is_err());
        bad = d.clone();
        bad[5] = 1;
        assert!(LinkFrame::parse(&bad).is_err());
        assert!(!LinkFrame::is_link(b"JN\x03"));
        assert!(LinkFrame::parse(b"").is_err());
    }

    /// Two hosts over a link that loses every 20th datagram (5%) and,
    /// separately, some marks and reports: the sender's estimate is 5%.
    #[test]
    fn the_sender_measures_a_links_loss_from_the_neighbours_reports() {
        let (a, b) = (addr(1), addr(2));
        let (mut tx, mut rx) = (Links::default(), Links::default());
        let mut wire = Vec::new();
        let mut back = Vec::new();
        let mut n = 0u64;
        for ms in 0..5_000u64 {
            let now = Time(ms * 1_000_000);
            // One datagram a millisecond.
            tx.sent(b, now);
            n += 1;
            if !n.is_multiple_of(20) {
                assert!(!rx.on_datagram(&[0u8; 40], a, &mut back));
            }
            tx.marks(now, &mut wire);
            for (m, to) in wire.drain(..) {
                assert_eq!(to, b);
                // Every seventh mark is lost.
                let lost = LinkFrame::parse(&m).unwrap().mark.is_multiple_of(7);
                if !lost {
                    assert!(rx.on_datagram(&m, a, &mut back));
                }
            }
            for (r, to) in back.drain(..) {
                assert_eq!(to, a);
                assert!(tx.on_datagram(&r, b, &mut Vec::new()));
            }
        }
        let p = tx.estimate(b).unwrap();
        assert!((p - 0.05).abs() < 0.002, "{p}");
        let run = tx.out[&b].run_estimate().unwrap();
        assert!((run - 0.05).abs() < 0.002, "{run}");
        assert!(tx.out[&b].marks_sent() >= 49);
        // What was sent since the last mark is marked once; then no mark
        // on a link that carried nothing since.
        let mut more = Vec::new();
        assert!(tx.next_mark().is_some());
        tx.marks(Time(10_000_000_000), &mut more);
        assert_eq!(more.len(), 1);
        tx.marks(Time(20_000_000_000), &mut more);
        assert_eq!(more.len(), 1);
        assert_eq!(tx.next_mark(), None);
    }

    #[test]
    fn no_estimate_from_too_few_datagrams_and_a_restart_starts_afresh() {
        let mut l = LinkLoss::default();
        for _ in 0..10 {
            l.count_sent(Time::ZERO);
        }
        let rep = |sent, heard| LinkFrame {
            kind: LinkFrameKind::Report,
            mark: 1,
            sent,
            heard,
        };
        l.on_report(&rep(5, 5));
        l.on_report(&rep(10, 9));
        assert_eq!(l.estimate(), None, "5 datagrams are too few");
        for _ in 0..100 {
            l.count_sent(Time::ZERO);
        }
        // From the first report: 63 of 105 heard.
        l.on_report(&rep(110, 68));
        assert!((l.estimate().unwrap() - 0.4).abs() < 1e-9);
        assert_eq!((l.total_sent, l.total_heard), (105, 63));
        // The neighbour restarted: its count went back; no negative sample.
        l.on_report(&rep(111, 1));
        assert_eq!(l.estimate(), None);
        // A report naming more than was sent is refused the same way.
        l.on_report(&rep(10_000, 10_000));
        assert_eq!(l.estimate(), None);
        // A report from an address never marked is counted as malformed.
        let mut links = Links::default();
        let r = rep(1, 1).emit();
        assert!(links.on_datagram(&r, addr(3), &mut Vec::new()));
        assert_eq!(links.malformed, 1);
    }
}
