//! `kcp pcap`: the JoinGroup/SyncGroup messages of a capture, one JSON object per line, or the
//! group's story by generation (`--format text`). The summary of what was skipped goes to stderr
//! as one last JSON line `{"summary": {...}}`, so stdout holds only messages.

use std::collections::{BTreeMap, HashMap};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use kafka_consumer_protocol::codec::TopicPartitionsList;
use kafka_consumer_protocol::group_api::{ErrorCode, JoinGroupMember};
use kafka_consumer_protocol::pcap::{
    CaptureSummary, GroupBody, GroupMessage, GroupReader, MessageDirection, Payload, ReaderOptions,
};
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use serde_json::{json, Value};

use super::input::to_hex;
use super::out::{note, note_raw};
use super::shapes::{decode_error_json, AssignmentJson, SubscriptionJson};
use super::text::clean;
use super::{CliError, Format, Out};

/// Text mode holds the story of the groups until the end of the capture; past this many bytes
/// of story it writes out what it has and starts afresh (a group's story then continues in a
/// later section), so memory stays bounded whatever the capture holds.
pub const STORY_BUDGET: usize = 64 << 20;

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
/// `{"error", "hex"}` when the codec refuses it, `null` when it is empty. Serialized straight
/// into the output.
pub struct PayloadJson<'a>(pub &'a Payload);

impl Serialize for PayloadJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Payload::Subscription(sub) => SubscriptionJson { view: &sub.view(), notes: &[] }.serialize(s),
            Payload::Assignment(a) => AssignmentJson { view: &a.view(), notes: &[] }.serialize(s),
            Payload::Invalid { bytes, error } => {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("error", &decode_error_json(error)["error"])?;
                m.serialize_entry("hex", &to_hex(bytes))?;
                m.end()
            }
            Payload::Raw(bytes) => {
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry("hex", &to_hex(bytes))?;
                m.end()
            }
            Payload::Empty => s.serialize_none(),
        }
    }
}

/// A sequence serialized from an iterator made on demand (members, assignments, protocols).
struct Seq<F>(F);

impl<F, I> Serialize for Seq<F>
where
    F: Fn() -> I,
    I: Iterator,
    I::Item: Serialize,
{
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq((self.0)())
    }
}

/// RFC 3339 UTC with milliseconds (`2026-01-02T03:04:05.123Z`): what `watch`, `history` and
/// `serve` print.
pub fn rfc3339_ms(t: Duration) -> String {
    let micros = rfc3339(t);
    // `...05.123456Z` -> `...05.123Z`
    format!("{}Z", &micros[..micros.len().saturating_sub(4)])
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

/// The JSON line of one message, serialized straight into the output: a JoinGroup response
/// with a million members is written member by member, never held as one JSON document.
pub struct MessageJson<'a>(pub &'a GroupMessage);

impl Serialize for MessageJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let m = self.0;
        let f = &m.frame;
        let mut o = s.serialize_map(None)?;
        o.serialize_entry("ts", &rfc3339(m.timestamp))?;
        o.serialize_entry("src", &m.src.to_string())?;
        o.serialize_entry("dst", &m.dst.to_string())?;
        o.serialize_entry("api", f.body.api())?;
        let direction = match f.direction {
            MessageDirection::Request => "request",
            MessageDirection::Response => "response",
        };
        o.serialize_entry("direction", direction)?;
        o.serialize_entry("api_version", &f.api_version)?;
        o.serialize_entry("correlation_id", &f.correlation_id)?;
        o.serialize_entry("client_id", &f.client_id)?;
        match &f.body {
            GroupBody::JoinGroupRequest(b) => {
                o.serialize_entry("group_id", &b.group_id)?;
                o.serialize_entry("member_id", &b.member_id)?;
                // JoinGroup requests carry no generation: -1 as in cli.md, for a uniform shape.
                o.serialize_entry("generation_id", &-1)?;
                o.serialize_entry("group_instance_id", &b.group_instance_id)?;
                o.serialize_entry("protocol_type", &b.protocol_type)?;
                o.serialize_entry("session_timeout_ms", &b.session_timeout_ms)?;
                o.serialize_entry("rebalance_timeout_ms", &b.rebalance_timeout_ms)?;
                o.serialize_entry("reason", &b.reason)?;
                o.serialize_entry(
                    "protocols",
                    &Seq(|| {
                        b.protocols.iter().map(|p| Pair(("name", &p.name), ("metadata", PayloadJson(&p.metadata))))
                    }),
                )?;
            }
            GroupBody::JoinGroupResponse(b) => {
                o.serialize_entry("group_id", &b.group_id)?;
                o.serialize_entry("member_id", &b.member_id)?;
                o.serialize_entry("generation_id", &b.generation_id)?;
                o.serialize_entry("error_code", &b.error.0)?;
                o.serialize_entry("protocol_type", &b.protocol_type)?;
                o.serialize_entry("protocol_name", &b.protocol_name)?;
                o.serialize_entry("leader", &b.leader)?;
                o.serialize_entry("skip_assignment", &b.skip_assignment)?;
                // Each member is decoded from the frame as it is written (JoinGroupResponseBody::members).
                o.serialize_entry("members", &Seq(|| b.members().map(JoinMemberJson)))?;
            }
            GroupBody::SyncGroupRequest(b) => {
                o.serialize_entry("group_id", &b.group_id)?;
                o.serialize_entry("member_id", &b.member_id)?;
                o.serialize_entry("generation_id", &b.generation_id)?;
                o.serialize_entry("group_instance_id", &b.group_instance_id)?;
                o.serialize_entry("protocol_type", &b.protocol_type)?;
                o.serialize_entry("protocol_name", &b.protocol_name)?;
                o.serialize_entry(
                    "assignments",
                    &Seq(|| {
                        b.assignments
                            .iter()
                            .map(|a| Pair(("member_id", &a.member_id), ("assignment", PayloadJson(&a.assignment))))
                    }),
                )?;
            }
            GroupBody::SyncGroupResponse(b) => {
                o.serialize_entry("group_id", &b.group_id)?;
                o.serialize_entry("member_id", &b.member_id)?;
                o.serialize_entry("generation_id", &b.generation_id)?;
                o.serialize_entry("error_code", &b.response.error.0)?;
                o.serialize_entry("protocol_type", &b.response.protocol_type)?;
                o.serialize_entry("protocol_name", &b.response.protocol_name)?;
                o.serialize_entry("assignment", &PayloadJson(&b.response.assignment))?;
            }
        }
        o.end()
    }
}

/// `{"a": .., "b": ..}` from two entries.
struct Pair<'a, A, B>((&'a str, A), (&'a str, B));

impl<A: Serialize, B: Serialize> Serialize for Pair<'_, A, B> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry(self.0 .0, &self.0 .1)?;
        m.serialize_entry(self.1 .0, &self.1 .1)?;
        m.end()
    }
}

struct JoinMemberJson(JoinGroupMember<Payload>);

impl Serialize for JoinMemberJson {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(3))?;
        m.serialize_entry("member_id", &self.0.member_id)?;
        m.serialize_entry("group_instance_id", &self.0.group_instance_id)?;
        m.serialize_entry("metadata", &PayloadJson(&self.0.metadata))?;
        m.end()
    }
}

/// The summary as JSON.
pub fn summary_json(s: &CaptureSummary) -> Value {
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
            format!("{} {}", clean(g.topic), ps.join(","))
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
                v.topics().iter().map(clean).collect::<Vec<_>>().join(", "),
                partitions_text(v.owned_partitions()),
                v.generation_id(),
                v.rack_id().map_or_else(|| "-".to_owned(), |r| format!("\"{}\"", clean(r)))
            )
        }
        Payload::Assignment(a) => {
            format!("v{} {}", a.view().version(), partitions_text(a.view().assigned_partitions()))
        }
        Payload::Invalid { error, .. } => format!("undecodable: {}", clean(&error.to_string())),
        Payload::Raw(b) => format!("{} bytes (not a consumer payload)", b.len()),
        Payload::Empty => "empty".into(),
    }
}

/// An input string for the story: escaped (see [`clean`]).
fn shown(s: &str) -> String {
    clean(s).into_owned()
}

fn shown_opt(s: &Option<String>) -> Option<String> {
    s.as_deref().map(shown)
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

/// JoinGroup requests remembered while waiting for their responses.
const MAX_JOINS: usize = 65_536;

/// Collects messages into per-group stories. Every string from the capture is stored escaped,
/// so the story can be printed as is.
#[derive(Default)]
struct Story {
    groups: BTreeMap<String, GroupStory>,
    /// JoinGroup requests by (client, broker, correlation id).
    joins: HashMap<(String, String, i32), JoinSeen>,
    /// About how many bytes the story holds.
    bytes: usize,
}

impl Story {
    fn add(&mut self, m: &GroupMessage) {
        let f = &m.frame;
        let group = self.groups.entry(shown(f.body.group_id())).or_default();
        let mut added = 64 + f.body.group_id().len();
        match &f.body {
            GroupBody::JoinGroupRequest(b) => {
                if self.joins.len() >= MAX_JOINS {
                    // Requests never answered: forget them rather than grow without end.
                    self.joins.clear();
                }
                let offered: Vec<String> = b.protocols.iter().map(|p| shown(&p.name)).collect();
                added += offered.iter().map(|p| p.len() + 24).sum::<usize>();
                self.joins.insert(
                    (m.src.to_string(), m.dst.to_string(), f.correlation_id),
                    (shown_opt(&f.client_id), shown_opt(&b.group_instance_id), offered),
                );
            }
            GroupBody::JoinGroupResponse(b) => {
                let join = self.joins.remove(&(m.dst.to_string(), m.src.to_string(), f.correlation_id));
                if b.error != ErrorCode::NONE {
                    let event = format!(
                        "{} JoinGroup by {} (client {}): error {}{}",
                        rfc3339(m.timestamp),
                        if b.member_id.is_empty() { "a new member".to_owned() } else { shown(&b.member_id) },
                        shown_opt(&f.client_id).as_deref().unwrap_or("-"),
                        b.error.0,
                        if b.error == ErrorCode::MEMBER_ID_REQUIRED {
                            " MEMBER_ID_REQUIRED, member id given"
                        } else {
                            ""
                        }
                    );
                    added += event.len();
                    group.events.push(event);
                    self.bytes += added;
                    return;
                }
                let gen = group.generations.entry(b.generation_id).or_default();
                gen.protocol = shown_opt(&b.protocol_name);
                gen.leader = shown(&b.leader);
                let member = gen.members.entry(shown(&b.member_id)).or_default();
                member.client_id = shown_opt(&f.client_id);
                if let Some((_, instance, offered)) = join {
                    member.instance = instance;
                    member.offered = offered;
                }
                for mm in b.members() {
                    let member = gen.members.entry(shown(&mm.member_id)).or_default();
                    let text = payload_text(&mm.metadata);
                    added += text.len() + mm.member_id.len() + 160;
                    member.subscription = Some(text);
                    if member.instance.is_none() {
                        member.instance = shown_opt(&mm.group_instance_id);
                    }
                }
            }
            GroupBody::SyncGroupRequest(b) => {
                let gen = group.generations.entry(b.generation_id).or_default();
                for a in &b.assignments {
                    let member = gen.members.entry(shown(&a.member_id)).or_default();
                    if member.assignment.is_none() {
                        let text = payload_text(&a.assignment);
                        added += text.len() + a.member_id.len() + 160;
                        member.assignment = Some(text);
                    }
                }
            }
            GroupBody::SyncGroupResponse(b) => {
                if b.response.error != ErrorCode::NONE {
                    let event = format!(
                        "{} SyncGroup of {} in generation {}: error {}",
                        rfc3339(m.timestamp),
                        shown(&b.member_id),
                        b.generation_id,
                        b.response.error.0
                    );
                    added += event.len();
                    group.events.push(event);
                    self.bytes += added;
                    return;
                }
                let gen = group.generations.entry(b.generation_id).or_default();
                let member = gen.members.entry(shown(&b.member_id)).or_default();
                let text = payload_text(&b.response.assignment);
                added += text.len() + b.member_id.len() + 160;
                member.assignment = Some(text);
                if member.client_id.is_none() {
                    member.client_id = shown_opt(&f.client_id);
                }
            }
        }
        self.bytes += added;
    }

    /// Writes the story so far.
    fn render(&self, w: &mut dyn Write) -> std::io::Result<()> {
        for (group_id, g) in &self.groups {
            writeln!(w, "group {group_id}")?;
            for (id, gen) in &g.generations {
                let leader_client = gen.members.get(&gen.leader).and_then(|m| m.client_id.clone());
                writeln!(
                    w,
                    "  generation {id}: protocol {}, leader {} (client {}), {} members",
                    gen.protocol.as_deref().unwrap_or("?"),
                    if gen.leader.is_empty() { "?" } else { &gen.leader },
                    leader_client.as_deref().unwrap_or("?"),
                    gen.members.len()
                )?;
                for (member_id, m) in &gen.members {
                    writeln!(
                        w,
                        "    member {member_id} (client {}, instance {}) offered [{}]",
                        m.client_id.as_deref().unwrap_or("?"),
                        m.instance.as_deref().unwrap_or("-"),
                        m.offered.join(", ")
                    )?;
                    if let Some(s) = &m.subscription {
                        writeln!(w, "      subscription: {s}")?;
                    }
                    writeln!(w, "      assignment: {}", m.assignment.as_deref().unwrap_or("(not seen)"))?;
                }
            }
            for e in &g.events {
                writeln!(w, "  {e}")?;
            }
        }
        Ok(())
    }

    /// Writes out the story so far and forgets it when it is over its budget.
    fn spill_if_over(&mut self, w: &mut dyn Write) -> std::io::Result<()> {
        if self.bytes > STORY_BUDGET {
            self.render(w)?;
            writeln!(w, "(story continued: the text mode's {} MiB budget was reached)", STORY_BUDGET >> 20)?;
            let joins = std::mem::take(&mut self.joins);
            *self = Story { joins, ..Story::default() };
        }
        Ok(())
    }
}

/// Runs `kcp pcap`.
pub fn run_pcap(args: &PcapArgs, out: &mut Out) -> Result<(), CliError> {
    let file =
        std::fs::File::open(&args.capture).map_err(|e| CliError::input(format!("{}: {e}", args.capture.display())))?;
    let options = ReaderOptions { ports: args.ports.clone(), ..ReaderOptions::default() };
    let mut reader = GroupReader::new(std::io::BufReader::new(file), options)
        .map_err(|e| CliError::input(format!("{}: {e}", args.capture.display())))?;
    let total = std::fs::metadata(&args.capture).map(|m| m.len()).unwrap_or(0);
    let progress = std::io::stderr().is_terminal();
    let mut last = Instant::now();
    let mut story = Story::default();
    let mut shown = 0u64;
    let mut others = 0u64;
    while let Some(m) = reader.next() {
        if args.group.as_deref().is_some_and(|g| g != m.frame.body.group_id()) {
            others += 1;
            continue;
        }
        shown += 1;
        match args.format {
            Format::Json => out.json_line(&MessageJson(&m))?,
            Format::Text => {
                story.add(&m);
                story.spill_if_over(out.writer()).map_err(|e| CliError::Output(e.into()))?;
            }
        }
        if progress && last.elapsed() > Duration::from_millis(500) {
            last = Instant::now();
            note_raw(&format!("\rkcp pcap: {} of {} bytes read, {shown} messages", reader.bytes_read(), total));
        }
    }
    if progress {
        note_raw("\r\x1b[K");
    }
    if args.format == Format::Text {
        story.render(out.writer()).map_err(|e| CliError::Output(e.into()))?;
    }
    out.flush()?;
    let summary = reader.summary();
    if let Some(group) = &args.group {
        if shown == 0 {
            note(&format!(
                "kcp: no message of group {} in the capture ({others} group messages of other groups)",
                super::text::quoted(group, 200)
            ));
        }
    }
    if let Some(error) = &summary.capture_error {
        note(&format!("kcp: reading stopped early, the rest of the capture is lost: {}", clean(error)));
    }
    note(&serde_json::to_string(&summary_json(summary)).expect("JSON values serialize"));
    if summary.capture_error.is_some() {
        return Err(CliError::Reported);
    }
    Ok(())
}
