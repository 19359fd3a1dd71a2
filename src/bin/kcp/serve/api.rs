//! kcp's own API (`/api/v1/...`): the clusters, each cluster's groups, one group in the shape of
//! `kcp group describe` (offsets and lag included, with the server's lag in seconds and status
//! added to it), from the latest snapshot.

use kafka_consumer_protocol::client::collect::DescribedGroup;
use serde_json::{json, Value};

use super::state::{ClusterHandle, GroupState, Shared, Snapshot};
use crate::client_error_json;
use crate::group::json::{classic_json, consumer_json};
use crate::group::offsets::{add_to_group, offsets_json};

fn rfc3339_ms(ms: u64) -> Value {
    if ms == 0 {
        return Value::Null;
    }
    Value::String(crate::pcap::rfc3339_ms(std::time::Duration::from_millis(ms)))
}

fn cluster_summary(cluster: &ClusterHandle, snapshot: &Snapshot) -> Value {
    json!({
        "name": cluster.spec.name,
        "up": snapshot.up,
        "taken_at": rfc3339_ms(snapshot.taken_at_ms),
        "collections": snapshot.collections,
        "collect_duration_s": snapshot.duration.as_secs_f64(),
        "groups": snapshot.groups.len(),
        "error": snapshot.last_error.as_ref().map(|e| client_error_json(e)["error"].clone()),
    })
}

/// `GET /api/v1/clusters`.
pub(crate) fn clusters(shared: &Shared) -> Value {
    let list: Vec<Value> = shared.clusters.iter().map(|c| cluster_summary(c, &c.snapshot())).collect();
    json!({"clusters": list})
}

/// One row of the groups list.
fn group_row(id: &str, g: &GroupState) -> Value {
    let Some(d) = g.described() else { return json!({"group_id": id}) };
    json!({
        "group_id": id,
        "state": d.state(),
        "group_protocol": d.group_protocol(),
        "protocol_type": d.protocol_type(),
        "assignor": d.assignor(),
        "members": d.member_count(),
        "lag": g.report.lag.total,
        "lag_seconds": g.lag_seconds,
        "status": g.status.as_str(),
        "pending_partitions": g.pending,
        "rebalances": g.rebalances,
        "rebalances_last_hour": g.rebalances_last_hour,
        "seen_at": rfc3339_ms(g.seen_at_ms),
    })
}

/// `GET /api/v1/clusters/{cluster}/groups`.
pub(crate) fn groups(cluster: &ClusterHandle) -> Value {
    let snapshot = cluster.snapshot();
    let rows: Vec<Value> = snapshot.groups.iter().map(|(id, g)| group_row(id, g)).collect();
    let mut v = cluster_summary(cluster, &snapshot);
    v["groups"] = Value::Array(rows);
    v["cluster"] = v["name"].take();
    if let Some(object) = v.as_object_mut() {
        object.remove("name");
    }
    v
}

/// `GET /api/v1/clusters/{cluster}/groups/{group}`: the describe JSON, or `None` for a group the
/// server does not know.
pub(crate) fn group(cluster: &ClusterHandle, id: &str) -> Option<Value> {
    let snapshot = cluster.snapshot();
    let g = snapshot.groups.get(id)?;
    let described = g.described()?;
    let (mut value, _) = match described {
        DescribedGroup::Classic(d) => classic_json(d, &g.collected.metadata),
        DescribedGroup::Consumer(d) => (consumer_json(d, &g.collected.metadata), Vec::new()),
    };
    add_to_group(&mut value, &offsets_json(&snapshot.offsets, id, described));
    // What the server adds to describe's shape: the status and lag in seconds it measured.
    if let Some(rows) = value["offsets"].as_array_mut() {
        for (row, (o, p)) in rows.iter_mut().zip(g.report.offsets.iter().zip(&g.partitions)) {
            debug_assert_eq!(row["partition"], json!(o.partition));
            row["status"] = json!(p.status.map(|s| s.as_str()));
            row["lag_seconds"] = json!(p.lag_seconds.map(|(s, _)| s));
            row["lag_seconds_method"] = json!(p.lag_seconds.map(|(_, m)| m.as_str()));
        }
    }
    value["cluster"] = json!(cluster.spec.name);
    value["status"] = json!(g.status.as_str());
    value["lag_seconds"] = json!(g.lag_seconds);
    value["pending_partitions"] = json!(g.pending);
    value["rebalances"] = json!(g.rebalances);
    value["rebalances_last_hour"] = json!(g.rebalances_last_hour);
    value["seen_at"] = rfc3339_ms(g.seen_at_ms);
    Some(value)
}

/// `GET /api/v1/clusters/{cluster}/groups/{group}/history`: the group's lag at each of its last
/// collections (at most `kept`, oldest first), or `None` for a group the server does not know.
pub(crate) fn history(cluster: &ClusterHandle, id: &str) -> Option<Value> {
    if !cluster.snapshot().groups.contains_key(id) {
        return None;
    }
    let histories = cluster.history.lock().unwrap_or_else(|e| e.into_inner());
    let points: Vec<Value> = histories
        .get(id)
        .into_iter()
        .flatten()
        .map(|p| {
            json!({"at": rfc3339_ms(p.at_ms), "at_ms": p.at_ms, "lag": p.lag, "lag_known": p.lag_known,
                     "lag_seconds": p.lag_seconds})
        })
        .collect();
    drop(histories);
    Some(json!({
        "cluster": cluster.spec.name,
        "group_id": id,
        "kept": super::state::HISTORY_POINTS,
        "points": points,
    }))
}
