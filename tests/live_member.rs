//! `kcp group join` members in real groups, next to Java and librdkafka members, through
//! membership changes, protocol upgrades and faults (Kafka 3.9.1, 4.1.1 and a 3-broker 3.9.1
//! cluster started by `tools/live/kafka.sh`; see tools/live/README.md).
//!
//! Every test merges its members' logs by wall-clock time and checks that no partition was owned
//! by two members at the same moment, that the group settles with every partition owned by
//! exactly one live member, that the number of generations stays within a bound stated in the
//! test, and that every process ends (SIGTERM: the member leaves and exits 0). Without the
//! clusters' env the tests print SKIP; CI sets KCP_LIVE_REQUIRED=1 and they must run.

mod live;

use std::collections::BTreeSet;
use std::process::Command;
use std::time::{Duration, Instant};

use live::{Cluster, Event, Member, MemberLog, MemberOptions, TopicPartition};

const SETTLE: Duration = Duration::from_secs(60);
const QUIET: Duration = Duration::from_secs(3);
const EXIT: Duration = Duration::from_secs(30);
/// Short timeouts keep the faults quick: the broker expels a silent member after 10 s (6 s was
/// seen to expire whole groups on a machine at load 19).
const SESSION_MS: u32 = 10_000;
const HEARTBEAT_MS: u32 = 1_000;

fn options(group: &str, topic: &str, assignors: &[&str]) -> MemberOptions {
    let mut o = MemberOptions::new(group, [topic]).assignors(assignors.iter().copied()).session_timeout_ms(SESSION_MS);
    o.heartbeat_interval_ms = Some(HEARTBEAT_MS);
    o.duration_s = Some(300);
    o
}

/// A `kcp group join` member with the same options the reference members take.
fn kcp(cluster: &Cluster, o: &MemberOptions) -> Member {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kcp"));
    let bootstrap = o.bootstrap.clone().unwrap_or_else(|| cluster.bootstrap.clone());
    cmd.args(["group", "join", "--bootstrap-server", &bootstrap, "--group", &o.group, "--topics", &o.topics.join(",")]);
    // The broker's join barrier waits for the slowest member's rebalance timeout; keep it short.
    cmd.args(["--rebalance-timeout-ms", "30000"]);
    let flags = [
        ("--assignors", (!o.assignors.is_empty()).then(|| o.assignors.join(","))),
        ("--instance-id", o.instance_id.clone()),
        ("--rack", o.rack.clone()),
        ("--client-id", o.client_id.clone()),
        ("--session-timeout-ms", o.session_timeout_ms.map(|v| v.to_string())),
        ("--heartbeat-interval-ms", o.heartbeat_interval_ms.map(|v| v.to_string())),
        ("--duration-s", o.duration_s.map(|v| v.to_string())),
    ];
    for (flag, value) in flags {
        if let Some(v) = value {
            cmd.args([flag, &v]);
        }
    }
    cluster.spawn(o.label("kcp"), cmd)
}

fn settle(members: &mut [&mut Member], expected: &BTreeSet<TopicPartition>) {
    live::wait_settled(members, expected, SETTLE, QUIET).unwrap_or_else(|e| panic!("{e}"));
}

fn is_fatal(e: &Event) -> bool {
    // kcp marks its fatal errors; the reference members print `error` only when they stop.
    e.event == "error" && (e.raw.get("fatal").is_none() || e.raw["fatal"] == true)
}

/// Every member still running leaves on SIGTERM and exits 0 with `left` as its last line and no
/// fatal error; then the merged logs of all of them (ended ones too) are checked.
fn finish(members: &mut [&mut Member], max_generations: usize) -> Vec<MemberLog> {
    for m in members.iter_mut() {
        if m.exit_status().is_some() {
            continue;
        }
        let status = m.terminate(EXIT).unwrap_or_else(|e| panic!("{e}"));
        assert!(status.success(), "{} exited with {status}\n{}", m.label, m.diagnostics());
        let events = m.events();
        assert_eq!(events.last().map(|e| e.event.as_str()), Some("left"), "{}", m.diagnostics());
        assert!(!events.iter().any(is_fatal), "{}", m.diagnostics());
    }
    let logs: Vec<MemberLog> = members.iter_mut().map(|m| m.log()).collect();
    live::check_no_double_ownership(&logs).unwrap_or_else(|e| panic!("{e}"));
    live::check_generations(&logs, max_generations).unwrap_or_else(|e| panic!("{e}"));
    logs
}

/// The highest generation any of `members` has logged.
fn max_generation(members: &[&Member]) -> i32 {
    members.iter().flat_map(|m| m.events()).filter_map(|e| e.generation_id).max().unwrap_or(-1)
}

fn kcp_joined(m: &Member) -> Vec<Event> {
    m.events().into_iter().filter(|e| e.event == "joined").collect()
}

/// The fatal error a bounced member stopped with.
fn fatal_error(m: &mut Member) -> Event {
    let status = m.wait_exit(EXIT).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(status.code(), Some(1), "{} should stop with exit 1\n{}", m.label, m.diagnostics());
    m.events().into_iter().find(is_fatal).unwrap_or_else(|| panic!("{}: no fatal error\n{}", m.label, m.diagnostics()))
}

#[test]
fn cooperative_java_and_kcp_members_through_scale_out_leave_kill_and_a_static_restart() {
    let Some(cluster) = Cluster::shared("k39") else { return };
    let topic = live::unique_name("member-coop");
    let group = live::unique_name("member-coop-g");
    cluster.create_topic(&topic, 8);
    let expected = live::partitions(&topic, 0..8);
    let o = options(&group, &topic, &["cooperative-sticky"]);
    let mut j1 = cluster.java(&o.clone().client_id("j1"));
    let mut j2 = cluster.java(&o.clone().client_id("j2"));
    let mut k1 = kcp(&cluster, &o.clone().client_id("k1"));
    let mut k2 = kcp(&cluster, &o.clone().client_id("k2").instance_id("k2-static"));
    settle(&mut [&mut j1, &mut j2, &mut k1, &mut k2], &expected);
    for m in [&j1, &j2, &k1, &k2] {
        assert_eq!(m.owned().len(), 2, "8 partitions over 4 members: {}", m.diagnostics());
    }
    let joined = kcp_joined(&k1);
    let last = joined.last().expect("k1 joined");
    assert_eq!(
        (last.raw["protocol"].as_str(), last.raw["assignor"].as_str()),
        (Some("cooperative"), Some("cooperative-sticky"))
    );

    // Scale out by one kcp member: cooperative, so nobody loses a partition it keeps.
    let mut k3 = kcp(&cluster, &o.clone().client_id("k3"));
    settle(&mut [&mut j1, &mut j2, &mut k1, &mut k2, &mut k3], &expected);
    assert!(!k1.events().iter().chain(j1.events().iter()).any(|e| e.event == "lost"));

    // One Java member leaves.
    let status = j1.terminate(EXIT).unwrap_or_else(|e| panic!("{e}"));
    assert!(status.success(), "{}", j1.diagnostics());
    settle(&mut [&mut j1, &mut j2, &mut k1, &mut k2, &mut k3], &expected);

    // One kcp member dies without a word: the broker expels it after the session timeout.
    k3.kill();
    settle(&mut [&mut j1, &mut j2, &mut k1, &mut k2, &mut k3], &expected);
    let mut shares: Vec<usize> = [&j2, &k1, &k2].iter().map(|m| m.owned().len()).collect();
    shares.sort_unstable();
    assert_eq!(shares, [2, 3, 3], "8 partitions over 3 members");

    // The static member restarts within its session timeout: it gets its place and its
    // partitions back with no new generation (KIP-345).
    let generation = max_generation(&[&j2, &k1, &k2]);
    let k2_owned = k2.owned();
    k2.kill();
    let mut k2b = kcp(&cluster, &o.clone().client_id("k2b").instance_id("k2-static"));
    k2b.wait_for("its old partitions", SETTLE, |es| es.iter().any(|e| e.event == "assigned"))
        .unwrap_or_else(|e| panic!("{e}"));
    settle(&mut [&mut j1, &mut j2, &mut k1, &mut k2, &mut k3, &mut k2b], &expected);
    std::thread::sleep(QUIET);
    assert_eq!(k2b.owned(), k2_owned, "{}", k2b.diagnostics());
    let rejoined = kcp_joined(&k2b);
    assert_eq!(rejoined.len(), 1, "{}", k2b.diagnostics());
    assert_eq!(rejoined[0].generation_id, Some(generation), "{}", k2b.diagnostics());
    assert_eq!(max_generation(&[&j2, &k1, &k2b]), generation, "no rebalance for a static restart");

    // 4 joins (up to 2 rounds each under KIP-429, some merged), 1 join, 1 leave, 1 expiry: 16.
    finish(&mut [&mut j1, &mut j2, &mut k1, &mut k2, &mut k3, &mut k2b], 16);
}

/// Restarts `m` (graceful leave, then a new process with `assignors`) and waits until the group
/// has settled again.
fn bounce(
    cluster: &Cluster,
    all: &mut Vec<Member>,
    index: usize,
    o: &MemberOptions,
    java: bool,
    expected: &BTreeSet<TopicPartition>,
) {
    let status = all[index].terminate(EXIT).unwrap_or_else(|e| panic!("{e}"));
    assert!(status.success(), "{}", all[index].diagnostics());
    let m = if java { cluster.java(o) } else { kcp(cluster, o) };
    all.push(m);
    let mut refs: Vec<&mut Member> = all.iter_mut().collect();
    settle(&mut refs, expected);
}

#[test]
fn the_two_bounce_upgrade_from_range_to_cooperative_sticky_with_kcp_and_java_members() {
    let Some(cluster) = Cluster::shared("k39") else { return };
    let topic = live::unique_name("member-upgrade");
    let group = live::unique_name("member-upgrade-g");
    cluster.create_topic(&topic, 6);
    let expected = live::partitions(&topic, 0..6);
    let names = ["k1", "j1", "k2", "j2"];
    let is_java = |name: &str| name.starts_with('j');
    let start = |assignors: &[&str], round: usize, name: &str| {
        let o = options(&group, &topic, assignors).client_id(&format!("{name}-{round}"));
        if is_java(name) {
            cluster.java(&o)
        } else {
            kcp(&cluster, &o)
        }
    };
    let mut all: Vec<Member> = names.iter().map(|n| start(&["range"], 0, n)).collect();
    {
        let mut refs: Vec<&mut Member> = all.iter_mut().collect();
        settle(&mut refs, &expected);
    }
    let mut current: Vec<usize> = (0..names.len()).collect();
    for (round, assignors) in [&["cooperative-sticky", "range"][..], &["cooperative-sticky"][..]].iter().enumerate() {
        for (slot, name) in names.iter().enumerate() {
            let o = options(&group, &topic, assignors).client_id(&format!("{name}-{}", round + 1));
            bounce(&cluster, &mut all, current[slot], &o, is_java(name), &expected);
            current[slot] = all.len() - 1;
        }
    }
    // After the second bounce the group runs the cooperative protocol.
    for slot in [0, 2] {
        let joined = kcp_joined(&all[current[slot]]);
        let last = joined.last().expect("joined");
        assert_eq!(last.raw["protocol"], "cooperative", "{}", all[current[slot]].diagnostics());
        assert_eq!(last.raw["assignor"], "cooperative-sticky");
    }
    // The first-bounce kcp members offered both but ran eager (range is still there): they
    // revoked everything before every rejoin.
    let first_bounce_kcp = &all[4];
    assert!(
        kcp_joined(first_bounce_kcp).iter().all(|e| e.raw["protocol"] == "eager"),
        "{}",
        first_bounce_kcp.diagnostics()
    );
    let mut refs: Vec<&mut Member> = all.iter_mut().collect();
    // 12 members over time, 8 bounces of 2 membership changes each, up to 2 rounds per change.
    finish(&mut refs, 40);
}

#[test]
fn a_one_bounce_switch_to_cooperative_sticky_stops_the_bounced_members_with_inconsistent_group_protocol() {
    let Some(cluster) = Cluster::shared("k39") else { return };
    let topic = live::unique_name("member-one-bounce");
    let group = live::unique_name("member-one-bounce-g");
    cluster.create_topic(&topic, 4);
    let expected = live::partitions(&topic, 0..4);
    let range = options(&group, &topic, &["range"]);
    let mut k1 = kcp(&cluster, &range.clone().client_id("k1"));
    let mut j1 = cluster.java(&range.clone().client_id("j1"));
    settle(&mut [&mut k1, &mut j1], &expected);
    // The mistake: cooperative-sticky alone, while the group's members all speak range only.
    let coop = options(&group, &topic, &["cooperative-sticky"]);
    let mut bad_kcp = kcp(&cluster, &coop.clone().client_id("k-bad"));
    let error = fatal_error(&mut bad_kcp);
    assert_eq!(error.raw["error"]["name"], "INCONSISTENT_GROUP_PROTOCOL", "{}", bad_kcp.diagnostics());
    assert_eq!(error.raw["error"]["api"], "JoinGroup");
    let mut bad_java = cluster.java(&coop.clone().client_id("j-bad"));
    let error = fatal_error(&mut bad_java);
    assert!(error.raw.to_string().contains("InconsistentGroupProtocol"), "{}", bad_java.diagnostics());
    // The range members never noticed.
    settle(&mut [&mut k1, &mut j1], &expected);
    assert!(bad_kcp.events().iter().all(|e| e.owned.as_ref().is_none_or(BTreeSet::is_empty)));
    finish(&mut [&mut k1, &mut j1, &mut bad_kcp, &mut bad_java], 4);
}

#[test]
fn librdkafka_and_kcp_members_share_a_cooperative_group() {
    let Some(cluster) = Cluster::shared("k39") else { return };
    let topic = live::unique_name("member-rdkafka");
    let group = live::unique_name("member-rdkafka-g");
    cluster.create_topic(&topic, 6);
    let expected = live::partitions(&topic, 0..6);
    let o = options(&group, &topic, &["cooperative-sticky"]);
    let mut r1 = cluster.rdkafka(&o.clone().client_id("r1"));
    let mut k1 = kcp(&cluster, &o.clone().client_id("k1"));
    let mut r2 = cluster.rdkafka(&o.clone().client_id("r2"));
    let mut k2 = kcp(&cluster, &o.clone().client_id("k2"));
    settle(&mut [&mut r1, &mut k1, &mut r2, &mut k2], &expected);
    let status = r1.terminate(EXIT).unwrap_or_else(|e| panic!("{e}"));
    assert!(status.success(), "{}", r1.diagnostics());
    settle(&mut [&mut r1, &mut k1, &mut r2, &mut k2], &expected);
    finish(&mut [&mut r1, &mut k1, &mut r2, &mut k2], 12);
}

fn signal(m: &Member, signal: &str) {
    let status = Command::new("kill").args([signal, &m.pid().to_string()]).status().expect("kill runs");
    assert!(status.success(), "kill {signal} {}", m.pid());
}

/// librdkafka PR #5604: a session that expires while a rebalance is in flight must be reported
/// as `lost`, not `revoked`. The kcp member is frozen (SIGSTOP) in the middle of a cooperative
/// rebalance, for longer than its session timeout; when it wakes up its partitions are lost.
#[test]
fn a_session_that_expires_during_a_rebalance_is_reported_as_lost() {
    let Some(cluster) = Cluster::shared("k39") else { return };
    let topic = live::unique_name("member-lost");
    let group = live::unique_name("member-lost-g");
    cluster.create_topic(&topic, 4);
    let expected = live::partitions(&topic, 0..4);
    let o = options(&group, &topic, &["cooperative-sticky"]);
    let mut k1 = kcp(&cluster, &o.clone().client_id("k1"));
    settle(&mut [&mut k1], &expected);
    let before = k1.events().len();
    // A second member starts a rebalance; k1 revokes half and rejoins for the follow-up.
    let mut j1 = cluster.java(&o.clone().client_id("j1"));
    k1.wait_for("the cooperative revocation", SETTLE, |es| es[before..].iter().any(|e| e.event == "revoked"))
        .unwrap_or_else(|e| panic!("{e}"));
    signal(&k1, "-STOP");
    let frozen_at = live::now_ms();
    let frozen_owned = k1.owned();
    assert!(!frozen_owned.is_empty(), "{}", k1.diagnostics());
    // j1 takes everything once the broker expelled k1.
    j1.wait_for("all partitions", SETTLE, |es| {
        es.iter().rev().find_map(|e| e.owned.clone()).is_some_and(|o| o.len() == 4)
    })
    .unwrap_or_else(|e| panic!("{e}"));
    // k1's own session clock ran out with the broker's; give it a heartbeat interval more.
    std::thread::sleep(Duration::from_millis(u64::from(2 * HEARTBEAT_MS)));
    let frozen_events = k1.events().len();
    signal(&k1, "-CONT");
    k1.wait_for("lost", SETTLE, |es| es[frozen_events..].iter().any(|e| e.event == "lost"))
        .unwrap_or_else(|e| panic!("{e}"));
    let after: Vec<Event> = k1.events()[frozen_events..].to_vec();
    let lost = after.iter().find(|e| e.event == "lost").expect("seen");
    assert_eq!(lost.partitions, frozen_owned, "{}", k1.diagnostics());
    assert!(
        !after.iter().take_while(|e| e.event != "lost").any(|e| e.event == "revoked"),
        "revoked before lost: {}",
        k1.diagnostics()
    );
    // The broker had expelled k1 (a session timeout after its last heartbeat) before j1 took
    // its partitions: j1's acquisition of them comes after the freeze plus the session timeout,
    // less one heartbeat interval.
    let taken = j1
        .events()
        .into_iter()
        .find(|e| e.event == "assigned" && e.ts_ms > frozen_at && !e.partitions.is_disjoint(&frozen_owned))
        .expect("j1 took k1's partitions");
    assert!(
        taken.ts_ms + u64::from(HEARTBEAT_MS) >= frozen_at + u64::from(SESSION_MS),
        "{taken:?} frozen at {frozen_at}"
    );
    // k1 rejoins as a new member and the group settles again.
    settle(&mut [&mut k1, &mut j1], &expected);
    for m in [&mut k1, &mut j1] {
        let status = m.terminate(EXIT).unwrap_or_else(|e| panic!("{e}"));
        assert!(status.success(), "{}", m.diagnostics());
    }
    // From k1's wake-up on, ownership never overlaps (before it, k1 believed in partitions the
    // group had already given away: that is what `lost` reports).
    let mut logs: Vec<MemberLog> = [&mut k1, &mut j1].into_iter().map(|m| m.log()).collect();
    logs[0].events.retain(|e| e.ts_ms >= lost.ts_ms);
    live::check_no_double_ownership(&logs).unwrap_or_else(|e| panic!("{e}"));
}

/// Waits until `m` has logged an `event` after its first `since` events.
fn wait_count(m: &mut Member, event: &str, since: usize, timeout: Duration) {
    m.wait_for(&format!("a new {event}"), timeout, |es| es[since..].iter().any(|e| e.event == event))
        .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn the_broker_restarted_under_a_running_group() {
    let Some(cluster) = Cluster::exclusive("k39") else { return };
    let topic = live::unique_name("member-restart");
    let group = live::unique_name("member-restart-g");
    cluster.create_topic(&topic, 4);
    let expected = live::partitions(&topic, 0..4);
    let o = options(&group, &topic, &["cooperative-sticky"]);
    let mut k1 = kcp(&cluster, &o.clone().client_id("k1"));
    let mut k2 = kcp(&cluster, &o.clone().client_id("k2"));
    let mut j1 = cluster.java(&o.clone().client_id("j1"));
    settle(&mut [&mut k1, &mut k2, &mut j1], &expected);
    let started = Instant::now();
    cluster.restart_broker(1);
    let down_for = started.elapsed();
    settle(&mut [&mut k1, &mut k2, &mut j1], &expected);
    // The kcp members noticed (a lost connection is an error event, not a fatal one) and kept
    // or regained their share.
    for m in [&k1, &k2] {
        assert!(
            m.events().iter().any(|e| e.event == "error"),
            "{} saw no outage in {down_for:?}\n{}",
            m.label,
            m.diagnostics()
        );
    }
    finish(&mut [&mut k1, &mut k2, &mut j1], 14);
}

/// Starts a killed broker again when the test ends, passed or failed: the other tests expect the
/// whole cluster.
struct RestartOnDrop<'a>(&'a Cluster, i32);

impl Drop for RestartOnDrop<'_> {
    fn drop(&mut self) {
        if let Err(e) = self.0.ctl(&["restart-broker", &self.0.name, &self.1.to_string()], Duration::from_secs(180)) {
            eprintln!("{e}");
        }
    }
}

/// A topic on every broker. Right after its creation a broker may not know the topic yet
/// (UnknownTopicOrPartition from the admin's describe): asking again is bounded.
fn create_replicated_topic(cluster: &Cluster, topic: &str, partitions: i32) {
    let p = partitions.to_string();
    let mut last = String::new();
    for _ in 0..10 {
        match cluster.admin(&["create-topic", topic, &p, "3"]) {
            Ok(_) => return,
            Err(e) => last = e,
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    panic!("{}: {last}", cluster.name);
}

#[test]
fn the_coordinator_broker_of_a_three_broker_cluster_killed() {
    let Some(cluster) = Cluster::exclusive("k39x3") else { return };
    let topic = live::unique_name("member-coordinator");
    let group = live::unique_name("member-coordinator-g");
    create_replicated_topic(&cluster, &topic, 6);
    let expected = live::partitions(&topic, 0..6);
    let o = options(&group, &topic, &["cooperative-sticky"]);
    let mut k1 = kcp(&cluster, &o.clone().client_id("k1"));
    let mut k2 = kcp(&cluster, &o.clone().client_id("k2"));
    let mut j1 = cluster.java(&o.clone().client_id("j1"));
    settle(&mut [&mut k1, &mut k2, &mut j1], &expected);
    let coordinator = cluster.coordinator_id(&group);
    let generation = max_generation(&[&k1, &k2, &j1]);
    let before = (k1.events().len(), k2.events().len());
    cluster.kill_broker(coordinator);
    let _restart = RestartOnDrop(&cluster, coordinator);
    // The group moves to a new coordinator: the members find it and the group settles again,
    // everyone a member of a new generation or still in the old one (the new coordinator loads
    // the group from __consumer_offsets).
    let mut k3 = kcp(&cluster, &o.clone().client_id("k3"));
    wait_count(&mut k3, "assigned", 0, SETTLE);
    settle(&mut [&mut k1, &mut k2, &mut j1, &mut k3], &expected);
    let new_coordinator = cluster.coordinator_id(&group);
    assert_ne!(new_coordinator, coordinator);
    // k1 and k2 joined a generation of the new coordinator (k3's arrival made one) and hold a
    // share of it.
    for (m, since) in [(&k1, before.0), (&k2, before.1)] {
        let rejoined = m.events()[since..].iter().any(|e| e.event == "joined" && e.generation_id > Some(generation));
        assert!(rejoined && !m.owned().is_empty(), "{}", m.diagnostics());
    }
    finish(&mut [&mut k1, &mut k2, &mut j1, &mut k3], 14);
}

#[test]
fn kcp_classic_members_in_a_consumer_group_upgraded_online_and_downgraded_on_kafka_4_1() {
    let Some(cluster) = Cluster::shared("k41") else { return };
    let topic = live::unique_name("member-848");
    let group = live::unique_name("member-848-g");
    cluster.create_topic(&topic, 6);
    let expected = live::partitions(&topic, 0..6);
    let classic = options(&group, &topic, &["cooperative-sticky"]);
    let mut k1 = kcp(&cluster, &classic.clone().client_id("k1"));
    let mut k2 = kcp(&cluster, &classic.clone().client_id("k2"));
    settle(&mut [&mut k1, &mut k2], &expected);
    assert_eq!(cluster.describe_group(&group)["type"], "classic");
    // The first consumer-protocol member arrives in the settled classic group: online upgrade.
    let mut consumer = MemberOptions::new(&group, [&topic]).group_protocol("consumer").client_id("j1");
    consumer.duration_s = Some(300);
    let mut j1 = cluster.java(&consumer);
    settle(&mut [&mut k1, &mut k2, &mut j1], &expected);
    let described = cluster.describe_group(&group);
    assert_eq!(described["type"], "consumer", "{described}");
    let members = described["members"].as_array().cloned().unwrap_or_default();
    let classic_members = members.iter().filter(|m| m["upgraded"] == false).count();
    assert_eq!((members.len(), classic_members), (3, 2), "{described}");
    // More movement inside the consumer group: a second consumer-protocol member.
    let mut j2 = cluster.java(&consumer.clone().client_id("j2"));
    settle(&mut [&mut k1, &mut k2, &mut j1, &mut j2], &expected);
    // The last consumer-protocol members leave: the group goes back to classic.
    for m in [&mut j2, &mut j1] {
        let status = m.terminate(EXIT).unwrap_or_else(|e| panic!("{e}"));
        assert!(status.success(), "{}", m.diagnostics());
    }
    settle(&mut [&mut k1, &mut k2, &mut j1, &mut j2], &expected);
    let described = cluster.describe_group(&group);
    assert_eq!(described["type"], "classic", "{described}");
    // Member epochs of the consumer group and classic generations both count here.
    finish(&mut [&mut k1, &mut k2, &mut j1, &mut j2], 30);
}

/// `kcp group join | head` after the reader has gone: the first line the member cannot write
/// makes it leave the group as on SIGTERM, and it exits 0 without a word (the reader saw enough),
/// long before `--duration-s`. The group is left empty at once (LeaveGroup, not a session
/// expiry).
#[test]
fn a_member_whose_stdout_is_closed_leaves_the_group_and_exits_0() {
    let Some(cluster) = Cluster::shared("k39") else { return };
    let topic = live::unique_name("member-pipe");
    let group = live::unique_name("member-pipe-g");
    cluster.create_topic(&topic, 2);
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let mut child = Command::new(env!("CARGO_BIN_EXE_kcp"))
        .args(["group", "join", "--bootstrap-server", &cluster.bootstrap, "--group", &group, "--topics", &topic])
        .args([
            "--session-timeout-ms",
            &SESSION_MS.to_string(),
            "--rebalance-timeout-ms",
            "30000",
            "--duration-s",
            "300",
        ])
        .stdout(writer)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("kcp runs");
    let deadline = Instant::now() + SETTLE;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("kcp group join kept running with its stdout closed");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().expect("stderr"), &mut stderr).expect("stderr");
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("cannot write"), "a closed pipe is not an error: {stderr}");
    let described = cluster.describe_group(&group);
    assert_eq!(described["members"].as_array().map(Vec::len), Some(0), "{described}");
}
