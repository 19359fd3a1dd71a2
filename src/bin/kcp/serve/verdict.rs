//! The upgrade-check verdict in a group page's header: `kcp group upgrade-check`'s judgement
//! (`inspect::upgrade::check_upgrade` for a classic group, `check_downgrade` for a consumer group,
//! as `--downgrade` does) of the group in the served snapshot. The judgement also needs what the
//! collection does not ask, the coordinator's environment (its broker line, `group.version`, its
//! group coordinator configs): it is asked on demand, with the same calls as the command
//! (`group::upgrade_check::environment`), when a page needs it, and kept per coordinator for
//! [`KEEP`] (a failure for [`KEEP_FAILED`]), at most [`MAX_KEPT`] coordinators per server.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use kafka_consumer_protocol::client::collect::DescribedGroup;
use kafka_consumer_protocol::client::{Client, Deadline};
use kafka_consumer_protocol::inspect::upgrade::{check_downgrade, check_upgrade, UpgradeEnvironment, UpgradeReport};

use super::state::ClusterHandle;
use crate::group::upgrade_check::environment;

/// How long a coordinator's environment is reused.
const KEEP: Duration = Duration::from_secs(300);
/// How long a failure to ask it is reused (a page refreshes every collection).
const KEEP_FAILED: Duration = Duration::from_secs(30);
/// Coordinators kept per server.
const MAX_KEPT: usize = 256;
/// How long a page waits for the coordinator's answer.
const ASK_TIMEOUT: Duration = Duration::from_secs(3);

/// What the header shows.
#[derive(Clone, Debug)]
pub(crate) struct Verdict {
    /// `upgrade` (a classic group) or `downgrade` (a consumer group).
    pub(crate) direction: &'static str,
    /// `ready`, `blocked` or `unknown`.
    pub(crate) verdict: &'static str,
    /// The first failed check (blocked), else the first undecided one (unknown): its name, the
    /// evidence and the advice.
    pub(crate) first: Option<(&'static str, String, Option<String>)>,
    /// Why the coordinator's environment is not known (the verdict is then `unknown`).
    pub(crate) error: Option<String>,
}

impl Verdict {
    fn of(report: &UpgradeReport) -> Verdict {
        let first = report
            .checks
            .iter()
            .find(|c| c.ok == Some(false))
            .or_else(|| report.checks.iter().find(|c| c.ok.is_none()))
            .map(|c| (c.name, c.evidence.clone(), c.advice.clone()));
        Verdict { direction: report.direction.as_str(), verdict: report.verdict.as_str(), first, error: None }
    }
}

type Kept = (Instant, Result<UpgradeEnvironment, String>);

/// The server's clients and coordinators' environments, for the verdicts.
#[derive(Default)]
pub(crate) struct Verdicts {
    clients: Mutex<HashMap<String, Client>>,
    environments: Mutex<HashMap<(String, i32), Kept>>,
}

impl Verdicts {
    fn client(&self, cluster: &ClusterHandle) -> Result<Client, String> {
        let mut clients = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = clients.get(&cluster.spec.name) {
            return Ok(c.clone());
        }
        let client = Client::new(cluster.spec.config.clone()).map_err(|e| e.to_string())?;
        clients.insert(cluster.spec.name.clone(), client.clone());
        Ok(client)
    }

    async fn environment(&self, cluster: &ClusterHandle, node: i32) -> Result<UpgradeEnvironment, String> {
        let key = (cluster.spec.name.clone(), node);
        {
            let kept = self.environments.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((at, env)) = kept.get(&key) {
                let keep = if env.is_ok() { KEEP } else { KEEP_FAILED };
                if at.elapsed() < keep {
                    return env.clone();
                }
            }
        }
        let asked = match self.client(cluster) {
            Ok(client) => environment(&client, node, Deadline::after(ASK_TIMEOUT))
                .await
                .map_err(|e| format!("{}: {}", e.kind(), crate::text::clean(e.message()))),
            Err(e) => Err(e),
        };
        let mut kept = self.environments.lock().unwrap_or_else(|e| e.into_inner());
        if kept.len() >= MAX_KEPT && !kept.contains_key(&key) {
            // The oldest goes: coordinators are few; a server watching more is asked again.
            if let Some(oldest) = kept.iter().min_by_key(|(_, (at, _))| *at).map(|(k, _)| k.clone()) {
                kept.remove(&oldest);
            }
        }
        kept.insert(key, (Instant::now(), asked.clone()));
        asked
    }

    /// The verdict on group `id` of the cluster's latest snapshot, or `None` for a group the
    /// server does not know (or could not describe).
    pub(crate) async fn of(&self, cluster: &ClusterHandle, id: &str) -> Option<Verdict> {
        let snapshot = cluster.snapshot();
        let group = snapshot.groups.get(id)?;
        let described = group.described()?;
        let (node, direction) = match described {
            DescribedGroup::Classic(d) => (d.coordinator.node_id, "upgrade"),
            DescribedGroup::Consumer(d) => (d.coordinator.node_id, "downgrade"),
        };
        let env = match self.environment(cluster, node).await {
            Ok(env) => env,
            Err(e) => return Some(Verdict { direction, verdict: "unknown", first: None, error: Some(e) }),
        };
        let report = match described {
            DescribedGroup::Classic(d) => check_upgrade(&d.group, &env, &group.collected.metadata, None),
            DescribedGroup::Consumer(d) => check_downgrade(&d.group, &env),
        };
        Some(Verdict::of(&report))
    }
}
