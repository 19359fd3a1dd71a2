//! Is this client's group protocol right? Judge embedded payloads and a group's
//! JoinGroup/SyncGroup exchanges against rules with stable names (feature `conform`).
//!
//! Two entry points:
//! - [`judge_subscription`] / [`judge_assignment`]: one payload, rule `payload.strict` (what
//!   Java's reader, a strict broker converting the group to KIP-848, and a lenient peer each
//!   make of the bytes).
//! - [`Checker`]: the messages of a capture in time order (as [`GroupReader`](crate::pcap::GroupReader)
//!   yields them, or built by hand through [`Checker::join_request`] and its siblings), judged
//!   per group and per member; [`Checker::finish`] gives the [`Report`].
//!
//! A rule that the messages seen cannot judge (a member whose join or sync was not captured, a
//! leader's round without its JoinGroup response) is [`Outcome::Unknown`], never a failure.
//! Memory grows with the groups and members seen, never with the length of the capture.
//!
//! ```
//! use kafka_consumer_protocol::conform::{judge_subscription, Outcome};
//! // kafka-go's subscription: version 1 declared, but the body ends after the v0 fields.
//! let bytes = [0, 1, 0, 0, 0, 1, 0, 1, b't', 0, 0, 0, 0];
//! let rule = judge_subscription(&bytes);
//! assert_eq!(rule.rule, "payload.strict");
//! assert_eq!(rule.result, Outcome::Fail);
//! ```

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::SocketAddr;
use std::time::Duration;

use crate::assignor::{ClusterMetadata, GroupMember};
use crate::group_api::{ErrorCode, JoinGroupMember, JoinGroupRequest, SyncGroupAssignment, SyncGroupRequest};
use crate::pcap::{GroupBody, GroupMessage, MessageDirection, Payload};
use crate::{
    AssignmentBuf, AssignmentView, DecodeOptions, PartitionSet, StickyUserData, StickyUserDataFormat, SubscriptionBuf,
    SubscriptionView,
};

#[cfg(test)]
mod tests;

/// The stable rule names, in report order.
pub const RULES: [&str; 13] = [
    "payload.strict",
    "protocol.names",
    "cooperative.owned",
    "cooperative.generation",
    "cooperative.revoke",
    "eager.claims",
    "leader.assignment",
    "userdata",
    "static.instance",
    "rack",
    "timeouts",
    "consumer.assignment",
    "consumer.epoch",
];

/// The rules judged per group: whether the members share a protocol, and the leader's answer.
pub const GROUP_RULES: [&str; 2] = ["protocol.names", "leader.assignment"];

/// The rules judged per member: every rule but `leader.assignment` (`protocol.names` is judged
/// both per member, for its names, and per group).
pub const MEMBER_RULES: [&str; 10] = [
    "payload.strict",
    "protocol.names",
    "cooperative.owned",
    "cooperative.generation",
    "cooperative.revoke",
    "eager.claims",
    "userdata",
    "static.instance",
    "rack",
    "timeouts",
];

/// The rules judged only on members of a KIP-848 group (`group.protocol=consumer`, described by
/// ConsumerGroupDescribe), reported after [`MEMBER_RULES`] for those members.
pub const CONSUMER_MEMBER_RULES: [&str; 2] = ["consumer.assignment", "consumer.epoch"];

/// The server-side assignors Kafka ships (`group.consumer.assignors`).
pub const KAFKA_SERVER_ASSIGNORS: [&str; 2] = ["uniform", "range"];

/// The strategy names Java and librdkafka give their assignors.
pub const JAVA_NAMES: [&str; 4] = ["range", "roundrobin", "sticky", "cooperative-sticky"];

/// The broker's default session timeout bounds (`group.min.session.timeout.ms`,
/// `group.max.session.timeout.ms`).
pub const SESSION_TIMEOUT_BOUNDS_MS: (i32, i32) = (6_000, 1_800_000);

/// A member's rebalance timeout when none of its JoinGroup requests was captured: none is
/// assumed (`cooperative.revoke` then judges no delay), this names Java's default for the text.
const JAVA_DEFAULT_REBALANCE_TIMEOUT_MS: i32 = 300_000;
/// `(host, client id)` pairs remembered per group to follow static members across restarts.
const MAX_CLIENTS: usize = 10_000;

/// At most this many pieces of evidence are kept per rule (the counts are kept whole).
const MAX_EVIDENCE: usize = 5;
/// JoinGroup requests remembered while waiting for their responses.
const MAX_PENDING: usize = 65_536;

/// A rule's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    /// Judged and right.
    Pass,
    /// What was captured cannot judge it.
    Unknown,
    /// Judged and wrong.
    Fail,
}

impl Outcome {
    /// `"pass"`, `"fail"` or `"unknown"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail => "fail",
            Outcome::Unknown => "unknown",
        }
    }
}

/// One rule's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleResult {
    /// The stable rule name (one of [`RULES`]).
    pub rule: &'static str,
    /// The verdict.
    pub result: Outcome,
    /// What was seen: frame time, member, client id, generation.
    pub evidence: String,
    /// What a failure breaks (empty when the rule passes).
    pub consequence: String,
}

/// Where and from whom a message came, for the evidence.
#[derive(Debug, Clone, Default)]
pub struct Seen {
    /// Capture time since the Unix epoch.
    pub time: Duration,
    /// The client id of the request header.
    pub client_id: Option<String>,
}

impl Seen {
    fn at(&self) -> String {
        format!("t={}.{:06}s", self.time.as_secs(), self.time.subsec_micros())
    }
}

fn consequence(rule: &str) -> &'static str {
    match rule {
        "payload.strict" => {
            "a broker converting the group to KIP-848 (Kafka 4.x, KAFKA-20662) refuses the join with \
             INCONSISTENT_GROUP_PROTOCOL; Java peers fail to read it (SchemaException) unless they repair it"
        }
        "protocol.names" => {
            "members of other clients share no protocol with it: the broker refuses the join with \
             INCONSISTENT_GROUP_PROTOCOL, so mixed groups and client migrations fail"
        }
        "cooperative.owned" => {
            "the leader's cooperative-sticky assignor trusts the claim: a partition claimed but not held can be \
             consumed twice or left unconsumed, and the KIP-848 conversion takes the claims as the assignment"
        }
        "cooperative.generation" => {
            "Java's leader discards or prefers claims by generation: a wrong generation makes it drop the \
             member's partitions (extra movement) or keep stale ones (double ownership)"
        }
        "cooperative.revoke" => {
            "the partitions it revoked stay unassigned until another rebalance (nobody consumes them), or, \
             claimed again, the leader keeps them from their new owner for another round"
        }
        "eager.claims" => {
            "an eager member has revoked everything before it joins: claims make a cooperative leader keep \
             partitions away from others for a round (Java's leader treats them as still owned)"
        }
        "leader.assignment" => {
            "partitions consumed twice, by a member that does not subscribe, or left unconsumed; cooperative: \
             two members own a partition at once"
        }
        "userdata" => {
            "Java's sticky leader cannot read the member's history (it assumes no previous partitions); an \
             assignment userData blocks the classic-to-consumer upgrade (KAFKA-18134)"
        }
        "static.instance" => {
            "two processes sharing an instance id fence each other in turn (FENCED_INSTANCE_ID): each \
             loses its partitions and rejoins, so neither consumes steadily; an instance id that changes \
             across restarts makes every restart a rebalance"
        }
        "rack" => "rack-aware assignment moves partitions whenever the rack changes",
        "timeouts" => "the broker refuses the join (INVALID_SESSION_TIMEOUT)",
        "consumer.assignment" => {
            "the member consumes partitions of topics it does not subscribe to (or the coordinator's target \
             gives it some): records it did not ask for are processed, and their subscribers miss them"
        }
        "consumer.epoch" => {
            "a member that does not reach its target assignment holds the partitions others wait for: the \
             group stays Reconciling and those partitions are not consumed"
        }
        _ => "",
    }
}

/// Accumulates one rule's observations.
#[derive(Debug, Clone, Default)]
struct Tally {
    passes: u64,
    fails: u64,
    unknowns: u64,
    fail_evidence: Vec<String>,
    other_evidence: Vec<String>,
}

impl Tally {
    // The evidence is built only when it is kept: a long capture makes millions of observations
    // and keeps a handful.
    fn pass(&mut self, evidence: impl FnOnce() -> String) {
        self.passes += 1;
        if self.other_evidence.len() < MAX_EVIDENCE && self.passes == 1 {
            self.other_evidence.push(evidence());
        }
    }
    fn fail(&mut self, evidence: impl FnOnce() -> String) {
        self.fails += 1;
        if self.fail_evidence.len() < MAX_EVIDENCE {
            self.fail_evidence.push(evidence());
        }
    }
    fn unknown(&mut self, evidence: impl FnOnce() -> String) {
        self.unknowns += 1;
        if self.other_evidence.len() < MAX_EVIDENCE {
            self.other_evidence.push(evidence());
        }
    }
    fn result(&self, rule: &'static str) -> RuleResult {
        let (result, mut evidence) = if self.fails > 0 {
            (Outcome::Fail, self.fail_evidence.join("; "))
        } else if self.passes > 0 {
            (Outcome::Pass, self.other_evidence.join("; "))
        } else if self.unknowns > 0 {
            (Outcome::Unknown, self.other_evidence.join("; "))
        } else {
            (Outcome::Unknown, "nothing captured that this rule judges".to_owned())
        };
        if self.fails > self.fail_evidence.len() as u64 {
            evidence.push_str(&format!(" (and {} more)", self.fails - self.fail_evidence.len() as u64));
        }
        if result == Outcome::Pass && self.unknowns > 0 {
            evidence.push_str(&format!(" ({} observations could not be judged)", self.unknowns));
        }
        RuleResult {
            rule,
            result,
            evidence,
            consequence: if result == Outcome::Fail { consequence(rule).to_owned() } else { String::new() },
        }
    }
}

/// Judges one Subscription's bytes (rule `payload.strict`): fails when Java's reader refuses
/// it, saying what a lenient peer makes of it; passes otherwise, naming trailing bytes.
pub fn judge_subscription(bytes: &[u8]) -> RuleResult {
    let mut tally = Tally::default();
    judge_payload_into(&mut tally, bytes, true, String::new);
    tally.result("payload.strict")
}

/// Judges one Assignment's bytes (rule `payload.strict`), as [`judge_subscription`].
pub fn judge_assignment(bytes: &[u8]) -> RuleResult {
    let mut tally = Tally::default();
    judge_payload_into(&mut tally, bytes, false, String::new);
    tally.result("payload.strict")
}

/// `payload.strict` of a payload the capture reader already decoded: its version and trailing
/// bytes when Java's reader takes it as the reader did (no lenient repair), so it is not decoded
/// again; `None` otherwise.
fn java_reading(payload: &Payload) -> Option<(i16, usize)> {
    match payload {
        Payload::Subscription(s) => {
            let v = s.view();
            v.repair().is_none().then(|| (v.version(), v.trailing_bytes()))
        }
        Payload::Assignment(a) => {
            let v = a.view();
            v.repair().is_none().then(|| (v.version(), v.trailing_bytes()))
        }
        _ => None,
    }
}

/// `payload.strict` of one decoded payload (see [`java_reading`]), else of its bytes.
fn judge_received_into(tally: &mut Tally, payload: &Payload, subscription: bool, context: impl FnOnce() -> String) {
    match (java_reading(payload), payload) {
        (Some(reading), _) => judge_payload_reading(tally, Ok(reading), &[], subscription, context),
        (None, Payload::Subscription(_) | Payload::Assignment(_)) => {
            judge_payload_into(tally, &payload.bytes(), subscription, context)
        }
        (None, Payload::Invalid { bytes, .. }) => judge_payload_into(tally, bytes, subscription, context),
        (None, Payload::Raw(_) | Payload::Empty) => {}
    }
}

fn judge_payload_into(tally: &mut Tally, bytes: &[u8], subscription: bool, context: impl FnOnce() -> String) {
    let java = if subscription {
        SubscriptionView::decode(bytes).map(|v| (v.version(), v.trailing_bytes()))
    } else {
        AssignmentView::decode(bytes).map(|v| (v.version(), v.trailing_bytes()))
    };
    judge_payload_reading(tally, java, bytes, subscription, context)
}

/// `payload.strict` from Java's reading of the bytes (its version and trailing bytes, or its
/// error); `bytes` are read leniently only on an error.
fn judge_payload_reading(
    tally: &mut Tally,
    java: Result<(i16, usize), crate::DecodeError>,
    bytes: &[u8],
    subscription: bool,
    context: impl FnOnce() -> String,
) {
    let what = if subscription { "subscription" } else { "assignment" };
    let prefix = move || {
        let context = context();
        if context.is_empty() {
            context
        } else {
            format!("{context}: ")
        }
    };
    match java {
        Ok((version, 0)) => tally.pass(|| format!("{}{what} v{version} decodes with Java's reader", prefix())),
        Ok((version, trailing)) => tally.pass(|| {
            format!(
                "{}{what} v{version} decodes with Java's reader, which ignores its {trailing} trailing bytes \
             (so does the KIP-848 conversion)",
                prefix()
            )
        }),
        Err(error) => {
            let lenient = DecodeOptions::new().lenient(true);
            let peer = if subscription {
                SubscriptionView::decode_with(bytes, lenient).ok().and_then(|v| v.repair())
            } else {
                AssignmentView::decode_with(bytes, lenient).ok().and_then(|v| v.repair())
            };
            let peer = match peer {
                Some(repair) => format!("a lenient peer (Sarama, franz-go) reads it: {repair}"),
                None => "no lenient peer reads it either".to_owned(),
            };
            tally.fail(|| {
                format!(
                    "{}{what} refused by Java's reader ({error}); a strict broker (KIP-848 conversion) refuses \
                 it; {peer}",
                    prefix()
                )
            });
        }
    }
}

/// What the leader's JoinGroup response said about one member.
#[derive(Debug, Clone)]
struct RoundMember {
    instance: Option<String>,
    topics: BTreeSet<String>,
    owned: PartitionSet,
    generation: i32,
    /// The subscription as received (shares the frame's bytes; decoded once).
    subscription: Option<SubscriptionBuf>,
}

impl RoundMember {
    /// A member of the round as its subscription (in the leader's JoinGroup response, or a
    /// described group's member metadata) shows it.
    fn joined(subscription: &SubscriptionBuf, instance: Option<String>) -> Self {
        let view = subscription.view();
        RoundMember {
            instance,
            topics: view.topics().iter().map(str::to_owned).collect(),
            owned: PartitionSet::from_list(view.owned_partitions()),
            generation: view.generation_id(),
            subscription: Some(subscription.clone()),
        }
    }
}

/// The leader's view of one round (its JoinGroup response).
#[derive(Debug, Clone)]
struct Round {
    protocol: Option<String>,
    leader: String,
    members: BTreeMap<String, Option<RoundMember>>,
}

#[derive(Debug, Clone, Default)]
struct MemberState {
    client_id: Option<String>,
    joined: bool,
    offered: Vec<String>,
    instance: Option<Option<String>>,
    rack: Option<Option<String>>,
    /// The generation and partitions of the last successful SyncGroup.
    synced: Option<(i32, PartitionSet)>,
    /// Whether its offered protocols run cooperative (`None`: custom names, cannot tell).
    cooperative: Option<bool>,
    /// The partitions its latest cooperative JoinGroup claimed (taken by the next SyncGroup).
    claims: Option<PartitionSet>,
    /// The rebalance timeout of its latest JoinGroup.
    rebalance_timeout_ms: Option<i32>,
    /// A revocation whose rejoin is still awaited.
    revocation: Option<Revocation>,
    rules: BTreeMap<&'static str, Tally>,
}

/// A SyncGroup response that took partitions away from a cooperative member: it must stop
/// claiming them and rejoin at once (KIP-429).
#[derive(Debug, Clone)]
struct Revocation {
    seen: Seen,
    generation: i32,
    revoked: PartitionSet,
    /// The member's rebalance timeout (`max.poll.interval.ms` in Java and librdkafka): Java
    /// rejoins on the first poll after `onPartitionsRevoked`, and a poll comes within it.
    bound_ms: Option<i32>,
}

impl MemberState {
    fn tally(&mut self, rule: &'static str) -> &mut Tally {
        self.rules.entry(rule).or_default()
    }
}

#[derive(Debug, Clone, Default)]
struct GroupState {
    members: BTreeMap<String, MemberState>,
    rounds: BTreeMap<i32, Round>,
    rules: BTreeMap<&'static str, Tally>,
    /// The latest first join (no member id) of each client id: a member that lost its id.
    fresh_joins: BTreeMap<Option<String>, Duration>,
    /// Each static instance id's connections: the last one and the one before it.
    instance_connections: BTreeMap<String, (SocketAddr, Option<SocketAddr>)>,
    /// The instance id each `(client host, client id)` last joined with.
    client_instances: BTreeMap<(std::net::IpAddr, String), Option<String>>,
    /// Described by ConsumerGroupDescribe: a KIP-848 group (its members carry
    /// [`CONSUMER_MEMBER_RULES`] too).
    consumer_protocol: bool,
}

/// A JoinGroup request waiting for its response (its member id may be empty).
#[derive(Debug, Clone)]
struct PendingJoin {
    seen: Seen,
    session_timeout_ms: i32,
    protocols: Vec<String>,
}

/// A group's rule results and its members'.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupReport {
    /// The group id.
    pub group_id: String,
    /// `classic` (JoinGroup/SyncGroup, a capture or DescribeGroups) or `consumer` (a KIP-848 group
    /// described by ConsumerGroupDescribe).
    pub group_protocol: &'static str,
    /// The group-level rules ([`GROUP_RULES`]).
    pub rules: Vec<RuleResult>,
    /// The members, by member id.
    pub members: Vec<MemberReport>,
}

/// One member's rule results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberReport {
    /// The member id.
    pub member_id: String,
    /// The client id of its requests, when seen.
    pub client_id: Option<String>,
    /// The member-level rules ([`MEMBER_RULES`], then, in a KIP-848 group,
    /// [`CONSUMER_MEMBER_RULES`]).
    pub rules: Vec<RuleResult>,
}

/// The whole report.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Report {
    /// The groups, by group id.
    pub groups: Vec<GroupReport>,
}

impl Report {
    /// Whether any rule failed.
    pub fn has_failure(&self) -> bool {
        self.groups
            .iter()
            .any(|g| g.rules.iter().chain(g.members.iter().flat_map(|m| &m.rules)).any(|r| r.result == Outcome::Fail))
    }
}

/// Judges the group messages of a capture, in time order. See the module doc.
#[derive(Debug, Default)]
pub struct Checker {
    groups: BTreeMap<String, GroupState>,
    pending: HashMap<(SocketAddr, SocketAddr, i32), PendingJoin>,
    metadata: Option<ClusterMetadata>,
    /// Topics whose counts were given ([`Checker::with_metadata`]): learned counts do not replace them.
    given: BTreeSet<String>,
    /// The latest time seen: how far the capture goes.
    latest: Duration,
}

fn evidence(seen: &Seen, member: &str, generation: Option<i32>, what: &str) -> String {
    let client = seen.client_id.as_deref().unwrap_or("?");
    let member = if member.is_empty() { "(new member)" } else { member };
    match generation {
        Some(g) => format!("{} member {member} client {client} generation {g}: {what}", seen.at()),
        None => format!("{} member {member} client {client}: {what}", seen.at()),
    }
}

fn list(set: impl IntoIterator<Item = (String, i32)>) -> String {
    let items: Vec<String> = set.into_iter().map(|(t, p)| format!("{t}-{p}")).collect();
    if items.is_empty() {
        "nothing".into()
    } else {
        items.join(",")
    }
}

fn is_cooperative(offered: &[String]) -> Option<bool> {
    // Java and librdkafka use the cooperative protocol only when every configured assignor
    // supports it; a list with any eager-only built-in runs eager.
    if offered.iter().any(|n| matches!(n.as_str(), "range" | "roundrobin" | "sticky")) {
        Some(false)
    } else if !offered.is_empty() && offered.iter().all(|n| n == "cooperative-sticky") {
        Some(true)
    } else {
        None
    }
}

impl Checker {
    /// A checker with no knowledge of the topics' partition counts.
    pub fn new() -> Self {
        Self::default()
    }

    /// A checker that knows the topics' partition counts, so `leader.assignment` also checks
    /// that every subscribed partition is assigned, Java's answer (range, roundrobin) and
    /// balance (sticky, cooperative-sticky). Counts given here win over learned ones.
    pub fn with_metadata(metadata: ClusterMetadata) -> Self {
        let given = metadata.topics.keys().cloned().collect();
        Checker { metadata: Some(metadata), given, ..Self::default() }
    }

    /// Learns a topic's partition count (from a captured Metadata response: see
    /// [`GroupReader::partition_counts`](crate::pcap::GroupReader::partition_counts)), unless
    /// it was given to [`Checker::with_metadata`]. Rules that need counts judge only rounds
    /// whose every subscribed topic has one; the others are `unknown`.
    ///
    /// ```
    /// use kafka_consumer_protocol::conform::Checker;
    /// let mut checker = Checker::new();
    /// checker.learn_partition_count("orders", 12);
    /// assert!(checker.finish().groups.is_empty());
    /// ```
    pub fn learn_partition_count(&mut self, topic: &str, partitions: i32) {
        if partitions < 1 || self.given.contains(topic) {
            return;
        }
        let metadata = self.metadata.get_or_insert_with(ClusterMetadata::default);
        let info = metadata.topics.entry(topic.to_owned()).or_default();
        if info.partitions != partitions {
            info.partitions = partitions;
            info.partition_racks.clear();
        }
    }

    /// Judges a whole capture: every group message in order, with the partition counts its
    /// Metadata responses give (and `metadata`'s, which win). `kcp conform --pcap` runs this.
    ///
    /// ```
    /// use kafka_consumer_protocol::conform::Checker;
    /// use kafka_consumer_protocol::pcap::{GroupReader, ReaderOptions};
    /// let bytes = std::fs::read("testdata/pcap/java-cooperative-sticky.pcap").unwrap();
    /// let mut reader = GroupReader::new(&bytes[..], ReaderOptions::default()).unwrap();
    /// let report = Checker::new().check_capture(&mut reader);
    /// assert!(!report.has_failure());
    /// ```
    pub fn check_capture(mut self, reader: &mut crate::pcap::GroupReader<'_>) -> Report {
        let mut updates = 0;
        while let Some(mut message) = reader.next() {
            if reader.partition_count_updates() != updates {
                updates = reader.partition_count_updates();
                for (topic, &n) in reader.partition_counts() {
                    self.learn_partition_count(topic, n);
                }
            }
            // The message is ours: its client id moves into the evidence's context, uncopied.
            let seen = Seen { time: message.timestamp, client_id: message.frame.client_id.take() };
            self.observe_seen(seen, &message);
        }
        self.finish()
    }

    /// Feeds one captured message.
    pub fn observe(&mut self, message: &GroupMessage) {
        let seen = Seen { time: message.timestamp, client_id: message.frame.client_id.clone() };
        self.observe_seen(seen, message)
    }

    /// [`Checker::observe`] with the message's time and client id in `seen` (its frame's
    /// `client_id` is not read).
    fn observe_seen(&mut self, seen: Seen, message: &GroupMessage) {
        let f = &message.frame;
        self.latest = self.latest.max(message.timestamp);
        match (&f.body, f.direction) {
            (GroupBody::JoinGroupRequest(b), _) => {
                if self.pending.len() >= MAX_PENDING {
                    self.pending.clear();
                }
                self.pending.insert(
                    (message.src, message.dst, f.correlation_id),
                    PendingJoin {
                        seen: seen.clone(),
                        session_timeout_ms: b.session_timeout_ms,
                        protocols: b.protocols.iter().map(|p| p.name.clone()).collect(),
                    },
                );
                self.join_request_from(&seen, Some(message.src), b);
            }
            (GroupBody::JoinGroupResponse(b), _) => {
                let pending = self.pending.remove(&(message.dst, message.src, f.correlation_id));
                let members: Vec<JoinGroupMember<Payload>> = b.members().collect();
                self.join_response(
                    &seen,
                    &b.group_id,
                    &b.member_id,
                    b.error,
                    b.generation_id,
                    b.protocol_name.as_deref(),
                    &b.leader,
                    pending.as_ref().map(|p| (p.session_timeout_ms, p.protocols.as_slice(), &p.seen)),
                    &members,
                );
            }
            (GroupBody::SyncGroupRequest(b), _) => self.sync_request(&seen, b),
            (GroupBody::SyncGroupResponse(b), MessageDirection::Response | MessageDirection::Request) => self
                .sync_response(
                    &seen,
                    &b.group_id,
                    &b.member_id,
                    b.generation_id,
                    b.response.error,
                    &b.response.assignment,
                ),
        }
    }

    /// A JoinGroup request (its member id is empty on a first join).
    pub fn join_request(&mut self, seen: &Seen, request: &JoinGroupRequest<Payload>) {
        self.join_request_from(seen, None, request)
    }

    /// A JoinGroup request sent from `from` (the client's address and port): with it,
    /// `static.instance` also follows an instance id across restarts (a new member id from the
    /// same host and client id) and finds two live processes sharing one instance id.
    pub fn join_request_from(&mut self, seen: &Seen, from: Option<SocketAddr>, request: &JoinGroupRequest<Payload>) {
        self.latest = self.latest.max(seen.time);
        let group = entry_of(&mut self.groups, &request.group_id);
        if request.member_id.is_empty() {
            group.fresh_joins.insert(seen.client_id.clone(), seen.time);
        }
        let fresh = request.member_id.is_empty();
        let mut scratch = MemberState::default();
        let member: &mut MemberState =
            if fresh { &mut scratch } else { entry_of(&mut group.members, &request.member_id) };
        member.joined = true;
        if seen.client_id.is_some() {
            member.client_id = seen.client_id.clone();
        }
        member.offered = request.protocols.iter().map(|p| p.name.clone()).collect();
        let id = request.member_id.as_str();
        // protocol.names
        for p in &request.protocols {
            let name = p.name.as_str();
            if JAVA_NAMES.contains(&name) {
                member.tally("protocol.names").pass(|| evidence(seen, id, None, &format!("offers {name:?}")));
            } else if let Some(java) = java_name_for(name) {
                member.tally("protocol.names").fail(|| {
                    evidence(
                        seen,
                        id,
                        None,
                        &format!("offers {name:?} for the assignor Java and librdkafka call {java:?}"),
                    )
                });
            } else {
                member.tally("protocol.names").unknown(|| {
                    evidence(
                        seen,
                        id,
                        None,
                        &format!("offers the custom protocol {name:?} (no Java counterpart to compare with)"),
                    )
                });
            }
        }
        // payload.strict, userdata, claims, generation, rack: from each subscription.
        let cooperative = is_cooperative(&member.offered);
        member.cooperative = cooperative;
        member.claims = None;
        let offered = member.offered.clone();
        let mut judged_claims = false;
        for p in &request.protocols {
            let context = || evidence(seen, id, None, &format!("protocol {:?}", p.name));
            match &p.metadata {
                Payload::Subscription(_) | Payload::Invalid { .. } => {
                    judge_received_into(member.tally("payload.strict"), &p.metadata, true, context)
                }
                Payload::Raw(_) | Payload::Empty | Payload::Assignment(_) => continue,
            }
            let Some(sub) = p.metadata.subscription() else { continue };
            let view = sub.view();
            judge_user_data(member, seen, id, &p.name, view.user_data());
            let rack = view.rack_id().map(str::to_owned);
            // A rack as a person reads it: its name, or "none".
            let shown = |r: &Option<String>| r.as_deref().map_or_else(|| "none".to_owned(), |r| format!("\"{r}\""));
            match member.rack.clone() {
                Some(before) if before != rack && view.version() >= 3 => member.tally("rack").fail(|| {
                    evidence(seen, id, None, &format!("rack changed from {} to {}", shown(&before), shown(&rack)))
                }),
                _ if view.version() >= 3 => {
                    member.rack = Some(rack.clone());
                    member.tally("rack").pass(|| evidence(seen, id, None, &format!("rack {}", shown(&rack))));
                }
                _ => {}
            }
            if judged_claims {
                continue;
            }
            judged_claims = true;
            let claimed = PartitionSet::from_list(view.owned_partitions());
            let generation = view.generation_id();
            let version = view.version();
            match cooperative {
                Some(false) => {
                    if claimed.is_empty() {
                        member
                            .tally("eager.claims")
                            .pass(|| evidence(seen, id, None, "an eager member claims nothing"));
                    } else {
                        member.tally("eager.claims").fail(|| {
                            evidence(
                                seen,
                                id,
                                None,
                                &format!(
                                    "offers only eager-capable protocols {:?} yet claims {}",
                                    offered,
                                    list(claimed.iter().map(|(t, p)| (t.to_owned(), p)))
                                ),
                            )
                        });
                    }
                }
                Some(true) => {
                    judge_cooperative(member, seen, id, version, generation, &claimed, fresh);
                    if version >= 1 {
                        member.claims = Some(claimed);
                    }
                }
                None => member.tally("eager.claims").unknown(|| {
                    evidence(
                        seen,
                        id,
                        None,
                        &format!("custom protocols {offered:?}: eager or cooperative cannot be told"),
                    )
                }),
            }
        }
        // cooperative.revoke: the rejoin after a revocation.
        if let Some(revocation) = member.revocation.take() {
            let claims = if member.cooperative == Some(true) { member.claims.clone() } else { None };
            judge_rejoin(member, &revocation, seen, id, claims.as_ref(), true);
        }
        member.rebalance_timeout_ms = Some(request.rebalance_timeout_ms);
        // static.instance
        if let (Some(instance), Some(from)) = (&request.group_instance_id, from) {
            match group.instance_connections.get(instance).copied() {
                Some((last, Some(before))) if last != from && before == from => {
                    member.tally("static.instance").fail(|| {
                        evidence(
                            seen,
                            id,
                            None,
                            &format!(
                                "instance {instance:?} joins from {from} again after {last} joined with it: two live \
                             processes share the instance id and fence each other in turn"
                            ),
                        )
                    })
                }
                _ => {}
            }
            let entry = group.instance_connections.entry(instance.clone()).or_insert((from, None));
            if entry.0 != from {
                *entry = (from, Some(entry.0));
            }
        }
        if let (true, Some(from), Some(client)) = (fresh, from, seen.client_id.as_ref()) {
            let key = (from.ip(), client.clone());
            let instance = request.group_instance_id.clone();
            match group.client_instances.get(&key) {
                Some(Some(before)) if Some(before) == instance.as_ref() => member.tally("static.instance").pass(|| {
                    evidence(seen, id, None, &format!("rejoins with a new member id and keeps instance {before:?}"))
                }),
                Some(before) if before.is_some() || instance.is_some() => {
                    member.tally("static.instance").unknown(|| {
                        evidence(
                            seen,
                            id,
                            None,
                            &format!(
                                "joins anew from host {} with instance {instance:?} where the last join of this host \
                             and client id used {before:?}: a restart that changed its instance id, or another \
                             consumer sharing the client id",
                                from.ip()
                            ),
                        )
                    })
                }
                _ => {}
            }
            if group.client_instances.len() < MAX_CLIENTS || group.client_instances.contains_key(&key) {
                group.client_instances.insert(key, instance);
            }
        }
        if !fresh {
            let instance = request.group_instance_id.clone();
            match member.instance.clone() {
                Some(before) if before != instance => member.tally("static.instance").fail(|| {
                    evidence(
                        seen,
                        id,
                        None,
                        &format!("instance id changed from {before:?} to {instance:?} under the same member id"),
                    )
                }),
                _ => {
                    member.instance = Some(instance.clone());
                    if instance.is_some() {
                        member
                            .tally("static.instance")
                            .pass(|| evidence(seen, id, None, &format!("instance {instance:?}")));
                    }
                }
            }
        }
        if fresh {
            // What a first join said is kept under the member id its response gives.
            group.members.insert(format!("\u{0}fresh:{}", seen.at()), scratch);
        }
    }

    /// A JoinGroup response; `request` is its request's session timeout, offered protocols and
    /// where it was seen, when captured; `members` is the leader's member list (empty for the others).
    #[allow(clippy::too_many_arguments)]
    pub fn join_response(
        &mut self,
        seen: &Seen,
        group_id: &str,
        member_id: &str,
        error: ErrorCode,
        generation: i32,
        protocol: Option<&str>,
        leader: &str,
        request: Option<(i32, &[String], &Seen)>,
        members: &[JoinGroupMember<Payload>],
    ) {
        self.latest = self.latest.max(seen.time);
        let group = entry_of(&mut self.groups, group_id);
        // Fold what a first join said (kept under a placeholder) into the member it became.
        if let Some((_, offered, req_seen)) = request {
            let key = format!("\u{0}fresh:{}", req_seen.at());
            if let Some(fresh) = group.members.remove(&key) {
                if !member_id.is_empty() {
                    let m = group.members.entry(member_id.to_owned()).or_default();
                    m.joined = true;
                    if m.offered.is_empty() {
                        m.offered = offered.to_vec();
                    }
                    if m.client_id.is_none() {
                        m.client_id = req_seen.client_id.clone();
                    }
                    m.cooperative = m.cooperative.or(fresh.cooperative);
                    m.claims = m.claims.take().or(fresh.claims);
                    m.rebalance_timeout_ms = m.rebalance_timeout_ms.or(fresh.rebalance_timeout_ms);
                    for (rule, t) in fresh.rules {
                        let into = m.tally(rule);
                        into.passes += t.passes;
                        into.fails += t.fails;
                        into.unknowns += t.unknowns;
                        for e in t.fail_evidence {
                            if into.fail_evidence.len() < MAX_EVIDENCE {
                                into.fail_evidence.push(e);
                            }
                        }
                        for e in t.other_evidence {
                            if into.other_evidence.len() < MAX_EVIDENCE {
                                into.other_evidence.push(e);
                            }
                        }
                    }
                }
            }
        }
        if member_id.is_empty() {
            return;
        }
        let member = entry_of(&mut group.members, member_id);
        if member.client_id.is_none() {
            member.client_id = seen.client_id.clone();
        }
        if error == ErrorCode::FENCED_INSTANCE_ID {
            member.tally("static.instance").fail(|| {
                evidence(
                    seen,
                    member_id,
                    None,
                    "JoinGroup refused with FENCED_INSTANCE_ID: another process joined with its instance id",
                )
            });
        }
        // timeouts
        if let Some((session, _, _)) = request {
            let (lo, hi) = SESSION_TIMEOUT_BOUNDS_MS;
            if error == ErrorCode::INVALID_SESSION_TIMEOUT {
                member.tally("timeouts").fail(|| {
                    evidence(
                        seen,
                        member_id,
                        None,
                        &format!("session timeout {session} ms refused by the broker (INVALID_SESSION_TIMEOUT)"),
                    )
                });
            } else if error == ErrorCode::NONE {
                let note = if (lo..=hi).contains(&session) {
                    String::new()
                } else {
                    format!(", outside the default bounds {lo}..={hi} ms but accepted by this broker")
                };
                member.tally("timeouts").pass(|| {
                    evidence(seen, member_id, Some(generation), &format!("session timeout {session} ms{note}"))
                });
            }
        }
        if error != ErrorCode::NONE || members.is_empty() {
            return;
        }
        // The leader's response: the round.
        let mut round =
            Round { protocol: protocol.map(str::to_owned), leader: leader.to_owned(), members: BTreeMap::new() };
        for m in members {
            let joined = m.metadata.subscription().map(|s| RoundMember::joined(s, m.group_instance_id.clone()));
            round.members.insert(m.member_id.clone(), joined);
        }
        // cooperative.revoke: a later round shows whether a member that revoked rejoined.
        let awaited: Vec<String> = group
            .members
            .iter()
            .filter(|(_, m)| m.revocation.as_ref().is_some_and(|r| r.generation < generation))
            .map(|(id, _)| id.clone())
            .collect();
        for id in awaited {
            let Some(m) = group.members.get_mut(&id) else { continue };
            let Some(revocation) = m.revocation.take() else { continue };
            match round.members.get(&id) {
                Some(joined) => {
                    let claims = joined.as_ref().map(|j| &j.owned);
                    judge_rejoin(m, &revocation, seen, &id, claims, false);
                }
                None => m.tally("cooperative.revoke").unknown(|| {
                    evidence(
                        seen,
                        &id,
                        Some(generation),
                        &format!(
                            "revoked {} at generation {} and is not in this round: it left or was removed before \
                         rejoining",
                            list_set(&revocation.revoked),
                            revocation.generation
                        ),
                    )
                }),
            }
        }
        // protocol.names across the group: a protocol every member offers.
        let offered: Vec<(&String, &[String])> = round
            .members
            .keys()
            .filter_map(|id| {
                group.members.get(id).filter(|m| !m.offered.is_empty()).map(|m| (id, m.offered.as_slice()))
            })
            .collect();
        if offered.len() == round.members.len() {
            let common: Vec<&String> =
                offered[0].1.iter().filter(|n| offered.iter().all(|(_, o)| o.contains(n))).collect();
            if common.is_empty() {
                group.rules.entry("protocol.names").or_default().fail(|| {
                    evidence(seen, leader, Some(generation), &format!("the members share no protocol: {offered:?}"))
                });
            } else {
                group.rules.entry("protocol.names").or_default().pass(|| {
                    evidence(seen, leader, Some(generation), &format!("{} members share {:?}", offered.len(), common))
                });
            }
        } else {
            group
                .rules
                .entry("protocol.names")
                .or_default()
                .unknown(|| evidence(seen, leader, Some(generation), "the JoinGroup of some members was not captured"));
        }
        group.rounds.insert(generation, round);
        // Only the latest few rounds are needed to judge the leader's SyncGroup.
        while group.rounds.len() > 4 {
            group.rounds.pop_first();
        }
    }

    /// A SyncGroup request; the leader's carries the assignment (rule `leader.assignment`).
    pub fn sync_request(&mut self, seen: &Seen, request: &SyncGroupRequest<Payload>) {
        self.latest = self.latest.max(seen.time);
        let group = entry_of(&mut self.groups, &request.group_id);
        let member = entry_of(&mut group.members, &request.member_id);
        if member.client_id.is_none() {
            member.client_id = seen.client_id.clone();
        }
        if request.assignments.is_empty() {
            return;
        }
        let gen = request.generation_id;
        let leader = request.member_id.as_str();
        for a in &request.assignments {
            match &a.assignment {
                Payload::Assignment(x) => {
                    let ctx = || evidence(seen, leader, Some(gen), &format!("assignment to {}", a.member_id));
                    judge_received_into(member_tally(group, leader, "payload.strict"), &a.assignment, false, ctx);
                    if x.view().user_data().is_some_and(|u| !u.is_empty()) {
                        member_tally(group, leader, "userdata").fail(|| {
                            evidence(
                                seen,
                                leader,
                                Some(gen),
                                &format!(
                                    "the assignment to {} carries userData (a KIP-848 upgrade blocker)",
                                    a.member_id
                                ),
                            )
                        });
                    }
                }
                Payload::Invalid { bytes, .. } => {
                    let ctx = || evidence(seen, leader, Some(gen), &format!("assignment to {}", a.member_id));
                    judge_payload_into(member_tally(group, leader, "payload.strict"), bytes, false, ctx);
                }
                _ => {}
            }
        }
        let tally_ref = group.rules.entry("leader.assignment").or_default();
        let Some(round) = group.rounds.get(&gen) else {
            tally_ref.unknown(|| evidence(seen, leader, Some(gen), "the leader's JoinGroup response was not captured"));
            return;
        };
        if round.leader != leader {
            tally_ref.unknown(|| {
                evidence(seen, leader, Some(gen), "a member other than the round's leader sent assignments")
            });
            return;
        }
        let verdict = judge_round(round, request, self.metadata.as_ref());
        let tally = group.rules.entry("leader.assignment").or_default();
        match verdict {
            Verdict::Pass(what) => tally.pass(|| evidence(seen, leader, Some(gen), &what)),
            Verdict::Fail(what) => tally.fail(|| evidence(seen, leader, Some(gen), &what)),
            Verdict::Unknown(what) => tally.unknown(|| evidence(seen, leader, Some(gen), &what)),
        }
    }

    /// A SyncGroup response: the member's assignment for `generation`.
    pub fn sync_response(
        &mut self,
        seen: &Seen,
        group_id: &str,
        member_id: &str,
        generation: i32,
        error: ErrorCode,
        assignment: &Payload,
    ) {
        self.latest = self.latest.max(seen.time);
        let group = entry_of(&mut self.groups, group_id);
        let member = entry_of(&mut group.members, member_id);
        if member.client_id.is_none() {
            member.client_id = seen.client_id.clone();
        }
        if error == ErrorCode::FENCED_INSTANCE_ID {
            member.tally("static.instance").fail(|| {
                evidence(
                    seen,
                    member_id,
                    Some(generation),
                    "SyncGroup refused with FENCED_INSTANCE_ID: another process joined with its instance id",
                )
            });
        }
        if error != ErrorCode::NONE {
            return;
        }
        let partitions = match assignment {
            Payload::Assignment(a) => PartitionSet::from_list(a.view().assigned_partitions()),
            Payload::Empty => PartitionSet::new(),
            _ => {
                member.synced = None;
                member.claims = None;
                return;
            }
        };
        // cooperative.revoke: what it owned (its claims, else its last assignment) and lost.
        let owned = member.claims.take().or_else(|| member.synced.as_ref().map(|(_, s)| s.clone()));
        if let (Some(true), Some(owned)) = (member.cooperative, owned) {
            let mut revoked = PartitionSet::new();
            for (t, p) in owned.difference(&partitions) {
                revoked.insert(t, p);
            }
            if !revoked.is_empty() {
                member.revocation =
                    Some(Revocation { seen: seen.clone(), generation, revoked, bound_ms: member.rebalance_timeout_ms });
            }
        }
        member.synced = Some((generation, partitions));
    }

    /// A live group as DescribeGroups describes it (`kcp conform --bootstrap-server --group`):
    /// each member's Subscription (the one of its latest JoinGroup) and Assignment (the
    /// leader's, same generation) are judged as a capture's would be (`payload.strict`,
    /// `protocol.names` for the chosen protocol, `eager.claims`, `userdata`, and
    /// `leader.assignment` over all members: the description is one round). What needs the
    /// sequence of requests (`cooperative.owned`, `cooperative.generation`, `cooperative.revoke`,
    /// `rack`, `timeouts`, fencing) is `unknown`; so is everything while the group is not
    /// `Stable` (the broker then sends no payloads).
    ///
    /// ```
    /// use bytes::Bytes;
    /// use kafka_consumer_protocol::conform::{Checker, Outcome, Seen};
    /// use kafka_consumer_protocol::group_api::DescribedGroupMember;
    /// use kafka_consumer_protocol::inspect::ClassicGroup;
    /// use kafka_consumer_protocol::{Assignment, Subscription, TopicPartitions, Version};
    ///
    /// let member = |id: &str, parts: Vec<i32>| DescribedGroupMember {
    ///     member_id: id.into(),
    ///     group_instance_id: None,
    ///     client_id: "c".into(),
    ///     client_host: "/127.0.0.1".into(),
    ///     member_metadata: Bytes::from(Subscription::new(["t"]).encode(Version::V3).unwrap()),
    ///     member_assignment: Bytes::from(
    ///         Assignment::new(vec![TopicPartitions::new("t", parts)]).encode(Version::V3).unwrap(),
    ///     ),
    /// };
    /// let group = ClassicGroup {
    ///     group_id: "g".into(),
    ///     state: "Stable".into(),
    ///     protocol_type: "consumer".into(),
    ///     protocol: "range".into(),
    ///     members: vec![member("m1", vec![0, 1]), member("m2", vec![1])],
    /// };
    /// let mut checker = Checker::new();
    /// checker.described_group(&Seen::default(), &group);
    /// let report = checker.finish();
    /// let leader = report.groups[0].rules.iter().find(|r| r.rule == "leader.assignment").unwrap();
    /// assert_eq!(leader.result, Outcome::Fail); // t-1 given twice
    /// ```
    pub fn described_group(&mut self, seen: &Seen, described: &crate::inspect::ClassicGroup) {
        self.latest = self.latest.max(seen.time);
        let group = self.groups.entry(described.group_id.clone()).or_default();
        let protocol = described.protocol.as_str();
        let stable = described.state == "Stable";
        let consumer = described.protocol_type == "consumer";
        let mut round = Round { protocol: Some(protocol.to_owned()), leader: String::new(), members: BTreeMap::new() };
        let mut assignments = Vec::new();
        for m in &described.members {
            let at = Seen { time: seen.time, client_id: Some(m.client_id.clone()) };
            let id = m.member_id.as_str();
            let member = group.members.entry(m.member_id.clone()).or_default();
            member.client_id = Some(m.client_id.clone());
            member.joined = true;
            for rule in ["cooperative.owned", "cooperative.generation", "cooperative.revoke", "rack", "timeouts"] {
                member.tally(rule).unknown(|| {
                    evidence(
                        &at,
                        id,
                        None,
                        "a live group's description shows one moment: this rule needs the sequence of JoinGroup and \
                     SyncGroup requests (judge a capture)",
                    )
                });
            }
            if let Some(instance) = &m.group_instance_id {
                member.tally("static.instance").unknown(|| {
                    evidence(
                        &at,
                        id,
                        None,
                        &format!(
                            "static member {instance:?}; whether it keeps it across restarts, or shares it with \
                         another process, needs the sequence of joins (judge a capture)"
                        ),
                    )
                });
            }
            if !consumer || !stable || m.member_metadata.is_empty() {
                member.tally("payload.strict").unknown(|| {
                    evidence(
                        &at,
                        id,
                        None,
                        &format!(
                            "group {} with protocol type {:?}: the broker sends consumer payloads only while Stable",
                            described.state, described.protocol_type
                        ),
                    )
                });
                continue;
            }
            if JAVA_NAMES.contains(&protocol) {
                member.tally("protocol.names").pass(|| evidence(&at, id, None, &format!("runs {protocol:?}")));
            } else if let Some(java) = java_name_for(protocol) {
                member.tally("protocol.names").fail(|| {
                    evidence(
                        &at,
                        id,
                        None,
                        &format!("runs {protocol:?} for the assignor Java and librdkafka call {java:?}"),
                    )
                });
            } else {
                member.tally("protocol.names").unknown(|| {
                    evidence(
                        &at,
                        id,
                        None,
                        &format!("runs the custom protocol {protocol:?} (no Java counterpart to compare with)"),
                    )
                });
            }
            let context = || evidence(&at, id, None, &format!("protocol {protocol:?}"));
            judge_payload_into(member.tally("payload.strict"), &m.member_metadata, true, context);
            let context = || evidence(&at, id, None, "its assignment");
            judge_payload_into(member.tally("payload.strict"), &m.member_assignment, false, context);
            let subscription = SubscriptionBuf::decode(m.member_metadata.clone()).ok();
            if let Some(sub) = &subscription {
                let view = sub.view();
                judge_user_data(member, &at, id, protocol, view.user_data());
                let claimed = PartitionSet::from_list(view.owned_partitions());
                if is_cooperative(&[protocol.to_owned()]) == Some(false) {
                    if claimed.is_empty() {
                        member.tally("eager.claims").pass(|| evidence(&at, id, None, "an eager member claims nothing"));
                    } else {
                        member.tally("eager.claims").fail(|| {
                            evidence(
                                &at,
                                id,
                                None,
                                &format!("runs the eager {protocol:?} yet claims {}", list_set(&claimed)),
                            )
                        });
                    }
                }
            }
            let assignment = match AssignmentBuf::decode(m.member_assignment.clone()) {
                Ok(a) => {
                    if a.view().user_data().is_some_and(|u| !u.is_empty()) {
                        member.tally("userdata").fail(|| {
                            evidence(&at, id, None, "its assignment carries userData (a KIP-848 upgrade blocker)")
                        });
                    }
                    Payload::Assignment(a)
                }
                Err(_) => Payload::Raw(m.member_assignment.clone()),
            };
            assignments.push(SyncGroupAssignment { member_id: m.member_id.clone(), assignment });
            let joined = subscription.map(|s| RoundMember::joined(&s, m.group_instance_id.clone()));
            round.members.insert(m.member_id.clone(), joined);
        }
        let at = Seen { time: seen.time, client_id: None };
        if !consumer || !stable || round.members.is_empty() {
            for rule in GROUP_RULES {
                group.rules.entry(rule).or_default().unknown(|| {
                    described_evidence(
                        &at,
                        &format!(
                            "group {} of protocol type {:?}: judged only when Stable",
                            described.state, described.protocol_type
                        ),
                    )
                });
            }
            return;
        }
        group
            .rules
            .entry("protocol.names")
            .or_default()
            .pass(|| described_evidence(&at, &format!("{} members run {protocol:?}", round.members.len())));
        let request = SyncGroupRequest {
            group_id: described.group_id.clone(),
            generation_id: -1,
            member_id: String::new(),
            group_instance_id: None,
            protocol_type: Some(described.protocol_type.clone()),
            protocol_name: Some(protocol.to_owned()),
            assignments,
        };
        let tally = group.rules.entry("leader.assignment").or_default();
        let what = |w: String| format!("the described assignment: {w}");
        match judge_round(&round, &request, self.metadata.as_ref()) {
            Verdict::Pass(w) => tally.pass(|| described_evidence(&at, &what(w))),
            Verdict::Fail(w) => tally.fail(|| described_evidence(&at, &what(w))),
            Verdict::Unknown(w) => tally.unknown(|| described_evidence(&at, &what(w))),
        }
    }

    /// A live KIP-848 group (`group.protocol=consumer`) as ConsumerGroupDescribe describes it
    /// (`kcp conform --bootstrap-server --group`). The coordinator assigns, so what is judged is
    /// what the description shows of its assignment and of each member's reconciliation:
    ///
    /// - `protocol.names` (group): the coordinator's assignor is one Kafka ships (`uniform`,
    ///   `range`); a custom one, or none chosen yet, is `unknown`.
    /// - `leader.assignment` (group): no partition is owned by two members at once (the
    ///   coordinator revokes before it reassigns), none is targeted at two, and, once the target
    ///   is computed for the current group epoch and the topics' partition counts are known,
    ///   every subscribed partition is targeted at someone.
    /// - `consumer.assignment` (member): its target and current partitions are of topics it
    ///   subscribes to (a member subscribing by regular expression is `unknown` for the others).
    /// - `consumer.epoch` (member): its epoch is at most the assignment epoch, which is at most the
    ///   group epoch; it passes once the member is at the assignment epoch and owns its target,
    ///   fails when the group says `Stable` while it is not, and is `unknown` while it reconciles.
    ///
    /// The classic rules are `unknown` for these members: they send no embedded Subscription or
    /// Assignment (a classic member of a mixed group does, but ConsumerGroupDescribe does not
    /// show it: judge a capture).
    ///
    /// ```
    /// use kafka_consumer_protocol::conform::{Checker, Outcome, Seen};
    /// use kafka_consumer_protocol::inspect::{ConsumerGroup, ConsumerMember};
    /// use kafka_consumer_protocol::TopicPartitions;
    ///
    /// let member = |id: &str, parts: Vec<i32>| ConsumerMember {
    ///     member_id: id.into(),
    ///     member_epoch: 3,
    ///     subscribed_topics: vec!["t".into()],
    ///     assignment: vec![TopicPartitions::new("t", parts.clone())],
    ///     target_assignment: vec![TopicPartitions::new("t", parts)],
    ///     ..ConsumerMember::default()
    /// };
    /// let group = ConsumerGroup {
    ///     group_id: "g".into(),
    ///     state: "Stable".into(),
    ///     group_epoch: 3,
    ///     assignment_epoch: 3,
    ///     assignor: "uniform".into(),
    ///     members: vec![member("m1", vec![0, 1]), member("m2", vec![1])],
    /// };
    /// let mut checker = Checker::new();
    /// checker.learn_partition_count("t", 2);
    /// checker.described_consumer_group(&Seen::default(), &group);
    /// let report = checker.finish();
    /// assert_eq!(report.groups[0].group_protocol, "consumer");
    /// let assignment = report.groups[0].rules.iter().find(|r| r.rule == "leader.assignment").unwrap();
    /// assert_eq!(assignment.result, Outcome::Fail); // t-1 owned by both
    /// ```
    pub fn described_consumer_group(&mut self, seen: &Seen, described: &crate::inspect::ConsumerGroup) {
        self.latest = self.latest.max(seen.time);
        let group = self.groups.entry(described.group_id.clone()).or_default();
        group.consumer_protocol = true;
        let (group_epoch, assignment_epoch) = (described.group_epoch, described.assignment_epoch);
        let stable = described.state == "Stable";
        // The target reflects the current members and subscriptions once it is computed for the
        // current group epoch (KIP-848: the group epoch moves first, the assignment epoch follows).
        let target_current = assignment_epoch == group_epoch;
        let epochs =
            format!("group {} at group epoch {group_epoch}, assignment epoch {assignment_epoch}", described.state);
        let at = Seen { time: seen.time, client_id: None };
        let assignor = described.assignor.as_str();
        let names = group.rules.entry("protocol.names").or_default();
        if KAFKA_SERVER_ASSIGNORS.contains(&assignor) {
            names.pass(|| {
                described_evidence(&at, &format!("KIP-848 group: the coordinator's assignor is {assignor:?}"))
            });
        } else if assignor.is_empty() {
            names.unknown(|| described_evidence(&at, &format!("KIP-848 group, {epochs}: no assignor chosen yet")));
        } else {
            names.unknown(|| {
                described_evidence(
                    &at,
                    &format!(
                        "KIP-848 group: the custom server-side assignor {assignor:?} (Kafka ships {KAFKA_SERVER_ASSIGNORS:?})"
                    ),
                )
            });
        }
        let partitions = |groups: &[crate::TopicPartitions]| {
            let mut set = PartitionSet::new();
            for g in groups {
                for &p in &g.partitions {
                    set.insert(&g.topic, p);
                }
            }
            set
        };
        let mut current_owner: BTreeMap<(String, i32), &str> = BTreeMap::new();
        let mut target_owner: BTreeMap<(String, i32), &str> = BTreeMap::new();
        let mut problems = Vec::new();
        for m in &described.members {
            let at = Seen { time: seen.time, client_id: Some(m.client_id.clone()) };
            let id = m.member_id.as_str();
            let member = group.members.entry(m.member_id.clone()).or_default();
            member.client_id = Some(m.client_id.clone());
            member.joined = true;
            let kind = match m.member_type {
                crate::inspect::MemberType::Classic => {
                    "a classic member of a KIP-848 group: ConsumerGroupDescribe does not show its JoinGroup \
                     payloads (judge a capture)"
                }
                _ => "a KIP-848 member (ConsumerGroupHeartbeat) sends no embedded Subscription or Assignment",
            };
            for rule in MEMBER_RULES {
                member.tally(rule).unknown(|| evidence(&at, id, None, kind));
            }
            let current = partitions(&m.assignment);
            let target = partitions(&m.target_assignment);
            for (t, p) in current.iter() {
                if let Some(other) = current_owner.insert((t.to_owned(), p), id) {
                    problems.push(format!("{t}-{p} owned by both {other} and {id}"));
                }
            }
            for (t, p) in target.iter() {
                if let Some(other) = target_owner.insert((t.to_owned(), p), id) {
                    problems.push(format!("{t}-{p} targeted at both {other} and {id}"));
                }
            }
            // consumer.assignment: of topics it subscribes to.
            let subscribed: BTreeSet<&str> = m.subscribed_topics.iter().map(String::as_str).collect();
            let outside = |set: &PartitionSet| -> Vec<(String, i32)> {
                set.iter().filter(|(t, _)| !subscribed.contains(t)).map(|(t, p)| (t.to_owned(), p)).collect()
            };
            let (target_outside, current_outside) = (outside(&target), outside(&current));
            let regex = m.subscribed_topic_regex.as_deref();
            let tally = member.tally("consumer.assignment");
            if let (Some(regex), false) = (regex, target_outside.is_empty() && current_outside.is_empty()) {
                tally.unknown(|| {
                    evidence(
                        &at,
                        id,
                        None,
                        &format!(
                            "holds or is targeted with {} beyond its named topics; it subscribes with the regular \
                             expression {regex:?}, which this check does not resolve",
                            list(target_outside.iter().chain(&current_outside).cloned())
                        ),
                    )
                });
            } else {
                if !target_outside.is_empty() {
                    let what = format!(
                        "the coordinator's target gives it {}, of topics it does not subscribe to ({:?})",
                        list(target_outside.clone()),
                        m.subscribed_topics
                    );
                    if target_current {
                        tally.fail(|| evidence(&at, id, None, &what));
                    } else {
                        tally.unknown(|| {
                            evidence(&at, id, None, &format!("{what}; {epochs}: the target is being recomputed"))
                        });
                    }
                }
                if !current_outside.is_empty() {
                    let what = format!(
                        "owns {}, of topics it does not subscribe to ({:?})",
                        list(current_outside.clone()),
                        m.subscribed_topics
                    );
                    if stable {
                        tally.fail(|| evidence(&at, id, None, &format!("{what}, while the group is Stable")));
                    } else {
                        tally.unknown(|| {
                            evidence(
                                &at,
                                id,
                                None,
                                &format!("{what}; {epochs}: a subscription change being reconciled (the coordinator revokes them)"),
                            )
                        });
                    }
                }
                if target_outside.is_empty() && current_outside.is_empty() {
                    tally.pass(|| {
                        evidence(
                            &at,
                            id,
                            None,
                            &format!(
                                "its {} owned and {} targeted partitions are all of topics it subscribes to",
                                current.len(),
                                target.len()
                            ),
                        )
                    });
                }
            }
            // consumer.epoch: member epoch <= assignment epoch <= group epoch; converged when at
            // the assignment epoch and owning its target.
            let epoch = m.member_epoch;
            let tally = member.tally("consumer.epoch");
            let converged = epoch == assignment_epoch && current == target;
            if epoch > assignment_epoch || assignment_epoch > group_epoch {
                tally.fail(|| {
                    evidence(
                        &at,
                        id,
                        None,
                        &format!(
                            "member epoch {epoch} ahead of the assignment ({epochs}): epochs only follow the group's"
                        ),
                    )
                });
            } else if converged {
                tally.pass(|| {
                    evidence(
                        &at,
                        id,
                        None,
                        &format!(
                            "at member epoch {epoch}, the assignment epoch, owning its target ({} partitions)",
                            target.len()
                        ),
                    )
                });
            } else {
                let revoking: Vec<(String, i32)> =
                    current.difference(&target).map(|(t, p)| (t.to_owned(), p)).collect();
                let awaiting: Vec<(String, i32)> =
                    target.difference(&current).map(|(t, p)| (t.to_owned(), p)).collect();
                let what = format!(
                    "at member epoch {epoch} ({epochs}): to revoke {}, to receive {}",
                    list(revoking),
                    list(awaiting)
                );
                if stable {
                    tally.fail(|| evidence(&at, id, None, &format!("{what}, yet the group says Stable")));
                } else {
                    tally.unknown(|| evidence(&at, id, None, &format!("{what}: still reconciling (describe again)")));
                }
            }
        }
        // leader.assignment: the coordinator's assignment as a whole.
        let at = Seen { time: seen.time, client_id: None };
        let tally = group.rules.entry("leader.assignment").or_default();
        if described.members.is_empty() {
            tally.unknown(|| described_evidence(&at, &format!("KIP-848 group, {epochs}: no members")));
            return;
        }
        if !problems.is_empty() {
            let what = problems.join("; ");
            tally.fail(|| described_evidence(&at, &format!("KIP-848 group, {epochs}: {what}")));
            return;
        }
        let held = format!(
            "KIP-848 group, {epochs}: {} partitions owned, none by two members; {} targeted, none twice",
            current_owner.len(),
            target_owner.len()
        );
        if !target_current {
            return tally.unknown(|| {
                described_evidence(
                    &at,
                    &format!("{held}; the target is being recomputed, so completeness is not judged"),
                )
            });
        }
        if let Some(regex) = described.members.iter().find_map(|m| m.subscribed_topic_regex.as_deref()) {
            return tally.unknown(|| {
                described_evidence(&at, &format!("{held}; a member subscribes with the regular expression {regex:?}, so completeness is not judged"))
            });
        }
        let subscribed: BTreeSet<&String> = described.members.iter().flat_map(|m| &m.subscribed_topics).collect();
        let counts: Option<Vec<(&String, i32)>> = subscribed
            .iter()
            .map(|t| self.metadata.as_ref().and_then(|md| md.topics.get(*t)).map(|i| (*t, i.partitions)))
            .collect();
        let Some(counts) = counts else {
            return tally.unknown(|| {
                described_evidence(
                    &at,
                    &format!(
                        "{held}; completeness needs the partition counts of {} (give --partitions)",
                        subscribed.iter().map(|t| t.as_str()).collect::<Vec<_>>().join(",")
                    ),
                )
            });
        };
        let mut missing = Vec::new();
        for (t, n) in counts {
            for p in 0..n {
                if !target_owner.contains_key(&(t.clone(), p)) {
                    missing.push((t.clone(), p));
                }
            }
        }
        if missing.is_empty() {
            tally.pass(|| described_evidence(&at, &format!("{held}; every subscribed partition targeted")));
        } else {
            let what = format!("{held}; targeted at nobody: {}", list(missing));
            tally.fail(|| described_evidence(&at, &what));
        }
    }

    /// The report of everything observed.
    pub fn finish(self) -> Report {
        let latest = self.latest;
        let mut groups = Vec::new();
        for (group_id, mut g) in self.groups {
            for (id, m) in g.members.iter_mut() {
                if let Some(revocation) = m.revocation.take() {
                    judge_no_rejoin(m, &revocation, id, latest, &g.fresh_joins);
                }
            }
            let rules = GROUP_RULES.iter().map(|r| g.rules.get(r).cloned().unwrap_or_default().result(r)).collect();
            let mut members = Vec::new();
            for (member_id, m) in g.members {
                if member_id.starts_with('\u{0}') {
                    // A first join whose response was not captured: no member id to report it under.
                    continue;
                }
                let mut rules = Vec::new();
                let consumer_rules: &[&'static str] = if g.consumer_protocol { &CONSUMER_MEMBER_RULES } else { &[] };
                for r in MEMBER_RULES.iter().chain(consumer_rules) {
                    let mut result = m.rules.get(r).cloned().unwrap_or_default().result(r);
                    if !m.joined && result.result != Outcome::Fail && !m.rules.contains_key(r) {
                        result.evidence = "no JoinGroup request of this member was captured".into();
                    }
                    rules.push(result);
                }
                members.push(MemberReport { member_id, client_id: m.client_id, rules });
            }
            let group_protocol = if g.consumer_protocol { "consumer" } else { "classic" };
            groups.push(GroupReport { group_id, group_protocol, rules, members });
        }
        Report { groups }
    }
}

fn member_tally<'a>(group: &'a mut GroupState, member: &str, rule: &'static str) -> &'a mut Tally {
    entry_of(&mut group.members, member).tally(rule)
}

/// The value of `key`, made when missing. Its key is allocated only then: nearly every message
/// of a capture is of a group and member already seen.
fn entry_of<'m, V: Default>(map: &'m mut BTreeMap<String, V>, key: &str) -> &'m mut V {
    if !map.contains_key(key) {
        map.insert(key.to_owned(), V::default());
    }
    map.get_mut(key).expect("inserted just above when missing")
}

/// The Java name a misspelt built-in strategy name stands for (kafkajs' `RoundRobinAssigner`).
fn java_name_for(name: &str) -> Option<&'static str> {
    let n: String = name.chars().filter(|c| c.is_ascii_alphanumeric()).collect::<String>().to_ascii_lowercase();
    let n = n.strip_suffix("assignor").or_else(|| n.strip_suffix("assigner")).unwrap_or(&n);
    match n {
        "range" => Some("range"),
        "roundrobin" => Some("roundrobin"),
        "sticky" => Some("sticky"),
        "cooperativesticky" => Some("cooperative-sticky"),
        _ => None,
    }
}

fn judge_user_data(member: &mut MemberState, seen: &Seen, id: &str, protocol: &str, user_data: Option<&[u8]>) {
    let Some(data) = user_data.filter(|d| !d.is_empty()) else {
        // Java reads empty userData as no history (DEFAULT_GENERATION), as it reads none.
        if protocol == "sticky" || protocol == "cooperative-sticky" {
            member.tally("userdata").pass(|| evidence(seen, id, None, &format!("{protocol}: no userData")));
        }
        return;
    };
    match protocol {
        "cooperative-sticky" => {
            // Java writes the generation (4 bytes); librdkafka writes the sticky layout.
            if crate::CooperativeStickyUserData::decode(data).is_ok() {
                member
                    .tally("userdata")
                    .pass(|| evidence(seen, id, None, "cooperative-sticky userData: Java's layout"));
            } else if StickyUserData::decode_v1(data).is_ok() || StickyUserData::decode_v0(data).is_ok() {
                member
                    .tally("userdata")
                    .pass(|| evidence(seen, id, None, "cooperative-sticky userData: librdkafka's sticky layout"));
            } else {
                member.tally("userdata").fail(|| {
                    evidence(
                        seen,
                        id,
                        None,
                        &format!(
                            "cooperative-sticky userData of {} bytes reads as neither Java's nor librdkafka's layout",
                            data.len()
                        ),
                    )
                });
            }
        }
        "sticky" => match StickyUserData::decode_java(data).1 {
            StickyUserDataFormat::V1 | StickyUserDataFormat::V0 => {
                member.tally("userdata").pass(|| evidence(seen, id, None, "sticky userData reads as Java's layout"))
            }
            _ => member.tally("userdata").fail(|| {
                evidence(
                    seen,
                    id,
                    None,
                    &format!("sticky userData of {} bytes reads as neither of Java's layouts", data.len()),
                )
            }),
        },
        _ => {}
    }
}

fn judge_cooperative(
    member: &mut MemberState,
    seen: &Seen,
    id: &str,
    version: i16,
    generation: i32,
    claimed: &PartitionSet,
    fresh: bool,
) {
    if version < 1 {
        member.tally("cooperative.owned").fail(|| {
            evidence(
                seen,
                id,
                None,
                &format!("a cooperative member sends a v{version} subscription, which cannot carry owned partitions"),
            )
        });
        return;
    }
    let synced = member.synced.clone();
    match (&synced, fresh) {
        (_, true) | (None, _) if claimed.is_empty() => member
            .tally("cooperative.owned")
            .pass(|| evidence(seen, id, None, "claims nothing (no assignment seen before)")),
        (None, _) | (_, true) => member.tally("cooperative.owned").unknown(|| {
            evidence(
                seen,
                id,
                None,
                &format!(
                    "claims {} but its last assignment was not captured",
                    list(claimed.iter().map(|(t, p)| (t.to_owned(), p)))
                ),
            )
        }),
        (Some((gen, assigned)), false) => {
            let extra: Vec<(String, i32)> = claimed.difference(assigned).map(|(t, p)| (t.to_owned(), p)).collect();
            if extra.is_empty() {
                member.tally("cooperative.owned").pass(|| {
                    evidence(
                        seen,
                        id,
                        Some(*gen),
                        &format!("claims {} of the {} partitions last assigned", claimed.len(), assigned.len()),
                    )
                });
            } else {
                member.tally("cooperative.owned").fail(|| {
                    evidence(
                        seen,
                        id,
                        Some(*gen),
                        &format!("claims {} that generation {gen} did not assign to it", list(extra)),
                    )
                });
            }
        }
    }
    if version < 2 {
        return;
    }
    match &synced {
        Some((gen, _)) if !fresh && generation == *gen => member
            .tally("cooperative.generation")
            .pass(|| evidence(seen, id, Some(generation), "sends the generation it last synced")),
        // Java resets to -1 after losing its partitions; it then claims nothing.
        _ if generation == -1 && claimed.is_empty() => member
            .tally("cooperative.generation")
            .pass(|| evidence(seen, id, Some(generation), "no generation and no claims")),
        Some((gen, _)) if !fresh => member.tally("cooperative.generation").fail(|| {
            evidence(
                seen,
                id,
                Some(generation),
                &format!("sends generation {generation} but last synced generation {gen}"),
            )
        }),
        _ => member
            .tally("cooperative.generation")
            .unknown(|| evidence(seen, id, Some(generation), "sends a generation but its last sync was not captured")),
    }
}

/// Group-level evidence of a described (live) group.
fn described_evidence(at: &Seen, what: &str) -> String {
    format!("{} described group: {what}", at.at())
}

fn list_set(set: &PartitionSet) -> String {
    list(set.iter().map(|(t, p)| (t.to_owned(), p)))
}

fn millis(d: Duration) -> u128 {
    d.as_millis()
}

/// `cooperative.revoke` on the member's next JoinGroup after a revocation, seen at `at`:
/// `exact` when that is its own request, else the leader's round that includes it (an upper
/// bound on when it joined). `claims`: what it claims there, when known.
fn judge_rejoin(
    member: &mut MemberState,
    revocation: &Revocation,
    at: &Seen,
    id: &str,
    claims: Option<&PartitionSet>,
    exact: bool,
) {
    let revoked = list_set(&revocation.revoked);
    let waited = at.time.saturating_sub(revocation.seen.time);
    let gen = Some(revocation.generation);
    let still: Vec<(String, i32)> = claims
        .map(|c| c.intersection(&revocation.revoked).map(|(t, p)| (t.to_owned(), p)).collect())
        .unwrap_or_default();
    let when = if exact { "rejoins" } else { "is in the leader's next round" };
    let what = format!("revoked {revoked} at {} and {when} {} ms later", revocation.seen.at(), millis(waited));
    if !still.is_empty() {
        return member.tally("cooperative.revoke").fail(|| {
            evidence(
                at,
                id,
                gen,
                &format!("{what} still claiming {} (KIP-429: a revoked partition is no longer owned)", list(still)),
            )
        });
    }
    let Some(bound) = revocation.bound_ms else {
        return member.tally("cooperative.revoke").unknown(|| {
            evidence(
                at,
                id,
                gen,
                &format!(
                    "{what}; its rebalance timeout was not captured, so the delay is not judged (Java's default \
                 is {JAVA_DEFAULT_REBALANCE_TIMEOUT_MS} ms)"
                ),
            )
        });
    };
    let claimed = if claims.is_some() { ", claiming none of them" } else { "" };
    if waited <= Duration::from_millis(bound.max(0) as u64) {
        member
            .tally("cooperative.revoke")
            .pass(|| evidence(at, id, gen, &format!("{what}{claimed}, within its rebalance timeout of {bound} ms")));
    } else if exact {
        member.tally("cooperative.revoke").fail(|| {
            evidence(
                at,
                id,
                gen,
                &format!(
                    "{what}, beyond its rebalance timeout of {bound} ms (Java rejoins on the first poll after \
                 onPartitionsRevoked, and polls within max.poll.interval.ms)"
                ),
            )
        });
    } else {
        member.tally("cooperative.revoke").unknown(|| {
            evidence(
                at,
                id,
                gen,
                &format!("{what}{claimed}; its own JoinGroup was not captured, so when it rejoined is not known"),
            )
        });
    }
}

/// `cooperative.revoke` for a revocation no rejoin followed before the capture ended.
fn judge_no_rejoin(
    member: &mut MemberState,
    revocation: &Revocation,
    id: &str,
    latest: Duration,
    fresh_joins: &BTreeMap<Option<String>, Duration>,
) {
    let at = &revocation.seen;
    let gen = Some(revocation.generation);
    let revoked = list_set(&revocation.revoked);
    let after = latest.saturating_sub(at.time);
    if fresh_joins.get(&at.client_id).is_some_and(|t| *t > at.time) {
        return member.tally("cooperative.revoke").unknown(|| {
            evidence(
                at,
                id,
                gen,
                &format!(
                    "revoked {revoked}; later a member with its client id joins with a new member id (it lost its id?)"
                ),
            )
        });
    }
    match revocation.bound_ms {
        Some(bound) if after > Duration::from_millis(bound.max(0) as u64) => {
            member.tally("cooperative.revoke").fail(|| {
                evidence(
                    at,
                    id,
                    gen,
                    &format!(
                        "revoked {revoked} and sent no JoinGroup within its rebalance timeout of {bound} ms (the \
                     capture goes on {} ms after); Java rejoins on the first poll after onPartitionsRevoked",
                        millis(after)
                    ),
                )
            })
        }
        Some(bound) => member.tally("cooperative.revoke").unknown(|| {
            evidence(
                at,
                id,
                gen,
                &format!(
                    "revoked {revoked}; the capture ends {} ms later, within its rebalance timeout of {bound} ms",
                    millis(after)
                ),
            )
        }),
        None => member.tally("cooperative.revoke").unknown(|| {
            evidence(
                at,
                id,
                gen,
                &format!("revoked {revoked}; no rejoin captured and its rebalance timeout is not known"),
            )
        }),
    }
}

/// A judgement of one leader's round.
enum Verdict {
    Pass(String),
    Fail(String),
    Unknown(String),
}

/// Who validly owns each partition before the round, as Java's sticky assignors read it when
/// subscriptions are equal: only members at the round's highest generation own anything, and a
/// partition claimed by two of them is owned by neither (cooperative-sticky: the subscription's
/// owned partitions; sticky: the userData's previous assignment).
fn valid_owners(protocol: &str, members: &BTreeMap<&String, &RoundMember>) -> BTreeMap<(String, i32), String> {
    let mut claimed: Vec<(&String, &RoundMember, PartitionSet, i32)> = Vec::new();
    for (id, m) in members {
        let (owned, generation) = if protocol == "cooperative-sticky" {
            (m.owned.clone(), m.generation)
        } else {
            let Some(data) = m.subscription.as_ref().and_then(|s| s.view().user_data()).filter(|d| !d.is_empty())
            else {
                continue;
            };
            let (sticky, format) = StickyUserData::decode_java(data);
            if !matches!(format, StickyUserDataFormat::V1 | StickyUserDataFormat::V0) {
                continue;
            }
            (PartitionSet::from_groups(&sticky.previous_assignment), sticky.generation.unwrap_or(-1))
        };
        claimed.push((id, m, owned, generation));
    }
    let newest = claimed.iter().map(|c| c.3).max().unwrap_or(-1);
    let mut claims: BTreeMap<(String, i32), Vec<&String>> = BTreeMap::new();
    for (id, m, owned, generation) in &claimed {
        if *generation != newest {
            continue;
        }
        for (t, p) in owned.iter().filter(|(t, _)| m.topics.contains(*t)) {
            claims.entry((t.to_owned(), p)).or_default().push(id);
        }
    }
    claims
        .into_iter()
        .filter_map(|(k, by)| if let [one] = by.as_slice() { Some((k, (*one).clone())) } else { None })
        .collect()
}

/// The leader's assignment of one round beside the round's subscriptions: what the three
/// checks that need the partition counts (completeness, Java's answer, balance) judge.
struct GivenRound<'r> {
    protocol: &'r str,
    members: BTreeMap<&'r String, &'r RoundMember>,
    /// The member each partition was given to (the first, when given twice).
    owner: BTreeMap<(String, i32), String>,
    /// Each member's assignment.
    assignments: BTreeMap<String, PartitionSet>,
    /// `cooperative-sticky`: a partition another member still owns is given to nobody.
    cooperative: bool,
    /// `sticky` or `cooperative-sticky`.
    sticky: bool,
    /// Every member subscribes to the same topics.
    equal: bool,
}

impl GivenRound<'_> {
    /// Whether a member claims `t-p` in its subscription (cooperative: moving, given to nobody
    /// for one round).
    fn withheld(&self, t: &str, p: i32) -> bool {
        self.cooperative && self.members.values().any(|m| m.owned.contains(t, p))
    }
}

/// Reads the leader's SyncGroup against its round: the assignment's problems that need no
/// partition counts (a partition given twice, to a non-subscriber, to a member not in the
/// round) go to `problems`; `Err` when the round cannot be judged further.
fn given_round<'r>(
    round: &'r Round,
    request: &SyncGroupRequest<Payload>,
    problems: &mut Vec<String>,
) -> Result<GivenRound<'r>, Verdict> {
    let mut owner: BTreeMap<(String, i32), String> = BTreeMap::new();
    let mut assignments: BTreeMap<String, PartitionSet> = BTreeMap::new();
    for a in &request.assignments {
        let Some(x) = a.assignment.assignment() else {
            return Err(Verdict::Unknown(format!("the assignment to {} did not decode", a.member_id)));
        };
        let set = PartitionSet::from_list(x.view().assigned_partitions());
        let subscribed = round.members.get(&a.member_id);
        for (t, p) in set.iter() {
            if let Some(prev) = owner.insert((t.to_owned(), p), a.member_id.clone()) {
                problems.push(format!("{t}-{p} given to both {prev} and {}", a.member_id));
            }
            match subscribed {
                Some(Some(m)) if !m.topics.contains(t) => {
                    problems.push(format!("{t}-{p} given to {}, which does not subscribe to {t}", a.member_id))
                }
                None => problems.push(format!("{t}-{p} given to {}, which is not in the round", a.member_id)),
                _ => {}
            }
        }
        assignments.insert(a.member_id.clone(), set);
    }
    if round.members.values().any(Option::is_none) {
        return Err(if problems.is_empty() {
            Verdict::Unknown("some subscriptions did not decode".into())
        } else {
            Verdict::Fail(problems.join("; "))
        });
    }
    let members: BTreeMap<&String, &RoundMember> =
        round.members.iter().filter_map(|(k, v)| v.as_ref().map(|v| (k, v))).collect();
    let protocol = round.protocol.as_deref().unwrap_or("");
    let cooperative = protocol == "cooperative-sticky";
    let first_topics = members.values().next().map(|m| &m.topics);
    let equal = members.values().all(|m| Some(&m.topics) == first_topics);
    Ok(GivenRound {
        protocol,
        members,
        owner,
        assignments,
        cooperative,
        sticky: cooperative || protocol == "sticky",
        equal,
    })
}

/// Cooperative: nothing given that another member still owns. Sticky assignors, when every
/// member subscribes to the same topics and no rack is in play (Java's constrained path): a
/// member keeps its own partitions before it is given others. Returns whether stickiness was
/// judged.
fn judge_ownership(given: &GivenRound<'_>, problems: &mut Vec<String>) -> bool {
    let owners = if given.sticky { valid_owners(given.protocol, &given.members) } else { BTreeMap::new() };
    if given.cooperative {
        for ((t, p), holder) in &owners {
            if let Some(to) = given.owner.get(&(t.clone(), *p)) {
                if to != holder {
                    problems.push(format!(
                        "{t}-{p} given to {to} while {holder} still owns it (cooperative: it must be revoked first)"
                    ));
                }
            }
        }
    }
    let racks = given.members.values().any(|m| m.subscription.as_ref().is_some_and(|s| s.view().rack_id().is_some()));
    let judge_stickiness = given.sticky && given.equal && !racks;
    if judge_stickiness {
        for ((t, p), holder) in &owners {
            let Some(got) = given.assignments.get(holder) else { continue };
            if got.contains(t, *p) {
                continue;
            }
            let new: Vec<(String, i32)> = got
                .iter()
                .filter(|(gt, gp)| owners.get(&((*gt).to_owned(), *gp)) != Some(holder))
                .map(|(gt, gp)| (gt.to_owned(), gp))
                .take(3)
                .collect();
            if !new.is_empty() {
                problems.push(format!(
                    "{t}-{p} moved away from {holder}, its owner, which gets {} it did not own instead (Java's \
                     sticky assignor keeps a member's partitions before giving it others)",
                    list(new)
                ));
            }
        }
    }
    judge_stickiness
}

/// What the completeness check found.
enum Completeness<'a> {
    /// Topics the leader gave no partition of, none withheld: not judged.
    Skipped(Vec<&'a str>),
    /// `total` subscribed partitions, `withheld` of them being revoked (cooperative); every other
    /// one not given is a problem.
    Judged { total: usize, withheld: usize, problems: Vec<String> },
}

/// Completeness: every subscribed partition is given (cooperative: or withheld while it moves).
fn judge_completeness<'a>(
    given: &GivenRound<'_>,
    subscribed: &BTreeSet<&'a String>,
    metadata: &ClusterMetadata,
) -> Completeness<'a> {
    // A topic the leader gave no partition of, none withheld: its metadata may not have known
    // the topic yet (Java's assignors skip a topic without metadata, and the group rejoins when
    // it appears; kafka-python's first round does this). The capture cannot tell: unknown.
    let skipped: Vec<&str> = subscribed
        .iter()
        .filter(|t| {
            let n = metadata.topics.get(**t).map_or(0, |i| i.partitions);
            !(0..n).any(|p| given.owner.contains_key(&((**t).clone(), p)) || given.withheld(t, p))
        })
        .map(|t| t.as_str())
        .collect();
    if !skipped.is_empty() {
        return Completeness::Skipped(skipped);
    }
    let (mut total, mut withheld, mut problems) = (0usize, 0usize, Vec::new());
    for t in subscribed {
        let Some(info) = metadata.topics.get(*t) else { continue };
        for p in 0..info.partitions {
            total += 1;
            if given.owner.contains_key(&((*t).clone(), p)) {
                continue;
            }
            // Cooperative: a partition moving between members is given to nobody for one round.
            if given.withheld(t, p) {
                withheld += 1;
                continue;
            }
            let by: Vec<&str> = given
                .members
                .iter()
                .filter(|(_, m)| m.topics.contains(*t))
                .map(|(id, _)| id.as_str())
                .take(3)
                .collect();
            problems.push(format!("{t}-{p}, subscribed by {}, given to nobody", by.join(",")));
        }
    }
    Completeness::Judged { total, withheld, problems }
}

/// Java's answer: range and roundrobin are deterministic, so the leader's answer must equal
/// the one Java's assignor gives the same members. `None` for other protocols.
fn judge_java_answer(given: &GivenRound<'_>, metadata: &ClusterMetadata) -> Option<Vec<String>> {
    if given.protocol != "range" && given.protocol != "roundrobin" {
        return None;
    }
    let mut problems = Vec::new();
    let Some(assignor) = crate::assignor::builtin(given.protocol) else { return Some(problems) };
    let group: Vec<GroupMember> = given
        .members
        .iter()
        .filter_map(|(id, m)| {
            m.subscription.as_ref().map(|s| GroupMember {
                member_id: (*id).clone(),
                group_instance_id: m.instance.clone(),
                subscription: s.view().to_owned(),
            })
        })
        .collect();
    if let Ok(java) = assignor.assign(metadata, &group) {
        for m in &group {
            let expected = PartitionSet::from_groups(&java.partitions_of(&m.member_id));
            let got = given.assignments.get(&m.member_id).cloned().unwrap_or_default();
            if expected != got {
                problems.push(format!(
                    "{} got {} where Java's {} gives {}",
                    m.member_id,
                    list_set(&got),
                    given.protocol,
                    list_set(&expected)
                ));
            }
        }
    }
    Some(problems)
}

/// Balance: Java's sticky assignors balance equal subscriptions within one partition.
/// Cooperative: the `withheld` partitions go to someone next round, so the counts must be able
/// to end within one partition of each other once they are placed. `None` when not judged
/// (another protocol, or unequal subscriptions); `Some(Err)` names the imbalance.
fn judge_balance(given: &GivenRound<'_>, total: usize, withheld: usize) -> Option<Result<(), String>> {
    if !given.sticky || !given.equal || given.members.is_empty() {
        return None;
    }
    let n = given.members.len();
    let (floor, ceil) = (total / n, total.div_ceil(n));
    let counts: Vec<(&String, usize)> =
        given.members.keys().map(|id| (*id, given.assignments.get(*id).map_or(0, PartitionSet::len))).collect();
    let over = counts.iter().any(|(_, c)| *c > ceil);
    let deficit: usize = counts.iter().map(|(_, c)| floor.saturating_sub(*c)).sum();
    if !over && deficit <= withheld {
        return Some(Ok(()));
    }
    let spread: Vec<String> = counts.iter().map(|(id, c)| format!("{id}:{c}")).collect();
    Some(Err(format!(
        "unbalanced: {total} partitions over {n} members with equal subscriptions must be {floor} or {ceil} \
         each{}; given {}",
        if withheld > 0 { format!(" once the {withheld} being revoked are placed") } else { String::new() },
        spread.join(" ")
    )))
}

/// Judges the leader's assignment of one round: first what needs no partition counts (each
/// partition given at most once, to a subscriber; cooperative and sticky ownership), then, with
/// the counts, completeness, Java's answer (range, roundrobin) and balance (sticky assignors).
fn judge_round(round: &Round, request: &SyncGroupRequest<Payload>, metadata: Option<&ClusterMetadata>) -> Verdict {
    let mut problems = Vec::new();
    let given = match given_round(round, request, &mut problems) {
        Ok(given) => given,
        Err(verdict) => return verdict,
    };
    let judged_stickiness = judge_ownership(&given, &mut problems);
    if !problems.is_empty() {
        return Verdict::Fail(problems.join("; "));
    }
    let mut held = format!("{} partitions given, none twice, none to a non-subscriber", given.owner.len());
    if given.cooperative {
        held.push_str(", none still owned by another");
    }
    if judged_stickiness {
        held.push_str(", no owned partition traded for another");
    }
    // Completeness, Java's answer and balance need every subscribed topic's partition count.
    let subscribed: BTreeSet<&String> = given.members.values().flat_map(|m| m.topics.iter()).collect();
    let Some(metadata) = metadata.filter(|m| subscribed.iter().all(|t| m.topics.contains_key(*t))) else {
        return Verdict::Unknown(format!(
            "{held}; completeness{} need the partition counts of {} (capture the clients' Metadata responses \
             or give --partitions)",
            match given.protocol {
                "range" | "roundrobin" => ", Java's answer",
                "sticky" | "cooperative-sticky" => ", balance",
                _ => "",
            },
            subscribed.iter().map(|t| t.as_str()).collect::<Vec<_>>().join(",")
        ));
    };
    let (total, withheld) = match judge_completeness(&given, &subscribed, metadata) {
        Completeness::Skipped(skipped) => {
            return Verdict::Unknown(format!(
                "{held}; no partition of {} was given: the leader's metadata may not have known {} yet (Java's \
                 assignors skip a topic without metadata and the group rejoins when it appears)",
                skipped.join(","),
                if skipped.len() == 1 { "it" } else { "them" }
            ))
        }
        Completeness::Judged { total, withheld, problems: missing } => {
            problems.extend(missing);
            (total, withheld)
        }
    };
    let java_answer = judge_java_answer(&given, metadata);
    problems.extend(java_answer.iter().flatten().cloned());
    let balance = judge_balance(&given, total, withheld);
    if let Some(Err(imbalance)) = &balance {
        problems.push(imbalance.clone());
    }
    if !problems.is_empty() {
        return Verdict::Fail(problems.join("; "));
    }
    held.push_str(if withheld > 0 {
        ", every other subscribed partition given"
    } else {
        ", every subscribed partition given"
    });
    if withheld > 0 {
        held.push_str(&format!(" ({withheld} being revoked)"));
    }
    if java_answer.is_some() {
        held.push_str(", equal to Java's answer");
    }
    if balance.is_some() {
        held.push_str(", balanced within one partition");
    }
    Verdict::Pass(held)
}
