//! Creates many classic consumer groups cheaply and holds them, for the describe benchmark
//! (`tools/live/bench-describe.sh`): every member does JoinGroup and SyncGroup through the crate's
//! client layer, with a long session timeout, then stays silent (no heartbeats are needed while
//! the session lasts). The groups are Stable, with real Subscription and Assignment payloads.
//!
//! ```sh
//! cargo run --release --example hold_group_members -- --bootstrap 127.0.0.1:9092 \
//!     --topic bench --groups 1000 --members 3 --hold-s 600
//! ```
//!
//! Prints `{"ready": N, "seconds": S}` once every group is formed, then holds until `--hold-s`
//! passes or stdin closes. With `--commit-offset N` each group's leader commits offset N for
//! every partition of the topic (OffsetCommit with its generation and member id) once synced,
//! so that the groups have committed offsets (the offsets benchmark).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use bytes::Bytes;
use kafka_consumer_protocol::client::{Client, ClientConfig, ClientError, Deadline, ErrorKind, SendOptions, Target};
use kafka_consumer_protocol::group_api::kafka::{
    from_heartbeat_response, from_join_group_response, from_sync_group_response, heartbeat_request, join_group_request,
    sync_group_request,
};
use kafka_consumer_protocol::group_api::{
    ErrorCode, HeartbeatRequest, JoinGroupProtocol, JoinGroupRequest, JoinGroupResponse, SyncGroupAssignment,
    SyncGroupRequest,
};
use kafka_consumer_protocol::{Assignment, Subscription, TopicPartitions, Version};

struct Options {
    bootstrap: String,
    topic: String,
    partitions: i32,
    groups: usize,
    members: usize,
    lanes: usize,
    prefix: String,
    session_timeout_ms: i32,
    hold: Duration,
    commit_offset: Option<i64>,
}

fn parse() -> Result<Options, String> {
    let mut o = Options {
        bootstrap: String::new(),
        topic: "bench".into(),
        partitions: 3,
        groups: 1000,
        members: 3,
        lanes: 50,
        prefix: "bench-g".into(),
        session_timeout_ms: 600_000,
        hold: Duration::from_secs(600),
        commit_offset: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
        let number = |v: String| v.parse::<u64>().map_err(|_| format!("{flag}: {v} is not a number"));
        match flag.as_str() {
            "--bootstrap" => o.bootstrap = value()?,
            "--topic" => o.topic = value()?,
            "--partitions" => o.partitions = number(value()?)? as i32,
            "--groups" => o.groups = number(value()?)? as usize,
            "--members" => o.members = number(value()?)?.max(1) as usize,
            "--lanes" => o.lanes = number(value()?)?.max(1) as usize,
            "--prefix" => o.prefix = value()?,
            "--session-timeout-ms" => o.session_timeout_ms = number(value()?)? as i32,
            "--hold-s" => o.hold = Duration::from_secs(number(value()?)?),
            "--commit-offset" => o.commit_offset = Some(number(value()?)? as i64),
            other => return Err(format!("unknown option {other}")),
        }
    }
    if o.bootstrap.is_empty() {
        return Err("--bootstrap HOST:PORT is required".into());
    }
    Ok(o)
}

fn failed(what: &str, code: ErrorCode) -> ClientError {
    ClientError::new(ErrorKind::Protocol, format!("{what}: {} ({})", code.name(), code.0))
}

async fn join(
    client: &Client,
    o: &Options,
    group: &str,
    member_id: &str,
    metadata: &Bytes,
) -> Result<JoinGroupResponse, ClientError> {
    let request = JoinGroupRequest {
        group_id: group.to_owned(),
        session_timeout_ms: o.session_timeout_ms,
        rebalance_timeout_ms: 60_000,
        member_id: member_id.to_owned(),
        group_instance_id: None,
        protocol_type: "consumer".into(),
        protocols: vec![JoinGroupProtocol { name: "range".into(), metadata: metadata.clone() }],
        reason: None,
    };
    let options = SendOptions::new(Deadline::after(Duration::from_secs(120))).request_timeout(Duration::from_secs(90));
    let sent = client
        .send(&Target::AnyBroker, options, |v| join_group_request(&request, v).expect("no static member"))
        .await?;
    Ok(from_join_group_response(sent.response))
}

async fn sync(
    client: &Client,
    group: &str,
    joined: &JoinGroupResponse,
    assignments: Vec<SyncGroupAssignment>,
) -> Result<ErrorCode, ClientError> {
    let request = SyncGroupRequest {
        group_id: group.to_owned(),
        generation_id: joined.generation_id,
        member_id: joined.member_id.clone(),
        group_instance_id: None,
        protocol_type: Some("consumer".into()),
        protocol_name: joined.protocol_name.clone(),
        assignments,
    };
    let options = SendOptions::new(Deadline::after(Duration::from_secs(120))).request_timeout(Duration::from_secs(90));
    let sent = client
        .send(&Target::AnyBroker, options, |v| sync_group_request(&request, v).expect("no static member"))
        .await?;
    Ok(from_sync_group_response(sent.response).error)
}

/// OffsetCommit of `offset` for every partition of the topic, as the member `joined` made.
async fn commit(
    client: &Client,
    o: &Options,
    group: &str,
    joined: &JoinGroupResponse,
    offset: i64,
) -> Result<ErrorCode, ClientError> {
    use kafka_protocol::messages::offset_commit_request::{OffsetCommitRequestPartition, OffsetCommitRequestTopic};
    use kafka_protocol::messages::{GroupId, OffsetCommitRequest, TopicName};
    use kafka_protocol::protocol::StrBytes;
    let options = SendOptions::new(Deadline::after(Duration::from_secs(120)));
    let target = Target::Coordinator(group.to_owned());
    let sent = client
        .send(&target, options, |_| {
            let partitions = (0..o.partitions)
                .map(|p| OffsetCommitRequestPartition::default().with_partition_index(p).with_committed_offset(offset))
                .collect();
            OffsetCommitRequest::default()
                .with_group_id(GroupId(StrBytes::from_string(group.to_owned())))
                .with_generation_id_or_member_epoch(joined.generation_id)
                .with_member_id(StrBytes::from_string(joined.member_id.clone()))
                .with_topics(vec![OffsetCommitRequestTopic::default()
                    .with_name(TopicName(StrBytes::from_string(o.topic.clone())))
                    .with_partitions(partitions)])
        })
        .await?;
    let code = sent.response.topics.iter().flat_map(|t| &t.partitions).map(|p| p.error_code).find(|&c| c != 0);
    Ok(ErrorCode(code.unwrap_or(0)))
}

/// The leader's range-like assignment: partition p to member p mod n, in member-id order.
fn assignments(o: &Options, members: &[String]) -> Vec<SyncGroupAssignment> {
    let mut ids = members.to_vec();
    ids.sort();
    ids.iter()
        .enumerate()
        .map(|(i, id)| {
            let partitions: Vec<i32> = (0..o.partitions).filter(|p| *p as usize % ids.len() == i).collect();
            let a = Assignment::new(vec![TopicPartitions::new(o.topic.clone(), partitions)]);
            SyncGroupAssignment {
                member_id: id.clone(),
                assignment: Bytes::from(a.encode(Version::V3).expect("encodes")),
            }
        })
        .collect()
}

/// Forms one group with its members on `clients` (one connection each: a JoinGroup holds its
/// connection until the group's join completes, so members of one group need their own). Each
/// member joins, syncs and then heartbeats until every member has synced the same generation; a heartbeat that says the group is rebalancing sends the member back to join
/// (with the broker's `group.initial.rebalance.delay.ms=0` the first join completes alone).
async fn form_group(clients: &[Client], o: &Options, group: &str, metadata: &Bytes) -> Result<(), ClientError> {
    let complete: Mutex<Option<(i32, usize)>> = Mutex::new(None);
    let members = clients.iter().map(|c| member(c, o, group, metadata, clients.len(), &complete));
    for result in futures_join_all(members.collect()).await {
        result?;
    }
    Ok(())
}

async fn member(
    client: &Client,
    o: &Options,
    group: &str,
    metadata: &Bytes,
    size: usize,
    complete: &Mutex<Option<(i32, usize)>>,
) -> Result<(), ClientError> {
    let started = Instant::now();
    let mut id = String::new();
    while started.elapsed() < Duration::from_secs(120) {
        let joined = join(client, o, group, &id, metadata).await?;
        match joined.error {
            ErrorCode::NONE => id = joined.member_id.clone(),
            ErrorCode::MEMBER_ID_REQUIRED => {
                id = joined.member_id.clone();
                continue;
            }
            ErrorCode::UNKNOWN_MEMBER_ID => {
                id.clear();
                continue;
            }
            ErrorCode::REBALANCE_IN_PROGRESS | ErrorCode::ILLEGAL_GENERATION => continue,
            // A fresh broker creates __consumer_offsets on the first group request.
            code if code.is_coordinator_error() => {
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
            other => return Err(failed("JoinGroup", other)),
        }
        let leader = joined.leader == joined.member_id;
        let member_ids: Vec<String> = joined.members.iter().map(|m| m.member_id.clone()).collect();
        let plan = if leader { assignments(o, &member_ids) } else { Vec::new() };
        match sync(client, group, &joined, plan).await? {
            ErrorCode::NONE => {}
            ErrorCode::REBALANCE_IN_PROGRESS | ErrorCode::ILLEGAL_GENERATION => continue,
            ErrorCode::UNKNOWN_MEMBER_ID => {
                id.clear();
                continue;
            }
            code if code.is_coordinator_error() => {
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
            other => return Err(failed("SyncGroup", other)),
        }
        if let (true, Some(offset)) = (leader, o.commit_offset) {
            match commit(client, o, group, &joined, offset).await? {
                ErrorCode::NONE => {}
                ErrorCode::REBALANCE_IN_PROGRESS | ErrorCode::ILLEGAL_GENERATION => continue,
                other => return Err(failed("OffsetCommit", other)),
            }
        }
        {
            // Count the members synced in this generation.
            let mut synced = complete.lock().unwrap_or_else(|e| e.into_inner());
            match &mut *synced {
                Some((generation, count)) if *generation == joined.generation_id => *count += 1,
                other => *other = Some((joined.generation_id, 1)),
            }
        }
        // Heartbeat until every member has synced this generation: a member that stopped
        // earlier could not answer a rebalance another one starts.
        loop {
            if *complete.lock().unwrap_or_else(|e| e.into_inner()) == Some((joined.generation_id, size)) {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
            match heartbeat(client, group, &joined).await? {
                ErrorCode::NONE => {}
                ErrorCode::REBALANCE_IN_PROGRESS | ErrorCode::ILLEGAL_GENERATION => break,
                ErrorCode::UNKNOWN_MEMBER_ID => {
                    id.clear();
                    break;
                }
                code if code.is_coordinator_error() => break,
                other => return Err(failed("Heartbeat", other)),
            }
        }
    }
    Err(ClientError::new(ErrorKind::Protocol, format!("group {group} did not form within 120 s")))
}

async fn heartbeat(client: &Client, group: &str, joined: &JoinGroupResponse) -> Result<ErrorCode, ClientError> {
    let request = HeartbeatRequest {
        group_id: group.to_owned(),
        generation_id: joined.generation_id,
        member_id: joined.member_id.clone(),
        group_instance_id: None,
    };
    let options = SendOptions::new(Deadline::after(Duration::from_secs(30)));
    let sent =
        client.send(&Target::AnyBroker, options, |v| heartbeat_request(&request, v).expect("no static member")).await?;
    Ok(from_heartbeat_response(sent.response).error)
}

/// Awaits every future (spawned on the current runtime), in order.
async fn futures_join_all<T>(futures: Vec<impl std::future::Future<Output = T>>) -> Vec<T> {
    // The futures borrow locals, so they are polled here rather than spawned.
    let mut futures: Vec<_> = futures.into_iter().map(Box::pin).collect();
    let mut results: Vec<Option<T>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (f, slot) in futures.iter_mut().zip(results.iter_mut()) {
            if slot.is_none() {
                match f.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => *slot = Some(v),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    results.into_iter().map(|r| r.expect("every future finished")).collect()
}

async fn run(o: Options) -> Result<(), String> {
    let started = Instant::now();
    let metadata = Bytes::from(Subscription::new([o.topic.clone()]).encode(Version::V3).map_err(|e| e.to_string())?);
    let config = ClientConfig::new([&o.bootstrap]).map_err(|e| e.to_string())?;
    let o = std::sync::Arc::new(o);
    let mut lanes = tokio::task::JoinSet::new();
    for lane in 0..o.lanes.min(o.groups.max(1)) {
        let clients: Vec<Client> =
            (0..o.members).map(|_| Client::new(config.clone())).collect::<Result<_, _>>().map_err(|e| e.to_string())?;
        let (o, metadata) = (o.clone(), metadata.clone());
        lanes.spawn(async move {
            let mut formed = 0usize;
            for g in (lane..o.groups).step_by(o.lanes) {
                let group = format!("{}-{g:05}", o.prefix);
                form_group(&clients, &o, &group, &metadata).await.map_err(|e| format!("{group}: {e}"))?;
                formed += 1;
            }
            Ok::<_, String>((formed, clients))
        });
    }
    let mut formed = 0;
    // The clients stay alive (their connections open) while the groups are held.
    let mut held = Vec::new();
    while let Some(done) = lanes.join_next().await {
        let (n, clients) = done.map_err(|e| e.to_string())??;
        formed += n;
        held.push(clients);
    }
    println!("{{\"ready\": {formed}, \"seconds\": {:.1}}}", started.elapsed().as_secs_f64());
    // Hold until the time is up or stdin closes (the benchmark script closes it to stop us).
    let stdin_closed = tokio::task::spawn_blocking(|| {
        let mut sink = String::new();
        while std::io::stdin().read_line(&mut sink).map(|n| n > 0).unwrap_or(false) {
            sink.clear();
        }
    });
    tokio::select! {
        _ = tokio::time::sleep(o.hold) => {}
        _ = stdin_closed => {}
    }
    drop(held);
    Ok(())
}

fn main() {
    let options = match parse() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("hold_group_members: {e}");
            std::process::exit(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    if let Err(e) = runtime.block_on(run(options)) {
        eprintln!("hold_group_members: {e}");
        std::process::exit(1);
    }
}
