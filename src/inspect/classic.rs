//! Classic groups (JoinGroup/SyncGroup) as DescribeGroups returns them.

use bytes::Bytes;

use super::diagnostic::{Diagnostic, DiagnosticKind, PayloadKind, BLOCKS_UPGRADE};
use super::partitions::{describe, grouped, Holders};
use crate::assignor::ClusterMetadata;
use crate::group_api::DescribedGroupMember;
use crate::{
    AssignmentBuf, CooperativeStickyUserData, DecodeError, DecodeOptions, StickyUserData, StickyUserDataFormat,
    SubscriptionBuf, TopicPartitions, Version,
};

/// A classic group as the broker describes it (DescribeGroups), with each member's raw
/// embedded payloads for the group's chosen protocol. The members are
/// [`group_api`](crate::group_api)'s; with the `client` feature, `Client::describe_groups`
/// returns this group in `ClassicGroupDescription::group`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClassicGroup {
    /// The group id.
    pub group_id: String,
    /// The broker's state name: `Stable`, `PreparingRebalance`, `CompletingRebalance`, `Empty`, `Dead`.
    pub state: String,
    /// `consumer` for consumer groups; other values (`connect`, custom) carry payloads this
    /// crate does not decode.
    pub protocol_type: String,
    /// The chosen protocol (the assignor name for consumer groups); empty outside `Stable`.
    pub protocol: String,
    /// The members, in the wire model of DescribeGroups (the one model of a classic group's
    /// member). A member's `member_metadata` is a Subscription for `protocol_type` `consumer`
    /// and its `member_assignment` an Assignment; the broker sends both only while the group is
    /// `Stable`.
    pub members: Vec<DescribedGroupMember>,
}

/// One embedded payload, decoded or not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReportedPayload<T> {
    /// Decoded by Java's reader, or by the lenient reader (then `repair()` says what it repaired).
    Decoded(T),
    /// The broker sent no bytes because the group is not `Stable` (it omits both payloads
    /// during a rebalance).
    NotReported,
    /// Not even the lenient reader decodes it: Java's reader's error and the bytes.
    Undecodable {
        /// What Java's reader (the default options) reports.
        error: DecodeError,
        /// The payload.
        bytes: Bytes,
    },
    /// A payload of another protocol type (Kafka Connect, custom), not decoded.
    Opaque(Bytes),
}

impl<T> ReportedPayload<T> {
    /// The decoded value, if any.
    pub fn decoded(&self) -> Option<&T> {
        match self {
            ReportedPayload::Decoded(value) => Some(value),
            _ => None,
        }
    }
}

/// What a member's subscription userData is, read as the group's chosen assignor writes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UserDataReading {
    /// `cooperative-sticky`'s 4-byte generation, as Java writes it.
    CooperativeSticky(CooperativeStickyUserData),
    /// The KIP-341 sticky layout (previous assignment and, in V1, generation): Java's `sticky`;
    /// also what librdkafka and franz-go write for `cooperative-sticky`.
    Sticky {
        /// The decoded data.
        data: StickyUserData,
        /// The layout it was read with (never `Unreadable` here).
        format: StickyUserDataFormat,
    },
    /// kafka-python's sticky userData: the KIP-341 layout behind a 2-byte version header
    /// that Java's `StickyAssignor` cannot read (it sees no previous assignment).
    KafkaPythonSticky(StickyUserData),
    /// Not the chosen built-in assignor's format: a custom assignor's state (or the assignor
    /// itself is not a built-in one).
    Custom,
}

/// The inspection of one member, in the same position as in [`ClassicGroup::members`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassicMemberReport {
    /// The member's subscription.
    pub subscription: ReportedPayload<SubscriptionBuf>,
    /// The member's assignment.
    pub assignment: ReportedPayload<AssignmentBuf>,
    /// Its subscription's userData read as the chosen assignor's format; `None` when there is
    /// no userData (null or empty) or no decoded subscription.
    pub user_data: Option<UserDataReading>,
}

impl ClassicMemberReport {
    /// The generation the member's claims belong to: the subscription's (v2 and later), else
    /// the sticky assignors' userData; `None` when unknown (`-1` counts as unknown).
    pub fn generation(&self) -> Option<i32> {
        let sub = self.subscription.decoded()?;
        let from_user_data = || match &self.user_data {
            Some(UserDataReading::CooperativeSticky(data)) => Some(data.generation),
            Some(UserDataReading::Sticky { data, .. }) | Some(UserDataReading::KafkaPythonSticky(data)) => {
                data.generation
            }
            _ => None,
        };
        let generation = if sub.view().read_as() >= Version::V2 { Some(sub.view().generation_id()) } else { None };
        generation.or_else(from_user_data).filter(|g| *g >= 0)
    }

    /// The partitions the member holds as it joins: its subscription's owned partitions (v1 and
    /// later). Unlike [`claims`](Self::claims), never the sticky userData's previous assignment:
    /// an eager member revokes everything before it joins, so that list is history for the
    /// assignor's stickiness, not ownership.
    pub fn owned_partitions(&self) -> Vec<TopicPartitions> {
        self.subscription.decoded().map(|sub| sub.view().owned_partitions().to_owned()).unwrap_or_default()
    }

    /// The partitions the member says it owns: the subscription's owned partitions (v1 and
    /// later), else the previous assignment in sticky userData (what a sticky leader takes as
    /// the member's claims).
    pub fn claims(&self) -> Vec<TopicPartitions> {
        let Some(sub) = self.subscription.decoded() else { return Vec::new() };
        let owned = sub.view().owned_partitions();
        if !owned.is_empty() {
            return owned.to_owned();
        }
        match &self.user_data {
            Some(UserDataReading::Sticky { data, .. }) | Some(UserDataReading::KafkaPythonSticky(data)) => {
                data.previous_assignment.clone()
            }
            _ => Vec::new(),
        }
    }
}

/// A classic group, inspected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassicGroupReport {
    /// One report per member, in the order of [`ClassicGroup::members`].
    pub members: Vec<ClassicMemberReport>,
    /// The findings, sorted by kind, then topic, partition and members.
    pub diagnostics: Vec<Diagnostic>,
}

/// The state in which the broker reports the members' payloads.
const STABLE: &str = "Stable";

fn decode_subscription(bytes: &Bytes, stable: bool) -> ReportedPayload<SubscriptionBuf> {
    if bytes.is_empty() && !stable {
        return ReportedPayload::NotReported;
    }
    match SubscriptionBuf::decode(bytes.clone()) {
        Ok(sub) => ReportedPayload::Decoded(sub),
        Err(error) => match SubscriptionBuf::decode_with(bytes.clone(), DecodeOptions::new().lenient(true)) {
            Ok(sub) => ReportedPayload::Decoded(sub),
            Err(_) => ReportedPayload::Undecodable { error, bytes: bytes.clone() },
        },
    }
}

fn decode_assignment(bytes: &Bytes, stable: bool) -> ReportedPayload<AssignmentBuf> {
    if bytes.is_empty() && !stable {
        return ReportedPayload::NotReported;
    }
    match AssignmentBuf::decode(bytes.clone()) {
        Ok(asg) => ReportedPayload::Decoded(asg),
        Err(error) => match AssignmentBuf::decode_with(bytes.clone(), DecodeOptions::new().lenient(true)) {
            Ok(asg) => ReportedPayload::Decoded(asg),
            Err(_) => ReportedPayload::Undecodable { error, bytes: bytes.clone() },
        },
    }
}

fn opaque<T>(bytes: &Bytes, stable: bool) -> ReportedPayload<T> {
    if bytes.is_empty() && !stable {
        ReportedPayload::NotReported
    } else {
        ReportedPayload::Opaque(bytes.clone())
    }
}

/// kafka-python writes sticky userData through its `ApiData.encode()`, which puts a 2-byte
/// version (`00 00` or `00 01`) before the KIP-341 body.
fn kafka_python_sticky(user_data: &[u8]) -> Option<StickyUserData> {
    match user_data {
        [0, 1, body @ ..] => StickyUserData::decode_v1(body).ok(),
        [0, 0, body @ ..] => StickyUserData::decode_v0(body).ok(),
        _ => None,
    }
}

/// Reads userData as the chosen assignor writes it.
fn read_user_data(protocol: &str, user_data: &[u8]) -> UserDataReading {
    let sticky_or_python = |bytes: &[u8]| match StickyUserData::decode_java(bytes) {
        (data, format @ (StickyUserDataFormat::V1 | StickyUserDataFormat::V0)) => {
            UserDataReading::Sticky { data, format }
        }
        _ => kafka_python_sticky(bytes).map_or(UserDataReading::Custom, UserDataReading::KafkaPythonSticky),
    };
    match protocol {
        "cooperative-sticky" if user_data.len() == 4 => match CooperativeStickyUserData::decode(user_data) {
            Ok(data) => UserDataReading::CooperativeSticky(data),
            Err(_) => UserDataReading::Custom,
        },
        // Only the V1 layout: a V0 reading of arbitrary bytes is too easy to hit by chance.
        "cooperative-sticky" => match StickyUserData::decode_v1(user_data) {
            Ok(data) => UserDataReading::Sticky { data, format: StickyUserDataFormat::V1 },
            Err(_) => {
                kafka_python_sticky(user_data).map_or(UserDataReading::Custom, UserDataReading::KafkaPythonSticky)
            }
        },
        "sticky" => sticky_or_python(user_data),
        _ => UserDataReading::Custom,
    }
}

fn inspect_member(member: &DescribedGroupMember, protocol: &str, stable: bool) -> ClassicMemberReport {
    let subscription = decode_subscription(&member.member_metadata, stable);
    let assignment = decode_assignment(&member.member_assignment, stable);
    let user_data = subscription
        .decoded()
        .and_then(|s| s.view().user_data())
        .filter(|u| !u.is_empty())
        .map(|u| read_user_data(protocol, u));
    ClassicMemberReport { subscription, assignment, user_data }
}

/// Names a member in messages: its id, and its client id when that says more.
fn who(member: &DescribedGroupMember) -> String {
    if member.client_id.is_empty() || member.member_id.starts_with(&member.client_id) {
        member.member_id.clone()
    } else {
        format!("{} (client {})", member.member_id, member.client_id)
    }
}

fn payload_findings(group: &ClassicGroup, reports: &[ClassicMemberReport], out: &mut Vec<Diagnostic>) {
    for (member, report) in group.members.iter().zip(reports) {
        let undecodable = [
            (
                PayloadKind::Subscription,
                match &report.subscription {
                    ReportedPayload::Undecodable { error, bytes } => Some((error, bytes)),
                    _ => None,
                },
            ),
            (
                PayloadKind::Assignment,
                match &report.assignment {
                    ReportedPayload::Undecodable { error, bytes } => Some((error, bytes)),
                    _ => None,
                },
            ),
        ];
        for (kind, found) in undecodable {
            let Some((error, bytes)) = found else { continue };
            let what = if bytes.is_empty() {
                format!("{}'s {} is empty", who(member), kind.as_str())
            } else {
                format!("{}'s {} does not decode ({error})", who(member), kind.as_str())
            };
            let mut d = Diagnostic::new(
                DiagnosticKind::UndecodablePayload,
                format!(
                    "{what}; {BLOCKS_UPGRADE}: the broker must read every member's {} to convert the group",
                    kind.as_str()
                ),
            )
            .members([&member.member_id])
            .blocking();
            d.payload = Some(kind);
            out.push(d);
        }
        let repairs = [
            (PayloadKind::Subscription, report.subscription.decoded().and_then(|s| s.view().repair())),
            (PayloadKind::Assignment, report.assignment.decoded().and_then(|a| a.view().repair())),
        ];
        for (kind, repair) in repairs {
            let Some(repair) = repair else { continue };
            let mut d = Diagnostic::new(
                DiagnosticKind::ThirdPartyDefect,
                format!(
                    "{}'s {} is malformed: Java's reader rejects it, only the lenient reader accepts it ({repair}); \
                     {BLOCKS_UPGRADE}: the broker reads it as Java does",
                    who(member),
                    kind.as_str()
                ),
            )
            .members([&member.member_id])
            .blocking();
            d.payload = Some(kind);
            d.repair = Some(repair.to_string());
            out.push(d);
        }
        match &report.user_data {
            Some(UserDataReading::KafkaPythonSticky(_)) => {
                let mut d = Diagnostic::new(
                    DiagnosticKind::ThirdPartyDefect,
                    format!(
                        "{}'s sticky userData has a 2-byte version header before the KIP-341 layout \
                         (kafka-python's StickyPartitionAssignor): Java's sticky leader cannot read it and \
                         forgets this member's previous assignment",
                        who(member)
                    ),
                )
                .members([&member.member_id]);
                d.payload = Some(PayloadKind::UserData);
                d.repair = Some("kafka-python sticky userData: 2-byte version header skipped".to_owned());
                out.push(d);
            }
            Some(UserDataReading::Custom) => {
                let len = report.subscription.decoded().and_then(|s| s.user_data()).map_or(0, |u| u.len());
                let mut d = Diagnostic::new(
                    DiagnosticKind::CustomUserData,
                    format!(
                        "{} sends {len} bytes of userData that are not the {} assignor's format; \
                         {BLOCKS_UPGRADE}: the broker's assignors never see userData, so the assignor's state is lost",
                        who(member),
                        if group.protocol.is_empty() { "chosen" } else { &group.protocol }
                    ),
                )
                .members([&member.member_id])
                .blocking();
                d.payload = Some(PayloadKind::UserData);
                out.push(d);
            }
            _ => {}
        }
    }
}

fn partition_findings(
    group: &ClassicGroup,
    reports: &[ClassicMemberReport],
    metadata: &ClusterMetadata,
    out: &mut Vec<Diagnostic>,
) {
    let claims: Vec<Vec<TopicPartitions>> = reports.iter().map(ClassicMemberReport::claims).collect();
    // Hand-overs are judged on what members hold, not on sticky userData's history.
    let owned: Vec<Vec<TopicPartitions>> = reports.iter().map(ClassicMemberReport::owned_partitions).collect();
    let assigned: Vec<Vec<TopicPartitions>> = reports
        .iter()
        .map(|r| r.assignment.decoded().map(|a| a.view().assigned_partitions().to_owned()).unwrap_or_default())
        .collect();
    // Members in member-id order, so every member list below is the same whatever order the
    // broker listed them in.
    let mut order: Vec<usize> = (0..reports.len()).collect();
    order.sort_by(|&a, &b| group.members[a].member_id.cmp(&group.members[b].member_id));
    let mut owners = Holders::default();
    for &i in &order {
        for g in &owned[i] {
            for &p in &g.partitions {
                owners.add(i, &g.topic, p);
            }
        }
    }
    let mut assignees = Holders::default();
    for &i in &order {
        for g in &assigned[i] {
            for &p in &g.partitions {
                assignees.add(i, &g.topic, p);
            }
        }
    }
    let id = |i: usize| group.members[i].member_id.as_str();

    for (&(topic, partition), holders) in &assignees.by_partition {
        if holders.len() < 2 {
            continue;
        }
        // Holders are in member-id order with each member's entries adjacent.
        let mut distinct: Vec<usize> = holders.clone();
        distinct.dedup();
        let message = if distinct.len() == 1 {
            format!("{topic}-{partition} is listed {} times in {}'s assignment", holders.len(), id(distinct[0]))
        } else {
            let names: Vec<&str> = distinct.iter().map(|&i| id(i)).collect();
            format!("{topic}-{partition} is assigned to {} members: {}", distinct.len(), names.join(", "))
        };
        out.push(
            Diagnostic::new(DiagnosticKind::DoubleAssignment, message)
                .partition(topic, partition)
                .members(distinct.iter().map(|&i| id(i)))
                .blocking(),
        );
    }

    for (&(topic, partition), claimants) in &owners.by_partition {
        let others: Vec<usize> =
            assignees.get(topic, partition).iter().copied().filter(|a| !claimants.contains(a)).collect();
        if others.is_empty() {
            continue;
        }
        let mut members: Vec<usize> = claimants.clone();
        members.dedup();
        let claim_names: Vec<&str> = members.iter().map(|&i| id(i)).collect();
        let assignee_names: Vec<&str> = others.iter().map(|&i| id(i)).collect();
        members.extend(&others);
        out.push(
            Diagnostic::new(
                DiagnosticKind::PendingRevocation,
                format!(
                    "{topic}-{partition} is owned by {}, assigned to {}",
                    claim_names.join(", "),
                    assignee_names.join(", ")
                ),
            )
            .partition(topic, partition)
            .members(members.iter().map(|&i| id(i))),
        );
    }

    // Partitions beyond the topic's count: claims (KAFKA-21674) and assignments.
    beyond_partition_count(
        &claims,
        metadata,
        &id,
        DiagnosticKind::ClaimBeyondPartitionCount,
        out,
        |who, shown, topic, count| {
            format!(
                "{who} claims {shown} but {topic} has {count} partitions: Java's sticky assignors can then hand a \
                 partition to two members (KAFKA-21674)"
            )
        },
    );
    beyond_partition_count(
        &assigned,
        metadata,
        &id,
        DiagnosticKind::AssignmentBeyondPartitionCount,
        out,
        |who, shown, topic, count| format!("{who} is assigned {shown} but {topic} has {count} partitions"),
    );

    // Subscribed topics: unknown ones, and (stable groups whose every assignment decoded)
    // partitions nobody is assigned.
    let mut subscribers: std::collections::BTreeMap<&str, Vec<usize>> = std::collections::BTreeMap::new();
    for &i in &order {
        if let Some(sub) = reports[i].subscription.decoded() {
            for topic in sub.view().topics().iter() {
                subscribers.entry(topic).or_default().push(i);
            }
        }
    }
    let all_assignments_known = reports.iter().all(|r| r.assignment.decoded().is_some());
    for (topic, members) in &subscribers {
        let names: Vec<&str> = members.iter().map(|&i| id(i)).collect();
        let Some(info) = metadata.topics.get(*topic) else {
            out.push(
                Diagnostic::new(
                    DiagnosticKind::UnknownTopic,
                    format!("{topic} is subscribed by {} but not in the cluster's metadata", names.join(", ")),
                )
                .members(&names),
            );
            if let Some(last) = out.last_mut() {
                last.topic = Some((*topic).to_owned());
            }
            continue;
        };
        if group.state != STABLE || !all_assignments_known {
            continue;
        }
        let nobody: Vec<i32> = (0..info.partitions.max(0)).filter(|&p| assignees.get(topic, p).is_empty()).collect();
        if nobody.is_empty() {
            continue;
        }
        let claimed: Vec<String> = nobody
            .iter()
            .filter_map(|&p| {
                let c = owners.get(topic, p);
                (!c.is_empty()).then(|| format!("{topic}-{p} by {}", id(c[0])))
            })
            .collect();
        let mut message = format!(
            "{} of {} partitions of {topic} are assigned to nobody ({}); subscribed by {}",
            nobody.len(),
            info.partitions,
            describe(&[TopicPartitions::new(*topic, nobody.clone())]),
            names.join(", ")
        );
        if !claimed.is_empty() {
            message.push_str(&format!(
                "; still claimed: {} (a cooperative hand-over: assigned once revoked)",
                claimed.join(", ")
            ));
        }
        out.push(
            Diagnostic::new(DiagnosticKind::UnassignedPartition, message)
                .topic_partitions(topic, nobody)
                .members(&names),
        );
    }
}

/// One `kind` finding per member and topic for the partitions of `lists[member]` (its claims or
/// its assignment) that the topic does not have; `message(member, partitions, topic, count)`
/// words it. Topics missing from the metadata are left to the unknown-topic finding.
fn beyond_partition_count<'g>(
    lists: &[Vec<TopicPartitions>],
    metadata: &ClusterMetadata,
    id: &impl Fn(usize) -> &'g str,
    kind: DiagnosticKind,
    out: &mut Vec<Diagnostic>,
    message: impl Fn(&str, &str, &str, i32) -> String,
) {
    for (i, groups) in lists.iter().enumerate() {
        for g in groups {
            let Some(info) = metadata.topics.get(&g.topic) else { continue };
            let beyond: Vec<i32> = g.partitions.iter().copied().filter(|&p| p < 0 || p >= info.partitions).collect();
            if beyond.is_empty() {
                continue;
            }
            let shown = describe(&[TopicPartitions::new(g.topic.clone(), beyond.clone())]);
            out.push(
                Diagnostic::new(kind, message(id(i), &shown, &g.topic, info.partitions))
                    .topic_partitions(&g.topic, beyond)
                    .members([id(i)]),
            );
        }
    }
}

fn generation_findings(group: &ClassicGroup, reports: &[ClassicMemberReport], out: &mut Vec<Diagnostic>) {
    let newest = reports.iter().filter_map(ClassicMemberReport::generation).max();
    let Some(newest) = newest else { return };
    for (member, report) in group.members.iter().zip(reports) {
        let claims = report.claims();
        if claims.is_empty() {
            continue;
        }
        let generation = report.generation();
        if generation.is_some_and(|g| g >= newest) {
            continue;
        }
        let from = generation.map_or_else(|| "no generation".to_owned(), |g| format!("generation {g}"));
        let mut d = Diagnostic::new(
            DiagnosticKind::StaleGeneration,
            format!(
                "{} claims {} from {from}, other members from generation {newest}: a sticky leader disregards \
                 its claims",
                who(member),
                describe(&claims)
            ),
        )
        .members([&member.member_id]);
        d.partitions = grouped(claims.iter().flat_map(|g| g.partitions.iter().map(move |&p| (g.topic.as_str(), p))));
        out.push(d);
    }
}

/// Decodes every member's payloads and computes the group's diagnostics.
///
/// `metadata` must hold every subscribed topic that exists (partition counts; racks are not
/// needed). Payloads are read as Apache Kafka's Java client reads them; one that Java rejects
/// but the lenient reader accepts is shown decoded with a `third_party_defect` finding. Groups
/// whose protocol type is not `consumer` are not decoded ([`ReportedPayload::Opaque`]) and have no
/// findings. Deterministic: the same input gives the same report.
pub fn inspect_classic(group: &ClassicGroup, metadata: &ClusterMetadata) -> ClassicGroupReport {
    let stable = group.state == STABLE;
    if group.protocol_type != "consumer" {
        let members = group
            .members
            .iter()
            .map(|m| ClassicMemberReport {
                subscription: opaque(&m.member_metadata, stable),
                assignment: opaque(&m.member_assignment, stable),
                user_data: None,
            })
            .collect();
        return ClassicGroupReport { members, diagnostics: Vec::new() };
    }
    let reports: Vec<ClassicMemberReport> =
        group.members.iter().map(|m| inspect_member(m, &group.protocol, stable)).collect();
    let mut diagnostics = Vec::new();
    partition_findings(group, &reports, metadata, &mut diagnostics);
    generation_findings(group, &reports, &mut diagnostics);
    payload_findings(group, &reports, &mut diagnostics);
    diagnostics.sort();
    diagnostics.dedup();
    ClassicGroupReport { members: reports, diagnostics }
}
