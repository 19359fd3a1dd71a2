//! `kcp pcap`: the JoinGroup/SyncGroup messages of a capture, one JSON object per line, or the
//! group's story by generation (`--format text`). The summary of what was skipped goes to stderr
//! as one last JSON line `{"summary": {...}}`, so stdout holds only messages.

use std::collections::{BTreeMap, HashMap};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use kafka_consumer_protocol::group_api::ErrorCode;
use kafka_consumer_protocol::pcap::{
    GroupBody, GroupMessage, GroupReader, MessageDirection, Payload, ReaderOptions, Summary,
};
use kafka_consumer_protocol::TopicPartitionsList;
use serde_json::{json, Value};

use crate::input::to_hex;
use crate::shapes::{assignment_json, decode_error_json, subscription_json};
use crate::{finish, CliError, Format};

/// Arguments of `kcp pcap`.
#[derive(clap::Args, Debug)]
pub struct PcapArgs {
    /// A pcap or pcapng capture.
    pub capture: PathBuf,
    /// Broker port (repeatable); without it Kafka connections are found from the traffic.
    #[arg(long = "port", value_name = "P")]
    pub ports: Vec<u16>,
    /// Only messages of this group.
    #[arg(long, value_name = "G")]
    pub group: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "json")]
    pub format: Format,
}

/// JSON of an embedded payload: the decode shape, `{"hex"}` for other protocol types,
/// `{"error", "hex"}` when the codec refuses it, `null` when it is empty.
pub fn payload_json(p: &Payload) -> Value {
    match p {
        Payload::Subscription(s) => subscription_json(&s.view()),
        Payload::Assignment(a) => assignment_json(&a.view()),
        Payload::Invalid { bytes, error } => {
            let mut v = decode_error_json(error);
            v["hex"] = Value::String(to_hex(bytes));
            v
        }
        Payload::Raw(bytes) => json!({"hex": to_hex(bytes)}),
        Payload::Empty => Value::Null,
    }
}

/// RFC 3339 UTC with microseconds.
pub fn rfc3339(t: Duration) -> String {
    let secs = t.as_secs() as i64;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:06}Z", rem / 3600, rem % 3600 / 60, rem % 60, t.subsec_micros())
}

/// The JSON line of one message.
pub fn message_json(m: &GroupMessage) -> Value {
    let f = &m.frame;
    let mut v = json!({
        "ts": rfc3339(m.timestamp),
        "src": m.src.to_string(),
        "dst": m.dst.to_string(),
        "api": f.body.api(),
        "direction": match f.direction { MessageDirection::Request => "request", MessageDirection::Response => "response" },
        "api_version": f.api_version,
        "correlation_id": f.correlation_id,
        "client_id": f.client_id,
    });
    let o = v.as_object_mut().expect("object");
    let extra = match &f.body {
        GroupBody::JoinGroupRequest(b) => json!({
            "group_id": b.group_id, "member_id": b.member_id,
            // JoinGroup requests carry no generation: -1 as in cli.md, for a uniform shape.
            "generation_id": -1,
            "group_instance_id": b.group_instance_id, "protocol_type": b.protocol_type,
            "session_timeout_ms": b.session_timeout_ms, "rebalance_timeout_ms": b.rebalance_timeout_ms,
            "reason": b.reason,
            "protocols": b.protocols.iter().map(|p| json!({"name": p.name, "metadata": payload_json(&p.metadata)})).collect::<Vec<_>>(),
        }),
        GroupBody::JoinGroupResponse(b) => json!({
            "group_id": b.group_id, "member_id": b.member_id, "generation_id": b.generation_id,
            "error_code": b.error.0, "protocol_type": b.protocol_type, "protocol_name": b.protocol_name,
            "leader": b.leader, "skip_assignment": b.skip_assignment,
            "members": b.members.iter().map(|m| json!({"member_id": m.member_id,
                "group_instance_id": m.group_instance_id, "metadata": payload_json(&m.metadata)})).collect::<Vec<_>>(),
        }),
        GroupBody::SyncGroupRequest(b) => json!({
            "group_id": b.group_id, "member_id": b.member_id, "generation_id": b.generation_id,
            "group_instance_id": b.group_instance_id, "protocol_type": b.protocol_type, "protocol_name": b.protocol_name,
            "assignments": b.assignments.iter().map(|a| json!({"member_id": a.member_id,
                "assignment": payload_json(&a.assignment)})).collect::<Vec<_>>(),
        }),
        GroupBody::SyncGroupResponse(b) => json!({
            "group_id": b.group_id, "member_id": b.member_id, "generation_id": b.generation_id,
            "error_code": b.error.0, "protocol_type": b.protocol_type, "protocol_name": b.protocol_name,
            "assignment": payload_json(&b.assignment),
        }),
    };
    if let Value::Object(extra) = extra {
        o.extend(extra);
    }
    v
}

/// The summary as JSON.
pub fn summary_json(s: &Summary) -> Value {
    let f = &s.frames;
    json!({"summary": {
        "format": s.format, "packets": s.packets, "tcp_segments": s.tcp_segments,
        "messages": s.messages,
        "tcp_connections": s.tcp_connections, "kafka_connections": s.kafka_connections,
        "other_connections": s.other_connections, "connections_over_limit": s.connections_over_limit,
        "non_tcp_packets": s.non_tcp_packets, "ip_fragments": s.ip_fragments,
        "malformed_packets": s.malformed_packets, "unsupported_link_type_packets": s.unsupported_link_type_packets,
        "truncated_segments": s.truncated_segments, "retransmitted_segments": s.retransmitted_segments,
        "out_of_order_segments": s.out_of_order_segments, "stream_overflows": s.stream_overflows,
        "stream_gaps": s.stream_gaps, "streams_dropped_for_memory": s.streams_dropped_for_memory,
        "kafka_requests": f.requests, "kafka_responses": f.responses,
        "unmatched_responses": f.unmatched_responses, "unanswered_requests": f.unanswered_requests,
        "undecodable_group_frames": f.undecodable_frames, "oversized_group_frames": f.oversized_frames,
        "payload_errors": f.payload_errors, "resyncs": f.resyncs, "desyncs": f.desyncs,
        "skipped_bytes": f.skipped_bytes, "incomplete_frames": f.incomplete_frames,
        "truncated_capture": s.truncated_capture, "capture_error": s.capture_error,
    }})
}

fn partitions_text(list: TopicPartitionsList<'_>) -> String {
    let parts: Vec<String> = list
        .iter()
        .map(|g| {
            let ps: Vec<String> = g.partitions.iter().map(|p| p.to_string()).collect();
            format!("{} {}", g.topic, ps.join(","))
        })
        .collect();
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join("; ")
    }
}

fn payload_text(p: &Payload) -> String {
    match p {
        Payload::Subscription(s) => {
            let v = s.view();
            format!(
                "v{} topics {}; owned {}; generation {}; rack {}",
                v.version(),
                v.topics().iter().collect::<Vec<_>>().join(", "),
                partitions_text(v.owned_partitions()),
                v.generation_id(),
                v.rack_id().map_or_else(|| "-".to_owned(), |r| format!("{r:?}"))
            )
        }
        Payload::Assignment(a) => {
            format!("v{} {}", a.view().version(), partitions_text(a.view().assigned_partitions()))
        }
        Payload::Invalid { error, .. } => format!("undecodable: {error}"),
        Payload::Raw(b) => format!("{} bytes (not a consumer payload)", b.len()),
        Payload::Empty => "empty".into(),
    }
}

#[derive(Default)]
struct MemberStory {
    client_id: Option<String>,
    instance: Option<String>,
    offered: Vec<String>,
    subscription: Option<String>,
    assignment: Option<String>,
}

#[derive(Default)]
struct Generation {
    protocol: Option<String>,
    leader: String,
    members: BTreeMap<String, MemberStory>,
}

#[derive(Default)]
struct GroupStory {
    generations: BTreeMap<i32, Generation>,
    events: Vec<String>,
}

/// What a JoinGroup request said: client id, group instance id, offered protocols.
type JoinSeen = (Option<String>, Option<String>, Vec<String>);

/// Collects messages into per-group stories.
#[derive(Default)]
struct Story {
    groups: BTreeMap<String, GroupStory>,
    /// JoinGroup requests by (client, broker, correlation id).
    joins: HashMap<(String, String, i32), JoinSeen>,
}

impl Story {
    fn add(&mut self, m: &GroupMessage) {
        let f = &m.frame;
        let group = self.groups.entry(f.body.group_id().to_string()).or_default();
        match &f.body {
            GroupBody::JoinGroupRequest(b) => {
                self.joins.insert(
                    (m.src.to_string(), m.dst.to_string(), f.correlation_id),
                    (
                        f.client_id.clone(),
                        b.group_instance_id.clone(),
                        b.protocols.iter().map(|p| p.name.clone()).collect(),
                    ),
                );
            }
            GroupBody::JoinGroupResponse(b) => {
                let join = self.joins.remove(&(m.dst.to_string(), m.src.to_string(), f.correlation_id));
                if b.error != ErrorCode::NONE {
                    group.events.push(format!(
                        "{} JoinGroup by {} (client {}): error {}{}",
                        rfc3339(m.timestamp),
                        if b.member_id.is_empty() { "a new member" } else { &b.member_id },
                        f.client_id.as_deref().unwrap_or("-"),
                        b.error.0,
                        if b.error == ErrorCode::MEMBER_ID_REQUIRED {
                            " MEMBER_ID_REQUIRED, member id given"
                        } else {
                            ""
                        }
                    ));
                    return;
                }
                let gen = group.generations.entry(b.generation_id).or_default();
                gen.protocol = b.protocol_name.clone();
                gen.leader = b.leader.clone();
                let member = gen.members.entry(b.member_id.clone()).or_default();
                member.client_id = f.client_id.clone();
                if let Some((_, instance, offered)) = join {
                    member.instance = instance;
                    member.offered = offered;
                }
                for mm in &b.members {
                    let member = gen.members.entry(mm.member_id.clone()).or_default();
                    member.subscription = Some(payload_text(&mm.metadata));
                    if member.instance.is_none() {
                        member.instance = mm.group_instance_id.clone();
                    }
                }
            }
            GroupBody::SyncGroupRequest(b) => {
                let gen = group.generations.entry(b.generation_id).or_default();
                for a in &b.assignments {
                    let member = gen.members.entry(a.member_id.clone()).or_default();
                    member.assignment.get_or_insert_with(|| payload_text(&a.assignment));
                }
            }
            GroupBody::SyncGroupResponse(b) => {
                if b.error != ErrorCode::NONE {
                    group.events.push(format!(
                        "{} SyncGroup of {} in generation {}: error {}",
                        rfc3339(m.timestamp),
                        b.member_id,
                        b.generation_id,
                        b.error.0
                    ));
                    return;
                }
                let gen = group.generations.entry(b.generation_id).or_default();
                let member = gen.members.entry(b.member_id.clone()).or_default();
                member.assignment = Some(payload_text(&b.assignment));
                if member.client_id.is_none() {
                    member.client_id = f.client_id.clone();
                }
            }
        }
    }

    fn render(&self) -> String {
        let mut out = String::new();
        for (group_id, g) in &self.groups {
            out.push_str(&format!("group {group_id}\n"));
            for (id, gen) in &g.generations {
                let leader_client = gen.members.get(&gen.leader).and_then(|m| m.client_id.clone());
                out.push_str(&format!(
                    "  generation {id}: protocol {}, leader {} (client {}), {} members\n",
                    gen.protocol.as_deref().unwrap_or("?"),
                    if gen.leader.is_empty() { "?" } else { &gen.leader },
                    leader_client.as_deref().unwrap_or("?"),
                    gen.members.len()
                ));
                for (member_id, m) in &gen.members {
                    out.push_str(&format!(
                        "    member {member_id} (client {}, instance {}) offered [{}]\n",
                        m.client_id.as_deref().unwrap_or("?"),
                        m.instance.as_deref().unwrap_or("-"),
                        m.offered.join(", ")
                    ));
                    if let Some(s) = &m.subscription {
                        out.push_str(&format!("      subscription: {s}\n"));
                    }
                    out.push_str(&format!("      assignment: {}\n", m.assignment.as_deref().unwrap_or("(not seen)")));
                }
            }
            for e in &g.events {
                out.push_str(&format!("  {e}\n"));
            }
        }
        out
    }
}

/// Runs `kcp pcap`.
pub fn run_pcap(args: &PcapArgs) -> ExitCode {
    let file = match std::fs::File::open(&args.capture) {
        Ok(f) => f,
        Err(e) => {
            return finish(Err(CliError::input(format!("{}: {e}", args.capture.display()))), args.format);
        }
    };
    let options = ReaderOptions { ports: args.ports.clone(), ..ReaderOptions::default() };
    let mut reader = match GroupReader::new(std::io::BufReader::new(file), options) {
        Ok(r) => r,
        Err(e) => return finish(Err(CliError::input(format!("{}: {e}", args.capture.display()))), args.format),
    };
    let total = std::fs::metadata(&args.capture).map(|m| m.len()).unwrap_or(0);
    let progress = std::io::stderr().is_terminal();
    let mut last = Instant::now();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut story = Story::default();
    let mut shown = 0u64;
    while let Some(m) = reader.next() {
        if args.group.as_deref().is_some_and(|g| g != m.frame.body.group_id()) {
            continue;
        }
        shown += 1;
        match args.format {
            Format::Json => {
                let line = serde_json::to_string(&message_json(&m)).expect("JSON values serialize");
                if writeln!(out, "{line}").is_err() {
                    // A closed pipe (e.g. `| head`): stop quietly.
                    return ExitCode::SUCCESS;
                }
            }
            Format::Text => story.add(&m),
        }
        if progress && last.elapsed() > Duration::from_millis(500) {
            last = Instant::now();
            eprint!("\rkcp pcap: {} of {} bytes read, {shown} messages", reader.bytes_read(), total);
        }
    }
    if progress {
        eprint!("\r\x1b[K");
    }
    if args.format == Format::Text {
        let _ = write!(out, "{}", story.render());
    }
    let _ = out.flush();
    eprintln!("{}", serde_json::to_string(&summary_json(reader.summary())).expect("JSON values serialize"));
    ExitCode::SUCCESS
}
