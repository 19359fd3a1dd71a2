//! `kcp serve` against real brokers (Kafka 3.9.1 and 4.1.1): every metric and API value compared
//! with what the test itself made. Records are produced with known CreateTime timestamps
//! (rskafka), offsets committed with Kafka's own tool while a group is empty, a Java member and
//! (4.x) a KIP-848 member join, a `kcp group join` member commits the log end, a group is named
//! with markup. On 4.1.1 a real Prometheus server (Debian's `prometheus`, where installed) scrapes
//! the server and its query API must return the same lag and lag in seconds. Without the clusters'
//! env these print SKIP (tools/live/README.md).

mod live;
mod serve_support;

use std::collections::BTreeMap;
use std::process::Command;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use live::{unique_name, Cluster, MemberOptions};
use serde_json::Value;
use serve_support::{find, samples, value, Server};

const SETTLE: Duration = Duration::from_secs(90);

/// Kafka's own tool of the cluster's version.
fn tool(cluster: &Cluster, args: &[&str]) -> String {
    cluster.kafka_tool(args[0], &args[1..]).unwrap_or_else(|e| panic!("{}: {e}", cluster.name))
}

fn commit(cluster: &Cluster, group: &str, topic: &str, partitions: &str, offset: i64) {
    cluster.commit_offsets(group, topic, partitions, offset);
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as i64
}

/// Produces `count` records to `partition`, record i stamped `first_ts + 1000 * i` (CreateTime).
fn produce(cluster: &Cluster, topic: &str, partition: i32, count: i64, first_ts: i64) {
    use rskafka::client::partition::{Compression, UnknownTopicHandling};
    use rskafka::client::ClientBuilder;
    use rskafka::record::Record;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let work = async {
            let brokers = cluster.bootstrap.split(',').map(str::to_owned).collect();
            let client = ClientBuilder::new(brokers).build().await?;
            let pc = client.partition_client(topic, partition, UnknownTopicHandling::Retry).await?;
            let records: Vec<Record> = (0..count)
                .map(|i| Record {
                    key: None,
                    value: Some(format!("r{i}").into_bytes()),
                    headers: BTreeMap::new(),
                    timestamp: rskafka::chrono::DateTime::from_timestamp_millis(first_ts + 1000 * i).unwrap(),
                })
                .collect();
            pc.produce(records, Compression::NoCompression).await?;
            Ok::<(), rskafka::client::error::Error>(())
        };
        tokio::time::timeout(Duration::from_secs(60), work)
            .await
            .unwrap_or_else(|_| panic!("{}: producing to {topic}-{partition} took over 60 s", cluster.name))
            .unwrap_or_else(|e| panic!("{}: producing to {topic}-{partition}: {e}", cluster.name));
    });
}

/// A free loopback port (bound and released).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// GET on Prometheus's query API: the first result's value of `query`, or `None`.
fn prometheus_value(port: u16, query: &str) -> Option<f64> {
    let mut encoded = String::new();
    for b in query.bytes() {
        if b.is_ascii_alphanumeric() || b"_-.~".contains(&b) {
            encoded.push(b as char);
        } else {
            encoded.push_str(&format!("%{b:02X}"));
        }
    }
    let addr = format!("127.0.0.1:{port}").parse().unwrap();
    let r = serve_support::request(addr, "GET", &format!("/api/v1/query?query={encoded}"), &[]);
    let v: Value = serde_json::from_str(&r.body).ok()?;
    v["data"]["result"][0]["value"][1].as_str()?.parse().ok()
}

fn serve_reports_what_the_test_made(name: &str) {
    let Some(cluster) = Cluster::shared(name) else { return };
    let topic = unique_name("serve");
    cluster.create_topic(&topic, 3);
    // Partition 0: 50 records stamped 900 s ago onwards; partition 1: 20 records from 300 s ago;
    // partition 2: none.
    let (first0, first1) = (now_ms() - 900_000, now_ms() - 300_000);
    produce(&cluster, &topic, 0, 50, first0);
    produce(&cluster, &topic, 1, 20, first1);

    // An empty group with commits only: lag 40 on partition 0, 0 on partition 1, nothing committed
    // on partition 2.
    let empty = unique_name("serve-empty");
    commit(&cluster, &empty, &topic, "0", 10);
    commit(&cluster, &empty, &topic, "1", 20);
    // A group whose name has markup and quotes: lag 1.
    let marked = format!("{}\"<b>x</b>", unique_name("serve-mark"));
    commit(&cluster, &marked, &topic, "0", 49);
    // A live Java member (classic), and on 4.x a KIP-848 member.
    let classic = unique_name("serve-java");
    let mut java = cluster.java(&MemberOptions::new(&classic, [&topic]).assignors(["range"]).duration_s(240));
    java.wait_event("assigned", SETTLE).unwrap_or_else(|e| panic!("{e}\n{}", java.diagnostics()));
    let modern = unique_name("serve-848");
    let mut kip848 = cluster.is_4x().then(|| {
        let mut m = cluster.java(&MemberOptions::new(&modern, [&topic]).group_protocol("consumer").duration_s(240));
        m.wait_event("assigned", SETTLE).unwrap_or_else(|e| panic!("{e}\n{}", m.diagnostics()));
        m
    });
    // A `kcp group join` member that commits the log end of what it is given.
    let committing = unique_name("serve-kcp");
    let mut joined = cluster.spawn("kcp:committer".into(), {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_kcp"));
        cmd.args([
            "group",
            "join",
            "--bootstrap-server",
            &cluster.bootstrap,
            "--group",
            &committing,
            "--topics",
            &topic,
            "--commit-at",
            "end",
            "--execute",
            "--duration-s",
            "240",
        ]);
        cmd
    });
    joined.wait_event("assigned", SETTLE).unwrap_or_else(|e| panic!("{e}\n{}", joined.diagnostics()));

    let server = Server::start(&["--bootstrap-server", &cluster.bootstrap, "--interval-ms", "1000"]);
    let prometheus = start_prometheus(&server);

    // Four collections at least (three samples make a status), and every group seen.
    let groups = server.wait_for("/api/v1/clusters/default/groups", SETTLE, "every group collected", |r| {
        let v: Value = serde_json::from_str(&r.body).unwrap_or(Value::Null);
        let rows = v["groups"].as_array().cloned().unwrap_or_default();
        let row = |g: &str| rows.iter().find(|r| r["group_id"] == g).cloned();
        v["collections"].as_u64().unwrap_or(0) >= 4
            && row(&empty).is_some()
            && row(&marked).is_some()
            && row(&classic).is_some_and(|r| r["members"] == 1)
            && row(&committing).is_some_and(|r| r["members"] == 1 && r["lag"] == 0)
            && (!cluster.is_4x() || row(&modern).is_some_and(|r| r["members"] == 1))
    });
    let rows = groups.json()["groups"].as_array().cloned().unwrap();
    let row = |g: &str| rows.iter().find(|r| r["group_id"] == g).cloned().unwrap();
    assert_eq!(row(&empty)["lag"], 40);
    assert_eq!(row(&empty)["state"], "Empty");
    assert_eq!(row(&classic)["group_protocol"], "classic");
    assert_eq!(row(&classic)["assignor"], "range");

    let metrics = server.get("/metrics");
    let m = samples(&metrics.body);
    let at = now_ms();
    let tp = |g: &str, p: &str| vec![("group", g.to_owned()), ("topic", topic.clone()), ("partition", p.to_owned())];
    let val = |name: &str, labels: Vec<(&str, String)>| {
        let pairs: Vec<(&str, &str)> = labels.iter().map(|(k, v)| (*k, v.as_str())).collect();
        value(&m, name, &pairs)
    };
    assert_eq!(val("kcp_up", vec![]), Some(1.0));
    assert_eq!(val("kcp_consumergroup_partition_lag", tp(&empty, "0")), Some(40.0));
    assert_eq!(val("kcp_consumergroup_partition_lag", tp(&empty, "1")), Some(0.0));
    assert_eq!(val("kcp_consumergroup_partition_lag", tp(&empty, "2")), None, "never committed: no series");
    assert_eq!(val("kcp_consumergroup_partition_committed_offset", tp(&empty, "0")), Some(10.0));
    assert_eq!(val("kcp_consumergroup_lag", vec![("group", empty.clone())]), Some(40.0));
    // Lag in seconds: the record at offset 10 of partition 0 was stamped first0 + 10 s.
    let expected0 = (at - (first0 + 10_000)) as f64 / 1000.0;
    let lag_s = find(&m, "kcp_consumergroup_partition_lag_seconds", &[("group", &empty), ("partition", "0")]);
    assert_eq!(lag_s.len(), 1, "{lag_s:?}");
    assert_eq!(lag_s[0].label("method"), Some("fetch"));
    assert!((lag_s[0].value - expected0).abs() < 30.0, "lag seconds {} against {expected0}", lag_s[0].value);
    let lag_s1 = find(&m, "kcp_consumergroup_partition_lag_seconds", &[("group", &empty), ("partition", "1")]);
    assert_eq!((lag_s1[0].value, lag_s1[0].label("method")), (0.0, Some("none")));
    let group_s = val("kcp_consumergroup_lag_seconds", vec![("group", empty.clone())]).unwrap();
    assert!((group_s - expected0).abs() < 30.0, "group lag seconds {group_s} against {expected0}");
    // No member owns the lagging partition and its offset does not move: STOP (Burrow's 4).
    assert_eq!(val("kcp_consumergroup_status", vec![("group", empty.clone())]), Some(4.0));
    // The markup is one label value.
    assert_eq!(val("kcp_consumergroup_partition_lag", tp(&marked, "0")), Some(1.0));
    assert!(metrics.body.contains("\\\"<b>x</b>"), "the quote is escaped in the label");
    // Log ends and members.
    assert_eq!(
        val("kcp_partition_log_end_offset", vec![("topic", topic.clone()), ("partition", "0".into())]),
        Some(50.0)
    );
    assert_eq!(
        val("kcp_partition_log_end_offset", vec![("topic", topic.clone()), ("partition", "2".into())]),
        Some(0.0)
    );
    assert_eq!(val("kcp_consumergroup_members", vec![("group", classic.clone())]), Some(1.0));
    let info = find(&m, "kcp_consumergroup_info", &[("group", &classic)]);
    assert_eq!(info[0].label("group_protocol"), Some("classic"));
    assert_eq!(info[0].label("protocol"), Some("range"));
    assert_eq!(info[0].label("state"), Some("Stable"));
    let member_lag = find(&m, "kcp_consumergroup_member_lag", &[("group", &classic)]);
    assert_eq!(member_lag.len(), 1, "one member: {member_lag:?}");
    assert!(member_lag[0].label("member_id").is_some_and(|id| !id.is_empty()));
    // The `kcp group join` member committed every partition's log end.
    for (p, end) in [("0", 50.0), ("1", 20.0), ("2", 0.0)] {
        assert_eq!(val("kcp_consumergroup_partition_committed_offset", tp(&committing, p)), Some(end), "{p}");
    }
    if cluster.is_4x() {
        let info = find(&m, "kcp_consumergroup_info", &[("group", &modern)]);
        assert_eq!(info[0].label("group_protocol"), Some("consumer"), "{info:?}");
        assert_eq!(val("kcp_consumergroup_members", vec![("group", modern.clone())]), Some(1.0));
    }

    // The Burrow API.
    let lag = server.get(&format!("/v3/kafka/default/consumer/{}/lag", empty)).json();
    assert_eq!(lag["error"], false);
    assert_eq!(lag["status"]["totallag"], 40);
    assert_eq!(lag["status"]["partition_count"], 2);
    assert_eq!(lag["status"]["status"], "ERR", "STOP counts as ERR for Burrow's group status");
    assert_eq!(lag["status"]["maxlag"]["partition"], 0);
    assert_eq!(lag["status"]["maxlag"]["status"], "STOP");
    assert_eq!(lag["status"]["maxlag"]["end"]["offset"], 10);
    let status = server.get(&format!("/v3/kafka/default/consumer/{}/status", empty)).json();
    assert_eq!(status["status"]["partitions"].as_array().unwrap().len(), 1, "only partitions at WARN or worse");
    let consumers = server.get("/v3/kafka/default/consumer").json();
    assert!(
        consumers["consumers"].as_array().unwrap().iter().any(|c| c == &Value::String(modern.clone()))
            || !cluster.is_4x()
    );
    let owned = server.get(&format!("/v3/kafka/default/consumer/{classic}/lag")).json();
    assert!(
        owned["status"]["partitions"].as_array().unwrap().iter().all(|p| p["client_id"] != ""),
        "owned partitions name their member's client id: {owned}"
    );

    // kcp's own API: the describe shape, with the server's additions.
    let described = server.get(&format!("/api/v1/clusters/default/groups/{empty}")).json();
    assert_eq!(described["group_id"], Value::String(empty.clone()));
    let p0 = described["offsets"].as_array().unwrap().iter().find(|o| o["partition"] == 0).cloned().unwrap();
    assert_eq!((p0["committed_offset"].as_i64(), p0["lag"].as_i64()), (Some(10), Some(40)));
    assert_eq!(p0["lag_seconds_method"], "fetch");
    assert_eq!(p0["status"], "STOP");
    // The markup comes back as the same text in JSON.
    let encoded: String = marked
        .bytes()
        .map(|b| if b.is_ascii_alphanumeric() || b == b'-' { (b as char).to_string() } else { format!("%{b:02X}") })
        .collect();
    let described = server.get(&format!("/api/v1/clusters/default/groups/{encoded}")).json();
    assert_eq!(described["group_id"], Value::String(marked.clone()));

    // Prometheus scraped the same figures.
    if let Some((_child, port)) = &prometheus {
        let query = format!("kcp_consumergroup_partition_lag{{group=\"{empty}\",partition=\"0\"}}");
        let started = Instant::now();
        let got = loop {
            if let Some(v) = prometheus_value(*port, &query) {
                break v;
            }
            assert!(started.elapsed() < SETTLE, "Prometheus never returned {query}");
            std::thread::sleep(Duration::from_millis(500));
        };
        assert_eq!(got, 40.0);
        let seconds = prometheus_value(
            *port,
            &format!("kcp_consumergroup_partition_lag_seconds{{group=\"{empty}\",partition=\"0\"}}"),
        )
        .expect("lag seconds in Prometheus");
        let expected = (now_ms() - (first0 + 10_000)) as f64 / 1000.0;
        assert!((seconds - expected).abs() < 30.0, "Prometheus: {seconds} against {expected}");
    }

    // A second member joins the classic group: the rebalance is counted and both members show.
    let before = val("kcp_consumergroup_rebalances_total", vec![("group", classic.clone())]).expect("a counter");
    let mut java2 = cluster.java(&MemberOptions::new(&classic, [&topic]).assignors(["range"]).duration_s(240));
    java2.wait_event("assigned", SETTLE).unwrap_or_else(|e| panic!("{e}\n{}", java2.diagnostics()));
    let r = server.wait_for("/metrics", SETTLE, "the rebalance counted", |r| {
        let s = samples(&r.body);
        value(&s, "kcp_consumergroup_members", &[("group", &classic)]) == Some(2.0)
            && value(&s, "kcp_consumergroup_rebalances_total", &[("group", &classic)]).is_some_and(|n| n > before)
            && find(&s, "kcp_consumergroup_member_lag", &[("group", &classic)]).len() == 2
    });
    assert!(r.body.contains("kcp_consumergroup_rebalances_total"));
    let _ = java2.terminate(Duration::from_secs(30));

    // Fewer series: per topic, or per group only.
    for (granularity, topic_series) in [("topic", true), ("group", false)] {
        let coarse = Server::start(&[
            "--bootstrap-server",
            &cluster.bootstrap,
            "--interval-ms",
            "1000",
            "--granularity",
            granularity,
        ]);
        let r = coarse.wait_for("/metrics", SETTLE, "a coarse collection", |r| {
            value(&samples(&r.body), "kcp_consumergroup_lag", &[("group", &empty)]) == Some(40.0)
        });
        let s = samples(&r.body);
        assert!(find(&s, "kcp_consumergroup_partition_lag", &[]).is_empty(), "{granularity}: no partition series");
        assert!(find(&s, "kcp_partition_log_end_offset", &[]).is_empty(), "{granularity}");
        let topic_lag = value(&s, "kcp_consumergroup_topic_lag", &[("group", &empty), ("topic", &topic)]);
        assert_eq!(topic_lag, topic_series.then_some(40.0), "{granularity}");
        let topic_seconds = find(&s, "kcp_consumergroup_topic_lag_seconds", &[("group", &empty)]);
        assert_eq!(topic_seconds.len(), usize::from(topic_series), "{granularity}");
        assert_eq!(find(&s, "kcp_consumergroup_member_lag", &[]).is_empty(), !topic_series, "{granularity}");
        assert_eq!(coarse.terminate(), Some(0));
    }

    // Events: the first collection's state events are replayed to a new subscriber.
    let events = read_events(&server, Duration::from_secs(10), |text| text.contains(&empty));
    assert!(events.contains("event: state"), "{events}");

    // A deleted group's series are gone at the next collection, and Burrow says NOTFOUND.
    tool(&cluster, &["consumer-groups", "--bootstrap-server", &cluster.bootstrap, "--delete", "--group", &empty]);
    server
        .wait_for("/metrics", SETTLE, "the deleted group's series gone", |r| !r.body.contains(&format!("\"{empty}\"")));
    let gone = server.get(&format!("/v3/kafka/default/consumer/{empty}/status"));
    assert_eq!((gone.status, gone.json()["status"]["status"].clone()), (404, Value::from("NOTFOUND")));

    let _ = joined.terminate(Duration::from_secs(30));
    let _ = java.terminate(Duration::from_secs(30));
    if let Some(m) = kip848.as_mut() {
        let _ = m.terminate(Duration::from_secs(30));
    }

    // A deleted topic: its partitions' series go, and the server goes on collecting.
    cluster.admin(&["delete-topic", &topic]).unwrap_or_else(|e| panic!("{}: {e}", cluster.name));
    let after = server.wait_for("/metrics", SETTLE, "the deleted topic's log series gone", |r| {
        let s = samples(&r.body);
        find(&s, "kcp_partition_log_end_offset", &[("topic", &topic)]).is_empty()
            && value(&s, "kcp_up", &[]) == Some(1.0)
    });
    assert!(find(&samples(&after.body), "kcp_consumergroup_partition_lag_seconds", &[("topic", &topic)]).is_empty());
    assert_eq!(server.get("/healthz").status, 200);
    assert_eq!(server.terminate(), Some(0), "SIGTERM ends kcp serve cleanly");
}

/// A broker restart that moves the group coordinator (3 brokers): the server answers all along,
/// and the group's series come back from the new coordinator.
#[test]
fn serve_goes_on_when_the_coordinator_moves() {
    let Some(cluster) = Cluster::exclusive("k39x3") else { return };
    let topic = unique_name("serve-move");
    cluster.create_topic_rf(&topic, 3, 3);
    produce(&cluster, &topic, 0, 30, now_ms() - 60_000);
    let group = unique_name("serve-move");
    commit(&cluster, &group, &topic, "0", 10);
    let server =
        Server::start(&["--bootstrap-server", &cluster.bootstrap, "--interval-ms", "500", "--timeout-ms", "5000"]);
    let lag_of = |r: &serve_support::Response| {
        value(&samples(&r.body), "kcp_consumergroup_partition_lag", &[("group", &group), ("partition", "0")])
    };
    server.wait_for("/metrics", SETTLE, "the group collected", |r| lag_of(r) == Some(20.0));
    let old = cluster.coordinator_id(&group);
    cluster.kill_broker(old);
    let moved_to = cluster.wait_coordinator_moved(&group, old, SETTLE).unwrap_or_else(|e| panic!("{e}"));
    assert_ne!(moved_to, old);
    // Served all along, and collected again through the new coordinator.
    let started = Instant::now();
    loop {
        let r = server.get("/metrics");
        assert_eq!(r.status, 200, "the server answers while the coordinator moves");
        let s = samples(&r.body);
        if lag_of(&r) == Some(20.0) && value(&s, "kcp_up", &[]) == Some(1.0) {
            let fresh = value(&s, "kcp_snapshot_timestamp_seconds", &[]).unwrap();
            if fresh * 1000.0 > (now_ms() - 3_000) as f64 {
                break;
            }
        }
        assert!(started.elapsed() < SETTLE, "no fresh collection after the coordinator moved: {}", r.body);
        std::thread::sleep(Duration::from_millis(500));
    }
    cluster.restart_broker(old);
    assert_eq!(server.terminate(), Some(0));
}

/// Reads the cluster's event stream until `done` holds for what was read, at most `limit`.
fn read_events(server: &Server, limit: Duration, done: impl Fn(&str) -> bool) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(server.addr).unwrap();
    stream.set_read_timeout(Some(Duration::from_millis(500))).unwrap();
    stream.write_all(b"GET /api/v1/clusters/default/events HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let started = Instant::now();
    let mut text = String::new();
    let mut buf = [0u8; 8192];
    while started.elapsed() < limit && !done(&text) {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => text.push_str(&String::from_utf8_lossy(&buf[..n])),
            Err(_) => {}
        }
    }
    assert!(done(&text), "events within {limit:?}: {text}");
    text
}

/// A Prometheus server (Debian's `prometheus`) scraping `server` every second, when installed
/// (`KCP_SERVE_PROMETHEUS=required`, which `.ci/run` sets once it installed the package, makes it
/// required).
fn start_prometheus(server: &Server) -> Option<(KillOnDrop, u16)> {
    let installed = Command::new("prometheus").arg("--version").output().is_ok_and(|o| o.status.success());
    if !installed {
        let required = std::env::var("KCP_SERVE_PROMETHEUS").is_ok_and(|v| v == "required");
        assert!(!required, "KCP_SERVE_PROMETHEUS=required but `prometheus` is not installed");
        println!("SKIP: the Prometheus part: `prometheus` is not installed (Debian's prometheus package)");
        return None;
    }
    let dir = std::env::temp_dir().join(unique_name("kcp-prometheus"));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: kcp\n    static_configs:\n      - targets: ['{}']\n",
            server.addr
        ),
    )
    .unwrap();
    let port = free_port();
    let child = Command::new("prometheus")
        .arg(format!("--config.file={}", config.display()))
        .arg(format!("--storage.tsdb.path={}", dir.join("data").display()))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("prometheus starts");
    Some((KillOnDrop(child), port))
}

/// A child process killed when dropped.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn serve_on_3_9() {
    serve_reports_what_the_test_made("k39");
}

#[test]
fn serve_on_4_1() {
    serve_reports_what_the_test_made("k41");
}

/// An authentication failure: `kcp_up` 0, the error counted by kind, the server answering, and
/// the password in no answer and no log line.
#[test]
fn serve_says_an_authentication_failure_without_showing_the_secret() {
    let Some(cluster) = Cluster::shared("k39") else { return };
    let Some(secured) = &cluster.sasl_ssl else {
        assert!(!live::required(), "k39 has no SASL_SSL listener");
        return;
    };
    let good = std::fs::read_to_string(cluster.client_properties("scram-sha-256")).unwrap();
    let wrong_password = "wr0ng-kcp-serve-password";
    let bad = good.replace(&secured.scram_password, wrong_password);
    assert_ne!(good, bad, "the properties name the password");
    let path = std::env::temp_dir().join(unique_name("serve-bad-scram"));
    std::fs::write(&path, bad).unwrap();
    let server = Server::start(&[
        "--bootstrap-server",
        &secured.bootstrap,
        "--command-config",
        path.to_str().unwrap(),
        "--interval-ms",
        "500",
    ]);
    let metrics = server.wait_for("/metrics", SETTLE, "an authentication error counted", |r| {
        value(&samples(&r.body), "kcp_collect_errors_total", &[("kind", "authentication")]).is_some_and(|n| n >= 1.0)
    });
    assert_eq!(value(&samples(&metrics.body), "kcp_up", &[]), Some(0.0));
    let mut everything = server.stderr();
    for p in ["/metrics", "/api/v1/clusters", "/v3/kafka/default", "/"] {
        everything.push_str(&server.get(p).body);
    }
    assert!(!everything.contains(wrong_password) && !everything.contains(&secured.scram_password), "{everything}");
    assert_eq!(server.terminate(), Some(0));
}

/// How long the revoking Java member sits in onPartitionsRevoked (`--revoke-delay-ms`): the
/// window in which the hand-over is pending, long enough for a few collections and a describe.
const REVOKE_DELAY_MS: u64 = 20_000;

/// A Java member of `options` whose onPartitionsRevoked sleeps REVOKE_DELAY_MS.
fn slow_revoker(cluster: &Cluster, options: &MemberOptions) -> live::Member {
    let mut cmd = cluster.ctl_command();
    cmd.args(["java", &cluster.name, "LiveConsumer"])
        .args(options.args(&cluster.bootstrap))
        .args(["--revoke-delay-ms", &REVOKE_DELAY_MS.to_string()]);
    cluster.spawn(options.label("java-slow-revoke"), cmd)
}

/// `kcp group describe --group G` (its JSON; exit 0, or 3 for a partial answer such as
/// partitions without a commit).
fn describe(cluster: &Cluster, group: &str) -> Value {
    let run = live::kcp::run(
        &["group", "describe", "--bootstrap-server", &cluster.bootstrap, "--group", group],
        Duration::from_secs(60),
    );
    assert!(matches!(run.status, Some(0 | 3)), "{}\n{}", run.stdout, run.stderr);
    run.json()
}

/// (topic, partition) pairs of a list of `{"topic", "partitions"}` groups.
fn partition_set(groups: &Value) -> Partitions {
    let mut out = Partitions::new();
    for g in groups.as_array().into_iter().flatten() {
        for p in g["partitions"].as_array().into_iter().flatten() {
            out.insert((g["topic"].as_str().unwrap().to_owned(), p.as_i64().unwrap()));
        }
    }
    out
}

/// Partitions as (topic, partition).
type Partitions = std::collections::BTreeSet<(String, i64)>;

/// The hand-overs pending in a described group, from its members' decoded payloads alone (not
/// from kcp's own ownership): classic, the partitions one member is assigned while another still
/// claims them in its subscription's owned partitions; KIP-848, the partitions in a member's
/// target assignment that are not in its current assignment (another member has yet to revoke
/// them). Also the classic partitions claimed by a member and assigned to nobody (withheld by a
/// cooperative round).
fn pending_from_payloads(group: &Value) -> (Partitions, Partitions) {
    let members = group["members"].as_array().cloned().unwrap_or_default();
    let mut pending = Partitions::new();
    let mut withheld = Partitions::new();
    if group["type"] == "consumer" {
        for m in &members {
            let current = partition_set(&m["assignment"]);
            pending.extend(partition_set(&m["target_assignment"]).difference(&current).cloned());
        }
        return (pending, withheld);
    }
    let claims: Vec<Partitions> =
        members.iter().map(|m| partition_set(&m["subscription"]["owned_partitions"])).collect();
    let assigned: Vec<Partitions> =
        members.iter().map(|m| partition_set(&m["assignment"]["assigned_partitions"])).collect();
    for (i, mine) in assigned.iter().enumerate() {
        for tp in mine {
            if claims.iter().enumerate().any(|(j, c)| j != i && c.contains(tp)) {
                pending.insert(tp.clone());
            }
        }
    }
    for c in &claims {
        for tp in c {
            if !assigned.iter().any(|a| a.contains(tp)) {
                withheld.insert(tp.clone());
            }
        }
    }
    (pending, withheld)
}

/// Issue 35: `kcp_consumergroup_pending_partitions` and `/api/v1`'s `pending_partitions` against
/// the group's own payloads, during a scale-out whose hand-over is held open: the first member
/// sleeps REVOKE_DELAY_MS in onPartitionsRevoked, so the partitions it gives up stay in hand-over
/// for that long. A cooperative-sticky classic group (the round withholds them from everyone) and,
/// on 4.x, a KIP-848 group (the broker's target gives them to the newcomer, who waits for them).
fn serve_counts_pending_hand_overs(name: &str) {
    let Some(cluster) = Cluster::shared(name) else { return };
    let topic = unique_name("serve-pending");
    cluster.create_topic(&topic, 4);
    let server = Server::start(&["--bootstrap-server", &cluster.bootstrap, "--interval-ms", "500"]);
    let classic = unique_name("serve-pending-coop");
    let modern = unique_name("serve-pending-848");
    let mut groups = vec![(classic.clone(), MemberOptions::new(&classic, [&topic]).assignors(["cooperative-sticky"]))];
    if cluster.is_4x() {
        groups.push((modern.clone(), MemberOptions::new(&modern, [&topic]).group_protocol("consumer")));
    }
    for (group, options) in groups {
        let options = options.duration_s(120);
        let mut first = slow_revoker(&cluster, &options.clone().client_id("first"));
        first
            .wait_for("all four partitions", SETTLE, |events| {
                events
                    .iter()
                    .rev()
                    .find(|e| e.event == "assigned")
                    .is_some_and(|e| e.owned.as_ref().is_some_and(|o| o.len() == 4))
            })
            .unwrap_or_else(|e| panic!("{e}\n{}", first.diagnostics()));
        // Before the scale-out: nothing pending.
        server.wait_for("/metrics", SETTLE, "the group collected, nothing pending", |r| {
            value(&samples(&r.body), "kcp_consumergroup_pending_partitions", &[("group", &group)]) == Some(0.0)
        });
        let mut second = cluster.java(&options.clone().client_id("second"));
        let revoked = first
            .wait_event("revoked", SETTLE)
            .unwrap_or_else(|e| panic!("{e}\n{}\n{}", first.diagnostics(), second.diagnostics()));
        let window_ends = Instant::now() + Duration::from_millis(REVOKE_DELAY_MS);
        let given_up = revoked.partitions.clone();
        assert!(!given_up.is_empty(), "{revoked:?}");
        // The ground truth inside the window: the group as the broker describes it, settled on
        // the round that asked for the revocation (classic: Stable again; KIP-848: the newcomer's
        // target names the partitions).
        let truth = loop {
            let described = describe(&cluster, &group);
            let (pending, withheld) = pending_from_payloads(&described);
            let settled = if group == classic {
                described["state"] == "Stable" && withheld.len() == given_up.len()
            } else {
                pending.len() == given_up.len()
            };
            if settled {
                break (described, pending, withheld);
            }
            assert!(Instant::now() < window_ends, "the hand-over window passed unseen: {described:#}");
            std::thread::sleep(Duration::from_millis(300));
        };
        let (described, pending, withheld) = truth;
        // Both kinds of hand-over count: assigned to a newcomer while still claimed, and (classic
        // cooperative) withheld from everyone while the holder revokes.
        let in_hand_over: Partitions = pending.union(&withheld).cloned().collect();
        let expected = in_hand_over.len() as f64;
        if group == classic {
            // The cooperative round withholds what the first member gives up: claimed by it,
            // assigned to nobody; no member is assigned a partition another still claims.
            let claimed: Partitions = withheld.clone();
            let revoked_set: Partitions = given_up.iter().map(|(t, p)| (t.clone(), i64::from(*p))).collect();
            assert_eq!(claimed, revoked_set, "{described:#}");
            assert!(pending.is_empty(), "{described:#}");
        } else {
            assert_eq!(pending.len(), given_up.len(), "{described:#}");
        }
        // The server, within the same window, says the same: a snapshot taken inside the window
        // shows every given-up partition in a hand-over (classic: still owned by the first
        // member, withheld; KIP-848: pending to the newcomer).
        let first_id = first.member_id().expect("the first member's id");
        let inside = |api: &Value| {
            api["offsets"].as_array().is_some_and(|rows| {
                rows.iter()
                    .filter(|o| {
                        let tp = (o["topic"].as_str().unwrap_or("").to_owned(), o["partition"].as_i64().unwrap_or(-1));
                        given_up.iter().any(|(t, p)| *t == tp.0 && i64::from(*p) == tp.1)
                    })
                    .filter(|o| !o["pending_to"].is_null() || o["withheld"] == true)
                    .count()
                    == given_up.len()
            })
        };
        let path = format!("/api/v1/clusters/default/groups/{group}");
        let api = server.wait_for(&path, Duration::from_secs(8), "a snapshot inside the hand-over", |r| {
            inside(&serde_json::from_str(&r.body).unwrap_or(Value::Null))
        });
        let api = api.json();
        assert_eq!(api["pending_partitions"], in_hand_over.len(), "{api:#}");
        let r = server.wait_for("/metrics", Duration::from_secs(8), "the pending count of the payloads", |r| {
            value(&samples(&r.body), "kcp_consumergroup_pending_partitions", &[("group", &group)]) == Some(expected)
        });
        assert!(Instant::now() < window_ends, "the metric was read after the window: {}", r.body.len());
        // Per partition: the rows pending to someone are the payloads' pending partitions, the
        // withheld rows the payloads' withheld ones, owned by the member that gives them up.
        let rows = |pick: &dyn Fn(&Value) -> bool| -> Partitions {
            api["offsets"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|o| pick(o))
                .map(|o| (o["topic"].as_str().unwrap().to_owned(), o["partition"].as_i64().unwrap()))
                .collect()
        };
        assert_eq!(rows(&|o| !o["pending_to"].is_null()), pending, "{api:#}");
        assert_eq!(rows(&|o| o["withheld"] == true), withheld, "{api:#}");
        assert_eq!(rows(&|o| o["withheld"] == true && o["owner"] == first_id.as_str()), withheld, "{api:#}");
        let list = server.get("/api/v1/clusters/default/groups").json();
        let row = list["groups"].as_array().unwrap().iter().find(|g| g["group_id"] == group.as_str()).cloned().unwrap();
        assert_eq!(row["pending_partitions"], in_hand_over.len(), "{row:#}");
        assert!(Instant::now() < window_ends, "the API was read after the window");

        // The first member returns from its callback: the hand-over completes, nothing pending.
        second
            .wait_for("the given-up partitions", SETTLE, |events| {
                events
                    .iter()
                    .filter(|e| e.event == "assigned")
                    .any(|e| e.owned.as_ref().is_some_and(|o| given_up.iter().all(|tp| o.contains(tp))))
            })
            .unwrap_or_else(|e| panic!("{e}\n{}", second.diagnostics()));
        server.wait_for("/metrics", SETTLE, "nothing pending after the hand-over", |r| {
            value(&samples(&r.body), "kcp_consumergroup_pending_partitions", &[("group", &group)]) == Some(0.0)
        });
        let (pending, withheld) = pending_from_payloads(&describe(&cluster, &group));
        assert!(pending.is_empty() && withheld.is_empty(), "{pending:?} {withheld:?}");
        let _ = second.terminate(Duration::from_secs(30));
        let _ = first.terminate(Duration::from_secs(30));
    }
    assert_eq!(server.terminate(), Some(0));
}

#[test]
fn serve_counts_pending_hand_overs_on_4_1() {
    serve_counts_pending_hand_overs("k41");
}

#[test]
fn serve_counts_pending_hand_overs_on_3_9() {
    serve_counts_pending_hand_overs("k39");
}
