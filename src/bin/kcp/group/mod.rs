//! `kcp group list | describe | watch | join | history`: a running cluster's consumer groups, decoded,
//! and (`history`) their past from `__consumer_offsets` segment files.
//!
//! The network is `kafka_consumer_protocol::client`; the decoding and the diagnostics are
//! `kafka_consumer_protocol::inspect`. This module holds the arguments and the client
//! configuration and runs a subcommand; each subcommand has its file (`list`, `describe`,
//! `watch`, `join`), `topics` the metadata cache they share, `json` the contract's objects and
//! `table` the text tables. Errors end the command through the binary's one exit policy
//! (`crate::finish`).

mod describe;
mod history;
mod join;
mod json;
mod list;
mod table;
mod topics;
mod watch;

use std::path::PathBuf;
use std::time::Duration;

use kafka_consumer_protocol::client::{Client, ClientConfig, ClientError, ErrorKind};
use kafka_consumer_protocol::inspect::watch::StormThreshold;

use super::out::{note, Out};
use super::text::clean;
use super::{CliError, Format};

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
    /// What happened to groups, from `__consumer_offsets` segment files copied off a broker:
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

impl GroupCommand {
    /// The format the subcommand's errors are reported in (`watch` and `join` print JSON lines).
    pub fn format(&self) -> Format {
        match self {
            GroupCommand::List(a) => a.format,
            GroupCommand::Describe(a) => a.format,
            GroupCommand::History(a) => a.format,
            GroupCommand::Watch(_) | GroupCommand::Join(_) => Format::Json,
        }
    }
}

/// Runs one `kcp group` subcommand and prints its output. `Err(CliError::Reported)` when it
/// printed a failure itself (a group that could not be described, a watch that never saw the
/// group, a member's fatal error): exit 1.
pub fn run_group(command: &GroupCommand, out: &mut Out) -> Result<(), CliError> {
    let connection = match command {
        // Offline: files only, no cluster.
        GroupCommand::History(a) => return history::run(a, out),
        GroupCommand::List(a) => &a.connection,
        GroupCommand::Describe(a) => &a.connection,
        GroupCommand::Watch(a) => &a.connection,
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
    let ok = runtime.block_on(async {
        match command {
            GroupCommand::List(a) => list::list(&client, timeout, a.format, out).await.map(|()| true),
            GroupCommand::Describe(a) => describe::describe(client.clone(), a, timeout, out).await,
            GroupCommand::Watch(a) => watch::watch(&client, a, timeout, out).await,
            GroupCommand::Join(_) | GroupCommand::History(_) => Ok(true),
        }
    })?;
    out.flush()?;
    if ok {
        Ok(())
    } else {
        Err(CliError::Reported)
    }
}

/// The client configuration: `--command-config`, then `--bootstrap-server` over its
/// `bootstrap.servers`.
fn client_config(args: &ConnectionArgs) -> Result<ClientConfig, CliError> {
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
