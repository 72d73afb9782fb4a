//! Replaying recorded or hand-written losses.
//!
//! # File format
//!
//! A loss trace is UTF-8 text, one entry per line. `#` starts a comment that
//! runs to the end of the line; blank lines are ignored. A file holds one of
//! two kinds of entries, never both:
//!
//! * **Frame fates**: each line is `0` (delivered) or `1` (lost); the k-th
//!   line decides the k-th frame the link is asked about. A comment line
//!   reading exactly `# repeat` (anywhere in the file) replays the fates
//!   cyclically; without it, frames after the last line are delivered.
//!
//!   ```text
//!   # repeat
//!   0
//!   0
//!   1
//!   ```
//!
//! * **Loss intervals**: each line is `start end probability`: frames whose
//!   transmission starts in [start, end) are lost with that probability.
//!   Times are durations since the start of the run, in seconds or with a
//!   unit (`1.5`, `1500ms`, `2min`). Intervals must be listed in time order
//!   and must not overlap.
//!
//!   ```text
//!   # start  end    probability
//!   1s       1.5s   1.0
//!   10       12     0.3
//!   ```
//!
//! Errors name the line (`trace line 7: ...`).

use super::{draw_error, frame_rng, FateCounts, FrameInfo, LossError, LossProcess};
use crate::error::check_probability;
use crate::units::parse_duration;
use joulenet_proto::Time;
use rand_pcg::Pcg64Mcg;
use std::sync::Arc;

/// A recorded loss pattern.
#[derive(Clone, Debug, PartialEq)]
pub enum LossTrace {
    /// Frame k is lost iff `lost[k]`; after the end, repeat or lose nothing.
    Frames { lost: Vec<bool>, repeat: bool },
    /// Frames starting in [a, b) are lost with probability p; sorted by
    /// start, non-overlapping.
    Intervals(Vec<(Time, Time, f64)>),
}

/// One parsed line of a trace file.
enum Entry {
    Fate(bool),
    Interval(Time, Time, f64),
}

impl LossTrace {
    /// Parses the file format described in the module documentation.
    pub fn parse(text: &str) -> Result<LossTrace, LossError> {
        let mut fates = Vec::new();
        let mut intervals = Vec::new();
        let mut repeat_line = None;
        for (index, raw) in text.lines().enumerate() {
            let line = index + 1;
            let (content, comment) = raw.split_once('#').unwrap_or((raw, ""));
            if comment.trim() == "repeat" {
                repeat_line = Some(line);
            }
            match parse_entry(content, line)? {
                None => {}
                Some(Entry::Fate(_)) if !intervals.is_empty() => return Err(mixed(line)),
                Some(Entry::Interval(..)) if !fates.is_empty() => return Err(mixed(line)),
                Some(Entry::Fate(lost)) => fates.push(lost),
                Some(Entry::Interval(a, b, p)) => {
                    check_order(&intervals, a, line)?;
                    intervals.push((a, b, p));
                }
            }
        }
        finish(fates, intervals, repeat_line)
    }

    /// Checks a trace built in code the way [`LossTrace::parse`] checks a file.
    pub fn validate(&self) -> Result<(), LossError> {
        match self {
            LossTrace::Frames { lost, .. } if lost.is_empty() => {
                Err(LossError::new("trace.frames", "must not be empty"))
            }
            LossTrace::Frames { .. } => Ok(()),
            LossTrace::Intervals(list) if list.is_empty() => {
                Err(LossError::new("trace.intervals", "must not be empty"))
            }
            LossTrace::Intervals(list) => validate_intervals(list),
        }
    }

    /// The long-run fraction of frames lost, where the trace defines one: a
    /// repeating frame trace. Interval traces depend on traffic timing and a
    /// finite frame trace ends in a perfect channel, so they give `None`.
    pub fn stationary_loss(&self) -> Option<f64> {
        match self {
            LossTrace::Frames { lost, repeat: true } if !lost.is_empty() => {
                Some(lost.iter().filter(|&&l| l).count() as f64 / lost.len() as f64)
            }
            _ => None,
        }
    }
}

fn parse_entry(content: &str, line: usize) -> Result<Option<Entry>, LossError> {
    let fields: Vec<&str> = content.split_whitespace().collect();
    match fields.as_slice() {
        [] => Ok(None),
        ["0"] => Ok(Some(Entry::Fate(false))),
        ["1"] => Ok(Some(Entry::Fate(true))),
        [other] => Err(at_line(
            line,
            format!("frame fate must be 0 or 1, got \"{other}\""),
        )),
        [start, end, probability] => parse_interval(start, end, probability, line).map(Some),
        _ => Err(at_line(
            line,
            format!(
                "expected a frame fate (0 or 1) or \"start end probability\", got {} fields",
                fields.len()
            ),
        )),
    }
}

fn parse_interval(
    start: &str,
    end: &str,
    probability: &str,
    line: usize,
) -> Result<Entry, LossError> {
    let time = |text: &str| {
        parse_duration(text)
            .map(|d| Time(d.as_nanos()))
            .map_err(|e| at_line(line, e.to_string()))
    };
    let (a, b) = (time(start)?, time(end)?);
    if a >= b {
        return Err(at_line(
            line,
            format!("start ({a}) must be before end ({b})"),
        ));
    }
    let p: f64 = probability.parse().map_err(|_| {
        at_line(
            line,
            format!("probability \"{probability}\" is not a number"),
        )
    })?;
    check_probability(&format!("trace line {line}"), p)?;
    Ok(Entry::Interval(a, b, p))
}

fn check_order(previous: &[(Time, Time, f64)], start: Time, line: usize) -> Result<(), LossError> {
    match previous.last() {
        Some(&(_, end, _)) if start < end => Err(at_line(
            line,
            format!("interval starts at {start}, before the previous one ends ({end}): list intervals in time order without overlap"),
        )),
        _ => Ok(()),
    }
}

fn finish(
    fates: Vec<bool>,
    intervals: Vec<(Time, Time, f64)>,
    repeat_line: Option<usize>,
) -> Result<LossTrace, LossError> {
    if !intervals.is_empty() {
        return match repeat_line {
            Some(line) => Err(at_line(
                line,
                "\"# repeat\" applies only to frame-fate traces",
            )),
            None => Ok(LossTrace::Intervals(intervals)),
        };
    }
    if fates.is_empty() {
        return Err(LossError::new("trace", "no frame fates or intervals found"));
    }
    Ok(LossTrace::Frames {
        lost: fates,
        repeat: repeat_line.is_some(),
    })
}

fn validate_intervals(list: &[(Time, Time, f64)]) -> Result<(), LossError> {
    for (i, &(a, b, p)) in list.iter().enumerate() {
        let param = format!("trace.intervals[{i}]");
        if a >= b {
            return Err(LossError::new(
                param,
                format!("start ({a}) must be before end ({b})"),
            ));
        }
        check_probability(&format!("{param}.probability"), p)?;
        if i > 0 && a < list[i - 1].1 {
            return Err(LossError::new(
                param,
                "must start after the previous interval ends",
            ));
        }
    }
    Ok(())
}

fn at_line(line: usize, reason: impl Into<String>) -> LossError {
    LossError::new(format!("trace line {line}"), reason)
}

fn mixed(line: usize) -> LossError {
    at_line(
        line,
        "a trace holds either frame fates or intervals, not both",
    )
}

/// A loss process replaying a [`LossTrace`].
#[derive(Clone, Debug)]
pub struct TraceReplay {
    trace: Arc<LossTrace>,
    next_frame: usize,
    last_lost: bool,
    rng: Pcg64Mcg,
    counts: FateCounts,
}

impl TraceReplay {
    pub fn new(trace: Arc<LossTrace>, frame_seed: u64) -> TraceReplay {
        TraceReplay {
            trace,
            next_frame: 0,
            last_lost: false,
            rng: frame_rng(frame_seed),
            counts: FateCounts::default(),
        }
    }

    fn next_fate(&mut self, lost: &[bool], repeat: bool) -> bool {
        let k = self.next_frame;
        self.next_frame = self.next_frame.saturating_add(1);
        match lost.get(k) {
            Some(&fate) => fate,
            None if repeat && !lost.is_empty() => lost[k % lost.len()],
            None => false,
        }
    }
}

/// The loss probability of a frame starting at `t`.
fn interval_probability(list: &[(Time, Time, f64)], t: Time) -> f64 {
    let index = list.partition_point(|&(start, _, _)| start <= t);
    match index.checked_sub(1).map(|i| list[i]) {
        Some((_, end, p)) if t < end => p,
        _ => 0.0,
    }
}

impl LossProcess for TraceReplay {
    fn is_lost(&mut self, _now: Time, frame: &FrameInfo) -> bool {
        let trace = Arc::clone(&self.trace);
        let lost = match &*trace {
            LossTrace::Frames { lost, repeat } => self.next_fate(lost, *repeat),
            LossTrace::Intervals(list) => {
                draw_error(&mut self.rng, interval_probability(list, frame.tx_start))
            }
        };
        self.last_lost = lost;
        self.counts.record(lost)
    }

    /// Intervals: 1 inside an interval with a nonzero loss probability.
    /// Frame traces have no notion of time, so they report the fate of the
    /// most recently decided frame.
    fn state_at(&mut self, _now: Time, t: Time) -> u8 {
        match &*self.trace {
            LossTrace::Frames { .. } => u8::from(self.last_lost),
            LossTrace::Intervals(list) => u8::from(interval_probability(list, t) > 0.0),
        }
    }

    fn counts(&self) -> (u64, u64) {
        self.counts.get()
    }
}
