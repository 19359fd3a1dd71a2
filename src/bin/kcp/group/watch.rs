//! `kcp group watch`: describes a group every interval and prints its changes as JSON lines.

use std::collections::BTreeSet;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use kafka_consumer_protocol::client::{Client, ClientError, Deadline, ErrorKind};
use kafka_consumer_protocol::inspect::watch::{Event, Snapshot, Watcher};
use kafka_consumer_protocol::inspect::{inspect_classic, inspect_consumer};
use serde_json::{json, Value};

use super::describe::{topic_names, Described};
use super::json::{diagnostic_json, groups_json};
use super::topics::Topics;
use super::WatchArgs;
use crate::out::Out;
use crate::{client_error_json, CliError};

/// Wall-clock time as RFC 3339 with milliseconds (`2026-01-02T03:04:05.123Z`).
fn now_ts() -> String {
    let since_epoch = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let micros = crate::pcap::rfc3339(since_epoch);
    // `...05.123456Z` -> `...05.123Z`
    format!("{}Z", &micros[..micros.len().saturating_sub(4)])
}

fn event_json(ts: &str, group: &str, event: &Event) -> Value {
    let mut v = json!({"ts": ts, "group_id": group, "event": event.name()});
    match event {
        Event::State { previous, state } => {
            v["state"] = json!(state);
            v["previous"] = json!(previous);
        }
        Event::Rebalance { state, inferred } => {
            v["state"] = json!(state);
            v["inferred"] = json!(inferred);
        }
        Event::MemberJoined { member_id } | Event::MemberLeft { member_id } => v["member_id"] = json!(member_id),
        Event::AssignmentChanged { member_id, added, removed } => {
            v["member_id"] = json!(member_id);
            v["added"] = groups_json(added);
            v["removed"] = groups_json(removed);
        }
        Event::Diagnostic { diagnostic, resolved } => {
            v["diagnostic"] = diagnostic_json(diagnostic);
            v["resolved"] = json!(resolved);
        }
        Event::Storm { rebalances, threshold } => {
            v["rebalances"] = json!(rebalances);
            v["max_rebalances"] = json!(threshold.rebalances);
            v["window_s"] = json!(threshold.window_secs);
        }
        _ => {}
    }
    v
}

/// One poll of the watched group. A group that does not exist (yet) is a `Dead` snapshot
/// without members, so the watch sees it appear.
async fn poll(
    client: &Client,
    topics: &Topics,
    group: &str,
    prefer_consumer: &mut bool,
    deadline: Deadline,
) -> Result<Snapshot, ClientError> {
    let names = [group];
    for attempt in 0..2 {
        let consumer = *prefer_consumer ^ (attempt == 1);
        if consumer {
            match client.describe_consumer_groups(&names, deadline).await?.pop() {
                Some(Ok(g)) => {
                    let mut set = BTreeSet::new();
                    topic_names(&Described::Consumer(g.clone()), &mut set);
                    let metadata = topics.get(client, set, deadline).await?;
                    let report = inspect_consumer(&g.group, &metadata);
                    *prefer_consumer = true;
                    return Ok(Snapshot::from_consumer(&g.group, &report.diagnostics));
                }
                Some(Err(e)) if e.kind() == ErrorKind::NotFound => continue,
                Some(Err(e)) => return Err(e),
                None => continue,
            }
        } else {
            match client.describe_groups(&names, deadline).await?.pop() {
                Some(Ok(g)) if !(g.group.state == "Dead" && g.group.members.is_empty()) => {
                    let mut set = BTreeSet::new();
                    topic_names(&Described::Classic(g.clone()), &mut set);
                    let metadata = topics.get(client, set, deadline).await?;
                    let report = inspect_classic(&g.group, &metadata);
                    *prefer_consumer = false;
                    return Ok(Snapshot::from_classic(&g.group, &report));
                }
                Some(Err(e)) if e.kind() != ErrorKind::NotFound => return Err(e),
                _ => continue,
            }
        }
    }
    Ok(Snapshot { state: "Dead".into(), ..Snapshot::default() })
}

/// Errors after which polling again cannot help.
fn is_fatal(e: &ClientError) -> bool {
    matches!(e.kind(), ErrorKind::Authentication | ErrorKind::Tls | ErrorKind::Authorization)
}

pub(super) async fn watch(
    client: &Client,
    args: &WatchArgs,
    timeout: Duration,
    out: &mut Out,
) -> Result<bool, CliError> {
    let topics = Topics::new();
    let mut watcher = Watcher::new(args.storm);
    let start = Instant::now();
    let end = args.duration_s.map(|s| start + Duration::from_secs(s));
    let interval = Duration::from_millis(args.interval_ms);
    let mut prefer_consumer = false;
    let mut any_success = false;
    loop {
        let poll_started = Instant::now();
        let deadline = match end {
            Some(end) => Deadline::after(timeout.min(end.saturating_duration_since(poll_started).max(interval))),
            None => Deadline::after(timeout),
        };
        match poll(client, &topics, &args.group, &mut prefer_consumer, deadline).await {
            Ok(snapshot) => {
                any_success = true;
                let now_ms = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
                let ts = now_ts();
                for event in watcher.observe(now_ms, snapshot) {
                    out.json_line(&event_json(&ts, &args.group, &event))?;
                }
            }
            Err(e) if is_fatal(&e) => return Err(CliError::Client(e)),
            Err(e) => {
                let mut v = client_error_json(&e);
                v["ts"] = json!(now_ts());
                v["group_id"] = json!(args.group);
                v["event"] = json!("error");
                out.json_line(
                    &json!({"ts": v["ts"], "group_id": v["group_id"], "event": "error", "error": v["error"]}),
                )?;
            }
        }
        out.flush()?;
        let next = poll_started + interval;
        if end.is_some_and(|end| next >= end) {
            break;
        }
        tokio::time::sleep_until(next.into()).await;
    }
    Ok(any_success)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_have_milliseconds() {
        let ts = now_ts();
        assert_eq!(ts.len(), "2026-01-02T03:04:05.123Z".len(), "{ts}");
        assert!(ts.ends_with('Z') && ts.as_bytes()[19] == b'.', "{ts}");
    }
}
