//! `kcp group join`: one real group member, the crate's coordinator on the network, printing its
//! listener callbacks as JSON lines until `--duration-s`, SIGINT or SIGTERM.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kafka_consumer_protocol::assignor::leader::LeaderError;
use kafka_consumer_protocol::assignor::{builtin, PartitionAssignor};
use kafka_consumer_protocol::client::member::{
    ClientTransport, MemberConfig, MemberControl, MemberDriver, MemberError, MemberEvent, TransportErrorKind,
};
use kafka_consumer_protocol::client::ClientConfig;
use kafka_consumer_protocol::coordinator::{CoordinatorError, PartitionOffset};
use kafka_consumer_protocol::PartitionSet;
use kafka_consumer_protocol::TopicPartitions;
use serde_json::{json, Map, Value};

use kafka_consumer_protocol::client::{ClientError, ErrorKind};

use crate::out::{Out, WriteFailed};
use crate::CliError;

/// `kcp group join`'s member options (the connection options are `group::ConnectionArgs`).
#[derive(clap::Args, Debug)]
pub struct MemberArgs {
    /// The group to join.
    #[arg(long)]
    pub group: String,
    /// Topics to subscribe to, comma-separated.
    #[arg(long, value_delimiter = ',', required = true)]
    pub topics: Vec<String>,
    /// Assignors in preference order, comma-separated (Java's default: range,cooperative-sticky).
    #[arg(long, value_delimiter = ',', default_value = "range,cooperative-sticky")]
    pub assignors: Vec<String>,
    /// `group.instance.id`: a static member (KIP-345), which never sends LeaveGroup.
    #[arg(long)]
    pub instance_id: Option<String>,
    /// `client.rack`, sent in the subscription (KIP-881).
    #[arg(long)]
    pub rack: Option<String>,
    /// `session.timeout.ms`.
    #[arg(long, default_value_t = 45_000)]
    pub session_timeout_ms: u64,
    /// `max.poll.interval.ms`, the rebalance timeout.
    #[arg(long, default_value_t = 300_000)]
    pub rebalance_timeout_ms: u64,
    /// `heartbeat.interval.ms` (default: 3000, or a third of a shorter session timeout).
    #[arg(long)]
    pub heartbeat_interval_ms: Option<u64>,
    /// Leave the group after this many seconds (default: run until SIGINT or SIGTERM).
    #[arg(long)]
    pub duration_s: Option<u64>,
    /// `client.id` (member ids start with it; overrides --command-config).
    #[arg(long)]
    pub client_id: Option<String>,
    /// On each assignment, commit this position for the partitions assigned: `end` (the
    /// log-end offset: skip everything) or an offset. A dry run (`would_commit` lines) unless
    /// `--execute` is given.
    #[arg(long, value_name = "end|OFFSET")]
    pub commit_at: Option<String>,
    /// Really commit what `--commit-at` says.
    #[arg(long, requires = "commit_at")]
    pub execute: bool,
}

/// Where `--commit-at` moves the group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommitAt {
    /// The log-end offset of each partition.
    End,
    /// This offset in every partition.
    Offset(i64),
}

/// `--commit-at`'s value.
pub fn parse_commit_at(value: &str) -> Result<CommitAt, UsageError> {
    match value.trim() {
        "end" => Ok(CommitAt::End),
        v => match v.parse::<i64>() {
            Ok(o) if o >= 0 => Ok(CommitAt::Offset(o)),
            _ => Err(UsageError(format!("--commit-at: 'end' or an offset of 0 or more, not '{value}'"))),
        },
    }
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

fn partitions(list: &[TopicPartitions]) -> Value {
    Value::Array(list.iter().map(|g| json!({"topic": g.topic, "partitions": g.partitions})).collect())
}

/// `[{"topic", "partition", "offset"}]`.
fn offsets_json(offsets: &[PartitionOffset]) -> Value {
    Value::Array(
        offsets.iter().map(|o| json!({"topic": o.topic, "partition": o.partition, "offset": o.offset})).collect(),
    )
}

/// The contract's `error` object of a member error.
pub fn error_json(error: &MemberError) -> Value {
    let mut out = Map::new();
    match error {
        MemberError::Transport(e) => {
            out.insert("kind".into(), json!(e.kind.as_str()));
        }
        MemberError::Coordinator(CoordinatorError::Broker { api, error }) => {
            let kind = if error.name() == "GROUP_AUTHORIZATION_FAILED" { "authorization" } else { "broker" };
            out.insert("kind".into(), json!(kind));
            out.insert("api".into(), json!(api));
            out.insert("code".into(), json!(error.0));
            out.insert("name".into(), json!(error.name()));
        }
        MemberError::Coordinator(CoordinatorError::Leader(LeaderError::Assign(_))) => {
            out.insert("kind".into(), json!("assignor"));
        }
        MemberError::Coordinator(_) => {
            out.insert("kind".into(), json!("protocol"));
        }
        _ => {
            out.insert("kind".into(), json!("protocol"));
        }
    }
    out.insert("message".into(), json!(error.to_string()));
    Value::Object(out)
}

/// One event as the contract's JSON line (without `ts_ms`).
pub fn event_json(event: &MemberEvent) -> Value {
    match event {
        MemberEvent::Joined { member_id, generation_id, protocol, assignor, leader } => json!({
            "event": "joined", "member_id": member_id, "generation_id": generation_id,
            "protocol": protocol.as_str(), "assignor": assignor, "leader": leader,
        }),
        MemberEvent::Revoked { generation_id, partitions: p, owned } => json!({
            "event": "revoked", "generation_id": generation_id, "partitions": partitions(p), "owned": partitions(owned),
        }),
        MemberEvent::Assigned { generation_id, partitions: p, owned, committed } => json!({
            "event": "assigned", "generation_id": generation_id, "partitions": partitions(p), "owned": partitions(owned),
            "committed": offsets_json(committed),
        }),
        MemberEvent::Lost { generation_id, partitions: p, owned } => json!({
            "event": "lost", "generation_id": generation_id, "partitions": partitions(p), "owned": partitions(owned),
        }),
        MemberEvent::Error { error, fatal } => json!({"event": "error", "fatal": fatal, "error": error_json(error)}),
        MemberEvent::Left => json!({"event": "left"}),
        _ => json!({"event": "unknown"}),
    }
}

/// Prints one JSON line with `ts_ms` first and flushes it (a killed process loses nothing it
/// printed, and logs of several processes merge by time).
fn print_line(out: &mut Out, value: Value) -> Result<(), WriteFailed> {
    let mut line = Map::new();
    line.insert("ts_ms".into(), json!(now_ms()));
    if let Value::Object(rest) = value {
        line.extend(rest);
    }
    out.json_line(&Value::Object(line))?;
    out.flush()
}

/// How the member ended (`ok`: it left; else a fatal error, already printed), unless the output
/// failed: a closed pipe keeps the outcome (the reader has gone, nobody to tell), any other write
/// error is the error to report.
fn outcome(ok: bool, output: Option<WriteFailed>) -> Result<(), CliError> {
    match output {
        Some(e) if !e.is_closed_pipe() => Err(CliError::Output(e)),
        _ if ok => Ok(()),
        _ => Err(CliError::Reported),
    }
}

/// Why `kcp group join` could not start: a usage error (exit 2).
#[derive(Debug)]
pub struct UsageError(pub String);

/// The member configuration and assignors `args` describe.
pub fn member_config(
    args: &MemberArgs,
    request_timeout_ms: u64,
    startup_timeout: Duration,
) -> Result<(MemberConfig, Vec<Box<dyn PartitionAssignor>>), UsageError> {
    let topics: Vec<String> = args.topics.iter().map(|t| t.trim().to_string()).filter(|t| !t.is_empty()).collect();
    if topics.is_empty() {
        return Err(UsageError("--topics: give at least one topic".into()));
    }
    let mut assignors = Vec::new();
    for name in args.assignors.iter().map(|a| a.trim()).filter(|a| !a.is_empty()) {
        let assignor = builtin(name).ok_or_else(|| {
            UsageError(format!(
                "--assignors: unknown assignor '{name}' (range, roundrobin, sticky, cooperative-sticky)"
            ))
        })?;
        assignors.push(assignor);
    }
    if assignors.is_empty() {
        return Err(UsageError("--assignors: give at least one assignor".into()));
    }
    if args.session_timeout_ms == 0 || args.session_timeout_ms > i32::MAX as u64 {
        return Err(UsageError("--session-timeout-ms: between 1 and 2147483647".into()));
    }
    if args.rebalance_timeout_ms == 0 || args.rebalance_timeout_ms > i32::MAX as u64 - 5_000 {
        return Err(UsageError("--rebalance-timeout-ms: between 1 and 2147478647".into()));
    }
    let mut config = MemberConfig::new(args.group.clone(), topics);
    let c = &mut config.coordinator;
    c.group_instance_id = args.instance_id.clone();
    c.client_rack = args.rack.clone();
    c.session_timeout_ms = args.session_timeout_ms;
    c.rebalance_timeout_ms = args.rebalance_timeout_ms;
    c.heartbeat_interval_ms =
        args.heartbeat_interval_ms.unwrap_or_else(|| 3_000u64.min(args.session_timeout_ms / 3).max(1));
    c.request_timeout_ms = request_timeout_ms;
    config.startup_timeout = Some(startup_timeout);
    Ok((config, assignors))
}

/// Runs the member until it leaves or stops; `Err` after a fatal error (`Reported`: exit 1) or
/// when the output could not be written (`Ok` when the reader of a pipe went away).
pub fn run(args: &MemberArgs, mut client: ClientConfig, timeout: Duration, out: &mut Out) -> Result<(), CliError> {
    if let Some(id) = &args.client_id {
        client.client_id = id.clone();
    }
    let request_timeout_ms = client.request_timeout.as_millis() as u64;
    let (config, assignors) =
        member_config(args, request_timeout_ms, timeout).map_err(|UsageError(message)| CliError::Usage(message))?;
    let commit_at = match &args.commit_at {
        Some(v) => Some(parse_commit_at(v).map_err(|UsageError(message)| CliError::Usage(message))?),
        None => None,
    };
    let transport = ClientTransport::new(client).map_err(CliError::config)?;
    let commit = commit_at.map(|at| Committer { at, execute: args.execute, transport: transport.clone(), timeout });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Client(ClientError::new(ErrorKind::Unreachable, format!("no runtime: {e}"))))?;
    runtime.block_on(join(transport, config, assignors, args.duration_s, timeout, commit, out))
}

/// `--commit-at`: what to commit on each assignment, and whether to.
struct Committer {
    at: CommitAt,
    execute: bool,
    transport: ClientTransport,
    timeout: Duration,
}

impl Committer {
    /// The line to print for the partitions just assigned: `committed` (or `would_commit` in a
    /// dry run) with each partition's offset and what was committed before (`from`, null for
    /// none), or a non-fatal `error`.
    async fn on_assigned(
        &self,
        control: &MemberControl,
        assigned: &[TopicPartitions],
        before: &[PartitionOffset],
    ) -> Option<Value> {
        let pairs: Vec<(String, i32)> =
            PartitionSet::from_groups(assigned).iter().map(|(t, p)| (t.to_string(), p)).collect();
        if pairs.is_empty() {
            return None;
        }
        let offsets: Vec<PartitionOffset> = match self.at {
            CommitAt::Offset(o) => pairs.iter().map(|(t, p)| PartitionOffset::new(t.clone(), *p, o)).collect(),
            CommitAt::End => match self.transport.end_offsets(&pairs, self.timeout).await {
                Ok(ends) => ends.into_iter().map(|((t, p), o)| PartitionOffset::new(t, p, o)).collect(),
                Err(e) => return Some(commit_error(&e.to_string())),
            },
        };
        let lines: Vec<Value> = offsets
            .iter()
            .map(|o| {
                let from = before.iter().find(|b| b.topic == o.topic && b.partition == o.partition).map(|b| b.offset);
                json!({"topic": o.topic, "partition": o.partition, "offset": o.offset, "from": from})
            })
            .collect();
        if !self.execute {
            return Some(json!({"event": "would_commit", "dry_run": true, "offsets": lines}));
        }
        match control.commit(offsets).await {
            Ok(_) => Some(json!({"event": "committed", "offsets": lines})),
            Err(e) => Some(commit_error(&e.to_string())),
        }
    }
}

fn commit_error(message: &str) -> Value {
    json!({"event": "error", "fatal": false, "error": {"kind": "commit", "message": message}})
}

async fn join(
    transport: ClientTransport,
    config: MemberConfig,
    assignors: Vec<Box<dyn PartitionAssignor>>,
    duration_s: Option<u64>,
    leave_timeout: Duration,
    commit: Option<Committer>,
    out: &mut Out,
) -> Result<(), CliError> {
    let mut member = MemberDriver::start(transport, config, assignors).map_err(|e| CliError::Usage(e.to_string()))?;
    let control = member.control();
    let stop = stop_signal(duration_s);
    tokio::pin!(stop);
    let mut leave_deadline: Option<tokio::time::Instant> = None;
    // The first write error: the member then leaves as on SIGTERM and prints nothing more.
    let mut output_failed: Option<WriteFailed> = None;
    loop {
        let delivery = tokio::select! {
            d = member.next() => d,
            () = &mut stop, if leave_deadline.is_none() => {
                member.leave();
                // A member that cannot reach the group does not keep the command alive.
                leave_deadline = Some(tokio::time::Instant::now() + leave_timeout);
                continue;
            }
            () = sleep_until_opt(leave_deadline) => {
                if output_failed.is_none() {
                    output_failed = print_line(out, json!({"event": "error", "fatal": true,
                        "error": {"kind": TransportErrorKind::Timeout.as_str(), "message": "could not leave the group within --timeout-ms"}})).err();
                }
                return outcome(false, output_failed);
            }
        };
        let Some(delivery) = delivery else { return outcome(true, output_failed) };
        if output_failed.is_none() {
            if let Err(e) = print_line(out, event_json(&delivery.event)) {
                output_failed = Some(e);
                if leave_deadline.is_none() {
                    member.leave();
                    leave_deadline = Some(tokio::time::Instant::now() + leave_timeout);
                }
            }
        }
        if let (Some(c), MemberEvent::Assigned { partitions, committed, .. }) = (&commit, &delivery.event) {
            // Before acknowledging: the member is stable in this generation until then.
            if let Some(line) = c.on_assigned(&control, partitions, committed).await {
                if output_failed.is_none() {
                    output_failed = print_line(out, line).err();
                }
            }
        }
        match delivery.event {
            MemberEvent::Error { fatal: true, .. } => return outcome(false, output_failed),
            MemberEvent::Left => return outcome(true, output_failed),
            // Printing is all this member does with its partitions: acknowledge at once.
            _ => delivery.ack(),
        }
    }
}

async fn sleep_until_opt(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Completes on SIGINT, SIGTERM or after `duration_s`.
pub(super) async fn stop_signal(duration_s: Option<u64>) {
    let duration = async {
        match duration_s {
            Some(s) => tokio::time::sleep(Duration::from_secs(s)).await,
            None => std::future::pending().await,
        }
    };
    let interrupt = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = duration => {}
        () = interrupt => {}
        () = terminate => {}
    }
}
