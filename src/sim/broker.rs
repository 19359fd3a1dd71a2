//! The broker side: a model of Kafka's classic group coordinator (`ClassicGroup` /
//! `GroupCoordinator`) for one group.

use std::collections::{BTreeMap, BTreeSet};

use bytes::Bytes;

use crate::coordinator::*;
use crate::group_api::{
    OffsetCommitPartitionResult, OffsetCommitTopicResult, OffsetFetchPartition, OffsetFetchTopicResult,
};

/// Where a response goes: the simulated member, its incarnation and the request id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reply {
    /// Simulated member name.
    pub member: String,
    /// Incarnation (restarts bump it).
    pub incarnation: u32,
    /// Request id.
    pub id: RequestId,
}

/// Group state, as the broker's `ClassicGroupState`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupState {
    /// No members.
    Empty,
    /// Waiting at the join barrier.
    PreparingRebalance,
    /// Waiting for the leader's SyncGroup.
    CompletingRebalance,
    /// Assignment distributed.
    Stable,
}

#[derive(Clone, Debug)]
struct BMember {
    instance_id: Option<String>,
    protocols: Vec<JoinGroupProtocol>,
    session_ms: u64,
    rebalance_ms: u64,
    last_heartbeat: u64,
    join_reply: Option<Reply>,
    sync_reply: Option<Reply>,
    assignment: Bytes,
    /// The last assignment a SyncGroup gave it: what a conversion reads (the broker keeps it
    /// through the next join phase, hence a stale one mid-rebalance, KAFKA-21582).
    synced: Bytes,
}

/// The broker's group coordinator for one group.
#[derive(Clone, Debug)]
pub struct Broker {
    state: GroupState,
    generation: i32,
    protocol: Option<String>,
    leader: Option<String>,
    members: BTreeMap<String, BMember>,
    static_ids: BTreeMap<String, String>,
    pending: BTreeMap<String, u64>,
    rebalance_deadline: u64,
    initial_delay_until: u64,
    initial_delay_ms: u64,
    next_seq: u64,
    completed_rebalances: u64,
    /// Protocols every member supports; `None` after a membership or protocol-name change.
    candidates_cache: Option<BTreeSet<String>>,
    /// Members removed from the group (expelled, fenced or left) and when.
    pub removed: Vec<(String, u64)>,
    /// Committed offsets (and their metadata) by topic and partition.
    committed: BTreeMap<(String, i32), (i64, Option<String>)>,
}

impl Broker {
    /// A broker with `group.initial.rebalance.delay.ms = initial_delay_ms`.
    pub fn new(initial_delay_ms: u64) -> Self {
        Broker {
            state: GroupState::Empty,
            generation: 0,
            protocol: None,
            leader: None,
            members: BTreeMap::new(),
            static_ids: BTreeMap::new(),
            pending: BTreeMap::new(),
            rebalance_deadline: 0,
            initial_delay_until: 0,
            initial_delay_ms,
            next_seq: 1,
            completed_rebalances: 0,
            candidates_cache: None,
            removed: Vec::new(),
            committed: BTreeMap::new(),
        }
    }

    /// Group state.
    pub fn state(&self) -> GroupState {
        self.state
    }
    /// Current generation.
    pub fn generation(&self) -> i32 {
        self.generation
    }
    /// The selected protocol (assignor).
    pub fn protocol(&self) -> Option<&str> {
        self.protocol.as_deref()
    }
    /// The leader's member id.
    pub fn leader(&self) -> Option<&str> {
        self.leader.as_deref()
    }
    /// Whether `member_id` is a member.
    pub fn has_member(&self, member_id: &str) -> bool {
        self.members.contains_key(member_id)
    }
    /// Member ids.
    pub fn member_ids(&self) -> impl Iterator<Item = &str> {
        self.members.keys().map(String::as_str)
    }
    /// Number of members.
    pub fn member_count(&self) -> usize {
        self.members.len()
    }
    /// Member ids handed out with `MEMBER_ID_REQUIRED` that have not joined yet.
    pub fn pending_count(&self) -> usize {
        self.pending.len()
    }
    /// Completed join barriers that produced a generation with members.
    pub fn completed_rebalances(&self) -> u64 {
        self.completed_rebalances
    }
    /// Whether responses are parked at the broker.
    pub fn has_parked(&self) -> bool {
        self.members.values().any(|m| m.join_reply.is_some() || m.sync_reply.is_some())
    }

    /// Each member as DescribeGroups reports it (the selected protocol's subscription, the last
    /// assignment) with its protocols and session timeout: what the conversion to a consumer
    /// group reads.
    pub(super) fn snapshot(&self) -> Vec<(crate::group_api::DescribedGroupMember, Vec<JoinGroupProtocol>, u64)> {
        self.members
            .iter()
            .map(|(id, m)| {
                let metadata = m
                    .protocols
                    .iter()
                    .find(|p| Some(&p.name) == self.protocol.as_ref())
                    .or(m.protocols.first())
                    .map(|p| p.metadata.clone())
                    .unwrap_or_default();
                let described = crate::group_api::DescribedGroupMember {
                    member_id: id.clone(),
                    group_instance_id: m.instance_id.clone(),
                    member_metadata: metadata,
                    member_assignment: m.synced.clone(),
                    ..Default::default()
                };
                (described, m.protocols.clone(), m.session_ms)
            })
            .collect()
    }

    /// The group is converted: parked JoinGroup and SyncGroup requests are answered with
    /// REBALANCE_IN_PROGRESS (their members rejoin the consumer group) and this classic group is
    /// left empty.
    pub(super) fn hand_over(&mut self) -> Vec<(Reply, Response)> {
        let mut out = Vec::new();
        for m in self.members.values_mut() {
            if let Some(r) = m.join_reply.take() {
                out.push((
                    r,
                    Response::JoinGroup(JoinGroupResponse {
                        error: ErrorCode::REBALANCE_IN_PROGRESS,
                        ..Default::default()
                    }),
                ));
            }
            if let Some(r) = m.sync_reply.take() {
                out.push((
                    r,
                    Response::SyncGroup(SyncGroupResponse {
                        error: ErrorCode::REBALANCE_IN_PROGRESS,
                        ..Default::default()
                    }),
                ));
            }
        }
        self.members.clear();
        self.static_ids.clear();
        self.pending.clear();
        self.leader = None;
        self.protocol = None;
        self.candidates_cache = None;
        self.state = GroupState::Empty;
        out
    }

    /// The next time after `now` that [`tick`](Self::tick) has work (call `tick(now)` first).
    pub fn next_deadline(&self, now: u64) -> Option<u64> {
        let mut t: Option<u64> = None;
        let mut min = |x: u64| {
            if x > now {
                t = Some(t.map_or(x, |y: u64| y.min(x)));
            }
        };
        for d in self.pending.values() {
            min(*d);
        }
        for m in self.members.values() {
            if m.join_reply.is_none() {
                min(m.last_heartbeat + m.session_ms);
            }
        }
        if self.state == GroupState::PreparingRebalance {
            min(self.rebalance_deadline.max(self.initial_delay_until));
            min(self.initial_delay_until);
        }
        t
    }

    fn new_member_id(&mut self, client: &str) -> String {
        let id = format!("{client}-{}", self.next_seq);
        self.next_seq += 1;
        id
    }

    fn remove_member(&mut self, now: u64, id: &str, out: &mut Vec<(Reply, Response)>) {
        if let Some(m) = self.members.remove(id) {
            self.candidates_cache = None;
            if let Some(r) = m.join_reply {
                out.push((
                    r,
                    Response::JoinGroup(JoinGroupResponse {
                        error: ErrorCode::UNKNOWN_MEMBER_ID,
                        ..Default::default()
                    }),
                ));
            }
            if let Some(r) = m.sync_reply {
                out.push((
                    r,
                    Response::SyncGroup(SyncGroupResponse {
                        error: ErrorCode::UNKNOWN_MEMBER_ID,
                        ..Default::default()
                    }),
                ));
            }
            if let Some(i) = m.instance_id {
                if self.static_ids.get(&i).map(String::as_str) == Some(id) {
                    self.static_ids.remove(&i);
                }
            }
            self.removed.push((id.to_string(), now));
            if self.leader.as_deref() == Some(id) {
                self.leader = None;
            }
        }
    }

    /// Protocol names every member supports (`candidateProtocols`), optionally ignoring one.
    fn candidates(&self, except: Option<&str>) -> Option<BTreeSet<String>> {
        let mut it = self.members.iter().filter(|(id, _)| Some(id.as_str()) != except);
        let (_, first) = it.next()?;
        let mut set: BTreeSet<String> = first.protocols.iter().map(|p| p.name.clone()).collect();
        for (_, m) in it {
            set.retain(|n| m.protocols.iter().any(|p| &p.name == n));
        }
        Some(set)
    }

    /// Cached `candidates(None)`.
    fn all_candidates(&mut self) -> Option<BTreeSet<String>> {
        if self.members.is_empty() {
            return None;
        }
        if self.candidates_cache.is_none() {
            self.candidates_cache = self.candidates(None);
        }
        self.candidates_cache.clone()
    }

    fn supports(&mut self, protocols: &[JoinGroupProtocol], except: Option<&str>) -> bool {
        // Protocols all members support are also supported by all but one: the cached set
        // answers the common case without a scan.
        if let Some(all) = self.all_candidates() {
            if protocols.iter().any(|p| all.contains(&p.name)) {
                return true;
            }
        }
        match self.candidates(except) {
            None => true,
            Some(c) => protocols.iter().any(|p| c.contains(&p.name)),
        }
    }

    fn prepare_rebalance(&mut self, now: u64, out: &mut Vec<(Reply, Response)>) {
        if self.state == GroupState::CompletingRebalance {
            for m in self.members.values_mut() {
                if let Some(r) = m.sync_reply.take() {
                    out.push((
                        r,
                        Response::SyncGroup(SyncGroupResponse {
                            error: ErrorCode::REBALANCE_IN_PROGRESS,
                            ..Default::default()
                        }),
                    ));
                }
            }
        }
        if self.state == GroupState::PreparingRebalance {
            return;
        }
        let was_empty = self.state == GroupState::Empty;
        self.state = GroupState::PreparingRebalance;
        let max_rebalance = self.members.values().map(|m| m.rebalance_ms).max().unwrap_or(0);
        self.rebalance_deadline = now + max_rebalance;
        self.initial_delay_until = if was_empty { now + self.initial_delay_ms } else { 0 };
        if was_empty {
            self.rebalance_deadline = self.initial_delay_until;
        }
    }

    fn join_response_for(&self, member_id: &str) -> JoinGroupResponse {
        let leader = self.leader.clone().unwrap_or_default();
        let protocol = self.protocol.clone();
        let members = if leader == member_id {
            self.members
                .iter()
                .map(|(id, m)| JoinGroupMember {
                    member_id: id.clone(),
                    group_instance_id: m.instance_id.clone(),
                    metadata: m
                        .protocols
                        .iter()
                        .find(|p| Some(&p.name) == protocol.as_ref())
                        .map(|p| p.metadata.clone())
                        .unwrap_or_default(),
                })
                .collect()
        } else {
            Vec::new()
        };
        JoinGroupResponse {
            error: ErrorCode::NONE,
            generation_id: self.generation,
            protocol_type: Some("consumer".into()),
            protocol_name: protocol,
            leader,
            skip_assignment: false,
            member_id: member_id.to_string(),
            members,
        }
    }

    fn try_complete_join(&mut self, now: u64, out: &mut Vec<(Reply, Response)>) {
        if self.state != GroupState::PreparingRebalance {
            return;
        }
        let all_joined = self.pending.is_empty() && self.members.values().all(|m| m.join_reply.is_some());
        let delay_over = now >= self.initial_delay_until;
        if !((all_joined && delay_over) || now >= self.rebalance_deadline.max(self.initial_delay_until)) {
            return;
        }
        let missing: Vec<String> =
            self.members.iter().filter(|(_, m)| m.join_reply.is_none()).map(|(id, _)| id.clone()).collect();
        for id in missing {
            self.remove_member(now, &id, out);
        }
        self.generation += 1;
        if self.members.is_empty() {
            self.state = GroupState::Empty;
            self.protocol = None;
            self.leader = None;
            return;
        }
        // Protocol vote: each member votes for its first protocol every member supports.
        let candidates = self.all_candidates().unwrap_or_default();
        let mut votes: BTreeMap<&str, usize> = BTreeMap::new();
        let mut order: Vec<&str> = Vec::new();
        for m in self.members.values() {
            if let Some(p) = m.protocols.iter().find(|p| candidates.contains(&p.name)) {
                let n = votes.entry(p.name.as_str()).or_insert(0);
                if *n == 0 {
                    order.push(p.name.as_str());
                }
                *n += 1;
            }
        }
        let best = order.iter().copied().max_by(|a, b| votes[a].cmp(&votes[b]).then_with(|| b.cmp(a)));
        let Some(best) = best.map(str::to_string) else {
            let ids: Vec<String> = self.members.keys().cloned().collect();
            for id in ids {
                if let Some(m) = self.members.get_mut(&id) {
                    if let Some(r) = m.join_reply.take() {
                        out.push((
                            r,
                            Response::JoinGroup(JoinGroupResponse {
                                error: ErrorCode::INCONSISTENT_GROUP_PROTOCOL,
                                ..Default::default()
                            }),
                        ));
                    }
                }
                self.remove_member(now, &id, out);
            }
            self.state = GroupState::Empty;
            return;
        };
        self.protocol = Some(best);
        if !self.leader.as_ref().is_some_and(|l| self.members.contains_key(l)) {
            self.leader = self.members.keys().next().cloned();
        }
        self.state = GroupState::CompletingRebalance;
        self.completed_rebalances += 1;
        let ids: Vec<String> = self.members.keys().cloned().collect();
        for id in ids {
            let resp = self.join_response_for(&id);
            let m = self.members.get_mut(&id).expect("present");
            m.last_heartbeat = now;
            m.assignment = Bytes::new();
            if let Some(r) = m.join_reply.take() {
                out.push((r, Response::JoinGroup(resp)));
            }
        }
    }

    /// Handles one request; returns the responses to deliver now (possibly to other members
    /// whose parked requests complete).
    pub fn handle(&mut self, now: u64, reply: Reply, request: Request) -> Vec<(Reply, Response)> {
        let mut out = Vec::new();
        match request {
            Request::JoinGroup(r) => self.join(now, reply, r, &mut out),
            Request::SyncGroup(r) => self.sync(now, reply, r, &mut out),
            Request::Heartbeat(r) => {
                let error = self.heartbeat(now, &r);
                out.push((reply, Response::Heartbeat(HeartbeatResponse { error })));
            }
            Request::LeaveGroup(r) => {
                let fenced = r
                    .group_instance_id
                    .as_ref()
                    .is_some_and(|i| self.static_ids.get(i).is_some_and(|m| *m != r.member_id));
                if !fenced && self.members.contains_key(&r.member_id) {
                    self.remove_member(now, &r.member_id, &mut out);
                    if self.members.is_empty() && self.state != GroupState::PreparingRebalance {
                        self.state = GroupState::Empty;
                    } else {
                        self.prepare_rebalance(now, &mut out);
                    }
                    self.try_complete_join(now, &mut out);
                }
                out.push((reply, Response::LeaveGroup(LeaveGroupResponse::default())));
            }
            Request::OffsetCommit(r) => {
                // Validated as Kafka's classic group does.
                let error = self.offset_commit_error(&r);
                if error == ErrorCode::NONE {
                    for t in &r.topics {
                        for p in &t.partitions {
                            self.committed.insert((t.name.clone(), p.partition), (p.offset, p.metadata.clone()));
                        }
                    }
                }
                let topics = r
                    .topics
                    .iter()
                    .map(|t| OffsetCommitTopicResult {
                        name: t.name.clone(),
                        partitions: t
                            .partitions
                            .iter()
                            .map(|p| OffsetCommitPartitionResult { partition: p.partition, error })
                            .collect(),
                    })
                    .collect();
                out.push((reply, Response::OffsetCommit(OffsetCommitResponse { throttle_time_ms: 0, topics })));
            }
            Request::OffsetFetch(r) => {
                let topics = r
                    .topics
                    .unwrap_or_default()
                    .into_iter()
                    .map(|t| OffsetFetchTopicResult {
                        partitions: t
                            .partitions
                            .iter()
                            .map(|&partition| {
                                let (committed_offset, metadata) =
                                    self.committed.get(&(t.name.clone(), partition)).cloned().unwrap_or((-1, None));
                                OffsetFetchPartition {
                                    partition,
                                    committed_offset,
                                    leader_epoch: -1,
                                    metadata,
                                    error: ErrorCode::NONE,
                                }
                            })
                            .collect(),
                        name: t.name,
                    })
                    .collect();
                out.push((reply, Response::OffsetFetch(OffsetFetchResponse { topics, ..Default::default() })));
            }
        }
        out
    }

    /// Kafka's checks of a classic group's OffsetCommit (`ClassicGroup.validateOffsetCommit`).
    fn offset_commit_error(&self, r: &OffsetCommitRequest) -> ErrorCode {
        if !self.members.contains_key(&r.member_id) {
            return ErrorCode::UNKNOWN_MEMBER_ID;
        }
        if self.fenced(&r.group_instance_id, &r.member_id) {
            return ErrorCode::FENCED_INSTANCE_ID;
        }
        if r.generation_id != self.generation {
            return ErrorCode::ILLEGAL_GENERATION;
        }
        if self.state == GroupState::CompletingRebalance {
            return ErrorCode::REBALANCE_IN_PROGRESS;
        }
        ErrorCode::NONE
    }

    fn fenced(&self, instance: &Option<String>, member_id: &str) -> bool {
        instance.as_ref().is_some_and(|i| self.static_ids.get(i).is_some_and(|m| m != member_id))
    }

    fn join(&mut self, now: u64, reply: Reply, r: JoinGroupRequest, out: &mut Vec<(Reply, Response)>) {
        let err = |e: ErrorCode, member_id: String| {
            Response::JoinGroup(JoinGroupResponse { error: e, member_id, ..Default::default() })
        };
        if r.protocol_type != "consumer" || r.protocols.is_empty() {
            out.push((reply, err(ErrorCode::INCONSISTENT_GROUP_PROTOCOL, r.member_id)));
            return;
        }
        let known = !r.member_id.is_empty() && self.members.contains_key(&r.member_id);
        let except = if known { Some(r.member_id.as_str()) } else { None };
        if !self.supports(&r.protocols, except) {
            out.push((reply, err(ErrorCode::INCONSISTENT_GROUP_PROTOCOL, r.member_id)));
            return;
        }
        let new_member = |r: &JoinGroupRequest, reply: Reply| BMember {
            instance_id: r.group_instance_id.clone(),
            protocols: r.protocols.clone(),
            session_ms: r.session_timeout_ms.max(0) as u64,
            rebalance_ms: r.rebalance_timeout_ms.max(0) as u64,
            last_heartbeat: now,
            join_reply: Some(reply),
            sync_reply: None,
            assignment: Bytes::new(),
            synced: Bytes::new(),
        };
        if r.member_id.is_empty() {
            if let Some(instance) = r.group_instance_id.clone() {
                let new_id = self.new_member_id(&reply.member);
                if let Some(old_id) = self.static_ids.get(&instance).cloned() {
                    // A static member restarted: the new id replaces (fences) the old one.
                    let mut m = self.members.remove(&old_id).expect("static member present");
                    if let Some(old) = m.join_reply.take() {
                        out.push((old, err(ErrorCode::FENCED_INSTANCE_ID, old_id.clone())));
                    }
                    if let Some(old) = m.sync_reply.take() {
                        out.push((
                            old,
                            Response::SyncGroup(SyncGroupResponse {
                                error: ErrorCode::FENCED_INSTANCE_ID,
                                ..Default::default()
                            }),
                        ));
                    }
                    self.removed.push((old_id.clone(), now));
                    let was_leader = self.leader.as_deref() == Some(old_id.as_str());
                    if was_leader {
                        self.leader = Some(new_id.clone());
                    }
                    let changed = m.protocols != r.protocols;
                    m.protocols = r.protocols.clone();
                    m.last_heartbeat = now;
                    self.candidates_cache = None;
                    self.static_ids.insert(instance, new_id.clone());
                    match self.state {
                        GroupState::Stable if !was_leader && !changed => {
                            self.members.insert(new_id.clone(), m);
                            let resp = self.join_response_for(&new_id);
                            out.push((reply, Response::JoinGroup(resp)));
                        }
                        _ => {
                            m.join_reply = Some(reply);
                            self.members.insert(new_id, m);
                            self.prepare_rebalance(now, out);
                        }
                    }
                } else {
                    self.static_ids.insert(instance, new_id.clone());
                    self.members.insert(new_id, new_member(&r, reply));
                    self.candidates_cache = None;
                    self.prepare_rebalance(now, out);
                }
            } else {
                let id = self.new_member_id(&reply.member);
                self.pending.insert(id.clone(), now + r.session_timeout_ms.max(0) as u64);
                out.push((reply, err(ErrorCode::MEMBER_ID_REQUIRED, id)));
                return;
            }
        } else if self.pending.remove(&r.member_id).is_some() {
            self.members.insert(r.member_id.clone(), new_member(&r, reply));
            self.candidates_cache = None;
            self.prepare_rebalance(now, out);
        } else if !known {
            out.push((reply, err(ErrorCode::UNKNOWN_MEMBER_ID, r.member_id)));
            return;
        } else if self.fenced(&r.group_instance_id, &r.member_id) {
            out.push((reply, err(ErrorCode::FENCED_INSTANCE_ID, r.member_id)));
            return;
        } else {
            let is_leader = self.leader.as_deref() == Some(r.member_id.as_str());
            let m = self.members.get_mut(&r.member_id).expect("known");
            let changed = m.protocols != r.protocols;
            if m.protocols.iter().map(|p| &p.name).ne(r.protocols.iter().map(|p| &p.name)) {
                self.candidates_cache = None;
            }
            m.protocols = r.protocols.clone();
            m.last_heartbeat = now;
            if let Some(old) = m.join_reply.replace(reply.clone()) {
                // A retried JoinGroup supersedes the parked one.
                let _ = old;
            }
            match self.state {
                GroupState::PreparingRebalance => {}
                GroupState::CompletingRebalance | GroupState::Stable if !changed && !is_leader => {
                    m.join_reply = None;
                    let resp = self.join_response_for(&r.member_id);
                    out.push((reply, Response::JoinGroup(resp)));
                    return;
                }
                _ => self.prepare_rebalance(now, out),
            }
        }
        self.try_complete_join(now, out);
    }

    fn sync(&mut self, now: u64, reply: Reply, r: SyncGroupRequest, out: &mut Vec<(Reply, Response)>) {
        let err = |e: ErrorCode| Response::SyncGroup(SyncGroupResponse { error: e, ..Default::default() });
        if !self.members.contains_key(&r.member_id) {
            out.push((reply, err(ErrorCode::UNKNOWN_MEMBER_ID)));
            return;
        }
        if self.fenced(&r.group_instance_id, &r.member_id) {
            out.push((reply, err(ErrorCode::FENCED_INSTANCE_ID)));
            return;
        }
        if r.generation_id != self.generation {
            out.push((reply, err(ErrorCode::ILLEGAL_GENERATION)));
            return;
        }
        // Checked when given (SyncGroup v5+), as the broker does.
        if r.protocol_name.as_ref().is_some_and(|p| self.protocol.as_ref() != Some(p)) {
            out.push((reply, err(ErrorCode::INCONSISTENT_GROUP_PROTOCOL)));
            return;
        }
        let ok = |m: &BMember, p: &Option<String>| {
            Response::SyncGroup(SyncGroupResponse {
                error: ErrorCode::NONE,
                protocol_type: Some("consumer".into()),
                protocol_name: p.clone(),
                assignment: m.assignment.clone(),
            })
        };
        match self.state {
            GroupState::Empty => out.push((reply, err(ErrorCode::UNKNOWN_MEMBER_ID))),
            GroupState::PreparingRebalance => out.push((reply, err(ErrorCode::REBALANCE_IN_PROGRESS))),
            GroupState::Stable => {
                let m = &self.members[&r.member_id];
                out.push((reply, ok(m, &self.protocol)));
            }
            GroupState::CompletingRebalance => {
                let m = self.members.get_mut(&r.member_id).expect("known");
                m.sync_reply = Some(reply);
                m.last_heartbeat = now;
                if self.leader.as_deref() == Some(r.member_id.as_str()) {
                    let given: BTreeMap<String, Bytes> =
                        r.assignments.into_iter().map(|a| (a.member_id, a.assignment)).collect();
                    for (id, m) in self.members.iter_mut() {
                        m.assignment = given.get(id).cloned().unwrap_or_default();
                        m.synced = m.assignment.clone();
                    }
                    self.state = GroupState::Stable;
                    let protocol = self.protocol.clone();
                    for m in self.members.values_mut() {
                        if let Some(rep) = m.sync_reply.take() {
                            out.push((rep, ok(m, &protocol)));
                        }
                    }
                }
            }
        }
    }

    fn heartbeat(&mut self, now: u64, r: &HeartbeatRequest) -> ErrorCode {
        if self.state == GroupState::Empty || !self.members.contains_key(&r.member_id) {
            return ErrorCode::UNKNOWN_MEMBER_ID;
        }
        if self.fenced(&r.group_instance_id, &r.member_id) {
            return ErrorCode::FENCED_INSTANCE_ID;
        }
        if r.generation_id != self.generation {
            return ErrorCode::ILLEGAL_GENERATION;
        }
        self.members.get_mut(&r.member_id).expect("known").last_heartbeat = now;
        match self.state {
            GroupState::PreparingRebalance => ErrorCode::REBALANCE_IN_PROGRESS,
            _ => ErrorCode::NONE,
        }
    }

    /// Expires sessions, pending member ids and the join barrier.
    pub fn tick(&mut self, now: u64) -> Vec<(Reply, Response)> {
        let mut out = Vec::new();
        self.pending.retain(|_, deadline| now < *deadline);
        let expired: Vec<String> = self
            .members
            .iter()
            .filter(|(_, m)| m.join_reply.is_none() && now >= m.last_heartbeat + m.session_ms)
            .map(|(id, _)| id.clone())
            .collect();
        if !expired.is_empty() {
            for id in &expired {
                self.remove_member(now, id, &mut out);
            }
            if self.members.is_empty() && self.state != GroupState::PreparingRebalance {
                self.state = GroupState::Empty;
            } else {
                self.prepare_rebalance(now, &mut out);
            }
        }
        self.try_complete_join(now, &mut out);
        out
    }
}
