//! One collection of a cluster's consumer groups: every fact `kcp group describe`, `kcp group
//! watch` and `kcp serve` show, gathered in one place and in the fewest round trips.
//!
//! A [`Collector`] describes groups (DescribeGroups for classic groups and ConsumerGroupDescribe
//! for KIP-848 groups), reads their committed offsets (OffsetFetch), their topics' metadata
//! (partition counts, racks and leaders) and the log start and end of every topic they
//! subscribe to, are assigned or have committed (ListOffsets).
//!
//! [`Collector::collect`] makes the fewest requests a collection can: one ListGroups per broker,
//! one DescribeGroups (and one ConsumerGroupDescribe) per coordinator with all of its groups, one
//! OffsetFetch per coordinator (v8+; one per group below, which cannot batch), one Metadata for
//! every topic, and one ListOffsets per leader and offset kind. A collector kept from one
//! collection to the next also lists the groups on the brokers that collection's Metadata named,
//! so it asks no Metadata of its own for them. [`Collector::describe`] goes in batches of 50
//! groups instead, each with the metadata of its topics, so that `kcp group describe` can show
//! the first groups of a large cluster's without holding all of them.
//! [`GroupOffsets::view`](Offsets::view) turns one group's share of that into the offsets view
//! of [`inspect::offsets`](crate::inspect::offsets): owners, pending hand-overs, lag and the
//! gaps (a partition whose offsets could not be read, and why).
//!
//! The renderers (the CLI's JSON and text, the server's metrics and APIs) read what this module
//! returns; none of them asks the cluster itself.
//!
//! ```no_run
//! use std::time::Duration;
//! use kafka_consumer_protocol::client::collect::{Collector, GroupSelection};
//! use kafka_consumer_protocol::client::{Client, ClientConfig, Deadline, IsolationLevel};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let client = Client::new(ClientConfig::new(["127.0.0.1:9092"])?)?;
//! let collector = Collector::new(client);
//! let deadline = Deadline::after(Duration::from_secs(30));
//! let collection = collector.collect(&GroupSelection::All, IsolationLevel::ReadUncommitted, deadline).await?;
//! let offsets = collection.offsets?;
//! for group in &collection.groups {
//!     let Ok(described) = &group.described else { continue };
//!     let view = offsets.view(&group.group_id, described);
//!     println!("{}: {} {}, lag {}", group.group_id, described.group_protocol(), described.state(), view.report.lag.total);
//! }
//! # Ok(())
//! # }
//! ```

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use super::{
    ClassicGroupDescription, Client, ClientError, CommittedOffset, ConsumerGroupDescription, Deadline, ErrorKind,
    GroupOffsets, IsolationLevel, ListGroupsFilter, ListedGroup, Node, TopicLogOffsets,
};
use crate::assignor::{ClusterMetadata, TopicInfo};
use crate::inspect::inspect_classic;
use crate::inspect::offsets::{group_offsets, Committed, GroupOffsetsReport, GroupView, LogRange};
use crate::{AssignmentView, DecodeOptions, SubscriptionView};

/// Groups described per call (one DescribeGroups per coordinator for each).
const CHUNK: usize = 50;
/// Calls in flight at once: memory holds at most this many chunks of described groups.
const IN_FLIGHT: usize = 4;

/// What a group is known to be before describing it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupKind {
    /// A classic group (DescribeGroups).
    Classic,
    /// A KIP-848 consumer group (ConsumerGroupDescribe).
    Consumer,
    /// Not known (a name given by a person): DescribeGroups first, then ConsumerGroupDescribe
    /// where the broker does not know it as a classic group.
    Unknown,
}

/// Which groups a collection covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GroupSelection {
    /// Every classic and consumer group ListGroups reports (share and streams groups are not
    /// consumer groups and are left out), in group-id order.
    All,
    /// These groups, in this order (duplicates dropped), whatever their kind.
    Named(Vec<String>),
}

/// A described group of either protocol.
#[derive(Clone, Debug)]
pub enum DescribedGroup {
    /// A classic group, as DescribeGroups answered.
    Classic(ClassicGroupDescription),
    /// A KIP-848 consumer group, as ConsumerGroupDescribe answered.
    Consumer(ConsumerGroupDescription),
}

impl DescribedGroup {
    /// The broker's state name (`Stable`, `Empty`, `Reconciling`, ...).
    pub fn state(&self) -> &str {
        match self {
            DescribedGroup::Classic(g) => &g.group.state,
            DescribedGroup::Consumer(g) => &g.group.state,
        }
    }

    /// `classic` or `consumer`: the rebalance protocol the group runs.
    pub fn group_protocol(&self) -> &'static str {
        match self {
            DescribedGroup::Classic(_) => "classic",
            DescribedGroup::Consumer(_) => "consumer",
        }
    }

    /// The protocol type: `consumer` for consumer groups of either protocol (a classic group of
    /// Kafka Connect says `connect`).
    pub fn protocol_type(&self) -> &str {
        match self {
            DescribedGroup::Classic(g) => &g.group.protocol_type,
            DescribedGroup::Consumer(_) => "consumer",
        }
    }

    /// The assignor: the classic group's chosen protocol, the consumer group's server-side
    /// assignor (empty while none is chosen).
    pub fn assignor(&self) -> &str {
        match self {
            DescribedGroup::Classic(g) => &g.group.protocol,
            DescribedGroup::Consumer(g) => &g.group.assignor,
        }
    }

    /// How many members the group has.
    pub fn member_count(&self) -> usize {
        match self {
            DescribedGroup::Classic(g) => g.group.members.len(),
            DescribedGroup::Consumer(g) => g.group.members.len(),
        }
    }

    /// Each member's id, client id and client host, in member-id order.
    pub fn member_identities(&self) -> Vec<(&str, &str, &str)> {
        match self {
            DescribedGroup::Classic(g) => {
                g.group.members.iter().map(|m| (&*m.member_id, &*m.client_id, &*m.client_host)).collect()
            }
            DescribedGroup::Consumer(g) => {
                g.group.members.iter().map(|m| (&*m.member_id, &*m.client_id, &*m.client_host)).collect()
            }
        }
    }

    /// Every topic the members subscribe to, claim or are assigned (added to `names`).
    pub fn topic_names(&self, names: &mut BTreeSet<String>) {
        match self {
            DescribedGroup::Classic(g) if g.group.protocol_type == "consumer" => {
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
            DescribedGroup::Classic(_) => {}
            DescribedGroup::Consumer(g) => {
                for m in &g.group.members {
                    names.extend(m.subscribed_topics.iter().cloned());
                    for a in m.assignment.iter().chain(&m.target_assignment) {
                        names.insert(a.topic.clone());
                    }
                }
            }
        }
    }
}

/// One group of a collection: described, or why not.
#[derive(Clone, Debug)]
pub struct CollectedGroup {
    /// The group id.
    pub group_id: String,
    /// The description, or the error that stopped it (`not_found` for an id that names no
    /// group).
    pub described: Result<DescribedGroup, ClientError>,
    /// Partition counts and racks of the group's topics (shared by the groups of one batch).
    pub metadata: Arc<ClusterMetadata>,
}

/// Partition counts (and racks) of the topics seen so far, asked of the cluster once per topic.
#[derive(Debug, Default)]
struct TopicCache {
    known: Mutex<HashMap<String, Option<TopicInfo>>>,
}

impl TopicCache {
    /// Metadata for `names`, asking the cluster only for those not seen before.
    async fn get(
        &self,
        client: &Client,
        names: BTreeSet<String>,
        deadline: Deadline,
    ) -> Result<ClusterMetadata, ClientError> {
        let missing: Vec<String> = {
            let known = self.known.lock().unwrap_or_else(|e| e.into_inner());
            names.iter().filter(|n| !known.contains_key(*n)).cloned().collect()
        };
        if !missing.is_empty() {
            let refs: Vec<&str> = missing.iter().map(String::as_str).collect();
            let metadata = client.metadata(Some(&refs), deadline).await?;
            let mut known = self.known.lock().unwrap_or_else(|e| e.into_inner());
            // The member's rule (client::Metadata to the assignors' ClusterMetadata), so that
            // the diagnostics judge a group with the metadata its leader assigns with.
            let mut layout = ClusterMetadata::from(&metadata);
            for name in missing {
                let info = layout.topics.remove(&name);
                known.insert(name, info);
            }
        }
        let known = self.known.lock().unwrap_or_else(|e| e.into_inner());
        let mut counts = ClusterMetadata::default();
        for name in names {
            if let Some(Some(info)) = known.get(&name) {
                counts.topics.insert(name, info.clone());
            }
        }
        Ok(counts)
    }
}

/// Gathers groups and their offsets from one cluster. Cheap to clone (clones share the client
/// and the topic cache). The topic cache, which only [`describe`](Self::describe) uses, lives as
/// long as the collector; [`collect`](Self::collect) reads the metadata afresh each time, so a
/// long-running caller keeps one collector and still sees added partitions and moved leaders.
#[derive(Clone, Debug)]
pub struct Collector {
    client: Client,
    topics: Arc<TopicCache>,
    /// The brokers the last [`collect`](Self::collect)'s Metadata named: the next collection
    /// lists the groups on them instead of asking Metadata for them (taken once, so they are
    /// never older than one collection).
    brokers: Arc<Mutex<Option<Vec<Node>>>>,
}

/// Everything one collection gathered.
#[derive(Debug)]
pub struct Collection {
    /// The groups, in the selection's order (group-id order for [`GroupSelection::All`]).
    pub groups: Vec<CollectedGroup>,
    /// The offsets of the described groups, or the error that stopped reading them all.
    pub offsets: Result<Offsets, ClientError>,
}

/// The committed offsets of a set of groups and the log offsets of their topics.
#[derive(Clone, Debug, Default)]
pub struct Offsets {
    /// OffsetFetch's answer per group id.
    pub committed: HashMap<String, Result<GroupOffsets, ClientError>>,
    /// ListOffsets' answer per topic (with each partition's leader).
    pub logs: BTreeMap<String, TopicLogOffsets>,
    /// The log end the lag is measured to.
    pub isolation: IsolationLevel,
}

/// One group's offsets view ([`Offsets::view`]).
#[derive(Clone, Debug)]
pub struct GroupOffsetsView {
    /// Owners, pending hand-overs, lag and the offsets' findings.
    pub report: GroupOffsetsReport,
    /// Partitions whose committed offset, log start or log end could not be read, with the
    /// first error (a topic's metadata error applies to each of its partitions).
    pub gaps: BTreeMap<(String, i32), ClientError>,
    /// The OffsetFetch error of the whole group, if any.
    pub error: Option<ClientError>,
}

impl GroupOffsetsView {
    /// Whether any part of the view could not be read.
    pub fn partial(&self) -> bool {
        self.error.is_some() || !self.gaps.is_empty()
    }
}

impl Collector {
    /// A collector over `client` with an empty topic cache.
    pub fn new(client: Client) -> Self {
        Collector { client, topics: Arc::new(TopicCache::default()), brokers: Arc::new(Mutex::new(None)) }
    }

    /// The client.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The groups `selection` names, with their kinds: ListGroups for [`GroupSelection::All`].
    pub async fn select(
        &self,
        selection: &GroupSelection,
        deadline: Deadline,
    ) -> Result<Vec<(String, GroupKind)>, ClientError> {
        match selection {
            GroupSelection::All => {
                let listed = self.client.list_groups(&ListGroupsFilter::default(), deadline).await?;
                Ok(Self::wanted(selection, listed))
            }
            GroupSelection::Named(_) => Ok(Self::wanted(selection, Vec::new())),
        }
    }

    /// [`select`](Self::select), listing the groups on the brokers the previous collection's
    /// Metadata named when there are some; with a fresh Metadata when not, or when that failed
    /// (a broker gone).
    async fn select_reusing_brokers(
        &self,
        selection: &GroupSelection,
        deadline: Deadline,
    ) -> Result<Vec<(String, GroupKind)>, ClientError> {
        let brokers = self.brokers.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let (GroupSelection::All, Some(brokers)) = (selection, brokers) {
            let filter = ListGroupsFilter::default();
            if let Ok(listed) = self.client.list_groups_on_brokers(brokers, &filter, deadline).await {
                return Ok(Self::wanted(selection, listed));
            }
        }
        self.select(selection, deadline).await
    }

    /// The groups `selection` names, given ListGroups' answer for [`GroupSelection::All`].
    fn wanted(selection: &GroupSelection, listed: Vec<ListedGroup>) -> Vec<(String, GroupKind)> {
        let mut wanted: Vec<(String, GroupKind)> = Vec::new();
        match selection {
            GroupSelection::All => {
                for g in listed {
                    let kind = match g.group_type.as_deref() {
                        Some("consumer") => GroupKind::Consumer,
                        None | Some("classic") => GroupKind::Classic,
                        // Share and streams groups are not consumer groups.
                        Some(_) => continue,
                    };
                    wanted.push((g.group_id, kind));
                }
                wanted.sort_by(|a, b| a.0.cmp(&b.0));
                wanted.dedup_by(|a, b| a.0 == b.0);
            }
            GroupSelection::Named(names) => {
                let mut seen = std::collections::HashSet::new();
                for g in names {
                    if seen.insert(g.as_str()) {
                        wanted.push((g.clone(), GroupKind::Unknown));
                    }
                }
            }
        }
        wanted
    }

    /// Describes `wanted` in its order, in batches of 50 groups (each kind with its API, every
    /// coordinator in parallel), four batches in flight. A batch that fails as a whole gives
    /// each of its groups that error.
    pub async fn describe(&self, wanted: Vec<(String, GroupKind)>, deadline: Deadline) -> Vec<CollectedGroup> {
        type Task = tokio::task::JoinHandle<Result<Vec<CollectedGroup>, ClientError>>;
        let mut chunks = wanted.chunks(CHUNK).map(<[_]>::to_vec).collect::<VecDeque<_>>();
        let mut running: VecDeque<(Vec<String>, Task)> = VecDeque::new();
        let mut found = Vec::with_capacity(wanted.len());
        loop {
            while running.len() < IN_FLIGHT {
                let Some(chunk) = chunks.pop_front() else { break };
                let names: Vec<String> = chunk.iter().map(|(name, _)| name.clone()).collect();
                let this = self.clone();
                running.push_back((names, tokio::spawn(async move { this.describe_chunk(chunk, deadline).await })));
            }
            let Some((names, next)) = running.pop_front() else { break };
            let failed = |e: ClientError| {
                names.iter().map(move |name| CollectedGroup {
                    group_id: name.clone(),
                    described: Err(e.clone()),
                    metadata: Arc::new(ClusterMetadata::default()),
                })
            };
            match next.await {
                Ok(Ok(described)) => found.extend(described),
                Ok(Err(e)) => found.extend(failed(e)),
                Err(e) => {
                    found.extend(failed(ClientError::new(ErrorKind::Protocol, format!("a describe task failed: {e}"))))
                }
            }
        }
        found
    }

    /// Describes one batch of groups and reads the metadata of their topics, in the batch's order.
    async fn describe_chunk(
        &self,
        chunk: Vec<(String, GroupKind)>,
        deadline: Deadline,
    ) -> Result<Vec<CollectedGroup>, ClientError> {
        let mut found = self.describe_only(&chunk, deadline).await?;
        let mut names = BTreeSet::new();
        for described in found.values().flatten() {
            described.topic_names(&mut names);
        }
        let metadata = Arc::new(if names.is_empty() {
            ClusterMetadata::default()
        } else {
            self.topics.get(&self.client, names, deadline).await?
        });
        Ok(chunk
            .into_iter()
            .map(|(name, _)| {
                let described = found.remove(&name).unwrap_or_else(|| {
                    Err(ClientError::new(ErrorKind::Protocol, "the cluster answered nothing for this group"))
                });
                CollectedGroup { group_id: name, described, metadata: metadata.clone() }
            })
            .collect())
    }

    /// Describes `groups`, each kind with its API, all of a coordinator's groups in one request
    /// (every coordinator in parallel). `Err` when a call failed as a whole.
    async fn describe_only(
        &self,
        groups: &[(String, GroupKind)],
        deadline: Deadline,
    ) -> Result<HashMap<String, Result<DescribedGroup, ClientError>>, ClientError> {
        let client = &self.client;
        let mut found: HashMap<String, Result<DescribedGroup, ClientError>> = HashMap::new();
        let kinds: HashMap<&str, GroupKind> = groups.iter().map(|(g, k)| (g.as_str(), *k)).collect();
        let kind_of = |g: &str| kinds.get(g).copied().unwrap_or(GroupKind::Unknown);
        let chunk = groups;
        let classic: Vec<&str> =
            chunk.iter().filter(|(_, k)| *k != GroupKind::Consumer).map(|(g, _)| g.as_str()).collect();
        let mut consumer: Vec<&str> =
            chunk.iter().filter(|(_, k)| *k == GroupKind::Consumer).map(|(g, _)| g.as_str()).collect();
        if !classic.is_empty() {
            for (name, result) in classic.iter().zip(client.describe_groups(&classic, deadline).await?) {
                let unknown = kind_of(name) == GroupKind::Unknown;
                match result {
                    // DescribeGroups before v6 answers Dead without members both for an unknown
                    // group and for a KIP-848 group; v6 answers GROUP_ID_NOT_FOUND.
                    Ok(g) if unknown && g.group.state == "Dead" && g.group.members.is_empty() => consumer.push(name),
                    Err(e) if unknown && e.kind() == ErrorKind::NotFound => consumer.push(name),
                    other => {
                        found.insert((*name).to_owned(), other.map(DescribedGroup::Classic));
                    }
                }
            }
        }
        if !consumer.is_empty() {
            for (name, result) in consumer.iter().zip(client.describe_consumer_groups(&consumer, deadline).await?) {
                let result = match result {
                    Err(e) if e.kind() == ErrorKind::NotFound && kind_of(name) == GroupKind::Unknown => {
                        Err(ClientError::new(
                            ErrorKind::NotFound,
                            format!(
                                "group '{name}' does not exist: neither a classic nor a consumer group has this id"
                            ),
                        ))
                    }
                    other => other.map(DescribedGroup::Consumer),
                };
                found.insert((*name).to_owned(), result);
            }
        }
        Ok(found)
    }

    /// The committed offsets of every described group in `groups` (one OffsetFetch per
    /// coordinator) and the log start and end of every topic they subscribe to, are assigned
    /// or have committed (one Metadata, then one ListOffsets per leader and offset kind).
    pub async fn offsets(
        &self,
        groups: &[CollectedGroup],
        isolation: IsolationLevel,
        deadline: Deadline,
    ) -> Result<Offsets, ClientError> {
        let described: Vec<(&str, &DescribedGroup)> =
            groups.iter().filter_map(|g| Some((g.group_id.as_str(), g.described.as_ref().ok()?))).collect();
        let (committed, topics) = self.committed(&described, deadline).await?;
        let topics: Vec<String> = topics.into_iter().collect();
        let logs = self
            .client
            .log_offsets(&topics, isolation, deadline)
            .await?
            .into_iter()
            .map(|t| (t.topic.clone(), t))
            .collect();
        Ok(Offsets { committed, logs, isolation })
    }

    /// The committed offsets of `described` (one OffsetFetch per coordinator) and every topic
    /// the groups subscribe to, are assigned or have committed.
    async fn committed(
        &self,
        described: &[(&str, &DescribedGroup)],
        deadline: Deadline,
    ) -> Result<(HashMap<String, Result<GroupOffsets, ClientError>>, BTreeSet<String>), ClientError> {
        let names: Vec<&str> = described.iter().map(|(n, _)| *n).collect();
        let mut committed = HashMap::new();
        let mut topics = BTreeSet::new();
        if !names.is_empty() {
            for (name, result) in names.iter().zip(self.client.fetch_committed_offsets(&names, deadline).await?) {
                if let Ok(g) = &result {
                    topics.extend(g.offsets.iter().map(|o| o.topic.clone()));
                }
                committed.insert((*name).to_owned(), result);
            }
        }
        for (_, d) in described {
            d.topic_names(&mut topics);
        }
        Ok((committed, topics))
    }

    /// Selects, describes and reads the offsets of groups, as [`select`](Self::select),
    /// [`describe`](Self::describe) and [`offsets`](Self::offsets) would, in the fewest
    /// requests: every group of a coordinator in one DescribeGroups (no batches of 50), one
    /// OffsetFetch per coordinator, then one Metadata for every topic of every group, which
    /// gives both the groups' partition counts (one [`ClusterMetadata`] shared by all the
    /// groups) and the ListOffsets leaders, and whose broker list the next collection of this
    /// collector lists the groups on. Only ListGroups failing is an `Err`; a group that could
    /// not be described carries its error, and offsets that could not be read (the Metadata
    /// included: the groups then have no partition counts) are [`Collection::offsets`]'s error.
    pub async fn collect(
        &self,
        selection: &GroupSelection,
        isolation: IsolationLevel,
        deadline: Deadline,
    ) -> Result<Collection, ClientError> {
        let wanted = self.select_reusing_brokers(selection, deadline).await?;
        let mut found = match self.describe_only(&wanted, deadline).await {
            Ok(found) => found,
            Err(e) => wanted.iter().map(|(name, _)| (name.clone(), Err(e.clone()))).collect(),
        };
        let mut groups: Vec<CollectedGroup> = wanted
            .into_iter()
            .map(|(name, _)| {
                let described = found.remove(&name).unwrap_or_else(|| {
                    Err(ClientError::new(ErrorKind::Protocol, "the cluster answered nothing for this group"))
                });
                CollectedGroup { group_id: name, described, metadata: Arc::default() }
            })
            .collect();
        let offsets = self.offsets_and_metadata(&groups, isolation, deadline).await;
        let offsets = match offsets {
            Ok((offsets, metadata)) => {
                let metadata = Arc::new(metadata);
                for g in &mut groups {
                    g.metadata = metadata.clone();
                }
                Ok(offsets)
            }
            Err(e) => Err(e),
        };
        Ok(Collection { groups, offsets })
    }

    /// [`offsets`](Self::offsets) with one Metadata for the groups' partition counts and the
    /// leaders both; its brokers are kept for the next [`collect`](Self::collect)'s ListGroups.
    async fn offsets_and_metadata(
        &self,
        groups: &[CollectedGroup],
        isolation: IsolationLevel,
        deadline: Deadline,
    ) -> Result<(Offsets, ClusterMetadata), ClientError> {
        let described: Vec<(&str, &DescribedGroup)> =
            groups.iter().filter_map(|g| Some((g.group_id.as_str(), g.described.as_ref().ok()?))).collect();
        let (committed, topics) = self.committed(&described, deadline).await?;
        if topics.is_empty() {
            return Ok((Offsets { committed, logs: BTreeMap::new(), isolation }, ClusterMetadata::default()));
        }
        let names: BTreeSet<&str> = topics.iter().map(String::as_str).collect();
        let asked: Vec<&str> = names.iter().copied().collect();
        let metadata = self.client.metadata(Some(&asked), deadline).await?;
        *self.brokers.lock().unwrap_or_else(|e| e.into_inner()) = Some(metadata.brokers.clone());
        // The member's rule (client::Metadata to the assignors' ClusterMetadata), as in
        // `describe`'s topic cache.
        let layout = ClusterMetadata::from(&metadata);
        let logs = self
            .client
            .log_offsets_with(metadata, names, isolation, deadline)
            .await?
            .into_iter()
            .map(|t| (t.topic.clone(), t))
            .collect();
        Ok((Offsets { committed, logs, isolation }, layout))
    }
}

impl Offsets {
    /// The partition counts of `topics` that were read, from the ListOffsets metadata.
    fn counts(&self, topics: &BTreeSet<String>) -> ClusterMetadata {
        ClusterMetadata::from_counts(topics.iter().filter_map(|name| {
            let partitions = self.logs.get(name)?.partitions.as_ref().ok()?;
            Some((name.clone(), i32::try_from(partitions.len()).unwrap_or(i32::MAX)))
        }))
    }

    /// The offsets view of one described group: one entry per partition of every topic it
    /// subscribes to, is assigned, or has committed, with owners, pending hand-overs, lag and
    /// the gaps.
    ///
    /// Only the group's own topics are read from [`logs`](Self::logs), which holds the topics of
    /// every group collected: a view costs the group's partitions, not the cluster's (10,000
    /// groups on their own topics would otherwise cost 10,000 x every partition).
    pub fn view(&self, group_id: &str, described: &DescribedGroup) -> GroupOffsetsView {
        let mut gaps: BTreeMap<(String, i32), ClientError> = BTreeMap::new();
        let mut error = None;
        let committed: Vec<Committed> = match self.committed.get(group_id) {
            Some(Ok(g)) => g.offsets.iter().map(|o| committed_of(o, &mut gaps)).collect(),
            Some(Err(e)) => {
                error = Some(e.clone());
                Vec::new()
            }
            None => Vec::new(),
        };
        // The topics the view can show: subscribed, claimed, assigned or committed.
        let mut topics = BTreeSet::new();
        described.topic_names(&mut topics);
        topics.extend(committed.iter().map(|c| c.topic.clone()));
        let counts = self.counts(&topics);
        let mut logs = Vec::new();
        for t in topics.iter().filter_map(|name| self.logs.get(name)) {
            if let Ok(partitions) = &t.partitions {
                for p in partitions {
                    for side in [&p.log_start_offset, &p.log_end_offset] {
                        if let Err(e) = side {
                            gaps.entry((t.topic.clone(), p.partition)).or_insert_with(|| e.clone());
                        }
                    }
                    logs.push(LogRange {
                        topic: t.topic.clone(),
                        partition: p.partition,
                        log_start_offset: p.log_start_offset.as_ref().ok().copied(),
                        log_end_offset: p.log_end_offset.as_ref().ok().copied(),
                    });
                }
            }
        }
        let report = match described {
            DescribedGroup::Classic(g) => {
                let inspected = inspect_classic(&g.group, &counts);
                group_offsets(GroupView::Classic(&g.group, &inspected), &counts, &committed, &logs)
            }
            DescribedGroup::Consumer(g) => group_offsets(GroupView::Consumer(&g.group), &counts, &committed, &logs),
        };
        // A topic whose metadata could not be read: each of its rows has that error.
        for o in &report.offsets {
            if let Some(Err(e)) = self.logs.get(&o.topic).map(|t| &t.partitions) {
                gaps.entry((o.topic.clone(), o.partition)).or_insert_with(|| e.clone());
            }
        }
        gaps.retain(|key, _| report.offsets.iter().any(|o| (&o.topic, o.partition) == (&key.0, key.1)));
        GroupOffsetsView { report, gaps, error }
    }
}

fn committed_of(o: &CommittedOffset, gaps: &mut BTreeMap<(String, i32), ClientError>) -> Committed {
    if let Some(e) = &o.error {
        gaps.insert((o.topic.clone(), o.partition), e.clone());
    }
    Committed {
        topic: o.topic.clone(),
        partition: o.partition,
        offset: o.offset,
        metadata: o.metadata.clone(),
        leader_epoch: o.leader_epoch,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::{Node, PartitionLogOffsets};
    use crate::group_api::DescribedGroupMember;
    use crate::inspect::ClassicGroup;
    use crate::{Assignment, Subscription, TopicPartitions, Version};
    use bytes::Bytes;

    fn node() -> Node {
        Node { node_id: 1, host: "127.0.0.1".into(), port: 9092, rack: None }
    }

    fn log(topic: &str, partitions: i32, end: i64) -> TopicLogOffsets {
        let partitions = (0..partitions)
            .map(|p| PartitionLogOffsets {
                partition: p,
                leader: Some(1),
                log_start_offset: Ok(0),
                log_end_offset: Ok(end),
            })
            .collect();
        TopicLogOffsets { topic: topic.into(), partitions: Ok(partitions) }
    }

    fn commit(topic: &str, partition: i32, offset: i64) -> CommittedOffset {
        CommittedOffset {
            topic: topic.into(),
            partition,
            offset: Some(offset),
            leader_epoch: None,
            metadata: None,
            error: None,
        }
    }

    /// A view reads only the group's topics out of every group's logs (issue 35's scale fix), so
    /// it must still take both kinds: the topics the members subscribe to (all their partitions,
    /// assigned or not) and a topic the group only has commits on.
    #[test]
    fn a_view_shows_its_subscribed_and_committed_topics_and_no_other() {
        let member = DescribedGroupMember {
            member_id: "c1".into(),
            member_metadata: Bytes::from(Subscription::new(["orders"]).encode(Version::V3).unwrap()),
            member_assignment: Bytes::from(
                Assignment::new(vec![TopicPartitions::new("orders", vec![0, 1])]).encode(Version::V3).unwrap(),
            ),
            ..DescribedGroupMember::default()
        };
        let described = DescribedGroup::Classic(ClassicGroupDescription {
            group: ClassicGroup {
                group_id: "g".into(),
                state: "Stable".into(),
                protocol_type: "consumer".into(),
                protocol: "range".into(),
                members: vec![member],
            },
            authorized_operations: 0,
            coordinator: node(),
            version: 5,
        });
        let committed = GroupOffsets {
            group_id: "g".into(),
            offsets: vec![commit("orders", 0, 10), commit("old", 0, 5)],
            coordinator: node(),
            version: 8,
        };
        let offsets = Offsets {
            committed: HashMap::from([("g".to_owned(), Ok(committed))]),
            // "other" is another group's topic.
            logs: [log("orders", 3, 100), log("old", 1, 7), log("other", 4, 50)]
                .into_iter()
                .map(|t| (t.topic.clone(), t))
                .collect(),
            isolation: IsolationLevel::ReadUncommitted,
        };
        let view = offsets.view("g", &described);
        let rows: Vec<(&str, i32, Option<i64>, Option<i64>)> =
            view.report.offsets.iter().map(|o| (o.topic.as_str(), o.partition, o.log_end_offset, o.lag)).collect();
        assert_eq!(
            rows,
            [
                ("old", 0, Some(7), Some(2)),
                ("orders", 0, Some(100), Some(90)),
                ("orders", 1, Some(100), None),
                ("orders", 2, Some(100), None),
            ]
        );
        assert_eq!(view.report.lag.total, 92);
        assert!(!view.partial(), "{:?}", view.gaps);
    }
}
