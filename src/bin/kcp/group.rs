//! `kcp group list | describe | watch`: a running cluster's consumer groups, decoded.
//!
//! The network is `kafka_consumer_protocol::client`; the decoding and the diagnostics are
//! `kafka_consumer_protocol::inspect`. This module turns arguments into calls and results into the
//! contract's JSON (or a table for people).

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use kafka_consumer_protocol::assignor::{ClusterMetadata as TopicCounts, TopicInfo};
use kafka_consumer_protocol::client::{
    Broker, ClassicGroupDescription, Client, ClientConfig, ClientError, ConfigError, ConsumerGroupDescription,
    Deadline, ErrorKind, ListGroupsFilter,
};
use kafka_consumer_protocol::group_api::DescribedGroupMember;
use kafka_consumer_protocol::inspect::watch::{Event, Snapshot, StormThreshold, Watcher};
use kafka_consumer_protocol::inspect::{
    inspect_classic, inspect_consumer, ClassicGroup, ClassicGroupReport, ClassicMemberReport, Diagnostic, Payload,
    UserDataReading,
};
use kafka_consumer_protocol::{
    AssignmentView, DecodeOptions, StickyUserData, StickyUserDataFormat, SubscriptionView, TopicPartitions,
};
use serde_json::{json, Value};

use super::input::to_hex;
use super::out::{note, Out, WriteFailed};
use super::shapes::{assignment_json, decode_error_json, subscription_json};
use super::text::clean;
use super::Format;

/// `kcp group`'s subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum GroupCommand {
    /// List the cluster's groups with their type (classic or consumer) and state.
    List(ListArgs),
    /// Describe groups: every member's decoded subscription and assignment, and diagnostics.
    ///
    /// One JSON object for one `--group`; a JSON array for several or `--all-groups`, written
    /// group by group as each is described (in the order asked, or by group id). Exit status 1
    /// when a group could not be described (its entry is then `{"group_id", "error"}`).
    Describe(DescribeArgs),
    /// Describe a group every interval and print its changes as JSON lines.
    Watch(WatchArgs),
    /// Run one real group member and print its listener callbacks as JSON lines.
    ///
    /// The member fetches no records and commits nothing; it leaves the group on --duration-s,
    /// SIGINT or SIGTERM (a static member sends no LeaveGroup, as Java does). Exit status 1 after
    /// a fatal error (printed as an `error` event with `"fatal": true`).
    Join(JoinArgs),
}

/// `kcp group join`.
#[derive(clap::Args, Debug)]
pub struct JoinArgs {
    #[command(flatten)]
    pub connection: ConnectionArgs,
    #[command(flatten)]
    pub member: super::join::MemberArgs,
}

/// How to reach the cluster, named as Apache Kafka's own tools name it.
#[derive(clap::Args, Debug, Clone)]
pub struct ConnectionArgs {
    /// HOST:PORT[,HOST:PORT...] (or bootstrap.servers in --command-config).
    #[arg(long, value_name = "HOST:PORT[,HOST:PORT...]")]
    pub bootstrap_server: Option<String>,
    /// A Java-client properties file: security.protocol, sasl.*, ssl.* (PEM), client.id, ...
    #[arg(long, value_name = "FILE")]
    pub command_config: Option<PathBuf>,
    /// The command's overall deadline, in milliseconds (for `watch`: of each poll).
    #[arg(long, value_name = "N", default_value_t = 30_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout_ms: u64,
}

/// `kcp group list`.
#[derive(clap::Args, Debug)]
pub struct ListArgs {
    #[command(flatten)]
    pub connection: ConnectionArgs,
    /// Output format.
    #[arg(long, value_enum, default_value = "json")]
    pub format: Format,
}

/// `kcp group describe`.
#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("which").required(true).args(["groups", "all_groups"])))]
pub struct DescribeArgs {
    #[command(flatten)]
    pub connection: ConnectionArgs,
    /// A group to describe (repeat for several).
    #[arg(long = "group", value_name = "G")]
    pub groups: Vec<String>,
    /// Describe every group of the cluster.
    #[arg(long)]
    pub all_groups: bool,
    /// Output format: the JSON contract, or a table per group.
    #[arg(long, value_enum, default_value = "json")]
    pub format: Format,
}

/// `kcp group watch`.
#[derive(clap::Args, Debug)]
pub struct WatchArgs {
    #[command(flatten)]
    pub connection: ConnectionArgs,
    /// The group to watch.
    #[arg(long, value_name = "G")]
    pub group: String,
    /// How often to describe the group, in milliseconds.
    #[arg(long, value_name = "N", default_value_t = 1000, value_parser = clap::value_parser!(u64).range(10..))]
    pub interval_ms: u64,
    /// Stop after this many seconds (default: run until interrupted).
    #[arg(long, value_name = "N")]
    pub duration_s: Option<u64>,
    /// A rebalance storm is more than N rebalances within SECONDS.
    #[arg(long, value_name = "N/SECONDS", default_value = "5/60")]
    pub storm: StormThreshold,
}

/// Why a `kcp group` command stopped.
enum GroupError {
    /// A setting that cannot be honoured, or missing (exit 2).
    Config(ConfigError),
    /// Bad arguments (exit 2).
    Usage(String),
    /// The cluster could not be reached or refused (exit 1).
    Client(ClientError),
    /// stdout failed.
    Output(WriteFailed),
}

impl From<WriteFailed> for GroupError {
    fn from(e: WriteFailed) -> Self {
        GroupError::Output(e)
    }
}

impl From<ClientError> for GroupError {
    fn from(e: ClientError) -> Self {
        GroupError::Client(e)
    }
}

/// `{"error": {"kind", "message"}}`.
fn client_error_json(e: &ClientError) -> Value {
    json!({"error": {"kind": e.kind().as_str(), "message": e.message()}})
}

/// Runs one `kcp group` subcommand; prints its output and returns the exit status.
pub fn run_group(command: &GroupCommand, out: &mut Out) -> ExitCode {
    let (connection, format) = match command {
        GroupCommand::List(a) => (&a.connection, a.format),
        GroupCommand::Describe(a) => (&a.connection, a.format),
        GroupCommand::Watch(a) => (&a.connection, Format::Json),
        // A member prints its own JSON lines and runs until it leaves; an error before it starts
        // is reported as `watch`'s are (the JSON form: `join` has no --format).
        GroupCommand::Join(a) => {
            return match client_config(&a.connection) {
                Ok(config) => super::join::run(&a.member, config, Duration::from_millis(a.connection.timeout_ms), out),
                Err(e) => exit_for(e, Format::Json, out),
            };
        }
    };
    let result = client_config(connection).and_then(|config| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| GroupError::Client(ClientError::new(ErrorKind::Unreachable, format!("no runtime: {e}"))))?;
        let client = Client::new(config).map_err(GroupError::Config)?;
        let timeout = Duration::from_millis(connection.timeout_ms);
        runtime.block_on(async {
            match command {
                GroupCommand::List(a) => list(&client, timeout, a.format, out).await.map(|()| true),
                GroupCommand::Describe(a) => describe(client.clone(), a, timeout, out).await,
                GroupCommand::Watch(a) => watch(&client, a, timeout, out).await,
                GroupCommand::Join(_) => Ok(true),
            }
        })
    });
    let result = result.and_then(|ok| {
        out.flush()?;
        Ok(ok)
    });
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => exit_for(e, format, out),
    }
}

/// Reports why a `kcp group` command stopped, the same way for every subcommand: a setting or
/// argument error is a message on stderr and exit 2; a cluster error is the contract's JSON error
/// object on stdout (`--format json`) or a line on stderr (`--format text`), and exit 1; a closed
/// stdout ends quietly, any other output failure is a message and exit 1.
fn exit_for(error: GroupError, format: Format, out: &mut Out) -> ExitCode {
    match error {
        GroupError::Config(e) => {
            note(&format!("kcp: {}", clean(&e.to_string())));
            ExitCode::from(2)
        }
        GroupError::Usage(m) => {
            note(&format!("kcp: {m}"));
            ExitCode::from(2)
        }
        GroupError::Client(e) => {
            let written = match format {
                Format::Json => out.json_pretty(&client_error_json(&e)).and_then(|()| out.flush()),
                Format::Text => {
                    note(&format!("kcp: {}: {}", e.kind(), clean(e.message())));
                    Ok(())
                }
            };
            match written {
                Err(w) if !w.is_closed_pipe() => note(&format!("kcp: cannot write the output: {}", w.0)),
                _ => {}
            }
            ExitCode::from(1)
        }
        GroupError::Output(e) if e.is_closed_pipe() => ExitCode::SUCCESS,
        GroupError::Output(e) => {
            note(&format!("kcp: cannot write the output: {}", e.0));
            ExitCode::from(1)
        }
    }
}

/// The client configuration: `--command-config`, then `--bootstrap-server` over its
/// `bootstrap.servers`.
fn client_config(args: &ConnectionArgs) -> Result<ClientConfig, GroupError> {
    let mut config = match &args.command_config {
        Some(path) => ClientConfig::from_properties_file(path).map_err(GroupError::Config)?,
        None => ClientConfig::default(),
    };
    if let Some(servers) = &args.bootstrap_server {
        config.set_bootstrap([servers]).map_err(GroupError::Config)?;
    }
    if config.bootstrap_servers.is_empty() {
        return Err(GroupError::Usage(
            "no brokers to connect to: pass --bootstrap-server HOST:PORT or set bootstrap.servers in --command-config"
                .into(),
        ));
    }
    if !config.ignored_keys.is_empty() {
        let keys: Vec<String> = config.ignored_keys.iter().map(|k| clean(k).into_owned()).collect();
        note(&format!("kcp: ignoring --command-config keys that do not concern the connection: {}", keys.join(", ")));
    }
    Ok(config)
}

// ---------------------------------------------------------------------------------------------
// list

async fn list(client: &Client, timeout: Duration, format: Format, out: &mut Out) -> Result<(), GroupError> {
    let deadline = Deadline::after(timeout);
    let groups = client.list_groups(&ListGroupsFilter::default(), deadline).await?;
    match format {
        Format::Json => {
            let groups: Vec<Value> = groups
                .iter()
                .map(|g| {
                    json!({
                        "group_id": g.group_id,
                        "type": g.group_type.as_deref().unwrap_or("classic"),
                        "state": g.state,
                        "protocol_type": g.protocol_type,
                    })
                })
                .collect();
            out.json_pretty(&json!({ "groups": groups }))?;
        }
        Format::Text => {
            let rows: Vec<[String; 4]> = groups
                .iter()
                .map(|g| {
                    [
                        clean(&g.group_id).into_owned(),
                        g.group_type.clone().unwrap_or_else(|| "classic".into()),
                        clean(g.state.as_deref().unwrap_or("-")).into_owned(),
                        clean(if g.protocol_type.is_empty() { "-" } else { &g.protocol_type }).into_owned(),
                    ]
                })
                .collect();
            out.text(&table(&["GROUP", "TYPE", "STATE", "PROTOCOL TYPE"], &rows, ""))?;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// describe

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

/// Partition counts (and racks) of the topics seen so far, shared by the describing tasks.
struct Topics {
    known: Mutex<HashMap<String, Option<TopicInfo>>>,
}

impl Topics {
    /// Metadata for `names`, asking the cluster only for those not seen before.
    async fn get(
        &self,
        client: &Client,
        names: BTreeSet<String>,
        deadline: Deadline,
    ) -> Result<TopicCounts, ClientError> {
        let missing: Vec<String> = {
            let known = self.known.lock().unwrap_or_else(|e| e.into_inner());
            names.iter().filter(|n| !known.contains_key(*n)).cloned().collect()
        };
        if !missing.is_empty() {
            let refs: Vec<&str> = missing.iter().map(String::as_str).collect();
            let metadata = client.metadata(Some(&refs), deadline).await?;
            let mut known = self.known.lock().unwrap_or_else(|e| e.into_inner());
            for name in missing {
                let info = metadata.topic(&name).filter(|t| t.error_code == 0).map(|t| {
                    let racks: Vec<Vec<String>> = t
                        .partitions
                        .iter()
                        .map(|p| {
                            p.replicas.iter().filter_map(|r| metadata.broker(*r).and_then(|b| b.rack.clone())).collect()
                        })
                        .collect();
                    let any_rack = racks.iter().any(|r: &Vec<String>| !r.is_empty());
                    TopicInfo {
                        partitions: i32::try_from(t.partitions.len()).unwrap_or(i32::MAX),
                        partition_racks: if any_rack { racks } else { Vec::new() },
                    }
                });
                known.insert(name, info);
            }
        }
        let known = self.known.lock().unwrap_or_else(|e| e.into_inner());
        let mut counts = TopicCounts::default();
        for name in names {
            if let Some(Some(info)) = known.get(&name) {
                counts.topics.insert(name, info.clone());
            }
        }
        Ok(counts)
    }
}

/// One described group, ready to inspect.
enum Described {
    Classic(ClassicGroupDescription),
    Consumer(ConsumerGroupDescription),
}

/// One group's rendered output: its JSON and, in text mode, its table.
struct GroupOutput {
    json: Value,
    text: String,
}

/// One group's output, or its error as JSON and as a line for stderr.
type Rendered = Result<GroupOutput, (Value, String)>;

async fn describe(client: Client, args: &DescribeArgs, timeout: Duration, out: &mut Out) -> Result<bool, GroupError> {
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
    let topics = Arc::new(Topics { known: Mutex::new(HashMap::new()) });
    let format = args.format;

    // An ordered window of tasks: results are written in the order asked while later chunks
    // are already being described.
    let mut chunks = wanted.chunks(CHUNK).map(<[_]>::to_vec).collect::<VecDeque<_>>();
    let mut running: VecDeque<tokio::task::JoinHandle<Result<Vec<Rendered>, ClientError>>> = VecDeque::new();
    let mut all_ok = true;
    let mut first = true;
    let mut tables_written = 0usize;
    if as_array && format == Format::Json {
        out.text("[")?;
    }
    let mut fatal = None;
    loop {
        while running.len() < IN_FLIGHT {
            let Some(chunk) = chunks.pop_front() else { break };
            let (client, topics) = (client.clone(), topics.clone());
            running.push_back(tokio::spawn(
                async move { describe_chunk(&client, &topics, chunk, deadline, format).await },
            ));
        }
        let Some(next) = running.pop_front() else { break };
        let rendered = match next.await {
            Ok(Ok(rendered)) => rendered,
            Ok(Err(e)) => {
                fatal = Some(e);
                break;
            }
            Err(e) => {
                fatal = Some(ClientError::new(ErrorKind::Protocol, format!("a describe task failed: {e}")));
                break;
            }
        };
        for group in rendered {
            let (value, text) = match group {
                Ok(GroupOutput { json, text }) => (json, text),
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
        }
        out.flush()?;
    }
    for task in running {
        task.abort();
    }
    if let Some(e) = fatal {
        if as_array && format == Format::Json {
            out.text(if first { "\n" } else { ",\n" })?;
            out.text(&serde_json::to_string_pretty(&client_error_json(&e)).map_err(WriteFailed::from)?)?;
            out.text("\n]\n")?;
            return Ok(false);
        }
        return Err(GroupError::Client(e));
    }
    if as_array && format == Format::Json {
        out.text(if first { "]\n" } else { "\n]\n" })?;
    }
    Ok(all_ok)
}

/// Describes one chunk of groups (each kind with its API, every coordinator in parallel),
/// fetches the metadata of their topics, inspects and renders them, in the chunk's order.
async fn describe_chunk(
    client: &Client,
    topics: &Topics,
    chunk: Vec<(String, Kind)>,
    deadline: Deadline,
    format: Format,
) -> Result<Vec<Rendered>, ClientError> {
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
    let metadata = if names.is_empty() { TopicCounts::default() } else { topics.get(client, names, deadline).await? };

    let mut rendered = Vec::with_capacity(chunk.len());
    for (name, _) in &chunk {
        let value = match found.remove(name) {
            Some(Ok(Described::Classic(g))) => {
                let (json, extra) = classic_json(&g, &metadata);
                let text = if format == Format::Text { text_of_group(&json, &extra) } else { String::new() };
                Ok(GroupOutput { json, text })
            }
            Some(Ok(Described::Consumer(g))) => {
                let json = consumer_json(&g, &metadata);
                let text = if format == Format::Text { text_of_group(&json, &[]) } else { String::new() };
                Ok(GroupOutput { json, text })
            }
            Some(Err(e)) => {
                let mut v = client_error_json(&e);
                v["group_id"] = Value::String(name.clone());
                let line = format!("kcp: group {}: {}: {}", clean(name), e.kind(), clean(e.message()));
                Err((json!({"group_id": name, "error": v["error"]}), line))
            }
            None => Err((
                json!({"group_id": name, "error": {"kind": "protocol", "message": "the cluster answered nothing for this group"}}),
                format!("kcp: group {}: protocol: the cluster answered nothing for this group", clean(name)),
            )),
        };
        rendered.push(value);
    }
    Ok(rendered)
}

/// The topics a described group's members subscribe to, claim or are assigned.
fn topic_names(described: &Described, names: &mut BTreeSet<String>) {
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

fn groups_json(groups: &[TopicPartitions]) -> Value {
    Value::Array(groups.iter().map(|g| json!({"topic": g.topic, "partitions": g.partitions})).collect())
}

fn coordinator_json(b: &Broker) -> Value {
    json!({"node_id": b.node_id, "host": b.host, "port": b.port})
}

fn sticky_json(format: &str, data: &StickyUserData) -> Value {
    json!({"format": format, "previous_assignment": groups_json(&data.previous_assignment), "generation": data.generation})
}

fn user_data_json(reading: Option<&UserDataReading>) -> Value {
    match reading {
        None => Value::Null,
        Some(UserDataReading::CooperativeSticky(d)) => {
            json!({"format": "cooperative_sticky", "generation": d.generation})
        }
        Some(UserDataReading::Sticky { data, format }) => {
            sticky_json(if *format == StickyUserDataFormat::V0 { "sticky_v0" } else { "sticky_v1" }, data)
        }
        Some(UserDataReading::KafkaPythonSticky(data)) => sticky_json("kafka_python_sticky", data),
        Some(_) => json!({"format": "custom"}),
    }
}

fn payload_json<T>(payload: &Payload<T>, decoded: impl Fn(&T) -> Value) -> Value {
    match payload {
        Payload::Decoded(value) => decoded(value),
        Payload::NotReported => Value::Null,
        Payload::Undecodable { error, bytes } => {
            let mut v = decode_error_json(error);
            v["hex"] = Value::String(to_hex(bytes));
            v
        }
        Payload::Opaque(bytes) => json!({"hex": to_hex(bytes)}),
    }
}

/// A finding as the contract shows it.
pub fn diagnostic_json(d: &Diagnostic) -> Value {
    json!({
        "kind": d.kind.code(),
        "topic": d.topic,
        "partition": d.partition,
        "partitions": groups_json(&d.partitions),
        "members": d.members,
        "message": d.message,
        "payload": d.payload.map(|p| p.as_str()),
        "repair": d.repair,
        "blocks_online_upgrade": d.blocks_online_upgrade,
    })
}

fn classic_member_json(m: &DescribedGroupMember, r: &ClassicMemberReport) -> Value {
    let mut subscription = payload_json(&r.subscription, |s| subscription_json(&s.view()));
    if r.subscription.decoded().is_some() {
        subscription["user_data_decoded"] = user_data_json(r.user_data.as_ref());
    }
    json!({
        "member_id": m.member_id,
        "group_instance_id": m.group_instance_id,
        "client_id": m.client_id,
        "client_host": m.client_host,
        "subscription": subscription,
        "assignment": payload_json(&r.assignment, |a| assignment_json(&a.view())),
    })
}

/// `describe`'s object for a classic group, and for the text table each member's generation
/// and claims as the inspection worked them out.
fn classic_json(described: &ClassicGroupDescription, metadata: &TopicCounts) -> (Value, Vec<Value>) {
    let group = &described.group;
    let report = inspect_classic(group, metadata);
    let extra = report
        .members
        .iter()
        .map(|r| json!({"generation": r.generation(), "owned": groups_json(&r.claims())}))
        .collect();
    (classic_report_json(group, &report, &described.coordinator), extra)
}

fn classic_report_json(group: &ClassicGroup, report: &ClassicGroupReport, coordinator: &Broker) -> Value {
    let members: Vec<Value> =
        group.members.iter().zip(&report.members).map(|(m, r)| classic_member_json(m, r)).collect();
    json!({
        "group_id": group.group_id,
        "type": "classic",
        "state": group.state,
        "protocol_type": group.protocol_type,
        "protocol": group.protocol,
        "coordinator": coordinator_json(coordinator),
        "members": members,
        "diagnostics": report.diagnostics.iter().map(diagnostic_json).collect::<Vec<_>>(),
    })
}

/// `describe`'s object for a KIP-848 group.
fn consumer_json(described: &ConsumerGroupDescription, metadata: &TopicCounts) -> Value {
    let group = &described.group;
    let report = inspect_consumer(group, metadata);
    let members: Vec<Value> = group
        .members
        .iter()
        .map(|m| {
            json!({
                "member_id": m.member_id,
                "group_instance_id": m.instance_id,
                "client_id": m.client_id,
                "client_host": m.client_host,
                "rack_id": m.rack_id,
                "member_epoch": m.member_epoch,
                "member_type": m.member_type.as_str(),
                "subscribed_topics": m.subscribed_topics,
                "subscribed_topic_regex": m.subscribed_topic_regex,
                "assignment": groups_json(&m.assignment),
                "target_assignment": groups_json(&m.target_assignment),
            })
        })
        .collect();
    json!({
        "group_id": group.group_id,
        "type": "consumer",
        "state": group.state,
        "protocol_type": "consumer",
        "protocol": Value::Null,
        "group_epoch": group.group_epoch,
        "assignment_epoch": group.assignment_epoch,
        "assignor": group.assignor,
        "coordinator": coordinator_json(&described.coordinator),
        "members": members,
        "diagnostics": report.diagnostics.iter().map(diagnostic_json).collect::<Vec<_>>(),
    })
}

// ---------------------------------------------------------------------------------------------
// text

/// `orders 0-2,5; audit 1` from partition groups (JSON form).
fn partitions_text(groups: &Value) -> String {
    let Some(groups) = groups.as_array() else { return "-".into() };
    let parts: Vec<String> = groups
        .iter()
        .filter_map(|g| {
            let topic = g.get("topic")?.as_str()?;
            let ids: Vec<i64> = g.get("partitions")?.as_array()?.iter().filter_map(Value::as_i64).collect();
            Some(format!("{} {}", clean(topic), ranges(&ids)))
        })
        .collect();
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join("; ")
    }
}

/// `0-2,5` (ids sorted first; duplicates kept visible as repeats).
fn ranges(ids: &[i64]) -> String {
    let mut ids = ids.to_vec();
    ids.sort_unstable();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let start = ids[i];
        let mut end = start;
        while i + 1 < ids.len() && ids[i + 1] == end + 1 {
            i += 1;
            end = ids[i];
        }
        out.push(if end > start { format!("{start}-{end}") } else { start.to_string() });
        i += 1;
    }
    out.join(",")
}

/// A table with a header, columns as wide as their widest cell.
fn table<const N: usize>(header: &[&str; N], rows: &[[String; N]], indent: &str) -> String {
    let mut widths: [usize; N] = header.map(|h| h.chars().count());
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let line = |cells: Vec<&str>, out: &mut String| {
        out.push_str(indent);
        let last = cells.len() - 1;
        for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
            out.push_str(cell);
            if i < last {
                out.push_str(&" ".repeat(w - cell.chars().count() + 2));
            }
        }
        out.push('\n');
    };
    line(header.to_vec(), &mut out);
    for row in rows {
        line(row.iter().map(String::as_str).collect(), &mut out);
    }
    out
}

fn str_of(v: &Value) -> String {
    match v {
        Value::Null => "-".into(),
        Value::String(s) if s.is_empty() => "-".into(),
        Value::String(s) => clean(s).into_owned(),
        other => other.to_string(),
    }
}

/// The table of one described group (from its JSON, so text shows exactly what JSON says;
/// `extra` has each classic member's generation and claims).
fn text_of_group(v: &Value, extra: &[Value]) -> String {
    let consumer = v["type"] == "consumer";
    let c = &v["coordinator"];
    let mut out = format!(
        "group {} ({}, {}, {}; coordinator {} at {}:{})\n",
        str_of(&v["group_id"]),
        str_of(&v["type"]),
        str_of(&v["state"]),
        if consumer {
            format!(
                "assignor {}, group epoch {}, assignment epoch {}",
                str_of(&v["assignor"]),
                v["group_epoch"],
                v["assignment_epoch"]
            )
        } else {
            format!("protocol {}", str_of(&v["protocol"]))
        },
        c["node_id"],
        str_of(&c["host"]),
        c["port"]
    );
    let members = v["members"].as_array().cloned().unwrap_or_default();
    if members.is_empty() {
        out.push_str("  no members\n");
    }
    let rows: Vec<[String; 6]> = members
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let mut member = str_of(&m["member_id"]);
            if let Some(instance) = m["group_instance_id"].as_str() {
                member.push_str(&format!(" (static {})", clean(instance)));
            }
            if consumer {
                if m["member_type"] == "classic" {
                    member.push_str(" (classic)");
                }
                [
                    member,
                    str_of(&m["client_id"]),
                    str_of(&m["rack_id"]),
                    format!("epoch {}", m["member_epoch"]),
                    partitions_text(&m["assignment"]),
                    partitions_text(&m["target_assignment"]),
                ]
            } else {
                let sub = &m["subscription"];
                let asg = &m["assignment"];
                let payload = |p: &Value, groups: &Value| {
                    if p.is_null() {
                        "(rebalancing)".to_owned()
                    } else if p.get("error").is_some() {
                        format!("undecodable: {}", str_of(&p["error"]["kind"]))
                    } else if p.get("hex").is_some() {
                        "(not a consumer payload)".to_owned()
                    } else {
                        partitions_text(groups)
                    }
                };
                let generation = extra.get(i).map_or(Value::Null, |e| e["generation"].clone());
                let owned = extra.get(i).map_or(Value::Null, |e| e["owned"].clone());
                [
                    member,
                    str_of(&m["client_id"]),
                    if sub.get("kind").is_some() { str_of(&sub["rack_id"]) } else { "-".into() },
                    str_of(&generation),
                    payload(sub, &owned),
                    payload(asg, &asg["assigned_partitions"]),
                ]
            }
        })
        .collect();
    if !rows.is_empty() {
        let header = if consumer {
            ["MEMBER", "CLIENT", "RACK", "EPOCH", "OWNED", "TARGET"]
        } else {
            ["MEMBER", "CLIENT", "RACK", "GENERATION", "OWNED", "ASSIGNED"]
        };
        out.push_str(&table(&header, &rows, "  "));
    }
    let diagnostics = v["diagnostics"].as_array().cloned().unwrap_or_default();
    if diagnostics.is_empty() {
        out.push_str("  no findings\n");
    } else {
        out.push_str("  findings:\n");
        for d in &diagnostics {
            out.push_str(&format!("    {}: {}\n", str_of(&d["kind"]), str_of(&d["message"])));
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// watch

/// Wall-clock time as RFC 3339 with milliseconds (`2026-01-02T03:04:05.123Z`).
fn now_ts() -> String {
    let since_epoch = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let micros = super::pcap::rfc3339(since_epoch);
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

async fn watch(client: &Client, args: &WatchArgs, timeout: Duration, out: &mut Out) -> Result<bool, GroupError> {
    let topics = Topics { known: Mutex::new(HashMap::new()) };
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
            Err(e) if is_fatal(&e) => return Err(GroupError::Client(e)),
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
    fn partition_ranges_read_at_a_glance() {
        assert_eq!(ranges(&[5, 0, 1, 2]), "0-2,5");
        assert_eq!(ranges(&[3]), "3");
        assert_eq!(ranges(&[1, 1]), "1,1");
        assert_eq!(
            partitions_text(
                &json!([{"topic": "orders", "partitions": [0, 1, 2, 5]}, {"topic": "a\u{1b}", "partitions": [1]}])
            ),
            "orders 0-2,5; a\\u{1b} 1"
        );
        assert_eq!(partitions_text(&json!([])), "-");
    }

    #[test]
    fn tables_align_their_columns() {
        let rows = [["a".to_string(), "bbb".to_string()], ["cccc".to_string(), "d".to_string()]];
        assert_eq!(table(&["X", "Y"], &rows, "  "), "  X     Y\n  a     bbb\n  cccc  d\n");
    }

    #[test]
    fn timestamps_have_milliseconds() {
        let ts = now_ts();
        assert_eq!(ts.len(), "2026-01-02T03:04:05.123Z".len(), "{ts}");
        assert!(ts.ends_with('Z') && ts.as_bytes()[19] == b'.', "{ts}");
    }
}
