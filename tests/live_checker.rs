//! The live tests' log-merge checks (tests/live/ownership.rs) on hand-written logs: each check
//! must catch what it is for, so that a live test passing means something.

mod live;

use live::{Event, MemberLog};
use std::collections::BTreeSet;

fn ev(ts_ms: u64, event: &str, generation: Option<i32>, owned: &[i32]) -> Event {
    let owned_json = serde_json::json!([{"topic": "t", "partitions": owned}]);
    let mut line = serde_json::json!({"ts_ms": ts_ms, "event": event, "partitions": [], "owned": owned_json});
    if let Some(g) = generation {
        line["generation_id"] = g.into();
    }
    Event::parse(&line.to_string()).expect("a valid line")
}

fn log(member: &str, events: Vec<Event>, ended_at_ms: Option<u64>) -> MemberLog {
    MemberLog { member: member.into(), events, ended_at_ms }
}

fn all(n: i32) -> BTreeSet<(String, i32)> {
    live::partitions("t", 0..n)
}

#[test]
fn a_cooperative_hand_over_is_not_double_ownership() {
    let a = log("a", vec![ev(100, "assigned", Some(1), &[0, 1]), ev(200, "revoked", Some(2), &[0])], None);
    let b = log("b", vec![ev(150, "assigned", Some(2), &[]), ev(250, "assigned", Some(3), &[1])], None);
    live::check_no_double_ownership(&[a.clone(), b.clone()]).expect("a released 1 before b took it");
    live::check_settled(&[a, b], &all(2)).expect("one owner each");
}

#[test]
fn taking_a_partition_before_its_owner_released_it_is_caught() {
    let a = log("a", vec![ev(100, "assigned", Some(1), &[0, 1]), ev(300, "revoked", Some(2), &[0])], None);
    let b = log("b", vec![ev(250, "assigned", Some(2), &[1])], None);
    let err = live::check_no_double_ownership(&[a, b]).expect_err("b took t-1 at 250, a let go at 300");
    assert!(err.contains("t-1 owned by a") && err.contains("and by b"), "{err}");
}

#[test]
fn at_equal_timestamps_releases_come_first() {
    let a = log("a", vec![ev(100, "assigned", Some(1), &[0]), ev(200, "revoked", Some(2), &[])], None);
    let b = log("b", vec![ev(200, "assigned", Some(2), &[0])], None);
    live::check_no_double_ownership(&[b, a]).expect("same millisecond: not ordered by the clock");
}

#[test]
fn a_killed_member_owns_nothing_after_it_ended() {
    let a = log("a", vec![ev(100, "assigned", Some(1), &[0, 1])], Some(500));
    let b = log("b", vec![ev(100, "assigned", Some(1), &[]), ev(900, "assigned", Some(2), &[0, 1])], None);
    live::check_no_double_ownership(&[a.clone(), b.clone()]).expect("a's process was gone at 500");
    live::check_settled(&[a.clone(), b], &all(2)).expect("b owns both");
    let early = log("b", vec![ev(400, "assigned", Some(2), &[0])], None);
    live::check_no_double_ownership(&[a, early]).expect_err("a still ran at 400");
}

#[test]
fn settled_needs_every_partition_exactly_once_and_nothing_else() {
    let a = log("a", vec![ev(100, "assigned", Some(1), &[0])], None);
    let b = log("b", vec![ev(100, "assigned", Some(1), &[1])], None);
    let err = live::check_settled(&[a.clone(), b.clone()], &all(3)).expect_err("t-2 is nobody's");
    assert!(err.contains("t-2 owned by no live member"), "{err}");
    let err = live::check_settled(&[a.clone(), b.clone()], &all(1)).expect_err("t-1 is not expected");
    assert!(err.contains("t-1 is not expected"), "{err}");
    let c = log("c", vec![ev(100, "assigned", Some(1), &[1])], None);
    let err = live::check_settled(&[a, b, c], &all(2)).expect_err("t-1 twice");
    assert!(err.contains("t-1 owned by [\"b\", \"c\"]"), "{err}");
}

#[test]
fn a_member_that_left_owns_nothing() {
    let left = Event::parse(r#"{"ts_ms": 300, "event": "left"}"#).unwrap();
    let a = log("a", vec![ev(100, "assigned", Some(1), &[0]), left], None);
    assert!(live::final_ownership(std::slice::from_ref(&a))["a"].is_empty());
    let b = log("b", vec![ev(300, "assigned", Some(2), &[0])], None);
    live::check_no_double_ownership(&[a, b]).expect("a left at 300");
}

#[test]
fn generations_of_ownership_events_are_counted_and_bounded() {
    let joined = Event::parse(r#"{"ts_ms": 3, "event": "joined", "member_id": "m", "generation_id": 7}"#).unwrap();
    let a = log("a", vec![ev(1, "assigned", Some(1), &[0]), ev(2, "assigned", Some(2), &[0])], None);
    let b = log("b", vec![joined, ev(3, "assigned", Some(3), &[1])], None);
    let logs = [a, b];
    assert_eq!(live::generations(&logs), [1, 2, 3].into(), "joined says nothing about ownership");
    live::check_generations(&logs, 3).expect("3 at most");
    let err = live::check_generations(&logs, 2).expect_err("more than 2");
    assert!(err.contains("3 generations (bound 2)"), "{err}");
}

#[test]
fn a_line_without_ts_ms_or_event_is_refused() {
    assert!(Event::parse(r#"{"event": "assigned"}"#).is_err());
    assert!(Event::parse(r#"{"ts_ms": 1}"#).is_err());
    assert!(Event::parse("not json").is_err());
    let e = Event::parse(
        r#"{"ts_ms": 5, "event": "lost", "partitions": [{"topic": "t", "partitions": [2]}], "owned": []}"#,
    )
    .unwrap();
    assert_eq!(e.partitions, [("t".to_string(), 2)].into());
    assert_eq!(e.owned, Some(BTreeSet::new()));
}
