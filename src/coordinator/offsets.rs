//! Offset commits and fetches tied to the group (Java `ConsumerCoordinator`'s
//! `sendOffsetCommitRequest`, `OffsetCommitResponseHandler`, `OffsetFetchResponseHandler`).
//!
//! A commit carries the member's generation, member id and group instance id, and is only sent
//! while the member is stable: during a rebalance it fails at once with
//! [`CommitError::RebalanceInProgress`] (KIP-429: complete the rebalance, then commit again).
//! The broker's answer is handled as Java handles it; see [`CommitError`].
//!
//! With [`Config::fetch_offsets_on_assign`](super::Config::fetch_offsets_on_assign), newly
//! assigned partitions are not announced until an OffsetFetch (`require_stable`) has found where
//! the group left them: [`Event::OffsetsFetched`] comes right before their
//! [`Event::PartitionsAssigned`].

use std::fmt;

use super::{Api, Coordinator, CoordinatorError, Event, InFlight, Request, RequestId, State, Transmit};
use crate::assignor::RebalanceProtocol;
use crate::group_api::{
    ErrorCode, OffsetCommitPartition, OffsetCommitRequest, OffsetCommitResponse, OffsetCommitTopic, OffsetFetchRequest,
    OffsetFetchResponse, OffsetFetchTopic,
};
use crate::PartitionSet;

/// One partition's offset: what a commit sends, what the group has committed.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PartitionOffset {
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: i32,
    /// The next offset to read (the last processed record's offset plus one).
    pub offset: i64,
    /// The leader epoch of the last processed record, when known.
    pub leader_epoch: Option<i32>,
    /// Metadata stored with the offset (empty for none).
    pub metadata: String,
}

impl PartitionOffset {
    /// `offset` of `topic`/`partition`, without leader epoch or metadata.
    ///
    /// ```
    /// use kafka_consumer_protocol::coordinator::PartitionOffset;
    /// let o = PartitionOffset::new("orders", 2, 1_000);
    /// assert_eq!((o.partition, o.offset, o.leader_epoch), (2, 1_000, None));
    /// ```
    pub fn new(topic: impl Into<String>, partition: i32, offset: i64) -> Self {
        PartitionOffset { topic: topic.into(), partition, offset, leader_epoch: None, metadata: String::new() }
    }
}

/// Why an offset commit failed, as Java's consumer tells its caller.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CommitError {
    /// The member is rebalancing (not stable when asked, or the broker says the group is
    /// rebalancing): complete the rebalance, then commit again (Java
    /// `RebalanceInProgressException`). Not sent, or a rejoin is requested.
    RebalanceInProgress,
    /// The member is not (or no longer) in the generation: its partitions may be someone else's
    /// already, so the commit cannot be retried (Java `CommitFailedException`). After the broker's
    /// `UNKNOWN_MEMBER_ID` or `ILLEGAL_GENERATION` the member has been reset and rejoins.
    CommitFailed,
    /// A broker error that a retry may mend (`commitSync` retries these until its timeout).
    /// `coordinator_unknown`: the coordinator moved or did not answer; find it again.
    Retriable {
        /// The error.
        error: ErrorCode,
        /// Whether the coordinator must be looked up again first.
        coordinator_unknown: bool,
    },
    /// A broker error no retry mends: authorization, `OFFSET_METADATA_TOO_LARGE`,
    /// `INVALID_COMMIT_OFFSET_SIZE`, `FENCED_INSTANCE_ID` (the coordinator stops too, as it does for
    /// `GROUP_AUTHORIZATION_FAILED`), or an error Java does not expect.
    Fatal(ErrorCode),
}

impl CommitError {
    /// Whether committing the same offsets again may succeed without a rebalance in between.
    pub fn is_retriable(&self) -> bool {
        matches!(self, CommitError::Retriable { .. })
    }
}

impl fmt::Display for CommitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CommitError::RebalanceInProgress => write!(
                f,
                "offset commit cannot be completed since the consumer group is rebalancing; \
                 complete the rebalance, then commit again"
            ),
            CommitError::CommitFailed => {
                write!(f, "offset commit cannot be completed since the member is not in the group's current generation")
            }
            CommitError::Retriable { error, .. } => write!(f, "offset commit failed with a retriable error: {error}"),
            CommitError::Fatal(error) => write!(f, "offset commit failed: {error}"),
        }
    }
}

impl std::error::Error for CommitError {}

/// A commit on its way: what was sent, in which generation.
#[derive(Clone, Debug)]
pub(super) struct PendingCommit {
    pub(super) deadline: u64,
    pub(super) generation: i32,
    pub(super) member_id: String,
    pub(super) offsets: Vec<PartitionOffset>,
}

/// Newly assigned partitions waiting for their committed offsets before they are announced.
#[derive(Clone, Debug)]
pub(super) struct PendingAssign {
    pub(super) partitions: PartitionSet,
    pub(super) fetch: Option<InFlight>,
    /// When to send the OffsetFetch again after a retriable error.
    pub(super) retry_at: u64,
}

fn offset_commit_topics(offsets: &[PartitionOffset]) -> Vec<OffsetCommitTopic> {
    let mut topics: Vec<OffsetCommitTopic> = Vec::new();
    let mut sorted: Vec<&PartitionOffset> = offsets.iter().collect();
    sorted.sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
    for o in sorted {
        let partition = OffsetCommitPartition {
            partition: o.partition,
            offset: o.offset,
            leader_epoch: o.leader_epoch.unwrap_or(-1),
            metadata: Some(o.metadata.clone()),
        };
        match topics.last_mut() {
            Some(t) if t.name == o.topic => t.partitions.push(partition),
            _ => topics.push(OffsetCommitTopic { name: o.topic.clone(), partitions: vec![partition] }),
        }
    }
    topics
}

impl Coordinator {
    /// Commits `offsets` for the current generation (Java `commitSync`/`commitAsync`, one attempt).
    /// Returns the id the outcome arrives with, as [`Event::CommitCompleted`], after the
    /// OffsetCommit goes out through [`poll_request`](Self::poll_request).
    ///
    /// Nothing is sent unless the member is [`State::Stable`]: while it rebalances this fails at
    /// once with [`CommitError::RebalanceInProgress`], and out of any generation with
    /// [`CommitError::CommitFailed`]. An empty commit completes at once.
    pub fn commit(&mut self, now: u64, offsets: Vec<PartitionOffset>) -> Result<RequestId, CommitError> {
        match self.state {
            State::Stable => {}
            State::PreparingRebalance | State::CompletingRebalance => return Err(CommitError::RebalanceInProgress),
            State::Unjoined | State::Fatal => return Err(CommitError::CommitFailed),
        }
        let id = self.fresh_id();
        if offsets.is_empty() {
            self.events.push_back(Event::CommitCompleted { id, result: Ok(Vec::new()) });
            return Ok(id);
        }
        self.queued.push_back(Transmit {
            id,
            request: Request::OffsetCommit(OffsetCommitRequest {
                group_id: self.config.group_id.clone(),
                generation_id: self.generation,
                member_id: self.member_id.clone(),
                group_instance_id: self.config.group_instance_id.clone(),
                topics: offset_commit_topics(&offsets),
            }),
        });
        self.commits.insert(
            id,
            PendingCommit {
                deadline: now + self.config.request_timeout_ms,
                generation: self.generation,
                member_id: self.member_id.clone(),
                offsets,
            },
        );
        Ok(id)
    }

    /// The offsets committed for the partitions this member owns: the last this member committed,
    /// or what the group had committed when they were assigned (with
    /// [`Config::fetch_offsets_on_assign`](super::Config::fetch_offsets_on_assign)), sorted by
    /// (topic, partition). Partitions never committed are absent.
    pub fn committed(&self) -> Vec<PartitionOffset> {
        self.committed.values().filter(|o| self.owned.contains(&o.topic, o.partition)).cloned().collect()
    }

    /// Whether the partitions of the last assignment are still waiting for their committed
    /// offsets (the `PartitionsAssigned` event follows the OffsetFetch).
    pub fn fetching_offsets(&self) -> bool {
        self.pending_assign.is_some()
    }

    /// Whether the generation the commit was sent in is still ours (Java `generationUnchanged`).
    fn commit_generation_unchanged(&self, c: &PendingCommit) -> bool {
        c.generation == self.generation && c.member_id == self.member_id
    }

    pub(super) fn on_commit_response(&mut self, id: RequestId, c: PendingCommit, r: OffsetCommitResponse) {
        // Java handles the partitions in order and stops at the first error.
        let error = r.errors().map(|(_, _, e)| e).find(|&e| e != ErrorCode::NONE).unwrap_or(ErrorCode::NONE);
        let result = match error {
            ErrorCode::NONE => {
                for o in &c.offsets {
                    self.committed.insert((o.topic.clone(), o.partition), o.clone());
                }
                Ok(c.offsets)
            }
            ErrorCode::COORDINATOR_LOAD_IN_PROGRESS | ErrorCode::UNKNOWN_TOPIC_OR_PARTITION => {
                Err(CommitError::Retriable { error, coordinator_unknown: false })
            }
            ErrorCode::COORDINATOR_NOT_AVAILABLE | ErrorCode::NOT_COORDINATOR | ErrorCode::REQUEST_TIMED_OUT => {
                Err(CommitError::Retriable { error, coordinator_unknown: true })
            }
            ErrorCode::REBALANCE_IN_PROGRESS => {
                self.request_rejoin("offset commit failed since group is already rebalancing");
                Err(CommitError::RebalanceInProgress)
            }
            ErrorCode::UNKNOWN_MEMBER_ID | ErrorCode::ILLEGAL_GENERATION => {
                if !self.commit_generation_unchanged(&c) && self.state == State::PreparingRebalance {
                    // The member already rejoins with a newer generation: no reset.
                    Err(CommitError::RebalanceInProgress)
                } else {
                    // ILLEGAL_GENERATION keeps the member id: the member may still be known.
                    let reason = format!("encountered {} from OffsetCommit", error.name());
                    self.reset_generation(error == ErrorCode::UNKNOWN_MEMBER_ID, &reason);
                    Err(CommitError::CommitFailed)
                }
            }
            ErrorCode::FENCED_INSTANCE_ID => {
                if self.commit_generation_unchanged(&c) {
                    self.fatal(CoordinatorError::Broker { api: "OffsetCommit", error });
                    Err(CommitError::Fatal(error))
                } else if self.state == State::PreparingRebalance {
                    Err(CommitError::RebalanceInProgress)
                } else {
                    Err(CommitError::CommitFailed)
                }
            }
            ErrorCode::GROUP_AUTHORIZATION_FAILED => {
                self.fatal(CoordinatorError::Broker { api: "OffsetCommit", error });
                Err(CommitError::Fatal(error))
            }
            // TOPIC_AUTHORIZATION_FAILED, OFFSET_METADATA_TOO_LARGE, INVALID_COMMIT_OFFSET_SIZE and
            // whatever Java calls an unexpected error: this commit fails, the member goes on.
            e => Err(CommitError::Fatal(e)),
        };
        self.events.push_back(Event::CommitCompleted { id, result });
    }

    /// Commits whose response did not come within the request timeout fail as Java's do
    /// (a timed-out request marks the coordinator unknown).
    pub(super) fn expire_commits(&mut self, now: u64) {
        let expired: Vec<RequestId> =
            self.commits.iter().filter(|(_, c)| now >= c.deadline).map(|(&id, _)| id).collect();
        for id in expired {
            self.commits.remove(&id);
            let result = Err(CommitError::Retriable { error: ErrorCode::REQUEST_TIMED_OUT, coordinator_unknown: true });
            self.events.push_back(Event::CommitCompleted { id, result });
        }
    }

    /// Commits that can no longer be answered (the coordinator stopped) fail.
    pub(super) fn fail_commits(&mut self) {
        for (id, _) in std::mem::take(&mut self.commits) {
            self.events.push_back(Event::CommitCompleted { id, result: Err(CommitError::CommitFailed) });
        }
    }

    /// Holds `added` back until their committed offsets are known.
    pub(super) fn fetch_before_assigning(&mut self, now: u64, added: PartitionSet) {
        self.pending_assign = Some(PendingAssign { partitions: added, fetch: None, retry_at: now });
        self.send_offset_fetch(now);
    }

    /// Sends the pending assignment's OffsetFetch when it is due.
    pub(super) fn send_offset_fetch(&mut self, now: u64) {
        let Some(pending) = &self.pending_assign else { return };
        if pending.fetch.is_some() || now < pending.retry_at {
            return;
        }
        let topics: Vec<OffsetFetchTopic> = pending
            .partitions
            .to_groups()
            .into_iter()
            .map(|t| OffsetFetchTopic { name: t.topic, partitions: t.partitions })
            .collect();
        let id = self.fresh_id();
        let fetch = InFlight {
            id,
            api: Api::OffsetFetch,
            deadline: now + self.config.request_timeout_ms,
            generation: self.generation,
        };
        if let Some(pending) = &mut self.pending_assign {
            pending.fetch = Some(fetch);
        }
        self.queued.push_back(Transmit {
            id,
            request: Request::OffsetFetch(OffsetFetchRequest {
                group_id: self.config.group_id.clone(),
                topics: Some(topics),
                require_stable: true,
            }),
        });
    }

    /// The OffsetFetch timed out: try again after the backoff.
    pub(super) fn expire_offset_fetch(&mut self, now: u64) {
        let backoff = self.config.retry_backoff_ms;
        if let Some(pending) = &mut self.pending_assign {
            if pending.fetch.as_ref().is_some_and(|f| now >= f.deadline) {
                pending.fetch = None;
                pending.retry_at = now + backoff;
            }
        }
    }

    pub(super) fn on_offset_fetch_response(&mut self, now: u64, id: RequestId, r: OffsetFetchResponse) {
        let Some(mut pending) = self.pending_assign.take() else { return };
        if pending.fetch.as_ref().is_none_or(|f| f.id != id) {
            self.pending_assign = Some(pending);
            return;
        }
        pending.fetch = None;
        pending.retry_at = now + self.config.retry_backoff_ms;
        match r.error {
            ErrorCode::NONE => {}
            ErrorCode::GROUP_AUTHORIZATION_FAILED => {
                self.fatal(CoordinatorError::Broker { api: "OffsetFetch", error: r.error });
                return;
            }
            e => {
                // COORDINATOR_LOAD_IN_PROGRESS, NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE and
                // REQUEST_TIMED_OUT are retried quietly; anything else is reported, then retried
                // (Java throws it from poll(), and the next poll fetches again).
                if !e.is_coordinator_error() {
                    self.events.push_back(Event::Error(CoordinatorError::Broker { api: "OffsetFetch", error: e }));
                }
                self.pending_assign = Some(pending);
                return;
            }
        }
        let mut found = Vec::new();
        let mut partition_error = None;
        for t in &r.topics {
            for p in &t.partitions {
                if !pending.partitions.contains(&t.name, p.partition) {
                    continue;
                }
                if p.error != ErrorCode::NONE {
                    partition_error.get_or_insert(p.error);
                } else if p.committed_offset >= 0 {
                    found.push(PartitionOffset {
                        topic: t.name.clone(),
                        partition: p.partition,
                        offset: p.committed_offset,
                        leader_epoch: (p.leader_epoch >= 0).then_some(p.leader_epoch),
                        metadata: p.metadata.clone().unwrap_or_default(),
                    });
                }
            }
        }
        if let Some(e) = partition_error {
            // UNSTABLE_OFFSET_COMMIT (a transaction's commit pending) is retried quietly; an
            // unknown or unauthorized topic is reported and retried, as Java's next poll does.
            if e != ErrorCode::UNSTABLE_OFFSET_COMMIT {
                self.events.push_back(Event::Error(CoordinatorError::Broker { api: "OffsetFetch", error: e }));
            }
            self.pending_assign = Some(pending);
            return;
        }
        found.sort();
        found.dedup_by(|a, b| a.topic == b.topic && a.partition == b.partition);
        for o in &found {
            self.committed.insert((o.topic.clone(), o.partition), o.clone());
        }
        self.owned.extend(pending.partitions.iter());
        self.events.push_back(Event::OffsetsFetched(found));
        let announced = match self.protocol {
            RebalanceProtocol::Eager => self.owned.to_groups(),
            RebalanceProtocol::Cooperative => pending.partitions.to_groups(),
        };
        self.events.push_back(Event::PartitionsAssigned(announced));
    }
}
