//! A real consumer built from two independent pieces: [rskafka](https://docs.rs/rskafka) fetches
//! the records (it has no consumer groups of its own) and this crate's member takes the group's
//! partitions and commits what was processed. It runs in one group with Java consumers.
//!
//! ```sh
//! cargo run --example rskafka_consumer --features client -- \
//!     --bootstrap 127.0.0.1:9092 --group my-group --topic orders [--duration-s 60]
//! cargo run --example rskafka_consumer --features client -- \
//!     --bootstrap 127.0.0.1:9092 --produce orders --count 1000   # known records, keys "p-o"
//! ```
//!
//! It prints one JSON line per event (`joined`, `assigned` with the committed offsets it starts
//! from, `revoked`, `lost`, `processed` with the partition and offset of each record,
//! `committed`, `error`, `left`), in the shape of `kcp group join`. On SIGTERM or after
//! `--duration-s` it commits and leaves.
//!
//! How the pieces meet:
//! - `assigned`: for each partition, start a fetch task at the committed offset (the event
//!   carries it; a partition never committed starts at the earliest offset);
//! - every half second and on `revoked`: stop the revoked partitions' tasks, then commit their
//!   positions with [`MemberControl::commit`] *before* acknowledging the callback, so the next
//!   owner starts where this one stopped (the member keeps the generation until then);
//! - `lost`: stop the tasks and commit nothing (another member may own them already).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kafka_consumer_protocol::assignor::builtin;
use kafka_consumer_protocol::client::member::{
    ClientTransport, MemberConfig, MemberControl, MemberDriver, MemberEvent,
};
use kafka_consumer_protocol::client::ClientConfig;
use kafka_consumer_protocol::coordinator::PartitionOffset;
use kafka_consumer_protocol::{PartitionSet, TopicPartitions};
use rskafka::client::partition::{Compression, OffsetAt, PartitionClient, UnknownTopicHandling};
use rskafka::client::{Client, ClientBuilder};
use rskafka::record::Record;
use serde_json::{json, Value};
use tokio::task::JoinHandle;

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

fn emit(event: &str, mut fields: Value) {
    if let Value::Object(map) = &mut fields {
        map.insert("ts_ms".into(), json!(now_ms()));
        map.insert("event".into(), json!(event));
    }
    println!("{fields}");
}

/// `[{"topic", "partitions": [...]}]`, sorted, as `kcp group join` prints them.
fn partitions_json(groups: &[TopicPartitions]) -> Value {
    let list: Vec<Value> = PartitionSet::from_groups(groups)
        .to_groups()
        .iter()
        .map(|g| json!({"topic": g.topic, "partitions": g.partitions}))
        .collect();
    json!(list)
}

/// The next offset to process, per partition this member reads.
type Positions = Arc<Mutex<BTreeMap<(String, i32), i64>>>;

/// A partition client for `topic`/`partition`, each attempt bounded: rskafka sets no request
/// timeout, and after a broker restart a client can wait forever on a connection that will not
/// answer (seen in CI: a partition whose leader moved never got a partition client, however often
/// the same client was asked). After a failed attempt the next one starts from a fresh client.
async fn partition_client(
    client: &mut Arc<Client>,
    brokers: &[String],
    topic: &str,
    partition: i32,
) -> PartitionClient {
    loop {
        let attempt = client.partition_client(topic.to_string(), partition, UnknownTopicHandling::Retry);
        let message = match tokio::time::timeout(Duration::from_secs(10), attempt).await {
            Ok(Ok(pc)) => return pc,
            Ok(Err(e)) => e.to_string(),
            Err(_) => "partition client: no answer in 10 s".to_string(),
        };
        emit("error", json!({"error": {"kind": "fetch", "message": message}}));
        tokio::time::sleep(Duration::from_millis(500)).await;
        renew(client, brokers).await;
    }
}

/// Replaces `client` with a fresh one (new connections from the bootstrap list), unless that
/// does not answer within 10 s either (the next failure tries again).
async fn renew(client: &mut Arc<Client>, brokers: &[String]) {
    let fresh = ClientBuilder::new(brokers.to_vec()).build();
    if let Ok(Ok(fresh)) = tokio::time::timeout(Duration::from_secs(10), fresh).await {
        *client = Arc::new(fresh);
    }
}

/// One partition's fetch loop: processes (prints) every record from `start` on.
fn spawn_fetcher(
    mut client: Arc<Client>,
    brokers: Vec<String>,
    topic: String,
    partition: i32,
    start: Option<i64>,
    positions: Positions,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut pc = partition_client(&mut client, &brokers, &topic, partition).await;
        let mut offset = match start {
            Some(o) => o,
            None => pc.get_offset(OffsetAt::Earliest).await.unwrap_or(0),
        };
        positions.lock().unwrap().insert((topic.clone(), partition), offset);
        // Fetches that failed in a row: after a few the partition client (and its connection) is
        // replaced, as a lookup is above.
        let mut failures = 0u32;
        loop {
            let fetch = tokio::time::timeout(Duration::from_secs(10), pc.fetch_records(offset, 1..1_000_000, 200));
            match fetch
                .await
                .unwrap_or_else(|_| Err(rskafka::client::error::Error::InvalidResponse("no answer in 10 s".into())))
            {
                Ok((records, _high_watermark)) => {
                    failures = 0;
                    for r in records {
                        if r.offset < offset {
                            continue;
                        }
                        let key = r.record.key.as_deref().map(String::from_utf8_lossy);
                        emit(
                            "processed",
                            json!({"topic": topic, "partition": partition, "offset": r.offset, "key": key}),
                        );
                        offset = r.offset + 1;
                        positions.lock().unwrap().insert((topic.clone(), partition), offset);
                    }
                }
                Err(e) => {
                    emit("error", json!({"error": {"kind": "fetch", "message": e.to_string()}}));
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    failures += 1;
                    if failures >= 3 {
                        failures = 0;
                        renew(&mut client, &brokers).await;
                        pc = partition_client(&mut client, &brokers, &topic, partition).await;
                    }
                }
            }
        }
    })
}

/// What this member committed last, per partition (positions not moved since are not committed again).
type Committed = BTreeMap<(String, i32), i64>;

/// Commits the positions of `which` (all read partitions when `None`) that moved since the last
/// commit; prints what was committed.
async fn commit(control: &MemberControl, positions: &Positions, which: Option<&PartitionSet>, last: &mut Committed) {
    let offsets: Vec<PartitionOffset> = positions
        .lock()
        .unwrap()
        .iter()
        .filter(|((t, p), _)| which.is_none_or(|w| w.contains(t, *p)))
        .filter(|(key, &o)| last.get(*key) != Some(&o))
        .map(|((t, p), &o)| PartitionOffset::new(t.clone(), *p, o))
        .collect();
    if offsets.is_empty() {
        return;
    }
    match control.commit(offsets).await {
        Ok(done) => {
            for o in &done {
                last.insert((o.topic.clone(), o.partition), o.offset);
            }
            let list: Vec<Value> =
                done.iter().map(|o| json!({"topic": o.topic, "partition": o.partition, "offset": o.offset})).collect();
            emit("committed", json!({"offsets": list}));
        }
        Err(e) => emit("error", json!({"error": {"kind": "commit", "message": e.to_string()}})),
    }
}

struct Args {
    bootstrap: String,
    group: Option<String>,
    topic: Option<String>,
    produce: Option<String>,
    count: u32,
    duration_s: u64,
    session_timeout_ms: u64,
}

fn args() -> Args {
    let mut a = Args {
        bootstrap: String::new(),
        group: None,
        topic: None,
        produce: None,
        count: 0,
        duration_s: 3600,
        session_timeout_ms: 10_000,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let Some(value) = it.next() else {
            eprintln!("{flag} needs a value");
            std::process::exit(2);
        };
        let number = |v: &str| -> u64 {
            v.parse().unwrap_or_else(|_| {
                eprintln!("{flag}: not a number: {v}");
                std::process::exit(2)
            })
        };
        match flag.as_str() {
            "--bootstrap" | "--bootstrap-server" => a.bootstrap = value,
            "--group" => a.group = Some(value),
            "--topic" => a.topic = Some(value),
            "--produce" => a.produce = Some(value),
            "--count" => a.count = number(&value) as u32,
            "--duration-s" => a.duration_s = number(&value),
            "--session-timeout-ms" => a.session_timeout_ms = number(&value),
            other => {
                eprintln!("unknown flag {other}");
                std::process::exit(2);
            }
        }
    }
    if a.bootstrap.is_empty() || (a.produce.is_none() && (a.group.is_none() || a.topic.is_none())) {
        eprintln!(
            "usage: rskafka_consumer --bootstrap B (--group G --topic T [--duration-s N] | --produce T --count N)"
        );
        std::process::exit(2);
    }
    a
}

/// Writes `count` records to every partition of `topic`, keyed `"<partition>-<n>"`.
async fn produce(client: &Client, topic: &str, count: u32) -> Result<(), Box<dyn std::error::Error>> {
    let partitions = client
        .list_topics()
        .await?
        .into_iter()
        .find(|t| t.name == topic)
        .map(|t| t.partitions.len() as i32)
        .ok_or_else(|| format!("no topic {topic}"))?;
    for p in 0..partitions {
        let pc = client.partition_client(topic.to_string(), p, UnknownTopicHandling::Retry).await?;
        let records: Vec<Record> = (0..count)
            .map(|n| Record {
                key: Some(format!("{p}-{n}").into_bytes()),
                value: Some(b"v".to_vec()),
                headers: BTreeMap::new(),
                timestamp: rskafka::chrono::DateTime::from_timestamp_millis(now_ms() as i64).unwrap_or_default(),
            })
            .collect();
        for chunk in records.chunks(500) {
            pc.produce(chunk.to_vec(), Compression::NoCompression).await?;
        }
    }
    emit("produced", json!({"topic": topic, "partitions": partitions, "per_partition": count}));
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let a = args();
    // rskafka takes one address per entry (a comma-separated list is one unreachable address,
    // retried forever).
    let brokers: Vec<String> = a.bootstrap.split(',').map(|b| b.trim().to_string()).filter(|b| !b.is_empty()).collect();
    let client = Arc::new(ClientBuilder::new(brokers.clone()).build().await?);
    if let Some(topic) = &a.produce {
        return produce(&client, topic, a.count).await;
    }
    let (group, topic) = (a.group.clone().unwrap_or_default(), a.topic.clone().unwrap_or_default());

    let transport = ClientTransport::new(ClientConfig::new([a.bootstrap.as_str()])?)?;
    let mut config = MemberConfig::new(group.clone(), [topic.clone()]);
    config.coordinator.session_timeout_ms = a.session_timeout_ms;
    config.coordinator.heartbeat_interval_ms = (a.session_timeout_ms / 10).max(100);
    config.coordinator.rebalance_timeout_ms = 30_000;
    config.startup_timeout = Some(Duration::from_secs(30));
    let assignors = vec![builtin("cooperative-sticky").expect("built in"), builtin("range").expect("built in")];
    let mut member = MemberDriver::start(transport, config, assignors)?;
    let control = member.control();
    emit("config", json!({"client": "rskafka", "group": group, "topics": [topic], "pid": std::process::id()}));

    let positions: Positions = Arc::default();
    let mut last = Committed::new();
    let mut fetchers: BTreeMap<(String, i32), JoinHandle<()>> = BTreeMap::new();
    let mut tick = tokio::time::interval(Duration::from_millis(500));
    let stop = tokio::time::sleep(Duration::from_secs(a.duration_s));
    tokio::pin!(stop);
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let mut leaving = false;
    loop {
        let delivery = tokio::select! {
            d = member.next() => d,
            _ = tick.tick() => {
                commit(&control, &positions, None, &mut last).await;
                continue;
            }
            () = &mut stop, if !leaving => { leaving = true; member.leave(); continue; }
            _ = term.recv(), if !leaving => { leaving = true; member.leave(); continue; }
        };
        let Some(delivery) = delivery else { break };
        match &delivery.event {
            MemberEvent::Joined { member_id, generation_id, leader, .. } => {
                emit("joined", json!({"member_id": member_id, "generation_id": generation_id, "leader": leader}));
            }
            MemberEvent::Assigned { generation_id, partitions, owned, committed } => {
                let list: Vec<Value> = committed
                    .iter()
                    .map(|o| json!({"topic": o.topic, "partition": o.partition, "offset": o.offset}))
                    .collect();
                emit(
                    "assigned",
                    json!({"generation_id": generation_id, "partitions": partitions_json(partitions),
                           "owned": partitions_json(owned), "committed": list}),
                );
                for (t, p) in PartitionSet::from_groups(partitions).iter() {
                    let start = committed.iter().find(|o| o.topic == t && o.partition == p).map(|o| o.offset);
                    let task = spawn_fetcher(
                        Arc::clone(&client),
                        brokers.clone(),
                        t.to_string(),
                        p,
                        start,
                        Arc::clone(&positions),
                    );
                    fetchers.insert((t.to_string(), p), task);
                }
            }
            MemberEvent::Revoked { generation_id, partitions, owned }
            | MemberEvent::Lost { generation_id, partitions, owned } => {
                let lost = matches!(delivery.event, MemberEvent::Lost { .. });
                let gone = PartitionSet::from_groups(partitions);
                for (t, p) in gone.iter() {
                    if let Some(task) = fetchers.remove(&(t.to_string(), p)) {
                        task.abort();
                        let _ = task.await;
                    }
                }
                if !lost {
                    // Still this generation's: commit before acknowledging, so the next owner
                    // starts here.
                    commit(&control, &positions, Some(&gone), &mut last).await;
                }
                positions.lock().unwrap().retain(|(t, p), _| !gone.contains(t, *p));
                last.retain(|(t, p), _| !gone.contains(t, *p));
                let name = if lost { "lost" } else { "revoked" };
                emit(
                    name,
                    json!({"generation_id": generation_id, "partitions": partitions_json(partitions),
                           "owned": partitions_json(owned)}),
                );
            }
            MemberEvent::Error { error, fatal } => {
                emit("error", json!({"error": {"kind": "member", "message": error.to_string()}, "fatal": fatal}));
            }
            MemberEvent::Left => {
                emit("left", json!({}));
            }
            _ => {}
        }
        drop(delivery);
    }
    Ok(())
}
