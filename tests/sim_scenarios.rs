//! The scenario files in testdata/scenarios, each with its invariants and tight bounds on
//! rebalances and moved partitions.

use std::collections::{BTreeMap, BTreeSet};

use kafka_consumer_protocol::sim::{json, run, Outcome, TimelineEntry};
use kafka_consumer_protocol::PartitionSet;

fn load(name: &str) -> Outcome {
    let path = format!("{}/testdata/scenarios/{name}.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let scenario = json::parse_scenario(&text).unwrap();
    let out = run(&scenario).unwrap();
    assert!(out.summary.violations.is_empty(), "{name}: {:?}", out.summary.violations);
    out
}

fn converged(name: &str) -> Outcome {
    let out = load(name);
    assert!(out.summary.converged, "{name}: {:?}", out.summary.unconverged);
    out
}

fn events<'a>(o: &'a Outcome, event: &'a str, member: &'a str) -> impl Iterator<Item = &'a TimelineEntry> {
    o.timeline.iter().filter(move |e| e.event == event && e.member.as_deref() == Some(member))
}

fn count(o: &Outcome, event: &str, member: &str) -> usize {
    events(o, event, member).map(|e| PartitionSet::from_groups(&e.partitions).len()).sum()
}

fn sizes(o: &Outcome) -> Vec<usize> {
    o.final_owned.values().map(PartitionSet::len).collect()
}

/// Partitions a member holds at the end that it held at some earlier point but dropped in
/// between (an interruption).
fn interrupted(o: &Outcome, member: &str) -> usize {
    let last = &o.final_owned[member];
    let mut seen = PartitionSet::new();
    let mut gaps = 0;
    for e in &o.timeline {
        let now = e.owned.get(member).map(|p| PartitionSet::from_groups(p)).unwrap_or_default();
        for (t, p) in seen.iter() {
            if last.contains(t, p) && !now.contains(t, p) {
                gaps += 1;
            }
        }
        seen.extend(now.iter());
    }
    gaps
}

#[test]
fn cooperative_scale_out_moves_only_what_balance_needs() {
    let o = converged("scale-out");
    // 12 partitions: 6/6 -> 4/4/4 moves 4, -> 3/3/3/3 moves 3. That is the minimum.
    assert_eq!(o.summary.partitions_moved, 7);
    // Initial join + (join + follow-up) per new member.
    assert!(o.summary.rebalances <= 5, "{}", o.summary.rebalances);
    assert_eq!(sizes(&o), [3, 3, 3, 3]);
    // The members that stay keep the rest without interruption and revoke only what moves.
    for m in ["a", "b"] {
        assert_eq!(interrupted(&o, m), 0, "{m} was interrupted");
        assert_eq!(count(&o, "lost", m), 0);
    }
    assert_eq!(count(&o, "revoked", "a") + count(&o, "revoked", "b") + count(&o, "revoked", "c"), 7);
}

#[test]
fn cooperative_scale_in_moves_only_the_leavers_partitions() {
    let o = converged("scale-in");
    assert_eq!(o.summary.partitions_moved, 3 + 4);
    assert!(o.summary.rebalances <= 3, "{}", o.summary.rebalances);
    assert_eq!(sizes(&o), [6, 6]);
    for m in ["a", "b"] {
        assert_eq!(count(&o, "revoked", m), 0, "{m} revoked something");
        assert_eq!(interrupted(&o, m), 0);
    }
}

#[test]
fn crash_is_detected_by_the_session_timeout() {
    let o = converged("crash");
    assert_eq!(o.summary.rebalances, 2);
    assert_eq!(sizes(&o), [5, 4]);
    // The crash at ~3 s is noticed one session timeout (10 s) later.
    assert!(o.summary.duration_ms >= 13_000 && o.summary.duration_ms < 15_000, "{}", o.summary.duration_ms);
}

#[test]
fn two_rolling_bounce_upgrade_from_range_to_cooperative_sticky() {
    let o = converged("rolling-upgrade");
    // Six restarts, each at most a leave and a join rebalance, plus the initial one.
    assert!(o.summary.rebalances <= 13, "{}", o.summary.rebalances);
    let last = o.timeline.iter().rev().find(|e| e.event == "assigned").unwrap();
    assert_eq!(last.assignor.as_deref(), Some("cooperative-sticky"));
    assert_eq!(sizes(&o), [2, 2, 2]);
    // During the second bounce eager and cooperative members share a generation.
    let mut by_gen: BTreeMap<i32, BTreeSet<&str>> = BTreeMap::new();
    for e in o.timeline.iter().filter(|e| e.event == "assigned") {
        by_gen.entry(e.generation).or_default().insert(e.protocol.unwrap());
    }
    assert!(by_gen.values().any(|p| p.len() == 2), "{by_gen:?}");
    // First bounce: everyone is still EAGER.
    let first_bounce_end = o.timeline.iter().filter(|e| e.event == "restart").nth(3).unwrap().seq;
    assert!(o
        .timeline
        .iter()
        .filter(|e| e.seq < first_bounce_end && e.event == "assigned")
        .all(|e| e.protocol == Some("eager")));
}

#[test]
fn one_bounce_upgrade_is_stopped_by_the_broker() {
    let o = load("one-bounce-mistake");
    assert!(!o.summary.converged);
    let fatal: Vec<&str> = o.summary.fatal.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(fatal, ["a", "b"]);
    assert!(o.summary.fatal.iter().all(|(_, e)| e.contains("INCONSISTENT_GROUP_PROTOCOL")));
    // The old member keeps consuming everything; nothing is ever owned twice.
    assert_eq!(o.final_owned["c"].len(), 6);
}

#[test]
fn downgrade_back_to_range() {
    let o = converged("downgrade");
    assert!(o.summary.rebalances <= 13, "{}", o.summary.rebalances);
    let last = o.timeline.iter().rev().find(|e| e.event == "assigned").unwrap();
    assert_eq!(last.assignor.as_deref(), Some("range"));
    assert_eq!(last.protocol, Some("eager"));
}

#[test]
fn topics_created_grown_and_deleted() {
    let o = converged("topics");
    assert!(o.summary.rebalances <= 4, "{}", o.summary.rebalances);
    for m in ["a", "b"] {
        let owned = &o.final_owned[m];
        assert_eq!(owned.len(), 4);
        assert!(owned.iter().all(|(t, _)| t == "orders"));
    }
    // audit's partitions were lost by both members when it was deleted, never revoked twice.
    assert_eq!(count(&o, "lost", "a") + count(&o, "lost", "b"), 4);
}

#[test]
fn subscription_change_revokes_only_the_dropped_topic() {
    let o = converged("subscription-change");
    let revoked: usize = events(&o, "revoked", "c").map(|e| PartitionSet::from_groups(&e.partitions).len()).sum();
    let first_subscribe = o.timeline.iter().find(|e| e.event == "subscribe").unwrap().seq;
    let first = events(&o, "revoked", "c").find(|e| e.seq >= first_subscribe).unwrap();
    assert!(PartitionSet::from_groups(&first.partitions).iter().all(|(t, _)| t == "payments"));
    assert!(revoked > 0);
    assert_eq!(sizes(&o), [4, 4, 4]);
    assert!(o.summary.partitions_moved <= 4, "{}", o.summary.partitions_moved);
}

#[test]
fn missed_rebalance_loses_stale_partitions() {
    let o = converged("missed-rebalance");
    let thaw = o.timeline.iter().find(|e| e.event == "thaw").unwrap().seq;
    let lost = events(&o, "lost", "c").next().expect("c loses its stale partitions");
    assert!(lost.seq > thaw);
    assert_eq!(PartitionSet::from_groups(&lost.partitions).len(), 3);
    assert!(o.summary.rebalances <= 4, "{}", o.summary.rebalances);
}

#[test]
fn static_member_restart_needs_no_rebalance() {
    let o = converged("static-restart");
    assert_eq!(o.summary.rebalances, 1);
    assert_eq!(o.summary.partitions_moved, 0);
    let first = o.timeline.iter().find(|e| e.event == "restart").unwrap();
    for m in ["b", "c"] {
        assert_eq!(PartitionSet::from_groups(&first.owned[m]), o.final_owned[m]);
    }
}

#[test]
fn lost_and_delayed_responses_and_stale_leader_metadata() {
    let o = converged("faults");
    assert_eq!(sizes(&o), [3, 3, 3, 3]);
    assert!(o.summary.rebalances <= 8, "{}", o.summary.rebalances);
}

#[test]
fn the_contract_example_settles_two_two_two() {
    let s = json::parse_scenario(
        r#"{"seed": 1, "topics": {"orders": 6},
            "members": [{"id": "a", "assignors": ["cooperative-sticky"], "topics": ["orders"]},
                        {"id": "b", "assignors": ["cooperative-sticky"], "topics": ["orders"]}],
            "steps": [{"join": {"id": "c", "assignors": ["cooperative-sticky"], "topics": ["orders"]}}, {"settle": {}}]}"#,
    )
    .unwrap();
    let o = run(&s).unwrap();
    assert_eq!(o.summary.partitions_moved, 2);
    assert_eq!(sizes(&o), [2, 2, 2]);
    let v = json::outcome_json(&o);
    let last = v["timeline"].as_array().unwrap().last().unwrap();
    for key in ["seq", "t_ms", "generation", "event", "member", "protocol", "owned", "generations"] {
        assert!(last.get(key).is_some(), "{key}");
    }
    assert_eq!(last["generations"]["a"], last["generation"]);
}

#[test]
fn bad_scenarios_are_errors() {
    assert!(json::parse_scenario("{").is_err());
    assert!(json::parse_scenario(r#"{"steps": [{"explode": 1}]}"#).is_err());
    assert!(json::parse_scenario(r#"{"topics": {"t": 0}}"#).is_err());
    let s = json::parse_scenario(r#"{"members": [{"id": "a", "assignors": ["nope"], "topics": ["t"]}]}"#).unwrap();
    assert!(run(&s).is_err());
    let s = json::parse_scenario(r#"{"steps": [{"crash": "ghost"}]}"#).unwrap();
    assert!(run(&s).is_err());
}
