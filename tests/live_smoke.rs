//! Smoke tests of the live-test infrastructure (tools/live/, tests/live/): real brokers, Java and
//! librdkafka members in one group, their merged logs checked. The group-member and describe
//! tests build on the same support. Without the clusters' env these print SKIP (see
//! tools/live/README.md); CI starts the clusters and sets KCP_LIVE_REQUIRED=1.

mod live;

use live::member::parse_partitions;
use live::{Cluster, Member, MemberOptions};
use std::time::Duration;

const SETTLE: Duration = Duration::from_secs(90);
const QUIET: Duration = Duration::from_secs(3);
const EXIT: Duration = Duration::from_secs(45);

/// Java's admin view of the group agrees with what every member reports of its own assignment
/// and with what its callbacks say it owns.
fn describe_agrees(cluster: &Cluster, group: &str, members: &[&Member]) -> Result<(), String> {
    let described = cluster.describe_group(group);
    let listed = described["members"].as_array().cloned().unwrap_or_default();
    if listed.len() != members.len() {
        return Err(format!("describe lists {} members, {} run: {described}", listed.len(), members.len()));
    }
    for m in members {
        let reported = m.last_reported().ok_or_else(|| format!("{} reported nothing", m.label))?;
        let id = reported.raw["member_id"].as_str().ok_or_else(|| format!("{}: no member_id", m.label))?;
        let entry = listed
            .iter()
            .find(|e| e["member_id"].as_str() == Some(id))
            .ok_or_else(|| format!("{} ({id}) is not in describe: {described}", m.label))?;
        let by_admin = parse_partitions(&entry["assignment"]).ok_or_else(|| format!("bad assignment in {entry}"))?;
        let by_client = parse_partitions(&reported.raw["assignment"]).unwrap_or_default();
        if by_admin != by_client || by_client != m.owned() {
            return Err(format!(
                "{}: admin says {by_admin:?}, the client reports {by_client:?}, its callbacks own {:?}",
                m.label,
                m.owned()
            ));
        }
    }
    Ok(())
}

/// Every member leaves on SIGTERM, exits 0, and its last line is `left`.
fn leave_all(members: &mut [&mut Member]) {
    for m in members.iter_mut() {
        let status = m.terminate(EXIT).unwrap_or_else(|e| panic!("{e}"));
        assert!(status.success(), "{} exited with {status}\n{}", m.label, m.diagnostics());
        let events = m.events();
        assert_eq!(events.first().map(|e| e.event.as_str()), Some("config"), "{}", m.diagnostics());
        assert_eq!(events.last().map(|e| e.event.as_str()), Some("left"), "{}", m.diagnostics());
        assert!(!events.iter().any(|e| e.event == "error"), "{}", m.diagnostics());
    }
}

fn check_logs(members: &mut [&mut Member], max_generations: usize) {
    let logs: Vec<_> = members.iter_mut().map(|m| m.log()).collect();
    let merged = || live::merged_lines(&logs);
    live::check_no_double_ownership(&logs).unwrap_or_else(|e| panic!("{e}\nmerged logs:\n{}", merged()));
    live::check_generations(&logs, max_generations).unwrap_or_else(|e| panic!("{e}\nmerged logs:\n{}", merged()));
}

#[test]
fn java_and_librdkafka_members_share_a_cooperative_sticky_group_on_kafka_3_9() {
    let Some(cluster) = Cluster::shared("k39") else { return };
    let topic = live::unique_name("smoke-coop");
    let group = live::unique_name("smoke-coop-g");
    cluster.create_topic(&topic, 6);
    let opts = MemberOptions::new(&group, [&topic]).assignors(["cooperative-sticky"]).session_timeout_ms(10_000);
    // One member per listener: PLAINTEXT, SASL_SSL with SCRAM-SHA-512, mTLS (k39 has them all).
    let secured = cluster.sasl_ssl.clone().expect("k39 is started with --sasl-ssl");
    let mut j1 = cluster.java(&opts.clone().client_id("j1"));
    let mut j2 = cluster.java(&MemberOptions {
        bootstrap: Some(secured.bootstrap.clone()),
        command_config: Some(cluster.client_properties("scram-sha-512")),
        ..opts.clone().client_id("j2").rack("rack-b")
    });
    let mut r1 = cluster.rdkafka(&MemberOptions {
        bootstrap: Some(secured.mtls_bootstrap.clone()),
        command_config: Some(cluster.rdkafka_properties("mtls")),
        ..opts.clone().client_id("r1")
    });
    let expected = live::partitions(&topic, 0..6);
    live::wait_settled(&mut [&mut j1, &mut j2, &mut r1], &expected, SETTLE, QUIET).unwrap_or_else(|e| panic!("{e}"));
    let config = j2.events().into_iter().find(|e| e.event == "config").expect("a config line").raw.to_string();
    assert!(!config.contains(&secured.scram_password), "the password is not printed: {config}");
    for m in [&j1, &j2, &r1] {
        assert_eq!(m.owned().len(), 2, "cooperative-sticky balances 6 partitions over 3 members: {}", m.diagnostics());
    }
    describe_agrees(&cluster, &group, &[&j1, &j2, &r1]).unwrap_or_else(|e| panic!("{e}"));
    leave_all(&mut [&mut r1, &mut j2, &mut j1]);
    // Each of the 5 membership changes that leave members behind (3 joins, 2 leaves) costs at most
    // two generations under KIP-429 (the second one hands over revoked partitions).
    check_logs(&mut [&mut j1, &mut j2, &mut r1], 10);
}

#[test]
fn java_and_librdkafka_consumer_protocol_members_share_a_group_on_kafka_4_1() {
    let Some(cluster) = Cluster::shared("k41") else { return };
    assert!(cluster.is_4x(), "k41 runs Kafka {}", cluster.version);
    let topic = live::unique_name("smoke-848");
    let group = live::unique_name("smoke-848-g");
    cluster.create_topic(&topic, 6);
    let opts = MemberOptions::new(&group, [&topic]).group_protocol("consumer");
    let mut j1 = cluster.java(&opts.clone().client_id("j1"));
    let mut j2 = cluster.java(&opts.clone().client_id("j2"));
    let mut r1 = cluster.rdkafka(&opts.clone().client_id("r1"));
    let expected = live::partitions(&topic, 0..6);
    live::wait_settled(&mut [&mut j1, &mut j2, &mut r1], &expected, SETTLE, QUIET).unwrap_or_else(|e| panic!("{e}"));
    let described = cluster.describe_group(&group);
    assert_eq!(described["type"], "consumer", "{described}");
    assert_eq!(described["assignor"], "uniform", "{described}");
    describe_agrees(&cluster, &group, &[&j1, &j2, &r1]).unwrap_or_else(|e| panic!("{e}"));
    leave_all(&mut [&mut r1, &mut j2, &mut j1]);
    // Member epochs follow the group epoch: one bump per join and per leave, and the epochs a
    // member passes through while it reconciles; 3 joins + 2 leaves stay well under 12.
    check_logs(&mut [&mut j1, &mut j2, &mut r1], 12);
}

#[test]
fn java_members_survive_their_coordinator_broker_being_killed_on_a_3_broker_cluster() {
    let Some(cluster) = Cluster::exclusive("k39x3") else { return };
    assert_eq!(cluster.broker_bootstraps.len(), 3, "k39x3 has 3 brokers");
    let topic = live::unique_name("smoke-failover");
    let group = live::unique_name("smoke-failover-g");
    cluster.create_topic_rf(&topic, 6, 3);
    let opts = MemberOptions::new(&group, [&topic]).assignors(["cooperative-sticky"]).session_timeout_ms(10_000);
    let mut j1 = cluster.java(&opts.clone().client_id("j1"));
    let mut j2 = cluster.java(&opts.clone().client_id("j2"));
    let expected = live::partitions(&topic, 0..6);
    live::wait_settled(&mut [&mut j1, &mut j2], &expected, SETTLE, QUIET).unwrap_or_else(|e| panic!("{e}"));
    let before = cluster.coordinator_id(&group);
    let killed_at = std::time::Instant::now();
    cluster.kill_broker(before);
    // The offsets topic has replication factor 3: another broker becomes the coordinator, the
    // members find it, and the group stays (or becomes again) exactly owned.
    let restart = || cluster.restart_broker(before);
    let after = cluster.wait_coordinator_moved(&group, before, Duration::from_secs(60)).unwrap_or_else(|e| {
        restart();
        panic!("{e}")
    });
    println!("coordinator moved from broker {before} to {after} in {:?}", killed_at.elapsed());
    let settled = live::wait_settled(&mut [&mut j1, &mut j2], &expected, SETTLE, QUIET);
    restart();
    settled.unwrap_or_else(|e| panic!("after killing coordinator {before} (now {after}): {e}"));
    describe_agrees(&cluster, &group, &[&j1, &j2]).unwrap_or_else(|e| panic!("{e}"));
    leave_all(&mut [&mut j2, &mut j1]);
    check_logs(&mut [&mut j1, &mut j2], 8);
}
