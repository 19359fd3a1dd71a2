//! The `cli_json` fuzz target's check, shared with the corpus replay in
//! `tests/cli_corpus.rs`: the library's parsers of the JSON documents `kcp encode`
//! (`codec::json`), `kcp assign` (`assignor::json`, then the leader's round as `kcp assign` runs
//! it) and `kcp simulate` (`sim::json`) read. The first byte picks the document (and the
//! strategy or version), the rest is the document. Whatever the bytes, parsing ends in a value or
//! a typed error (never a panic, never an allocation beyond the limits), and what is accepted is
//! sound: an encoded payload decodes, an assignment hands out each partition at most once and
//! never from a member to itself, a small scenario runs without a violation.

use std::collections::BTreeSet;

use kafka_consumer_protocol::assignor::json::group_from_json;
use kafka_consumer_protocol::assignor::{builtin, leader, RebalanceProtocol, BUILTIN_NAMES};
use kafka_consumer_protocol::codec::json::{assignment_from_json, subscription_from_json, DocumentError};
use kafka_consumer_protocol::sim::{json, run};
use kafka_consumer_protocol::{AssignmentView, SubscriptionView, Version};

/// A refusal carries a message (what was wrong and where).
fn refused_cleanly(e: &DocumentError) {
    assert!(!e.to_string().is_empty(), "{e:?}");
}

/// Checks one input; panics when a property fails.
pub fn check(data: &[u8]) {
    let Some((&selector, document)) = data.split_first() else { return };
    match selector % 4 {
        0 => {
            let version = Version::try_from(i16::from(selector >> 2 & 3)).expect("0..=3 is a version");
            match subscription_from_json(document) {
                Ok(subscription) => {
                    if let Ok(bytes) = subscription.encode(version) {
                        let view = SubscriptionView::decode(&bytes).expect("an encoded subscription decodes");
                        assert_eq!(view.version(), version.as_i16());
                    }
                }
                Err(e) => refused_cleanly(&e),
            }
        }
        1 => {
            let version = Version::try_from(i16::from(selector >> 2 & 3)).expect("0..=3 is a version");
            match assignment_from_json(document) {
                Ok(assignment) => {
                    if let Ok(bytes) = assignment.encode(version) {
                        AssignmentView::decode(&bytes).expect("an encoded assignment decodes");
                    }
                }
                Err(e) => refused_cleanly(&e),
            }
        }
        2 => {
            // What `kcp assign --strategy S` runs: the assignor's highest protocol.
            let assignor = builtin(BUILTIN_NAMES[usize::from(selector >> 2 & 3)]).expect("a built-in");
            let protocol = assignor.supported_protocols().iter().max().copied().unwrap_or(RebalanceProtocol::Eager);
            match group_from_json(document) {
                Ok(group) => {
                    let Ok(round) = leader::lead(assignor.as_ref(), protocol, &group.metadata, &group.members) else {
                        return;
                    };
                    let mut given = BTreeSet::new();
                    for m in &group.members {
                        for g in round.assignment.partitions_of(&m.member_id) {
                            for p in g.partitions {
                                assert!(given.insert((g.topic.clone(), p)), "{}-{p} given twice", g.topic);
                            }
                        }
                    }
                    for p in &round.assignment.pending {
                        assert_ne!(p.to.as_deref(), Some(p.from.as_str()), "a hand-over to itself: {p:?}");
                    }
                }
                Err(e) => refused_cleanly(&e),
            }
        }
        _ => {
            let Ok(text) = std::str::from_utf8(document) else { return };
            match json::parse_scenario(text) {
                Ok(mut scenario) => {
                    // Run only what stays quick; the parser's limits are what is fuzzed here.
                    let partitions: i64 = scenario.topics.values().map(|n| i64::from(*n)).sum();
                    if scenario.members.len() <= 8 && scenario.steps.len() <= 16 && partitions <= 64 {
                        scenario.config.max_events = scenario.config.max_events.min(20_000);
                        if let Ok(out) = run(&scenario) {
                            assert!(out.summary.violations.is_empty(), "{:?}", out.summary.violations);
                        }
                    }
                }
                Err(e) => assert!(!e.to_string().is_empty()),
            }
        }
    }
}
