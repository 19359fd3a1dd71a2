//! The collection loops and the snapshots they publish.
//!
//! Each cluster has one loop: every interval it collects every group with
//! `client::collect::Collector` (the same collection as `kcp group describe`), evaluates the lag
//! status (`inspect::lag::LagEvaluator`, Burrow's rules), counts rebalances
//! (`inspect::watch::Watcher`), measures lag in seconds, and publishes an immutable [`Snapshot`].
//! Requests read the published snapshot and never wait on Kafka.
//!
//! Lag in seconds, for a partition whose lag is above 0, is the age of the oldest record the group
//! has not consumed: now minus the timestamp of the record at the committed offset (method
//! `fetch`: one batched Fetch per leader for every lagging partition). Where that record cannot
//! be read (gone to retention, or the Fetch failed), the time the log end passed the committed
//! offset is interpolated from the log ends of earlier collections (method `interpolation`).
//! With lag 0 it is 0 (method `none`). A partition never committed has none.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use kafka_consumer_protocol::client::collect::{CollectedGroup, Collector, DescribedGroup, GroupSelection, Offsets};
use kafka_consumer_protocol::client::{Client, ClientError, Deadline, ErrorKind, TimestampQuery};
use kafka_consumer_protocol::inspect::lag::{LagEvaluator, LagSample, LagStatus, LogEndHistory};
use kafka_consumer_protocol::inspect::offsets::GroupOffsetsReport;
use kafka_consumer_protocol::inspect::watch::{Snapshot as WatchSnapshot, Watcher};
use kafka_consumer_protocol::inspect::{inspect_classic, inspect_consumer};
use serde_json::json;
use tokio::sync::broadcast;

use super::{metrics, ClusterSpec, Settings};
use crate::group::watch::{event_json, lag_status_json, now_ts};
use crate::out::note;

/// Events kept per cluster for a new `/events` subscriber.
const RECENT_EVENTS: usize = 256;

/// How a partition's lag in seconds was measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LagMethod {
    /// The timestamp of the record at the committed offset.
    Fetch,
    /// The log end's history, interpolated.
    Interpolation,
    /// Lag 0: nothing waits.
    None,
}

impl LagMethod {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            LagMethod::Fetch => "fetch",
            LagMethod::Interpolation => "interpolation",
            LagMethod::None => "none",
        }
    }
}

/// One sample of Burrow's `start`/`end`: a committed offset, when it was seen, and the lag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WindowPoint {
    pub(crate) offset: i64,
    pub(crate) at_ms: u64,
    pub(crate) lag: Option<i64>,
}

/// What is served of one partition of a group.
#[derive(Clone, Debug, Default)]
pub(crate) struct PartitionState {
    /// Its lag status (`None`: not evaluated, nothing committed).
    pub(crate) status: Option<LagStatus>,
    /// The oldest and newest samples of the status window.
    pub(crate) start: Option<WindowPoint>,
    pub(crate) end: Option<WindowPoint>,
    /// Samples in the window, and the window's size (Burrow's `complete` is their ratio).
    pub(crate) samples: usize,
    /// Every sample of the status window with a commit, oldest first (the page's chart of the
    /// selected partitions).
    pub(crate) window: Vec<WindowPoint>,
    /// Lag in seconds and how it was measured.
    pub(crate) lag_seconds: Option<(f64, LagMethod)>,
}

/// A member's identity, for labels and Burrow's `owner`/`client_id`.
#[derive(Clone, Debug, Default)]
pub(crate) struct MemberInfo {
    pub(crate) client_id: String,
    pub(crate) client_host: String,
}

/// Collections kept per group for the lag history (`/api/v1/.../history` and the page's chart):
/// at the default 30 s interval, the last 3 hours. 40 bytes a point: 14.4 MB for 1,000 groups.
pub(crate) const HISTORY_POINTS: usize = 360;

/// One collection's lag of a group, for the lag history.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct HistoryPoint {
    /// When the collection was taken (ms since the epoch).
    pub(crate) at_ms: u64,
    /// The group's total lag (the sum of the known partition lags).
    pub(crate) lag: i64,
    /// Whether any partition's lag was known (else `lag` is an empty sum, not a measured 0).
    pub(crate) lag_known: bool,
    /// The largest partition lag in seconds, if any was measured.
    pub(crate) lag_seconds: Option<f64>,
}

/// What is served of one group.
#[derive(Debug)]
pub(crate) struct GroupState {
    pub(crate) collected: CollectedGroup,
    pub(crate) report: GroupOffsetsReport,
    /// One per `report.offsets` row.
    pub(crate) partitions: Vec<PartitionState>,
    /// The worst partition status (OK when none is evaluated).
    pub(crate) status: LagStatus,
    /// The largest partition lag in seconds.
    pub(crate) lag_seconds: Option<f64>,
    /// Partitions in a pending hand-over.
    pub(crate) pending: usize,
    /// Rebalances counted since this server first saw the group.
    pub(crate) rebalances: u64,
    /// Rebalances within the last hour.
    pub(crate) rebalances_last_hour: usize,
    pub(crate) members: BTreeMap<String, MemberInfo>,
    /// When the group was last collected (ms since the epoch).
    pub(crate) seen_at_ms: u64,
    /// The group's generations as the collections saw them (bounded: `timeline::KEPT`), shared
    /// with the previous snapshot's while no collection saw a change.
    pub(crate) generations: Arc<VecDeque<Arc<super::timeline::Seen>>>,
}

impl GroupState {
    pub(crate) fn described(&self) -> Option<&DescribedGroup> {
        self.collected.described.as_ref().ok()
    }
}

/// One cluster's published snapshot.
#[derive(Debug, Default)]
pub(crate) struct Snapshot {
    /// When it was taken (ms since the epoch; 0 before the first collection).
    pub(crate) taken_at_ms: u64,
    /// How long the collection took.
    pub(crate) duration: Duration,
    /// Collections finished (successful or not).
    pub(crate) collections: u64,
    /// Whether the last collection succeeded.
    pub(crate) up: bool,
    /// Why the last collection failed.
    pub(crate) last_error: Option<ClientError>,
    /// Errors met by all collections, by kind.
    pub(crate) errors_total: BTreeMap<&'static str, u64>,
    /// The groups, by id (from the last successful collection).
    pub(crate) groups: BTreeMap<String, Arc<GroupState>>,
    /// Log start and end of every partition of the groups' topics.
    pub(crate) partitions: BTreeMap<(String, i32), (Option<i64>, Option<i64>)>,
    /// The offsets the groups' views were made from (for the describe JSON).
    pub(crate) offsets: Arc<Offsets>,
}

/// One cluster as the server holds it.
#[derive(Debug)]
pub(crate) struct ClusterHandle {
    pub(crate) spec: ClusterSpec,
    pub(crate) latest: RwLock<Arc<Snapshot>>,
    pub(crate) events: broadcast::Sender<Arc<str>>,
    pub(crate) recent: Mutex<VecDeque<Arc<str>>>,
    /// Each group's lag at its last collections (at most [`HISTORY_POINTS`], oldest first), for
    /// the groups of the latest snapshot. Kept here and extended in place, not in the snapshots:
    /// a snapshot holding its own copy made each collection copy every group's history (up to
    /// 14.4 MB at 1,000 groups), and the copy of the snapshot before was alive meanwhile.
    pub(crate) history: Mutex<HashMap<String, VecDeque<HistoryPoint>>>,
    /// The groups list page of the latest snapshot, rendered (and gzipped) once per collection
    /// on the collection thread: a request copies it, and never builds 1,000 rows on the thread
    /// that answers.
    pub(crate) list_page: RwLock<Arc<super::page::Rendered>>,
}

impl ClusterHandle {
    pub(crate) fn snapshot(&self) -> Arc<Snapshot> {
        self.latest.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn publish_event(&self, line: String) {
        let line: Arc<str> = line.into();
        let mut recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        recent.push_back(line.clone());
        while recent.len() > RECENT_EVENTS {
            recent.pop_front();
        }
        // No subscriber is not an error.
        let _ = self.events.send(line);
    }

    /// Tells the event streams that a collection was published (event `collected`), so the page
    /// refreshes; not kept among the recent events, which are the groups' changes.
    fn announce_collection(&self) {
        let snapshot = self.snapshot();
        let line = json!({"event": "collected", "cluster": self.spec.name, "up": snapshot.up,
                          "collections": snapshot.collections});
        let _ = self.events.send(line.to_string().into());
    }
}

/// Everything the server shares between the loops and the requests.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) clusters: Vec<ClusterHandle>,
    pub(crate) settings: Settings,
    /// The OpenMetrics text of every cluster's latest snapshot, written (and gzip-compressed)
    /// once per collection.
    pub(crate) metrics: RwLock<metrics::Body>,
}

impl Shared {
    pub(crate) fn new(specs: &[ClusterSpec], settings: Settings) -> Self {
        let clusters = specs
            .iter()
            .map(|spec| ClusterHandle {
                spec: spec.clone(),
                latest: RwLock::new(Arc::new(Snapshot::default())),
                events: broadcast::channel(1024).0,
                recent: Mutex::new(VecDeque::new()),
                history: Mutex::new(HashMap::new()),
                list_page: RwLock::default(),
            })
            .collect();
        let shared = Shared { clusters, settings, metrics: RwLock::new(metrics::Body::default()) };
        shared.render_metrics();
        for index in 0..shared.clusters.len() {
            shared.render_list_page(index);
        }
        shared
    }

    pub(crate) fn cluster(&self, name: &str) -> Option<&ClusterHandle> {
        self.clusters.iter().find(|c| c.spec.name == name)
    }

    /// The latest OpenMetrics text, plain and gzip-compressed (the same bytes until the next
    /// collection: a scrape copies them, it never compresses).
    pub(crate) fn metrics_body(&self) -> metrics::Body {
        self.metrics.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Whether every cluster has been collected successfully at least once.
    pub(crate) fn ready(&self) -> bool {
        self.clusters.iter().all(|c| c.snapshot().taken_at_ms > 0)
    }

    /// The groups list page of cluster `index`'s latest snapshot.
    pub(crate) fn list_page(&self, index: usize) -> Arc<super::page::Rendered> {
        self.clusters[index].list_page.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn render_list_page(&self, index: usize) {
        let cluster = &self.clusters[index];
        let rendered = Arc::new(super::page::Rendered::new(super::page::list_page(self, cluster)));
        *cluster.list_page.write().unwrap_or_else(|e| e.into_inner()) = rendered;
    }

    /// Writes and compresses the OpenMetrics text of the latest snapshots: on the collection
    /// thread, once per collection, never on the thread that answers scrapes.
    fn render_metrics(&self) {
        let snapshots: Vec<(&str, Arc<Snapshot>)> =
            self.clusters.iter().map(|c| (c.spec.name.as_str(), c.snapshot())).collect();
        let previous = self.metrics_body();
        let text = metrics::render(&snapshots, self.settings.granularity, previous.plain.len());
        let body = metrics::Body::of(text, previous.gzip.len());
        drop(previous);
        *self.metrics.write().unwrap_or_else(|e| e.into_inner()) = body;
    }
}

fn now_ms() -> u64 {
    u64::try_from(SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_millis()).unwrap_or(u64::MAX)
}

/// What a loop remembers of a group between collections.
struct GroupMemory {
    watcher: Watcher,
    evaluator: LagEvaluator,
    /// Times of the rebalances of the last hour.
    rebalance_times: VecDeque<u64>,
}

/// What a loop remembers between collections.
struct Memory {
    groups: HashMap<String, GroupMemory>,
    log_ends: HashMap<(String, i32), LogEndHistory>,
    errors_total: BTreeMap<&'static str, u64>,
    collections: u64,
}

/// Collects cluster `index` every interval until `stop` turns true.
pub(crate) async fn run_cluster(
    shared: Arc<Shared>,
    index: usize,
    client: Client,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    let mut memory =
        Memory { groups: HashMap::new(), log_ends: HashMap::new(), errors_total: BTreeMap::new(), collections: 0 };
    // One collector for the loop's life: each collection then lists the groups on the brokers
    // the previous one's Metadata named, and asks one Metadata of its own (issue 35's floor).
    let collector = Collector::new(client.clone());
    loop {
        let started = Instant::now();
        let collect = collect_once(&shared, index, &collector, &mut memory);
        tokio::select! {
            () = collect => {}
            _ = stop.changed() => return,
        }
        shared.render_metrics();
        shared.render_list_page(index);
        shared.clusters[index].announce_collection();
        let next = started + shared.settings.interval;
        tokio::select! {
            () = tokio::time::sleep_until(next.into()) => {}
            _ = stop.changed() => return,
        }
        if *stop.borrow() {
            return;
        }
    }
}

fn count_error(memory: &mut Memory, e: &ClientError) {
    *memory.errors_total.entry(e.kind().as_str()).or_default() += 1;
}

/// One collection of one cluster, published.
async fn collect_once(shared: &Shared, index: usize, collector: &Collector, memory: &mut Memory) {
    let handle = &shared.clusters[index];
    let settings = &shared.settings;
    let started = Instant::now();
    let deadline = Deadline::after(settings.timeout);
    let client = collector.client();
    let previous = handle.snapshot();
    memory.collections += 1;
    let result = collector.collect(&GroupSelection::All, settings.isolation.level(), deadline).await;
    let collection = match result {
        Ok(c) => c,
        Err(e) => return publish_failure(handle, memory, &previous, e, started),
    };
    let offsets = match collection.offsets {
        Ok(o) => Arc::new(o),
        Err(e) => return publish_failure(handle, memory, &previous, e, started),
    };
    let taken_at_ms = now_ms();
    let ts = now_ts();
    for (topic, logs) in &offsets.logs {
        if let Ok(partitions) = &logs.partitions {
            for p in partitions {
                if let Ok(end) = p.log_end_offset {
                    memory
                        .log_ends
                        .entry((topic.clone(), p.partition))
                        .or_insert_with(|| LogEndHistory::new(settings.lag_history))
                        .push(taken_at_ms, end);
                }
            }
        }
    }

    let mut groups: BTreeMap<String, GroupState> = BTreeMap::new();
    let mut kept: BTreeMap<String, Arc<GroupState>> = BTreeMap::new();
    for collected in collection.groups {
        let described = match &collected.described {
            Ok(d) => d,
            // Gone between ListGroups and DescribeGroups: gone.
            Err(e) if e.kind() == ErrorKind::NotFound => continue,
            Err(e) => {
                count_error(memory, e);
                // Not described this time: what was known is kept rather than dropped.
                if let Some(old) = previous.groups.get(&collected.group_id) {
                    kept.insert(collected.group_id.clone(), old.clone());
                }
                continue;
            }
        };
        if matches!(described, DescribedGroup::Classic(g) if g.group.state == "Dead" && g.group.members.is_empty()) {
            continue;
        }
        let view = offsets.view(&collected.group_id, described);
        if let Some(e) = &view.error {
            count_error(memory, e);
        }
        let id = collected.group_id.clone();
        let group_memory = memory.groups.entry(id.clone()).or_insert_with(|| GroupMemory {
            watcher: Watcher::new(settings.storm),
            evaluator: LagEvaluator::new(settings.rules),
            rebalance_times: VecDeque::new(),
        });

        // Changes, as `kcp group watch` reports them.
        let watch_snapshot = match described {
            DescribedGroup::Classic(g) => {
                WatchSnapshot::from_classic(&g.group, &inspect_classic(&g.group, &collected.metadata))
            }
            DescribedGroup::Consumer(g) => {
                WatchSnapshot::from_consumer(&g.group, &inspect_consumer(&g.group, &collected.metadata).diagnostics)
            }
        };
        let before = group_memory.watcher.rebalances_seen();
        let mut seen = super::timeline::Seen::of(taken_at_ms, &watch_snapshot, described);
        for event in group_memory.watcher.observe(taken_at_ms, watch_snapshot) {
            let mut v = event_json(&ts, &id, &event);
            v["cluster"] = json!(handle.spec.name);
            handle.publish_event(v.to_string());
        }
        let new_rebalances = group_memory.watcher.rebalances_seen().saturating_sub(before);
        seen.rebalances = group_memory.watcher.rebalances_seen();
        let generations = match previous.groups.get(&id).map(|old| &old.generations) {
            // Nothing changed (most collections of a stable group): the entries are shared.
            Some(old) if super::timeline::unchanged(old, &seen) => old.clone(),
            old => Arc::new(super::timeline::next(old.map(|o| &**o), seen)),
        };
        for _ in 0..new_rebalances.min(10_000) {
            group_memory.rebalance_times.push_back(taken_at_ms);
        }
        while group_memory.rebalance_times.front().is_some_and(|&t| t + 3_600_000 < taken_at_ms) {
            group_memory.rebalance_times.pop_front();
        }
        while group_memory.rebalance_times.len() > 10_000 {
            group_memory.rebalance_times.pop_front();
        }

        // Lag status, as Burrow evaluates it.
        let samples: Vec<((String, i32), LagSample)> = view
            .report
            .offsets
            .iter()
            .map(|o| {
                let mut sample = LagSample::from_offsets(taken_at_ms, o);
                // (no key built for the lookup when there is no gap: most groups)
                sample.error |= !view.gaps.is_empty() && view.gaps.contains_key(&(o.topic.clone(), o.partition));
                ((o.topic.clone(), o.partition), sample)
            })
            .collect();
        for change in group_memory.evaluator.observe(taken_at_ms, samples) {
            let mut v = lag_status_json(&ts, &id, &change);
            v["cluster"] = json!(handle.spec.name);
            handle.publish_event(v.to_string());
        }
        let evaluator = &group_memory.evaluator;
        let partitions = view
            .report
            .offsets
            .iter()
            .map(|o| {
                let window = evaluator.window(&o.topic, o.partition);
                // Sized once (collecting a filter would grow it by doubling: 16 points for 10).
                let mut points: Vec<WindowPoint> = Vec::with_capacity(window.map_or(0, VecDeque::len));
                points.extend(window.into_iter().flatten().filter_map(|s| {
                    Some(WindowPoint {
                        offset: s.committed?,
                        at_ms: s.at_ms,
                        lag: s.committed.zip(s.log_end).map(|(c, e)| e.saturating_sub(c)),
                    })
                }));
                PartitionState {
                    status: evaluator.status(&o.topic, o.partition),
                    start: points.first().copied(),
                    end: points.last().copied(),
                    samples: points.len(),
                    window: points,
                    lag_seconds: None,
                }
            })
            .collect();
        let members = described
            .member_identities()
            .into_iter()
            .map(|(member_id, client_id, client_host)| {
                let info = MemberInfo { client_id: client_id.to_owned(), client_host: client_host.to_owned() };
                (member_id.to_owned(), info)
            })
            .collect();
        let pending = view.report.offsets.iter().filter(|o| o.in_hand_over()).count();
        groups.insert(
            id.clone(),
            GroupState {
                status: evaluator.group_status(),
                report: view.report,
                partitions,
                lag_seconds: None,
                pending,
                rebalances: group_memory.watcher.rebalances_seen(),
                rebalances_last_hour: group_memory.rebalance_times.len(),
                members,
                seen_at_ms: taken_at_ms,
                generations,
                collected,
            },
        );
    }
    // Groups that are gone are forgotten, with their windows and the client's cached coordinator
    // (a server that runs for months sees many short-lived groups come and go).
    memory.groups.retain(|id, _| {
        let alive = groups.contains_key(id) || kept.contains_key(id);
        if !alive {
            client.forget_coordinator(id);
        }
        alive
    });

    measure_lag_seconds(
        client,
        &offsets,
        &mut groups,
        &memory.log_ends,
        taken_at_ms,
        deadline,
        &mut memory.errors_total,
    )
    .await;

    extend_history(handle, &groups, &kept, taken_at_ms);

    let mut partitions = BTreeMap::new();
    for (topic, logs) in &offsets.logs {
        if let Ok(list) = &logs.partitions {
            for p in list {
                partitions.insert(
                    (topic.clone(), p.partition),
                    (p.log_start_offset.as_ref().ok().copied(), p.log_end_offset.as_ref().ok().copied()),
                );
            }
        }
    }
    // Partitions of topics no group reads any more are forgotten.
    memory.log_ends.retain(|key, _| partitions.contains_key(key));
    let mut all: BTreeMap<String, Arc<GroupState>> = groups.into_iter().map(|(k, v)| (k, Arc::new(v))).collect();
    all.extend(kept);
    let snapshot = Snapshot {
        taken_at_ms,
        duration: started.elapsed(),
        collections: memory.collections,
        up: true,
        last_error: None,
        errors_total: memory.errors_total.clone(),
        groups: all,
        partitions,
        offsets,
    };
    *handle.latest.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(snapshot);
}

/// Adds this collection's point to the lag history of every group described, in place; a group
/// gone from the snapshot is forgotten (gone and back, it starts anew), a group kept from the
/// previous snapshot (not described this time) keeps its history unchanged.
fn extend_history(
    handle: &ClusterHandle,
    groups: &BTreeMap<String, GroupState>,
    kept: &BTreeMap<String, Arc<GroupState>>,
    taken_at_ms: u64,
) {
    let mut histories = handle.history.lock().unwrap_or_else(|e| e.into_inner());
    histories.retain(|id, _| groups.contains_key(id) || kept.contains_key(id));
    for (id, g) in groups {
        let point = HistoryPoint {
            at_ms: taken_at_ms,
            lag: g.report.lag.total,
            lag_known: g.report.offsets.iter().any(|o| o.lag.is_some()),
            lag_seconds: g.lag_seconds,
        };
        match histories.get_mut(id) {
            Some(history) => push_history(history, point),
            None => {
                let mut history = VecDeque::new();
                push_history(&mut history, point);
                histories.insert(id.clone(), history);
            }
        }
    }
}

/// Appends `point`, dropping the oldest beyond [`HISTORY_POINTS`]. The buffer grows by doubling
/// up to exactly [`HISTORY_POINTS`], never past it (doubling alone would hold 512).
fn push_history(history: &mut VecDeque<HistoryPoint>, point: HistoryPoint) {
    if history.len() >= HISTORY_POINTS {
        history.pop_front();
    } else if history.len() == history.capacity() {
        let wanted = history.len().max(4).min(HISTORY_POINTS - history.len());
        history.reserve_exact(wanted);
    }
    history.push_back(point);
}

/// A collection that failed as a whole: `up` 0, the error counted and said once on stderr; the
/// last successful collection's groups stay served (their timestamp tells their age).
fn publish_failure(handle: &ClusterHandle, memory: &mut Memory, previous: &Snapshot, e: ClientError, started: Instant) {
    count_error(memory, &e);
    note(&format!(
        "kcp serve: cluster {}: collection failed: {}: {}",
        handle.spec.name,
        e.kind(),
        crate::text::clean(e.message())
    ));
    let snapshot = Snapshot {
        taken_at_ms: previous.taken_at_ms,
        duration: started.elapsed(),
        collections: memory.collections,
        up: false,
        last_error: Some(e),
        errors_total: memory.errors_total.clone(),
        groups: previous.groups.clone(),
        partitions: previous.partitions.clone(),
        offsets: previous.offsets.clone(),
    };
    *handle.latest.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(snapshot);
}

/// Lag in seconds of every lagging partition of every group: one batched Fetch per leader for
/// the records at the committed offsets, interpolation where a record cannot be read.
async fn measure_lag_seconds(
    client: &Client,
    offsets: &Offsets,
    groups: &mut BTreeMap<String, GroupState>,
    log_ends: &HashMap<(String, i32), LogEndHistory>,
    now: u64,
    deadline: Deadline,
    errors_total: &mut BTreeMap<&'static str, u64>,
) {
    let mut wanted: BTreeSet<(String, i32, i64, i32)> = BTreeSet::new();
    for g in groups.values() {
        for o in &g.report.offsets {
            let (Some(committed), Some(lag)) = (o.committed_offset, o.lag) else { continue };
            if lag <= 0 {
                continue;
            }
            let leader = offsets.logs.get(&o.topic).and_then(|t| t.partition(o.partition)).and_then(|p| p.leader);
            if let Some(leader) = leader {
                wanted.insert((o.topic.clone(), o.partition, committed, leader));
            }
        }
    }
    let queries: Vec<TimestampQuery> = wanted
        .into_iter()
        .map(|(topic, partition, offset, leader)| TimestampQuery { topic, partition, offset, leader })
        .collect();
    let answers = if queries.is_empty() { Vec::new() } else { client.record_timestamps(&queries, deadline).await };
    let mut times: HashMap<(&str, i32, i64), i64> = HashMap::new();
    let mut failed_kinds = BTreeSet::new();
    for (q, answer) in queries.iter().zip(&answers) {
        match answer {
            Ok(Some(t)) => {
                times.insert((q.topic.as_str(), q.partition, q.offset), t.timestamp_ms);
            }
            Ok(None) => {}
            // The offset is before the log start: the record is gone to retention (interpolated).
            Err(e) if e.error_code() == Some(1) => {}
            Err(e) => {
                failed_kinds.insert(e.kind().as_str());
            }
        }
    }
    for kind in failed_kinds {
        *errors_total.entry(kind).or_default() += 1;
    }
    let age = |at: i64| (now as f64 - at as f64).max(0.0) / 1000.0;
    for g in groups.values_mut() {
        let mut max: Option<f64> = None;
        for (o, p) in g.report.offsets.iter().zip(g.partitions.iter_mut()) {
            let (Some(committed), Some(lag)) = (o.committed_offset, o.lag) else { continue };
            let measured = if lag <= 0 {
                Some((0.0, LagMethod::None))
            } else if let Some(&t) = times.get(&(o.topic.as_str(), o.partition, committed)) {
                Some((age(t), LagMethod::Fetch))
            } else {
                log_ends
                    .get(&(o.topic.clone(), o.partition))
                    .and_then(|h| h.written_at(committed))
                    .map(|t| (age(i64::try_from(t).unwrap_or(i64::MAX)), LagMethod::Interpolation))
            };
            if let Some((seconds, _)) = measured {
                max = Some(max.map_or(seconds, |m: f64| m.max(seconds)));
            }
            p.lag_seconds = measured;
        }
        g.lag_seconds = max;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared() -> Shared {
        let settings = Settings {
            interval: Duration::from_secs(60),
            timeout: Duration::from_secs(1),
            isolation: Default::default(),
            rules: Default::default(),
            storm: Default::default(),
            lag_history: 60,
            granularity: Default::default(),
        };
        Shared::new(&[], settings)
    }

    #[test]
    fn the_metrics_are_compressed_once_per_collection_and_shared_by_every_scrape() {
        let shared = shared();
        let (first, second) = (shared.metrics_body(), shared.metrics_body());
        // The same bytes, not a compression each: two scrapes share one allocation.
        assert!(!first.gzip.is_empty());
        assert_eq!(first.gzip.as_ptr(), second.gzip.as_ptr());
        assert_eq!(first.plain.as_ptr(), second.plain.as_ptr());
        let mut decoded = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&first.gzip[..]), &mut decoded).unwrap();
        assert_eq!(decoded.as_bytes(), &first.plain[..]);
        assert!(decoded.ends_with("# EOF\n"), "{decoded}");
        // The next collection makes new ones.
        shared.render_metrics();
        assert_ne!(shared.metrics_body().gzip.as_ptr(), first.gzip.as_ptr());
    }

    #[test]
    fn the_lag_history_grows_to_its_bound_and_no_further() {
        let mut history = VecDeque::new();
        for at_ms in 0..(HISTORY_POINTS as u64 + 50) {
            push_history(&mut history, HistoryPoint { at_ms, lag: 1, lag_known: true, lag_seconds: None });
            assert!(history.capacity() <= HISTORY_POINTS.max(4), "{} at {}", history.capacity(), history.len());
        }
        assert_eq!(history.len(), HISTORY_POINTS);
        assert_eq!(history.front().map(|p| p.at_ms), Some(50));
        assert_eq!(history.back().map(|p| p.at_ms), Some(HISTORY_POINTS as u64 + 49));
    }

    /// The memory the documentation states for the lag history (docs/cli.md, `HISTORY_POINTS`).
    #[test]
    fn a_history_point_is_40_bytes() {
        assert_eq!(std::mem::size_of::<HistoryPoint>(), 40);
    }
}
