//! The engine: plays a [`Scenario`] in virtual time. Every member is a sans-IO [`Coordinator`]
//! with its assignors, the broker is the `Broker` model (`broker.rs`); messages between them get
//! a latency from a seeded PRNG ([`Rng`]) on FIFO connections, steps inject faults, and the
//! invariant checker (`checker.rs`) runs after events and at settle points. Same scenario, same
//! run: nothing here reads a clock or an unseeded random source.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::broker::{Broker, GroupState, Reply};
use super::modern::{CgError, CgHeartbeat, CgResponse, Converted, ModernGroup};
use super::scenario::check_limits;
use super::{limits, GroupProtocol, MemberSpec, Outcome, Scenario, SimConfig, SimError, Step, Summary, TimelineEntry};
use crate::assignor::{builtin, ClusterMetadata, TopicInfo};
use crate::coordinator::{Config, Coordinator, Event, Request, RequestId, Response, State};
use crate::PartitionSet;
use crate::TopicPartitions;

/// A tiny deterministic PRNG (SplitMix64). Scaffolding of the simulator and its fuzz target,
/// not part of the supported API.
///
/// ```
/// use kafka_consumer_protocol::internal::Rng;
/// let (mut a, mut b) = (Rng::new(7), Rng::new(7));
/// assert_eq!(a.next_u64(), b.next_u64());
/// assert!(a.below(10) < 10);
/// ```
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (`0` when `n == 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }
}

pub(super) struct SimMember {
    pub(super) spec: MemberSpec,
    pub(super) coord: Coordinator,
    pub(super) incarnation: u32,
    pub(super) alive: bool,
    pub(super) frozen: bool,
    pub(super) buffered: Vec<(RequestId, Response)>,
    pub(super) buffered_metadata: Option<ClusterMetadata>,
    pub(super) delay: (u64, u32),
    pub(super) lose: u32,
    pub(super) stale_ms: u64,
    pub(super) out_of_group_since: Option<u64>,
    pub(super) view: PartitionSet,
    pub(super) timer_token: u64,
    pub(super) fatal: bool,
}

/// A consumer-protocol member: the client side of KIP-848 as the simulator models it. It sends a
/// heartbeat with its epoch and owned partitions every heartbeat interval, and at once after its
/// assignment changed (the acknowledgement); it drops what the broker no longer assigns and takes
/// what it newly assigns.
pub(super) struct CMember {
    pub(super) spec: MemberSpec,
    pub(super) incarnation: u32,
    pub(super) alive: bool,
    pub(super) member_id: String,
    pub(super) epoch: i32,
    pub(super) view: PartitionSet,
    pub(super) fatal: bool,
    pub(super) timer_token: u64,
    pub(super) in_flight: bool,
}

pub(super) enum Msg {
    ToModern(String, u32, CgHeartbeat),
    FromModern(String, u32, CgResponse),
    CTimer(String, u64),
    ToBroker(Reply, Request),
    ToMember(String, u32, RequestId, Response),
    Metadata(String, u32, ClusterMetadata),
    Thaw(String, u32),
    Start(MemberSpec),
    MemberTimer(String, u64),
    BrokerTimer(u64),
}

/// Where timeline entries go: kept in the outcome, or handed to the caller as they happen.
pub(super) type Sink<'s> = Option<&'s mut dyn FnMut(&TimelineEntry) -> bool>;

pub(super) struct Sim<'s> {
    pub(super) cfg: SimConfig,
    pub(super) sink: Sink<'s>,
    /// The sink asked to stop, or the event budget ran out.
    pub(super) stopped: bool,
    pub(super) now: u64,
    pub(super) order: u64,
    pub(super) queue: BTreeMap<(u64, u64), Msg>,
    pub(super) join_sync_in_flight: usize,
    pub(super) pending_control: usize,
    pub(super) broker: Broker,
    pub(super) broker_token: u64,
    pub(super) members: BTreeMap<String, SimMember>,
    pub(super) cluster: ClusterMetadata,
    pub(super) rng: Rng,
    pub(super) timeline: Vec<TimelineEntry>,
    pub(super) seq: u64,
    pub(super) violations: Vec<String>,
    pub(super) violation_keys: BTreeSet<String>,
    pub(super) moved: u64,
    pub(super) last_owner: HashMap<(String, i32), String>,
    pub(super) partitions: PartitionSet,
    pub(super) fatal: Vec<(String, String)>,
    pub(super) small: bool,
    pub(super) last_full_check: u64,
    pub(super) events: u64,
    pub(super) unconverged: Vec<String>,
    /// Last delivery time per (member, direction): each member's connection is FIFO, as TCP.
    pub(super) channel: HashMap<(String, bool), u64>,
    /// Consumer-protocol members.
    pub(super) cmembers: BTreeMap<String, CMember>,
    /// The broker's consumer group, once a consumer member converted (or created) it.
    pub(super) modern: Option<ModernGroup>,
    /// When and how the group changed type.
    pub(super) conversions: Vec<String>,
    /// Test-only fault: the consumer group hands out partitions before their release.
    pub(super) faulty_reconciliation: bool,
}

/// Runs a scenario.
pub fn run(scenario: &Scenario) -> Result<Outcome, SimError> {
    run_inner(scenario, None)
}

/// Runs a scenario, handing each timeline entry to `on_entry` as it happens instead of keeping
/// it: memory then stays proportional to the group, not to the length of the run (the returned
/// outcome's timeline is empty). `on_entry` returning `false` stops the run early (for example
/// when the output it writes to was closed); the outcome describes the run up to there.
///
/// ```
/// use kafka_consumer_protocol::sim::{run_with, MemberSpec, Scenario};
/// let mut s = Scenario::new(1, [("orders", 4)]);
/// s.members.push(MemberSpec::new("a", ["range"], ["orders"]));
/// let mut events = 0;
/// let out = run_with(&s, &mut |_entry| {
///     events += 1;
///     true
/// })
/// .unwrap();
/// assert!(events > 0 && out.timeline.is_empty() && out.summary.converged);
/// ```
pub fn run_with(scenario: &Scenario, on_entry: &mut dyn FnMut(&TimelineEntry) -> bool) -> Result<Outcome, SimError> {
    run_inner(scenario, Some(on_entry))
}

fn run_inner(scenario: &Scenario, sink: Sink<'_>) -> Result<Outcome, SimError> {
    run_sim(scenario, sink, false)
}

/// A run whose consumer group hands partitions out without waiting for their release: what the
/// checker must catch (tests only).
#[cfg(test)]
pub(super) fn run_with_faulty_reconciliation(scenario: &Scenario) -> Result<Outcome, SimError> {
    run_sim(scenario, None, true)
}

fn run_sim(scenario: &Scenario, sink: Sink<'_>, faulty_reconciliation: bool) -> Result<Outcome, SimError> {
    check_limits(scenario)?;
    let mut sim = Sim::new(scenario, sink);
    sim.faulty_reconciliation = faulty_reconciliation;
    for m in &scenario.members {
        sim.apply(&Step::Join(m.clone()))?;
    }
    sim.settle("the initial join");
    for (i, s) in scenario.steps.iter().enumerate() {
        if sim.stopped {
            break;
        }
        sim.apply(&s.step)?;
        if s.settle {
            sim.settle(&format!("step {} ({})", i, s.step.name()));
        }
    }
    sim.settle("the last step");
    Ok(sim.finish())
}

impl<'s> Sim<'s> {
    fn new(s: &Scenario, sink: Sink<'s>) -> Self {
        let cluster = ClusterMetadata::from_counts(s.topics.iter().map(|(t, n)| (t.clone(), *n)));
        let total: i64 = s.topics.values().map(|n| *n as i64).sum();
        let mut sim = Sim {
            cfg: s.config.clone(),
            sink,
            stopped: false,
            now: 0,
            order: 0,
            queue: BTreeMap::new(),
            join_sync_in_flight: 0,
            pending_control: 0,
            broker: Broker::new(s.config.initial_rebalance_delay_ms),
            broker_token: 0,
            members: BTreeMap::new(),
            cluster,
            rng: Rng::new(s.seed),
            timeline: Vec::new(),
            seq: 0,
            violations: Vec::new(),
            violation_keys: BTreeSet::new(),
            moved: 0,
            last_owner: HashMap::new(),
            partitions: PartitionSet::new(),
            fatal: Vec::new(),
            small: total * (s.members.len() as i64 + 4) <= 4_000,
            last_full_check: 0,
            events: 0,
            unconverged: Vec::new(),
            channel: HashMap::new(),
            cmembers: BTreeMap::new(),
            modern: None,
            conversions: Vec::new(),
            faulty_reconciliation: false,
        };
        sim.note_partitions();
        sim
    }

    fn note_partitions(&mut self) {
        for (t, i) in &self.cluster.topics {
            for p in 0..i.partitions {
                self.partitions.insert(t, p);
            }
        }
    }

    fn push(&mut self, at: u64, msg: Msg) {
        match &msg {
            Msg::ToBroker(_, Request::JoinGroup(_) | Request::SyncGroup(_)) => self.join_sync_in_flight += 1,
            Msg::ToMember(_, _, _, Response::JoinGroup(_) | Response::SyncGroup(_)) => self.join_sync_in_flight += 1,
            Msg::Metadata(..) | Msg::Thaw(..) | Msg::Start(_) => self.pending_control += 1,
            _ => {}
        }
        self.order += 1;
        self.queue.insert((at, self.order), msg);
    }

    fn latency(&mut self) -> u64 {
        self.cfg.latency_ms.saturating_add(self.rng.below(self.cfg.jitter_ms.saturating_add(1)))
    }

    /// Arrival time on `member`'s connection, never before an earlier message on it.
    fn fifo(&mut self, member: &str, to_broker: bool, at: u64) -> u64 {
        let last = self.channel.entry((member.to_string(), to_broker)).or_insert(0);
        *last = (*last).max(at);
        *last
    }

    fn resolve(&self, id: &str) -> Result<String, SimError> {
        if id == "leader" {
            let leader = self.broker.leader().unwrap_or_default();
            return self
                .members
                .iter()
                .find(|(_, m)| m.alive && m.coord.member_id() == leader)
                .map(|(n, _)| n.clone())
                .ok_or(SimError::NoLeader);
        }
        match (self.members.get(id), self.cmembers.get(id)) {
            (Some(m), _) if m.alive => Ok(id.to_string()),
            (_, Some(c)) if c.alive => Ok(id.to_string()),
            _ => Err(SimError::NoLiveMember(id.to_string())),
        }
    }

    fn start_member(&mut self, spec: MemberSpec) -> Result<(), SimError> {
        if spec.protocol == GroupProtocol::Consumer {
            self.start_consumer(spec);
            return Ok(());
        }
        let mut assignors = Vec::new();
        for a in &spec.assignors {
            assignors.push(builtin(a).ok_or_else(|| SimError::UnknownAssignor(a.clone()))?);
        }
        let config = Config {
            group_instance_id: spec.static_id.clone(),
            client_rack: spec.rack.clone(),
            session_timeout_ms: self.cfg.session_timeout_ms,
            rebalance_timeout_ms: self.cfg.rebalance_timeout_ms,
            heartbeat_interval_ms: self.cfg.heartbeat_interval_ms,
            retry_backoff_ms: self.cfg.retry_backoff_ms,
            request_timeout_ms: self.cfg.request_timeout_ms,
            ..Config::new("sim")
        };
        let coord = Coordinator::new(config, assignors, self.now).map_err(SimError::Config)?;
        let incarnation = self.next_incarnation(&spec.id);
        let name = spec.id.clone();
        self.members.insert(
            name.clone(),
            SimMember {
                spec: spec.clone(),
                coord,
                incarnation,
                alive: true,
                frozen: false,
                buffered: Vec::new(),
                buffered_metadata: None,
                delay: (0, 0),
                lose: 0,
                stale_ms: 0,
                out_of_group_since: None,
                view: PartitionSet::new(),
                timer_token: 0,
                fatal: false,
            },
        );
        let now = self.now;
        let md = self.cluster.clone();
        let m = self.members.get_mut(&name).expect("inserted");
        m.coord.update_metadata(now, md);
        m.coord.subscribe(now, spec.topics.iter().cloned());
        self.record_step("join", Some(&name), None);
        self.drain(&name);
        Ok(())
    }

    fn apply(&mut self, step: &Step) -> Result<(), SimError> {
        let now = self.now;
        match step {
            Step::Join(spec) => {
                if self.members.get(&spec.id).is_some_and(|m| m.alive)
                    || self.cmembers.get(&spec.id).is_some_and(|m| m.alive)
                {
                    return Err(SimError::MemberExists(spec.id.clone()));
                }
                self.start_member(spec.clone())?;
            }
            Step::Upgrade(id) => {
                let name = self.resolve(id)?;
                let Some(m) = self.members.get(&name).filter(|m| m.alive) else {
                    return Err(SimError::Unsupported(format!("upgrade: {name} is not a classic member")));
                };
                let mut spec = m.spec.clone();
                spec.protocol = GroupProtocol::Consumer;
                self.record_step("upgrade", Some(&name), Some("group.protocol=consumer".into()));
                self.stop(&name, true);
                let at = now.saturating_add(self.cfg.restart_delay_ms);
                self.push(at, Msg::Start(spec));
            }
            Step::Restart { id, assignors, topics } => {
                let name = self.resolve(id)?;
                let mut spec = match self.cmembers.get(&name).filter(|c| c.alive) {
                    Some(c) => c.spec.clone(),
                    None => self.members[&name].spec.clone(),
                };
                if let Some(a) = assignors {
                    spec.assignors = a.clone();
                }
                if let Some(t) = topics {
                    spec.topics = t.clone();
                }
                for a in &spec.assignors {
                    if builtin(a).is_none() {
                        return Err(SimError::UnknownAssignor(a.clone()));
                    }
                }
                self.record_step("restart", Some(&name), Some(spec.assignors.join(",")));
                self.stop(&name, true);
                let at = now.saturating_add(self.cfg.restart_delay_ms);
                self.push(at, Msg::Start(spec));
            }
            Step::Leave(id) => {
                let name = self.resolve(id)?;
                self.record_step("leave", Some(&name), None);
                self.stop(&name, true);
            }
            Step::Crash(id) => {
                let name = self.resolve(id)?;
                self.stop(&name, false);
                self.record_step("crash", Some(&name), None);
            }
            Step::MissRebalance(id) => {
                let name = self.resolve_classic(id, "miss_rebalance")?;
                let m = self.members.get_mut(&name).expect("resolved");
                m.frozen = true;
                let inc = m.incarnation;
                self.record_step("miss_rebalance", Some(&name), None);
                let at = now.saturating_add(self.cfg.rebalance_timeout_ms).saturating_add(1_000);
                self.push(at, Msg::Thaw(name, inc));
            }
            Step::Subscribe { id, topics } => {
                let name = self.resolve(id)?;
                if let Some(c) = self.cmembers.get_mut(&name).filter(|c| c.alive) {
                    c.spec.topics = topics.clone();
                    self.record_step("subscribe", Some(&name), Some(topics.join(",")));
                    self.send_heartbeat(&name);
                    return Ok(());
                }
                let m = self.members.get_mut(&name).expect("resolved");
                m.spec.topics = topics.clone();
                m.coord.subscribe(now, topics.iter().cloned());
                self.record_step("subscribe", Some(&name), Some(topics.join(",")));
                self.drain(&name);
            }
            Step::CreateTopic { name, partitions } => {
                self.cluster
                    .topics
                    .insert(name.clone(), TopicInfo { partitions: *partitions, partition_racks: Vec::new() });
                self.record_step("create_topic", None, Some(format!("{name}:{partitions}")));
                self.publish_metadata();
            }
            Step::AddPartitions { topic, count } => {
                if let Some(i) = self.cluster.topics.get_mut(topic) {
                    i.partitions = i.partitions.max(*count);
                }
                self.record_step("add_partitions", None, Some(format!("{topic}:{count}")));
                self.publish_metadata();
            }
            Step::DeleteTopic(name) => {
                self.cluster.topics.remove(name);
                self.record_step("delete_topic", None, Some(name.clone()));
                self.publish_metadata();
            }
            Step::Settle => self.settle("a settle step"),
            Step::Wait(ms) => {
                let until = now.checked_add(*ms).ok_or_else(|| {
                    SimError::Limit(format!("wait: {ms} ms from t={now}ms is beyond the end of virtual time"))
                })?;
                self.run_until(until, |_| false);
                self.now = self.now.max(until);
            }
            Step::DelayResponses { id, ms, count } => {
                let name = self.resolve_classic(id, "delay_responses")?;
                self.members.get_mut(&name).expect("resolved").delay = (*ms, *count);
                self.record_step("delay_responses", Some(&name), Some(format!("{count} x {ms}ms")));
            }
            Step::LoseResponses { id, count } => {
                let name = self.resolve_classic(id, "lose_responses")?;
                self.members.get_mut(&name).expect("resolved").lose = *count;
                self.record_step("lose_responses", Some(&name), Some(format!("{count}")));
            }
            Step::StaleMetadata { id, ms } => {
                let name = self.resolve_classic(id, "stale_metadata")?;
                self.members.get_mut(&name).expect("resolved").stale_ms = *ms;
                self.record_step("stale_metadata", Some(&name), Some(format!("{ms}ms")));
            }
        }
        Ok(())
    }

    fn publish_metadata(&mut self) {
        self.note_partitions();
        if let Some(mg) = &mut self.modern {
            // The group coordinator reads the metadata image directly.
            mg.update_metadata(self.cluster.clone());
        }
        let names: Vec<(String, u32, u64)> =
            self.members.iter().filter(|(_, m)| m.alive).map(|(n, m)| (n.clone(), m.incarnation, m.stale_ms)).collect();
        for (n, inc, stale) in names {
            let at = self.now.saturating_add(self.cfg.metadata_delay_ms).saturating_add(stale);
            let md = self.cluster.clone();
            self.push(at, Msg::Metadata(n, inc, md));
        }
    }

    /// Stops a member: `graceful` runs `close()` (LeaveGroup for dynamic members) first.
    fn stop(&mut self, name: &str, graceful: bool) {
        if self.cmembers.get(name).is_some_and(|c| c.alive) {
            self.stop_consumer(name, graceful);
            return;
        }
        if graceful {
            let now = self.now;
            let m = self.members.get_mut(name).expect("present");
            if !m.frozen {
                m.coord.leave(now);
                self.drain(name);
            }
        }
        let m = self.members.get_mut(name).expect("present");
        m.alive = false;
        m.frozen = false;
        m.view.clear();
        m.incarnation += 1;
    }

    pub(super) fn in_group(&self, m: &SimMember) -> bool {
        m.alive && !m.coord.member_id().is_empty() && self.group_has(m.coord.member_id())
    }

    /// Whether the broker's group (classic or consumer) has `member_id`.
    pub(super) fn group_has(&self, member_id: &str) -> bool {
        match &self.modern {
            Some(mg) => mg.has_member(member_id),
            None => self.broker.has_member(member_id),
        }
    }

    /// The classic generation, or the consumer group's epoch.
    pub(super) fn group_generation(&self) -> i32 {
        match &self.modern {
            Some(mg) => mg.group_epoch,
            None => self.broker.generation(),
        }
    }

    pub(super) fn c_in_group(&self, c: &CMember) -> bool {
        c.alive && !c.member_id.is_empty() && self.group_has(&c.member_id)
    }

    fn next_incarnation(&self, name: &str) -> u32 {
        let a = self.members.get(name).map(|m| m.incarnation + 1);
        let b = self.cmembers.get(name).map(|m| m.incarnation + 1);
        a.max(b).unwrap_or(0)
    }

    fn resolve_classic(&self, id: &str, step: &str) -> Result<String, SimError> {
        let name = self.resolve(id)?;
        if self.cmembers.get(&name).is_some_and(|c| c.alive) {
            return Err(SimError::Unsupported(format!("{step}: not modelled for consumer-protocol member {name}")));
        }
        Ok(name)
    }

    fn start_consumer(&mut self, spec: MemberSpec) {
        let incarnation = self.next_incarnation(&spec.id);
        let name = spec.id.clone();
        if let Some(m) = self.members.get_mut(&name) {
            m.alive = false;
        }
        self.cmembers.insert(
            name.clone(),
            CMember {
                spec,
                incarnation,
                alive: true,
                member_id: String::new(),
                epoch: 0,
                view: PartitionSet::new(),
                fatal: false,
                timer_token: 0,
                in_flight: false,
            },
        );
        self.record_step("join", Some(&name), Some("group.protocol=consumer".into()));
        self.send_heartbeat(&name);
    }

    fn stop_consumer(&mut self, name: &str, graceful: bool) {
        let latency = self.latency();
        let c = self.cmembers.get_mut(name).expect("present");
        if graceful && !c.member_id.is_empty() {
            let req = CgHeartbeat {
                member_id: c.member_id.clone(),
                member_epoch: -1,
                topics: Vec::new(),
                owned: PartitionSet::new(),
            };
            let inc = c.incarnation;
            let at = self.now.saturating_add(latency);
            let at = self.fifo(name, true, at);
            self.push(at, Msg::ToModern(name.to_string(), inc, req));
        }
        let c = self.cmembers.get_mut(name).expect("present");
        c.alive = false;
        c.view.clear();
        c.incarnation += 1;
    }

    /// Sends a consumer member's heartbeat unless one is in flight.
    fn send_heartbeat(&mut self, name: &str) {
        let latency = self.latency();
        let Some(c) = self.cmembers.get_mut(name) else { return };
        if !c.alive || c.fatal || c.in_flight {
            return;
        }
        c.in_flight = true;
        c.timer_token += 1;
        let req = CgHeartbeat {
            member_id: c.member_id.clone(),
            member_epoch: c.epoch,
            topics: c.spec.topics.clone(),
            owned: c.view.clone(),
        };
        let inc = c.incarnation;
        let at = self.now.saturating_add(latency);
        let at = self.fifo(name, true, at);
        self.push(at, Msg::ToModern(name.to_string(), inc, req));
    }

    /// The broker receives a consumer member's heartbeat: the first one converts the classic
    /// group (or is refused with GROUP_ID_NOT_FOUND).
    fn modern_heartbeat(&mut self, name: String, inc: u32, req: CgHeartbeat) {
        let now = self.now;
        if self.modern.is_none() {
            if req.member_epoch == -1 {
                return;
            }
            if let Err(why) = self.convert() {
                let resp = CgResponse {
                    error: CgError::GroupIdNotFound(why),
                    member_id: String::new(),
                    member_epoch: 0,
                    assignment: PartitionSet::new(),
                };
                let at = now.saturating_add(self.latency());
                let at = self.fifo(&name, false, at);
                self.push(at, Msg::FromModern(name, inc, resp));
                return;
            }
        }
        let session = self.cfg.session_timeout_ms;
        let mg = self.modern.as_mut().expect("converted");
        let leave = req.member_epoch == -1;
        let resp = mg.heartbeat(now, &name, session, req);
        self.reschedule_broker();
        if !leave {
            let at = now.saturating_add(self.latency());
            let at = self.fifo(&name, false, at);
            self.push(at, Msg::FromModern(name, inc, resp));
        }
    }

    /// Converts the classic group to a consumer group when the broker's rules allow it
    /// (`inspect::upgrade::check_upgrade`, the rules `kcp group upgrade-check` applies); an
    /// empty classic group is replaced instead.
    fn convert(&mut self) -> Result<(), String> {
        use crate::inspect::upgrade::{check_upgrade, BrokerConfigs, BrokerLine, ServerAssignor, UpgradeEnvironment};
        let now = self.now;
        let snapshot = self.broker.snapshot();
        let generation = self.broker.generation();
        let mut converted = Vec::new();
        if !snapshot.is_empty() {
            let group = crate::inspect::ClassicGroup {
                group_id: "sim".into(),
                state: format!("{:?}", self.broker.state()),
                protocol_type: "consumer".into(),
                protocol: self.broker.protocol().unwrap_or_default().to_owned(),
                members: snapshot.iter().map(|(d, _, _)| d.clone()).collect(),
            };
            // The rules of the broker's line; the consumer protocol is on (a 3.x broker with it
            // off never sees a consumer member convert anything: not simulated).
            let line = if self.cfg.broker_version == "3.x" { BrokerLine::Kafka3 } else { BrokerLine::Kafka4 };
            let env = UpgradeEnvironment {
                line,
                group_version: Some(1),
                configs: Some(BrokerConfigs {
                    rebalance_protocols: Some("classic,consumer".into()),
                    migration_policy: Some(self.cfg.migration_policy.clone()),
                    consumer_assignors: Some(self.cfg.server_assignor.clone()),
                    ..BrokerConfigs::default()
                }),
            };
            let report = check_upgrade(&group, &env, &self.cluster, ServerAssignor::parse(&self.cfg.server_assignor));
            if report.broker_converts == Some(false) {
                let failed: Vec<String> = report
                    .checks
                    .iter()
                    .filter(|c| c.broker_refuses && c.ok == Some(false))
                    .map(|c| format!("{}: {}", c.name, c.evidence))
                    .collect();
                let why = format!("GROUP_ID_NOT_FOUND: the classic group cannot be converted ({})", failed.join("; "));
                self.conversions.push(format!("t={now}ms: conversion refused: {}", failed.join("; ")));
                return Err(why);
            }
            for (d, protocols, session_ms) in snapshot {
                let name = self
                    .members
                    .iter()
                    .find(|(_, m)| m.alive && m.coord.member_id() == d.member_id)
                    .map_or_else(|| d.member_id.clone(), |(n, _)| n.clone());
                let topics = crate::Subscription::decode(&d.member_metadata).map(|s| s.topics).unwrap_or_default();
                let assigned = crate::Assignment::decode(&d.member_assignment)
                    .map(|a| PartitionSet::from_groups(&a.assigned_partitions))
                    .unwrap_or_default();
                converted.push(Converted { member_id: d.member_id, name, protocols, topics, assigned, session_ms });
            }
            self.conversions.push(format!(
                "t={now}ms: the classic group (generation {generation}, {} member{}) converted to a consumer group",
                converted.len(),
                if converted.len() == 1 { "" } else { "s" }
            ));
        } else {
            self.conversions.push(format!("t={now}ms: the empty classic group replaced by a consumer group"));
        }
        let out = self.broker.hand_over();
        let mut mg = ModernGroup::new(&self.cfg.server_assignor, self.cluster.clone(), generation, converted, now);
        mg.skip_release_wait = self.faulty_reconciliation;
        self.modern = Some(mg);
        self.deliver_broker_out(out);
        let detail = self.conversions.last().cloned();
        self.record_step("converted", None, detail);
        Ok(())
    }

    /// A consumer member receives its heartbeat response.
    fn modern_response(&mut self, name: &str, resp: CgResponse) {
        let now = self.now;
        let interval = self.cfg.heartbeat_interval_ms;
        let Some(c) = self.cmembers.get_mut(name) else { return };
        c.in_flight = false;
        match resp.error {
            CgError::None => {
                c.member_id = resp.member_id;
                c.epoch = resp.member_epoch;
                let revoked: PartitionSet = c.view.difference(&resp.assignment).collect();
                let added: PartitionSet = resp.assignment.difference(&c.view).collect();
                for (t, p) in revoked.iter() {
                    c.view.remove(t, p);
                }
                c.view.extend(added.iter());
                let changed = !revoked.is_empty() || !added.is_empty();
                if !revoked.is_empty() {
                    self.record("revoked", Some(name), revoked.to_groups(), None);
                }
                if !added.is_empty() {
                    for (t, p) in added.iter() {
                        match self.last_owner.insert((t.to_owned(), p), name.to_string()) {
                            Some(prev) if prev != name => self.moved += 1,
                            _ => {}
                        }
                        if self.small {
                            self.check_gain(name, t, p);
                        }
                    }
                    self.record("assigned", Some(name), added.to_groups(), None);
                }
                if changed {
                    // The acknowledgement goes out at once.
                    self.send_heartbeat(name);
                } else {
                    let c = self.cmembers.get_mut(name).expect("present");
                    let token = c.timer_token;
                    self.push(now.saturating_add(interval), Msg::CTimer(name.to_string(), token));
                }
            }
            CgError::UnknownMember | CgError::Fenced => {
                let lost = std::mem::take(&mut c.view);
                c.epoch = 0;
                let what = if resp.error == CgError::Fenced { "FENCED_MEMBER_EPOCH" } else { "UNKNOWN_MEMBER_ID" };
                if !lost.is_empty() {
                    self.record("lost", Some(name), lost.to_groups(), Some(what.into()));
                }
                self.send_heartbeat(name);
            }
            CgError::GroupIdNotFound(why) => {
                c.fatal = true;
                self.fatal.push((name.to_string(), why.clone()));
                self.record("fatal", Some(name), Vec::new(), Some(why));
            }
        }
    }

    fn record(&mut self, event: &str, name: Option<&str>, partitions: Vec<TopicPartitions>, detail: Option<String>) {
        if !self.cfg.record_timeline || self.stopped {
            return;
        }
        let consumer = name.is_some_and(|n| self.cmembers.get(n).is_some_and(|c| c.alive));
        let m = name.and_then(|n| self.members.get(n)).filter(|_| !consumer);
        let mut owned = BTreeMap::new();
        let mut generations = BTreeMap::new();
        for (n, mm) in &self.members {
            if mm.alive {
                owned.insert(n.clone(), mm.view.to_groups());
                generations.insert(n.clone(), mm.coord.generation());
            }
        }
        for (n, c) in &self.cmembers {
            if c.alive {
                owned.insert(n.clone(), c.view.to_groups());
                generations.insert(n.clone(), c.epoch);
            }
        }
        let (mut pending_revocation, mut awaiting) = (BTreeMap::new(), BTreeMap::new());
        if let Some(mg) = &self.modern {
            for (id, bm) in &mg.members {
                if !bm.revoking.is_empty() {
                    pending_revocation.insert(bm.name.clone(), bm.revoking.to_groups());
                }
                let wait = mg.awaiting(id);
                if !wait.is_empty() {
                    awaiting.insert(bm.name.clone(), wait.to_groups());
                }
            }
        }
        let group_protocol = if self.modern.is_some() { GroupProtocol::Consumer } else { GroupProtocol::Classic };
        self.seq += 1;
        let entry = TimelineEntry {
            seq: self.seq,
            t_ms: self.now,
            generation: self.group_generation(),
            event: event.to_string(),
            member: name.map(str::to_string),
            protocol: if consumer { Some("consumer") } else { m.map(|m| m.coord.protocol().as_str()) },
            assignor: m.and_then(|m| m.coord.protocol_name().map(str::to_string)),
            partitions,
            owned,
            generations,
            detail,
            group_protocol,
            pending_revocation,
            awaiting,
        };
        match &mut self.sink {
            Some(sink) => {
                if !sink(&entry) {
                    self.stopped = true;
                }
            }
            None => self.timeline.push(entry),
        }
    }

    fn record_step(&mut self, event: &str, name: Option<&str>, detail: Option<String>) {
        self.record(event, name, Vec::new(), detail);
    }

    /// Drains a member's events (timeline, invariants) and requests (network).
    fn drain(&mut self, name: &str) {
        let now = self.now;
        loop {
            let Some(m) = self.members.get_mut(name) else { return };
            let Some(ev) = m.coord.poll_event() else { break };
            match &ev {
                Event::PartitionsLost(p) | Event::PartitionsRevoked(p) => {
                    let label = if matches!(ev, Event::PartitionsLost(_)) { "lost" } else { "revoked" };
                    for g in p {
                        for &partition in &g.partitions {
                            m.view.remove(&g.topic, partition);
                        }
                    }
                    let p = p.clone();
                    self.record(label, Some(name), p, None);
                }
                Event::PartitionsAssigned(p) => {
                    let p = p.clone();
                    let set = PartitionSet::from_groups(&p);
                    m.view.extend(set.iter());
                    for (topic, partition) in set.iter() {
                        match self.last_owner.insert((topic.to_owned(), partition), name.to_string()) {
                            Some(prev) if prev != name => self.moved += 1,
                            _ => {}
                        }
                        if self.small {
                            self.check_gain(name, topic, partition);
                        }
                    }
                    self.record("assigned", Some(name), p, None);
                }
                // The simulated members neither commit nor fetch offsets.
                Event::Assignment { .. } | Event::OffsetsFetched(_) | Event::CommitCompleted { .. } => {}
                Event::Error(e) => {
                    let e = e.to_string();
                    self.record("error", Some(name), Vec::new(), Some(e));
                }
                Event::Fatal(e) => {
                    let e = e.to_string();
                    let m = self.members.get_mut(name).expect("present");
                    m.fatal = true;
                    self.fatal.push((name.to_string(), e.to_string()));
                    self.record("fatal", Some(name), Vec::new(), Some(e.to_string()));
                }
            }
        }
        // The sim's per-event view must match the coordinator's own state.
        let small = self.small;
        let m = self.members.get_mut(name).expect("present");
        if small && m.view != *m.coord.owned() {
            m.view = m.coord.owned().clone();
            let text = format!("{name}: listener events disagree with the coordinator's ownership");
            self.violation(format!("view-{name}"), text);
        }
        let m = self.members.get_mut(name).expect("present");
        let inc = m.incarnation;
        let mut sends = Vec::new();
        while let Some(t) = m.coord.poll_request(now) {
            sends.push(t);
        }
        for t in sends {
            let at = now.saturating_add(self.latency());
            let at = self.fifo(name, true, at);
            self.push(at, Msg::ToBroker(Reply { member: name.to_string(), incarnation: inc, id: t.id }, t.request));
        }
        self.reschedule(name);
    }

    fn reschedule(&mut self, name: &str) {
        let Some(m) = self.members.get_mut(name) else { return };
        if !m.alive || m.frozen {
            return;
        }
        m.timer_token += 1;
        let token = m.timer_token;
        if let Some(t) = m.coord.poll_timeout() {
            let at = t.max(self.now);
            self.push(at, Msg::MemberTimer(name.to_string(), token));
        }
    }

    fn reschedule_broker(&mut self) {
        self.broker_token += 1;
        let next = match &self.modern {
            Some(mg) => mg.next_deadline(self.now),
            None => self.broker.next_deadline(self.now),
        };
        if let Some(t) = next {
            let token = self.broker_token;
            self.push(t, Msg::BrokerTimer(token));
        }
    }

    fn deliver_broker_out(&mut self, out: Vec<(Reply, Response)>) {
        for (reply, resp) in out {
            let mut at = self.now.saturating_add(self.latency());
            if let Some(m) = self.members.get_mut(&reply.member) {
                if m.incarnation == reply.incarnation && !matches!(resp, Response::LeaveGroup(_)) {
                    if m.lose > 0 {
                        m.lose -= 1;
                        continue;
                    }
                    if m.delay.1 > 0 {
                        m.delay.1 -= 1;
                        at = at.saturating_add(m.delay.0);
                    }
                }
            }
            let at = self.fifo(&reply.member, false, at);
            self.push(at, Msg::ToMember(reply.member, reply.incarnation, reply.id, resp));
        }
    }

    /// Processes one queued message or timer; false when nothing is left before `limit`.
    fn step(&mut self, limit: u64) -> bool {
        if self.stopped {
            return false;
        }
        if self.events >= self.cfg.max_events {
            self.stopped = true;
            self.unconverged.push(format!(
                "the run stopped after {} events, the limit (config.max_events; at most {})",
                self.events,
                limits::MAX_EVENTS
            ));
            return false;
        }
        let Some((&(at, order), _)) = self.queue.first_key_value() else { return false };
        if at > limit {
            return false;
        }
        let msg = self.queue.remove(&(at, order)).expect("present");
        self.now = self.now.max(at);
        self.events += 1;
        match &msg {
            Msg::ToBroker(_, Request::JoinGroup(_) | Request::SyncGroup(_)) => self.join_sync_in_flight -= 1,
            Msg::ToMember(_, _, _, Response::JoinGroup(_) | Response::SyncGroup(_)) => self.join_sync_in_flight -= 1,
            Msg::Metadata(..) | Msg::Thaw(..) | Msg::Start(_) => self.pending_control -= 1,
            _ => {}
        }
        let now = self.now;
        match msg {
            Msg::ToBroker(reply, req) => {
                let alive = self.members.get(&reply.member).is_some_and(|m| m.incarnation == reply.incarnation)
                    || matches!(req, Request::LeaveGroup(_));
                if alive && self.modern.is_some() {
                    let mg = self.modern.as_mut().expect("checked");
                    let out = mg.handle(now, reply, req);
                    self.deliver_broker_out(out);
                    self.reschedule_broker();
                } else if alive {
                    // A heartbeat only pushes its member's session deadline later, so the
                    // broker's timer needs no rescheduling (an early wake-up is harmless).
                    let heartbeat = matches!(req, Request::Heartbeat(_));
                    let mut out = self.broker.handle(now, reply, req);
                    if !heartbeat {
                        out.extend(self.broker.tick(now));
                    }
                    self.deliver_broker_out(out);
                    if !heartbeat {
                        self.reschedule_broker();
                    }
                }
            }
            Msg::ToMember(name, inc, id, resp) => {
                let Some(m) = self.members.get_mut(&name) else { return true };
                if !m.alive || m.incarnation != inc {
                    return true;
                }
                if m.frozen {
                    m.buffered.push((id, resp));
                    return true;
                }
                m.coord.handle_response(now, id, resp);
                self.drain(&name);
            }
            Msg::Metadata(name, inc, md) => {
                let Some(m) = self.members.get_mut(&name) else { return true };
                if !m.alive || m.incarnation != inc {
                    return true;
                }
                if m.frozen {
                    m.buffered_metadata = Some(md);
                    return true;
                }
                m.coord.update_metadata(now, md);
                self.drain(&name);
            }
            Msg::Thaw(name, inc) => {
                let Some(m) = self.members.get_mut(&name) else { return true };
                if !m.alive || m.incarnation != inc {
                    return true;
                }
                m.frozen = false;
                m.out_of_group_since = None;
                m.coord.handle_timeout(now);
                if let Some(md) = m.buffered_metadata.take() {
                    m.coord.update_metadata(now, md);
                }
                for (id, resp) in std::mem::take(&mut m.buffered) {
                    m.coord.handle_response(now, id, resp);
                }
                self.record_step("thaw", Some(&name), None);
                self.drain(&name);
            }
            Msg::Start(spec) => {
                let name = spec.id.clone();
                if let Err(e) = self.start_member(spec) {
                    self.record_step("error", Some(&name), Some(e.to_string()));
                }
            }
            Msg::MemberTimer(name, token) => {
                let Some(m) = self.members.get_mut(&name) else { return true };
                if !m.alive || m.frozen || m.timer_token != token {
                    return true;
                }
                m.coord.handle_timeout(now);
                self.drain(&name);
            }
            Msg::ToModern(name, inc, req) => {
                let live = self.cmembers.get(&name).is_some_and(|c| c.incarnation == inc && c.alive);
                if live || req.member_epoch == -1 {
                    self.modern_heartbeat(name, inc, req);
                }
            }
            Msg::FromModern(name, inc, resp) => {
                if self.cmembers.get(&name).is_some_and(|c| c.alive && c.incarnation == inc) {
                    self.modern_response(&name, resp);
                }
            }
            Msg::CTimer(name, token) => {
                if self.cmembers.get(&name).is_some_and(|c| c.alive && c.timer_token == token) {
                    self.send_heartbeat(&name);
                }
            }
            Msg::BrokerTimer(token) if self.modern.is_some() => {
                if token == self.broker_token {
                    self.modern.as_mut().expect("checked").tick(now);
                    self.reschedule_broker();
                }
            }
            Msg::BrokerTimer(token) => {
                if token == self.broker_token {
                    let out = self.broker.tick(now);
                    self.deliver_broker_out(out);
                    self.reschedule_broker();
                }
            }
        }
        if self.small {
            self.last_full_check = now;
            self.full_check();
        }
        true
    }

    fn run_until(&mut self, limit: u64, mut done: impl FnMut(&mut Sim) -> bool) -> bool {
        let mut last_quiet_check = u64::MAX;
        loop {
            if (self.small || last_quiet_check != self.now / 50) && done(self) {
                return true;
            }
            last_quiet_check = self.now / 50;
            if !self.step(limit) {
                return done(self);
            }
        }
    }

    /// Whether nothing is left to happen but heartbeats.
    fn quiet(&self) -> bool {
        if let Some(mg) = &self.modern {
            return self.quiet_modern(mg);
        }
        // A consumer member in a classic group has yet to convert it (or be refused).
        if self.cmembers.values().any(|c| c.alive && !c.fatal) {
            return false;
        }
        if self.join_sync_in_flight > 0
            || self.pending_control > 0
            || self.broker.pending_count() > 0
            || self.broker.has_parked()
            || !matches!(self.broker.state(), GroupState::Stable | GroupState::Empty)
        {
            return false;
        }
        let mut ids = BTreeSet::new();
        for m in self.members.values() {
            if !m.alive || m.fatal || m.coord.subscription().is_empty() {
                continue;
            }
            if m.frozen
                || m.coord.state() != State::Stable
                || m.coord.rejoin_needed()
                || m.coord.generation() != self.broker.generation()
            {
                return false;
            }
            ids.insert(m.coord.member_id());
        }
        self.broker.member_ids().eq(ids.iter().copied())
    }

    /// Quiet in a consumer group: every member reconciled at the target epoch, and every
    /// simulated member agreeing with the broker on its epoch and partitions.
    fn quiet_modern(&self, mg: &ModernGroup) -> bool {
        if self.join_sync_in_flight > 0 || self.pending_control > 0 || !mg.reconciled() {
            return false;
        }
        let mut ids = BTreeSet::new();
        for m in self.members.values() {
            if !m.alive || m.fatal || m.coord.subscription().is_empty() {
                continue;
            }
            let Some(bm) = mg.members.get(m.coord.member_id()) else { return false };
            if m.frozen
                || m.coord.state() != State::Stable
                || m.coord.rejoin_needed()
                || m.coord.generation() != bm.epoch
                || m.view != bm.assigned
            {
                return false;
            }
            ids.insert(m.coord.member_id());
        }
        for c in self.cmembers.values() {
            if !c.alive || c.fatal {
                continue;
            }
            let Some(bm) = mg.members.get(&c.member_id) else { return false };
            if c.epoch != bm.epoch || c.view != bm.assigned {
                return false;
            }
            ids.insert(c.member_id.as_str());
        }
        mg.members.keys().map(String::as_str).eq(ids.iter().copied())
    }

    fn settle(&mut self, what: &str) {
        if self.stopped {
            return;
        }
        let limit = self.now.saturating_add(self.cfg.settle_limit_ms);
        if !self.run_until(limit, |s| s.quiet()) && !self.stopped {
            self.unconverged.push(format!("the group did not settle after {what}"));
        }
        self.full_check();
    }

    fn finish(mut self) -> Outcome {
        self.full_check();
        let quiet = self.quiet();
        let mut reasons = std::mem::take(&mut self.unconverged);
        let mut live: Vec<(&str, &PartitionSet, BTreeSet<String>)> = self
            .members
            .iter()
            .filter(|(_, m)| m.alive && !m.fatal)
            .map(|(n, m)| (n.as_str(), &m.view, m.coord.subscription().clone()))
            .collect();
        for (n, c) in self.cmembers.iter().filter(|(_, c)| c.alive && !c.fatal) {
            live.push((n.as_str(), &c.view, c.spec.topics.iter().cloned().collect()));
        }
        self.ownership_reasons(&live, &mut reasons);
        if !quiet && reasons.is_empty() {
            reasons.push("the group is still rebalancing".into());
        }
        if !self.fatal.is_empty() {
            reasons.push(format!("{} member(s) stopped on a fatal error", self.fatal.len()));
        }
        let mut final_owned: BTreeMap<String, PartitionSet> =
            self.members.iter().filter(|(_, m)| m.alive).map(|(n, m)| (n.clone(), m.view.clone())).collect();
        final_owned.extend(self.cmembers.iter().filter(|(_, c)| c.alive).map(|(n, c)| (n.clone(), c.view.clone())));
        let modern_rebalances = self.modern.as_ref().map_or(0, |mg| mg.target_computations);
        let group_protocol = if self.modern.is_some() { GroupProtocol::Consumer } else { GroupProtocol::Classic };
        let final_generation = self.group_generation();
        Outcome {
            timeline: self.timeline,
            summary: Summary {
                rebalances: self.broker.completed_rebalances() + modern_rebalances,
                partitions_moved: self.moved,
                converged: reasons.is_empty(),
                violations: self.violations,
                unconverged: reasons,
                fatal: self.fatal,
                duration_ms: self.now,
                final_generation,
                events: self.events,
                group_protocol,
                conversions: self.conversions,
            },
            partitions: self.partitions,
            final_owned,
        }
    }
}
