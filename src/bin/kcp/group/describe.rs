//! `kcp group describe`: every member's decoded subscription and assignment, and diagnostics,
//! group by group in the order asked while later groups are already being described.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use kafka_consumer_protocol::assignor::ClusterMetadata;
use kafka_consumer_protocol::client::{
    ClassicGroupDescription, Client, ClientError, ConsumerGroupDescription, Deadline, ErrorKind, ListGroupsFilter,
};
use kafka_consumer_protocol::{AssignmentView, DecodeOptions, SubscriptionView};
use serde_json::{json, Value};

use super::json::{classic_json, consumer_json};
use super::offsets::{add_to_group, offsets_table, Offsets};
use super::table::text_of_group;
use super::topics::Topics;
use super::DescribeArgs;
use crate::out::{note, Out, WriteFailed};
use crate::text::clean;
use crate::{client_error_json, CliError, Format};

/// Groups described per call (one DescribeGroups per coordinator for each).
const CHUNK: usize = 50;
/// Calls in flight at once: memory holds at most this many chunks of described groups.
const IN_FLIGHT: usize = 4;

/// What a group is known to be before describing it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Classic,
    Consumer,
    /// Named on the command line: try DescribeGroups, then ConsumerGroupDescribe.
    Unknown,
}

/// One described group, ready to inspect.
pub(super) enum Described {
    Classic(ClassicGroupDescription),
    Consumer(ConsumerGroupDescription),
}

/// One group's rendered output: its JSON and, in text mode, its table.
struct GroupOutput {
    json: Value,
    text: String,
}

pub(super) async fn describe(
    client: Client,
    args: &DescribeArgs,
    timeout: Duration,
    out: &mut Out,
) -> Result<Outcome, CliError> {
    let deadline = Deadline::after(timeout);
    let mut wanted: Vec<(String, Kind)> = Vec::new();
    if args.all_groups {
        for g in client.list_groups(&ListGroupsFilter::default(), deadline).await? {
            let kind = if g.group_type.as_deref() == Some("consumer") { Kind::Consumer } else { Kind::Classic };
            wanted.push((g.group_id, kind));
        }
        wanted.sort_by(|a, b| a.0.cmp(&b.0));
        wanted.dedup_by(|a, b| a.0 == b.0);
    } else {
        for g in &args.groups {
            if !wanted.iter().any(|(w, _)| w == g) {
                wanted.push((g.clone(), Kind::Unknown));
            }
        }
    }
    let as_array = args.all_groups || wanted.len() > 1;
    let topics = Arc::new(Topics::new());
    let format = args.format;

    // Phase 1: describe every group, chunk by chunk, a few chunks in flight.
    let mut chunks = wanted.chunks(CHUNK).map(<[_]>::to_vec).collect::<VecDeque<_>>();
    let mut running: VecDeque<(Vec<String>, tokio::task::JoinHandle<Result<Vec<Found>, ClientError>>)> =
        VecDeque::new();
    let mut found: Vec<Found> = Vec::with_capacity(wanted.len());
    let mut fatal = None;
    loop {
        while running.len() < IN_FLIGHT {
            let Some(chunk) = chunks.pop_front() else { break };
            let names: Vec<String> = chunk.iter().map(|(name, _)| name.clone()).collect();
            let (client, topics) = (client.clone(), topics.clone());
            running.push_back((names, tokio::spawn(async move { describe_chunk(&client, &topics, chunk, deadline).await })));
        }
        let Some((names, next)) = running.pop_front() else { break };
        // A chunk that failed as a whole (the deadline passed while finding its coordinators or
        // its topics) still gives one entry per group, with the group id and the error: the
        // array keeps its documented shape whatever the deadline cuts.
        let failed = |e: ClientError| {
            names
                .iter()
                .map(|name| Found {
                    name: name.clone(),
                    result: Some(Err(e.clone())),
                    metadata: Arc::new(ClusterMetadata::default()),
                })
                .collect::<Vec<_>>()
        };
        match next.await {
            Ok(Ok(described)) => found.extend(described),
            Ok(Err(e)) => found.extend(failed(e)),
            Err(e) => found.extend(failed(ClientError::new(ErrorKind::Protocol, format!("a describe task failed: {e}")))),
        }
    }

    // Phase 2: the offsets of every described group in one go: one OffsetFetch per coordinator,
    // one ListOffsets per leader and offset kind, whatever the number of groups and partitions.
    let offsets = if fatal.is_none() {
        let described: Vec<(&str, &Described)> =
            found.iter().filter_map(|f| Some((f.name.as_str(), f.result.as_ref()?.as_ref().ok()?))).collect();
        match Offsets::fetch(&client, &described, args.isolation, deadline).await {
            Ok(offsets) => Some(offsets),
            Err(e) => {
                fatal = Some(e);
                None
            }
        }
    } else {
        None
    };

    // Phase 3: render in the order asked.
    let mut all_ok = true;
    let mut partial = false;
    let mut first = true;
    let mut tables_written = 0usize;
    if as_array && format == Format::Json {
        out.text("[")?;
    }
    if let Some(offsets) = &offsets {
        for f in &found {
            let group = render(f, &topics, offsets, format);
            let (value, text) = match group {
                Ok((GroupOutput { json, text }, gap)) => {
                    partial |= gap;
                    (json, text)
                }
                Err((value, line)) => {
                    all_ok = false;
                    (value, line)
                }
            };
            match format {
                Format::Json if as_array => {
                    out.text(if first { "\n" } else { ",\n" })?;
                    out.text(&serde_json::to_string_pretty(&value).map_err(WriteFailed::from)?)?;
                }
                Format::Json if value.get("group_id").is_some() && value.get("error").is_some() => {
                    // One group asked for and it failed: the plain error object.
                    out.json_pretty(&json!({"error": value["error"]}))?;
                }
                Format::Json => out.json_pretty(&value)?,
                Format::Text if value.get("error").is_some() => note(&text),
                Format::Text => {
                    if tables_written > 0 {
                        out.text("\n")?;
                    }
                    out.text(&text)?;
                    tables_written += 1;
                }
            }
            first = false;
            out.flush()?;
        }
    }
    if let Some(e) = fatal {
        if as_array && format == Format::Json {
            out.text(if first { "\n" } else { ",\n" })?;
            out.text(&serde_json::to_string_pretty(&client_error_json(&e)).map_err(WriteFailed::from)?)?;
            out.text("\n]\n")?;
            return Ok(Outcome::Failed);
        }
        return Err(CliError::Client(e));
    }
    if as_array && format == Format::Json {
        out.text(if first { "]\n" } else { "\n]\n" })?;
    }
    Ok(if !all_ok {
        Outcome::Failed
    } else if partial {
        Outcome::Partial
    } else {
        Outcome::Complete
    })
}

/// How `describe` ended: exit status 0, 1 (a group could not be described) or 3 (every group
/// was described but a gap in its offsets was reported).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Outcome {
    Complete,
    Failed,
    Partial,
}

/// One group as phase 1 left it: described, failed, or not answered.
struct Found {
    name: String,
    result: Option<Result<Described, ClientError>>,
    metadata: Arc<ClusterMetadata>,
}

/// One group's output (and whether its offsets have gaps), or its error as JSON and as a
/// line for stderr.
fn render(
    f: &Found,
    _topics: &Topics,
    offsets: &Offsets,
    format: Format,
) -> Result<(GroupOutput, bool), (Value, String)> {
    let name = &f.name;
    match &f.result {
        Some(Ok(described)) => {
            let view = offsets.group_json(name, described);
            let (mut json, extra) = match described {
                Described::Classic(g) => classic_json(g, &f.metadata),
                Described::Consumer(g) => (consumer_json(g, &f.metadata), Vec::new()),
            };
            add_to_group(&mut json, &view);
            let text = if format == Format::Text {
                format!("{}{}", text_of_group(&json, &extra), offsets_table(&json))
            } else {
                String::new()
            };
            Ok((GroupOutput { json, text }, view.partial))
        }
        Some(Err(e)) => {
            let mut v = client_error_json(e);
            v["group_id"] = Value::String(name.clone());
            let line = format!("kcp: group {}: {}: {}", clean(name), e.kind(), clean(e.message()));
            Err((json!({"group_id": name, "error": v["error"]}), line))
        }
        None => Err((
            json!({"group_id": name, "error": {"kind": "protocol", "message": "the cluster answered nothing for this group"}}),
            format!("kcp: group {}: protocol: the cluster answered nothing for this group", clean(name)),
        )),
    }
}

/// Describes one chunk of groups (each kind with its API, every coordinator in parallel) and
/// fetches the metadata of their topics, in the chunk's order.
async fn describe_chunk(
    client: &Client,
    topics: &Topics,
    chunk: Vec<(String, Kind)>,
    deadline: Deadline,
) -> Result<Vec<Found>, ClientError> {
    let mut found: HashMap<String, Result<Described, ClientError>> = HashMap::new();
    let classic: Vec<&str> = chunk.iter().filter(|(_, k)| *k != Kind::Consumer).map(|(g, _)| g.as_str()).collect();
    let mut consumer: Vec<&str> = chunk.iter().filter(|(_, k)| *k == Kind::Consumer).map(|(g, _)| g.as_str()).collect();
    let kind_of = |g: &str| chunk.iter().find(|(c, _)| c == g).map_or(Kind::Unknown, |(_, k)| *k);
    if !classic.is_empty() {
        for (name, result) in classic.iter().zip(client.describe_groups(&classic, deadline).await?) {
            let unknown = kind_of(name) == Kind::Unknown;
            match result {
                // DescribeGroups before v6 answers Dead without members both for an unknown
                // group and for a KIP-848 group; v6 answers GROUP_ID_NOT_FOUND.
                Ok(g) if unknown && g.group.state == "Dead" && g.group.members.is_empty() => consumer.push(name),
                Err(e) if unknown && e.kind() == ErrorKind::NotFound => consumer.push(name),
                other => {
                    found.insert((*name).to_owned(), other.map(Described::Classic));
                }
            }
        }
    }
    if !consumer.is_empty() {
        for (name, result) in consumer.iter().zip(client.describe_consumer_groups(&consumer, deadline).await?) {
            let result = match result {
                Err(e) if e.kind() == ErrorKind::NotFound && kind_of(name) == Kind::Unknown => Err(ClientError::new(
                    ErrorKind::NotFound,
                    format!("group '{name}' does not exist: neither a classic nor a consumer group has this id"),
                )),
                other => other.map(Described::Consumer),
            };
            found.insert((*name).to_owned(), result);
        }
    }

    // Every topic any member names, for partition counts.
    let mut names = BTreeSet::new();
    for described in found.values().flatten() {
        topic_names(described, &mut names);
    }
    let metadata = Arc::new(if names.is_empty() {
        ClusterMetadata::default()
    } else {
        topics.get(client, names, deadline).await?
    });

    Ok(chunk
        .into_iter()
        .map(|(name, _)| {
            let result = found.remove(&name);
            Found { name, result, metadata: metadata.clone() }
        })
        .collect())
}

/// The topics a described group's members subscribe to, claim or are assigned.
pub(super) fn topic_names(described: &Described, names: &mut BTreeSet<String>) {
    match described {
        Described::Classic(g) if g.group.protocol_type == "consumer" => {
            let lenient = DecodeOptions::new().lenient(true);
            for m in &g.group.members {
                if let Ok(sub) = SubscriptionView::decode_with(&m.member_metadata, lenient) {
                    names.extend(sub.topics().iter().map(str::to_owned));
                    names.extend(sub.owned_partitions().iter().map(|t| t.topic.to_owned()));
                }
                if let Ok(asg) = AssignmentView::decode_with(&m.member_assignment, lenient) {
                    names.extend(asg.assigned_partitions().iter().map(|t| t.topic.to_owned()));
                }
            }
        }
        Described::Classic(_) => {}
        Described::Consumer(g) => {
            for m in &g.group.members {
                names.extend(m.subscribed_topics.iter().cloned());
                for a in m.assignment.iter().chain(&m.target_assignment) {
                    names.insert(a.topic.clone());
                }
            }
        }
    }
}
