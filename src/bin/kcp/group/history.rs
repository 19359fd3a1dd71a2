//! `kcp group history`: what happened to groups, read from `__consumer_offsets` segment files
//! copied off a broker (`--log-dir` a partition directory, or `--file` segments).
//!
//! `--records` prints every record as a JSON line (Kafka's schema field names, the embedded
//! subscriptions and assignments in `kcp decode`'s shape); without it, the history of each group
//! rebuilt by `offsets_log::history`. Reading problems (a bad checksum, a truncated file, a
//! record that does not decode) never stop the run: they are printed where they happen (as
//! `{"error": ...}`/`{"warning": ...}` lines, or in `read_problems`) and counted on stderr.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};

use kafka_consumer_protocol::offsets_log::history::{ConsumerGroupEvent, Generation, GenerationMember};
use kafka_consumer_protocol::offsets_log::json::{hex, key_json, value_json, Embedded};
use kafka_consumer_protocol::offsets_log::{
    CoordinatorRecord, GroupHistory, HistoryBuilder, Limits, LogError, SegmentReader,
};
use kafka_consumer_protocol::{AssignmentView, SubscriptionView};
use serde_json::{json, Value};

use super::super::out::{note, Out};
use super::super::shapes::{assignment_json, subscription_json};
use super::super::{CliError, Format};

/// `kcp group history`.
#[derive(clap::Args, Debug)]
pub struct HistoryArgs {
    /// A `__consumer_offsets-N` directory copied off a broker: every `*.log` in it, in order.
    #[arg(long, value_name = "DIR", required_unless_present = "file", conflicts_with = "file")]
    pub log_dir: Option<PathBuf>,
    /// A segment file (repeat for several, oldest first).
    #[arg(long, value_name = "SEGMENT")]
    pub file: Vec<PathBuf>,
    /// The group to report.
    #[arg(long, value_name = "G", required_unless_present = "all_groups", conflicts_with = "all_groups")]
    pub group: Option<String>,
    /// Report every group found.
    #[arg(long)]
    pub all_groups: bool,
    /// Print every record as a JSON line instead of the history.
    #[arg(long, conflicts_with = "format")]
    pub records: bool,
    /// Output format of the history.
    #[arg(long, value_enum, default_value = "json")]
    pub format: Format,
}

/// The embedded payloads in `kcp decode`'s shape; hex when they do not decode or are not ours.
fn embedded(kind: Embedded, bytes: &[u8]) -> Value {
    match kind {
        Embedded::Subscription | Embedded::ClassicProtocolMetadata => {
            SubscriptionView::decode(bytes).map_or_else(|_| hex(bytes).into(), |v| subscription_json(&v))
        }
        Embedded::Assignment => {
            AssignmentView::decode(bytes).map_or_else(|_| hex(bytes).into(), |v| assignment_json(&v))
        }
        Embedded::Opaque => hex(bytes).into(),
    }
}

fn error_json(file: &Path, e: &LogError) -> Value {
    json!({"file": file.display().to_string(), "kind": e.kind().code(),
           "message": e.to_string(), "position": e.position(), "field": e.field()})
}

/// The segment files to read, oldest first, and the partition number when the directory says.
fn inputs(args: &HistoryArgs) -> Result<(Vec<PathBuf>, Option<i32>), CliError> {
    match &args.log_dir {
        Some(dir) => {
            let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
                .map_err(|e| CliError::input(format!("{}: {e}", dir.display())))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "log"))
                .collect();
            files.sort();
            if files.is_empty() {
                return Err(CliError::input(format!("{}: no *.log segment files", dir.display())));
            }
            let partition = dir
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.rsplit_once('-'))
                .and_then(|(_, p)| p.parse().ok());
            Ok((files, partition))
        }
        None => Ok((args.file.clone(), None)),
    }
}

/// Runs `kcp group history`.
pub fn run(args: &HistoryArgs, out: &mut Out) -> Result<(), CliError> {
    let (files, partition) = inputs(args)?;
    let wanted = |group: Option<&str>| args.all_groups || group == args.group.as_deref();
    let mut builder = HistoryBuilder::new();
    let mut problems: Vec<Value> = Vec::new();
    let (mut records, mut control_batches, mut bad_crc) = (0u64, 0u64, 0u64);
    for file in &files {
        let f = File::open(file).map_err(|e| CliError::input(format!("{}: {e}", file.display())))?;
        let mut reader = SegmentReader::new(BufReader::with_capacity(1 << 16, f), Limits::default());
        while let Some(batch) = reader.next_batch() {
            let batch = match batch {
                Ok(b) => b,
                Err(e) => {
                    let problem = json!({ "error": error_json(file, &e) });
                    if args.records {
                        out.json_line(&problem)?;
                    }
                    problems.push(problem);
                    continue;
                }
            };
            let h = &batch.header;
            if !h.crc_valid() {
                bad_crc += 1;
                let warning = json!({"warning": {"file": file.display().to_string(), "kind": "bad_crc",
                    "position": h.position, "stored_crc": h.stored_crc, "computed_crc": h.computed_crc,
                    "message": "the batch's checksum does not match its bytes; its records are still read"}});
                if args.records {
                    out.json_line(&warning)?;
                }
                problems.push(warning);
            }
            if h.is_control {
                control_batches += 1;
                continue;
            }
            for record in batch.records() {
                let decoded = record.and_then(|r| CoordinatorRecord::decode(r.key, r.value).map(|d| (r, d)));
                let (r, d) = match decoded {
                    Ok(x) => x,
                    Err(e) => {
                        let problem = json!({ "error": error_json(file, &e) });
                        if args.records {
                            out.json_line(&problem)?;
                        }
                        problems.push(problem);
                        continue;
                    }
                };
                if !wanted(d.key.group()) {
                    continue;
                }
                records += 1;
                if args.records {
                    let value = d.value.as_ref().map(|(v, value)| value_json(*v, value, &embedded));
                    out.json_line(&json!({"partition": partition, "offset": r.offset, "timestamp": r.timestamp,
                        "key": key_json(&d.key), "value": value}))?;
                } else {
                    builder.add(r.offset, r.timestamp, &d);
                }
            }
        }
    }
    if !problems.is_empty() || control_batches > 0 {
        note(&format!(
            "kcp group history: {} reading problem(s) ({bad_crc} batch(es) with a bad checksum), {control_batches} control batch(es) skipped",
            problems.len()
        ));
    }
    if args.records {
        out.flush()?;
        return Ok(());
    }
    let groups = builder.finish();
    if let Some(g) = &args.group {
        if groups.is_empty() {
            note(&format!("kcp group history: no record of group {g:?} in the files read"));
        }
    }
    let doc = json!({
        "files": files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
        "partition": partition,
        "records": records,
        "read_problems": problems,
        "control_batches_skipped": control_batches,
        "groups": groups.iter().map(group_json).collect::<Vec<_>>(),
    });
    match args.format {
        Format::Json => out.json_pretty(&doc)?,
        Format::Text => {
            let mut text = String::new();
            for g in &groups {
                story(g, &mut text);
            }
            if !problems.is_empty() {
                text.push_str(&format!("{} reading problem(s): see --format json's read_problems\n", problems.len()));
            }
            out.text(&text)?;
        }
    }
    out.flush()?;
    Ok(())
}

fn at_json(offset: i64, timestamp: i64) -> Value {
    json!({"offset": offset, "timestamp": timestamp})
}

fn member_json(m: &GenerationMember, consumer: bool) -> Value {
    let kind = |k| if consumer { k } else { Embedded::Opaque };
    json!({
        "member_id": m.member_id, "group_instance_id": m.group_instance_id, "client_id": m.client_id,
        "client_host": m.client_host, "session_timeout_ms": m.session_timeout, "rebalance_timeout_ms": m.rebalance_timeout,
        "subscription": embedded(kind(Embedded::Subscription), &m.subscription),
        "assignment": embedded(kind(Embedded::Assignment), &m.assignment),
    })
}

fn generation_json(g: &Generation) -> Value {
    let consumer = g.protocol_type == "consumer";
    json!({
        "offset": g.at.offset, "timestamp": g.at.timestamp, "generation": g.generation,
        "protocol_type": g.protocol_type, "protocol": g.protocol, "leader": g.leader,
        "current_state_timestamp": g.current_state_timestamp,
        "members": g.members.iter().map(|m| member_json(m, consumer)).collect::<Vec<_>>(),
        "joined": g.joined, "left": g.left,
        "rejoined": g.rejoined.iter().map(|(i, old, new)| json!({"group_instance_id": i, "old_member_id": old, "new_member_id": new})).collect::<Vec<_>>(),
        "moved": g.moved.iter().map(|m| json!({"topic": m.topic, "partition": m.partition, "from": m.from, "to": m.to})).collect::<Vec<_>>(),
    })
}

fn event_json(at: (i64, i64), e: &ConsumerGroupEvent) -> Value {
    let mut v = match e {
        ConsumerGroupEvent::GroupEpoch(n) => json!({"event": "group_epoch", "epoch": n}),
        ConsumerGroupEvent::MemberJoined { member_id, instance_id, topics, classic } => json!({
            "event": "member_joined", "member_id": member_id, "instance_id": instance_id,
            "subscribed_topic_names": topics, "classic": classic}),
        ConsumerGroupEvent::MemberLeft(id) => json!({"event": "member_left", "member_id": id}),
        ConsumerGroupEvent::AssignmentEpoch(n) => json!({"event": "assignment_epoch", "epoch": n}),
        ConsumerGroupEvent::MemberAssignment { member_id, member_epoch, assigned, pending_revocation } => json!({
            "event": "member_assignment", "member_id": member_id, "member_epoch": member_epoch,
            "assigned_partitions": assigned, "partitions_pending_revocation": pending_revocation}),
        _ => json!({"event": "other"}),
    };
    v["offset"] = at.0.into();
    v["timestamp"] = at.1.into();
    v
}

fn group_json(g: &GroupHistory) -> Value {
    json!({
        "group": g.group,
        "first": at_json(g.first.offset, g.first.timestamp),
        "last": at_json(g.last.offset, g.last.timestamp),
        "compacted_before": g.compacted_before,
        "generations": g.generations.iter().map(generation_json).collect::<Vec<_>>(),
        "consumer_group_events": g.consumer_group_events.iter().map(|(at, e)| event_json((at.offset, at.timestamp), e)).collect::<Vec<_>>(),
        "commits": g.commits.iter().map(|((topic, partition), c)| json!({
            "topic": topic, "partition": partition, "count": c.count,
            "first": {"offset": c.first.offset, "commit_timestamp": c.first.commit_timestamp, "record_offset": c.first.at.offset},
            "last": {"offset": c.last.offset, "commit_timestamp": c.last.commit_timestamp, "record_offset": c.last.at.offset},
            "rewinds": c.rewinds.iter().map(|(a, b)| json!({"from": a.offset, "to": b.offset, "commit_timestamp": b.commit_timestamp, "record_offset": b.at.offset})).collect::<Vec<_>>(),
            "deleted": c.deleted,
        })).collect::<Vec<_>>(),
        "deleted": g.deleted.map(|at| at_json(at.offset, at.timestamp)),
        "other_record_types": g.other_records.iter().map(|(t, n)| json!({"type": t, "records": n})).collect::<Vec<_>>(),
    })
}

/// The history as text, for a person.
fn story(g: &GroupHistory, s: &mut String) {
    use std::fmt::Write;
    let _ = writeln!(
        s,
        "group {} (records at offsets {}..{}, timestamps {}..{})",
        g.group, g.first.offset, g.last.offset, g.first.timestamp, g.last.timestamp
    );
    match &g.compacted_before {
        Some(why) => {
            let _ = writeln!(s, "  history starts at offset {}: {why}", g.first.offset);
        }
        None => {
            let _ = writeln!(s, "  history starts at offset {}", g.first.offset);
        }
    }
    for x in &g.generations {
        if x.members.is_empty() {
            let _ = writeln!(s, "  @{} generation {}: empty", x.at.offset, x.generation);
        } else {
            let _ = writeln!(
                s,
                "  @{} generation {} ({} {}), leader {}: {} member(s)",
                x.at.offset,
                x.generation,
                x.protocol_type,
                x.protocol.as_deref().unwrap_or("-"),
                x.leader.as_deref().unwrap_or("-"),
                x.members.len()
            );
        }
        for id in &x.joined {
            let _ = writeln!(s, "      joined: {id}");
        }
        for id in &x.left {
            let _ = writeln!(s, "      left: {id}");
        }
        for (instance, old, new) in &x.rejoined {
            let _ = writeln!(s, "      static member {instance} rejoined: {old} -> {new}");
        }
        for m in &x.members {
            let parts = m.decoded_assignment().map(|a| {
                a.assigned_partitions
                    .iter()
                    .map(|t| format!("{}{:?}", t.topic, t.partitions))
                    .collect::<Vec<_>>()
                    .join(" ")
            });
            let _ = writeln!(
                s,
                "      {}: {}",
                m.member_id,
                parts.unwrap_or_else(|e| format!("assignment does not decode: {e}"))
            );
        }
        if !x.moved.is_empty() {
            let _ = writeln!(s, "      moved {} partition(s)", x.moved.len());
        }
    }
    for (at, e) in &g.consumer_group_events {
        let _ = writeln!(
            s,
            "  @{} {}",
            at.offset,
            event_json((at.offset, at.timestamp), e)["event"].as_str().unwrap_or("")
        );
    }
    if g.deleted.is_some() {
        let _ = writeln!(s, "  deleted at offset {}", g.deleted.map_or(0, |a| a.offset));
    }
    for ((topic, partition), c) in &g.commits {
        let _ = writeln!(
            s,
            "  commits {topic}-{partition}: {} (first {} at {}, last {} at {}), {} rewind(s){}",
            c.count,
            c.first.offset,
            c.first.commit_timestamp,
            c.last.offset,
            c.last.commit_timestamp,
            c.rewinds.len(),
            if c.deleted { ", deleted" } else { "" }
        );
    }
}
