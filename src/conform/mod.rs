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
use crate::group_api::{ErrorCode, JoinGroupMember, JoinGroupRequest, SyncGroupRequest};
use crate::pcap::{GroupBody, GroupMessage, MessageDirection, Payload};
use crate::{AssignmentView, DecodeOptions, PartitionSet, StickyUserData, StickyUserDataFormat, SubscriptionView};

#[cfg(test)]
mod tests;

/// The stable rule names, in report order.
pub const RULES: [&str; 10] = [
    "payload.strict",
    "protocol.names",
    "cooperative.owned",
    "cooperative.generation",
    "eager.claims",
    "leader.assignment",
    "userdata",
    "static.instance",
    "rack",
    "timeouts",
];

/// The rules judged per group: whether the members share a protocol, and the leader's answer.
pub const GROUP_RULES: [&str; 2] = ["protocol.names", "leader.assignment"];

/// The rules judged per member: every rule but `leader.assignment` (`protocol.names` is judged
/// both per member, for its names, and per group).
pub const MEMBER_RULES: [&str; 9] = [
    "payload.strict",
    "protocol.names",
    "cooperative.owned",
    "cooperative.generation",
    "eager.claims",
    "userdata",
    "static.instance",
    "rack",
    "timeouts",
];

/// The strategy names Java and librdkafka give their assignors.
pub const JAVA_NAMES: [&str; 4] = ["range", "roundrobin", "sticky", "cooperative-sticky"];

/// The broker's default session timeout bounds (`group.min.session.timeout.ms`,
/// `group.max.session.timeout.ms`).
pub const SESSION_TIMEOUT_BOUNDS_MS: (i32, i32) = (6_000, 1_800_000);

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
            "the broker fences one of the two processes (FENCED_INSTANCE_ID) or rebalances on every restart"
        }
        "rack" => "rack-aware assignment moves partitions whenever the rack changes",
        "timeouts" => "the broker refuses the join (INVALID_SESSION_TIMEOUT)",
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
    fn pass(&mut self, evidence: String) {
        self.passes += 1;
        if self.other_evidence.len() < MAX_EVIDENCE && self.passes == 1 {
            self.other_evidence.push(evidence);
        }
    }
    fn fail(&mut self, evidence: String) {
        self.fails += 1;
        if self.fail_evidence.len() < MAX_EVIDENCE {
            self.fail_evidence.push(evidence);
        }
    }
    fn unknown(&mut self, evidence: String) {
        self.unknowns += 1;
        if self.other_evidence.len() < MAX_EVIDENCE {
            self.other_evidence.push(evidence);
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
    judge_payload_into(&mut tally, bytes, true, String::new());
    tally.result("payload.strict")
}

/// Judges one Assignment's bytes (rule `payload.strict`), as [`judge_subscription`].
pub fn judge_assignment(bytes: &[u8]) -> RuleResult {
    let mut tally = Tally::default();
    judge_payload_into(&mut tally, bytes, false, String::new());
    tally.result("payload.strict")
}

fn judge_payload_into(tally: &mut Tally, bytes: &[u8], subscription: bool, context: String) {
    let what = if subscription { "subscription" } else { "assignment" };
    let prefix = if context.is_empty() { String::new() } else { format!("{context}: ") };
    let java = if subscription {
        SubscriptionView::decode(bytes).map(|v| (v.version(), v.trailing_bytes()))
    } else {
        AssignmentView::decode(bytes).map(|v| (v.version(), v.trailing_bytes()))
    };
    match java {
        Ok((version, 0)) => tally.pass(format!("{prefix}{what} v{version} decodes with Java's reader")),
        Ok((version, trailing)) => tally.pass(format!(
            "{prefix}{what} v{version} decodes with Java's reader, which ignores its {trailing} trailing bytes \
             (so does the KIP-848 conversion)"
        )),
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
            tally.fail(format!(
                "{prefix}{what} refused by Java's reader ({error}); a strict broker (KIP-848 conversion) refuses \
                 it; {peer}"
            ));
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
    subscription: Option<crate::Subscription>,
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
    rules: BTreeMap<&'static str, Tally>,
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
    /// The member-level rules ([`MEMBER_RULES`]).
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
    /// that every subscribed partition is assigned.
    pub fn with_metadata(metadata: ClusterMetadata) -> Self {
        Checker { metadata: Some(metadata), ..Self::default() }
    }

    /// Feeds one captured message.
    pub fn observe(&mut self, message: &GroupMessage) {
        let f = &message.frame;
        let seen = Seen { time: message.timestamp, client_id: f.client_id.clone() };
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
                self.join_request(&seen, b);
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
        let group = self.groups.entry(request.group_id.clone()).or_default();
        let fresh = request.member_id.is_empty();
        let mut scratch = MemberState::default();
        let member: &mut MemberState =
            if fresh { &mut scratch } else { group.members.entry(request.member_id.clone()).or_default() };
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
                member.tally("protocol.names").pass(evidence(seen, id, None, &format!("offers {name:?}")));
            } else if let Some(java) = java_name_for(name) {
                member.tally("protocol.names").fail(evidence(
                    seen,
                    id,
                    None,
                    &format!("offers {name:?} for the assignor Java and librdkafka call {java:?}"),
                ));
            } else {
                member.tally("protocol.names").unknown(evidence(
                    seen,
                    id,
                    None,
                    &format!("offers the custom protocol {name:?} (no Java counterpart to compare with)"),
                ));
            }
        }
        // payload.strict, userdata, claims, generation, rack: from each subscription.
        let cooperative = is_cooperative(&member.offered);
        let offered = member.offered.clone();
        let mut judged_claims = false;
        for p in &request.protocols {
            let context = evidence(seen, id, None, &format!("protocol {:?}", p.name));
            match &p.metadata {
                Payload::Subscription(s) => {
                    judge_payload_into(member.tally("payload.strict"), s.as_bytes(), true, context.clone())
                }
                Payload::Invalid { bytes, .. } => {
                    judge_payload_into(member.tally("payload.strict"), bytes, true, context.clone())
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
                Some(before) if before != rack && view.version() >= 3 => member.tally("rack").fail(evidence(
                    seen,
                    id,
                    None,
                    &format!("rack changed from {} to {}", shown(&before), shown(&rack)),
                )),
                _ if view.version() >= 3 => {
                    member.rack = Some(rack.clone());
                    member.tally("rack").pass(evidence(seen, id, None, &format!("rack {}", shown(&rack))));
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
                        member.tally("eager.claims").pass(evidence(seen, id, None, "an eager member claims nothing"));
                    } else {
                        member.tally("eager.claims").fail(evidence(
                            seen,
                            id,
                            None,
                            &format!(
                                "offers only eager-capable protocols {:?} yet claims {}",
                                offered,
                                list(claimed.iter().map(|(t, p)| (t.to_owned(), p)))
                            ),
                        ));
                    }
                }
                Some(true) => {
                    judge_cooperative(member, seen, id, version, generation, &claimed, fresh);
                }
                None => member.tally("eager.claims").unknown(evidence(
                    seen,
                    id,
                    None,
                    &format!("custom protocols {offered:?}: eager or cooperative cannot be told"),
                )),
            }
        }
        // static.instance
        if !fresh {
            let instance = request.group_instance_id.clone();
            match member.instance.clone() {
                Some(before) if before != instance => member.tally("static.instance").fail(evidence(
                    seen,
                    id,
                    None,
                    &format!("instance id changed from {before:?} to {instance:?} under the same member id"),
                )),
                _ => {
                    member.instance = Some(instance.clone());
                    if instance.is_some() {
                        member.tally("static.instance").pass(evidence(
                            seen,
                            id,
                            None,
                            &format!("instance {instance:?}"),
                        ));
                    }
                }
            }
        }
        if fresh {
            // What a first join said is kept under the member id its response gives.
            let pending = std::mem::take(&mut scratch.rules);
            group.members.entry(format!("\u{0}fresh:{}", seen.at())).or_default().rules = pending;
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
        let group = self.groups.entry(group_id.to_owned()).or_default();
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
        let member = group.members.entry(member_id.to_owned()).or_default();
        if member.client_id.is_none() {
            member.client_id = seen.client_id.clone();
        }
        // timeouts
        if let Some((session, _, _)) = request {
            let (lo, hi) = SESSION_TIMEOUT_BOUNDS_MS;
            if error == ErrorCode::INVALID_SESSION_TIMEOUT {
                member.tally("timeouts").fail(evidence(
                    seen,
                    member_id,
                    None,
                    &format!("session timeout {session} ms refused by the broker (INVALID_SESSION_TIMEOUT)"),
                ));
            } else if error == ErrorCode::NONE {
                let note = if (lo..=hi).contains(&session) {
                    String::new()
                } else {
                    format!(", outside the default bounds {lo}..={hi} ms but accepted by this broker")
                };
                member.tally("timeouts").pass(evidence(
                    seen,
                    member_id,
                    Some(generation),
                    &format!("session timeout {session} ms{note}"),
                ));
            }
        }
        if error != ErrorCode::NONE || members.is_empty() {
            return;
        }
        // The leader's response: the round.
        let mut round =
            Round { protocol: protocol.map(str::to_owned), leader: leader.to_owned(), members: BTreeMap::new() };
        for m in members {
            let rm = m.metadata.subscription().map(|s| {
                let v = s.view();
                RoundMember {
                    instance: m.group_instance_id.clone(),
                    topics: v.topics().iter().map(str::to_owned).collect(),
                    owned: PartitionSet::from_list(v.owned_partitions()),
                    generation: v.generation_id(),
                    subscription: Some(v.to_owned()),
                }
            });
            round.members.insert(m.member_id.clone(), rm);
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
                group.rules.entry("protocol.names").or_default().fail(evidence(
                    seen,
                    leader,
                    Some(generation),
                    &format!("the members share no protocol: {offered:?}"),
                ));
            } else {
                group.rules.entry("protocol.names").or_default().pass(evidence(
                    seen,
                    leader,
                    Some(generation),
                    &format!("{} members share {:?}", offered.len(), common),
                ));
            }
        } else {
            group.rules.entry("protocol.names").or_default().unknown(evidence(
                seen,
                leader,
                Some(generation),
                "the JoinGroup of some members was not captured",
            ));
        }
        group.rounds.insert(generation, round);
        // Only the latest few rounds are needed to judge the leader's SyncGroup.
        while group.rounds.len() > 4 {
            group.rounds.pop_first();
        }
    }

    /// A SyncGroup request; the leader's carries the assignment (rule `leader.assignment`).
    pub fn sync_request(&mut self, seen: &Seen, request: &SyncGroupRequest<Payload>) {
        let group = self.groups.entry(request.group_id.clone()).or_default();
        let member = group.members.entry(request.member_id.clone()).or_default();
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
                    let ctx = evidence(seen, leader, Some(gen), &format!("assignment to {}", a.member_id));
                    judge_payload_into(member_tally(group, leader, "payload.strict"), x.as_bytes(), false, ctx);
                    if x.view().user_data().is_some_and(|u| !u.is_empty()) {
                        member_tally(group, leader, "userdata").fail(evidence(
                            seen,
                            leader,
                            Some(gen),
                            &format!("the assignment to {} carries userData (a KIP-848 upgrade blocker)", a.member_id),
                        ));
                    }
                }
                Payload::Invalid { bytes, .. } => {
                    let ctx = evidence(seen, leader, Some(gen), &format!("assignment to {}", a.member_id));
                    judge_payload_into(member_tally(group, leader, "payload.strict"), bytes, false, ctx);
                }
                _ => {}
            }
        }
        let tally_ref = group.rules.entry("leader.assignment").or_default();
        let Some(round) = group.rounds.get(&gen) else {
            tally_ref.unknown(evidence(seen, leader, Some(gen), "the leader's JoinGroup response was not captured"));
            return;
        };
        if round.leader != leader {
            tally_ref.unknown(evidence(
                seen,
                leader,
                Some(gen),
                "a member other than the round's leader sent assignments",
            ));
            return;
        }
        let verdict = judge_round(round, request, self.metadata.as_ref());
        let tally = group.rules.entry("leader.assignment").or_default();
        match verdict {
            Ok(what) => tally.pass(evidence(seen, leader, Some(gen), &what)),
            Err(Some(what)) => tally.fail(evidence(seen, leader, Some(gen), &what)),
            Err(None) => tally.unknown(evidence(seen, leader, Some(gen), "some subscriptions did not decode")),
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
        let group = self.groups.entry(group_id.to_owned()).or_default();
        let member = group.members.entry(member_id.to_owned()).or_default();
        if member.client_id.is_none() {
            member.client_id = seen.client_id.clone();
        }
        if error != ErrorCode::NONE {
            return;
        }
        let partitions = match assignment {
            Payload::Assignment(a) => PartitionSet::from_list(a.view().assigned_partitions()),
            Payload::Empty => PartitionSet::new(),
            _ => {
                member.synced = None;
                return;
            }
        };
        member.synced = Some((generation, partitions));
    }

    /// The report of everything observed.
    pub fn finish(self) -> Report {
        let mut groups = Vec::new();
        for (group_id, g) in self.groups {
            let rules = GROUP_RULES.iter().map(|r| g.rules.get(r).cloned().unwrap_or_default().result(r)).collect();
            let mut members = Vec::new();
            for (member_id, m) in g.members {
                if member_id.starts_with('\u{0}') {
                    // A first join whose response was not captured: no member id to report it under.
                    continue;
                }
                let mut rules = Vec::new();
                for r in MEMBER_RULES.iter() {
                    let mut result = m.rules.get(r).cloned().unwrap_or_default().result(r);
                    if !m.joined && result.result != Outcome::Fail && !m.rules.contains_key(r) {
                        result.evidence = "no JoinGroup request of this member was captured".into();
                    }
                    rules.push(result);
                }
                members.push(MemberReport { member_id, client_id: m.client_id, rules });
            }
            groups.push(GroupReport { group_id, rules, members });
        }
        Report { groups }
    }
}

fn member_tally<'a>(group: &'a mut GroupState, member: &str, rule: &'static str) -> &'a mut Tally {
    group.members.entry(member.to_owned()).or_default().tally(rule)
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
            member.tally("userdata").pass(evidence(seen, id, None, &format!("{protocol}: no userData")));
        }
        return;
    };
    match protocol {
        "cooperative-sticky" => {
            // Java writes the generation (4 bytes); librdkafka writes the sticky layout.
            if crate::CooperativeStickyUserData::decode(data).is_ok() {
                member.tally("userdata").pass(evidence(seen, id, None, "cooperative-sticky userData: Java's layout"));
            } else if StickyUserData::decode_v1(data).is_ok() || StickyUserData::decode_v0(data).is_ok() {
                member.tally("userdata").pass(evidence(
                    seen,
                    id,
                    None,
                    "cooperative-sticky userData: librdkafka's sticky layout",
                ));
            } else {
                member.tally("userdata").fail(evidence(
                    seen,
                    id,
                    None,
                    &format!(
                        "cooperative-sticky userData of {} bytes reads as neither Java's nor librdkafka's layout",
                        data.len()
                    ),
                ));
            }
        }
        "sticky" => match StickyUserData::decode_java(data).1 {
            StickyUserDataFormat::V1 | StickyUserDataFormat::V0 => {
                member.tally("userdata").pass(evidence(seen, id, None, "sticky userData reads as Java's layout"))
            }
            _ => member.tally("userdata").fail(evidence(
                seen,
                id,
                None,
                &format!("sticky userData of {} bytes reads as neither of Java's layouts", data.len()),
            )),
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
        member.tally("cooperative.owned").fail(evidence(
            seen,
            id,
            None,
            &format!("a cooperative member sends a v{version} subscription, which cannot carry owned partitions"),
        ));
        return;
    }
    let synced = member.synced.clone();
    match (&synced, fresh) {
        (_, true) | (None, _) if claimed.is_empty() => member.tally("cooperative.owned").pass(evidence(
            seen,
            id,
            None,
            "claims nothing (no assignment seen before)",
        )),
        (None, _) | (_, true) => member.tally("cooperative.owned").unknown(evidence(
            seen,
            id,
            None,
            &format!(
                "claims {} but its last assignment was not captured",
                list(claimed.iter().map(|(t, p)| (t.to_owned(), p)))
            ),
        )),
        (Some((gen, assigned)), false) => {
            let extra: Vec<(String, i32)> = claimed.difference(assigned).map(|(t, p)| (t.to_owned(), p)).collect();
            if extra.is_empty() {
                member.tally("cooperative.owned").pass(evidence(
                    seen,
                    id,
                    Some(*gen),
                    &format!("claims {} of the {} partitions last assigned", claimed.len(), assigned.len()),
                ));
            } else {
                member.tally("cooperative.owned").fail(evidence(
                    seen,
                    id,
                    Some(*gen),
                    &format!("claims {} that generation {gen} did not assign to it", list(extra)),
                ));
            }
        }
    }
    if version < 2 {
        return;
    }
    match &synced {
        Some((gen, _)) if !fresh && generation == *gen => member.tally("cooperative.generation").pass(evidence(
            seen,
            id,
            Some(generation),
            "sends the generation it last synced",
        )),
        // Java resets to -1 after losing its partitions; it then claims nothing.
        _ if generation == -1 && claimed.is_empty() => member.tally("cooperative.generation").pass(evidence(
            seen,
            id,
            Some(generation),
            "no generation and no claims",
        )),
        Some((gen, _)) if !fresh => member.tally("cooperative.generation").fail(evidence(
            seen,
            id,
            Some(generation),
            &format!("sends generation {generation} but last synced generation {gen}"),
        )),
        _ => member.tally("cooperative.generation").unknown(evidence(
            seen,
            id,
            Some(generation),
            "sends a generation but its last sync was not captured",
        )),
    }
}

/// `Ok(summary)`, `Err(Some(failure))` or `Err(None)` when it cannot be judged.
fn judge_round(
    round: &Round,
    request: &SyncGroupRequest<Payload>,
    metadata: Option<&ClusterMetadata>,
) -> Result<String, Option<String>> {
    let mut owner: BTreeMap<(String, i32), String> = BTreeMap::new();
    let mut problems = Vec::new();
    let mut assignments: BTreeMap<String, PartitionSet> = BTreeMap::new();
    for a in &request.assignments {
        let Some(x) = a.assignment.assignment() else { return Err(None) };
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
        return if problems.is_empty() { Err(None) } else { Err(Some(problems.join("; "))) };
    }
    let members: BTreeMap<&String, &RoundMember> =
        round.members.iter().filter_map(|(k, v)| v.as_ref().map(|v| (k, v))).collect();
    if round.protocol.as_deref() == Some("cooperative-sticky") {
        // Claims the assignor trusts: claimed by one member only, at the round's newest generation.
        let newest = members.values().map(|m| m.generation).max().unwrap_or(-1);
        let mut claims: BTreeMap<(String, i32), Vec<&String>> = BTreeMap::new();
        for (id, m) in &members {
            if m.generation == newest {
                for (t, p) in m.owned.iter() {
                    claims.entry((t.to_owned(), p)).or_default().push(id);
                }
            }
        }
        for ((t, p), by) in claims {
            if let [holder] = by.as_slice() {
                if let Some(to) = owner.get(&(t.clone(), p)) {
                    if to != *holder {
                        problems.push(format!(
                            "{t}-{p} given to {to} while {holder} still owns it (cooperative: it must be revoked first)"
                        ));
                    }
                }
            }
        }
    }
    if !problems.is_empty() {
        return Err(Some(problems.join("; ")));
    }
    // Completeness and Java's answer for range/roundrobin need the partition counts.
    let metadata = match metadata {
        Some(m) => Some(m.clone()),
        None => inferred_metadata(&members, &owner),
    };
    let protocol = round.protocol.as_deref().unwrap_or("");
    let Some(metadata) = metadata else {
        return Ok(format!(
            "{} partitions given, none twice, none to a non-subscriber (partition counts unknown: completeness not judged)",
            owner.len()
        ));
    };
    for (id, m) in &members {
        for t in &m.topics {
            if let Some(info) = metadata.topics.get(t) {
                for p in 0..info.partitions {
                    if !owner.contains_key(&(t.clone(), p)) {
                        problems.push(format!("{t}-{p}, subscribed by {id}, given to nobody"));
                    }
                }
            }
        }
    }
    if protocol == "range" || protocol == "roundrobin" {
        if let Some(assignor) = crate::assignor::builtin(protocol) {
            let group: Vec<GroupMember> = members
                .iter()
                .filter_map(|(id, m)| {
                    m.subscription.clone().map(|s| GroupMember {
                        member_id: (*id).clone(),
                        group_instance_id: m.instance.clone(),
                        subscription: s,
                    })
                })
                .collect();
            if let Ok(java) = assignor.assign(&metadata, &group) {
                for m in &group {
                    let expected = PartitionSet::from_groups(&java.partitions_of(&m.member_id));
                    let got = assignments.get(&m.member_id).cloned().unwrap_or_default();
                    if expected != got {
                        problems.push(format!(
                            "{} got {} where Java's {protocol} gives {}",
                            m.member_id,
                            list(got.iter().map(|(t, p)| (t.to_owned(), p))),
                            list(expected.iter().map(|(t, p)| (t.to_owned(), p)))
                        ));
                    }
                }
            }
        }
    }
    if problems.is_empty() {
        Ok(format!(
            "{} partitions given, each once, only to subscribers{}",
            owner.len(),
            if protocol == "range" || protocol == "roundrobin" { ", equal to Java's answer" } else { "" }
        ))
    } else {
        Err(Some(problems.join("; ")))
    }
}

/// The partition counts the leader's answer implies: a topic whose given partitions are exactly
/// 0..n has n. Any gap leaves the counts unknown (they are then not judged).
fn inferred_metadata(
    members: &BTreeMap<&String, &RoundMember>,
    owner: &BTreeMap<(String, i32), String>,
) -> Option<ClusterMetadata> {
    let mut counts: BTreeMap<String, i32> = BTreeMap::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for (t, p) in owner.keys() {
        let c = counts.entry(t.clone()).or_insert(0);
        *c = (*c).max(p + 1);
        *seen.entry(t.clone()).or_default() += 1;
    }
    for (t, n) in &counts {
        if seen.get(t).copied() != Some(*n as usize) {
            return None;
        }
    }
    // A subscribed topic nobody got: it may not exist or have no metadata; Java skips it too.
    let _ = members;
    Some(ClusterMetadata::from_counts(counts))
}
