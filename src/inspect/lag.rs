//! Lag status over time, evaluated the way Burrow evaluates it: over a sliding window of
//! samples per partition, a status per partition and the worst of them for the group. No I/O:
//! the caller samples (each `kcp group watch` poll is one sample) and feeds
//! [`LagEvaluator::observe`].
//!
//! # Rules
//!
//! A partition's window holds its last [`LagRules::window`] samples (committed offset, log end,
//! whether a member owns it). A sample taken less than [`LagRules::min_distance_ms`] after the
//! previous one replaces it rather than being added, so a fast poll does not shrink the time the
//! window covers. With lag = log end - committed offset, the latest sample decides, in order:
//!
//! 1. **ERR**: the latest sample could not be read (the committed offset or the log end is a
//!    gap).
//! 2. Nothing is committed for the partition: **UNCOMMITTED** when a member has owned it in
//!    every sample of a window of at least [`LagRules::min_samples`] samples and the log holds
//!    more than [`LagRules::allowed_lag`] records (log end - log start): records wait and the
//!    owner has never committed (a consumer that reads nothing, or never commits); otherwise no
//!    status (`None`): not evaluated.
//! 3. **OK**: the lag is at most [`LagRules::allowed_lag`], or the window has fewer than
//!    [`LagRules::min_samples`] samples (not enough to say more).
//! 4. **REWIND**: the committed offset is below one seen earlier in the window.
//! 5. If the lag was above the allowed lag in every sample of the window:
//!    - the committed offset did not move across the window: **STOP** when no member owns the
//!      partition (nothing will commit it), **STALL** when a member owns it (a consumer that
//!      is alive but stuck);
//!    - **WARN** when the lag never decreased from one sample to the next (the consumer falls
//!      behind).
//! 6. **OK** otherwise.
//!
//! The group's status is the worst of its partitions' in the order OK < UNCOMMITTED < WARN < ERR
//! < STOP < STALL < REWIND (Burrow's codes, and UNCOMMITTED, which Burrow cannot see: it
//! evaluates only partitions with commits); OK when no partition is evaluated.
//!
//! # Where this differs from Burrow, on purpose
//!
//! Burrow reads every commit from `__consumer_offsets`, so it sees a consumer committing the
//! same offset again, and calls STOP a partition whose last commit is older than the window it
//! covers. An admin client sees committed offsets only by polling (OffsetFetch says nothing of
//! when or how often the offset was committed), so an offset that does not move is told apart by
//! ownership instead: STOP without an owner, STALL with one. Burrow also caps a group's status
//! at ERR; here the group keeps the worst partition's status, which says more.
//!
//! ```
//! use kafka_consumer_protocol::inspect::lag::{LagEvaluator, LagRules, LagSample, LagStatus};
//!
//! let mut evaluator = LagEvaluator::new(LagRules { min_samples: 3, ..LagRules::default() });
//! // The consumer owns orders-0 but its committed offset stays at 10 while the log grows.
//! for (at, end) in [(0, 20), (1_000, 30), (2_000, 40)] {
//!     let sample =
//!         LagSample { at_ms: at, committed: Some(10), log_start: Some(0), log_end: Some(end), owned: true, error: false };
//!     evaluator.observe(at, [(("orders".to_string(), 0), sample)]);
//! }
//! assert_eq!(evaluator.status("orders", 0), Some(LagStatus::Stall));
//! assert_eq!(evaluator.group_status(), LagStatus::Stall);
//! ```

use std::collections::{BTreeMap, VecDeque};
use std::fmt;

use super::offsets::PartitionOffsets;

/// A lag status (Burrow's names and severity order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LagStatus {
    /// Keeping up.
    Ok,
    /// Nothing committed, while a member owns the partition and records wait in its log.
    Uncommitted,
    /// The lag grew over the whole window.
    Warn,
    /// The offsets could not be read.
    Err,
    /// Commits stopped: the committed offset does not move and no member owns the partition.
    Stop,
    /// The committed offset does not move while a member owns the partition and lag > 0.
    Stall,
    /// The committed offset went back.
    Rewind,
}

impl LagStatus {
    /// `OK`, `UNCOMMITTED`, `WARN`, `ERR`, `STOP`, `STALL` or `REWIND`.
    pub fn as_str(self) -> &'static str {
        match self {
            LagStatus::Ok => "OK",
            LagStatus::Uncommitted => "UNCOMMITTED",
            LagStatus::Warn => "WARN",
            LagStatus::Err => "ERR",
            LagStatus::Stop => "STOP",
            LagStatus::Stall => "STALL",
            LagStatus::Rewind => "REWIND",
        }
    }
}

impl fmt::Display for LagStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The evaluator's settings (see the module's rules).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LagRules {
    /// Samples kept per partition (Burrow's `intervals`; default 10, at least 1).
    pub window: usize,
    /// Samples needed before anything but OK or ERR is said (default 3).
    pub min_samples: usize,
    /// Lag at or below this is OK (Burrow's `allowed-lag`; default 0).
    pub allowed_lag: i64,
    /// A sample closer than this to the previous one replaces it (Burrow's `min-distance`;
    /// default 0: every sample counts).
    pub min_distance_ms: u64,
}

impl Default for LagRules {
    fn default() -> Self {
        LagRules { window: 10, min_samples: 3, allowed_lag: 0, min_distance_ms: 0 }
    }
}

/// One observation of a partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LagSample {
    /// When it was taken, in milliseconds on any monotonic clock.
    pub at_ms: u64,
    /// The committed offset (`None`: nothing committed).
    pub committed: Option<i64>,
    /// The log-start offset (`None`: unknown, counted as 0).
    pub log_start: Option<i64>,
    /// The log-end offset (`None`: unknown).
    pub log_end: Option<i64>,
    /// Whether a member owns the partition (or is about to).
    pub owned: bool,
    /// Whether the committed offset or the log end could not be read.
    pub error: bool,
}

impl LagSample {
    /// The sample of one row of the offsets view; a committed offset without a log end is an
    /// error (the log end was a gap).
    pub fn from_offsets(at_ms: u64, o: &PartitionOffsets) -> Self {
        LagSample {
            at_ms,
            committed: o.committed_offset,
            log_start: o.log_start_offset,
            log_end: o.log_end_offset,
            owned: o.owner.is_some() || o.pending_to.is_some(),
            error: o.committed_offset.is_some() && o.log_end_offset.is_none(),
        }
    }

    fn lag(&self) -> Option<i64> {
        self.committed.zip(self.log_end).map(|(c, e)| e.saturating_sub(c))
    }
}

/// A change of status ([`LagEvaluator::observe`]): of one partition, or of the group (no topic).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LagStatusChange {
    /// The topic, for a partition's change.
    pub topic: Option<String>,
    /// The partition, for a partition's change.
    pub partition: Option<i32>,
    /// The status before (`None`: not evaluated, or not seen before).
    pub from: Option<LagStatus>,
    /// The status now (`None`: not evaluated, or gone).
    pub to: Option<LagStatus>,
    /// The partition's lag now (the group's total for a group change).
    pub lag: Option<i64>,
}

/// The partition key.
type Key = (String, i32);

/// The most samples a partition's window is allocated for before it fills.
const MAX_PREALLOCATED_WINDOW: usize = 64;

/// Keeps each partition's window and status.
#[derive(Clone, Debug, Default)]
pub struct LagEvaluator {
    rules: LagRules,
    windows: BTreeMap<Key, VecDeque<LagSample>>,
    statuses: BTreeMap<Key, Option<LagStatus>>,
    group: Option<LagStatus>,
}

impl LagEvaluator {
    /// An evaluator with `rules` (a window of 0 counts as 1).
    pub fn new(mut rules: LagRules) -> Self {
        rules.window = rules.window.max(1);
        LagEvaluator { rules, ..LagEvaluator::default() }
    }

    /// The rules.
    pub fn rules(&self) -> LagRules {
        self.rules
    }

    /// Adds one sample per partition taken at `at_ms` (partitions absent from it are
    /// forgotten), re-evaluates, and returns the changes: partitions first, in (topic,
    /// partition) order, then the group's. The first observation reports every evaluated
    /// partition and the group as changed from `None`.
    pub fn observe(&mut self, at_ms: u64, samples: impl IntoIterator<Item = (Key, LagSample)>) -> Vec<LagStatusChange> {
        let mut seen: BTreeMap<Key, LagSample> = samples.into_iter().collect();
        self.windows.retain(|k, _| seen.contains_key(k));
        // A window is allocated once at its full size (bounded: the rules are the caller's, and
        // a long window still grows as it fills); doubling would hold 16 samples for 10.
        let capacity = self.rules.window.min(MAX_PREALLOCATED_WINDOW);
        for (key, sample) in &mut seen {
            sample.at_ms = at_ms;
            let window = self.windows.entry(key.clone()).or_insert_with(|| VecDeque::with_capacity(capacity));
            match window.back() {
                Some(last) if at_ms.saturating_sub(last.at_ms) < self.rules.min_distance_ms => {
                    window.pop_back();
                }
                _ => {}
            }
            // Room first, then the sample: the window never holds one more than it keeps.
            while window.len() >= self.rules.window.max(1) {
                window.pop_front();
            }
            window.push_back(*sample);
        }
        let mut changes = Vec::new();
        let mut statuses = BTreeMap::new();
        let mut total: Option<i64> = None;
        for (key, window) in &self.windows {
            let status = evaluate(&self.rules, window);
            let before = self.statuses.get(key).copied().flatten();
            let lag = window.back().and_then(LagSample::lag);
            if let Some(l) = lag {
                total = Some(total.unwrap_or(0).saturating_add(l));
            }
            if before != status || !self.statuses.contains_key(key) && status.is_some() {
                changes.push(LagStatusChange {
                    topic: Some(key.0.clone()),
                    partition: Some(key.1),
                    from: before,
                    to: status,
                    lag,
                });
            }
            statuses.insert(key.clone(), status);
        }
        for (key, before) in &self.statuses {
            if before.is_some() && !statuses.contains_key(key) {
                changes.push(LagStatusChange {
                    topic: Some(key.0.clone()),
                    partition: Some(key.1),
                    from: *before,
                    to: None,
                    lag: None,
                });
            }
        }
        changes.sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
        self.statuses = statuses;
        let group = self.group_status();
        if self.group != Some(group) {
            changes.push(LagStatusChange {
                topic: None,
                partition: None,
                from: self.group,
                to: Some(group),
                lag: total,
            });
            self.group = Some(group);
        }
        changes
    }

    /// A partition's status (`None`: not evaluated or unknown).
    pub fn status(&self, topic: &str, partition: i32) -> Option<LagStatus> {
        self.statuses.get(&(topic.to_owned(), partition)).copied().flatten()
    }

    /// A partition's window of samples, oldest first (`None` when it is not tracked).
    pub fn window(&self, topic: &str, partition: i32) -> Option<&VecDeque<LagSample>> {
        self.windows.get(&(topic.to_owned(), partition))
    }

    /// Every partition's status, in (topic, partition) order.
    pub fn statuses(&self) -> impl Iterator<Item = (&str, i32, Option<LagStatus>)> {
        self.statuses.iter().map(|((t, p), s)| (t.as_str(), *p, *s))
    }

    /// The group's status: the worst partition's, OK when none is evaluated.
    pub fn group_status(&self) -> LagStatus {
        self.statuses.values().flatten().copied().max().unwrap_or(LagStatus::Ok)
    }
}

/// One partition's status from its window (oldest sample first), by the module's rules.
pub fn evaluate(rules: &LagRules, window: &VecDeque<LagSample>) -> Option<LagStatus> {
    let last = window.back()?;
    if last.error {
        return Some(LagStatus::Err);
    }
    let Some(committed) = last.committed else {
        let waiting = last.log_end.map(|end| end.saturating_sub(last.log_start.unwrap_or(0)));
        let owned_throughout = window.len() >= rules.min_samples.max(1)
            && window.iter().all(|s| s.owned && s.committed.is_none() && !s.error);
        return (owned_throughout && waiting.is_some_and(|w| w > rules.allowed_lag)).then_some(LagStatus::Uncommitted);
    };
    let lag = last.lag()?;
    if lag <= rules.allowed_lag || window.len() < rules.min_samples.max(1) {
        return Some(LagStatus::Ok);
    }
    let readable: Vec<&LagSample> = window.iter().filter(|s| !s.error && s.committed.is_some()).collect();
    if readable.iter().any(|s| s.committed.is_some_and(|c| c > committed)) {
        return Some(LagStatus::Rewind);
    }
    let lags: Vec<i64> = readable.iter().filter_map(|s| s.lag()).collect();
    let never_ok = lags.iter().all(|&l| l > rules.allowed_lag);
    if !never_ok {
        return Some(LagStatus::Ok);
    }
    if readable.iter().all(|s| s.committed == Some(committed)) {
        return Some(if last.owned { LagStatus::Stall } else { LagStatus::Stop });
    }
    if lags.windows(2).all(|w| w[1] >= w[0]) {
        return Some(LagStatus::Warn);
    }
    Some(LagStatus::Ok)
}

/// A partition's log end over time, to estimate when an offset was written: the fallback of lag in
/// seconds where the record at the committed offset can no longer be read (retention), as
/// kafka-lag-exporter measured it.
///
/// Holds at most `capacity` points (time, log end), oldest first. A run of points with the same
/// log end keeps only its first and last (the log did not move between them), and a point whose
/// log end went down (a truncated or recreated partition) starts the history again.
///
/// [`written_at`](Self::written_at) interpolates linearly between the two points that bracket
/// the offset; below the oldest point it extrapolates from the oldest and newest points, but never
/// to a time after the oldest point (the offset was written before it).
///
/// ```
/// use kafka_consumer_protocol::inspect::lag::LogEndHistory;
///
/// let mut history = LogEndHistory::new(60);
/// history.push(10_000, 100);
/// history.push(20_000, 200);
/// // Offset 150 was written half-way between the two observations.
/// assert_eq!(history.written_at(150), Some(15_000));
/// // At or past the log end: nothing is waiting.
/// assert_eq!(history.written_at(200), None);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LogEndHistory {
    capacity: usize,
    points: VecDeque<(u64, i64)>,
}

impl LogEndHistory {
    /// An empty history of at most `capacity` points (at least 2).
    pub fn new(capacity: usize) -> Self {
        LogEndHistory { capacity: capacity.max(2), points: VecDeque::new() }
    }

    /// Adds the log end `log_end` seen at `at_ms` (milliseconds since the epoch). A point older
    /// than the newest is ignored.
    pub fn push(&mut self, at_ms: u64, log_end: i64) {
        if let Some(&(last_at, last_end)) = self.points.back() {
            if at_ms < last_at {
                return;
            }
            if log_end < last_end {
                self.points.clear();
            } else if log_end == last_end {
                // Keep the run's first and last points only.
                let len = self.points.len();
                if len >= 2 && self.points[len - 2].1 == log_end {
                    self.points.pop_back();
                }
            }
        }
        self.points.push_back((at_ms, log_end));
        while self.points.len() > self.capacity {
            self.points.pop_front();
        }
    }

    /// The points held, oldest first.
    pub fn points(&self) -> impl Iterator<Item = (u64, i64)> + '_ {
        self.points.iter().copied()
    }

    /// When the log end passed `offset`, estimated (ms since the epoch): `None` when the offset
    /// is at or past the newest log end (nothing waits), or with fewer than two points to draw a
    /// line through.
    pub fn written_at(&self, offset: i64) -> Option<u64> {
        let &(newest_at, newest_end) = self.points.back()?;
        if offset >= newest_end || self.points.len() < 2 {
            return None;
        }
        let at = |(t, o): (u64, i64), (t2, o2): (u64, i64)| -> Option<f64> {
            if o2 == o {
                return None;
            }
            Some(t2 as f64 - (o2 - offset) as f64 * (t2 as f64 - t as f64) / (o2 - o) as f64)
        };
        let &(oldest_at, oldest_end) = self.points.front()?;
        let estimate = if offset < oldest_end {
            // Before everything seen: extrapolate, but no later than the oldest point.
            at((oldest_at, oldest_end), (newest_at, newest_end))?.min(oldest_at as f64)
        } else {
            let right = self.points.iter().position(|&(_, o)| o > offset)?;
            let left = self.points[right - 1];
            at(left, self.points[right])?
        };
        Some(estimate.max(0.0) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(committed: i64, end: i64, owned: bool) -> LagSample {
        LagSample { at_ms: 0, committed: Some(committed), log_start: Some(0), log_end: Some(end), owned, error: false }
    }

    fn run(rules: LagRules, samples: &[LagSample]) -> Option<LagStatus> {
        let mut e = LagEvaluator::new(rules);
        for (i, sample) in samples.iter().enumerate() {
            e.observe(i as u64 * 1_000, [(("t".to_string(), 0), *sample)]);
        }
        e.status("t", 0)
    }

    #[test]
    fn each_rule() {
        let r = LagRules::default();
        assert_eq!(run(r, &[s(10, 10, true), s(20, 20, true), s(30, 30, true)]), Some(LagStatus::Ok));
        assert_eq!(run(r, &[s(10, 15, true), s(20, 30, true), s(30, 50, true)]), Some(LagStatus::Warn));
        assert_eq!(run(r, &[s(10, 15, true), s(10, 30, true), s(10, 50, true)]), Some(LagStatus::Stall));
        assert_eq!(run(r, &[s(10, 15, false), s(10, 30, false), s(10, 30, false)]), Some(LagStatus::Stop));
        assert_eq!(run(r, &[s(10, 15, true), s(30, 40, true), s(5, 50, true)]), Some(LagStatus::Rewind));
        // Lag that went down once in the window is being worked off.
        assert_eq!(run(r, &[s(10, 30, true), s(25, 35, true), s(26, 50, true)]), Some(LagStatus::Ok));
        // Too few samples to judge.
        assert_eq!(run(r, &[s(10, 15, true), s(10, 30, true)]), Some(LagStatus::Ok));
        let unreadable = LagSample { log_end: None, error: true, ..s(10, 0, true) };
        assert_eq!(run(r, &[s(10, 15, true), unreadable]), Some(LagStatus::Err));
        // Owned, never committed, records waiting: named once the window has enough samples.
        let never = LagSample { committed: None, ..s(0, 40, true) };
        assert_eq!(run(r, &[never, never]), None, "too few samples");
        assert_eq!(run(r, &[never, never, never]), Some(LagStatus::Uncommitted));
        // Not owned, or an empty log (everything before the log start is gone): not evaluated.
        let orphan = LagSample { owned: false, ..never };
        assert_eq!(run(r, &[orphan, orphan, orphan]), None, "nothing committed, no owner: not evaluated");
        let empty = LagSample { log_start: Some(40), ..never };
        assert_eq!(run(r, &[empty, empty, empty]), None, "no record waits");
        assert!(LagStatus::Ok < LagStatus::Uncommitted && LagStatus::Uncommitted < LagStatus::Warn);
        // An allowed lag.
        let lenient = LagRules { allowed_lag: 100, ..r };
        assert_eq!(run(lenient, &[s(10, 15, true), s(10, 30, true), s(10, 50, true)]), Some(LagStatus::Ok));
    }

    #[test]
    fn the_window_slides() {
        let r = LagRules { window: 3, ..LagRules::default() };
        // A rewind leaves the window after three more samples.
        let samples = [s(50, 60, true), s(10, 60, true), s(20, 60, true), s(30, 61, true), s(40, 62, true)];
        assert_eq!(run(r, &samples[..3]), Some(LagStatus::Rewind));
        assert_eq!(run(r, &samples), Some(LagStatus::Ok));
        // min_distance: samples closer than 1.5 s replace each other, so three polls 1 s apart
        // are two samples: too few to call a stall.
        let merged = LagRules { min_distance_ms: 1_500, ..LagRules::default() };
        assert_eq!(run(merged, &[s(10, 15, true), s(10, 30, true), s(10, 50, true)]), Some(LagStatus::Ok));
    }

    #[test]
    fn log_end_history_interpolates_and_extrapolates() {
        let mut h = LogEndHistory::new(4);
        assert_eq!(h.written_at(0), None, "no points");
        h.push(1_000, 10);
        assert_eq!(h.written_at(5), None, "one point draws no line");
        h.push(2_000, 20);
        h.push(3_000, 20); // the log did not move
        h.push(4_000, 20); // the run keeps its first and last points
        assert_eq!(h.points().collect::<Vec<_>>(), [(1_000, 10), (2_000, 20), (4_000, 20)]);
        h.push(5_000, 60);
        assert_eq!(h.written_at(15), Some(1_500));
        assert_eq!(h.written_at(40), Some(4_500), "between the run's last point and the next");
        // Before the oldest point: extrapolated along oldest..newest (50 offsets in 4 s), no
        // later than the oldest point.
        assert_eq!(h.written_at(5), Some(600));
        assert_eq!(h.written_at(60), None);
        // The capacity drops the oldest point.
        h.push(6_000, 70);
        assert_eq!(h.points().count(), 4);
        assert_eq!(h.points().next(), Some((2_000, 20)));
        // A log end that goes down starts again; an older point is ignored.
        h.push(7_000, 5);
        h.push(6_500, 9);
        assert_eq!(h.points().collect::<Vec<_>>(), [(7_000, 5)]);
    }

    #[test]
    fn changes_are_reported_once() {
        let mut e = LagEvaluator::new(LagRules::default());
        let key = |p: i32| ("t".to_string(), p);
        let first = e.observe(0, [(key(0), s(10, 10, true)), (key(1), s(5, 9, false))]);
        let firsts: Vec<(Option<i32>, Option<LagStatus>, Option<LagStatus>)> =
            first.iter().map(|c| (c.partition, c.from, c.to)).collect();
        assert_eq!(
            firsts,
            [
                (Some(0), None, Some(LagStatus::Ok)),
                (Some(1), None, Some(LagStatus::Ok)),
                (None, None, Some(LagStatus::Ok))
            ]
        );
        assert_eq!(first[2].lag, Some(4));
        assert!(e.observe(1_000, [(key(0), s(11, 11, true)), (key(1), s(5, 9, false))]).is_empty());
        let third = e.observe(2_000, [(key(0), s(12, 12, true)), (key(1), s(5, 9, false))]);
        let thirds: Vec<(Option<i32>, Option<LagStatus>, Option<LagStatus>)> =
            third.iter().map(|c| (c.partition, c.from, c.to)).collect();
        assert_eq!(
            thirds,
            [(Some(1), Some(LagStatus::Ok), Some(LagStatus::Stop)), (None, Some(LagStatus::Ok), Some(LagStatus::Stop))]
        );
        // A partition that goes away is reported gone; its window is dropped.
        let fourth = e.observe(3_000, [(key(0), s(13, 13, true))]);
        assert_eq!((fourth[0].partition, fourth[0].to), (Some(1), None));
        assert_eq!(e.group_status(), LagStatus::Ok);
        assert_eq!(e.windows.len(), 1);
    }
}
