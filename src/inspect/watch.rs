//! The change events of a group watched over time, as a pure function of successive snapshots.
//!
//! A [`Watcher`] is fed one [`Snapshot`] per poll, with the time of the poll, and returns what
//! changed since the previous one. It does no I/O and reads no clock, so the same snapshots and
//! times always give the same events.
//!
//! ```
//! use std::collections::BTreeMap;
//! use kafka_consumer_protocol::inspect::watch::{WatchEvent, Snapshot, StormThreshold, Watcher};
//! use kafka_consumer_protocol::TopicPartitions;
//!
//! let stable = |members: &[(&str, Vec<i32>)]| Snapshot {
//!     state: "Stable".into(),
//!     epoch: None,
//!     reports_assignments: true,
//!     members: members
//!         .iter()
//!         .map(|(id, p)| (id.to_string(), Some(vec![TopicPartitions::new("orders", p.clone())])))
//!         .collect::<BTreeMap<_, _>>(),
//!     diagnostics: vec![],
//! };
//! let mut watcher = Watcher::new(StormThreshold::default());
//! watcher.observe(0, stable(&[("a", vec![0, 1])]));
//! let events = watcher.observe(1_000, stable(&[("a", vec![0]), ("b", vec![1])]));
//! assert_eq!(
//!     events,
//!     [
//!         WatchEvent::Rebalance { state: "Stable".into(), inferred: true },
//!         WatchEvent::MemberJoined { member_id: "b".into() },
//!         WatchEvent::AssignmentChanged {
//!             member_id: "a".into(),
//!             added: vec![],
//!             removed: vec![TopicPartitions::new("orders", [1])]
//!         },
//!         WatchEvent::AssignmentChanged {
//!             member_id: "b".into(),
//!             added: vec![TopicPartitions::new("orders", [1])],
//!             removed: vec![]
//!         },
//!     ]
//! );
//! ```

use core::fmt;
use core::str::FromStr;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::classic::{ClassicGroup, ClassicGroupReport};
use super::consumer::ConsumerGroup;
use super::diagnostic::Diagnostic;
use super::partitions::{by_topic, to_groups, PartitionsByTopic};
use crate::TopicPartitions;

/// What one poll of a group showed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// The broker's state name (`Dead` for a group that does not exist).
    pub state: String,
    /// The group's generation: the group epoch of a KIP-848 group; for a classic group, whose
    /// DescribeGroups reports no generation, one more than the highest generation its members
    /// claim in their subscriptions (each claims the generation it joined from; see
    /// [`ClassicMemberReport::generation`](super::ClassicMemberReport::generation)), `None`
    /// when no member claims one. A rise of N between two polls is N rebalances.
    pub epoch: Option<i32>,
    /// Whether this poll carries the members' assignments and the payload diagnostics (a
    /// classic group only reports them while `Stable`). When it does not, the previous
    /// assignments and diagnostics are kept rather than reported as gone.
    pub reports_assignments: bool,
    /// Every member, with its assignment when known.
    pub members: BTreeMap<String, Option<Vec<TopicPartitions>>>,
    /// The group's findings.
    pub diagnostics: Vec<Diagnostic>,
}

impl Snapshot {
    /// A snapshot of an inspected classic group.
    pub fn from_classic(group: &ClassicGroup, report: &ClassicGroupReport) -> Self {
        let members = group
            .members
            .iter()
            .zip(&report.members)
            .map(|(m, r)| {
                (m.member_id.clone(), r.assignment.decoded().map(|a| a.view().assigned_partitions().to_owned()))
            })
            .collect();
        let claimed = report.members.iter().filter_map(|r| r.generation()).max();
        Snapshot {
            state: group.state.clone(),
            epoch: claimed.map(|g| g.saturating_add(1)),
            reports_assignments: group.state == "Stable",
            members,
            diagnostics: report.diagnostics.clone(),
        }
    }

    /// A snapshot of a KIP-848 group: each member's current assignment.
    pub fn from_consumer(group: &ConsumerGroup, diagnostics: &[Diagnostic]) -> Self {
        Snapshot {
            state: group.state.clone(),
            epoch: Some(group.group_epoch),
            reports_assignments: true,
            members: group.members.iter().map(|m| (m.member_id.clone(), Some(m.assignment.clone()))).collect(),
            diagnostics: diagnostics.to_vec(),
        }
    }
}

/// One change. New kinds of events may be added.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WatchEvent {
    /// The state changed (`previous` is `None` on the first poll).
    State {
        /// The state before.
        previous: Option<String>,
        /// The state now.
        state: String,
    },
    /// A rebalance started: the group entered a rebalancing state, its generation (epoch)
    /// moved, or (`inferred`) its members or assignments changed between two polls that both saw
    /// it settled, so a whole rebalance happened in between. A generation that rose by N between
    /// two polls is N rebalances: N events.
    Rebalance {
        /// The state now.
        state: String,
        /// Whether it was inferred from the changes rather than seen in a rebalancing state.
        inferred: bool,
    },
    /// A member appeared.
    MemberJoined {
        /// Its id.
        member_id: String,
    },
    /// A member disappeared.
    MemberLeft {
        /// Its id.
        member_id: String,
    },
    /// A member's assignment changed.
    AssignmentChanged {
        /// Its id.
        member_id: String,
        /// Partitions it gained.
        added: Vec<TopicPartitions>,
        /// Partitions it lost.
        removed: Vec<TopicPartitions>,
    },
    /// A finding appeared, or (`resolved`) went away.
    Diagnostic {
        /// The finding.
        diagnostic: Diagnostic,
        /// Whether it went away.
        resolved: bool,
    },
    /// More rebalances within the window than the threshold allows. Reported once when the
    /// count crosses the threshold, again only after it has fallen back.
    Storm {
        /// Rebalances seen within the window, counting this one.
        rebalances: u32,
        /// The threshold that was crossed.
        threshold: StormThreshold,
    },
}

impl WatchEvent {
    /// The event's name in `kcp group watch` output.
    pub fn name(&self) -> &'static str {
        match self {
            WatchEvent::State { .. } => "state",
            WatchEvent::Rebalance { .. } => "rebalance",
            WatchEvent::MemberJoined { .. } => "member_joined",
            WatchEvent::MemberLeft { .. } => "member_left",
            WatchEvent::AssignmentChanged { .. } => "assignment_changed",
            WatchEvent::Diagnostic { .. } => "diagnostic",
            WatchEvent::Storm { .. } => "storm",
        }
    }
}

/// A rebalance storm: more than `rebalances` rebalances within `window_secs` seconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StormThreshold {
    /// Rebalances allowed within the window.
    pub rebalances: u32,
    /// The window, in seconds.
    pub window_secs: u32,
}

impl Default for StormThreshold {
    /// 5 rebalances per 60 seconds.
    fn default() -> Self {
        StormThreshold { rebalances: 5, window_secs: 60 }
    }
}

impl fmt::Display for StormThreshold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.rebalances, self.window_secs)
    }
}

impl FromStr for StormThreshold {
    type Err = String;

    /// `N/SECONDS`, for example `5/60`; both at least 1.
    fn from_str(s: &str) -> Result<Self, String> {
        let (n, secs) = s.split_once('/').ok_or_else(|| format!("{s:?} is not N/SECONDS (for example 5/60)"))?;
        let rebalances: u32 =
            n.trim().parse().map_err(|_| format!("{n:?} is not a number of rebalances (for example 5/60)"))?;
        let window_secs: u32 =
            secs.trim().parse().map_err(|_| format!("{secs:?} is not a number of seconds (for example 5/60)"))?;
        if rebalances == 0 || window_secs == 0 {
            return Err(format!("{s:?}: both the count and the window must be at least 1"));
        }
        Ok(StormThreshold { rebalances, window_secs })
    }
}

fn is_rebalancing(state: &str) -> bool {
    matches!(state, "PreparingRebalance" | "CompletingRebalance" | "Assigning" | "Reconciling")
}

/// Turns successive snapshots of one group into [`WatchEvent`]s.
#[derive(Clone, Debug)]
pub struct Watcher {
    threshold: StormThreshold,
    previous: Option<Snapshot>,
    /// The last known assignment of every current member.
    assignments: BTreeMap<String, PartitionsByTopic>,
    /// The last reported findings, kept across polls that do not report them.
    diagnostics: BTreeSet<Diagnostic>,
    /// Times of the most recent rebalances, at most `threshold.rebalances + 1` of them.
    rebalances: VecDeque<u64>,
    storming: bool,
    /// The highest generation already counted as a rebalance (or seen first).
    counted_epoch: Option<i32>,
    /// Every rebalance counted since the first poll.
    total_rebalances: u64,
}

impl Watcher {
    /// A watcher with a storm threshold.
    pub fn new(threshold: StormThreshold) -> Self {
        Watcher {
            threshold,
            previous: None,
            assignments: BTreeMap::new(),
            diagnostics: BTreeSet::new(),
            rebalances: VecDeque::new(),
            storming: false,
            counted_epoch: None,
            total_rebalances: 0,
        }
    }

    /// The rebalances counted since the first poll: every generation (epoch) the group went
    /// through, and once for a rebalance seen only by its state or its changes. Unlike the
    /// [`WatchEvent::Rebalance`] events, which stop at the storm window's worth per poll, this
    /// counts a jump of N generations as N.
    pub fn rebalances_seen(&self) -> u64 {
        self.total_rebalances
    }

    /// Records one poll taken at `now_ms` (milliseconds on any clock that does not go back) and
    /// returns what changed, in this order: state, rebalance, members that left, members that
    /// joined, assignment changes, resolved then new findings, storm. The first poll only
    /// reports its state (everything else is the baseline).
    pub fn observe(&mut self, now_ms: u64, snapshot: Snapshot) -> Vec<WatchEvent> {
        let mut events = Vec::new();
        let Some(previous) = self.previous.take() else {
            events.push(WatchEvent::State { previous: None, state: snapshot.state.clone() });
            for (id, assignment) in &snapshot.members {
                if let Some(a) = assignment {
                    self.assignments.insert(id.clone(), by_topic(a));
                }
            }
            if snapshot.reports_assignments {
                self.diagnostics = snapshot.diagnostics.iter().cloned().collect();
            }
            self.counted_epoch = snapshot.epoch;
            self.previous = Some(snapshot);
            return events;
        };

        if previous.state != snapshot.state {
            events.push(WatchEvent::State { previous: Some(previous.state.clone()), state: snapshot.state.clone() });
        }

        let left: Vec<&String> = previous.members.keys().filter(|m| !snapshot.members.contains_key(*m)).collect();
        let joined: Vec<&String> = snapshot.members.keys().filter(|m| !previous.members.contains_key(*m)).collect();
        let mut changes = Vec::new();
        for (id, assignment) in &snapshot.members {
            let Some(now) = assignment.as_ref().map(|a| by_topic(a)) else { continue };
            let before = self.assignments.get(id).cloned().unwrap_or_default();
            let added = difference(&now, &before);
            let removed = difference(&before, &now);
            if !added.is_empty() || !removed.is_empty() {
                changes.push(WatchEvent::AssignmentChanged { member_id: id.clone(), added, removed });
            }
            self.assignments.insert(id.clone(), now);
        }
        for id in &left {
            self.assignments.remove(*id);
        }

        let entered = is_rebalancing(&snapshot.state) && !is_rebalancing(&previous.state);
        let settled_both = !is_rebalancing(&snapshot.state) && !is_rebalancing(&previous.state);
        let changed_between = settled_both && (!left.is_empty() || !joined.is_empty() || !changes.is_empty());
        // Every generation the group went through since the last counted one is a rebalance, so
        // two within one interval count twice; a rebalance seen only by its state or its changes
        // counts once and stands for the next generation (which then does not count again).
        let generations = match (self.counted_epoch, snapshot.epoch) {
            (Some(counted), Some(now)) if now > counted => u32::try_from(now - counted).unwrap_or(u32::MAX),
            _ => 0,
        };
        let count = if generations > 0 { generations } else { u32::from(entered || changed_between) };
        self.total_rebalances = self.total_rebalances.saturating_add(u64::from(count));
        self.counted_epoch = match (self.counted_epoch, snapshot.epoch) {
            (Some(counted), Some(now)) => {
                Some(now.max(counted.saturating_add(i32::try_from(count).unwrap_or(i32::MAX))))
            }
            (Some(counted), None) => Some(counted.saturating_add(i32::try_from(count).unwrap_or(i32::MAX))),
            (None, now) => now,
        };
        // Only the window's worth of rebalances is kept and reported: a jump of a billion
        // generations is not a billion events.
        let keep = self.threshold.rebalances as usize + 1;
        for _ in 0..(count as usize).min(keep) {
            events.push(WatchEvent::Rebalance { state: snapshot.state.clone(), inferred: !entered && settled_both });
            self.rebalances.push_back(now_ms);
        }
        while self.rebalances.len() > keep {
            self.rebalances.pop_front();
        }

        events.extend(left.iter().map(|m| WatchEvent::MemberLeft { member_id: (*m).clone() }));
        events.extend(joined.iter().map(|m| WatchEvent::MemberJoined { member_id: (*m).clone() }));
        events.extend(changes);

        if snapshot.reports_assignments {
            let now: BTreeSet<Diagnostic> = snapshot.diagnostics.iter().cloned().collect();
            let identities: BTreeSet<_> = now.iter().map(Diagnostic::identity).collect();
            let old_identities: BTreeSet<_> = self.diagnostics.iter().map(Diagnostic::identity).collect();
            for d in &self.diagnostics {
                if !identities.contains(&d.identity()) {
                    events.push(WatchEvent::Diagnostic { diagnostic: d.clone(), resolved: true });
                }
            }
            for d in &now {
                if !old_identities.contains(&d.identity()) {
                    events.push(WatchEvent::Diagnostic { diagnostic: d.clone(), resolved: false });
                }
            }
            self.diagnostics = now;
        }

        let window_ms = u64::from(self.threshold.window_secs) * 1000;
        while self.rebalances.front().is_some_and(|&t| now_ms.saturating_sub(t) >= window_ms) {
            self.rebalances.pop_front();
        }
        let count = self.rebalances.len() as u32;
        if count > self.threshold.rebalances {
            if !self.storming {
                self.storming = true;
                events.push(WatchEvent::Storm { rebalances: count, threshold: self.threshold });
            }
        } else {
            self.storming = false;
        }
        self.previous = Some(snapshot);
        events
    }
}

fn difference(a: &PartitionsByTopic, b: &PartitionsByTopic) -> Vec<TopicPartitions> {
    let mut out = PartitionsByTopic::new();
    for (topic, partitions) in a {
        let other = b.get(topic);
        let only: BTreeSet<i32> = partitions.iter().copied().filter(|p| other.is_none_or(|o| !o.contains(p))).collect();
        if !only.is_empty() {
            out.insert(topic.clone(), only);
        }
    }
    to_groups(&out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inspect::DiagnosticKind;

    fn snap(state: &str, members: &[(&str, Option<Vec<i32>>)]) -> Snapshot {
        Snapshot {
            state: state.into(),
            epoch: None,
            reports_assignments: state == "Stable",
            members: members
                .iter()
                .map(|(id, p)| (id.to_string(), p.as_ref().map(|p| vec![TopicPartitions::new("t", p.clone())])))
                .collect(),
            diagnostics: vec![],
        }
    }

    fn names(events: &[WatchEvent]) -> Vec<&'static str> {
        events.iter().map(WatchEvent::name).collect()
    }

    #[test]
    fn first_poll_is_the_baseline() {
        let mut w = Watcher::new(StormThreshold::default());
        let events = w.observe(0, snap("Stable", &[("a", Some(vec![0]))]));
        assert_eq!(events, [WatchEvent::State { previous: None, state: "Stable".into() }]);
        assert!(w.observe(10, snap("Stable", &[("a", Some(vec![0]))])).is_empty());
    }

    #[test]
    fn a_seen_rebalance_keeps_assignments_until_they_are_reported_again() {
        let mut w = Watcher::new(StormThreshold::default());
        w.observe(0, snap("Stable", &[("a", Some(vec![0, 1]))]));
        // During the rebalance the broker reports no assignments: nothing was removed.
        let events = w.observe(1, snap("PreparingRebalance", &[("a", None), ("b", None)]));
        assert_eq!(
            events,
            [
                WatchEvent::State { previous: Some("Stable".into()), state: "PreparingRebalance".into() },
                WatchEvent::Rebalance { state: "PreparingRebalance".into(), inferred: false },
                WatchEvent::MemberJoined { member_id: "b".into() },
            ]
        );
        let events = w.observe(2, snap("CompletingRebalance", &[("a", None), ("b", None)]));
        assert_eq!(names(&events), ["state"], "the same rebalance continues");
        let events = w.observe(3, snap("Stable", &[("a", Some(vec![0])), ("b", Some(vec![1]))]));
        assert_eq!(
            events,
            [
                WatchEvent::State { previous: Some("CompletingRebalance".into()), state: "Stable".into() },
                WatchEvent::AssignmentChanged {
                    member_id: "a".into(),
                    added: vec![],
                    removed: vec![TopicPartitions::new("t", [1])]
                },
                WatchEvent::AssignmentChanged {
                    member_id: "b".into(),
                    added: vec![TopicPartitions::new("t", [1])],
                    removed: vec![]
                },
            ]
        );
    }

    #[test]
    fn a_member_leaving_between_polls_is_an_inferred_rebalance() {
        let mut w = Watcher::new(StormThreshold::default());
        w.observe(0, snap("Stable", &[("a", Some(vec![0])), ("b", Some(vec![1]))]));
        let events = w.observe(1, snap("Stable", &[("a", Some(vec![0, 1]))]));
        assert_eq!(
            events,
            [
                WatchEvent::Rebalance { state: "Stable".into(), inferred: true },
                WatchEvent::MemberLeft { member_id: "b".into() },
                WatchEvent::AssignmentChanged {
                    member_id: "a".into(),
                    added: vec![TopicPartitions::new("t", [1])],
                    removed: vec![]
                },
            ]
        );
        // The group empties.
        let events = w.observe(2, snap("Empty", &[]));
        assert_eq!(names(&events), ["state", "rebalance", "member_left"]);
    }

    #[test]
    fn a_moving_epoch_is_a_rebalance() {
        let mut w = Watcher::new(StormThreshold::default());
        let mut s = snap("Stable", &[("a", Some(vec![0]))]);
        s.epoch = Some(3);
        w.observe(0, s.clone());
        assert!(w.observe(1, s.clone()).is_empty());
        s.epoch = Some(4);
        assert_eq!(w.observe(2, s), [WatchEvent::Rebalance { state: "Stable".into(), inferred: true }]);
    }

    #[test]
    fn every_generation_between_two_polls_is_a_rebalance() {
        // Issue 26: a cooperative rebalance is two generations; within one poll interval the
        // watch saw one change and --storm undercounted.
        let mut w = Watcher::new("3/60".parse().unwrap());
        let mut s = snap("Stable", &[("a", Some(vec![0]))]);
        s.epoch = Some(3);
        w.observe(0, s.clone());
        s.epoch = Some(5);
        assert_eq!(names(&w.observe(1, s.clone())), ["rebalance", "rebalance"]);
        s.epoch = Some(7);
        assert_eq!(names(&w.observe(2, s.clone())), ["rebalance", "rebalance", "storm"]);
        assert_eq!(w.rebalances_seen(), 4);
        // A huge jump reports no more events than the storm window can hold, but counts them all.
        s.epoch = Some(i32::MAX);
        assert_eq!(w.observe(3, s).iter().filter(|e| e.name() == "rebalance").count(), 4);
        assert_eq!(w.rebalances_seen(), 4 + u64::from((i32::MAX - 7) as u32));
    }

    #[test]
    fn a_rebalance_seen_by_its_state_is_not_counted_again_by_its_generation() {
        let mut w = Watcher::new(StormThreshold::default());
        let mut s = snap("Stable", &[("a", Some(vec![0]))]);
        s.epoch = Some(4);
        w.observe(0, s);
        // Entering the rebalance before any member claims the new generation: one rebalance,
        // standing for generation 5.
        let mut p = snap("PreparingRebalance", &[("a", None)]);
        p.epoch = Some(4);
        assert_eq!(names(&w.observe(1, p)), ["state", "rebalance"]);
        let mut done = snap("Stable", &[("a", Some(vec![0]))]);
        done.epoch = Some(5);
        assert_eq!(names(&w.observe(2, done.clone())), ["state"]);
        // Then generation 7 without a poll in between: two more.
        done.epoch = Some(7);
        assert_eq!(names(&w.observe(3, done)), ["rebalance", "rebalance"]);
    }

    #[test]
    fn a_classic_groups_generation_is_one_past_what_its_members_claim() {
        use crate::group_api::DescribedGroupMember;
        use crate::inspect::{inspect_classic, ClassicGroup};
        use crate::{Assignment, Subscription};
        let member = |id: &str, generation: i32| DescribedGroupMember {
            member_id: id.into(),
            member_metadata: Subscription::new(["t"])
                .with_generation_id(generation)
                .encode(crate::Version::V3)
                .unwrap()
                .into(),
            member_assignment: Assignment::new(vec![TopicPartitions::new("t", [0])])
                .encode(crate::Version::V3)
                .unwrap()
                .into(),
            ..DescribedGroupMember::default()
        };
        let group = |members| ClassicGroup {
            group_id: "g".into(),
            state: "Stable".into(),
            protocol_type: "consumer".into(),
            protocol: "range".into(),
            members,
        };
        let g = group(vec![member("a", 6), member("b", -1)]);
        let report = inspect_classic(&g, &Default::default());
        assert_eq!(Snapshot::from_classic(&g, &report).epoch, Some(7));
        let g = group(vec![member("b", -1)]);
        let report = inspect_classic(&g, &Default::default());
        assert_eq!(Snapshot::from_classic(&g, &report).epoch, None);
    }

    #[test]
    fn storm_fires_once_when_the_threshold_is_crossed_and_again_after_calm() {
        let threshold: StormThreshold = "2/10".parse().unwrap();
        let mut w = Watcher::new(threshold);
        w.observe(0, snap("Stable", &[]));
        let mut storms = Vec::new();
        // A rebalance every second: the third within 10 s is a storm.
        for i in 1..=6u64 {
            let s = if i % 2 == 1 { "PreparingRebalance" } else { "Stable" };
            let events = w.observe(i * 2000, snap(s, &[]));
            if events.iter().any(|e| e.name() == "storm") {
                storms.push(i);
            }
            if i == 5 {
                assert!(events.contains(&WatchEvent::Storm { rebalances: 3, threshold }), "{events:?}");
            }
        }
        assert_eq!(storms, [5], "reported once while it lasts");
        // Calm for longer than the window, then rebalances again.
        w.observe(40_000, snap("Stable", &[]));
        let mut storm_again = false;
        for i in 0..6u64 {
            let s = if i % 2 == 0 { "PreparingRebalance" } else { "Stable" };
            storm_again |= w.observe(41_000 + i * 1000, snap(s, &[])).iter().any(|e| e.name() == "storm");
        }
        assert!(storm_again);
    }

    #[test]
    fn rebalances_spread_wider_than_the_window_are_no_storm() {
        let mut w = Watcher::new("2/10".parse().unwrap());
        w.observe(0, snap("Stable", &[]));
        for i in 1..=20u64 {
            let s = if i % 2 == 1 { "PreparingRebalance" } else { "Stable" };
            // One rebalance every 12 s: at most one per window.
            let events = w.observe(i * 6000, snap(s, &[]));
            assert!(!events.iter().any(|e| e.name() == "storm"), "{events:?}");
        }
    }

    #[test]
    fn diagnostics_appear_and_resolve_but_survive_polls_without_payloads() {
        let d = Diagnostic::new(DiagnosticKind::DoubleAssignment, "t-0 twice".into()).partition("t", 0);
        let mut w = Watcher::new(StormThreshold::default());
        w.observe(0, snap("Stable", &[]));
        let mut s = snap("Stable", &[]);
        s.diagnostics = vec![d.clone()];
        assert_eq!(w.observe(1, s.clone()), [WatchEvent::Diagnostic { diagnostic: d.clone(), resolved: false }]);
        // Reworded: the same finding.
        let mut reworded = s.clone();
        reworded.diagnostics[0].message = "t-0 assigned twice".into();
        assert!(w.observe(2, reworded).is_empty());
        assert_eq!(names(&w.observe(3, snap("PreparingRebalance", &[]))), ["state", "rebalance"]);
        let events = w.observe(4, snap("Stable", &[]));
        assert_eq!(names(&events), ["state", "diagnostic"]);
        assert!(matches!(&events[1], WatchEvent::Diagnostic { resolved: true, .. }));
    }

    #[test]
    fn storm_threshold_parsing() {
        assert_eq!("5/60".parse(), Ok(StormThreshold::default()));
        assert_eq!(" 3 / 30 ".parse(), Ok(StormThreshold { rebalances: 3, window_secs: 30 }));
        for bad in ["5", "0/60", "5/0", "x/60", "5/y", "-1/60"] {
            assert!(bad.parse::<StormThreshold>().is_err(), "{bad}");
        }
    }
}
