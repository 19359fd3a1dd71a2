//! Checks on the merged logs of a group's members (all processes on one host, so their wall-clock
//! `ts_ms` can be merged): (a) no partition owned by two members at the same moment, (b) once
//! settled every partition owned by exactly one live member, (c) generations within a bound.
//!
//! Ownership comes from each ownership event's `owned` field (`assigned`, `revoked`, `lost`; `left`
//! owns nothing); a member whose process ended owns nothing from `ended_at_ms` on. At equal
//! timestamps releases are applied before acquisitions: a hand-over logged within one millisecond
//! is not a double ownership (the clock cannot order it).

use super::member::{Event, Member, TopicPartition};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::time::{Duration, Instant};

/// One member's log: what it printed and when its process ended, if it did.
#[derive(Clone, Debug)]
pub struct MemberLog {
    /// A name for messages.
    pub member: String,
    pub events: Vec<Event>,
    /// Wall-clock ms at which the process was seen to have ended (killed or exited).
    pub ended_at_ms: Option<u64>,
}

/// The pairs `(topic, p)` for `p` in `range`.
pub fn partitions(topic: &str, range: std::ops::Range<i32>) -> BTreeSet<TopicPartition> {
    range.map(|p| (topic.to_string(), p)).collect()
}

/// One step of the merged timeline.
#[derive(Debug)]
struct Change {
    ts_ms: u64,
    /// 0: release, 1: acquire (releases first at equal timestamps).
    order: u8,
    member: usize,
    partitions: BTreeSet<TopicPartition>,
    /// The event it comes from (`ended` for the process end).
    cause: String,
}

fn timeline(logs: &[MemberLog]) -> Vec<Change> {
    let mut changes = Vec::new();
    for (m, log) in logs.iter().enumerate() {
        let mut owned: BTreeSet<TopicPartition> = BTreeSet::new();
        for e in &log.events {
            let Some(now) = &e.owned else { continue };
            let released: BTreeSet<_> = owned.difference(now).cloned().collect();
            let acquired: BTreeSet<_> = now.difference(&owned).cloned().collect();
            if !released.is_empty() {
                changes.push(Change {
                    ts_ms: e.ts_ms,
                    order: 0,
                    member: m,
                    partitions: released,
                    cause: e.event.clone(),
                });
            }
            if !acquired.is_empty() {
                changes.push(Change {
                    ts_ms: e.ts_ms,
                    order: 1,
                    member: m,
                    partitions: acquired,
                    cause: e.event.clone(),
                });
            }
            owned = now.clone();
        }
        if let (Some(ts), false) = (log.ended_at_ms, owned.is_empty()) {
            changes.push(Change { ts_ms: ts, order: 0, member: m, partitions: owned, cause: "ended".into() });
        }
    }
    // stable: a member's own changes keep their printed order
    changes.sort_by_key(|c| (c.ts_ms, c.order));
    changes
}

/// (a) No partition is owned by two members at the same moment. `Err` lists every overlap.
pub fn check_no_double_ownership(logs: &[MemberLog]) -> Result<(), String> {
    let mut owner: BTreeMap<TopicPartition, (usize, u64)> = BTreeMap::new();
    let mut problems = String::new();
    for c in timeline(logs) {
        for tp in &c.partitions {
            if c.order == 0 {
                if owner.get(tp).is_some_and(|(m, _)| *m == c.member) {
                    owner.remove(tp);
                }
                continue;
            }
            if let Some((other, since)) = owner.get(tp) {
                if *other != c.member {
                    let _ = writeln!(
                        problems,
                        "{}-{} owned by {} (since {since}) and by {} (from {}, '{}')",
                        tp.0, tp.1, logs[*other].member, logs[c.member].member, c.ts_ms, c.cause
                    );
                }
            }
            owner.insert(tp.clone(), (c.member, c.ts_ms));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("double ownership:\n{problems}"))
    }
}

/// Every member's lines merged by `ts_ms`, one per line prefixed with the member: for failure
/// messages.
pub fn merged_lines(logs: &[MemberLog]) -> String {
    let mut lines: Vec<(u64, usize, String)> = Vec::new();
    for (m, log) in logs.iter().enumerate() {
        for e in &log.events {
            lines.push((e.ts_ms, m, format!("{} {}: {}", e.ts_ms, log.member, e.raw)));
        }
        if let Some(ts) = log.ended_at_ms {
            lines.push((ts, m, format!("{ts} {}: (process ended)", log.member)));
        }
    }
    lines.sort_by_key(|(ts, m, _)| (*ts, *m));
    lines.into_iter().map(|(_, _, l)| l).collect::<Vec<_>>().join("\n")
}

/// Who owns what at the end of the logs: every live (not ended) member's latest `owned`.
pub fn final_ownership(logs: &[MemberLog]) -> BTreeMap<String, BTreeSet<TopicPartition>> {
    logs.iter()
        .filter(|l| l.ended_at_ms.is_none())
        .map(|l| (l.member.clone(), l.events.iter().rev().find_map(|e| e.owned.clone()).unwrap_or_default()))
        .collect()
}

/// (b) At the end of the logs every partition of `expected` is owned by exactly one live member
/// and no live member owns anything else. `Err` says what is missing, doubled or extra.
pub fn check_settled(logs: &[MemberLog], expected: &BTreeSet<TopicPartition>) -> Result<(), String> {
    let owned = final_ownership(logs);
    let mut owners: BTreeMap<&TopicPartition, Vec<&str>> = BTreeMap::new();
    for (m, set) in &owned {
        for tp in set {
            owners.entry(tp).or_default().push(m);
        }
    }
    let mut problems = String::new();
    for tp in expected {
        match owners.get(tp).map(Vec::len).unwrap_or(0) {
            1 => {}
            0 => {
                let _ = writeln!(problems, "{}-{} owned by no live member", tp.0, tp.1);
            }
            _ => {
                let _ = writeln!(problems, "{}-{} owned by {:?}", tp.0, tp.1, owners[tp]);
            }
        }
    }
    for (tp, ms) in &owners {
        if !expected.contains(*tp) {
            let _ = writeln!(problems, "{}-{} is not expected but owned by {ms:?}", tp.0, tp.1);
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("not settled:\n{problems}ownership: {owned:?}"))
    }
}

/// The distinct generation ids (member epochs for consumer-protocol members) in the members'
/// ownership events.
pub fn generations(logs: &[MemberLog]) -> BTreeSet<i32> {
    logs.iter().flat_map(|l| l.events.iter()).filter(|e| e.owned.is_some()).filter_map(|e| e.generation_id).collect()
}

/// (c) The logs show at most `max` distinct generations.
pub fn check_generations(logs: &[MemberLog], max: usize) -> Result<(), String> {
    let gens = generations(logs);
    if gens.len() <= max {
        Ok(())
    } else {
        Err(format!("{} generations (bound {max}): {gens:?}", gens.len()))
    }
}

/// Waits (at most `timeout`) until every member has had an assignment, their ownership is
/// exactly `expected` (see [`check_settled`]) and nothing has been printed for `quiet`. `Err` carries the last reason and every
/// member's diagnostics.
pub fn wait_settled(
    members: &mut [&mut Member],
    expected: &BTreeSet<TopicPartition>,
    timeout: Duration,
    quiet: Duration,
) -> Result<(), String> {
    let deadline = Instant::now() + timeout;
    let mut stable_since: Option<(Instant, usize)> = None;
    loop {
        let logs: Vec<MemberLog> = members.iter_mut().map(|m| m.log()).collect();
        let count: usize = logs.iter().map(|l| l.events.len()).sum();
        let waiting: Vec<&str> =
            logs.iter().filter(|l| !l.events.iter().any(|e| e.owned.is_some())).map(|l| l.member.as_str()).collect();
        let verdict = if waiting.is_empty() {
            check_settled(&logs, expected)
        } else {
            Err(format!("no assignment yet for {waiting:?}"))
        };
        match (&verdict, stable_since) {
            (Ok(()), Some((since, n))) if n == count => {
                if since.elapsed() >= quiet {
                    return Ok(());
                }
            }
            (Ok(()), _) => stable_since = Some((Instant::now(), count)),
            (Err(_), _) => stable_since = None,
        }
        if Instant::now() >= deadline {
            let diag: Vec<String> = members.iter().map(|m| m.diagnostics()).collect();
            return Err(format!(
                "group did not settle within {timeout:?}: {}\n{}",
                verdict.err().unwrap_or_else(|| "ownership kept changing".into()),
                diag.join("\n")
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
