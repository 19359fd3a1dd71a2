//! The conformance pack (`testdata/conformance/`, issue 37) against the crate and against the
//! Java-made files it was built from, so that the pack cannot drift: a changed payload, decoded
//! form, Java answer, property or expected rule result fails here. The Python runner
//! (`tools/conformance/run.py`) is run with `kcp` itself as the client, on the pack and on an
//! altered copy of it.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use bytes::Bytes;
use common::{hex, to_hex};
use kafka_consumer_protocol::codec::TopicPartitionsList;
use kafka_consumer_protocol::conform::{Checker, Outcome, Report, Seen};
use kafka_consumer_protocol::group_api::{
    ErrorCode, JoinGroupMember, JoinGroupProtocol, JoinGroupRequest, SyncGroupAssignment, SyncGroupRequest,
};
use kafka_consumer_protocol::pcap::Payload;
use kafka_consumer_protocol::{
    Assignment, AssignmentBuf, AssignmentView, DecodeOptions, Subscription, SubscriptionBuf, SubscriptionView,
    TopicPartitions, Version,
};
use serde_json::{json, Value};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn pack(name: &str) -> Value {
    let path = root().join("testdata/conformance").join(name);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn cases(pack: &Value) -> &Vec<Value> {
    pack["cases"].as_array().expect("cases")
}

fn partitions_json(list: TopicPartitionsList<'_>) -> Value {
    Value::Array(list.iter().map(|g| json!({"topic": g.topic, "partitions": g.partitions.to_vec()})).collect())
}

/// Decodes as `kind` into the pack's decoded shape, or the error's stable code.
fn decode(kind: &str, bytes: &[u8], options: DecodeOptions) -> Result<Value, &'static str> {
    match kind {
        "subscription" => SubscriptionView::decode_with(bytes, options)
            .map(|s| {
                json!({
                    "version": s.version(), "read_as_version": s.read_as().as_i16(),
                    "topics": s.topics().iter().collect::<Vec<_>>(), "user_data": s.user_data().map(to_hex),
                    "owned_partitions": partitions_json(s.owned_partitions()), "generation_id": s.generation_id(),
                    "rack_id": s.rack_id(), "trailing_bytes": s.trailing_bytes(),
                })
            })
            .map_err(|e| e.kind().code()),
        "assignment" => AssignmentView::decode_with(bytes, options)
            .map(|a| {
                json!({
                    "version": a.version(), "read_as_version": a.read_as().as_i16(),
                    "assigned_partitions": partitions_json(a.assigned_partitions()),
                    "user_data": a.user_data().map(to_hex), "trailing_bytes": a.trailing_bytes(),
                })
            })
            .map_err(|e| e.kind().code()),
        other => panic!("unknown kind {other}"),
    }
}

fn outcome_json(result: Result<Value, &'static str>) -> Value {
    match result {
        Ok(decoded) => json!({"ok": true, "decoded": decoded}),
        Err(code) => json!({"ok": false, "error_kind": code}),
    }
}

/// The recorded `kcp` outcome without its `warnings` (the text of a repair may be reworded).
fn recorded(outcome: &Value) -> Value {
    let mut o = outcome.clone();
    o.as_object_mut().unwrap().remove("warnings");
    o
}

fn source(case: &Value) -> Value {
    let file = root().join(case["source"]["file"].as_str().unwrap());
    serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap()
}

fn groups(value: &Value) -> Vec<TopicPartitions> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            let parts: Vec<i32> =
                g["partitions"].as_array().unwrap().iter().map(|p| p.as_i64().unwrap() as i32).collect();
            TopicPartitions::new(g["topic"].as_str().unwrap(), parts)
        })
        .collect()
}

fn user_data(value: &Value) -> Option<Bytes> {
    value.as_str().map(|h| Bytes::from(hex(h)))
}

/// Encodes the pack's decoded form as the crate's canonical writer does.
fn encode(kind: &str, decoded: &Value) -> Vec<u8> {
    let version = Version::layout_for_wire(decoded["version"].as_i64().unwrap() as i16).unwrap();
    match kind {
        "subscription" => {
            let topics: Vec<&str> = decoded["topics"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
            let mut s = Subscription::new(topics)
                .with_user_data(user_data(&decoded["user_data"]))
                .with_owned_partitions(groups(&decoded["owned_partitions"]))
                .with_generation_id(decoded["generation_id"].as_i64().unwrap() as i32);
            if let Some(rack) = decoded["rack_id"].as_str() {
                s = s.with_rack_id(rack);
            }
            s.encode(version).unwrap()
        }
        _ => Assignment::new(groups(&decoded["assigned_partitions"]))
            .with_user_data(user_data(&decoded["user_data"]))
            .encode(version)
            .unwrap(),
    }
}

/// One case of a payload pack (golden or malformed), with the Java-made file it came from.
struct PayloadCase<'a> {
    case: &'a Value,
    kind: &'a str,
    bytes: Vec<u8>,
    java: Value,
}

/// Walks a payload pack: `check` names each way a case disagrees (with the crate, or with its
/// Java-made source); the problems come back prefixed by the case's name.
fn payload_problems(pack: &Value, check: impl Fn(&PayloadCase<'_>) -> Vec<String>) -> Vec<String> {
    let mut problems = Vec::new();
    for case in cases(pack) {
        let name = case["name"].as_str().unwrap();
        let walked = PayloadCase {
            case,
            kind: case["kind"].as_str().unwrap(),
            bytes: hex(case["hex"].as_str().unwrap()),
            java: source(case),
        };
        if walked.java["hex"] != case["hex"] {
            problems.push(format!("{name}: differs from Java's {}", case["source"]["file"]));
        }
        problems.extend(check(&walked).into_iter().map(|p| format!("{name}: {p}")));
    }
    problems
}

/// Every way a golden case disagrees with the crate or with the Java file it came from.
fn golden_problems(pack: &Value) -> Vec<String> {
    payload_problems(pack, |PayloadCase { case, kind, bytes, java }| {
        let mut problems = Vec::new();
        if java["expect"] != case["decoded"] || java["canonical"] != case["canonical"] {
            problems.push(format!("differs from Java's {}", case["source"]["file"]));
        }
        if case["version"] != case["decoded"]["version"] {
            problems.push("version".to_owned());
        }
        match decode(kind, bytes, DecodeOptions::new()) {
            Ok(got) if got == case["decoded"] => {}
            other => problems.push(format!("the crate decodes {other:?}")),
        }
        if case["canonical"] == true && &encode(kind, &case["decoded"]) != bytes {
            problems.push("the crate encodes other bytes".to_owned());
        }
        problems
    })
}

/// Every way a malformed case disagrees with Java's outcome, the lenient reading or the crate's.
fn malformed_problems(pack: &Value) -> Vec<String> {
    payload_problems(pack, |PayloadCase { case, kind, bytes, java }| {
        let mut problems = Vec::new();
        let java_outcome = match java["expect"].get("error") {
            Some(error) => json!({"ok": false, "error": error}),
            None => json!({"ok": true, "decoded": java["expect"]}),
        };
        if java_outcome != case["java"] {
            problems.push(format!("differs from Java's {}", case["source"]["file"]));
        }
        let lenient_reading = java.get("lenient_expect").map(|l| json!({"ok": true, "decoded": l}));
        if lenient_reading.unwrap_or(Value::Null) != case["lenient_reading"] {
            problems.push(format!("lenient reading differs from {}", case["source"]["file"]));
        }
        for (mode, options) in [
            ("default", DecodeOptions::new()),
            ("strict", DecodeOptions::new().strict(true)),
            ("lenient", DecodeOptions::new().lenient(true)),
        ] {
            // `kcp decode` refuses an empty payload before decoding it (`invalid_input`: nothing was given).
            let got = if bytes.is_empty() {
                json!({"ok": false, "error_kind": "invalid_input"})
            } else {
                outcome_json(decode(kind, bytes, options))
            };
            if got != recorded(&case["kcp"][mode]) {
                problems.push(format!("the crate's {mode} decode gives {got}"));
            }
        }
        // The crate refuses exactly what Java refuses (bar the one recorded divergence).
        let refuses = case["kcp"]["default"]["ok"] == false;
        if refuses != (case["java"]["ok"] == false) && case.get("kcp_divergence").is_none() {
            problems.push("the crate and Java disagree on refusing it".to_owned());
        }
        problems
    })
}

fn flatten(runs: &Value) -> Vec<(String, i64)> {
    runs.as_array()
        .unwrap()
        .iter()
        .flat_map(|r| {
            let topic = r["topic"].as_str().unwrap().to_owned();
            r["partitions"].as_array().unwrap().iter().map(move |p| (topic.clone(), p.as_i64().unwrap()))
        })
        .collect()
}

/// The properties (names as in assignors.json) that `answer` satisfies on `input`.
fn properties(input: &Value, answer: &Value, cooperative: bool) -> Vec<&'static str> {
    use std::collections::{BTreeMap, BTreeSet};
    let members = input["members"].as_array().unwrap();
    let subscribed: BTreeMap<&str, BTreeSet<&str>> = members
        .iter()
        .map(|m| {
            (
                m["member_id"].as_str().unwrap(),
                m["topics"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect(),
            )
        })
        .collect();
    let mut given: BTreeMap<(String, i64), &str> = BTreeMap::new();
    let (mut at_most_once, mut only_subscribed) = (true, true);
    for (member, runs) in answer.as_object().unwrap() {
        for tp in flatten(runs) {
            if !subscribed.get(member.as_str()).is_some_and(|s| s.contains(tp.0.as_str())) {
                only_subscribed = false;
            }
            if given.insert(tp, member).is_some() {
                at_most_once = false;
            }
        }
    }
    let mut out = Vec::new();
    if at_most_once {
        out.push("at_most_once");
    }
    if only_subscribed {
        out.push("only_subscribed");
    }
    if cooperative {
        let mut owners: BTreeMap<(String, i64), BTreeSet<&str>> = BTreeMap::new();
        for m in members {
            for tp in flatten(&m["owned_partitions"]) {
                owners.entry(tp).or_default().insert(m["member_id"].as_str().unwrap());
            }
        }
        if given.iter().all(|(tp, member)| owners.get(tp).is_none_or(|o| o.len() != 1 || o.contains(member))) {
            out.push("no_transfer_in_one_round");
        }
    } else {
        let wanted: BTreeSet<(String, i64)> = members
            .iter()
            .flat_map(|m| m["topics"].as_array().unwrap().iter())
            .flat_map(|t| {
                let t = t.as_str().unwrap();
                (0..input["topics"][t].as_i64().unwrap_or(0)).map(move |p| (t.to_owned(), p))
            })
            .collect();
        if at_most_once && given.keys().cloned().collect::<BTreeSet<_>>() == wanted {
            out.push("every_partition_once");
        }
        if !members.is_empty() && subscribed.values().collect::<BTreeSet<_>>().len() == 1 {
            let counts: Vec<usize> = members
                .iter()
                .map(|m| answer.get(m["member_id"].as_str().unwrap()).map_or(0, |r| flatten(r).len()))
                .collect();
            if counts.iter().max().unwrap() - counts.iter().min().unwrap() <= 1 {
                out.push("balanced");
            }
        }
    }
    out.sort_unstable();
    out
}

fn assignor_problems(pack: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    for case in cases(pack) {
        let name = case["name"].as_str().unwrap();
        let java = source(case);
        if java["input"] != case["input"] {
            problems.push(format!("{name}: input differs from {}", case["source"]["file"]));
        }
        for strategy in ["range", "roundrobin"] {
            if java["java"][strategy]["assignments"] != case[strategy] {
                problems.push(format!("{name}: {strategy} differs from Java's answer"));
            }
        }
        for (strategy, cooperative) in [("sticky", false), ("cooperative-sticky", true)] {
            if java["java"][strategy]["user_data"] != case[strategy]["user_data"] {
                problems.push(format!("{name}: {strategy} user_data differs from Java's"));
            }
            let holds = properties(&case["input"], &java["java"][strategy]["assignments"], cooperative);
            if json!(holds) != case[strategy]["properties"] {
                problems.push(format!(
                    "{name}: {strategy} properties {} but Java's answer has {holds:?}",
                    case[strategy]["properties"]
                ));
            }
        }
    }
    problems
}

fn payload(kind: &str, hex_text: &Value) -> Payload {
    let bytes = Bytes::from(hex(hex_text.as_str().unwrap()));
    let decoded = match kind {
        "subscription" => SubscriptionBuf::decode(bytes.clone()).map(Payload::Subscription),
        _ => AssignmentBuf::decode(bytes.clone()).map(Payload::Assignment),
    };
    decoded.unwrap_or_else(|error| Payload::Invalid { bytes, error })
}

/// Replays an exchange's steps through the checker.
fn replay(case: &Value, problems: &mut Vec<String>) -> Report {
    let name = case["name"].as_str().unwrap();
    let mut checker = Checker::new();
    // The topics' partition counts, as a capture's Metadata responses would give them.
    for (topic, count) in case["partition_counts"].as_object().into_iter().flatten() {
        checker.learn_partition_count(topic, count.as_i64().unwrap() as i32);
    }
    let text = |v: &Value| v.as_str().map(str::to_owned);
    let check_hex = |problems: &mut Vec<String>, kind: &str, decoded: &Value, hex_text: &Value| {
        if to_hex(&encode(kind, decoded)) != hex_text.as_str().unwrap() {
            problems.push(format!("{name}: a {kind}'s hex is not its decoded form"));
        }
    };
    for step in case["steps"].as_array().unwrap() {
        let seen = Seen { time: Duration::from_secs(step["t"].as_u64().unwrap()), client_id: text(&step["client_id"]) };
        let member = step["member"].as_str().unwrap();
        let generation = step["generation"].as_i64().unwrap_or(-1) as i32;
        match step["type"].as_str().unwrap() {
            "join_request" => {
                let protocols = step["protocols"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| {
                        check_hex(problems, "subscription", &p["subscription"], &p["metadata_hex"]);
                        JoinGroupProtocol {
                            name: p["name"].as_str().unwrap().to_owned(),
                            metadata: payload("subscription", &p["metadata_hex"]),
                        }
                    })
                    .collect();
                let request = JoinGroupRequest {
                    group_id: "g".into(),
                    session_timeout_ms: step["session_timeout_ms"].as_i64().unwrap() as i32,
                    rebalance_timeout_ms: 300_000,
                    member_id: member.into(),
                    group_instance_id: text(&step["group_instance_id"]),
                    protocol_type: "consumer".into(),
                    protocols,
                    reason: None,
                };
                checker.join_request(&seen, &request);
            }
            "join_response" => {
                let members: Vec<JoinGroupMember<Payload>> = step["members"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|m| {
                        check_hex(problems, "subscription", &m["subscription"], &m["metadata_hex"]);
                        JoinGroupMember {
                            member_id: m["member_id"].as_str().unwrap().to_owned(),
                            group_instance_id: text(&m["group_instance_id"]),
                            metadata: payload("subscription", &m["metadata_hex"]),
                        }
                    })
                    .collect();
                checker.join_response(
                    &seen,
                    "g",
                    member,
                    ErrorCode(step["error"].as_i64().unwrap() as i16),
                    generation,
                    step["protocol"].as_str(),
                    step["leader"].as_str().unwrap(),
                    None,
                    &members,
                );
            }
            "sync_request" => {
                let assignments = step["assignments"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|a| {
                        check_hex(problems, "assignment", &a["assignment"], &a["assignment_hex"]);
                        SyncGroupAssignment {
                            member_id: a["member_id"].as_str().unwrap().to_owned(),
                            assignment: payload("assignment", &a["assignment_hex"]),
                        }
                    })
                    .collect();
                let request = SyncGroupRequest {
                    group_id: "g".into(),
                    generation_id: generation,
                    member_id: member.into(),
                    group_instance_id: None,
                    protocol_type: Some("consumer".into()),
                    protocol_name: text(&step["protocol"]),
                    assignments,
                };
                checker.sync_request(&seen, &request);
            }
            "sync_response" => {
                check_hex(problems, "assignment", &step["assignment"], &step["assignment_hex"]);
                checker.sync_response(
                    &seen,
                    "g",
                    member,
                    generation,
                    ErrorCode(step["error"].as_i64().unwrap() as i16),
                    &payload("assignment", &step["assignment_hex"]),
                );
            }
            other => problems.push(format!("{name}: unknown step {other}")),
        }
    }
    checker.finish()
}

fn exchange_problems(pack: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    for case in cases(pack) {
        let name = case["name"].as_str().unwrap().to_owned();
        let report = replay(case, &mut problems);
        let mut any_fail_expected = false;
        let mut check = |who: &str, rules: &Vec<kafka_consumer_protocol::conform::RuleResult>, expect: &Value| {
            for (rule, want) in expect.as_object().unwrap() {
                any_fail_expected |= want == "fail";
                match rules.iter().find(|r| r.rule == rule) {
                    Some(r) if r.result.as_str() == want => {}
                    Some(r) => problems.push(format!(
                        "{name}: {who} {rule} is {} ({}), pack says {want}",
                        r.result.as_str(),
                        r.evidence
                    )),
                    None => problems.push(format!("{name}: {who} has no rule {rule}")),
                }
            }
        };
        let Some(group) = report.groups.first() else {
            problems.push(format!("{name}: no group in the report"));
            continue;
        };
        if let Some(expect) = case["expect"].get("group") {
            check("group", &group.rules, expect);
        }
        let mut missing = Vec::new();
        if let Some(members) = case["expect"].get("members") {
            for (member, expect) in members.as_object().unwrap() {
                match group.members.iter().find(|m| &m.member_id == member) {
                    Some(m) => check(member, &m.rules, expect),
                    None => missing.push(format!("{name}: no member {member} in the report")),
                }
            }
        }
        problems.extend(missing);
        // `good` exchanges fail no rule at all; bad ones name the rule they break.
        if case["good"] == true && report.has_failure() {
            problems.push(format!("{name}: a good exchange fails a rule: {report:?}"));
        }
        if (case["good"] == false) != any_fail_expected {
            problems.push(format!("{name}: good={} but expected failures={any_fail_expected}", case["good"]));
        }
    }
    problems
}

#[test]
fn golden_payloads_are_javas_and_the_crates() {
    let golden = pack("golden.json");
    assert!(golden_problems(&golden).is_empty(), "{:#?}", golden_problems(&golden));
    // v0..v3 of both kinds are all there.
    for kind in ["subscription", "assignment"] {
        for version in 0..=3 {
            assert!(
                cases(&golden).iter().any(|c| c["kind"] == kind && c["version"] == version),
                "no {kind} v{version}"
            );
        }
    }
    // An altered entry is caught.
    let first_subscription = cases(&golden).iter().position(|c| c["kind"] == "subscription").unwrap();
    let mut altered = golden.clone();
    altered["cases"][first_subscription]["decoded"]["topics"][0] = json!("altered");
    assert!(!golden_problems(&altered).is_empty());
    let mut altered = golden.clone();
    altered["cases"][3]["hex"] = json!(format!("{}00", altered["cases"][3]["hex"].as_str().unwrap()));
    assert!(!golden_problems(&altered).is_empty());
}

#[test]
fn malformed_payloads_have_javas_and_the_crates_outcomes() {
    let malformed = pack("malformed.json");
    assert!(malformed_problems(&malformed).is_empty(), "{:#?}", malformed_problems(&malformed));
    let names: Vec<&str> = cases(&malformed).iter().map(|c| c["name"].as_str().unwrap()).collect();
    // The known third-party defects are in the pack, with the repair a lenient reader makes.
    for name in ["kafka-go:consumergroup-subscription-v1-no-owned", "sarama:sarama-cluster-subscription-v1-no-owned"] {
        let case = cases(&malformed).iter().find(|c| c["name"] == name).unwrap_or_else(|| panic!("{name}: {names:?}"));
        assert_eq!(case["java"]["ok"], false);
        assert_eq!(case["kcp"]["lenient"]["ok"], true);
    }
    let mut altered = malformed.clone();
    altered["cases"][0]["kcp"]["strict"]["error_kind"] = json!("negative_length");
    assert!(!malformed_problems(&altered).is_empty());
    let mut altered = malformed.clone();
    altered["cases"][1]["java"]["error"] = json!("SchemaException: altered");
    assert!(!malformed_problems(&altered).is_empty());
}

#[test]
fn assignor_cases_are_javas_answers_with_properties_javas_answers_have() {
    let assignors = pack("assignors.json");
    assert!(assignor_problems(&assignors).is_empty(), "{:#?}", assignor_problems(&assignors));
    assert!(cases(&assignors).len() >= 40);
    let mut altered = assignors.clone();
    let first_member = altered["cases"][0]["input"]["members"][0]["member_id"].as_str().unwrap().to_owned();
    altered["cases"][0]["range"][&first_member] = json!([]);
    assert!(!assignor_problems(&altered).is_empty());
    let mut altered = assignors.clone();
    altered["cases"][0]["sticky"]["properties"] = json!(["at_most_once"]);
    assert!(!assignor_problems(&altered).is_empty());
}

#[test]
fn exchanges_give_the_recorded_rule_results() {
    let exchanges = pack("exchanges.json");
    assert!(exchange_problems(&exchanges).is_empty(), "{:#?}", exchange_problems(&exchanges));
    assert!(cases(&exchanges).iter().any(|c| c["good"] == true));
    assert!(cases(&exchanges).iter().any(|c| c["good"] == false));
    // Flipping an expected result, or a claim in a payload, is caught.
    let mut altered = exchanges.clone();
    altered["cases"][1]["expect"]["members"]["m1"]["cooperative.owned"] = json!("pass");
    assert!(!exchange_problems(&altered).is_empty());
    let mut altered = exchanges.clone();
    altered["cases"][1]["steps"][1]["protocols"][0]["subscription"]["owned_partitions"][0]["partitions"] =
        json!([0, 1]);
    assert!(!exchange_problems(&altered).is_empty());
    assert!(Outcome::Fail.as_str() == "fail");
}

fn python() -> Option<&'static str> {
    let ok = std::process::Command::new("python3").arg("--version").output().is_ok_and(|o| o.status.success());
    ok.then_some("python3")
}

fn run_runner(pack_dir: &Path) -> std::process::Output {
    let kcp = env!("CARGO_BIN_EXE_kcp");
    std::process::Command::new(python().expect("python3 (the runner needs it)"))
        .arg(root().join("tools/conformance/run.py"))
        .args(["--pack", pack_dir.to_str().unwrap()])
        .args(["--decode", &format!("{kcp} decode --kind {{kind}} -")])
        .args(["--lenient-decode", &format!("{kcp} decode --kind {{kind}} --lenient -")])
        .args(["--encode", &format!("{kcp} encode --kind {{kind}} --version {{version}} -")])
        .args(["--assign", &format!("{kcp} assign --strategy {{strategy}} -")])
        .output()
        .unwrap()
}

/// The Python runner passes with `kcp` as the client, and fails (exit 1, naming the case) on a
/// copy of the pack with one golden decoded form altered.
#[test]
fn the_python_runner_passes_kcp_and_catches_an_altered_case() {
    let out = run_runner(&root().join("testdata/conformance"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let summary = stdout.lines().last().unwrap();
    assert!(summary.ends_with("passed, 0 failed"), "{summary}");
    let passed: usize = summary.split_whitespace().next().unwrap().parse().unwrap();
    assert!(passed > 500, "{summary}");
    assert!(stdout.contains("PASS assignor.cooperative-sticky ") && stdout.contains("PASS malformed.lenient "));

    let dir = std::env::temp_dir().join(format!("kcp-conformance-pack-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["golden.json", "malformed.json", "assignors.json"] {
        let mut value = pack(name);
        if name == "golden.json" {
            value["cases"][0]["decoded"]["user_data"] = json!("a17e4ed0");
        }
        std::fs::write(dir.join(name), serde_json::to_string(&value).unwrap()).unwrap();
    }
    let out = run_runner(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let first = cases(&pack("golden.json"))[0]["name"].as_str().unwrap().to_owned();
    assert!(stdout.contains(&format!("FAIL golden.decode {first}: user_data")), "{stdout}");
    // Only that case fails (its decode, and its encode from the altered form).
    let fails: Vec<&str> = stdout.lines().filter(|l| l.starts_with("FAIL ")).collect();
    assert!(fails.iter().all(|l| l.contains(&format!(" {first}: "))), "{fails:#?}");
    assert!(stdout.lines().last().unwrap().ends_with(&format!("passed, {} failed", fails.len())), "{stdout}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The committed pack is exactly what `tools/conformance/build-pack.py` makes from the Java-made
/// sources with this crate's `kcp` (descriptions, order and all).
#[test]
fn the_pack_is_what_build_pack_makes() {
    let out = std::process::Command::new(python().expect("python3 (the generator needs it)"))
        .arg(root().join("tools/conformance/build-pack.py"))
        .args(["--check", "--kcp", env!("CARGO_BIN_EXE_kcp")])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}
