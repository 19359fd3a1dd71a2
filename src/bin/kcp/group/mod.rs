//! `kcp group list | describe | watch | join | upgrade-check | reset-offsets | delete-offsets |
//! delete | history`: a running cluster's consumer groups, decoded, the actions that fix them, and
//! (`history`) their past from `__consumer_offsets` segment files.
//!
//! The network is `kafka_consumer_protocol::client`; the decoding and the diagnostics are
//! `kafka_consumer_protocol::inspect`. This module holds the arguments and the client
//! configuration and runs a subcommand; each subcommand has its file (`list`, `describe`,
//! `watch`, `join`, `upgrade_check`, `reset_offsets`, `delete_offsets`, `delete`; `writes` what
//! the three write actions share, `offsets` the offsets and lag views), `topics` the metadata cache they share, `json` the contract's objects and
//! `table` the text tables. Errors end the command through the binary's one exit policy
//! (`crate::finish`).

mod delete;
mod delete_offsets;
mod describe;
mod history;
mod join;
pub(crate) mod json;
mod list;
pub(crate) mod offsets;
mod reset_offsets;
mod table;
pub(crate) mod upgrade_check;
pub(crate) mod watch;
mod writes;

use std::path::PathBuf;
use std::time::Duration;

use kafka_consumer_protocol::client::{Client, ClientConfig, ClientError, ErrorKind};
use kafka_consumer_protocol::inspect::watch::StormThreshold;

use super::out::{note, Out};
use super::text::clean;
use super::{CliError, Format};
use describe::Outcome;

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
    /// Will the broker convert a classic group to the consumer protocol (KIP-848) when its
    /// members restart with group.protocol=consumer?
    ///
    /// One check per condition of the group coordinator (as Kafka 3.x or 4.x applies them), with
    /// its evidence and advice, the verdict (ready, blocked, unknown) and what the broker will
    /// answer. --downgrade checks consumer groups for the way back to classic. One JSON object
    /// for one --group, an array for several or --all-groups; exit status 1 when a group could
    /// not be judged.
    UpgradeCheck(upgrade_check::UpgradeCheckArgs),
    /// Reset a group's committed offsets (to earliest, latest, a time, a shift, an offset or a
    /// file), as kafka-consumer-groups.sh --reset-offsets; a dry run unless --execute.
    ///
    /// Refused (exit 1, error kind `active_group`, naming the members) while the group has
    /// members. Prints every partition's offset before and after.
    ResetOffsets(reset_offsets::ResetOffsetsArgs),
    /// Delete a group's committed offsets of some partitions; a dry run unless --execute.
    ///
    /// Refused while the group has members. Prints every partition's offset before and after.
    DeleteOffsets(delete_offsets::DeleteOffsetsArgs),
    /// Delete groups and their committed offsets; a dry run unless --execute.
    ///
    /// Refused while any of the groups has members (nothing is deleted then).
    Delete(delete::DeleteArgs),
    /// What happened to groups, from `__consumer_offsets`: live from the cluster (--from, --follow)
    /// or from segment files copied off a broker (--log-dir, --file):
    /// generations, members joined/left/rejoined, partitions moved, commits (`--records`: every
    /// record decoded, as JSON lines).
    History(history::HistoryArgs),
}

/// `kcp group join`.
#[derive(clap::Args, Debug)]
pub struct JoinArgs {
    #[command(flatten)]
    pub connection: ConnectionArgs,
    #[command(flatten)]
    pub member: join::MemberArgs,
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
    /// Deadline in milliseconds: of the whole command for list, describe, reset-offsets,
    /// delete-offsets and delete; of each poll for watch; of each collection for serve; of each request for history; for join, of the first contact with
    /// the cluster and of the leave (not of the run, which --duration-s or a signal ends).
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
    /// Which log end the lag is measured to: the high watermark (read-uncommitted, Kafka's
    /// tool's) or the last stable offset (read-committed).
    #[arg(long, value_enum, default_value = "read-uncommitted")]
    pub isolation: offsets::Isolation,
    /// Output format: the JSON contract, or a table per group.
    #[arg(long, value_enum, default_value = "json")]
    pub format: Format,
}

/// The lag status rules (`inspect::lag`), as `watch` and `serve` take them.
#[derive(clap::Args, Debug, Clone, Copy)]
pub struct LagRuleArgs {
    /// Lag status: samples kept per partition (Burrow's intervals).
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=1000))]
    pub lag_window: u64,
    /// Lag status: samples needed before anything but OK or ERR is said.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub lag_min_samples: usize,
    /// Lag status: lag at or below this is OK (Burrow's allowed-lag).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub allowed_lag: i64,
    /// Lag status: a sample closer than this to the previous one replaces it (Burrow's min-distance).
    #[arg(long, value_name = "MS", default_value_t = 0)]
    pub lag_min_distance_ms: u64,
}

impl LagRuleArgs {
    /// The evaluator's rules.
    pub fn rules(&self) -> kafka_consumer_protocol::inspect::lag::LagRules {
        kafka_consumer_protocol::inspect::lag::LagRules {
            window: usize::try_from(self.lag_window).unwrap_or(10),
            min_samples: self.lag_min_samples,
            allowed_lag: self.allowed_lag,
            min_distance_ms: self.lag_min_distance_ms,
        }
    }
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
    /// Which log end the lag is measured to (see `describe`).
    #[arg(long, value_enum, default_value = "read-uncommitted")]
    pub isolation: offsets::Isolation,
    #[command(flatten)]
    pub lag: LagRuleArgs,
    /// Wait for a group that does not exist yet (without it, such a group is `not_found`,
    /// exit 1, as `describe` says).
    #[arg(long)]
    pub wait_for_group: bool,
    /// Output format: JSON lines (the contract), or one line of text per event.
    #[arg(long, value_enum, default_value = "json")]
    pub format: Format,
}

impl GroupCommand {
    /// The format the subcommand's errors are reported in (`watch` and `join` print JSON lines).
    pub fn format(&self) -> Format {
        match self {
            GroupCommand::List(a) => a.format,
            GroupCommand::Describe(a) => a.format,
            GroupCommand::UpgradeCheck(a) => a.format,
            GroupCommand::History(a) => a.format,
            GroupCommand::Watch(a) => a.format,
            GroupCommand::Join(_) => Format::Json,
            GroupCommand::ResetOffsets(a) => a.format,
            GroupCommand::DeleteOffsets(a) => a.format,
            GroupCommand::Delete(a) => a.format,
        }
    }
}

/// Runs one `kcp group` subcommand and prints its output. `Err(CliError::Reported)` when it
/// printed a failure itself (a group that could not be described, a watch that never saw the
/// group, a member's fatal error): exit 1.
pub fn run_group(command: &GroupCommand, out: &mut Out) -> Result<(), CliError> {
    let connection = match command {
        // Offline: files only, no cluster.
        GroupCommand::History(a) if a.offline() => return history::run(a, out),
        GroupCommand::History(a) => &a.connection,
        GroupCommand::List(a) => &a.connection,
        GroupCommand::Describe(a) => &a.connection,
        GroupCommand::Watch(a) => &a.connection,
        GroupCommand::UpgradeCheck(a) => &a.connection,
        GroupCommand::ResetOffsets(a) => &a.connection,
        GroupCommand::DeleteOffsets(a) => &a.connection,
        GroupCommand::Delete(a) => &a.connection,
        // A member prints its own JSON lines and runs until it leaves; an error before it starts
        // is reported as `watch`'s are (the JSON form: `join` has no --format).
        GroupCommand::Join(a) => {
            let config = client_config(&a.connection)?;
            return join::run(&a.member, config, Duration::from_millis(a.connection.timeout_ms), out);
        }
    };
    let config = client_config(connection)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Client(ClientError::new(ErrorKind::Unreachable, format!("no runtime: {e}"))))?;
    let client = Client::new(config).map_err(CliError::config)?;
    let timeout = Duration::from_millis(connection.timeout_ms);
    let outcome = runtime.block_on(async {
        let ok = |ok: bool| if ok { Outcome::Complete } else { Outcome::Failed };
        match command {
            GroupCommand::List(a) => list::list(&client, timeout, a.format, out).await.map(|()| Outcome::Complete),
            GroupCommand::Describe(a) => describe::describe(client.clone(), a, timeout, out).await,
            GroupCommand::Watch(a) => watch::watch(&client, a, timeout, out).await.map(ok),
            // A group not judged (exit 1) before a blocked verdict (exit 4).
            GroupCommand::UpgradeCheck(a) => {
                upgrade_check::upgrade_check(&client, a, timeout, out).await.and_then(|(judged, blocked)| {
                    match (judged, blocked) {
                        (false, _) => Ok(Outcome::Failed),
                        (true, true) => Err(CliError::Blocked),
                        (true, false) => Ok(Outcome::Complete),
                    }
                })
            }
            GroupCommand::ResetOffsets(a) => reset_offsets::reset_offsets(&client, a, timeout, out).await.map(ok),
            GroupCommand::DeleteOffsets(a) => delete_offsets::delete_offsets(&client, a, timeout, out).await.map(ok),
            GroupCommand::Delete(a) => delete::delete(&client, a, timeout, out).await.map(ok),
            GroupCommand::History(a) => history::live(&client, a, timeout, out).await.map(|()| Outcome::Complete),
            GroupCommand::Join(_) => Ok(Outcome::Complete),
        }
    })?;
    out.flush()?;
    match outcome {
        Outcome::Complete => Ok(()),
        Outcome::Failed => Err(CliError::Reported),
        Outcome::Partial => Err(CliError::Partial),
    }
}

/// The client configuration: `--command-config`, then `--bootstrap-server` over its
/// `bootstrap.servers`.
pub(crate) fn client_config(args: &ConnectionArgs) -> Result<ClientConfig, CliError> {
    let mut config = match &args.command_config {
        Some(path) => ClientConfig::from_properties_file(path).map_err(CliError::config)?,
        None => ClientConfig::default(),
    };
    if let Some(servers) = &args.bootstrap_server {
        config.set_bootstrap([servers]).map_err(CliError::config)?;
    }
    if config.bootstrap_servers.is_empty() {
        return Err(CliError::Config(
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
