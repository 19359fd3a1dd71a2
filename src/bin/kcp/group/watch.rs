//! `kcp group watch`: describes a group every interval and prints its changes as JSON lines.

use std::collections::BTreeSet;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use kafka_consumer_protocol::client::collect::{CollectedGroup, Collector, DescribedGroup, GroupKind};
use kafka_consumer_protocol::client::{Client, ClientError, Deadline, ErrorKind};
use kafka_consumer_protocol::inspect::lag::{LagEvaluator, LagSample, LagStatusChange};
use kafka_consumer_protocol::inspect::watch::{Snapshot, WatchEvent, Watcher};
use kafka_consumer_protocol::inspect::{inspect_classic, inspect_consumer};
use serde_json::{json, Value};

use super::json::{diagnostic_json, groups_json};
use super::offsets::{offsets_json, GroupOffsetsJson};
use super::WatchArgs;
use crate::out::Out;
use crate::{client_error_json, CliError, Format};

/// Wall-clock time as RFC 3339 with milliseconds (`2026-01-02T03:04:05.123Z`).
pub(crate) fn now_ts() -> String {
    crate::pcap::rfc3339_ms(SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default())
}

pub(crate) fn event_json(ts: &str, group: &str, event: &WatchEvent) -> Value {
    let mut v = json!({"ts": ts, "group_id": group, "event": event.name()});
    match event {
        WatchEvent::State { previous, state } => {
            v["state"] = json!(state);
            v["previous"] = json!(previous);
        }
        WatchEvent::Rebalance { state, inferred } => {
            v["state"] = json!(state);
            v["inferred"] = json!(inferred);
        }
        WatchEvent::MemberJoined { member_id } | WatchEvent::MemberLeft { member_id } => {
            v["member_id"] = json!(member_id)
        }
        WatchEvent::AssignmentChanged { member_id, added, removed } => {
            v["member_id"] = json!(member_id);
            v["added"] = groups_json(added);
            v["removed"] = groups_json(removed);
        }
        WatchEvent::Diagnostic { diagnostic, resolved } => {
            v["diagnostic"] = diagnostic_json(diagnostic);
            v["resolved"] = json!(resolved);
        }
        WatchEvent::Storm { rebalances, threshold } => {
            v["rebalances"] = json!(rebalances);
            v["max_rebalances"] = json!(threshold.rebalances);
            v["window_s"] = json!(threshold.window_secs);
        }
        _ => {}
    }
    v
}

/// One event as its JSON line, or (`--format text`) as a line for a person: the time, the
/// event, then its other fields as `key=value` (partition groups as `topic p,p`), the group id
/// left out (one group is watched).
fn emit(out: &mut Out, format: Format, v: &Value) -> Result<(), crate::WriteFailed> {
    if format == Format::Json {
        return out.json_line(v);
    }
    let text = |v: &Value| -> String {
        match v {
            Value::String(s) => crate::text::clean(s).into_owned(),
            Value::Array(items) if items.iter().all(|g| g.get("topic").is_some() && g.get("partitions").is_some()) => {
                let groups: Vec<String> = items
                    .iter()
                    .map(|g| {
                        let parts: Vec<String> =
                            g["partitions"].as_array().into_iter().flatten().map(Value::to_string).collect();
                        format!("{} {}", crate::text::clean(g["topic"].as_str().unwrap_or("")), parts.join(","))
                    })
                    .collect();
                format!("[{}]", groups.join("; "))
            }
            other => other.to_string(),
        }
    };
    let mut line = format!("{} {}", text(&v["ts"]), text(&v["event"]));
    for (key, value) in v.as_object().into_iter().flatten() {
        if !matches!(key.as_str(), "ts" | "event" | "group_id") && !value.is_null() {
            line.push_str(&format!(" {key}={}", text(value)));
        }
    }
    line.push('\n');
    out.text(&line)
}

/// One poll of the watched group; `None` when no group has the id (not yet, or no longer).
/// `kind` is what the group was at the last poll: asked with that API first (one request), and
/// with both where it no longer answers (a group converted to the other protocol).
async fn poll(
    collector: &Collector,
    group: &str,
    kind: &mut GroupKind,
    deadline: Deadline,
) -> Result<Option<(Snapshot, CollectedGroup)>, ClientError> {
    for attempt in 0..2 {
        let asked = if attempt == 0 { *kind } else { GroupKind::Unknown };
        let mut found = collector.describe(vec![(group.to_owned(), asked)], deadline).await;
        let Some(collected) = found.pop() else { return Ok(None) };
        let snapshot = match &collected.described {
            Ok(DescribedGroup::Classic(g)) if g.group.state == "Dead" && g.group.members.is_empty() => None,
            Ok(DescribedGroup::Classic(g)) => {
                *kind = GroupKind::Classic;
                Some(Snapshot::from_classic(&g.group, &inspect_classic(&g.group, &collected.metadata)))
            }
            Ok(DescribedGroup::Consumer(g)) => {
                *kind = GroupKind::Consumer;
                let report = inspect_consumer(&g.group, &collected.metadata);
                Some(Snapshot::from_consumer(&g.group, &report.diagnostics))
            }
            Err(e) if e.kind() == ErrorKind::NotFound => None,
            Err(e) => return Err(e.clone()),
        };
        match snapshot {
            Some(snapshot) => return Ok(Some((snapshot, collected))),
            None if asked == GroupKind::Unknown => return Ok(None),
            None => continue,
        }
    }
    Ok(None)
}

/// The lag events of one poll: `lag` when the group's lag totals changed, then one
/// `lag_status` per partition (and for the group, without topic) whose status changed.
fn lag_events(
    ts: &str,
    group: &str,
    view: &GroupOffsetsJson,
    last_lag: &mut Option<Value>,
    evaluator: &mut LagEvaluator,
    now_ms: u64,
) -> Vec<Value> {
    let mut events = Vec::new();
    if last_lag.as_ref() != Some(&view.lag) {
        let mut v = json!({"ts": ts, "group_id": group, "event": "lag"});
        for key in ["total", "by_topic", "by_member", "isolation"] {
            v[key] = view.lag[key].clone();
        }
        events.push(v);
        *last_lag = Some(view.lag.clone());
    }
    let gaps: BTreeSet<(String, i64)> = view
        .offsets
        .as_array()
        .into_iter()
        .flatten()
        .filter(|o| !o["error"].is_null())
        .filter_map(|o| Some((o["topic"].as_str()?.to_owned(), o["partition"].as_i64()?)))
        .collect();
    let samples = view.report.offsets.iter().map(|o| {
        let mut sample = LagSample::from_offsets(now_ms, o);
        sample.error |= gaps.contains(&(o.topic.clone(), i64::from(o.partition)));
        ((o.topic.clone(), o.partition), sample)
    });
    for change in evaluator.observe(now_ms, samples.collect::<Vec<_>>()) {
        events.push(lag_status_json(ts, group, &change));
    }
    events
}

/// A `lag_status` event (`watch`'s line, `kcp serve`'s event).
pub(crate) fn lag_status_json(ts: &str, group: &str, change: &LagStatusChange) -> Value {
    json!({
        "ts": ts,
        "group_id": group,
        "event": "lag_status",
        "topic": change.topic,
        "partition": change.partition,
        "status": change.to.map(|s| s.as_str()),
        "previous": change.from.map(|s| s.as_str()),
        "lag": change.lag,
    })
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
    let collector = Collector::new(client.clone());
    let mut watcher = Watcher::new(args.storm);
    let start = Instant::now();
    let end = args.duration_s.map(|s| start + Duration::from_secs(s));
    let interval = Duration::from_millis(args.interval_ms);
    let mut kind = GroupKind::Unknown;
    let mut any_success = false;
    let mut evaluator = LagEvaluator::new(args.lag.rules());
    let mut last_lag: Option<Value> = None;
    let mut seen = false;
    // The watch ends, with exit status 0, on SIGINT/SIGTERM or when the reader of its output
    // has gone (`| head -1`), also while the group is quiet and nothing is written.
    let stop = async {
        tokio::select! {
            () = super::join::stop_signal(None) => {}
            () = crate::out::stdout_reader_gone() => {}
        }
    };
    tokio::pin!(stop);
    // Polled once now, so that the signal handlers are in place before the first poll.
    tokio::select! {
        biased;
        () = &mut stop => return Ok(true),
        () = std::future::ready(()) => {}
    }
    loop {
        let poll_started = Instant::now();
        let deadline = match end {
            Some(end) => Deadline::after(timeout.min(end.saturating_duration_since(poll_started).max(interval))),
            None => Deadline::after(timeout),
        };
        match poll(&collector, &args.group, &mut kind, deadline).await {
            // A group that does not exist fails as `describe` fails, unless asked to wait for it.
            Ok(None) if !seen && !args.wait_for_group => {
                return Err(CliError::Client(ClientError::new(
                    ErrorKind::NotFound,
                    format!(
                        "group '{}' does not exist: neither a classic nor a consumer group has this id \
                         (pass --wait-for-group to watch for it)",
                        args.group
                    ),
                )));
            }
            Ok(found) => {
                any_success = true;
                seen |= found.is_some();
                // A group that is gone (or not there yet) is a `Dead` snapshot without members.
                let (snapshot, collected) = match found {
                    Some((snapshot, collected)) => (snapshot, Some(collected)),
                    None => (Snapshot { state: "Dead".into(), ..Snapshot::default() }, None),
                };
                let now_ms = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
                let ts = now_ts();
                for event in watcher.observe(now_ms, snapshot) {
                    emit(out, args.format, &event_json(&ts, &args.group, &event))?;
                }
                if let Some(collected) = collected {
                    let fetched =
                        collector.offsets(std::slice::from_ref(&collected), args.isolation.level(), deadline).await;
                    match (fetched, &collected.described) {
                        (Ok(offsets), Ok(described)) => {
                            let view = offsets_json(&offsets, &args.group, described);
                            for v in lag_events(&ts, &args.group, &view, &mut last_lag, &mut evaluator, now_ms) {
                                emit(out, args.format, &v)?;
                            }
                        }
                        (Err(e), _) if is_fatal(&e) => return Err(CliError::Client(e)),
                        (Ok(_), Err(_)) => {}
                        (Err(e), _) => {
                            let v = client_error_json(&e);
                            emit(
                                out,
                                args.format,
                                &json!({"ts": ts, "group_id": args.group, "event": "error", "error": v["error"]}),
                            )?;
                        }
                    }
                }
            }
            Err(e) if is_fatal(&e) => return Err(CliError::Client(e)),
            Err(e) => {
                let mut v = client_error_json(&e);
                v["ts"] = json!(now_ts());
                v["group_id"] = json!(args.group);
                v["event"] = json!("error");
                emit(
                    out,
                    args.format,
                    &json!({"ts": v["ts"], "group_id": v["group_id"], "event": "error", "error": v["error"]}),
                )?;
            }
        }
        out.flush()?;
        let next = poll_started + interval;
        if end.is_some_and(|end| next >= end) {
            break;
        }
        tokio::select! {
            () = &mut stop => break,
            () = tokio::time::sleep_until(next.into()) => {}
        }
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
