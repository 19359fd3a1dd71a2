//! `kcp serve`: collects every consumer group of one or more clusters in the background and
//! serves the latest snapshot: OpenMetrics at `/metrics`, a Burrow-compatible API under `/v3/`,
//! kcp's own API under `/api/v1/` (with the groups' change events as Server-Sent Events), and
//! `/healthz`, `/readyz`, and a page for people: the groups list at `/` and a page per group
//! (`page`).
//!
//! `state` runs one collection loop per cluster and keeps what has to be remembered between
//! collections (the lag windows, the log-end histories, the rebalance counts); `metrics` writes the
//! OpenMetrics text once per collection, so a scrape copies a string; `http` is the server (hyper,
//! axum's router), its limits, authentication and TLS; `burrow` and `api` are the JSON answers.

mod api;
mod burrow;
mod http;
mod metrics;
mod page;
mod state;
mod timeline;
mod verdict;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use kafka_consumer_protocol::client::{ClientConfig, ClientError, ErrorKind};
use kafka_consumer_protocol::inspect::lag::LagRules;
use kafka_consumer_protocol::inspect::watch::StormThreshold;
use serde::Deserialize;

use crate::group::offsets::Isolation;
use crate::group::{client_config, ConnectionArgs, LagRuleArgs};
use crate::out::note;
use crate::CliError;

/// What the metrics show per group: every partition, per topic, or the group only.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Granularity {
    /// Per-partition series (lag, lag in seconds, committed offset, log start and end).
    #[default]
    Partition,
    /// Per-topic sums and maxima instead of per-partition series.
    Topic,
    /// Group-level series only.
    Group,
}

/// `kcp serve`.
#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    #[command(flatten)]
    pub connection: ConnectionArgs,
    /// The cluster's name in the metrics (`cluster_name`) and the APIs' paths.
    #[arg(long, value_name = "NAME", default_value = "default", conflicts_with = "config")]
    pub cluster_name: String,
    /// A JSON file naming several clusters:
    /// {"clusters": [{"name": "prod", "bootstrap_server": "HOST:PORT", "command_config": "FILE"}]}
    /// (`command_config` optional). Replaces --bootstrap-server, --command-config and --cluster-name.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["bootstrap_server", "command_config"])]
    pub config: Option<PathBuf>,
    /// Where to listen. Loopback unless told otherwise: exposing the server takes an explicit
    /// address (0.0.0.0:8000 for every interface).
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:8000")]
    pub listen: SocketAddr,
    /// How often each cluster is collected, in milliseconds.
    #[arg(long, value_name = "N", default_value_t = 30_000, value_parser = clap::value_parser!(u64).range(100..=86_400_000))]
    pub interval_ms: u64,
    /// Which series the metrics carry per group (kminion's option): partition, topic or group.
    #[arg(long, value_enum, default_value = "partition")]
    pub granularity: Granularity,
    /// Which log end the lag is measured to (see `kcp group describe`).
    #[arg(long, value_enum, default_value = "read-uncommitted")]
    pub isolation: Isolation,
    /// Lag status rules (each collection is one sample).
    #[command(flatten)]
    pub lag: LagRuleArgs,
    /// A rebalance storm (an event on /api/v1/.../events) is more than N rebalances within SECONDS.
    #[arg(long, value_name = "N/SECONDS", default_value = "5/60")]
    pub storm: StormThreshold,
    /// Log-end observations kept per partition for interpolated lag in seconds.
    #[arg(long, value_name = "N", default_value_t = 60, value_parser = clap::value_parser!(u64).range(2..=10_000))]
    pub lag_history: u64,
    /// Require `Authorization: Bearer TOKEN` (the file's first line) on every path but /healthz
    /// and /readyz.
    #[arg(long, value_name = "FILE")]
    pub bearer_token_file: Option<PathBuf>,
    /// Require HTTP basic authentication with the file's first line, `USER:PASSWORD`, on every
    /// path but /healthz and /readyz.
    #[arg(long, value_name = "FILE")]
    pub basic_auth_file: Option<PathBuf>,
    /// Serve HTTPS with this PEM certificate chain (with --tls-key).
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Connections served at once; more are closed as they arrive.
    #[arg(long, value_name = "N", default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..=65_536))]
    pub max_connections: u64,
    /// Stop after this many seconds (default: run until SIGTERM or SIGINT).
    #[arg(long, value_name = "N")]
    pub duration_s: Option<u64>,
}

/// One cluster to collect.
#[derive(Clone, Debug)]
pub(crate) struct ClusterSpec {
    /// Its name in paths and labels.
    pub(crate) name: String,
    /// Its bootstrap servers, as Burrow's cluster detail shows them.
    pub(crate) servers: Vec<String>,
    /// The client's configuration (secrets stay in it; nothing here is served).
    pub(crate) config: ClientConfig,
}

/// How the collection loops run.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Settings {
    pub(crate) interval: Duration,
    pub(crate) timeout: Duration,
    pub(crate) isolation: Isolation,
    pub(crate) rules: LagRules,
    pub(crate) storm: StormThreshold,
    pub(crate) lag_history: usize,
    pub(crate) granularity: Granularity,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    clusters: Vec<ConfigCluster>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigCluster {
    name: String,
    bootstrap_server: Option<String>,
    command_config: Option<PathBuf>,
}

/// A cluster name: it is a path segment and a label value, so plain characters only.
fn check_name(name: &str) -> Result<(), CliError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(CliError::usage(format!("cluster name {name:?}: use 1 to 64 letters, digits, '-', '_' or '.'")))
    }
}

fn clusters(args: &ServeArgs) -> Result<Vec<ClusterSpec>, CliError> {
    let Some(path) = &args.config else {
        check_name(&args.cluster_name)?;
        let config = client_config(&args.connection)?;
        let servers = config.bootstrap_servers.iter().map(ToString::to_string).collect();
        return Ok(vec![ClusterSpec { name: args.cluster_name.clone(), servers, config }]);
    };
    let bytes = crate::input::read_document(&path.to_string_lossy())?;
    let file: ConfigFile =
        serde_json::from_slice(&bytes).map_err(|e| CliError::usage(format!("{}: {e}", path.display())))?;
    if file.clusters.is_empty() {
        return Err(CliError::usage(format!("{}: \"clusters\" names no cluster", path.display())));
    }
    let mut out: Vec<ClusterSpec> = Vec::new();
    for c in file.clusters {
        check_name(&c.name)?;
        if out.iter().any(|o| o.name == c.name) {
            return Err(CliError::usage(format!("{}: cluster {:?} is named twice", path.display(), c.name)));
        }
        let connection = ConnectionArgs {
            bootstrap_server: c.bootstrap_server,
            command_config: c.command_config,
            timeout_ms: args.connection.timeout_ms,
        };
        let config = client_config(&connection)?;
        let servers = config.bootstrap_servers.iter().map(ToString::to_string).collect();
        out.push(ClusterSpec { name: c.name, servers, config });
    }
    Ok(out)
}

/// Runs the server until SIGTERM, SIGINT or --duration-s.
pub fn run_serve(args: &ServeArgs) -> Result<(), CliError> {
    let clusters = clusters(args)?;
    let settings = Settings {
        interval: Duration::from_millis(args.interval_ms),
        timeout: Duration::from_millis(args.connection.timeout_ms),
        isolation: args.isolation,
        rules: args.lag.rules(),
        storm: args.storm,
        lag_history: usize::try_from(args.lag_history).unwrap_or(60),
        granularity: args.granularity,
    };
    let security = http::Security::load(args)?;
    let clients = clusters
        .iter()
        .map(|spec| kafka_consumer_protocol::client::Client::new(spec.config.clone()).map_err(CliError::config))
        .collect::<Result<Vec<_>, _>>()?;
    // Two threads, each with its own single-threaded runtime: this one answers HTTP, the
    // collection thread collects (the Kafka connections, decoding, the snapshots, the
    // OpenMetrics text). A scrape that arrives during a collection is answered at once, since
    // no collection work ever runs on the thread that answers it; and two threads keep the
    // allocator's arenas and the stacks few.
    let runtime = || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| CliError::Client(ClientError::new(ErrorKind::Unreachable, format!("no runtime: {e}"))))
    };
    let http_runtime = runtime()?;
    let collect_runtime = runtime()?;
    let shared = Arc::new(state::Shared::new(&clusters, settings));
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let result: Result<std::thread::JoinHandle<()>, CliError> = http_runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(args.listen).await.map_err(|e| {
            CliError::Client(ClientError::new(ErrorKind::Unreachable, format!("cannot listen on {}: {e}", args.listen)))
        })?;
        let local = listener.local_addr().map_err(|e| CliError::input(e.to_string()))?;
        let scheme = if security.tls.is_some() { "https" } else { "http" };
        note(&format!(
            "kcp serve: {} cluster(s) ({}), every {} ms, on {scheme}://{local}/",
            clusters.len(),
            clusters.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", "),
            args.interval_ms
        ));
        let loops_shared = shared.clone();
        let loops_stop = stop_rx.clone();
        let collecting = std::thread::Builder::new()
            .name("kcp-collect".into())
            .spawn(move || {
                collect_runtime.block_on(async move {
                    let mut loops = Vec::new();
                    for (index, client) in clients.into_iter().enumerate() {
                        loops.push(tokio::spawn(state::run_cluster(
                            loops_shared.clone(),
                            index,
                            client,
                            loops_stop.clone(),
                        )));
                    }
                    for l in loops {
                        let _ = l.await;
                    }
                })
            })
            .map_err(|e| CliError::Client(ClientError::new(ErrorKind::Unreachable, format!("no thread: {e}"))))?;
        let server = tokio::spawn(http::serve(
            listener,
            shared.clone(),
            security,
            usize::try_from(args.max_connections).unwrap_or(256),
            stop_rx.clone(),
        ));
        wait_for_stop(args.duration_s).await;
        let _ = stop_tx.send(true);
        let _ = server.await;
        Ok(collecting)
    });
    // The loops see the stop at their next await: a collection in progress is dropped.
    let collecting = result?;
    let _ = collecting.join();
    note("kcp serve: stopped");
    Ok(())
}

/// Until SIGTERM, SIGINT or the duration.
async fn wait_for_stop(duration_s: Option<u64>) {
    let duration = async {
        match duration_s {
            Some(s) => tokio::time::sleep(Duration::from_secs(s)).await,
            None => std::future::pending().await,
        }
    };
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        () = duration => {}
        () = term => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}
