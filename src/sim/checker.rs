//! The invariant checker, the point of the simulator: a scenario that ever lets two members of
//! the group own one partition fails. Double ownership is checked when a member gains a
//! partition (small groups) and over the whole group after every event (small groups: members x
//! partitions up to about 4,000) or at every settle point (larger ones); a member that left the
//! group but still holds partitions past its session is flagged too. At the end of a run,
//! [`Sim::ownership_reasons`] says why the group did not converge (a partition not owned exactly
//! once, an unbalanced assignment).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::engine::Sim;
use super::is_balanced;
use crate::PartitionSet;

impl Sim<'_> {
    pub(super) fn violation(&mut self, key: String, text: String) {
        if self.violation_keys.insert(key) && self.violations.len() < 100 {
            self.violations.push(format!("t={}ms: {text}", self.now));
        }
    }

    pub(super) fn check_gain(&mut self, name: &str, topic: &str, partition: i32) {
        let me_in = match (self.members.get(name), self.cmembers.get(name)) {
            (_, Some(c)) if c.alive => self.c_in_group(c),
            (Some(m), _) => self.in_group(m),
            _ => return,
        };
        if !me_in {
            return;
        }
        let mut others: Vec<String> = self
            .members
            .iter()
            .filter(|(n, m)| n.as_str() != name && m.view.contains(topic, partition) && self.in_group(m))
            .map(|(n, _)| n.clone())
            .collect();
        others.extend(
            self.cmembers
                .iter()
                .filter(|(n, c)| n.as_str() != name && c.view.contains(topic, partition) && self.c_in_group(c))
                .map(|(n, _)| n.clone()),
        );
        for o in others {
            let text =
                format!("{topic}-{partition} owned by both {o} and {name} (generation {})", self.group_generation());
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
        for (n, c) in &self.cmembers {
            if self.c_in_group(c) {
                for tp in c.view.iter() {
                    owners.entry(tp).or_default().push(n);
                }
            }
        }
        // The broker's own books: no partition assigned or pending revocation at two members.
        let broker_dups = self.modern.as_ref().map(|mg| mg.double_assigned()).unwrap_or_default();
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
        for text in broker_dups {
            self.violation(format!("broker-{text}"), text);
        }
        for (n, held) in late {
            let text = format!("{n} still owns partitions {held}ms after it left the group");
            self.violation(format!("late-{n}"), text);
        }
    }

    /// Why the live members' final ownership is not converged: a partition of a subscribed topic
    /// not owned exactly once (or one of an unsubscribed topic owned), an unbalanced assignment.
    pub(super) fn ownership_reasons(
        &self,
        live: &[(&str, &PartitionSet, BTreeSet<String>)],
        reasons: &mut Vec<String>,
    ) {
        let subscribed: BTreeSet<&String> = live.iter().flat_map(|m| m.2.iter()).collect();
        let mut count: BTreeMap<(&str, i32), u32> = BTreeMap::new();
        for m in live {
            for tp in m.1.iter() {
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
        let assign: BTreeMap<String, PartitionSet> = live.iter().map(|m| (m.0.to_owned(), m.1.clone())).collect();
        let subs: BTreeMap<String, BTreeSet<String>> = live.iter().map(|m| (m.0.to_owned(), m.2.clone())).collect();
        if !is_balanced(&assign, &subs) {
            reasons.push(format!(
                "the assignment is not balanced: {:?}",
                assign.values().map(PartitionSet::len).collect::<Vec<_>>()
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::sim::engine::run_with_faulty_reconciliation;
    use crate::sim::{run, MemberSpec, Scenario, Step};

    fn rolling_upgrade() -> Scenario {
        let mut s = Scenario::new(7, [("orders", 6)]);
        for id in ["a", "b", "c"] {
            s.members.push(MemberSpec::new(id, ["cooperative-sticky"], ["orders"]));
        }
        for id in ["a", "b", "c"] {
            s.push(Step::Upgrade(id.into()));
        }
        s
    }

    #[test]
    fn the_checker_catches_a_partition_handed_over_before_its_revocation() {
        let s = rolling_upgrade();
        let good = run(&s).unwrap();
        assert!(good.summary.violations.is_empty(), "{:?}", good.summary.violations);
        let bad = run_with_faulty_reconciliation(&s).unwrap();
        assert!(
            bad.summary.violations.iter().any(|v| v.contains("owned by")),
            "the checker missed the early hand-over: {:?}",
            bad.summary.violations
        );
    }
}
