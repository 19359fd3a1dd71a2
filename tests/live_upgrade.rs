//! `kcp group upgrade-check` against what the broker really does (issue 25). For each group kcp
//! judges, a Java consumer with `group.protocol=consumer` then joins it, and what happens must be
//! what kcp predicted: with `broker_converts: true` the member is assigned (the group became a
//! consumer group), with `false` it fails (GROUP_ID_NOT_FOUND; UNSUPPORTED_VERSION where the
//! broker does not run consumer groups at all).
//!
//! Clusters (tools/live/kafka.sh; CI starts them):
//! - `k41`: Kafka 4.1.1, defaults (the shared one);
//! - `k39`: Kafka 3.9.1 without the consumer protocol (the shared one);
//! - `k41nomig`: Kafka 4.1.1, `--config group.consumer.migration.policy=disabled`;
//! - `k39c`: Kafka 3.9.1, `--config group.coordinator.rebalance.protocols=classic,consumer
//!   --config group.consumer.migration.policy=upgrade --config group.consumer.max.size=2`.

mod live;

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use kafka_consumer_protocol::client::{Client, ClientConfig, Deadline, SendOptions, Target};
use kafka_consumer_protocol::{Assignment, Subscription, TopicPartitions, Version};
use kafka_protocol::messages::join_group_request::JoinGroupRequestProtocol;
use kafka_protocol::messages::sync_group_request::SyncGroupRequestAssignment;
use kafka_protocol::messages::{GroupId, JoinGroupRequest, SyncGroupRequest};
use kafka_protocol::protocol::StrBytes;
use live::{Cluster, Member, MemberOptions};
use serde_json::Value;

const SETTLE: Duration = Duration::from_secs(60);
const OUTCOME: Duration = Duration::from_secs(45);
const EXIT: Duration = Duration::from_secs(45);

/// `kcp group upgrade-check --group G` on the cluster; its JSON report.
fn upgrade_check(cluster: &Cluster, group: &str) -> Value {
    kcp_json(&["group", "upgrade-check", "--bootstrap-server", &cluster.bootstrap, "--group", group])
}

/// `kcp ARGS...` (bounded), which must succeed; its JSON output.
fn kcp_json(args: &[&str]) -> Value {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kcp"));
    cmd.args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
    let mut child = cmd.spawn().expect("kcp starts");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("kcp {args:?} did not finish within 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (mut out, mut err) = (String::new(), String::new());
    child.stdout.take().unwrap().read_to_string(&mut out).unwrap();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    let value: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}): {out}\n{err}"));
    // upgrade-check exits 4 exactly when a verdict is `blocked` (a pipeline can stop on it).
    let reports = value.as_array().cloned().unwrap_or_else(|| vec![value.clone()]);
    let blocked = reports.iter().any(|r| r["verdict"] == "blocked");
    let expected = if blocked && args.contains(&"upgrade-check") { 4 } else { 0 };
    assert_eq!(status.code(), Some(expected), "kcp {args:?}: {out}\n{err}");
    value
}

/// What happened to the consumer-protocol member.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    /// It was given an assignment: the broker converted the group.
    Converted,
    /// It failed with this Java exception.
    Refused(String),
}

/// Starts a `group.protocol=consumer` member and waits for its first assignment or its error.
fn try_upgrade(cluster: &Cluster, group: &str, topic: &str) -> (Outcome, Member) {
    let options = MemberOptions::new(group, [topic]).group_protocol("consumer").client_id("upgrader").duration_s(120);
    let mut member = cluster.java(&options);
    member
        .wait_for("an assignment or an error", OUTCOME, |events| {
            events.iter().any(|e| e.event == "assigned" || e.event == "error")
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let events = member.events();
    let first = events.iter().find(|e| e.event == "assigned" || e.event == "error").expect("just seen");
    let outcome = if first.event == "assigned" {
        Outcome::Converted
    } else {
        Outcome::Refused(first.raw["error"]["kind"].as_str().unwrap_or("?").to_owned())
    };
    (outcome, member)
}

fn failed_checks(report: &Value) -> Vec<String> {
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["ok"] == Value::Bool(false))
        .map(|c| c["name"].as_str().unwrap().to_owned())
        .collect()
}

/// Classic Java members (their assignors), settled; then the check; then the upgrade.
struct Scenario<'a> {
    cluster: &'a str,
    what: &'a str,
    members: usize,
    assignors: &'a [&'a str],
    verdict: &'a str,
    failed: &'a [&'a str],
    converts: bool,
    /// The Java exception the refused member reports.
    refusal: &'a str,
}

fn run(s: Scenario<'_>) {
    let Some(cluster) = Cluster::shared(s.cluster) else { return };
    let topic = live::unique_name(&format!("upgrade-{}-t", s.what));
    let group = live::unique_name(&format!("upgrade-{}-g", s.what));
    cluster.create_topic(&topic, 4);
    let mut classic: Vec<Member> = (0..s.members)
        .map(|i| {
            let options = MemberOptions::new(&group, [&topic])
                .assignors(s.assignors.iter().copied())
                .client_id(&format!("classic-{i}"))
                .duration_s(150);
            cluster.java(&options)
        })
        .collect();
    // Settled: every member assigned, the group Stable in the broker's eyes (kcp's report).
    let deadline = Instant::now() + SETTLE;
    let mut last = Value::Null;
    let report = loop {
        let all_assigned = classic.iter().all(|m| m.events().iter().any(|e| e.event == "assigned"));
        if all_assigned {
            let report = upgrade_check(&cluster, &group);
            let stable = report["checks"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["name"] == "rebalance_state" && c["ok"] == Value::Bool(true));
            if stable {
                break report;
            }
            last = report;
        }
        if Instant::now() >= deadline {
            let logs: Vec<String> = classic.iter().map(Member::diagnostics).collect();
            panic!("{} {}: the group did not settle: {last:#}\n{}", s.cluster, s.what, logs.join("\n"));
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    assert_eq!(report["group_id"], group.as_str());
    assert_eq!(report["verdict"], s.verdict, "{} {}: {report:#}", s.cluster, s.what);
    assert_eq!(failed_checks(&report), s.failed, "{} {}: {report:#}", s.cluster, s.what);
    assert_eq!(report["broker_converts"], Value::Bool(s.converts), "{report:#}");
    // A rolling upgrade: one classic member stops (LeaveGroup), and comes back with
    // group.protocol=consumer.
    classic[0].terminate(EXIT).unwrap_or_else(|e| panic!("{e}"));
    let (outcome, mut upgrader) = try_upgrade(&cluster, &group, &topic);
    let expected = if s.converts { Outcome::Converted } else { Outcome::Refused(s.refusal.to_owned()) };
    assert_eq!(outcome, expected, "{} {}: kcp predicted {report:#}\n{}", s.cluster, s.what, upgrader.diagnostics());
    let _ = upgrader.terminate(EXIT);
    for m in &mut classic {
        let _ = m.terminate(EXIT);
    }
}

#[test]
fn a_cooperative_sticky_group_converts_on_kafka_4_1() {
    run(Scenario {
        cluster: "k41",
        what: "plain",
        members: 2,
        assignors: &["cooperative-sticky"],
        verdict: "ready",
        failed: &[],
        converts: true,
        refusal: "",
    });
}

#[test]
fn a_custom_assignor_with_assignment_user_data_is_refused_on_kafka_4_1() {
    run(Scenario {
        cluster: "k41",
        what: "userdata",
        members: 2,
        assignors: &["kcp.live.UserDataAssignor"],
        verdict: "blocked",
        failed: &["assignment_user_data"],
        converts: false,
        refusal: "GroupIdNotFoundException",
    });
}

#[test]
fn a_disabled_migration_policy_is_refused_on_kafka_4_1() {
    run(Scenario {
        cluster: "k41nomig",
        what: "nomig",
        members: 2,
        assignors: &["cooperative-sticky"],
        verdict: "blocked",
        failed: &["migration_policy"],
        converts: false,
        refusal: "GroupIdNotFoundException",
    });
}

#[test]
fn kafka_3_9_without_the_consumer_protocol_refuses() {
    run(Scenario {
        cluster: "k39",
        what: "noproto",
        members: 2,
        assignors: &["cooperative-sticky"],
        verdict: "blocked",
        failed: &["consumer_protocol_enabled", "migration_policy"],
        converts: false,
        refusal: "UnsupportedVersionException",
    });
}

#[test]
fn a_cooperative_sticky_group_converts_on_kafka_3_9_with_the_consumer_protocol() {
    run(Scenario {
        cluster: "k39c",
        what: "plain",
        members: 2,
        assignors: &["cooperative-sticky"],
        verdict: "ready",
        failed: &[],
        converts: true,
        refusal: "",
    });
}

#[test]
fn a_group_over_group_consumer_max_size_is_refused_on_kafka_3_9() {
    run(Scenario {
        cluster: "k39c",
        what: "size",
        members: 3,
        assignors: &["range"],
        verdict: "blocked",
        failed: &["group_size"],
        converts: false,
        // Two members are left when the third restarts: the group converts (2 <= 2), and the
        // restarted member does not fit (GROUP_MAX_SIZE_REACHED). Either way it is refused.
        refusal: "GroupMaxSizeReachedException",
    });
}

#[test]
fn kafka_3_9_converts_a_group_with_assignment_user_data_and_drops_it() {
    run(Scenario {
        cluster: "k39c",
        what: "userdata",
        members: 2,
        assignors: &["kcp.live.UserDataAssignor"],
        verdict: "ready",
        failed: &[],
        converts: true,
        refusal: "",
    });
}

// ---------------------------------------------------------------------------------------------
// Groups no Java consumer makes: a Connect-style protocol type, and a rebalance held open. Their
// members are requests sent through `Client::send`.

fn s(text: &str) -> StrBytes {
    StrBytes::from_string(text.to_owned())
}

fn deadline() -> Deadline {
    Deadline::after(Duration::from_secs(30))
}

/// A classic member driven by hand: JoinGroup (twice from v4: MEMBER_ID_REQUIRED), nothing else.
/// Returns (member id, generation, leader) once joined, or the JoinGroup's error code.
async fn join(
    client: &Client,
    group: &str,
    protocol_type: &str,
    protocol: &str,
    metadata: Vec<u8>,
) -> Result<(String, i32, String), i16> {
    let target = Target::Coordinator(group.to_owned());
    let build = |member_id: String| {
        let metadata = metadata.clone();
        let (group, protocol_type, protocol) = (group.to_owned(), protocol_type.to_owned(), protocol.to_owned());
        move |version: i16| {
            let mut request = JoinGroupRequest::default()
                .with_group_id(GroupId(s(&group)))
                // Long enough to outlast the test without heartbeats.
                .with_session_timeout_ms(90_000)
                .with_member_id(s(&member_id))
                .with_protocol_type(s(&protocol_type))
                .with_protocols(vec![JoinGroupRequestProtocol::default()
                    .with_name(s(&protocol))
                    .with_metadata(metadata.clone().into())]);
            if version >= 1 {
                request.rebalance_timeout_ms = 90_000;
            }
            request
        }
    };
    let options = SendOptions::new(Deadline::after(Duration::from_secs(100))).request_timeout(Duration::from_secs(95));
    let first = client.send(&target, options, build(String::new())).await.unwrap().response;
    let member_id = if first.error_code == 79 { first.member_id.to_string() } else { String::new() };
    let joined = if first.error_code == 79 {
        client.send(&target, options, build(member_id.clone())).await.unwrap().response
    } else {
        first
    };
    if joined.error_code != 0 {
        return Err(joined.error_code);
    }
    Ok((joined.member_id.to_string(), joined.generation_id, joined.leader.to_string()))
}

/// SyncGroup as the only member and leader, giving itself `assignment`.
async fn sync_leader(
    client: &Client,
    group: &str,
    (protocol_type, protocol): (&str, &str),
    (member_id, generation): (&str, i32),
    assignment: Vec<u8>,
) {
    let target = Target::Coordinator(group.to_owned());
    let synced = client
        .send(&target, SendOptions::new(deadline()), |version| {
            let mut request = SyncGroupRequest::default()
                .with_group_id(GroupId(s(group)))
                .with_generation_id(generation)
                .with_member_id(s(member_id))
                .with_assignments(vec![SyncGroupRequestAssignment::default()
                    .with_member_id(s(member_id))
                    .with_assignment(assignment.clone().into())]);
            if version >= 5 {
                request.protocol_type = Some(s(protocol_type));
                request.protocol_name = Some(s(protocol));
            }
            request
        })
        .await
        .unwrap();
    assert_eq!(synced.response.error_code, 0, "SyncGroup of {group}");
}

fn client(cluster: &Cluster) -> Client {
    Client::new(ClientConfig::new([cluster.bootstrap.as_str()]).unwrap()).unwrap()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap()
}

#[test]
fn a_connect_protocol_group_is_refused_on_kafka_4_1() {
    let Some(cluster) = Cluster::shared("k41") else { return };
    let topic = live::unique_name("upgrade-connect-t");
    let group = live::unique_name("upgrade-connect-g");
    cluster.create_topic(&topic, 4);
    let rt = runtime();
    let c = client(&cluster);
    rt.block_on(async {
        // Connect's metadata is its own schema; the broker never reads it for a classic group.
        let (member, generation, leader) =
            join(&c, &group, "connect", "sessioned", b"\x00\x01worker".to_vec()).await.unwrap();
        assert_eq!(member, leader);
        sync_leader(&c, &group, ("connect", "sessioned"), (&member, generation), b"\x00\x01tasks".to_vec()).await;
    });
    let report = upgrade_check(&cluster, &group);
    assert_eq!(report["verdict"], "blocked", "{report:#}");
    assert_eq!(failed_checks(&report), ["protocol_type"]);
    assert_eq!(report["broker_converts"], false);
    let (outcome, mut upgrader) = try_upgrade(&cluster, &group, &topic);
    assert_eq!(outcome, Outcome::Refused("GroupIdNotFoundException".into()), "{}", upgrader.diagnostics());
    let _ = upgrader.terminate(EXIT);
}

#[test]
fn a_group_in_an_unfinished_rebalance_is_blocked_and_kafka_4_1_converts_it_anyway() {
    let Some(cluster) = Cluster::shared("k41") else { return };
    let topic = live::unique_name("upgrade-rebalance-t");
    let group = live::unique_name("upgrade-rebalance-g");
    cluster.create_topic(&topic, 4);
    let rt = runtime();
    let c = client(&cluster);
    let subscription = Subscription::new([topic.as_str()]).encode(Version::V3).unwrap();
    rt.block_on(async {
        let (member, generation, _) = join(&c, &group, "consumer", "range", subscription.clone()).await.unwrap();
        let assignment =
            Assignment::new(vec![TopicPartitions::new(topic.as_str(), [0, 1, 2, 3])]).encode(Version::V3).unwrap();
        sync_leader(&c, &group, ("consumer", "range"), (&member, generation), assignment).await;
    });
    // A second member joins: the group prepares a rebalance and waits for the first to rejoin,
    // which it never does (90 s rebalance timeout): the JoinGroup stays pending meanwhile.
    let pending = {
        let (c, group, subscription) = (c.clone(), group.clone(), subscription.clone());
        rt.spawn(async move { join(&c, &group, "consumer", "range", subscription).await })
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    let report = loop {
        let report = upgrade_check(&cluster, &group);
        let state = report["checks"].as_array().unwrap().iter().find(|c| c["name"] == "rebalance_state").cloned();
        if state.as_ref().is_some_and(|c| c["evidence"] == "the group is PreparingRebalance") {
            break report;
        }
        assert!(Instant::now() < deadline, "no rebalance: {report:#}");
        std::thread::sleep(Duration::from_millis(300));
    };
    assert_eq!(report["verdict"], "blocked", "{report:#}");
    assert_eq!(failed_checks(&report), ["rebalance_state"]);
    // The payloads are not reported during a rebalance: whether the broker refuses is unknown.
    assert_eq!(report["broker_converts"], Value::Null);
    let (outcome, mut upgrader) = try_upgrade(&cluster, &group, &topic);
    // Kafka 4.1 converts it (KAFKA-21582: from the last completed assignment), which is why
    // kcp blocks it: the verdict is about safety, broker_converts about the broker's answer.
    assert_eq!(outcome, Outcome::Converted, "{}", upgrader.diagnostics());
    let _ = upgrader.terminate(EXIT);
    pending.abort();
}

// ---------------------------------------------------------------------------------------------
// The way back: a consumer group with one consumer-protocol member and one classic member; the
// consumer-protocol member leaves, and the broker converts the group to classic, or not.

/// The group's type as `kcp group list` reports it.
fn group_type(cluster: &Cluster, group: &str) -> Option<String> {
    let listed = kcp_json(&["group", "list", "--bootstrap-server", &cluster.bootstrap]);
    listed["groups"]
        .as_array()?
        .iter()
        .find(|g| g["group_id"] == group)
        .and_then(|g| g["type"].as_str().map(str::to_owned))
}

fn downgrade(cluster_name: &str, verdict: &str, converts: bool) {
    let Some(cluster) = Cluster::shared(cluster_name) else { return };
    let topic = live::unique_name("upgrade-down-t");
    let group = live::unique_name("upgrade-down-g");
    cluster.create_topic(&topic, 4);
    let mut modern = cluster
        .java(&MemberOptions::new(&group, [&topic]).group_protocol("consumer").client_id("modern").duration_s(150));
    modern.wait_event("assigned", SETTLE).unwrap_or_else(|e| panic!("{e}"));
    let mut old = cluster
        .java(&MemberOptions::new(&group, [&topic]).assignors(["cooperative-sticky"]).client_id("old").duration_s(150));
    old.wait_event("assigned", SETTLE).unwrap_or_else(|e| panic!("{e}"));
    let deadline = Instant::now() + SETTLE;
    let report = loop {
        let args =
            ["group", "upgrade-check", "--downgrade", "--bootstrap-server", &cluster.bootstrap, "--group", &group];
        let report = kcp_json(&args);
        let both = report["checks"].as_array().unwrap().iter().any(|c| {
            c["name"] == "member_protocols"
                && c["evidence"].as_str().unwrap_or("").starts_with("1 consumer-protocol and 1 classic")
        });
        let stable =
            report["checks"].as_array().unwrap().iter().any(|c| c["name"] == "rebalance_state" && c["ok"] == true);
        if both && stable {
            break report;
        }
        assert!(Instant::now() < deadline, "the mixed group did not settle: {report:#}");
        std::thread::sleep(Duration::from_millis(500));
    };
    assert_eq!(report["direction"], "downgrade");
    assert_eq!(report["verdict"], verdict, "{report:#}");
    assert_eq!(report["broker_converts"], Value::Bool(converts), "{report:#}");
    assert_eq!(group_type(&cluster, &group).as_deref(), Some("consumer"));
    modern.terminate(EXIT).unwrap_or_else(|e| panic!("{e}"));
    // The broker converts (or not) as it removes the leaving member; the classic member then
    // rejoins either way.
    let deadline = Instant::now() + Duration::from_secs(20);
    let expected = if converts { "classic" } else { "consumer" };
    loop {
        let now = group_type(&cluster, &group);
        if converts && now.as_deref() == Some("classic") {
            break;
        }
        if Instant::now() >= deadline {
            assert_eq!(now.as_deref(), Some(expected), "{}", old.diagnostics());
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    let _ = old.terminate(EXIT);
}

#[test]
fn a_mixed_group_goes_back_to_classic_on_kafka_4_1() {
    downgrade("k41", "ready", true);
}

#[test]
fn a_disabled_migration_policy_keeps_a_mixed_group_a_consumer_group_on_kafka_4_1() {
    downgrade("k41nomig", "blocked", false);
}
