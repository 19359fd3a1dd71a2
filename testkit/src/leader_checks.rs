//! The `coordinator_leader` fuzz input and check, shared by the fuzz target and the corpus
//! replay in `tests/coordinator_corpus.rs`.
//!
//! A real [`Coordinator`] is made the leader of a group whose members' JoinGroup metadata is
//! hostile: raw bytes, or valid encodings (any version, also above 3) of subscriptions with
//! huge, negative or duplicate partition ids, claims on unknown topics, odd topic names and
//! huge generations. The leader runs one of the built-in assignors or `chaos`, a custom
//! assignor that hands out whatever the input says (invalid, duplicate, unknown-topic
//! partitions). The check: no panic, a typed error exactly when one is due, and a SyncGroup
//! request that respects the leader's rules otherwise (see [`check`]).
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};

use arbitrary::{Arbitrary, Unstructured};
use bytes::Bytes;
use kafka_consumer_protocol::assignor::leader::LeaderError;
use kafka_consumer_protocol::assignor::{
    builtin, AssignError, ClusterMetadata, GroupAssignment, GroupMember, PartitionAssignor, RebalanceProtocol,
    TopicInfo,
};
use kafka_consumer_protocol::coordinator::{
    Config, Coordinator, CoordinatorError, Event, JoinGroupMember, JoinGroupResponse, Request, Response, State,
    SyncGroupAssignment, SyncGroupResponse, Transmit,
};
use kafka_consumer_protocol::{
    Assignment, AssignmentView, CooperativeStickyUserData, Subscription, SubscriptionView, TopicPartitions, Version,
};

/// Topic names the input picks from: the leader's metadata uses the first few, members and the
/// custom assignor also name the rest (missing from the metadata: step 2.6 territory).
const TOPICS: [&str; 8] = ["t0", "t1", "t2", "", "a.b_c-d", "gone", "тема", "t0 "];

/// The assignors the leader can run; `chaos` is the custom one.
const ASSIGNORS: [&str; 5] = ["range", "roundrobin", "sticky", "cooperative-sticky", "chaos"];
/// The ones of [`ASSIGNORS`] that support the cooperative protocol.
const COOPERATIVE_CAPABLE: [&str; 2] = ["cooperative-sticky", "chaos"];

/// Partition ids: mostly small, sometimes the values that break careless code.
#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Part {
    Small(u8),
    Special(u8),
    Raw(i32),
}

const SPECIAL: [i32; 9] = [i32::MAX, i32::MAX - 1, i32::MIN, -1, 1 << 20, 1 << 30, 65_535, 4_096, -2];

impl Part {
    fn id(self) -> i32 {
        match self {
            Part::Small(p) => i32::from(p % 20),
            Part::Special(i) => SPECIAL[usize::from(i) % SPECIAL.len()],
            Part::Raw(p) => p,
        }
    }
}

/// A topic name: one of [`TOPICS`] or arbitrary.
#[derive(Arbitrary, Debug, Clone)]
pub enum Topic {
    Pool(u8),
    Raw(String),
}

impl Topic {
    fn name(&self) -> String {
        match self {
            Topic::Pool(i) => TOPICS[usize::from(*i) % TOPICS.len()].to_string(),
            Topic::Raw(s) => s.chars().take(40).collect(),
        }
    }
}

/// How a member's JoinGroup metadata is made.
#[derive(Arbitrary, Debug)]
pub enum Metadata {
    /// Arbitrary bytes.
    Raw(Vec<u8>),
    /// A subscription encoded at version `version % 5`, where 4 means: encoded as v3 with the
    /// header claiming a later version and `trailing` bytes appended; `cut` truncates it.
    Encoded { sub: Sub, version: u8, high: i16, trailing: Vec<u8>, cut: Option<u16> },
}

/// A structured subscription.
#[derive(Arbitrary, Debug)]
pub struct Sub {
    pub topics: Vec<Topic>,
    pub owned: Vec<(Topic, Vec<Part>)>,
    pub generation: Generation,
    pub user_data: Option<Vec<u8>>,
    pub rack: Option<u8>,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Generation {
    Small(u8),
    Raw(i32),
}

#[derive(Arbitrary, Debug)]
pub struct Member {
    /// Member id: `m<id % 16>` (duplicates possible).
    pub id: u8,
    pub instance: Option<u8>,
    pub metadata: Metadata,
}

/// The whole input.
#[derive(Arbitrary, Debug)]
pub struct Input {
    /// Index into [`ASSIGNORS`].
    pub assignor: u8,
    /// Also configure `range` (second in preference), which makes the protocol eager.
    pub with_range: bool,
    /// The JoinGroup response names an assignor the leader does not have.
    pub unknown_protocol: bool,
    /// The leader's metadata: partition counts (`% 9`) of the first topics of [`TOPICS`].
    pub metadata: Vec<u8>,
    /// Racks for the partitions of every topic (`None`: unknown).
    pub racks: Option<u8>,
    /// The leader's own subscription (indexes into [`TOPICS`]); `t0` when empty.
    pub leader_topics: Vec<u8>,
    /// The leader's member id is `m<leader % 16>`: may or may not be among the members.
    pub leader: u8,
    pub generation: i32,
    pub members: Vec<Member>,
    /// What `chaos` hands out: (member index, topic, partition).
    pub plan: Vec<(u8, Topic, Part)>,
}

fn encode_sub(sub: &Sub, version: u8, high: i16, trailing: &[u8], cut: Option<u16>) -> Option<Vec<u8>> {
    let s = {
        let mut s = Subscription::new(sub.topics.iter().take(8).map(Topic::name))
            .with_user_data(sub.user_data.clone().map(Bytes::from))
            .with_owned_partitions(
                sub.owned
                    .iter()
                    .take(8)
                    .map(|(t, ps)| {
                        TopicPartitions::new(t.name(), ps.iter().take(16).map(|p| p.id()).collect::<Vec<_>>())
                    })
                    .collect(),
            )
            .with_generation_id(match sub.generation {
                Generation::Small(g) => i32::from(g % 4) - 1,
                Generation::Raw(g) => g,
            });
        s.rack_id = sub.rack.map(|r| format!("r{}", r % 3));
        s
    };
    let mut bytes = match version % 5 {
        0 => s.encode(Version::V0),
        1 => s.encode(Version::V1),
        2 => s.encode(Version::V2),
        3 => s.encode(Version::V3),
        _ => s.encode(Version::V3).map(|mut b| {
            // A later version: Kafka readers accept it and ignore what they do not know.
            let v = if high >= 4 { high } else { 4 + (high & 7) };
            b[..2].copy_from_slice(&v.to_be_bytes());
            b.extend_from_slice(&trailing[..trailing.len().min(16)]);
            b
        }),
    }
    .ok()?;
    if let Some(cut) = cut {
        bytes.truncate(usize::from(cut));
    }
    Some(bytes)
}

impl Member {
    fn id(&self) -> String {
        format!("m{}", self.id % 16)
    }

    fn bytes(&self) -> Bytes {
        match &self.metadata {
            Metadata::Raw(b) => Bytes::copy_from_slice(&b[..b.len().min(512)]),
            Metadata::Encoded { sub, version, high, trailing, cut } => {
                Bytes::from(encode_sub(sub, *version, *high, trailing, *cut).unwrap_or_default())
            }
        }
    }
}

/// The custom assignor: gives member `ids[i]` whatever the plan says, supports both protocols.
struct Chaos {
    plan: Vec<(usize, String, i32)>,
}

/// The `chaos` plan per member id: the (topic, partition) pairs in plan order.
fn chaos_plan(plan: &[(usize, String, i32)], members: &[GroupMember]) -> BTreeMap<String, Vec<(String, i32)>> {
    let mut out: BTreeMap<String, Vec<(String, i32)>> = BTreeMap::new();
    if members.is_empty() {
        return out;
    }
    for (i, t, p) in plan {
        out.entry(members[i % members.len()].member_id.clone()).or_default().push((t.clone(), *p));
    }
    out
}

impl PartitionAssignor for Chaos {
    fn name(&self) -> &str {
        "chaos"
    }
    fn supported_protocols(&self) -> &[RebalanceProtocol] {
        &[RebalanceProtocol::Cooperative, RebalanceProtocol::Eager]
    }
    fn assign(&self, _: &ClusterMetadata, members: &[GroupMember]) -> Result<GroupAssignment, AssignError> {
        let mut out = GroupAssignment::new();
        for (m, pairs) in chaos_plan(&self.plan, members) {
            let groups = pairs.iter().map(|(t, p)| TopicPartitions::new(t.clone(), vec![*p])).collect();
            out.insert(m, &Assignment::new(groups));
        }
        Ok(out)
    }
}

/// A `(topic, partition)` pair of this check's own model (it shares no type with the leader
/// under test).
type Tp = (String, i32);
type Set = BTreeSet<Tp>;

/// Flattens per-topic lists into a set.
fn partition_set(groups: &[TopicPartitions]) -> Set {
    groups.iter().flat_map(|g| g.partitions.iter().map(move |p| (g.topic.clone(), *p))).collect()
}

/// What the leader must do with this input.
enum Expect {
    /// An `Event::Error` of this kind and no SyncGroup.
    Error(fn(&CoordinatorError) -> bool, String),
    /// A SyncGroup; for `chaos`, exactly these partitions per member.
    Sync(Option<BTreeMap<String, Set>>),
}

/// Drives the leader through JoinGroup -> election -> SyncGroup on the input and checks:
///
/// - no panic (and, under libFuzzer's `-malloc_limit_mb`, no allocation sized by a claim);
/// - an unknown protocol, an undecodable subscription, an assignor error, or (a custom
///   cooperative assignor) a partition added to one member while revoked from another gives
///   exactly that typed `Event::Error` and no SyncGroup;
/// - otherwise the SyncGroup has one decodable assignment per distinct member id of the
///   JoinGroup response; every partition in it exists in the leader's metadata, except (KIP-429
///   step 2.6, cooperative only) a partition of a topic missing from the metadata given back to
///   a member that claims it; no partition another member claims (eager: at the group's highest
///   claim generation, and only with an assignor that supports the cooperative protocol) is given
///   to a member this round
///   (the hand-over withholds it); built-in assignors never give a partition twice; `chaos`
///   gets exactly its plan minus what the leader filters and withholds.
pub fn check(data: &[u8]) {
    let Ok(input) = Input::arbitrary_take_rest(Unstructured::new(data)) else { return };
    let chosen = ASSIGNORS[usize::from(input.assignor) % ASSIGNORS.len()];
    let plan: Vec<(usize, String, i32)> =
        input.plan.iter().take(32).map(|(m, t, p)| (usize::from(*m), t.name(), p.id())).collect();
    let make = |name: &str| -> Box<dyn PartitionAssignor> {
        if name == "chaos" {
            Box::new(Chaos { plan: plan.clone() })
        } else {
            builtin(name).expect("built-in")
        }
    };
    let mut assignors = vec![make(chosen)];
    if input.with_range && chosen != "range" {
        assignors.push(make("range"));
    }
    let mut leader = Coordinator::new(Config::new("g"), assignors, 0).expect("assignors share eager");
    let cooperative = leader.protocol() == RebalanceProtocol::Cooperative;

    let mut metadata = ClusterMetadata::default();
    for (i, n) in input.metadata.iter().take(3).enumerate() {
        let n = i32::from(n % 9);
        let partition_racks = match input.racks {
            Some(r) => (0..n).map(|p| vec![format!("r{}", (i32::from(r) + p) % 3)]).collect(),
            None => Vec::new(),
        };
        metadata.topics.insert(TOPICS[i].to_string(), TopicInfo { partitions: n, partition_racks });
    }
    leader.update_metadata(0, metadata.clone());
    let mut topics: Vec<&str> =
        input.leader_topics.iter().take(4).map(|&t| TOPICS[usize::from(t) % TOPICS.len()]).collect();
    if topics.is_empty() {
        topics.push("t0");
    }
    leader.subscribe(0, topics);

    let join = next_request(&mut leader, 0).expect("a JoinGroup");
    assert!(matches!(join.request, Request::JoinGroup(_)), "{join:?}");
    let members: Vec<JoinGroupMember> = input
        .members
        .iter()
        .take(8)
        .map(|m| JoinGroupMember {
            member_id: m.id(),
            group_instance_id: m.instance.map(|i| format!("i{}", i % 4)),
            metadata: m.bytes(),
        })
        .collect();
    let leader_id = format!("m{}", input.leader % 16);
    let protocol_name = if input.unknown_protocol { "unheard-of".to_string() } else { chosen.to_string() };
    let group = decode_members(&members);
    let expect = expected(&metadata, cooperative, &protocol_name, group.as_deref(), &plan);
    leader.handle_response(
        1,
        join.id,
        Response::JoinGroup(JoinGroupResponse {
            generation_id: input.generation,
            protocol_type: Some("consumer".into()),
            protocol_name: Some(protocol_name.clone()),
            leader: leader_id.clone(),
            member_id: leader_id.clone(),
            members: members.clone(),
            ..Default::default()
        }),
    );
    let events: Vec<Event> = std::iter::from_fn(|| leader.poll_event()).collect();
    let sync = next_request(&mut leader, 1);
    let (sync_id, mine) = match expect {
        Expect::Error(kind, why) => {
            assert!(matches!(&events[..], [Event::Error(e)] if kind(e)), "want an error ({why}), got {events:?}");
            assert!(sync.is_none(), "a SyncGroup after a failed assignment: {sync:?}");
            assert_eq!(leader.state(), State::Unjoined);
            return;
        }
        Expect::Sync(want) => {
            assert!(events.is_empty(), "{events:?}");
            let sync = sync.expect("a SyncGroup");
            let Request::SyncGroup(req) = &sync.request else { panic!("want SyncGroup, got {sync:?}") };
            let group = group.as_deref().expect("a SyncGroup only when every subscription decodes");
            check_sync(&metadata, cooperative, &protocol_name, group, &req.assignments, want.as_ref());
            let mine = req.assignments.iter().find(|a| a.member_id == leader_id).map(|a| a.assignment.clone());
            (sync.id, mine)
        }
    };

    // Complete the round with whatever the leader gave itself (nothing when it is not a member:
    // an undecodable empty assignment); it must not panic.
    leader.handle_response(
        2,
        sync_id,
        Response::SyncGroup(SyncGroupResponse { assignment: mine.clone().unwrap_or_default(), ..Default::default() }),
    );
    let events: Vec<Event> = std::iter::from_fn(|| leader.poll_event()).collect();
    // Stable, or already rejoining (its assignment did not decode, or does not match its
    // subscription).
    assert!(matches!(leader.state(), State::Stable | State::PreparingRebalance), "{:?} {events:?}", leader.state());
    if mine.is_none() {
        assert!(matches!(events.first(), Some(Event::Error(CoordinatorError::Assignment(_)))), "{events:?}");
    }
    for (t, p) in leader.owned().iter() {
        assert!(metadata.topics.get(t).is_some_and(|i| p >= 0 && p < i.partitions), "leader took {t}-{p}");
    }
}

fn next_request(c: &mut Coordinator, now: u64) -> Option<Transmit> {
    std::iter::from_fn(|| c.poll_request(now)).find(|t| !matches!(t.request, Request::Heartbeat(_)))
}

/// The decoded JoinGroup members (`None`: one does not decode).
fn decode_members(members: &[JoinGroupMember]) -> Option<Vec<GroupMember>> {
    members
        .iter()
        .map(|m| {
            let sub = SubscriptionView::decode(&m.metadata).ok()?.to_owned();
            Some(GroupMember {
                member_id: m.member_id.clone(),
                group_instance_id: m.group_instance_id.clone(),
                subscription: sub,
            })
        })
        .collect()
}

/// Every `(member id, topic, partition)` some member claims to own; in eager mode only the claims
/// at the group's highest claim generation (a lower one is stale: the hand-over ignores it).
/// The claims the leader's hand-over honours: every claim under the cooperative protocol; under
/// the eager one those at the group's highest claim generation when the assignor supports the
/// cooperative protocol (`cooperative-sticky`, `chaos`), none for an eager-only assignor.
/// The claims the leader reads: every `(member, topic, partition)` listed (what step 3 keeps a
/// partition of an unknown topic for), and of those the ones that own their partition (what the
/// hand-over withholds for): a partition's claimers at its highest claim generation. A claim at
/// a lower generation than another on the same partition is stale and owns nothing (Java's
/// `CooperativeStickyAssignor`, issue 27).
struct Claims {
    listed: BTreeSet<(String, String, i32)>,
    owning: BTreeSet<(String, String, i32)>,
}

fn claims(group: &[GroupMember], cooperative: bool, protocol_name: &str) -> Claims {
    if !cooperative && !COOPERATIVE_CAPABLE.contains(&protocol_name) {
        return Claims { listed: BTreeSet::new(), owning: BTreeSet::new() };
    }
    let generation = |m: &GroupMember| match m.subscription.generation_id {
        g if g >= 0 => g,
        _ => CooperativeStickyUserData::java_generation(m.subscription.user_data.as_deref()).unwrap_or(-1),
    };
    let claimers = || group.iter().filter(|m| !m.subscription.owned_partitions.is_empty());
    let current = if cooperative { i32::MIN } else { claimers().map(generation).max().unwrap_or(-1) };
    let listed: Vec<(i32, String, String, i32)> = claimers()
        .filter(|m| generation(m) >= current)
        .flat_map(|m| {
            let g = generation(m);
            partition_set(&m.subscription.owned_partitions)
                .into_iter()
                .map(move |(t, p)| (g, m.member_id.clone(), t, p))
        })
        .collect();
    let mut highest: BTreeMap<(&str, i32), i32> = BTreeMap::new();
    for (g, _, t, p) in &listed {
        let h = highest.entry((t.as_str(), *p)).or_insert(*g);
        *h = (*h).max(*g);
    }
    let owning = listed
        .iter()
        .filter(|(g, _, t, p)| highest[&(t.as_str(), *p)] == *g)
        .map(|(_, m, t, p)| (m.clone(), t.clone(), *p))
        .collect();
    Claims { listed: listed.into_iter().map(|(_, m, t, p)| (m, t, p)).collect(), owning }
}

fn expected(
    metadata: &ClusterMetadata,
    cooperative: bool,
    protocol_name: &str,
    group: Option<&[GroupMember]>,
    plan: &[(usize, String, i32)],
) -> Expect {
    if !ASSIGNORS.contains(&protocol_name) {
        return Expect::Error(|e| matches!(e, CoordinatorError::UnknownProtocol(_)), "unknown protocol".into());
    }
    let Some(group) = group else {
        return Expect::Error(
            |e| matches!(e, CoordinatorError::Leader(LeaderError::Subscription { .. })),
            "undecodable subscription".into(),
        );
    };
    if protocol_name != "chaos" {
        // The built-ins refuse only a member id listed twice here (their other limits, 2^32
        // members or partitions, are far beyond this input).
        let mut ids: Vec<&str> = group.iter().map(|m| m.member_id.as_str()).collect();
        ids.sort_unstable();
        return if ids.windows(2).any(|w| w[0] == w[1]) {
            Expect::Error(
                |e| matches!(e, CoordinatorError::Leader(LeaderError::Assign(AssignError::DuplicateMemberId(_)))),
                "a member id listed twice".into(),
            )
        } else {
            Expect::Sync(None)
        };
    }
    // `chaos`: the leader keeps what its metadata has (and, cooperative, a claimed partition of
    // a topic it does not know for its claimer), validates, then withholds what others claim.
    let claimed = claims(group, cooperative, "chaos");
    let mut filtered: BTreeMap<String, Set> = group.iter().map(|m| (m.member_id.clone(), Set::new())).collect();
    for (m, list) in chaos_plan(plan, group) {
        let keep = list.into_iter().filter(|(t, p)| match metadata.topics.get(t) {
            Some(info) => *p >= 0 && *p < info.partitions,
            None => cooperative && *p >= 0 && claimed.listed.contains(&(m.clone(), t.clone(), *p)),
        });
        filtered.get_mut(&m).unwrap().extend(keep);
    }
    if cooperative {
        let (mut added, mut revoked) = (Set::new(), Set::new());
        for m in group {
            let owned = partition_set(&m.subscription.owned_partitions);
            added.extend(filtered[&m.member_id].difference(&owned).cloned());
            revoked.extend(owned.difference(&filtered[&m.member_id]).cloned());
        }
        if added.intersection(&revoked).next().is_some() {
            return Expect::Error(
                |e| matches!(e, CoordinatorError::Leader(LeaderError::Assign(AssignError::CooperativeViolation(_)))),
                "chaos moved a partition in one round".into(),
            );
        }
    }
    for (m, set) in filtered.iter_mut() {
        set.retain(|(t, p)| !claimed.owning.iter().any(|(o, ct, cp)| o != m && ct == t && cp == p));
    }
    Expect::Sync(Some(filtered))
}

/// The SyncGroup's assignments: one per member, nothing the leader's rules forbid, and for
/// `chaos` (`want`) exactly the filtered plan.
fn check_sync(
    metadata: &ClusterMetadata,
    cooperative: bool,
    protocol_name: &str,
    group: &[GroupMember],
    assignments: &[SyncGroupAssignment],
    want: Option<&BTreeMap<String, Set>>,
) {
    let ids: BTreeSet<&str> = group.iter().map(|m| m.member_id.as_str()).collect();
    let got_ids: Vec<&str> = assignments.iter().map(|a| a.member_id.as_str()).collect();
    assert_eq!(got_ids.iter().copied().collect::<BTreeSet<_>>(), ids, "one assignment per member");
    assert_eq!(got_ids.len(), ids.len(), "one assignment per member: {got_ids:?}");
    let claimed = claims(group, cooperative, protocol_name);
    let mut got: BTreeMap<String, Set> = BTreeMap::new();
    let mut everything = Set::new();
    for a in assignments {
        let view = AssignmentView::decode(&a.assignment).expect("the leader's assignment decodes");
        let groups = view.to_owned().assigned_partitions;
        let n: usize = groups.iter().map(|g| g.partitions.len()).sum();
        let set = partition_set(&groups);
        if want.is_none() {
            // A built-in assignor: no partition twice.
            assert_eq!(n, set.len(), "{} given a partition twice: {groups:?}", a.member_id);
            for tp in &set {
                assert!(everything.insert(tp.clone()), "{tp:?} given to two members");
            }
        }
        for (t, p) in &set {
            match metadata.topics.get(t) {
                Some(info) => assert!(*p >= 0 && *p < info.partitions, "{} given nonexistent {t}-{p}", a.member_id),
                None => {
                    // KIP-429 step 2.6.
                    assert!(cooperative, "{} given {t}-{p} of a topic the leader does not know (eager)", a.member_id);
                    assert!(*p >= 0, "{} given negative {t}-{p}", a.member_id);
                    assert!(
                        claimed.listed.contains(&(a.member_id.clone(), t.clone(), *p)),
                        "{} given unclaimed {t}-{p} of a topic the leader does not know",
                        a.member_id
                    );
                }
            }
            for (o, ct, cp) in &claimed.owning {
                assert!(
                    !(o != &a.member_id && ct == t && cp == p),
                    "{t}-{p} claimed by {o} and given to {} in the same round",
                    a.member_id
                );
            }
        }
        got.insert(a.member_id.clone(), set);
    }
    if let Some(want) = want {
        assert_eq!(&got, want, "chaos: what the leader sent differs from the filtered plan");
    }
}
