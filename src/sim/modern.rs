//! The broker side of a KIP-848 consumer group (`ConsumerGroup` in Kafka 4.x's group
//! coordinator) for one group, with classic members inside it: what the simulated group becomes
//! once the first consumer-protocol member converts it.
//!
//! What it models, after `GroupMetadataManager` and `CurrentAssignmentBuilder`:
//! - a **group epoch**, bumped by every change of membership, subscription or topic metadata,
//!   and a **target assignment** recomputed at once for the new epoch by the server-side assignor
//!   (`uniform` simulated with our `cooperative-sticky`, `range` with our `range`, both starting
//!   from the members' current assignment, as `upgrade-check` simulates them);
//! - per member a **member epoch**, its assigned partitions and its partitions **pending
//!   revocation**, in the states `STABLE`, `UNREVOKED_PARTITIONS` and `UNRELEASED_PARTITIONS`. A
//!   member behind the target first keeps only what the target leaves it and must revoke the rest
//!   (its epoch unchanged); once it reports (heartbeat, or a classic member's JoinGroup owned
//!   partitions) that it no longer owns them, it moves to the target epoch and gets every target
//!   partition **that no other member owns** (assigned or pending revocation); the others stay
//!   withheld until their owner releases them;
//! - **classic members** (`classicGroupJoinToConsumerGroup` and its Sync/Heartbeat/Leave
//!   siblings): JoinGroup reconciles with the OwnedPartitions of the member's subscription and
//!   answers at once with `generationId` = member epoch, no leader, no member list; SyncGroup
//!   returns the member's assigned partitions; Heartbeat answers REBALANCE_IN_PROGRESS when the
//!   member epoch is behind the group epoch, when the member must revoke, or when partitions it
//!   waits for have been released, so that it rejoins;
//! - session expiry of both kinds of members.
//!
//! Where it differs from Kafka (simplifications the simulated scenarios do not exercise):
//! - a new classic member is accepted with its member id at once (no MEMBER_ID_REQUIRED round);
//!   static membership (`group.instance.id`) is not modelled inside a consumer group;
//! - the classic members' rebalance timeout (the time to rejoin after REBALANCE_IN_PROGRESS) and
//!   the consumer members' rebalance timeout for revocation are not enforced: only sessions expire;
//! - heartbeat interval and session timeout of consumer members are the scenario's
//!   `heartbeat_interval_ms` and `session_timeout_ms` (in Kafka, the broker's
//!   `group.consumer.heartbeat.interval.ms` and `group.consumer.session.timeout.ms`);
//! - a consumer member's heartbeat always carries its full state and the answer always its full
//!   assignment (Kafka sends both only when they changed);
//! - OffsetCommit and OffsetFetch from classic members are answered without validation, and the
//!   group never goes back to classic (no downgrade).
//!
//! Two consequences of the conversion rules that the simulator shows as Kafka's source reads
//! (not checked against a live broker):
//! - a group converted in the middle of a classic rebalance starts from each member's last
//!   synced assignment (stale, KAFKA-21582), and its classic members are at the member epoch of
//!   the classic generation; the parked JoinGroup and SyncGroup requests are answered with
//!   REBALANCE_IN_PROGRESS;
//! - a SyncGroup still in flight at the conversion that names the group's classic protocol when
//!   it is not the member's first one is refused with INCONSISTENT_GROUP_PROTOCOL
//!   (`throwIfClassicProtocolUnmatched` compares with the first), which the member takes as fatal.

use std::collections::{BTreeMap, BTreeSet};

use bytes::Bytes;

use super::broker::Reply;
use crate::assignor::{builtin, ClusterMetadata, GroupMember};
use crate::coordinator::*;
use crate::group_api::{
    OffsetCommitPartitionResult, OffsetCommitTopicResult, OffsetFetchPartition, OffsetFetchTopicResult,
};
use crate::{Assignment, PartitionSet, Subscription, Version};

/// A consumer member's `ConsumerGroupHeartbeat`, as much of it as the simulator needs.
#[derive(Clone, Debug)]
pub(super) struct CgHeartbeat {
    /// Empty on the first heartbeat.
    pub(super) member_id: String,
    /// 0 to join, -1 to leave, else the member's epoch.
    pub(super) member_epoch: i32,
    pub(super) topics: Vec<String>,
    /// The partitions the member owns (its acknowledgement of revocations).
    pub(super) owned: PartitionSet,
}

/// The answer to a [`CgHeartbeat`].
#[derive(Clone, Debug)]
pub(super) struct CgResponse {
    pub(super) error: CgError,
    pub(super) member_id: String,
    pub(super) member_epoch: i32,
    pub(super) assignment: PartitionSet,
}

/// The errors a consumer member can get.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum CgError {
    None,
    /// UNKNOWN_MEMBER_ID: rejoin with epoch 0, partitions lost.
    UnknownMember,
    /// FENCED_MEMBER_EPOCH: as above.
    Fenced,
    /// GROUP_ID_NOT_FOUND (the classic group cannot be converted): fatal for the Java consumer.
    GroupIdNotFound(String),
}

/// A member's reconciliation state (`MemberState`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum MemberState {
    Stable,
    UnrevokedPartitions,
    UnreleasedPartitions,
}

#[derive(Clone, Debug)]
pub(super) struct MMember {
    /// The simulated member's name (where responses go).
    pub(super) name: String,
    /// The classic member's protocols; `None` for a consumer-protocol member.
    pub(super) classic: Option<Vec<JoinGroupProtocol>>,
    pub(super) topics: BTreeSet<String>,
    pub(super) epoch: i32,
    pub(super) assigned: PartitionSet,
    pub(super) revoking: PartitionSet,
    pub(super) state: MemberState,
    last_heartbeat: u64,
    session_ms: u64,
}

/// A classic member as the classic group hands it over at conversion.
pub(super) struct Converted {
    pub(super) member_id: String,
    pub(super) name: String,
    pub(super) protocols: Vec<JoinGroupProtocol>,
    pub(super) topics: Vec<String>,
    pub(super) assigned: PartitionSet,
    pub(super) session_ms: u64,
}

/// The broker's consumer group.
#[derive(Clone, Debug)]
pub(super) struct ModernGroup {
    /// Our assignor standing in for the server-side one.
    model: &'static str,
    pub(super) group_epoch: i32,
    pub(super) target_epoch: i32,
    pub(super) members: BTreeMap<String, MMember>,
    pub(super) target: BTreeMap<String, PartitionSet>,
    /// Who owns each partition (assigned or pending revocation): what withholds it from others.
    owner: BTreeMap<(String, i32), String>,
    metadata: ClusterMetadata,
    next_seq: u64,
    /// Target assignments computed.
    pub(super) target_computations: u64,
    /// Test-only fault: hand out partitions without waiting for their owner's revocation.
    pub(super) skip_release_wait: bool,
}

impl ModernGroup {
    /// A consumer group converted from `members` of a classic group at `generation` (every member
    /// at that epoch with its last classic assignment, the target being that assignment), or a
    /// new empty one.
    pub(super) fn new(
        server_assignor: &str,
        metadata: ClusterMetadata,
        generation: i32,
        members: Vec<Converted>,
        now: u64,
    ) -> Self {
        use crate::inspect::upgrade::ServerAssignor;
        // The stand-in `upgrade-check` simulates the server-side assignor with.
        let model = ServerAssignor::parse(server_assignor).unwrap_or(ServerAssignor::Uniform).model();
        let mut g = ModernGroup {
            model,
            group_epoch: generation,
            target_epoch: generation,
            members: BTreeMap::new(),
            target: BTreeMap::new(),
            owner: BTreeMap::new(),
            metadata,
            next_seq: 1,
            target_computations: 0,
            skip_release_wait: false,
        };
        for c in members {
            for (t, p) in c.assigned.iter() {
                g.owner.insert((t.to_owned(), p), c.member_id.clone());
            }
            g.target.insert(c.member_id.clone(), c.assigned.clone());
            g.members.insert(
                c.member_id,
                MMember {
                    name: c.name,
                    classic: Some(c.protocols),
                    topics: c.topics.into_iter().collect(),
                    epoch: generation,
                    assigned: c.assigned,
                    revoking: PartitionSet::new(),
                    state: MemberState::Stable,
                    last_heartbeat: now,
                    session_ms: c.session_ms,
                },
            );
        }
        g
    }

    pub(super) fn has_member(&self, member_id: &str) -> bool {
        self.members.contains_key(member_id)
    }

    /// Every member at the target epoch with nothing to revoke or wait for.
    pub(super) fn reconciled(&self) -> bool {
        self.members.values().all(|m| m.state == MemberState::Stable && m.epoch == self.target_epoch)
    }

    /// Partitions the target gives `member_id` that it does not have yet.
    pub(super) fn awaiting(&self, member_id: &str) -> PartitionSet {
        let (Some(m), Some(t)) = (self.members.get(member_id), self.target.get(member_id)) else {
            return PartitionSet::new();
        };
        t.difference(&m.assigned).collect()
    }

    /// Partitions in two members' assigned or pending-revocation sets (must never happen).
    pub(super) fn double_assigned(&self) -> Vec<String> {
        let mut seen: BTreeMap<(&str, i32), &str> = BTreeMap::new();
        let mut out = Vec::new();
        for (id, m) in &self.members {
            for tp in m.assigned.iter().chain(m.revoking.iter()) {
                if let Some(other) = seen.insert(tp, id) {
                    if other != id {
                        out.push(format!("{}-{} assigned by the broker to both {other} and {id}", tp.0, tp.1));
                    }
                }
            }
        }
        out
    }

    fn new_member_id(&mut self, name: &str) -> String {
        let id = format!("{name}-{}", self.next_seq);
        self.next_seq += 1;
        id
    }

    /// Topic metadata changed: a new group epoch when it concerns a subscribed topic.
    pub(super) fn update_metadata(&mut self, metadata: ClusterMetadata) {
        let subscribed: BTreeSet<&String> = self.members.values().flat_map(|m| m.topics.iter()).collect();
        let changed = subscribed.iter().any(|t| self.metadata.topics.get(*t) != metadata.topics.get(*t));
        self.metadata = metadata;
        if changed {
            self.bump();
        }
    }

    /// A new group epoch and its target assignment.
    fn bump(&mut self) {
        self.group_epoch += 1;
        self.compute_target();
    }

    fn compute_target(&mut self) {
        self.target_computations += 1;
        self.target_epoch = self.group_epoch;
        let members: Vec<GroupMember> = self
            .members
            .iter()
            .map(|(id, m)| GroupMember {
                member_id: id.clone(),
                group_instance_id: None,
                // The assignor starts from the current assignment, as the broker's does.
                subscription: Subscription::new(m.topics.iter().cloned())
                    .with_owned_partitions(m.assigned.to_groups())
                    .with_generation_id(1),
            })
            .collect();
        let mut target: BTreeMap<String, PartitionSet> =
            self.members.keys().map(|id| (id.clone(), PartitionSet::new())).collect();
        if let Some(a) = builtin(self.model) {
            if let Ok(out) = a.assign(&self.metadata, &members) {
                for id in self.members.keys() {
                    let set = target.get_mut(id).expect("present");
                    for tp in out.partitions_of(id) {
                        for &p in &tp.partitions {
                            set.insert(&tp.topic, p);
                        }
                    }
                }
                // A partition the cooperative model withholds ends where it names; the server
                // assignor has no such round, its target is the final one.
                for pending in &out.pending {
                    let to = pending.to.as_ref().unwrap_or(&pending.from);
                    if let Some(set) = target.get_mut(to) {
                        set.insert(&pending.topic, pending.partition);
                    }
                }
            }
        }
        self.target = target;
    }

    fn free(&self, topic: &str, partition: i32, me: &str) -> bool {
        self.skip_release_wait || self.owner.get(&(topic.to_owned(), partition)).is_none_or(|o| o == me)
    }

    /// `CurrentAssignmentBuilder`: moves `member_id` towards its target. `owned` is what the member
    /// reported owning (consumer heartbeat, classic JoinGroup), `None` when it reported nothing.
    fn reconcile(&mut self, member_id: &str, owned: Option<&PartitionSet>) {
        let Some(m) = self.members.get(member_id) else { return };
        let mut m = m.clone();
        if m.state == MemberState::UnrevokedPartitions {
            match owned {
                Some(o) if o.is_disjoint(&m.revoking) => {
                    for (t, p) in m.revoking.iter() {
                        if self.owner.get(&(t.to_owned(), p)).is_some_and(|x| x == member_id) {
                            self.owner.remove(&(t.to_owned(), p));
                        }
                    }
                    m.revoking.clear();
                    m.state = MemberState::Stable;
                }
                _ => return,
            }
        }
        if m.epoch == self.target_epoch && m.state == MemberState::Stable {
            self.members.insert(member_id.to_owned(), m);
            return;
        }
        let target = self.target.get(member_id).cloned().unwrap_or_default();
        let revoke: PartitionSet = m.assigned.difference(&target).collect();
        if !revoke.is_empty() && !self.skip_release_wait {
            m.assigned = m.assigned.intersection(&target).collect();
            m.revoking = revoke;
            m.state = MemberState::UnrevokedPartitions;
            self.members.insert(member_id.to_owned(), m);
            return;
        }
        let mut assigned: PartitionSet = m.assigned.intersection(&target).collect();
        if self.skip_release_wait {
            for (t, p) in revoke.iter() {
                self.owner.remove(&(t.to_owned(), p));
            }
        }
        let mut unreleased = false;
        for (t, p) in target.difference(&m.assigned) {
            if self.free(t, p, member_id) {
                assigned.insert(t, p);
                self.owner.insert((t.to_owned(), p), member_id.to_owned());
            } else {
                unreleased = true;
            }
        }
        m.assigned = assigned;
        m.epoch = self.target_epoch;
        m.state = if unreleased { MemberState::UnreleasedPartitions } else { MemberState::Stable };
        self.members.insert(member_id.to_owned(), m);
    }

    fn remove(&mut self, member_id: &str) {
        if self.members.remove(member_id).is_some() {
            self.owner.retain(|_, o| o != member_id);
            self.target.remove(member_id);
            self.bump();
        }
    }

    /// A consumer member's heartbeat from the simulated member `name`.
    pub(super) fn heartbeat(&mut self, now: u64, name: &str, session_ms: u64, r: CgHeartbeat) -> CgResponse {
        let reply = |error, member_id: &str, member_epoch, assignment| CgResponse {
            error,
            member_id: member_id.to_owned(),
            member_epoch,
            assignment,
        };
        if r.member_epoch == -1 {
            self.remove(&r.member_id);
            return reply(CgError::None, &r.member_id, -1, PartitionSet::new());
        }
        let id = if r.member_epoch == 0 {
            let id = if r.member_id.is_empty() { self.new_member_id(name) } else { r.member_id.clone() };
            if let Some(old) = self.members.get(&id) {
                // A rejoin at epoch 0 of a known member: it lost everything.
                let _ = old;
                self.remove(&id);
            }
            self.members.insert(
                id.clone(),
                MMember {
                    name: name.to_owned(),
                    classic: None,
                    topics: r.topics.iter().cloned().collect(),
                    epoch: 0,
                    assigned: PartitionSet::new(),
                    revoking: PartitionSet::new(),
                    state: MemberState::Stable,
                    last_heartbeat: now,
                    session_ms,
                },
            );
            self.bump();
            id
        } else {
            let Some(m) = self.members.get_mut(&r.member_id) else {
                return reply(CgError::UnknownMember, &r.member_id, 0, PartitionSet::new());
            };
            if m.epoch != r.member_epoch {
                return reply(CgError::Fenced, &r.member_id, 0, PartitionSet::new());
            }
            m.last_heartbeat = now;
            let topics: BTreeSet<String> = r.topics.iter().cloned().collect();
            if topics != m.topics {
                m.topics = topics;
                self.bump();
            }
            r.member_id.clone()
        };
        self.reconcile(&id, Some(&r.owned));
        let m = &self.members[&id];
        reply(CgError::None, &id, m.epoch, m.assigned.clone())
    }

    /// A classic member's request.
    pub(super) fn handle(&mut self, now: u64, reply: Reply, request: Request) -> Vec<(Reply, Response)> {
        let response = match request {
            Request::JoinGroup(r) => Response::JoinGroup(self.join(now, &reply.member, r)),
            Request::SyncGroup(r) => Response::SyncGroup(self.sync(now, r)),
            Request::Heartbeat(r) => Response::Heartbeat(HeartbeatResponse { error: self.classic_heartbeat(now, &r) }),
            Request::LeaveGroup(r) => {
                self.remove(&r.member_id);
                Response::LeaveGroup(LeaveGroupResponse::default())
            }
            Request::OffsetCommit(r) => Response::OffsetCommit(OffsetCommitResponse {
                throttle_time_ms: 0,
                topics: r
                    .topics
                    .iter()
                    .map(|t| OffsetCommitTopicResult {
                        name: t.name.clone(),
                        partitions: t
                            .partitions
                            .iter()
                            .map(|p| OffsetCommitPartitionResult { partition: p.partition, error: ErrorCode::NONE })
                            .collect(),
                    })
                    .collect(),
            }),
            Request::OffsetFetch(r) => Response::OffsetFetch(OffsetFetchResponse {
                topics: r
                    .topics
                    .unwrap_or_default()
                    .into_iter()
                    .map(|t| OffsetFetchTopicResult {
                        partitions: t
                            .partitions
                            .iter()
                            .map(|&partition| OffsetFetchPartition {
                                partition,
                                committed_offset: -1,
                                leader_epoch: -1,
                                metadata: None,
                                error: ErrorCode::NONE,
                            })
                            .collect(),
                        name: t.name,
                    })
                    .collect(),
                ..Default::default()
            }),
        };
        vec![(reply, response)]
    }

    fn join(&mut self, now: u64, name: &str, r: JoinGroupRequest) -> JoinGroupResponse {
        let err = |error, member_id: String| JoinGroupResponse { error, member_id, ..Default::default() };
        let Some(first) = r.protocols.first() else {
            return err(ErrorCode::INCONSISTENT_GROUP_PROTOCOL, r.member_id);
        };
        // The broker reads the first protocol's subscription: all carry the same.
        let Ok(sub) = Subscription::decode(&first.metadata) else {
            return err(ErrorCode::INCONSISTENT_GROUP_PROTOCOL, r.member_id);
        };
        if r.protocol_type != "consumer" {
            return err(ErrorCode::INCONSISTENT_GROUP_PROTOCOL, r.member_id);
        }
        let protocol_name = first.name.clone();
        let topics: BTreeSet<String> = sub.topics.iter().cloned().collect();
        let owned = PartitionSet::from_groups(&sub.owned_partitions);
        let id = if r.member_id.is_empty() {
            let id = self.new_member_id(name);
            self.members.insert(
                id.clone(),
                MMember {
                    name: name.to_owned(),
                    classic: Some(r.protocols.clone()),
                    topics,
                    epoch: 0,
                    assigned: PartitionSet::new(),
                    revoking: PartitionSet::new(),
                    state: MemberState::Stable,
                    last_heartbeat: now,
                    session_ms: r.session_timeout_ms.max(0) as u64,
                },
            );
            self.bump();
            id
        } else {
            let Some(m) = self.members.get_mut(&r.member_id) else {
                return err(ErrorCode::UNKNOWN_MEMBER_ID, r.member_id);
            };
            m.last_heartbeat = now;
            m.classic = Some(r.protocols.clone());
            if m.topics != topics {
                m.topics = topics;
                self.bump();
            }
            r.member_id.clone()
        };
        self.reconcile(&id, Some(&owned));
        JoinGroupResponse {
            error: ErrorCode::NONE,
            generation_id: self.members[&id].epoch,
            protocol_type: Some("consumer".into()),
            protocol_name: Some(protocol_name),
            leader: String::new(),
            skip_assignment: false,
            member_id: id,
            members: Vec::new(),
        }
    }

    fn sync(&mut self, now: u64, r: SyncGroupRequest) -> SyncGroupResponse {
        let err = |error| SyncGroupResponse { error, ..Default::default() };
        let Some(m) = self.members.get_mut(&r.member_id) else { return err(ErrorCode::UNKNOWN_MEMBER_ID) };
        if r.generation_id != m.epoch {
            return err(ErrorCode::ILLEGAL_GENERATION);
        }
        let first = m.classic.as_ref().and_then(|p| p.first()).map(|p| p.name.clone());
        if r.protocol_name.is_some() && r.protocol_name != first {
            return err(ErrorCode::INCONSISTENT_GROUP_PROTOCOL);
        }
        m.last_heartbeat = now;
        let assignment =
            Assignment::new(m.assigned.to_groups()).encode(Version::V3).map(Bytes::from).unwrap_or_default();
        SyncGroupResponse {
            error: ErrorCode::NONE,
            protocol_type: Some("consumer".into()),
            protocol_name: first,
            assignment,
        }
    }

    fn classic_heartbeat(&mut self, now: u64, r: &HeartbeatRequest) -> ErrorCode {
        let group_epoch = self.group_epoch;
        let Some(m) = self.members.get_mut(&r.member_id) else { return ErrorCode::UNKNOWN_MEMBER_ID };
        if r.generation_id != m.epoch {
            return ErrorCode::ILLEGAL_GENERATION;
        }
        m.last_heartbeat = now;
        let m = &self.members[&r.member_id];
        let released = m.state == MemberState::UnreleasedPartitions
            && self.awaiting(&r.member_id).iter().all(|(t, p)| self.free(t, p, &r.member_id));
        if m.epoch < group_epoch || m.state == MemberState::UnrevokedPartitions || released {
            ErrorCode::REBALANCE_IN_PROGRESS
        } else {
            ErrorCode::NONE
        }
    }

    /// The next session deadline, `now` at the earliest.
    pub(super) fn next_deadline(&self, now: u64) -> Option<u64> {
        // A deadline already due still wakes the timer (at `now`), so no expiry is skipped.
        self.members.values().map(|m| (m.last_heartbeat + m.session_ms).max(now)).min()
    }

    /// Expires sessions; returns the expired members' ids.
    pub(super) fn tick(&mut self, now: u64) -> Vec<String> {
        let expired: Vec<String> = self
            .members
            .iter()
            .filter(|(_, m)| now >= m.last_heartbeat + m.session_ms)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &expired {
            self.remove(id);
        }
        expired
    }
}
