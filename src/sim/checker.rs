//! The invariant checker, the point of the simulator: a scenario that ever lets two members of
//! the group own one partition fails. Double ownership is checked when a member gains a
//! partition (small groups) and over the whole group after every event (small groups: members x
//! partitions up to about 4,000) or at every settle point (larger ones); a member that left the
//! group but still holds partitions past its session is flagged too. At the end of a run,
//! [`Sim::ownership_reasons`] says why the group did not converge (a partition not owned exactly
//! once, an unbalanced assignment).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::engine::{Sim, SimMember};
use super::is_balanced;
use crate::PartitionSet;

impl Sim<'_> {
    pub(super) fn violation(&mut self, key: String, text: String) {
        if self.violation_keys.insert(key) && self.violations.len() < 100 {
            self.violations.push(format!("t={}ms: {text}", self.now));
        }
    }

    pub(super) fn check_gain(&mut self, name: &str, topic: &str, partition: i32) {
        let Some(me) = self.members.get(name) else { return };
        if !self.in_group(me) {
            return;
        }
        let others: Vec<String> = self
            .members
            .iter()
            .filter(|(n, m)| n.as_str() != name && m.view.contains(topic, partition) && self.in_group(m))
            .map(|(n, _)| n.clone())
            .collect();
        for o in others {
            let text =
                format!("{topic}-{partition} owned by both {o} and {name} (generation {})", self.broker.generation());
            self.violation(format!("dup-{topic}-{partition}-{o}-{name}"), text);
        }
    }

    pub(super) fn full_check(&mut self) {
        let now = self.now;
        let mut owners: HashMap<(&str, i32), Vec<&str>> = HashMap::new();
        let mut late = Vec::new();
        let mut since_updates = Vec::new();
        for (n, m) in &self.members {
            if !m.alive {
                continue;
            }
            let in_group = self.in_group(m);
            if in_group {
                for tp in m.view.iter() {
                    owners.entry(tp).or_default().push(n);
                }
            }
            if !in_group && !m.view.is_empty() && !m.frozen {
                let since = m.out_of_group_since.unwrap_or(now);
                since_updates.push((n.clone(), Some(since)));
                let bound = self.cfg.session_timeout_ms
                    + self.cfg.heartbeat_interval_ms
                    + 4 * (self.cfg.latency_ms + self.cfg.jitter_ms)
                    + 100;
                if now > since + bound {
                    late.push((n.clone(), now - since));
                }
            } else {
                since_updates.push((n.clone(), None));
            }
        }
        let mut dups: Vec<((String, i32), Vec<String>)> = owners
            .into_iter()
            .filter(|(_, v)| v.len() > 1)
            .map(|((t, p), v)| ((t.to_owned(), p), v.into_iter().map(str::to_string).collect()))
            .collect();
        dups.sort();
        for (n, s) in since_updates {
            self.members.get_mut(&n).expect("present").out_of_group_since = s;
        }
        for (tp, v) in dups {
            let text = format!("{}-{} owned by {} members of the group: {v:?}", tp.0, tp.1, v.len());
            self.violation(format!("dup-{}-{}-{v:?}", tp.0, tp.1), text);
        }
        for (n, held) in late {
            let text = format!("{n} still owns partitions {held}ms after it left the group");
            self.violation(format!("late-{n}"), text);
        }
    }

    /// Why the live members' final ownership is not converged: a partition of a subscribed topic
    /// not owned exactly once (or one of an unsubscribed topic owned), an unbalanced assignment.
    pub(super) fn ownership_reasons(&self, live: &[&SimMember], reasons: &mut Vec<String>) {
        let subscribed: BTreeSet<&String> = live.iter().flat_map(|m| m.coord.subscription().iter()).collect();
        let mut count: BTreeMap<(&str, i32), u32> = BTreeMap::new();
        for m in live {
            for tp in m.view.iter() {
                *count.entry(tp).or_default() += 1;
            }
        }
        for (t, i) in &self.cluster.topics {
            for p in 0..i.partitions {
                let n = count.get(&(t.as_str(), p)).copied().unwrap_or(0);
                let want = u32::from(subscribed.contains(t));
                if n != want {
                    reasons.push(format!("{t}-{p} owned {n} times, expected {want}"));
                }
            }
        }
        let assign: BTreeMap<String, PartitionSet> = live.iter().map(|m| (m.spec.id.clone(), m.view.clone())).collect();
        let subs: BTreeMap<String, BTreeSet<String>> =
            live.iter().map(|m| (m.spec.id.clone(), m.coord.subscription().clone())).collect();
        if !is_balanced(&assign, &subs) {
            reasons.push(format!(
                "the assignment is not balanced: {:?}",
                assign.values().map(PartitionSet::len).collect::<Vec<_>>()
            ));
        }
    }
}
