//! The `cli_json` fuzz target's check, shared with `tests/fuzz_cli_json_corpus.rs`: the JSON
//! documents `kcp encode`, `kcp assign` and `kcp simulate` read. The first byte picks the
//! command (and the strategy or version), the rest is the document. Whatever the bytes, parsing
//! ends in a value or a typed usage/input error (never a panic, never an allocation beyond the
//! limits), and what is accepted is sound: an encoded payload decodes, an assignment hands out
//! each partition at most once and never from a member to itself, a small scenario runs.
#![allow(dead_code)]

#[allow(dead_code, clippy::all)]
#[path = "../src/bin/kcp/main.rs"]
mod kcp;

use std::collections::BTreeSet;

use kafka_consumer_protocol::sim::{json, run};
use kafka_consumer_protocol::{AssignmentView, SubscriptionView};

use kcp::assign::{assign_document, Strategy};
use kcp::encode::{encode_document, EncodeKind};
use kcp::CliError;

fn refused_cleanly(e: &CliError) {
    assert!(matches!(e, CliError::Usage(_) | CliError::Input(_) | CliError::Decode(_)), "{e:?}");
}

/// Checks one input; panics when a property fails.
pub fn check(data: &[u8]) {
    let Some((&selector, document)) = data.split_first() else { return };
    match selector % 4 {
        0 | 1 => {
            let kind = if selector % 4 == 0 { EncodeKind::Subscription } else { EncodeKind::Assignment };
            let version = i16::from(selector >> 2 & 3);
            match encode_document(document, kind, version) {
                Ok(bytes) => match kind {
                    EncodeKind::Subscription => {
                        let view = SubscriptionView::decode(&bytes).expect("an encoded subscription decodes");
                        assert_eq!(view.version(), version);
                    }
                    EncodeKind::Assignment => {
                        AssignmentView::decode(&bytes).expect("an encoded assignment decodes");
                    }
                },
                Err(e) => refused_cleanly(&e),
            }
        }
        2 => {
            let strategy = [Strategy::Range, Strategy::Roundrobin, Strategy::Sticky, Strategy::CooperativeSticky]
                [usize::from(selector >> 2 & 3)];
            match assign_document(document, strategy) {
                Ok((members, result, _)) => {
                    let mut given = BTreeSet::new();
                    for m in &members {
                        for g in result.partitions_of(&m.member_id) {
                            for p in g.partitions {
                                assert!(given.insert((g.topic.clone(), p)), "{}-{p} given twice", g.topic);
                            }
                        }
                    }
                    for p in &result.pending {
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
