//! `kcp group history`: what happened to groups, read from `__consumer_offsets`: live from the
//! partition leader (`--bootstrap-server`/`--command-config`: Fetch from `--from` to the high
//! watermark read at the start, or on with `--follow`), or offline from segment files copied off
//! a broker (`--log-dir` a partition directory, or `--file` segments). Both go through the same
//! decoder (`offsets_log::SegmentReader`) and give the same output.
//!
//! `--records` prints every record as a JSON line (Kafka's schema field names, the embedded
//! subscriptions and assignments in `kcp decode`'s shape); without it, the history of each group
//! rebuilt by `offsets_log::history`. Reading problems (a bad checksum, a truncated file, a
//! record that does not decode) never stop the run: they are printed where they happen (as
//! `{"error": ...}`/`{"warning": ...}` lines, or in `read_problems`) and counted on stderr.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};
use std::time::Duration;

use bytes::Bytes;
use kafka_consumer_protocol::assignor::ClusterMetadata;
use kafka_consumer_protocol::client::{
    Client, ClientError, Deadline, ErrorKind, FetchOptions, IsolationLevel, OffsetSpec, PartitionFetcher,
};
use kafka_consumer_protocol::group_api::DescribedGroupMember;
use kafka_consumer_protocol::inspect::{inspect_classic, ClassicGroup, Diagnostic, DiagnosticKind};
use kafka_consumer_protocol::offsets_log::history::{
    At, ConsumerGroupEvent, Generation, GenerationMember, ShareGroupEvent, ShareStateTopic,
};
use kafka_consumer_protocol::offsets_log::json::{hex, Embedded, KeyJson, ValueJson};
use kafka_consumer_protocol::offsets_log::{
    partition_for_group, CoordinatorRecord, GroupHistory, HistoryBuilder, Limits, LogError, RecordKey, RecordValue,
    SegmentReader, TopicIdPartitions, Uuid,
};
use kafka_consumer_protocol::{AssignmentView, SubscriptionView, TopicPartitions};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{json, Map, Value};

use super::super::out::{note, Out};
use super::super::shapes::{assignment_json, subscription_json};
use super::super::{CliError, Format};
use super::json::diagnostic_json;
use super::ConnectionArgs;

/// The topic the group coordinator writes.
const OFFSETS_TOPIC: &str = "__consumer_offsets";

/// `kcp group history`.
#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("source").required(true).multiple(true)
    .args(["log_dir", "file", "bootstrap_server", "command_config"])))]
pub struct HistoryArgs {
    /// A `__consumer_offsets-N` directory copied off a broker: every `*.log` in it, in order.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["file", "bootstrap_server", "command_config"])]
    pub log_dir: Option<PathBuf>,
    /// A segment file (repeat for several, oldest first).
    #[arg(long, value_name = "SEGMENT", conflicts_with_all = ["bootstrap_server", "command_config"])]
    pub file: Vec<PathBuf>,
    /// Live: the cluster to read `__consumer_offsets` from (--timeout-ms bounds each request).
    #[command(flatten)]
    pub connection: ConnectionArgs,
    /// The group to report.
    #[arg(long, value_name = "G", required_unless_present = "all_groups", conflicts_with = "all_groups")]
    pub group: Option<String>,
    /// Report every group found (live: of every partition, or of --partition).
    #[arg(long)]
    pub all_groups: bool,
    /// Live: the partition of `__consumer_offsets` to read (default: the group's, from its id
    /// and the topic's partition count; with --all-groups, every partition).
    #[arg(long, value_name = "N", conflicts_with_all = ["log_dir", "file"])]
    pub partition: Option<i32>,
    /// Live: where to start: an offset, or the first record at or after a time
    /// (YYYY-MM-DDTHH:MM:SS[Z], UTC, or YYYY-MM-DD: its midnight UTC; found with ListOffsets).
    /// Default: the log start.
    // The brackets are the --help text's, not a rustdoc link.
    #[allow(rustdoc::broken_intra_doc_links)]
    #[arg(long, value_name = "OFFSET|DATETIME", value_parser = parse_from, conflicts_with_all = ["log_dir", "file"])]
    pub from: Option<From>,
    /// Live: after the end, keep reading new records until --duration-s or SIGINT/SIGTERM
    /// (with --all-groups: of every partition, polled in turn).
    #[arg(long, conflicts_with_all = ["log_dir", "file"])]
    pub follow: bool,
    /// Live: the most bytes of records one fetch asks for (a batch larger than that still comes
    /// whole); the memory of a live read is bounded by it.
    #[arg(long, value_name = "N", default_value_t = FETCH_MAX_BYTES,
        value_parser = clap::value_parser!(i32).range(1..=i64::from(FETCH_MAX_BYTES_CAP)),
        conflicts_with_all = ["log_dir", "file"])]
    pub fetch_max_bytes: i32,
    /// With --follow: stop after this many seconds.
    #[arg(long, value_name = "N", requires = "follow")]
    pub duration_s: Option<u64>,
    /// Print every record as a JSON line instead of the history.
    #[arg(long, conflicts_with = "format")]
    pub records: bool,
    /// Also draw the group's generations as an SVG timeline (the simulator's renderer): one lane
    /// per partition coloured by the member assigned it, a band per generation.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["records", "all_groups"])]
    pub svg: Option<PathBuf>,
    /// A pause longer than this between two commits of a partition (by their commitTimestamp)
    /// is reported as a gap.
    #[arg(long, value_name = "N", default_value_t = 60, value_parser = clap::value_parser!(u32).range(1..))]
    pub commit_gap_s: u32,
    /// Output format of the history.
    #[arg(long, value_enum, default_value = "json")]
    pub format: Format,
}

impl HistoryArgs {
    /// Whether the records come from files (no cluster contacted).
    pub fn offline(&self) -> bool {
        self.log_dir.is_some() || !self.file.is_empty()
    }
}

/// Where a live read starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum From {
    /// An offset of the partition.
    Offset(i64),
    /// The first record at or after this time (milliseconds since the epoch).
    Time(i64),
}

fn parse_from(text: &str) -> Result<From, String> {
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return text.parse().map(From::Offset).map_err(|_| format!("'{text}': offset out of range"));
    }
    // A date alone is that day's midnight, UTC.
    let b = text.as_bytes();
    if b.len() == 10 && b[4] == b'-' && b[7] == b'-' {
        return super::reset_offsets::parse_datetime_ms(&format!("{text}T00:00:00Z")).map(From::Time);
    }
    super::reset_offsets::parse_datetime_ms(text).map(From::Time)
}

/// A record or commit timestamp (milliseconds since the epoch) as ISO-8601 UTC with
/// milliseconds (`2026-12-07T18:04:05.123Z`); a negative one (no time) as is.
fn iso(ms: i64) -> String {
    match u64::try_from(ms) {
        Ok(ms) => crate::pcap::rfc3339_ms(Duration::from_millis(ms)),
        Err(_) => ms.to_string(),
    }
}

/// A time span for people: milliseconds below a second, else seconds with one decimal below a
/// minute, else whole seconds.
fn span(ms: i64) -> String {
    match ms {
        ..=999 => format!("{ms} ms"),
        1_000..=59_999 => format!("{:.1} s", ms as f64 / 1_000.0),
        _ => format!("{} s", ms / 1_000),
    }
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

/// One `--records` line, serialized straight from the decoded record (building a `Value` per
/// record cost most of the run's time).
struct RecordLine<'r, 'a> {
    partition: Option<i32>,
    offset: i64,
    timestamp: i64,
    record: &'r CoordinatorRecord<'a>,
}

impl Serialize for RecordLine<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(5))?;
        m.serialize_entry("partition", &self.partition)?;
        m.serialize_entry("offset", &self.offset)?;
        m.serialize_entry("timestamp", &self.timestamp)?;
        m.serialize_entry("key", &KeyJson(&self.record.key))?;
        m.serialize_entry(
            "value",
            &self.record.value.as_ref().map(|(version, value)| ValueJson { version: *version, value, embedded }),
        )?;
        m.end()
    }
}

/// Where bytes came from: a file, or a fetch of a partition (live). Problems name it.
#[derive(Clone)]
enum Source<'a> {
    File(&'a Path),
    Fetch { partition: i32, fetch_offset: i64 },
}

impl Source<'_> {
    fn fields(&self) -> Map<String, Value> {
        let mut m = Map::new();
        match self {
            Source::File(file) => {
                m.insert("file".into(), file.display().to_string().into());
            }
            Source::Fetch { partition, fetch_offset } => {
                m.insert("partition".into(), (*partition).into());
                m.insert("fetch_offset".into(), (*fetch_offset).into());
            }
        }
        m
    }
}

fn error_json(source: &Source, e: &LogError) -> Value {
    let mut m = source.fields();
    m.insert("kind".into(), e.kind().code().into());
    m.insert("message".into(), e.to_string().into());
    m.insert("position".into(), e.position().into());
    m.insert("field".into(), e.field().into());
    Value::Object(m)
}

/// Topic names by topic id (KIP-848 records name topics by id), resolved by Metadata when the
/// history is read live; empty offline.
type TopicNames = BTreeMap<[u8; 16], String>;

/// What the records read so far add up to, whichever the source.
struct Sink<'a> {
    /// The names of the topic ids the KIP-848 records use (live only).
    topic_names: TopicNames,
    /// Whether a record that names topics by id was read (live: worth a Metadata request).
    saw_topic_ids: bool,
    /// `--follow --format text`: per partition, the offset from which each record of the group
    /// is printed as a line as it comes (the high watermark at the start: what is new).
    stream_from: BTreeMap<i32, i64>,
    args: &'a HistoryArgs,
    builder: HistoryBuilder,
    problems: Vec<Value>,
    records: u64,
    control_batches: u64,
    bad_crc: u64,
}

impl<'a> Sink<'a> {
    fn new(args: &'a HistoryArgs) -> Self {
        Sink {
            topic_names: TopicNames::new(),
            saw_topic_ids: false,
            stream_from: BTreeMap::new(),
            args,
            builder: HistoryBuilder::new().with_commit_gap_ms(i64::from(args.commit_gap_s) * 1_000),
            problems: Vec::new(),
            records: 0,
            control_batches: 0,
            bad_crc: 0,
        }
    }

    fn problem(&mut self, problem: Value, out: &mut Out) -> Result<(), CliError> {
        if self.args.records {
            out.json_line(&problem)?;
        }
        self.problems.push(problem);
        Ok(())
    }

    /// Reads every batch of `reader`; records at offsets outside `[from, until)` are skipped (a
    /// fetch returns the batch holding its offset whole, and the end is the one read at start).
    fn read<R: Read>(
        &mut self,
        source: &Source,
        partition: Option<i32>,
        reader: &mut SegmentReader<R>,
        from: i64,
        until: Option<i64>,
        out: &mut Out,
    ) -> Result<(), CliError> {
        let wanted = |group: Option<&str>| self.args.all_groups || group == self.args.group.as_deref();
        let mut problems = Vec::new();
        while let Some(batch) = reader.next_batch() {
            let batch = match batch {
                Ok(b) => b,
                Err(e) => {
                    problems.push(json!({ "error": error_json(source, &e) }));
                    continue;
                }
            };
            let h = &batch.header;
            if !h.crc_valid() {
                self.bad_crc += 1;
                let mut w = source.fields();
                w.insert("kind".into(), "bad_crc".into());
                w.insert("position".into(), h.position.into());
                w.insert("stored_crc".into(), h.stored_crc.into());
                w.insert("computed_crc".into(), h.computed_crc.into());
                w.insert(
                    "message".into(),
                    "the batch's checksum does not match its bytes; its records are still read".into(),
                );
                problems.push(json!({ "warning": w }));
            }
            if h.is_control {
                self.control_batches += 1;
                continue;
            }
            for record in batch.records() {
                let decoded = record.and_then(|r| CoordinatorRecord::decode(r.key, r.value).map(|d| (r, d)));
                let (r, d) = match decoded {
                    Ok(x) => x,
                    Err(e) => {
                        problems.push(json!({ "error": error_json(source, &e) }));
                        continue;
                    }
                };
                if r.offset < from || until.is_some_and(|u| r.offset >= u) || !wanted(d.key.group()) {
                    continue;
                }
                self.records += 1;
                self.saw_topic_ids |= matches!(d.key, RecordKey::ConsumerGroupCurrentMemberAssignment { .. });
                if self.args.records {
                    out.json_line(&RecordLine { partition, offset: r.offset, timestamp: r.timestamp, record: &d })?;
                } else {
                    self.builder.add(r.offset, r.timestamp, &d);
                    let streamed = partition.and_then(|p| self.stream_from.get(&p));
                    if streamed.is_some_and(|&from| r.offset >= from) {
                        out.text(&format!("@{} {} {}\n", r.offset, iso(r.timestamp), record_text(&d)))?;
                        out.flush()?;
                    }
                }
            }
            // Problems go out in order with the records of their batch.
            for p in problems.drain(..) {
                self.problem(p, out)?;
            }
        }
        for p in problems {
            self.problem(p, out)?;
        }
        Ok(())
    }

    /// Prints the history (or, with --records, the closing notes): `source` are the keys that
    /// say where the records came from.
    fn finish(self, source: Map<String, Value>, out: &mut Out) -> Result<(), CliError> {
        let Sink { args, builder, problems, records, control_batches, bad_crc, topic_names, .. } = self;
        if !problems.is_empty() || control_batches > 0 {
            note(&format!(
                "kcp group history: {} reading problem(s) ({bad_crc} batch(es) with a bad checksum), {control_batches} control batch(es) skipped",
                problems.len()
            ));
        }
        // An unknown group is `not_found` (exit 1), as for every `kcp group` command.
        let not_found = |g: &str| {
            CliError::Client(ClientError::new(
                ErrorKind::NotFound,
                format!(
                    "no record of group '{g}' in what was read: it does not exist there (or its records were not read)"
                ),
            ))
        };
        if args.records {
            out.flush()?;
            return match &args.group {
                Some(g) if records == 0 => Err(not_found(g)),
                _ => Ok(()),
            };
        }
        let groups = builder.finish();
        if let Some(g) = &args.group {
            if groups.is_empty() {
                return Err(not_found(g));
            }
        }
        if let (Some(path), Some(g)) = (&args.svg, groups.first()) {
            std::fs::write(path, svg(g)).map_err(|e| CliError::input(format!("--svg {}: {e}", path.display())))?;
            // A file writer says what it wrote, in one line, instead of the whole history.
            let generations = g.generations.len();
            match args.format {
                Format::Json => out.json_line(&json!({"svg": path.display().to_string(), "group": g.group,
                    "generations": generations, "records": records}))?,
                Format::Text => out.text(&format!(
                    "wrote the history of group {} ({generations} generation(s), {records} record(s)) to {}\n",
                    g.group,
                    path.display()
                ))?,
            }
            out.flush()?;
            return Ok(());
        }
        let mut doc = source;
        doc.insert("records".into(), records.into());
        doc.insert("read_problems".into(), problems.clone().into());
        doc.insert("control_batches_skipped".into(), control_batches.into());
        doc.insert("groups".into(), groups.iter().map(|g| group_json(g, &topic_names)).collect::<Vec<_>>().into());
        match args.format {
            Format::Json => out.json_pretty(&Value::Object(doc))?,
            Format::Text => {
                let mut text = String::new();
                if let Some(live) = doc.get("live") {
                    for p in live["partitions"].as_array().into_iter().flatten() {
                        text.push_str(&format!(
                            "read {OFFSETS_TOPIC}-{} offsets {}..{} from broker {}\n",
                            p["partition"], p["from"], p["to"], p["leader"]
                        ));
                    }
                }
                for g in &groups {
                    story(g, &topic_names, &mut text);
                }
                if !problems.is_empty() {
                    text.push_str(&format!(
                        "{} reading problem(s): see --format json's read_problems\n",
                        problems.len()
                    ));
                }
                out.text(&text)?;
            }
        }
        out.flush()?;
        Ok(())
    }
}

/// One record in a few words, for `--follow --format text`'s lines as they come.
fn record_text(d: &CoordinatorRecord<'_>) -> String {
    let group = d.key.group().unwrap_or("-");
    match (&d.key, &d.value) {
        (RecordKey::OffsetCommit { topic, partition, .. }, Some((_, RecordValue::OffsetCommit(v)))) => {
            format!("group {group}: commit {topic}-{partition} offset {}", v.offset)
        }
        (RecordKey::OffsetCommit { topic, partition, .. }, None) => {
            format!("group {group}: offset of {topic}-{partition} deleted")
        }
        (RecordKey::GroupMetadata { .. }, Some((_, RecordValue::GroupMetadata(v)))) => {
            let n = v.members.len();
            format!(
                "group {group}: generation {} ({} {}), {n} member{}",
                v.generation,
                v.protocol_type,
                v.protocol.unwrap_or("-"),
                if n == 1 { "" } else { "s" }
            )
        }
        (RecordKey::GroupMetadata { .. }, None) => format!("group {group}: group metadata deleted"),
        (RecordKey::ConsumerGroupMetadata { .. }, Some((_, RecordValue::ConsumerGroupMetadata(v)))) => {
            format!("group {group}: group epoch {}", v.epoch)
        }
        (key, value) => {
            format!("group {group}: record type {}{}", key.type_id(), if value.is_none() { " (tombstone)" } else { "" })
        }
    }
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
                // The usual slip: the broker's log.dirs (or data) directory instead of one of
                // its partition directories.
                let partitions: Vec<String> = std::fs::read_dir(dir)
                    .into_iter()
                    .flatten()
                    .filter_map(|e| e.ok()?.file_name().into_string().ok())
                    .filter(|n| n.starts_with("__consumer_offsets-"))
                    .collect();
                let hint = match partitions.iter().min() {
                    Some(first) => format!(
                        ": it holds {} __consumer_offsets partition director{}: name one, e.g. --log-dir {}",
                        partitions.len(),
                        if partitions.len() == 1 { "y" } else { "ies" },
                        dir.join(first).display()
                    ),
                    None => ": --log-dir takes a __consumer_offsets-N partition directory (the one holding \
                             the group's partition, `abs(hashCode(group id)) % partition count`)"
                        .to_owned(),
                };
                return Err(CliError::input(format!("{}: no *.log segment files{hint}", dir.display())));
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

/// Runs `kcp group history` on files.
pub fn run(args: &HistoryArgs, out: &mut Out) -> Result<(), CliError> {
    let (files, partition) = inputs(args)?;
    let mut sink = Sink::new(args);
    for file in &files {
        let f = File::open(file).map_err(|e| CliError::input(format!("{}: {e}", file.display())))?;
        let mut reader = SegmentReader::new(BufReader::with_capacity(1 << 16, f), Limits::default());
        sink.read(&Source::File(file), partition, &mut reader, i64::MIN, None, out)?;
    }
    let mut source = Map::new();
    source.insert("files".into(), files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>().into());
    source.insert("partition".into(), partition.into());
    sink.finish(source, out)
}

/// Default fetch size of the live read: large enough to take few round trips, small enough that
/// a response (bounded by the client's frame limit) stays far below it.
const FETCH_MAX_BYTES: i32 = 4 << 20;

/// A fetch that brings nothing whole (one batch larger than asked, from a broker that does not
/// send a first batch whole) asks again with twice the size, up to this.
const FETCH_MAX_BYTES_CAP: i32 = 64 << 20;

/// How many times in a row a fetch below the end may bring nothing before the read stops.
const MAX_EMPTY_FETCHES: u32 = 5;

/// How many times the start may move past the read (retention or cleaning deleted records
/// meanwhile) before the read stops.
const MAX_OUT_OF_RANGE: u32 = 3;

/// Runs `kcp group history` against a cluster: the group's partition (or every partition) of
/// `__consumer_offsets`, from `--from` to the high watermark read at the start (or on, with
/// `--follow`), each request bounded by `timeout`.
pub async fn live(client: &Client, args: &HistoryArgs, timeout: Duration, out: &mut Out) -> Result<(), CliError> {
    let deadline = || Deadline::after(timeout);
    let metadata = client.metadata(Some(&[OFFSETS_TOPIC]), deadline()).await?;
    let topic = metadata
        .topic(OFFSETS_TOPIC)
        .filter(|t| t.error_code == 0 && t.partition_count() > 0)
        .ok_or_else(|| CliError::Client(ClientError::from_code(3, format!("Metadata for {OFFSETS_TOPIC}"), None)))?;
    let count = topic.partition_count();
    let partitions: Vec<i32> = match (args.partition, &args.group) {
        (Some(p), _) if p < 0 || p as usize >= count => {
            return Err(CliError::Usage(format!("--partition {p}: {OFFSETS_TOPIC} has {count} partitions")));
        }
        (Some(p), _) => vec![p],
        (None, Some(g)) => vec![partition_for_group(g, count as u32) as i32],
        (None, None) => (0..count as i32).collect(),
    };
    let ends = client.log_offsets(&[OFFSETS_TOPIC], IsolationLevel::ReadUncommitted, deadline()).await?;
    let ends = ends.into_iter().next().map(|t| t.partitions).ok_or_else(|| {
        CliError::Client(ClientError::new(ErrorKind::Protocol, format!("no ListOffsets answer for {OFFSETS_TOPIC}")))
    })?;
    let ends = ends.map_err(CliError::Client)?;
    let mut sink = Sink::new(args);
    let mut read: Vec<PartitionRead> = Vec::new();
    let mut fetchers: Vec<PartitionFetcher> = Vec::new();
    let follow_all = args.follow && partitions.len() > 1;
    // --follow ends on --duration-s, SIGINT/SIGTERM, or when the reader of the output has gone
    // (`| head -1` on a quiet partition writes nothing that would notice it).
    let stop = async {
        tokio::select! {
            () = super::join::stop_signal(if args.follow { args.duration_s } else { Some(0) }) => {}
            () = crate::out::stdout_reader_gone(), if args.follow => {}
        }
    };
    tokio::pin!(stop);
    for &partition in &partitions {
        let offsets = ends.iter().find(|p| p.partition == partition).ok_or_else(|| {
            CliError::Client(ClientError::new(
                ErrorKind::Protocol,
                format!("no offsets for {OFFSETS_TOPIC}-{partition}"),
            ))
        })?;
        let log_start = offsets.log_start_offset.clone().map_err(CliError::Client)?;
        let end = offsets.log_end_offset.clone().map_err(CliError::Client)?;
        let from = match args.from {
            None => log_start,
            Some(From::Offset(o)) => o,
            Some(From::Time(ms)) => {
                let listed = client
                    .list_offsets(
                        &[TopicPartitions::new(OFFSETS_TOPIC, vec![partition])],
                        OffsetSpec::Timestamp(ms),
                        IsolationLevel::ReadUncommitted,
                        deadline(),
                    )
                    .await?;
                match listed.into_iter().next().map(|p| p.result) {
                    Some(Ok(l)) => l.offset.unwrap_or(end),
                    Some(Err(e)) => return Err(CliError::Client(e)),
                    None => end,
                }
            }
        };
        if from > log_start {
            // Records before `from` are skipped, not compacted away: the story says so.
            sink.builder = std::mem::take(&mut sink.builder).read_after_log_start();
        }
        let mode = if args.follow && !follow_all { Mode::Follow } else { Mode::ToEnd(end) };
        if args.follow && args.format == Format::Text && !args.records {
            // The story needs the whole read; what is new is shown as it comes meanwhile.
            sink.stream_from.insert(partition, end);
            out.text(&format!(
                "following {OFFSETS_TOPIC}-{partition}: records from offset {end} on are shown as they come, the \
                 history when the follow ends (--duration-s, Ctrl-C)\n"
            ))?;
            out.flush()?;
        }
        let mut fetcher = PartitionFetcher::new(client.clone(), OFFSETS_TOPIC, partition, fetch_options(args));
        let (first, leader, last) =
            read_partition(client, args, &mut fetcher, partition, from, mode, &mut sink, &mut stop, out).await?;
        read.push(PartitionRead { partition, first, last, end, log_start, leader });
        fetchers.push(fetcher);
    }
    if follow_all {
        // Every partition read to its end: now poll each in turn for what is new (no wait per
        // fetch), and wait a little when a whole round brought nothing.
        for fetcher in &mut fetchers {
            fetcher.set_options(fetcher.options().max_wait(Duration::ZERO));
        }
        loop {
            let mut moved = false;
            for (r, fetcher) in read.iter_mut().zip(&mut fetchers) {
                let (_, leader, last) = read_partition(
                    client,
                    args,
                    fetcher,
                    r.partition,
                    r.last,
                    Mode::CatchUp,
                    &mut sink,
                    &mut stop,
                    out,
                )
                .await?;
                moved |= last > r.last;
                r.last = last;
                r.leader = leader.or(r.leader);
            }
            // `stop` is polled after every round (busy or not) and the loop ends once it completes.
            let idle = if moved { Duration::ZERO } else { FOLLOW_ALL_IDLE };
            tokio::select! {
                biased;
                () = &mut stop => break,
                () = tokio::time::sleep(idle) => {}
            }
        }
    }
    let read: Vec<Value> = read
        .iter()
        .map(|r| {
            json!({"partition": r.partition, "from": r.first, "to": r.last, "high_watermark_at_start": r.end,
            "log_start_offset": r.log_start, "leader": r.leader})
        })
        .collect();
    if sink.saw_topic_ids && !args.records {
        // KIP-848 records name topics by id: the cluster knows their names now (a topic
        // deleted since keeps its id).
        match client.metadata(None, deadline()).await {
            Ok(metadata) => {
                sink.topic_names = metadata.topics.into_iter().map(|t| (t.topic_id, t.name)).collect();
            }
            Err(e) => note(&format!("kcp group history: topic names not resolved ({}): topic ids shown", e.message())),
        }
    }
    let mut source = Map::new();
    source.insert("files".into(), Vec::<String>::new().into());
    source.insert("partition".into(), if partitions.len() == 1 { partitions[0].into() } else { Value::Null });
    source.insert(
        "live".into(),
        json!({"topic": OFFSETS_TOPIC, "partition_count": count, "follow": args.follow,
        "partitions": read}),
    );
    sink.finish(source, out)
}

/// How long `--all-groups --follow` waits after a round of every partition brought nothing.
const FOLLOW_ALL_IDLE: Duration = Duration::from_millis(500);

/// What a live read of one partition did.
struct PartitionRead {
    partition: i32,
    first: i64,
    last: i64,
    end: i64,
    log_start: i64,
    leader: Option<i32>,
}

/// How far [`read_partition`] reads.
#[derive(Clone, Copy)]
enum Mode {
    /// To this offset (the high watermark read at the start).
    ToEnd(i64),
    /// On, until `stop` (one partition).
    Follow,
    /// To the first fetch that brings nothing (a round of `--all-groups --follow`).
    CatchUp,
}

fn fetch_options(args: &HistoryArgs) -> FetchOptions {
    FetchOptions::default().max_bytes(args.fetch_max_bytes).max_wait(Duration::from_millis(500))
}

/// Reads one partition from `from` as `mode` says: the first offset read, the leader, and the
/// offset after the last record read.
#[allow(clippy::too_many_arguments)]
async fn read_partition(
    client: &Client,
    args: &HistoryArgs,
    fetcher: &mut PartitionFetcher,
    partition: i32,
    from: i64,
    mode: Mode,
    sink: &mut Sink<'_>,
    stop: &mut std::pin::Pin<&mut impl std::future::Future<Output = ()>>,
    out: &mut Out,
) -> Result<(i64, Option<i32>, i64), CliError> {
    let timeout = Duration::from_millis(args.connection.timeout_ms);
    let end = match mode {
        Mode::ToEnd(end) => end,
        Mode::Follow | Mode::CatchUp => i64::MAX,
    };
    let follow = matches!(mode, Mode::Follow);
    let until = matches!(mode, Mode::ToEnd(_)).then_some(end);
    let (mut first, mut offset, mut leader) = (from, from, None);
    let (mut empty, mut out_of_range) = (0u32, 0u32);
    loop {
        if offset >= end {
            break;
        }
        let fetch = fetcher.fetch(offset, Deadline::after(timeout));
        // `stop` is polled only here and the loop ends once it completes; --follow of one
        // partition reads it alone, so a completed `stop` is never polled again.
        let fetched = if follow {
            tokio::select! {
                () = &mut *stop => break,
                f = fetch => f,
            }
        } else {
            fetch.await
        };
        let fetched = match fetched {
            Ok(f) => f,
            // OFFSET_OUT_OF_RANGE: the log start moved past the offset (retention, cleaning).
            Err(e) if e.error_code() == Some(1) && out_of_range < MAX_OUT_OF_RANGE => {
                out_of_range += 1;
                let ends = client
                    .log_offsets(&[OFFSETS_TOPIC], IsolationLevel::ReadUncommitted, Deadline::after(timeout))
                    .await?;
                let start = ends
                    .first()
                    .and_then(|t| t.partition(partition))
                    .and_then(|p| p.log_start_offset.clone().ok())
                    .filter(|&s| s > offset)
                    .ok_or(CliError::Client(e))?;
                note(&format!(
                    "kcp group history: {OFFSETS_TOPIC}-{partition} starts at {start} now, records {offset}..{start} are gone"
                ));
                if offset == first {
                    first = start;
                }
                offset = start;
                continue;
            }
            Err(e) => return Err(CliError::Client(e)),
        };
        leader = Some(fetched.leader);
        if !fetched.records.is_empty() {
            let source = Source::Fetch { partition, fetch_offset: offset };
            let mut reader = SegmentReader::new(&fetched.records[..], Limits::default());
            sink.read(&source, Some(partition), &mut reader, offset, until, out)?;
            if args.records {
                out.flush()?;
            }
        }
        if fetched.next_offset > offset {
            offset = fetched.next_offset;
            empty = 0;
            continue;
        }
        if fetched.partial_bytes > 0 {
            // One batch larger than asked, cut: ask for more.
            let options = fetcher.options();
            if options.max_bytes >= FETCH_MAX_BYTES_CAP {
                return Err(CliError::Client(ClientError::new(ErrorKind::Protocol, format!(
                    "{OFFSETS_TOPIC}-{partition}: the batch at offset {offset} is larger than {FETCH_MAX_BYTES_CAP} bytes"
                ))));
            }
            fetcher.set_options(options.max_bytes(options.max_bytes.saturating_mul(2)));
            continue;
        }
        match mode {
            Mode::Follow => continue,
            Mode::CatchUp => break,
            Mode::ToEnd(_) => {}
        }
        // Nothing below the end: the end moved back (a new leader truncated), or the leader
        // has not got there yet; a few tries, then stop where it is.
        empty += 1;
        if empty >= MAX_EMPTY_FETCHES || fetched.high_watermark <= offset {
            note(&format!(
                "kcp group history: {OFFSETS_TOPIC}-{partition} gave nothing at offset {offset} (high watermark {}, {end} at the start); stopping there",
                fetched.high_watermark
            ));
            break;
        }
    }
    Ok((first, leader, offset.min(until.unwrap_or(i64::MAX))))
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

/// `kcp group describe`'s findings on one classic generation: the group as DescribeGroups showed
/// it once that generation was stable (empty: `Empty`). The log has no partition counts, so each
/// subscribed topic's count is one past the highest partition a member of the generation lists
/// (assigned or owned): a hole below it is still an unassigned partition, but the findings that
/// need the real counts (unknown topics, partitions beyond the count) cannot be judged and are
/// left out.
fn generation_findings(group: &str, g: &Generation) -> Vec<Diagnostic> {
    let members: Vec<DescribedGroupMember> = g
        .members
        .iter()
        .map(|m| DescribedGroupMember {
            member_id: m.member_id.clone(),
            group_instance_id: m.group_instance_id.clone(),
            client_id: m.client_id.clone(),
            client_host: m.client_host.clone(),
            member_metadata: Bytes::copy_from_slice(&m.subscription),
            member_assignment: Bytes::copy_from_slice(&m.assignment),
        })
        .collect();
    let classic = ClassicGroup {
        group_id: group.to_string(),
        state: if members.is_empty() { "Empty" } else { "Stable" }.to_string(),
        protocol_type: g.protocol_type.clone(),
        protocol: g.protocol.clone().unwrap_or_default(),
        members,
    };
    let mut counts: BTreeMap<String, i32> = BTreeMap::new();
    let note = |counts: &mut BTreeMap<String, i32>, list: &[TopicPartitions]| {
        for t in list {
            let highest = t.partitions.iter().copied().max().map_or(0, |p| p.saturating_add(1));
            let count = counts.entry(t.topic.clone()).or_insert(0);
            *count = (*count).max(highest);
        }
    };
    for m in &g.members {
        if let Ok(sub) = m.decoded_subscription() {
            note(&mut counts, &sub.owned_partitions);
            for topic in &sub.topics {
                counts.entry(topic.clone()).or_insert(0);
            }
        }
        if let Ok(a) = m.decoded_assignment() {
            note(&mut counts, &a.assigned_partitions);
        }
    }
    let report = inspect_classic(&classic, &ClusterMetadata::from_counts(counts));
    report
        .diagnostics
        .into_iter()
        .filter(|d| {
            !matches!(
                d.kind,
                DiagnosticKind::UnknownTopic
                    | DiagnosticKind::ClaimBeyondPartitionCount
                    | DiagnosticKind::AssignmentBeyondPartitionCount
            )
        })
        .collect()
}

fn generation_json(group: &str, g: &Generation) -> Value {
    let consumer = g.protocol_type == "consumer";
    json!({
        "findings": generation_findings(group, g).iter().map(diagnostic_json).collect::<Vec<_>>(),
        "offset": g.at.offset, "timestamp": g.at.timestamp, "generation": g.generation,
        "protocol_type": g.protocol_type, "protocol": g.protocol, "leader": g.leader,
        "current_state_timestamp": g.current_state_timestamp,
        "members": g.members.iter().map(|m| member_json(m, consumer)).collect::<Vec<_>>(),
        "joined": g.joined, "left": g.left,
        "rejoined": g.rejoined.iter().map(|(i, old, new)| json!({"group_instance_id": i, "old_member_id": old, "new_member_id": new})).collect::<Vec<_>>(),
        "moved": g.moved.iter().map(|m| json!({"topic": m.topic, "partition": m.partition, "from": m.from, "to": m.to})).collect::<Vec<_>>(),
    })
}

fn event_json(at: (i64, i64), e: &ConsumerGroupEvent, names: &TopicNames) -> Value {
    let mut v = match e {
        ConsumerGroupEvent::GroupEpoch(n) => json!({"event": "group_epoch", "epoch": n}),
        ConsumerGroupEvent::MemberJoined { member_id, instance_id, topics, classic } => json!({
            "event": "member_joined", "member_id": member_id, "instance_id": instance_id,
            "subscribed_topic_names": topics, "classic": classic}),
        ConsumerGroupEvent::MemberLeft(id) => json!({"event": "member_left", "member_id": id}),
        ConsumerGroupEvent::AssignmentEpoch(n) => json!({"event": "assignment_epoch", "epoch": n}),
        ConsumerGroupEvent::MemberAssignment { member_id, member_epoch, assigned, pending_revocation } => {
            let count = |l: &[TopicIdPartitions]| l.iter().map(|t| t.partitions.len()).sum::<usize>();
            let list = |l: &[TopicIdPartitions]| {
                l.iter()
                    .map(|t| {
                        json!({"topic_id": t.topic_id.to_string(), "topic": names.get(&t.topic_id.0),
                            "partitions": t.partitions})
                    })
                    .collect::<Vec<_>>()
            };
            json!({
                "event": "member_assignment", "member_id": member_id, "member_epoch": member_epoch,
                "assigned_partitions": count(assigned), "partitions_pending_revocation": count(pending_revocation),
                "assigned": list(assigned), "pending_revocation": list(pending_revocation)})
        }
        ConsumerGroupEvent::ConvertedFromClassic => json!({"event": "converted_from_classic"}),
        ConsumerGroupEvent::ConvertedToClassic => json!({"event": "converted_to_classic"}),
        _ => json!({"event": "other"}),
    };
    v["offset"] = at.0.into();
    v["timestamp"] = at.1.into();
    v
}

/// A share group event; assignments name each topic by id and, when the group's records named
/// it, by name (`topic`, else `null`).
fn share_event_json(at: At, e: &ShareGroupEvent, names: &BTreeMap<Uuid, String>) -> Value {
    let state = |l: &[ShareStateTopic], with_partitions: bool| {
        l.iter()
            .map(|t| {
                let mut v = json!({"topic_id": t.topic_id.to_string(), "topic": t.topic_name});
                if with_partitions {
                    v["partitions"] = json!(t.partitions);
                }
                v
            })
            .collect::<Vec<_>>()
    };
    let mut v = match e {
        ShareGroupEvent::GroupEpoch { epoch, metadata_hash } => {
            json!({"event": "group_epoch", "epoch": epoch, "metadata_hash": metadata_hash})
        }
        ShareGroupEvent::MemberJoined { member_id, client_id, client_host, rack_id, topics } => json!({
            "event": "member_joined", "member_id": member_id, "client_id": client_id,
            "client_host": client_host, "rack_id": rack_id, "subscribed_topic_names": topics}),
        ShareGroupEvent::MemberLeft(id) => json!({"event": "member_left", "member_id": id}),
        ShareGroupEvent::AssignmentEpoch(n) => json!({"event": "assignment_epoch", "epoch": n}),
        ShareGroupEvent::MemberAssignment { member_id, member_epoch, previous_member_epoch, assigned } => json!({
            "event": "member_assignment", "member_id": member_id, "member_epoch": member_epoch,
            "previous_member_epoch": previous_member_epoch,
            "assigned_partitions": assigned.iter().map(|t| t.partitions.len()).sum::<usize>(),
            "assigned": assigned.iter().map(|t| json!({
                "topic_id": t.topic_id.to_string(), "topic": names.get(&t.topic_id), "partitions": t.partitions,
            })).collect::<Vec<_>>()}),
        ShareGroupEvent::StatePartitions { initializing, initialized, deleting } => json!({
            "event": "state_partitions", "initializing": state(initializing, true),
            "initialized": state(initialized, true), "deleting": state(deleting, false)}),
        _ => json!({"event": "other"}),
    };
    v["offset"] = at.offset.into();
    v["timestamp"] = at.timestamp.into();
    v
}

fn group_json(g: &GroupHistory, names: &TopicNames) -> Value {
    json!({
        "group": g.group,
        "first": at_json(g.first.offset, g.first.timestamp),
        "last": at_json(g.last.offset, g.last.timestamp),
        "compacted_before": g.compacted_before,
        "generations": g.generations.iter().map(|x| generation_json(&g.group, x)).collect::<Vec<_>>(),
        "consumer_group_events": g.consumer_group_events.iter().map(|(at, e)| event_json((at.offset, at.timestamp), e, names)).collect::<Vec<_>>(),
        "share_group_events": g.share_group_events.iter().map(|(at, e)| share_event_json(*at, e, &g.topic_names)).collect::<Vec<_>>(),
        "commits": g.commits.iter().map(|((topic, partition), c)| json!({
            "topic": topic, "partition": partition, "count": c.count,
            "first": {"offset": c.first.offset, "commit_timestamp": c.first.commit_timestamp, "record_offset": c.first.at.offset},
            "last": {"offset": c.last.offset, "commit_timestamp": c.last.commit_timestamp, "record_offset": c.last.at.offset},
            "rewinds": c.rewinds.iter().map(|(a, b)| json!({"from": a.offset, "to": b.offset, "commit_timestamp": b.commit_timestamp, "record_offset": b.at.offset})).collect::<Vec<_>>(),
            "deleted": c.deleted,
            "span_ms": c.span_ms(),
            "commits_per_minute": c.commits_per_minute(),
            "offsets_per_second": c.offsets_per_second(),
            "gap_count": c.gap_count,
            "largest_gaps": c.largest_gaps.iter().map(|g| json!({
                "length_ms": g.length_ms(),
                "from": {"offset": g.before.offset, "commit_timestamp": g.before.commit_timestamp, "record_offset": g.before.at.offset},
                "to": {"offset": g.after.offset, "commit_timestamp": g.after.commit_timestamp, "record_offset": g.after.at.offset},
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "deleted": g.deleted.map(|at| at_json(at.offset, at.timestamp)),
        "other_record_types": g.other_records.iter().map(|(t, n)| json!({"type": t, "records": n})).collect::<Vec<_>>(),
    })
}

/// The history as text, for a person.
fn story(g: &GroupHistory, names: &TopicNames, s: &mut String) {
    use std::fmt::Write;
    let _ = writeln!(
        s,
        "group {} (records at offsets {}..{}, {} to {})",
        g.group,
        g.first.offset,
        g.last.offset,
        iso(g.first.timestamp),
        iso(g.last.timestamp)
    );
    match &g.compacted_before {
        Some(why) => {
            let _ = writeln!(s, "  history starts at offset {}: {why}", g.first.offset);
        }
        None => {
            let _ = writeln!(s, "  history starts at offset {}", g.first.offset);
        }
    }
    // Classic generations and consumer group events in log order: a group converted online
    // reads as one story.
    // A share group's events read like a consumer group's (a group id is one kind of group at a
    // time; both lists are in log order, so merging them keeps it).
    let mut all_events: Vec<(At, Value)> = g
        .consumer_group_events
        .iter()
        .map(|(at, e)| (*at, event_json((at.offset, at.timestamp), e, names)))
        .chain(g.share_group_events.iter().map(|(at, e)| (*at, share_event_json(*at, e, &g.topic_names))))
        .collect();
    all_events.sort_by_key(|(at, _)| at.offset);
    let (mut gens, mut events) = (g.generations.iter().peekable(), all_events.iter().peekable());
    loop {
        let next_generation = match (gens.peek(), events.peek()) {
            (Some(x), Some((at, _))) => x.at.offset <= at.offset,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        if !next_generation {
            let Some((at, v)) = events.next() else { break };
            let mut line = format!("  @{} {} {}", at.offset, iso(at.timestamp), v["event"].as_str().unwrap_or(""));
            for field in ["epoch", "member_id", "client_id", "member_epoch", "assigned_partitions"] {
                match &v[field] {
                    Value::String(x) => line.push_str(&format!(" {field} {x}")),
                    Value::Number(n) => line.push_str(&format!(" {field} {n}")),
                    _ => {}
                }
            }
            // A member's assignment: its partitions per topic (by name when the group's records
            // named it, else by id), then those still to revoke; a share group's state partitions.
            for (field, label) in [
                ("assigned", ""),
                ("pending_revocation", " pending revocation"),
                ("initializing", " initializing"),
                ("initialized", " initialized"),
                ("deleting", " deleting"),
            ] {
                let Some(list) = v[field].as_array().filter(|l| !l.is_empty()) else { continue };
                line.push_str(&format!("{label} ["));
                for (i, t) in list.iter().enumerate() {
                    let topic = t["topic"].as_str().or(t["topic_id"].as_str()).unwrap_or("");
                    let sep = if i == 0 { "" } else { " " };
                    match t["partitions"].as_array() {
                        Some(parts) => {
                            let parts: Vec<String> = parts.iter().map(|p| p.to_string()).collect();
                            line.push_str(&format!("{sep}{topic}:{}", parts.join(",")));
                        }
                        None => line.push_str(&format!("{sep}{topic}")),
                    }
                }
                line.push(']');
            }
            let _ = writeln!(s, "{line}");
            continue;
        }
        let Some(x) = gens.next() else { break };
        if x.members.is_empty() {
            let _ = writeln!(s, "  @{} {} generation {}: empty", x.at.offset, iso(x.at.timestamp), x.generation);
        } else {
            let _ = writeln!(
                s,
                "  @{} {} generation {} ({} {}), leader {}: {} member(s)",
                x.at.offset,
                iso(x.at.timestamp),
                x.generation,
                x.protocol_type,
                x.protocol.as_deref().unwrap_or("-"),
                x.leader.as_deref().unwrap_or("-"),
                x.members.len()
            );
        }
        for d in generation_findings(&g.group, x) {
            let _ = writeln!(s, "      finding {}: {}", d.kind.code(), d.message);
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
            // Topics and partitions sorted, as describe shows them (the wire keeps the
            // assignor's order).
            let parts = m.decoded_assignment().map(|a| {
                let mut topics = a.assigned_partitions.clone();
                topics.sort_by(|x, y| x.topic.cmp(&y.topic));
                topics
                    .iter_mut()
                    .map(|t| {
                        t.partitions.sort_unstable();
                        format!("{}{:?}", t.topic, t.partitions)
                    })
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
    if let Some(at) = g.deleted {
        let _ = writeln!(s, "  deleted at offset {} ({})", at.offset, iso(at.timestamp));
    }
    for ((topic, partition), c) in &g.commits {
        let _ = writeln!(
            s,
            "  commits {topic}-{partition}: {} (first {} at {}, last {} at {}), {} rewind(s){}",
            c.count,
            c.first.offset,
            iso(c.first.commit_timestamp),
            c.last.offset,
            iso(c.last.commit_timestamp),
            c.rewinds.len(),
            if c.deleted { ", deleted" } else { "" }
        );
        // A rate over less than a second says nothing a person can use (44 commits within
        // 500 ms is not "5280 commits/min"): the count and the span then.
        match (c.commits_per_minute(), c.offsets_per_second()) {
            (Some(per_minute), Some(per_second)) if c.span_ms() >= 1_000 => {
                let _ = writeln!(
                    s,
                    "    {per_minute:.1} commit(s)/min, offset {per_second:+.1}/s over {}",
                    span(c.span_ms())
                );
            }
            (Some(_), Some(_)) => {
                let _ = writeln!(
                    s,
                    "    {} commit(s) within {}, offset {:+}",
                    c.count,
                    span(c.span_ms()),
                    c.last.offset.saturating_sub(c.first.offset)
                );
            }
            _ => {}
        }
        if let Some(longest) = c.largest_gaps.first() {
            let _ = writeln!(
                s,
                "    {} pause(s) without a commit; longest {}, after offset {} committed at {}",
                c.gap_count,
                span(longest.length_ms()),
                longest.before.offset,
                iso(longest.before.commit_timestamp)
            );
        }
    }
}

/// A member's name in the picture: its client id and the start of the id the broker gave it
/// (member ids are `<client id>-<uuid>`), short enough for the legend.
fn short_member(m: &GenerationMember) -> String {
    match m.member_id.strip_prefix(&format!("{}-", m.client_id)) {
        Some(rest) if !m.client_id.is_empty() => {
            format!("{}-{}", m.client_id, rest.chars().take(6).collect::<String>())
        }
        _ => m.member_id.chars().take(24).collect(),
    }
}

/// The group's history drawn by the simulator's renderer: its timeline built from the real
/// generations (time from the first record; each generation's decoded assignments as the
/// ownership; joins and leaves as steps; KIP-848 member events as steps, without lanes: their
/// records carry partition counts, not partitions).
fn svg(g: &GroupHistory) -> String {
    use kafka_consumer_protocol::internal::svg;
    use kafka_consumer_protocol::sim::{Outcome, Summary, TimelineEntry};
    use kafka_consumer_protocol::PartitionSet;

    let t0 = g.first.timestamp;
    let t = |ts: i64| u64::try_from(ts.saturating_sub(t0)).unwrap_or(0);
    let mut timeline: Vec<TimelineEntry> = Vec::new();
    let mut lanes = PartitionSet::new();
    let mut owned: BTreeMap<String, Vec<TopicPartitions>> = BTreeMap::new();
    let mut names: BTreeMap<&str, String> = BTreeMap::new();
    let entry = |t_ms: u64, generation: i32, event: &str, owned: &BTreeMap<String, Vec<TopicPartitions>>| {
        TimelineEntry::ownership(t_ms, generation, event, owned.clone())
    };
    let mut moved = 0u64;
    for x in &g.generations {
        let at = t(x.at.timestamp);
        for m in &x.members {
            names.entry(m.member_id.as_str()).or_insert_with(|| short_member(m));
        }
        let name = |id: &str| names.get(id).cloned().unwrap_or_else(|| id.chars().take(24).collect());
        for id in &x.left {
            let mut e = entry(at, x.generation, "left", &owned);
            e.member = Some(name(id));
            timeline.push(e);
        }
        for id in &x.joined {
            let mut e = entry(at, x.generation, "joined", &owned);
            e.member = Some(name(id));
            timeline.push(e);
        }
        owned.clear();
        for m in &x.members {
            let parts = m.decoded_assignment().map(|a| a.assigned_partitions).unwrap_or_default();
            for tp in &parts {
                for &p in &tp.partitions {
                    lanes.insert(&tp.topic, p);
                }
            }
            owned.insert(name(&m.member_id), parts);
        }
        moved += x.moved.iter().filter(|m| m.to.is_some()).count() as u64;
        let mut e = entry(at, x.generation, "assigned", &owned);
        e.assignor = Some(x.protocol.clone().unwrap_or_else(|| "empty".into()));
        e.detail = Some(format!("{} member(s)", x.members.len()));
        timeline.push(e);
    }
    let share_steps = g.share_group_events.iter().filter_map(|(at, event)| match event {
        ShareGroupEvent::MemberJoined { member_id, .. } => Some((at, ("joined", member_id))),
        ShareGroupEvent::MemberLeft(member_id) => Some((at, ("left", member_id))),
        _ => None,
    });
    let consumer_steps = g.consumer_group_events.iter().filter_map(|(at, event)| match event {
        ConsumerGroupEvent::MemberJoined { member_id, .. } => Some((at, ("joined", member_id))),
        ConsumerGroupEvent::MemberLeft(member_id) => Some((at, ("left", member_id))),
        _ => None,
    });
    for (at, (name, member)) in consumer_steps.chain(share_steps) {
        let mut e = entry(t(at.timestamp), 0, name, &owned);
        e.member = Some(member.chars().take(24).collect());
        timeline.push(e);
    }
    timeline.sort_by_key(|e| e.t_ms);
    for (i, e) in timeline.iter_mut().enumerate() {
        e.seq = i as u64;
    }
    let last = g.generations.last();
    // The last generation's assignments cover every partition ever assigned, each once.
    let mut covered = PartitionSet::new();
    let mut once = true;
    for parts in owned.values() {
        for tp in parts {
            for &p in &tp.partitions {
                once &= covered.insert(&tp.topic, p);
            }
        }
    }
    let summary = Summary {
        rebalances: g.generations.iter().filter(|x| !x.members.is_empty()).count() as u64,
        partitions_moved: moved,
        converged: last.is_some_and(|x| !x.members.is_empty()) && once && covered.len() == lanes.len(),
        duration_ms: t(g.last.timestamp),
        final_generation: last.map_or(0, |x| x.generation),
        events: timeline.len() as u64,
        ..Summary::default()
    };
    let final_owned = owned.iter().map(|(m, parts)| (m.clone(), PartitionSet::from_groups(parts))).collect();
    // The title in the text view's words and counts (a real group is not a simulation: no
    // "converged" or "violations"), the time axis in UTC.
    let moves: usize = g.generations.iter().map(|x| x.moved.len()).sum();
    let title = format!(
        "group {}: {} generation(s), {} with members, {} partition move(s); {} KIP-848 event(s)",
        g.group,
        g.generations.len(),
        g.generations.iter().filter(|x| !x.members.is_empty()).count(),
        moves,
        g.consumer_group_events.len()
    );
    let labels = svg::Labels { title: Some(title), start_epoch_ms: Some(t0) };
    svg::render_with(&Outcome { timeline, summary, partitions: lanes, final_owned }, &labels)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_and_spans_for_people() {
        assert_eq!(iso(1_796_140_178_670), "2026-12-01T15:49:38.670Z");
        assert_eq!(iso(-1), "-1");
        // A rate over less than a second is not extrapolated: the span is said as it is.
        assert_eq!([span(0), span(500), span(1_500), span(75_000)], ["0 ms", "500 ms", "1.5 s", "75 s"]);
    }
}
