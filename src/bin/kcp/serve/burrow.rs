//! The Burrow-compatible API (`/v3/kafka/...`): Burrow's JSON shapes and status semantics, for
//! classic and KIP-848 groups alike, from the latest snapshot.
//!
//! Where it differs from Burrow, on purpose (docs/cli.md says so too):
//! - A partition's `start` and `end` are the oldest and newest collections in the status window:
//!   an admin client sees committed offsets by polling, so `timestamp` and `observedAt` are both
//!   the time of the collection that saw the offset.
//! - A partition is listed once the group has committed an offset for it (Burrow lists what it saw
//!   committed); `partition_count` counts those.
//! - Burrow's `/v3/config/...`, `/v3/admin/loglevel` and its DELETE routes are not served: the
//!   server is read-only and shows no configuration.

use std::sync::Arc;

use kafka_consumer_protocol::inspect::lag::LagStatus;
use serde_json::{json, Value};

use super::state::{ClusterHandle, GroupState, PartitionState, Shared, WindowPoint};

/// Burrow's `request` object.
pub(crate) fn request_info(url: &str, host: &str) -> Value {
    json!({"url": url, "host": host})
}

/// Burrow's error body.
pub(crate) fn error(message: &str, url: &str, host: &str) -> Value {
    json!({"error": true, "message": message, "request": request_info(url, host)})
}

pub(crate) fn cluster_list(shared: &Shared, url: &str, host: &str) -> Value {
    let clusters: Vec<&str> = shared.clusters.iter().map(|c| c.spec.name.as_str()).collect();
    json!({"error": false, "message": "cluster list returned", "clusters": clusters, "request": request_info(url, host)})
}

pub(crate) fn cluster_detail(shared: &Shared, cluster: &ClusterHandle, url: &str, host: &str) -> Value {
    let refresh = shared.settings.interval.as_secs().max(1);
    json!({
        "error": false,
        "message": "cluster module detail returned",
        "module": {
            "class-name": "kafka",
            "servers": cluster.spec.servers,
            // No TLS or SASL profile is shown: the server never shows client settings.
            "client-profile": {"name": "default", "client-id": cluster.spec.config.client_id, "kafka-version": "", "tls": null, "sasl": null},
            "topic-refresh": refresh,
            "offset-refresh": refresh,
        },
        "request": request_info(url, host),
    })
}

pub(crate) fn topic_list(cluster: &ClusterHandle, url: &str, host: &str) -> Value {
    let snapshot = cluster.snapshot();
    let mut topics: Vec<&str> = snapshot.partitions.keys().map(|(t, _)| t.as_str()).collect();
    topics.dedup();
    json!({"error": false, "message": "topic list returned", "topics": topics, "request": request_info(url, host)})
}

/// A topic's log end offsets in partition order, or `None` when no group reads it.
pub(crate) fn topic_detail(cluster: &ClusterHandle, topic: &str, url: &str, host: &str) -> Option<Value> {
    let snapshot = cluster.snapshot();
    let offsets: Vec<i64> = snapshot
        .partitions
        .range((topic.to_owned(), i32::MIN)..=(topic.to_owned(), i32::MAX))
        .map(|(_, (_, end))| end.unwrap_or(-1))
        .collect();
    if offsets.is_empty() {
        return None;
    }
    Some(
        json!({"error": false, "message": "topic offsets returned", "offsets": offsets, "request": request_info(url, host)}),
    )
}

pub(crate) fn consumer_list(cluster: &ClusterHandle, url: &str, host: &str) -> Value {
    let snapshot = cluster.snapshot();
    let consumers: Vec<&str> = snapshot.groups.keys().map(String::as_str).collect();
    json!({"error": false, "message": "consumer list returned", "consumers": consumers, "request": request_info(url, host)})
}

fn point(p: Option<WindowPoint>) -> Value {
    match p {
        Some(p) => {
            json!({"offset": p.offset, "timestamp": p.at_ms, "observedAt": p.at_ms, "lag": p.lag.map(|l| l.max(0))})
        }
        None => Value::Null,
    }
}

/// The group's stored offsets per topic (Burrow's consumer detail).
pub(crate) fn consumer_detail(cluster: &ClusterHandle, group: &str, url: &str, host: &str) -> Option<Value> {
    let snapshot = cluster.snapshot();
    let g = snapshot.groups.get(group)?;
    let mut topics = serde_json::Map::new();
    for (o, p) in g.report.offsets.iter().zip(&g.partitions) {
        let (owner, client_id) = owner_of(g, o.owner.as_deref());
        let entry = topics.entry(o.topic.clone()).or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(list) = entry {
            let offsets: Vec<Value> = [p.start, p.end].into_iter().flatten().map(|x| point(Some(x))).collect();
            list.push(json!({
                "offsets": offsets,
                "owner": owner,
                "client_id": client_id,
                "current-lag": o.lag.unwrap_or(0).max(0),
            }));
        }
    }
    Some(
        json!({"error": false, "message": "consumer detail returned", "topics": topics, "request": request_info(url, host)}),
    )
}

/// Burrow's `owner` (the member's host) and `client_id` of a partition's owner.
fn owner_of<'a>(g: &'a GroupState, owner: Option<&str>) -> (&'a str, &'a str) {
    match owner.and_then(|id| g.members.get(id)) {
        Some(m) => (m.client_host.as_str(), m.client_id.as_str()),
        None => ("", ""),
    }
}

fn partition_json(g: &GroupState, index: usize, window: usize) -> Option<(Value, LagStatus, u64, f64)> {
    let o = &g.report.offsets[index];
    let p: &PartitionState = &g.partitions[index];
    o.committed_offset?;
    let status = p.status.unwrap_or(LagStatus::Ok);
    let lag = u64::try_from(o.lag.unwrap_or(0).max(0)).unwrap_or(0);
    let complete = (p.samples as f64 / window.max(1) as f64).min(1.0);
    let (owner, client_id) = owner_of(g, o.owner.as_deref());
    let value = json!({
        "topic": o.topic,
        "partition": o.partition,
        "owner": owner,
        "client_id": client_id,
        "status": status.as_str(),
        "start": point(p.start),
        "end": point(p.end),
        "current_lag": lag,
        "complete": complete,
    });
    Some((value, status, lag, complete))
}

/// Burrow's consumer status: `/status` lists the partitions at WARN or worse, `/lag` every one.
/// `None` for a group the server does not know (Burrow answers NOTFOUND with 404).
pub(crate) fn consumer_status(
    shared: &Shared,
    cluster: &ClusterHandle,
    group: &str,
    show_all: bool,
    url: &str,
    host: &str,
) -> (bool, Value) {
    let snapshot = cluster.snapshot();
    let Some(g) = snapshot.groups.get(group).map(Arc::clone) else {
        let status = json!({
            "cluster": cluster.spec.name, "group": group, "status": "NOTFOUND", "complete": 1.0,
            "partitions": [], "partition_count": 0, "maxlag": null, "totallag": 0,
        });
        return (
            false,
            json!({"error": false, "message": "consumer status returned", "status": status, "request": request_info(url, host)}),
        );
    };
    let window = shared.settings.rules.window;
    let mut partitions = Vec::new();
    let mut count = 0usize;
    let mut complete_count = 0usize;
    let mut total: u64 = 0;
    let mut worst = LagStatus::Ok;
    let mut maxlag: Option<(u64, Value)> = None;
    for index in 0..g.report.offsets.len() {
        let Some((value, status, lag, complete)) = partition_json(&g, index, window) else { continue };
        count += 1;
        total = total.saturating_add(lag);
        worst = worst.max(status);
        if complete >= 1.0 {
            complete_count += 1;
        }
        if maxlag.as_ref().is_none_or(|(l, _)| lag > *l) {
            maxlag = Some((lag, value.clone()));
        }
        if show_all || status != LagStatus::Ok {
            partitions.push(value);
        }
    }
    // Burrow's group status is OK, WARN or ERR: STOP, STALL and REWIND count as ERR.
    let group_status = if worst > LagStatus::Err { LagStatus::Err } else { worst };
    let status = json!({
        "cluster": cluster.spec.name,
        "group": group,
        "status": group_status.as_str(),
        "complete": if count == 0 { 0.0 } else { complete_count as f64 / count as f64 },
        "partitions": partitions,
        "partition_count": count,
        "maxlag": maxlag.map(|(_, v)| v),
        "totallag": total,
    });
    (
        true,
        json!({"error": false, "message": "consumer status returned", "status": status, "request": request_info(url, host)}),
    )
}
