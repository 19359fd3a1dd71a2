//! Unit tests of the member coordinator: every error code and both callback orders, after
//! KIP-429 and Java's `ConsumerCoordinatorTest` / `AbstractCoordinatorTest`.

use super::*;
use crate::assignor::leader::COOPERATIVE_STICKY;
use crate::assignor::{AssignError, ClusterMetadata, GroupMember, PendingPartition};
use crate::{Assignment, SubscriptionView};

/// A `(topic, partition)` pair.
type Tp = (String, i32);

/// Pairs grouped per topic, sorted, as the coordinator lists them.
fn group_partitions<'a>(pairs: impl IntoIterator<Item = &'a Tp>) -> Vec<TopicPartitions> {
    pairs.into_iter().map(|(t, p)| (t.as_str(), *p)).collect::<PartitionSet>().to_groups()
}
use RebalanceProtocol::{Cooperative, Eager};

type Plan = Box<dyn Fn(&[GroupMember]) -> BTreeMap<String, Vec<Tp>> + Send>;

/// An assignor whose output is a closure over the members.
struct TestAssignor {
    name: &'static str,
    protocols: Vec<RebalanceProtocol>,
    plan: Plan,
}

impl PartitionAssignor for TestAssignor {
    fn name(&self) -> &str {
        self.name
    }
    fn supported_protocols(&self) -> &[RebalanceProtocol] {
        &self.protocols
    }
    fn subscription_user_data(&self, _topics: &[String]) -> Option<Bytes> {
        Some(Bytes::from_static(b"ud"))
    }
    fn assign(&self, _md: &ClusterMetadata, members: &[GroupMember]) -> Result<GroupAssignment, AssignError> {
        let mut out = GroupAssignment::default();
        for (m, parts) in (self.plan)(members) {
            out.insert(m, &Assignment::new(group_partitions(&parts)));
        }
        Ok(out)
    }
}

fn assignor(name: &'static str, protocols: &[RebalanceProtocol]) -> Box<dyn PartitionAssignor> {
    Box::new(TestAssignor { name, protocols: protocols.to_vec(), plan: Box::new(|_| BTreeMap::new()) })
}

fn tp(t: &str, p: i32) -> Tp {
    (t.to_string(), p)
}

fn enc(parts: &[(&str, i32)]) -> Bytes {
    let set: BTreeSet<Tp> = parts.iter().map(|(t, p)| tp(t, *p)).collect();
    Bytes::from(Assignment::new(group_partitions(&set)).encode(Version::V3).unwrap())
}

fn parts(v: &[(&str, i32)]) -> Vec<TopicPartitions> {
    group_partitions(&v.iter().map(|(t, p)| tp(t, *p)).collect::<BTreeSet<_>>())
}

struct H {
    c: Coordinator,
    now: u64,
}

impl H {
    fn new(assignors: Vec<Box<dyn PartitionAssignor>>, instance: Option<&str>) -> H {
        let mut config = Config::new("g");
        config.group_instance_id = instance.map(str::to_string);
        config.client_rack = Some("r1".into());
        let mut c = Coordinator::new(config, assignors, 0).unwrap();
        c.update_metadata(0, ClusterMetadata::from_counts([("t", 4), ("u", 2)]));
        c.subscribe(0, ["t"]);
        H { c, now: 0 }
    }
    fn follower_topics(protocol: RebalanceProtocol, topics: &[&str]) -> H {
        let list: &[RebalanceProtocol] = if protocol == Eager { &[Eager] } else { &[Cooperative, Eager] };
        let mut c = Coordinator::new(Config::new("g"), vec![assignor("x", list)], 0).unwrap();
        c.update_metadata(0, ClusterMetadata::from_counts([("t", 4), ("u", 2)]));
        c.subscribe(0, topics.iter().copied());
        H { c, now: 0 }
    }
    fn follower(protocol: RebalanceProtocol) -> H {
        let list: &[RebalanceProtocol] = if protocol == Eager { &[Eager] } else { &[Cooperative, Eager] };
        H::new(vec![assignor("x", list)], None)
    }
    fn events(&mut self) -> Vec<Event> {
        std::iter::from_fn(|| self.c.poll_event()).collect()
    }
    /// The next non-heartbeat request.
    fn req(&mut self) -> Transmit {
        loop {
            let t = self.c.poll_request(self.now).expect("a request");
            if !matches!(t.request, Request::Heartbeat(_)) {
                return t;
            }
        }
    }
    fn no_join(&mut self) {
        while let Some(t) = self.c.poll_request(self.now) {
            assert!(matches!(t.request, Request::Heartbeat(_)), "unexpected {t:?}");
        }
    }
    fn join_ok(&mut self, generation: i32, member: &str) -> Transmit {
        let t = self.req();
        assert!(matches!(t.request, Request::JoinGroup(_)), "{t:?}");
        self.now += 1;
        self.answer_join(t, generation, member)
    }
    /// Answers `join` as a follower of generation `generation` ("other" leads); the SyncGroup.
    fn answer_join(&mut self, join: Transmit, generation: i32, member: &str) -> Transmit {
        self.c.handle_response(
            self.now,
            join.id,
            Response::JoinGroup(JoinGroupResponse {
                generation_id: generation,
                member_id: member.into(),
                leader: "other".into(),
                protocol_name: Some("x".into()),
                protocol_type: Some("consumer".into()),
                ..Default::default()
            }),
        );
        let s = self.req();
        assert!(matches!(s.request, Request::SyncGroup(_)), "{s:?}");
        s
    }
    fn sync_ok(&mut self, sync: Transmit, assigned: &[(&str, i32)]) {
        self.now += 1;
        self.c.handle_response(
            self.now,
            sync.id,
            Response::SyncGroup(SyncGroupResponse { assignment: enc(assigned), ..Default::default() }),
        );
    }
    fn rebalance(&mut self, generation: i32, assigned: &[(&str, i32)]) -> Vec<Event> {
        let s = self.join_ok(generation, "m1");
        self.sync_ok(s, assigned);
        self.events()
    }
    fn heartbeat(&mut self, error: ErrorCode) {
        self.now += self.c.config().heartbeat_interval_ms;
        let t = loop {
            let t = self.c.poll_request(self.now).expect("heartbeat");
            if matches!(t.request, Request::Heartbeat(_)) {
                break t;
            }
        };
        self.c.handle_response(self.now, t.id, Response::Heartbeat(HeartbeatResponse { error }));
    }
}

fn join_req(t: &Transmit) -> &JoinGroupRequest {
    match &t.request {
        Request::JoinGroup(j) => j,
        other => panic!("not a JoinGroup: {other:?}"),
    }
}

#[test]
fn select_rebalance_protocol_like_java() {
    let err = Coordinator::new(Config::new("g"), vec![assignor("e", &[Eager]), assignor("c", &[Cooperative])], 0);
    assert!(matches!(err, Err(CoordinatorError::NoCommonProtocol(_))));
    assert!(matches!(Coordinator::new(Config::new("g"), vec![], 0), Err(CoordinatorError::NoAssignors)));
    let c = Coordinator::new(
        Config::new("g"),
        vec![assignor("a", &[Eager, Cooperative]), assignor("b", &[Cooperative, Eager])],
        0,
    )
    .unwrap();
    assert_eq!(c.protocol(), Cooperative);
}

#[test]
fn join_group_lists_every_assignor_with_its_own_subscription() {
    let mut h = H::new(vec![assignor("first", &[Cooperative, Eager]), assignor("second", &[Eager])], Some("i1"));
    let t = h.req();
    let j = join_req(&t);
    assert_eq!(j.protocols.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(), ["first", "second"]);
    assert_eq!(j.group_instance_id.as_deref(), Some("i1"));
    assert_eq!(j.protocol_type, "consumer");
    let sub = Subscription::decode(&j.protocols[0].metadata).unwrap();
    assert_eq!(SubscriptionView::decode(&j.protocols[0].metadata).unwrap().version(), 3);
    assert_eq!(sub.topics, ["t"]);
    assert_eq!(sub.user_data.as_deref(), Some(&b"ud"[..]));
    assert_eq!((sub.generation_id, sub.rack_id.as_deref()), (-1, Some("r1")));
    assert_eq!(h.c.protocol(), Eager);
}

#[test]
fn member_id_required_adopts_the_id_and_rejoins_at_once() {
    let mut h = H::follower(Eager);
    let t = h.req();
    assert_eq!(join_req(&t).member_id, "");
    h.c.handle_response(
        1,
        t.id,
        Response::JoinGroup(JoinGroupResponse {
            error: ErrorCode::MEMBER_ID_REQUIRED,
            member_id: "given".into(),
            ..Default::default()
        }),
    );
    let t = h.req();
    assert_eq!(join_req(&t).member_id, "given");
    // No listener callback for this round trip; it counts as a failed rebalance attempt.
    assert!(h.events().iter().all(|e| !matches!(e, Event::PartitionsLost(_))));
    assert_eq!(h.c.metrics().failed_rebalance_total(), 1);
}

#[test]
fn eager_callback_order_revoke_all_before_join_then_assignment_then_assigned() {
    let mut h = H::follower(Eager);
    let ev = h.rebalance(1, &[("t", 0), ("t", 1)]);
    assert_eq!(
        ev,
        [
            Event::PartitionsRevoked(vec![]), // eager revokes even an empty set... only once joined
            Event::Assignment { generation_id: 1, assignor: "x".into(), partitions: parts(&[("t", 0), ("t", 1)]) },
            Event::PartitionsAssigned(parts(&[("t", 0), ("t", 1)])),
        ][1..]
    );
    h.heartbeat(ErrorCode::REBALANCE_IN_PROGRESS);
    // Before the JoinGroup: revoke everything.
    let ev = h.events();
    assert_eq!(ev, [Event::PartitionsRevoked(parts(&[("t", 0), ("t", 1)]))]);
    assert!(h.c.owned().is_empty());
    let j = h.req();
    assert!(Subscription::decode(&join_req(&j).protocols[0].metadata).unwrap().owned_partitions.is_empty());
    let s = h.answer_join(j, 2, "m1");
    h.sync_ok(s, &[("t", 1), ("t", 2)]);
    // Eager: onPartitionsAssigned gets the full assignment (overlapping the revoked set).
    assert_eq!(
        h.events(),
        [
            Event::Assignment { generation_id: 2, assignor: "x".into(), partitions: parts(&[("t", 1), ("t", 2)]) },
            Event::PartitionsAssigned(parts(&[("t", 1), ("t", 2)])),
        ]
    );
}

#[test]
fn eager_revoke_fires_even_when_nothing_is_owned() {
    let mut h = H::follower(Eager);
    h.rebalance(1, &[]);
    h.heartbeat(ErrorCode::REBALANCE_IN_PROGRESS);
    assert_eq!(h.events(), [Event::PartitionsRevoked(vec![])]);
}

#[test]
fn cooperative_callback_order_revoke_moved_then_assignment_then_added_then_rejoin() {
    let mut h = H::follower(Cooperative);
    h.rebalance(1, &[("t", 0), ("t", 1)]);
    h.heartbeat(ErrorCode::REBALANCE_IN_PROGRESS);
    // Nothing revoked before the JoinGroup; owned partitions are claimed in it.
    assert!(h.events().is_empty());
    let s = {
        let j = h.req();
        let sub = Subscription::decode(&join_req(&j).protocols[0].metadata).unwrap();
        assert_eq!(sub.owned_partitions, parts(&[("t", 0), ("t", 1)]));
        assert_eq!(sub.generation_id, 1);
        h.answer_join(j, 2, "m1")
    };
    h.sync_ok(s, &[("t", 1), ("t", 3)]);
    assert_eq!(
        h.events(),
        [
            Event::PartitionsRevoked(parts(&[("t", 0)])),
            Event::Assignment { generation_id: 2, assignor: "x".into(), partitions: parts(&[("t", 1), ("t", 3)]) },
            Event::PartitionsAssigned(parts(&[("t", 3)])),
        ]
    );
    // Revoked something: rejoin at once for the follow-up rebalance.
    let j = h.req();
    assert_eq!(join_req(&j).reason.as_deref(), Some("need to revoke partitions and re-join"));
    // The follow-up keeps everything: assigned still fires, empty.
    let s = h.answer_join(j, 3, "m1");
    h.sync_ok(s, &[("t", 1), ("t", 3)]);
    let ev = h.events();
    assert_eq!(ev.last(), Some(&Event::PartitionsAssigned(vec![])));
    assert!(!ev.iter().any(|e| matches!(e, Event::PartitionsRevoked(_))));
    h.no_join();
}

#[test]
fn unknown_member_id_on_sync_loses_everything_and_resets_the_member_id() {
    let mut h = H::follower(Cooperative);
    h.rebalance(1, &[("t", 0)]);
    h.heartbeat(ErrorCode::REBALANCE_IN_PROGRESS);
    let s = h.join_ok(2, "m1");
    h.c.handle_response(
        h.now,
        s.id,
        Response::SyncGroup(SyncGroupResponse { error: ErrorCode::UNKNOWN_MEMBER_ID, ..Default::default() }),
    );
    assert_eq!(h.events(), [Event::PartitionsLost(parts(&[("t", 0)]))]);
    assert_eq!((h.c.generation(), h.c.member_id()), (-1, ""));
    let j = h.req();
    let sub = Subscription::decode(&join_req(&j).protocols[0].metadata).unwrap();
    assert_eq!((join_req(&j).member_id.as_str(), sub.generation_id), ("", -1));
    assert!(sub.owned_partitions.is_empty());
}

#[test]
fn illegal_generation_on_heartbeat_keeps_the_member_id() {
    let mut h = H::follower(Cooperative);
    h.rebalance(1, &[("t", 0), ("t", 2)]);
    h.heartbeat(ErrorCode::ILLEGAL_GENERATION);
    assert_eq!(h.events(), [Event::PartitionsLost(parts(&[("t", 0), ("t", 2)]))]);
    assert_eq!((h.c.generation(), h.c.member_id()), (-1, "m1"));
    let j = h.req();
    assert_eq!(join_req(&j).member_id, "m1");
}

#[test]
fn illegal_generation_on_sync_keeps_the_member_id() {
    let mut h = H::follower(Eager);
    h.rebalance(1, &[]);
    h.heartbeat(ErrorCode::REBALANCE_IN_PROGRESS);
    h.events();
    let s = h.join_ok(2, "m1");
    h.c.handle_response(
        h.now,
        s.id,
        Response::SyncGroup(SyncGroupResponse { error: ErrorCode::ILLEGAL_GENERATION, ..Default::default() }),
    );
    assert_eq!((h.c.generation(), h.c.member_id()), (-1, "m1"));
    assert_eq!(join_req(&h.req()).member_id, "m1");
}

#[test]
fn rebalance_in_progress_on_sync_rejoins_without_reset_and_keeps_owned() {
    let mut h = H::follower(Cooperative);
    h.rebalance(1, &[("t", 0)]);
    h.heartbeat(ErrorCode::REBALANCE_IN_PROGRESS);
    let s = h.join_ok(2, "m1");
    h.c.handle_response(
        h.now,
        s.id,
        Response::SyncGroup(SyncGroupResponse { error: ErrorCode::REBALANCE_IN_PROGRESS, ..Default::default() }),
    );
    assert!(h.events().is_empty());
    let j = h.req();
    let sub = Subscription::decode(&join_req(&j).protocols[0].metadata).unwrap();
    // KAFKA-13419: stale owned partitions with the generation of the last join.
    assert_eq!(sub.owned_partitions, parts(&[("t", 0)]));
    assert_eq!((join_req(&j).member_id.as_str(), sub.generation_id), ("m1", 2));
}

#[test]
fn rebalance_in_progress_on_join_retries_at_once() {
    let mut h = H::follower(Eager);
    let j = h.req();
    h.c.handle_response(
        1,
        j.id,
        Response::JoinGroup(JoinGroupResponse { error: ErrorCode::REBALANCE_IN_PROGRESS, ..Default::default() }),
    );
    assert!(matches!(h.req().request, Request::JoinGroup(_)));
}

#[test]
fn unknown_member_id_on_join_resets_and_rejoins() {
    let mut h = H::follower(Eager);
    h.rebalance(1, &[]);
    h.heartbeat(ErrorCode::REBALANCE_IN_PROGRESS);
    let j = h.req();
    h.c.handle_response(
        h.now,
        j.id,
        Response::JoinGroup(JoinGroupResponse { error: ErrorCode::UNKNOWN_MEMBER_ID, ..Default::default() }),
    );
    assert_eq!(h.c.member_id(), "");
    assert_eq!(join_req(&h.req()).member_id, "");
}

#[test]
fn fenced_instance_id_is_fatal() {
    let mut h = H::new(vec![assignor("x", &[Cooperative])], Some("static-1"));
    h.rebalance(1, &[("t", 0)]);
    h.heartbeat(ErrorCode::FENCED_INSTANCE_ID);
    let ev = h.events();
    assert_eq!(ev[0], Event::PartitionsLost(parts(&[("t", 0)])));
    assert!(matches!(&ev[1], Event::Fatal(CoordinatorError::Broker { error: ErrorCode::FENCED_INSTANCE_ID, .. })));
    assert_eq!(h.c.state(), State::Fatal);
    assert!(h.c.poll_request(h.now + 100_000).is_none());
    assert!(h.c.poll_timeout().is_none());
}

#[test]
fn fenced_instance_id_on_join_and_inconsistent_protocol_are_fatal() {
    for error in
        [ErrorCode::FENCED_INSTANCE_ID, ErrorCode::INCONSISTENT_GROUP_PROTOCOL, ErrorCode::GROUP_AUTHORIZATION_FAILED]
    {
        let mut h = H::follower(Eager);
        let j = h.req();
        h.c.handle_response(1, j.id, Response::JoinGroup(JoinGroupResponse { error, ..Default::default() }));
        assert!(matches!(h.events().last(), Some(Event::Fatal(_))), "{error}");
        assert_eq!(h.c.state(), State::Fatal);
    }
}

#[test]
fn coordinator_errors_back_off_then_retry() {
    let mut h = H::follower(Eager);
    let j = h.req();
    h.c.handle_response(
        10,
        j.id,
        Response::JoinGroup(JoinGroupResponse { error: ErrorCode::COORDINATOR_NOT_AVAILABLE, ..Default::default() }),
    );
    assert!(h.c.poll_request(10).is_none());
    assert_eq!(h.c.poll_timeout(), Some(110));
    h.c.handle_timeout(110);
    assert!(matches!(h.c.poll_request(110).unwrap().request, Request::JoinGroup(_)));
}

#[test]
fn errors_for_a_generation_that_already_changed_are_ignored() {
    let mut h = H::follower(Cooperative);
    h.rebalance(1, &[("t", 0)]);
    // A heartbeat for generation 1 is in flight when generation 2 completes.
    h.now += 3_000;
    let hb = loop {
        let t = h.c.poll_request(h.now).unwrap();
        if matches!(t.request, Request::Heartbeat(_)) {
            break t;
        }
    };
    h.c.request_rejoin("test");
    let s = h.join_ok(2, "m1");
    h.sync_ok(s, &[("t", 0)]);
    h.events();
    h.c.handle_response(h.now, hb.id, Response::Heartbeat(HeartbeatResponse { error: ErrorCode::UNKNOWN_MEMBER_ID }));
    assert!(h.events().is_empty());
    assert_eq!((h.c.generation(), h.c.member_id(), h.c.state()), (2, "m1", State::Stable));
}

#[test]
fn heartbeat_rebalance_in_progress_is_ignored_unless_stable() {
    let mut h = H::follower(Cooperative);
    h.rebalance(1, &[]);
    h.c.request_rejoin("test");
    let j = h.req(); // JoinGroup in flight: PreparingRebalance
    let _ = j;
    h.heartbeat(ErrorCode::REBALANCE_IN_PROGRESS);
    assert_eq!(h.c.state(), State::PreparingRebalance);
    h.no_join();
}

#[test]
fn session_timeout_without_heartbeat_responses_loses_partitions() {
    let mut h = H::follower(Cooperative);
    h.rebalance(1, &[("t", 1)]);
    let deadline = h.c.poll_timeout().unwrap();
    assert!(deadline <= h.now + 45_000);
    h.c.handle_timeout(h.now + 45_000);
    assert_eq!(h.events(), [Event::PartitionsLost(parts(&[("t", 1)]))]);
    assert_eq!(h.c.member_id(), "");
}

#[test]
fn cooperative_subscription_change_revokes_only_dropped_topics_before_joining() {
    let mut h = H::follower_topics(Cooperative, &["t", "u"]);
    h.rebalance(1, &[("t", 0), ("u", 1)]);
    h.c.subscribe(h.now, ["t"]);
    assert_eq!(h.events(), [Event::PartitionsRevoked(parts(&[("u", 1)]))]);
    let j = h.req();
    let sub = Subscription::decode(&join_req(&j).protocols[0].metadata).unwrap();
    assert_eq!(sub.owned_partitions, parts(&[("t", 0)]));
}

#[test]
fn eager_subscription_change_revokes_everything() {
    let mut h = H::follower_topics(Eager, &["t", "u"]);
    h.rebalance(1, &[("t", 0), ("u", 1)]);
    h.c.subscribe(h.now, ["t"]);
    assert_eq!(h.events(), [Event::PartitionsRevoked(parts(&[("t", 0), ("u", 1)]))]);
}

#[test]
fn assignment_for_an_outdated_subscription_triggers_a_rejoin_without_callbacks() {
    let mut h = H::follower(Cooperative);
    let s = h.join_ok(1, "m1");
    h.c.subscribe(h.now, ["u"]);
    h.sync_ok(s, &[("t", 0)]);
    assert!(h.events().is_empty());
    assert!(h.c.owned().is_empty());
    assert!(h.c.rejoin_needed() || matches!(h.req().request, Request::JoinGroup(_)));
}

#[test]
fn vanished_partitions_are_lost_when_metadata_changes() {
    let mut h = H::follower(Cooperative);
    h.rebalance(1, &[("t", 0), ("t", 3)]);
    h.c.update_metadata(h.now, ClusterMetadata::from_counts([("t", 2)]));
    assert_eq!(h.events(), [Event::PartitionsLost(parts(&[("t", 3)]))]);
    assert_eq!(h.c.owned().len(), 1);
}

#[test]
fn leave_sends_leave_group_for_dynamic_members_only() {
    let mut h = H::follower(Cooperative);
    h.rebalance(1, &[("t", 0)]);
    h.c.leave(h.now);
    assert_eq!(h.events(), [Event::PartitionsRevoked(parts(&[("t", 0)]))]);
    let t = h.c.poll_request(h.now).unwrap();
    assert!(matches!(&t.request, Request::LeaveGroup(l) if l.member_id == "m1"));
    let mut s = H::new(vec![assignor("x", &[Cooperative])], Some("static-1"));
    s.rebalance(1, &[("t", 0)]);
    s.c.leave(s.now);
    assert!(s.c.poll_request(s.now).is_none(), "static members never send LeaveGroup");
}

fn leader_round(h: &mut H, name: &str, members: Vec<(&str, Vec<Tp>)>) -> (Option<Transmit>, Vec<Event>) {
    let ev = join_as_leader(h, name, &["t"], members);
    (h.c.poll_request(h.now), ev)
}

/// Answers the pending JoinGroup making m1 the leader of generation 2, every member subscribed
/// to `topics` and claiming `owned` at generation 1; the events it produced.
fn join_as_leader(h: &mut H, name: &str, topics: &[&str], members: Vec<(&str, Vec<Tp>)>) -> Vec<Event> {
    let j = h.req();
    let metadata = |owned: &Vec<Tp>| {
        let sub = Subscription {
            topics: topics.iter().map(|t| t.to_string()).collect(),
            owned_partitions: group_partitions(owned),
            generation_id: 1,
            ..Subscription::default()
        };
        Bytes::from(sub.encode(Version::V3).unwrap())
    };
    let members = members
        .iter()
        .map(|(m, owned)| JoinGroupMember {
            member_id: m.to_string(),
            group_instance_id: None,
            metadata: metadata(owned),
        })
        .collect();
    h.c.handle_response(
        h.now,
        j.id,
        Response::JoinGroup(JoinGroupResponse {
            generation_id: 2,
            member_id: "m1".into(),
            leader: "m1".into(),
            protocol_name: Some(name.into()),
            members,
            ..Default::default()
        }),
    );
    h.events()
}

/// A cooperative assignor that moves t-0 from m2 to m1 in one round.
fn mover(name: &'static str, protocols: &[RebalanceProtocol]) -> Box<dyn PartitionAssignor> {
    Box::new(TestAssignor {
        name,
        protocols: protocols.to_vec(),
        plan: Box::new(|_| {
            BTreeMap::from([("m1".to_string(), vec![tp("t", 0)]), ("m2".to_string(), vec![tp("t", 1)])])
        }),
    })
}

#[test]
fn leader_validates_custom_cooperative_assignors() {
    let mut h = H::new(vec![mover("custom", &[Cooperative])], None);
    let (t, ev) = leader_round(&mut h, "custom", vec![("m1", vec![]), ("m2", vec![tp("t", 0), tp("t", 1)])]);
    assert!(
        matches!(
            &ev[..],
            [Event::Error(CoordinatorError::Leader(LeaderError::Assign(AssignError::CooperativeViolation(_))))]
        ),
        "{ev:?}"
    );
    assert!(t.is_none(), "no SyncGroup after a failed assignment");
}

/// Neither an eager assignor nor the built-in `cooperative-sticky` is validated; the hand-over
/// runs for the cooperative one only: an eager-only assignor under the eager protocol gets none
/// (Java's leader withholds nothing under EAGER, and no follow-up round would come).
#[test]
fn leader_does_not_validate_eager_or_builtin_cooperative_sticky_and_hands_over_only_cooperatively() {
    for (name, protocols) in [("custom", &[Eager][..]), (COOPERATIVE_STICKY, &[Cooperative][..])] {
        let mut h = H::new(vec![mover(name, protocols)], None);
        let (t, ev) = leader_round(&mut h, name, vec![("m1", vec![]), ("m2", vec![tp("t", 0), tp("t", 1)])]);
        assert!(ev.is_empty(), "{ev:?}");
        let t = t.unwrap();
        let Request::SyncGroup(s) = &t.request else { panic!("{t:?}") };
        let a: BTreeMap<&str, Assignment> =
            s.assignments.iter().map(|a| (a.member_id.as_str(), Assignment::decode(&a.assignment).unwrap())).collect();
        assert_eq!(a["m2"].assigned_partitions, parts(&[("t", 1)]));
        let pending = &h.c.last_group_assignment().unwrap().pending;
        if protocols == [Eager] {
            // m2 revoked everything before rejoining: t-0 goes to m1 at once.
            assert_eq!(a["m1"].assigned_partitions, parts(&[("t", 0)]), "{name}");
            assert!(pending.is_empty(), "{name}: {pending:?}");
        } else {
            // t-0 is still owned by m2: withheld from m1 this round (KIP-429 §2.4).
            assert!(a["m1"].assigned_partitions.is_empty());
            assert_eq!(
                pending,
                &[PendingPartition { topic: "t".into(), partition: 0, from: "m2".into(), to: Some("m1".into()) }]
            );
        }
    }
}

/// Deliberate difference from KIP-429 step 2.6: a partition the leader's metadata does not know
/// (t has 4 partitions here; m2 claims t-7) is not handed back to its claimant, even when the
/// assignor keeps it: the claimant revokes it, and it comes back once the metadata knows it.
#[test]
fn leader_never_hands_out_partitions_its_metadata_does_not_know() {
    let keeper = Box::new(TestAssignor {
        name: "keeper",
        protocols: vec![Eager],
        plan: Box::new(|_| {
            BTreeMap::from([("m1".to_string(), vec![tp("t", 0)]), ("m2".to_string(), vec![tp("t", 1), tp("t", 7)])])
        }),
    });
    let mut h = H::new(vec![keeper], None);
    let (t, ev) = leader_round(&mut h, "keeper", vec![("m1", vec![]), ("m2", vec![tp("t", 1), tp("t", 7)])]);
    assert!(ev.is_empty(), "{ev:?}");
    let t = t.expect("SyncGroup");
    let Request::SyncGroup(s) = &t.request else { panic!("{t:?}") };
    let a: BTreeMap<&str, Assignment> =
        s.assignments.iter().map(|a| (a.member_id.as_str(), Assignment::decode(&a.assignment).unwrap())).collect();
    assert_eq!(a["m2"].assigned_partitions, parts(&[("t", 1)]), "t-7 is not known to the leader");
    assert_eq!(a["m1"].assigned_partitions, parts(&[("t", 0)]));
}

#[test]
fn leader_rejoins_when_partition_counts_change() {
    let mut h = H::new(vec![mover("custom", &[Eager])], None);
    let (s, _) = leader_round(&mut h, "custom", vec![("m1", vec![]), ("m2", vec![])]);
    h.sync_ok(s.unwrap(), &[("t", 0)]);
    h.events();
    h.no_join();
    h.c.update_metadata(h.now, ClusterMetadata::from_counts([("t", 8), ("u", 2)]));
    let j = h.req();
    assert_eq!(join_req(&j).reason.as_deref(), Some("cached metadata has changed"));
    assert!(h.c.is_leader() || h.c.state() == State::PreparingRebalance);
}

#[test]
fn metrics_count_rebalances_and_failures() {
    let mut h = H::follower(Eager);
    h.rebalance(1, &[("t", 0)]);
    let m = h.c.metrics_snapshot(h.now);
    assert_eq!(m["rebalance-total"], 1.0);
    assert_eq!(m["rebalance-latency-max"], 2.0);
    assert_eq!(m["last-rebalance-seconds-ago"], 0.0);
    h.c.record_listener_latency(h.now, ListenerKind::Assigned, 5);
    assert_eq!(h.c.metrics_snapshot(h.now)["partitions-assigned-latency-max"], 5.0);
}

#[test]
fn unknown_member_id_on_heartbeat_resets_everything() {
    let mut h = H::follower(Eager);
    h.rebalance(1, &[("t", 2)]);
    h.heartbeat(ErrorCode::UNKNOWN_MEMBER_ID);
    assert_eq!(h.events(), [Event::PartitionsLost(parts(&[("t", 2)]))]);
    assert_eq!((h.c.generation(), h.c.member_id()), (-1, ""));
    assert_eq!(join_req(&h.req()).member_id, "");
}

#[test]
fn illegal_generation_on_join_is_an_unexpected_error_retried_after_backoff() {
    let mut h = H::follower(Eager);
    let j = h.req();
    h.c.handle_response(
        5,
        j.id,
        Response::JoinGroup(JoinGroupResponse { error: ErrorCode::ILLEGAL_GENERATION, ..Default::default() }),
    );
    assert!(matches!(&h.events()[..], [Event::Error(CoordinatorError::Broker { api: "JoinGroup", .. })]));
    assert!(h.c.poll_request(5).is_none());
    h.c.handle_timeout(105);
    assert!(matches!(h.c.poll_request(105).unwrap().request, Request::JoinGroup(_)));
}

#[test]
fn a_lost_join_response_times_out_and_rejoins_with_the_same_member_id() {
    let mut h = H::follower(Eager);
    h.rebalance(1, &[]);
    h.c.request_rejoin("test");
    let j = h.req();
    let deadline = h.now + 300_000 + 5_000;
    // The broker keeps answering heartbeats (REBALANCE_IN_PROGRESS) while the join is parked.
    while h.now + 3_000 < deadline {
        h.heartbeat(ErrorCode::REBALANCE_IN_PROGRESS);
    }
    h.c.handle_timeout(deadline);
    h.now = deadline + 100; // after retry.backoff.ms
    h.c.handle_timeout(h.now);
    assert_eq!(h.c.metrics().failed_rebalance_total(), 1);
    // Java keeps the member id after a JoinGroup disconnect (testRetainMemberIdAfterJoinGroupDisconnect).
    let j2 = h.req();
    assert_ne!(j.id, j2.id);
    assert_eq!(join_req(&j2).member_id, "m1");
}

/// A leader round over `topics`: the SyncGroup assignments it sends, decoded.
fn leader_round_topics(
    h: &mut H,
    name: &str,
    topics: &[&str],
    members: Vec<(&str, Vec<Tp>)>,
) -> BTreeMap<String, Assignment> {
    join_as_leader(h, name, topics, members);
    let t = h.req();
    let Request::SyncGroup(s) = &t.request else { panic!("{t:?}") };
    s.assignments.iter().map(|a| (a.member_id.clone(), Assignment::decode(&a.assignment).unwrap())).collect()
}

#[test]
fn cooperative_leader_gives_partitions_of_topics_it_does_not_know_back_to_their_claimer() {
    // KIP-429 step 2.6: "gone" is not in the leader's metadata (deleted, or the leader's
    // metadata is stale); m2 claims two of its partitions and keeps them.
    let out = cooperative_round_claiming_gone(0, 1);
    let of = |m: &str| PartitionSet::from_groups(&out[m].assigned_partitions);
    assert!(of("m2").contains("gone", 0) && of("m2").contains("gone", 1), "{out:?}");
    assert!(!of("m1").iter().any(|(t, _)| t == "gone"), "{out:?}");
    assert_eq!(of("m1").len() + of("m2").len(), 4 + 2, "every known partition once, plus the two returned");
}

/// A cooperative-sticky leader's round over "t" (4 partitions) and "gone" (not in its
/// metadata), where m2 owns t-3 and claims partitions `a` and `b` of "gone".
fn cooperative_round_claiming_gone(a: i32, b: i32) -> BTreeMap<String, Assignment> {
    let mut h = H::new(vec![Box::new(crate::assignor::CooperativeStickyAssignor::new())], None);
    h.c.subscribe(h.now, ["t", "gone"]);
    leader_round_topics(
        &mut h,
        "cooperative-sticky",
        &["gone", "t"],
        vec![("m1", vec![]), ("m2", vec![tp("gone", a), tp("gone", b), tp("t", 3)])],
    )
}

#[test]
fn leader_keeps_unknown_topic_partitions_only_for_a_cooperative_claimer() {
    // A custom assignor hands out partitions of "gone" (missing from the leader's metadata): m2
    // claims gone-0 and gone-1, m1 claims nothing.
    let plan = || -> Plan {
        Box::new(|_| {
            BTreeMap::from([
                ("m1".to_string(), vec![tp("gone", 1), tp("t", 0)]),
                ("m2".to_string(), vec![tp("gone", 0), tp("t", 1)]),
            ])
        })
    };
    let claims = || vec![("m1", vec![]), ("m2", vec![tp("gone", 0), tp("gone", 1), tp("t", 1)])];
    let gone = |out: &BTreeMap<String, Assignment>, m: &str| -> Vec<i32> {
        out[m].assigned_partitions.iter().filter(|g| g.topic == "gone").flat_map(|g| g.partitions.clone()).collect()
    };
    // Cooperative: only the claimer gets its own partition back (KIP-429 step 2.6).
    let mut h =
        H::new(vec![Box::new(TestAssignor { name: "custom", protocols: vec![Cooperative], plan: plan() })], None);
    h.c.subscribe(h.now, ["t", "gone"]);
    let out = leader_round_topics(&mut h, "custom", &["gone", "t"], claims());
    assert_eq!(gone(&out, "m2"), [0], "{out:?}");
    assert!(gone(&out, "m1").is_empty(), "{out:?}");
    // Eager: never.
    let mut h = H::new(vec![Box::new(TestAssignor { name: "custom", protocols: vec![Eager], plan: plan() })], None);
    h.c.subscribe(h.now, ["t", "gone"]);
    let out = leader_round_topics(&mut h, "custom", &["gone", "t"], claims());
    assert!(gone(&out, "m1").is_empty() && gone(&out, "m2").is_empty(), "{out:?}");
    assert_eq!(PartitionSet::from_groups(&out["m1"].assigned_partitions), PartitionSet::from_iter([("t", 0)]));
}

#[test]
fn assigned_partitions_unknown_to_our_metadata_are_not_taken_until_it_knows_them() {
    let mut h = H::follower_topics(Cooperative, &["t", "v"]);
    let ev = h.rebalance(1, &[("t", 0), ("v", 0)]);
    let assigned: Vec<&Event> = ev.iter().filter(|e| matches!(e, Event::PartitionsAssigned(_))).collect();
    assert_eq!(assigned, [&Event::PartitionsAssigned(parts(&[("t", 0)]))], "{ev:?}");
    h.no_join();
    // Our metadata catches up: rejoin so the leader can hand v-0 over for real.
    h.c.update_metadata(h.now, ClusterMetadata::from_counts([("t", 4), ("u", 2), ("v", 1)]));
    let j = h.req();
    assert_eq!(join_req(&j).reason.as_deref(), Some("metadata now has partitions assigned to us earlier"));
}

/// A member subscribed to `topic` that claims `owned`.
#[test]
fn cooperative_leader_gives_a_huge_claimed_id_of_an_unknown_topic_back_without_a_huge_table() {
    let out = cooperative_round_claiming_gone(i32::MAX, i32::MAX - 1);
    let of = |m: &str| PartitionSet::from_groups(&out[m].assigned_partitions);
    assert!(of("m2").contains("gone", i32::MAX) && of("m2").contains("gone", i32::MAX - 1), "{out:?}");
    assert!(of("m2").contains("t", 3), "{out:?}");
    assert_eq!(of("m1").len() + of("m2").len(), 4 + 2, "{out:?}");
}

/// A negative partition id exists in no topic: step 2.6 does not give one back even to a member
/// that claims it (the fuzz target `coordinator_leader` saw "gone"-(-1) claimed by two members
/// and given to one of them: the hand-over cannot index a negative id, so it was not withheld).
#[test]
fn cooperative_leader_never_gives_back_a_negative_partition_id() {
    let plan: Plan =
        Box::new(|_| BTreeMap::from([("m2".to_string(), vec![tp("gone", -1), tp("gone", 0), tp("t", 1)])]));
    let mut h = H::new(vec![Box::new(TestAssignor { name: "custom", protocols: vec![Cooperative], plan })], None);
    h.c.subscribe(h.now, ["t", "gone"]);
    let out = leader_round_topics(
        &mut h,
        "custom",
        &["gone", "t"],
        vec![("m1", vec![]), ("m2", vec![tp("gone", -1), tp("gone", 0), tp("t", 1)]), ("m3", vec![tp("gone", -1)])],
    );
    assert_eq!(
        PartitionSet::from_groups(&out["m2"].assigned_partitions),
        PartitionSet::from_iter([("gone", 0), ("t", 1)])
    );
    assert!(out["m1"].assigned_partitions.is_empty() && out["m3"].assigned_partitions.is_empty(), "{out:?}");
}

/// librdkafka PR #5604: a session that expires while a rebalance is in flight must end in
/// `onPartitionsLost`, never `onPartitionsRevoked`: the member no longer owns anything it could
/// hand over cleanly (commits would fail, another member may already have the partitions).
#[test]
fn session_expiring_while_a_join_is_in_flight_loses_the_partitions_not_revokes_them() {
    let mut h = H::follower(Cooperative);
    h.rebalance(1, &[("t", 0), ("t", 1)]);
    h.heartbeat(ErrorCode::REBALANCE_IN_PROGRESS);
    let join = h.req();
    assert!(matches!(join.request, Request::JoinGroup(_)));
    assert!(h.events().is_empty(), "a cooperative member keeps its partitions while it rejoins");
    // From here no heartbeat gets through (the broker expelled us, the network is gone).
    let expiry = h.now + h.c.config().session_timeout_ms;
    h.c.handle_timeout(expiry);
    assert_eq!(h.events(), [Event::PartitionsLost(parts(&[("t", 0), ("t", 1)]))]);
    assert_eq!((h.c.generation(), h.c.member_id()), (-1, ""));
    // The broker then answers the parked JoinGroup with UNKNOWN_MEMBER_ID: nothing more to lose,
    // and no revocation is reported for partitions that are already gone.
    h.now = expiry + 1;
    h.c.handle_response(
        h.now,
        join.id,
        Response::JoinGroup(JoinGroupResponse { error: ErrorCode::UNKNOWN_MEMBER_ID, ..Default::default() }),
    );
    assert!(h.events().is_empty());
    let rejoin = h.req();
    let sub = Subscription::decode(&join_req(&rejoin).protocols[0].metadata).unwrap();
    assert!(sub.owned_partitions.is_empty(), "a member that lost its partitions claims none");
    assert_eq!((join_req(&rejoin).member_id.as_str(), sub.generation_id), ("", -1));
}

/// The PR #5604 case itself: the SyncGroup of a cooperative rebalance revoked part of the
/// assignment (the follow-up JoinGroup is in flight) when the session expires. What was revoked
/// stays revoked; everything still owned is lost, and the stale follow-up answer adds nothing.
#[test]
fn session_expiring_during_the_cooperative_follow_up_rebalance_reports_lost() {
    let mut h = H::follower(Cooperative);
    h.rebalance(1, &[("t", 0), ("t", 1), ("t", 2)]);
    h.heartbeat(ErrorCode::REBALANCE_IN_PROGRESS);
    let s = h.join_ok(2, "m1");
    h.sync_ok(s, &[("t", 1), ("t", 2)]);
    assert_eq!(
        h.events(),
        [
            Event::PartitionsRevoked(parts(&[("t", 0)])),
            Event::Assignment { generation_id: 2, assignor: "x".into(), partitions: parts(&[("t", 1), ("t", 2)]) },
            Event::PartitionsAssigned(vec![]),
        ]
    );
    let follow_up = h.req();
    assert!(matches!(follow_up.request, Request::JoinGroup(_)));
    h.c.handle_timeout(h.now + h.c.config().session_timeout_ms);
    assert_eq!(h.events(), [Event::PartitionsLost(parts(&[("t", 1), ("t", 2)]))]);
    // Leaving now is silent: nothing is owned, and the reset member sends no LeaveGroup.
    h.c.leave(h.now + h.c.config().session_timeout_ms);
    assert!(h.events().is_empty());
    assert!(h.c.owned().is_empty());
    assert_eq!(h.c.poll_request(h.now), None);
}

/// Java's `onLeavePrepare`: leaving while a rebalance is in progress reports the partitions as
/// lost (they may already be assigned elsewhere), in a stable group as revoked.
#[test]
fn leaving_during_a_rebalance_reports_lost_and_in_a_stable_group_revoked() {
    let mut h = H::follower(Cooperative);
    h.rebalance(1, &[("t", 3)]);
    h.heartbeat(ErrorCode::REBALANCE_IN_PROGRESS);
    let _join = h.req();
    h.c.leave(h.now);
    assert_eq!(h.events(), [Event::PartitionsLost(parts(&[("t", 3)]))]);
    let mut stable = H::follower(Cooperative);
    stable.rebalance(1, &[("t", 3)]);
    stable.c.leave(stable.now);
    assert_eq!(stable.events(), [Event::PartitionsRevoked(parts(&[("t", 3)]))]);
}

// ---- offset commits and fetches (issue 23; Java ConsumerCoordinator's commit handlers) -------

use crate::group_api::{
    OffsetCommitPartitionResult, OffsetCommitTopicResult, OffsetFetchPartition, OffsetFetchTopic,
    OffsetFetchTopicResult,
};

/// A member with the offset options set, subscribed to `t`.
fn offsets_member(protocol: RebalanceProtocol, instance: Option<&str>, fetch: bool, await_revocation: bool) -> H {
    let list: &[RebalanceProtocol] = if protocol == Eager { &[Eager] } else { &[Cooperative, Eager] };
    let mut config = Config::new("g").with_fetch_offsets_on_assign(fetch).with_await_revocation(await_revocation);
    config.group_instance_id = instance.map(str::to_string);
    let mut c = Coordinator::new(config, vec![assignor("x", list)], 0).unwrap();
    c.update_metadata(0, ClusterMetadata::from_counts([("t", 4), ("u", 2)]));
    c.subscribe(0, ["t"]);
    H { c, now: 0 }
}

/// A stable member of generation 1 (member id `m1`) owning t-0 and t-1.
fn stable_member(protocol: RebalanceProtocol, instance: Option<&str>) -> H {
    let mut h = offsets_member(protocol, instance, false, false);
    h.rebalance(1, &[("t", 0), ("t", 1)]);
    assert_eq!(h.c.state(), State::Stable);
    h
}

fn commit_req(t: &Transmit) -> &OffsetCommitRequest {
    match &t.request {
        Request::OffsetCommit(r) => r,
        other => panic!("not an OffsetCommit: {other:?}"),
    }
}

fn fetch_req(t: &Transmit) -> &OffsetFetchRequest {
    match &t.request {
        Request::OffsetFetch(r) => r,
        other => panic!("not an OffsetFetch: {other:?}"),
    }
}

fn two_offsets() -> Vec<PartitionOffset> {
    vec![PartitionOffset::new("t", 1, 20), PartitionOffset::new("t", 0, 10)]
}

/// Commits `two_offsets`, answers every partition with `error`, returns the commit's outcome.
fn commit_answered(h: &mut H, error: ErrorCode) -> Result<Vec<PartitionOffset>, CommitError> {
    let id = h.c.commit(h.now, two_offsets()).expect("sent");
    let t = h.req();
    assert_eq!(t.id, id);
    let topics = commit_req(&t)
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
    h.now += 1;
    h.c.handle_response(h.now, id, Response::OffsetCommit(OffsetCommitResponse { throttle_time_ms: 0, topics }));
    commit_outcome(h, id)
}

fn commit_outcome(h: &mut H, id: RequestId) -> Result<Vec<PartitionOffset>, CommitError> {
    let events = h.events();
    let mut outcomes = events.into_iter().filter_map(|e| match e {
        Event::CommitCompleted { id: done, result } if done == id => Some(result),
        _ => None,
    });
    let outcome = outcomes.next().expect("the commit's outcome");
    assert!(outcomes.next().is_none(), "one outcome per commit");
    outcome
}

#[test]
fn a_commit_while_not_stable_fails_without_sending() {
    let mut h = offsets_member(Cooperative, None, false, false);
    let join = h.req();
    assert_eq!(h.c.state(), State::PreparingRebalance);
    assert_eq!(h.c.commit(h.now, two_offsets()), Err(CommitError::RebalanceInProgress));
    let sync = h.answer_join(join, 1, "m1");
    assert_eq!(h.c.state(), State::CompletingRebalance);
    assert_eq!(h.c.commit(h.now, two_offsets()), Err(CommitError::RebalanceInProgress));
    h.sync_ok(sync, &[("t", 0)]);
    h.c.leave(h.now);
    assert_eq!(h.c.commit(h.now, two_offsets()), Err(CommitError::CommitFailed));
    // Nothing but the LeaveGroup went out.
    while let Some(t) = h.c.poll_request(h.now) {
        assert!(!matches!(t.request, Request::OffsetCommit(_)), "{t:?}");
    }
    let fresh = Coordinator::new(Config::new("g"), vec![assignor("x", &[Eager])], 0);
    assert_eq!(fresh.unwrap().commit(0, two_offsets()), Err(CommitError::CommitFailed));
}

#[test]
fn a_commit_carries_the_generation_member_and_instance_sorted_by_partition() {
    let mut h = stable_member(Eager, Some("host-a"));
    let mut offsets = two_offsets();
    offsets[0].leader_epoch = Some(4);
    offsets[0].metadata = "m".into();
    h.c.commit(h.now, offsets).unwrap();
    let t = h.req();
    let r = commit_req(&t);
    assert_eq!((r.group_id.as_str(), r.generation_id, r.member_id.as_str()), ("g", 1, "m1"));
    assert_eq!(r.group_instance_id.as_deref(), Some("host-a"));
    assert_eq!(r.topics.len(), 1);
    let p = &r.topics[0].partitions;
    assert_eq!((p[0].partition, p[0].offset, p[0].leader_epoch), (0, 10, -1));
    assert_eq!((p[1].partition, p[1].offset, p[1].leader_epoch, p[1].metadata.as_deref()), (1, 20, 4, Some("m")));
}

#[test]
fn a_successful_commit_completes_and_is_the_committed_position() {
    let mut h = stable_member(Cooperative, None);
    assert!(h.c.committed().is_empty());
    let done = commit_answered(&mut h, ErrorCode::NONE).unwrap();
    assert_eq!(done, two_offsets());
    assert_eq!(h.c.committed(), vec![PartitionOffset::new("t", 0, 10), PartitionOffset::new("t", 1, 20)]);
    assert_eq!(h.c.state(), State::Stable);
    // An empty commit completes at once, sending nothing.
    let id = h.c.commit(h.now, Vec::new()).unwrap();
    assert_eq!(commit_outcome(&mut h, id), Ok(Vec::new()));
    h.no_join();
}

#[test]
fn retriable_commit_errors_leave_the_member_alone() {
    for (error, coordinator_unknown) in [
        (ErrorCode::COORDINATOR_LOAD_IN_PROGRESS, false),
        (ErrorCode::UNKNOWN_TOPIC_OR_PARTITION, false),
        (ErrorCode::COORDINATOR_NOT_AVAILABLE, true),
        (ErrorCode::NOT_COORDINATOR, true),
        (ErrorCode::REQUEST_TIMED_OUT, true),
    ] {
        let mut h = stable_member(Cooperative, None);
        let outcome = commit_answered(&mut h, error);
        assert_eq!(outcome, Err(CommitError::Retriable { error, coordinator_unknown }), "{error}");
        assert!(outcome.unwrap_err().is_retriable());
        assert_eq!((h.c.state(), h.c.generation(), h.c.owned().len()), (State::Stable, 1, 2), "{error}");
        assert!(!h.c.rejoin_needed(), "{error}");
        assert!(h.c.committed().is_empty(), "{error}: nothing was committed");
    }
}

#[test]
fn a_commit_that_gets_no_answer_times_out_as_retriable() {
    let mut h = stable_member(Eager, None);
    let id = h.c.commit(h.now, two_offsets()).unwrap();
    let _sent = h.req();
    let deadline = h.now + h.c.config().request_timeout_ms;
    assert!(h.c.poll_timeout().is_some_and(|t| t <= deadline));
    h.now = deadline;
    h.c.handle_timeout(h.now);
    let expected = CommitError::Retriable { error: ErrorCode::REQUEST_TIMED_OUT, coordinator_unknown: true };
    assert_eq!(commit_outcome(&mut h, id), Err(expected));
}

#[test]
fn rebalance_in_progress_on_commit_requests_a_rejoin() {
    let mut h = stable_member(Cooperative, None);
    assert_eq!(commit_answered(&mut h, ErrorCode::REBALANCE_IN_PROGRESS), Err(CommitError::RebalanceInProgress));
    // No reset: the member keeps its generation and partitions and rejoins with them.
    assert_eq!((h.c.generation(), h.c.member_id(), h.c.owned().len()), (1, "m1", 2));
    let join = h.req();
    assert_eq!(join_req(&join).member_id, "m1");
}

#[test]
fn unknown_member_or_illegal_generation_on_commit_resets_the_member() {
    for (error, member_after) in [(ErrorCode::UNKNOWN_MEMBER_ID, ""), (ErrorCode::ILLEGAL_GENERATION, "m1")] {
        let mut h = stable_member(Cooperative, None);
        let id = h.c.commit(h.now, two_offsets()).unwrap();
        let _sent = h.req();
        let response = OffsetCommitResponse {
            throttle_time_ms: 0,
            topics: vec![OffsetCommitTopicResult {
                name: "t".into(),
                partitions: vec![
                    OffsetCommitPartitionResult { partition: 0, error: ErrorCode::NONE },
                    OffsetCommitPartitionResult { partition: 1, error },
                ],
            }],
        };
        h.c.handle_response(h.now, id, Response::OffsetCommit(response));
        let events = h.events();
        assert!(events.contains(&Event::PartitionsLost(parts(&[("t", 0), ("t", 1)]))), "{error}: {events:?}");
        assert!(events.contains(&Event::CommitCompleted { id, result: Err(CommitError::CommitFailed) }));
        assert_eq!((h.c.generation(), h.c.member_id()), (-1, member_after), "{error}");
        assert!(h.c.committed().is_empty());
        let join = h.req();
        assert_eq!(join_req(&join).member_id, member_after, "{error}");
    }
}

#[test]
fn a_stale_commit_answered_while_rejoining_is_rebalance_in_progress_without_a_reset() {
    let mut h = stable_member(Cooperative, None);
    let id = h.c.commit(h.now, two_offsets()).unwrap();
    let _sent = h.req();
    // The heartbeat learns first that generation 1 is over; the member rejoins.
    h.heartbeat(ErrorCode::ILLEGAL_GENERATION);
    let join = h.req();
    assert!(matches!(join.request, Request::JoinGroup(_)));
    assert_eq!(h.c.state(), State::PreparingRebalance);
    let before = h.events();
    assert!(before.iter().any(|e| matches!(e, Event::PartitionsLost(_))));
    h.c.handle_response(
        h.now,
        id,
        Response::OffsetCommit(OffsetCommitResponse {
            throttle_time_ms: 0,
            topics: vec![OffsetCommitTopicResult {
                name: "t".into(),
                partitions: vec![OffsetCommitPartitionResult { partition: 0, error: ErrorCode::ILLEGAL_GENERATION }],
            }],
        }),
    );
    assert_eq!(commit_outcome(&mut h, id), Err(CommitError::RebalanceInProgress));
    // The join in flight is untouched: the member id survives, the JoinGroup is still awaited.
    assert_eq!((h.c.member_id(), h.c.state()), ("m1", State::PreparingRebalance));
    let sync = h.answer_join(join, 2, "m1");
    assert!(matches!(sync.request, Request::SyncGroup(_)));
}

#[test]
fn fenced_instance_on_commit_is_fatal_for_the_generation_it_was_sent_in() {
    let mut h = stable_member(Cooperative, Some("host-a"));
    assert_eq!(
        commit_answered(&mut h, ErrorCode::FENCED_INSTANCE_ID),
        Err(CommitError::Fatal(ErrorCode::FENCED_INSTANCE_ID))
    );
    assert_eq!(h.c.state(), State::Fatal);
}

#[test]
fn authorization_and_size_errors_fail_the_commit_for_good() {
    let mut h = stable_member(Cooperative, None);
    assert_eq!(
        commit_answered(&mut h, ErrorCode::GROUP_AUTHORIZATION_FAILED),
        Err(CommitError::Fatal(ErrorCode::GROUP_AUTHORIZATION_FAILED))
    );
    assert_eq!(h.c.state(), State::Fatal, "the group is not ours to use");
    for error in [
        ErrorCode::TOPIC_AUTHORIZATION_FAILED,
        ErrorCode::OFFSET_METADATA_TOO_LARGE,
        ErrorCode::INVALID_COMMIT_OFFSET_SIZE,
    ] {
        let mut h = stable_member(Cooperative, None);
        let outcome = commit_answered(&mut h, error);
        assert_eq!(outcome, Err(CommitError::Fatal(error)));
        assert!(!outcome.unwrap_err().is_retriable());
        // This commit failed; the member is still in its generation.
        assert_eq!((h.c.state(), h.c.generation()), (State::Stable, 1), "{error}");
    }
}

fn fetch_response(offsets: &[(i32, i64, ErrorCode)]) -> OffsetFetchResponse {
    OffsetFetchResponse {
        throttle_time_ms: 0,
        error: ErrorCode::NONE,
        topics: vec![OffsetFetchTopicResult {
            name: "t".into(),
            partitions: offsets
                .iter()
                .map(|&(partition, committed_offset, error)| OffsetFetchPartition {
                    partition,
                    committed_offset,
                    leader_epoch: -1,
                    metadata: Some(String::new()),
                    error,
                })
                .collect(),
        }],
    }
}

#[test]
fn new_partitions_are_announced_with_their_committed_offsets() {
    let mut h = offsets_member(Cooperative, None, true, false);
    let events = h.rebalance(1, &[("t", 0), ("t", 1)]);
    assert!(!events.iter().any(|e| matches!(e, Event::PartitionsAssigned(_))), "{events:?}");
    assert!(h.c.fetching_offsets());
    assert!(h.c.owned().is_empty(), "not owned before they are announced");
    let t = h.req();
    let r = fetch_req(&t);
    assert!(r.require_stable);
    assert_eq!(r.topics, Some(vec![OffsetFetchTopic { name: "t".into(), partitions: vec![0, 1] }]));
    // Commits of the partitions already owned are allowed meanwhile (the member is stable).
    assert_eq!(h.c.state(), State::Stable);
    h.now += 1;
    h.c.handle_response(
        h.now,
        t.id,
        Response::OffsetFetch(fetch_response(&[(0, 42, ErrorCode::NONE), (1, -1, ErrorCode::NONE)])),
    );
    assert_eq!(
        h.events(),
        vec![
            Event::OffsetsFetched(vec![PartitionOffset::new("t", 0, 42)]),
            Event::PartitionsAssigned(parts(&[("t", 0), ("t", 1)]))
        ]
    );
    assert_eq!(h.c.committed(), vec![PartitionOffset::new("t", 0, 42)]);
    assert_eq!(h.c.owned().len(), 2);
    // The next rebalance adds t-2 only: only it is fetched.
    h.c.request_rejoin("test");
    let events = h.rebalance(2, &[("t", 0), ("t", 1), ("t", 2)]);
    assert!(!events.iter().any(|e| matches!(e, Event::PartitionsAssigned(_))));
    let t = h.req();
    assert_eq!(fetch_req(&t).topics, Some(vec![OffsetFetchTopic { name: "t".into(), partitions: vec![2] }]));
}

#[test]
fn an_offset_fetch_is_retried_after_retriable_errors() {
    let mut h = offsets_member(Eager, None, true, false);
    h.rebalance(1, &[("t", 0)]);
    let t = h.req();
    let backoff = h.c.config().retry_backoff_ms;
    let loading = OffsetFetchResponse { error: ErrorCode::COORDINATOR_LOAD_IN_PROGRESS, ..Default::default() };
    h.c.handle_response(h.now, t.id, Response::OffsetFetch(loading));
    assert!(h.events().is_empty(), "retried quietly");
    h.no_join();
    assert!(h.c.poll_timeout().is_some_and(|at| at <= h.now + backoff));
    h.now += backoff;
    h.c.handle_timeout(h.now);
    let again = h.req();
    assert!(matches!(again.request, Request::OffsetFetch(_)));
    // A pending transactional commit: retried quietly too.
    h.c.handle_response(
        h.now,
        again.id,
        Response::OffsetFetch(fetch_response(&[(0, 5, ErrorCode::UNSTABLE_OFFSET_COMMIT)])),
    );
    assert!(h.events().is_empty());
    h.now += backoff;
    let third = h.req();
    h.c.handle_response(h.now, third.id, Response::OffsetFetch(fetch_response(&[(0, 7, ErrorCode::NONE)])));
    assert_eq!(
        h.events(),
        vec![
            Event::OffsetsFetched(vec![PartitionOffset::new("t", 0, 7)]),
            Event::PartitionsAssigned(parts(&[("t", 0)]))
        ]
    );
}

#[test]
fn an_unauthorized_offset_fetch_is_fatal() {
    let mut h = offsets_member(Cooperative, None, true, false);
    h.rebalance(1, &[("t", 0)]);
    let t = h.req();
    let denied = OffsetFetchResponse { error: ErrorCode::GROUP_AUTHORIZATION_FAILED, ..Default::default() };
    h.c.handle_response(h.now, t.id, Response::OffsetFetch(denied));
    let events = h.events();
    assert!(matches!(events.last(), Some(Event::Fatal(CoordinatorError::Broker { api: "OffsetFetch", .. }))));
    assert!(!events.iter().any(|e| matches!(e, Event::PartitionsLost(_))), "never announced, never lost");
}

#[test]
fn partitions_waiting_for_offsets_are_not_lost_when_the_generation_resets() {
    let mut h = offsets_member(Cooperative, None, true, false);
    h.rebalance(1, &[("t", 0)]);
    let t = h.req();
    h.heartbeat(ErrorCode::UNKNOWN_MEMBER_ID);
    let events = h.events();
    assert!(!events.iter().any(|e| matches!(e, Event::PartitionsLost(_))), "{events:?}");
    assert!(!h.c.fetching_offsets());
    // The late answer is ignored.
    h.c.handle_response(h.now, t.id, Response::OffsetFetch(fetch_response(&[(0, 7, ErrorCode::NONE)])));
    assert!(!h.events().iter().any(|e| matches!(e, Event::PartitionsAssigned(_))));
}

#[test]
fn a_revocation_holds_the_rejoin_until_done_and_its_commits_use_the_old_generation() {
    let mut h = offsets_member(Eager, None, false, true);
    h.rebalance(1, &[("t", 0), ("t", 1)]);
    h.c.request_rejoin("test");
    h.no_join();
    assert_eq!(h.events(), vec![Event::PartitionsRevoked(parts(&[("t", 0), ("t", 1)]))]);
    assert!(h.c.revocation_pending());
    assert_eq!(h.c.state(), State::Stable);
    // The callback commits what it processed, in generation 1.
    let id = h.c.commit(h.now, two_offsets()).unwrap();
    let t = h.req();
    assert_eq!(commit_req(&t).generation_id, 1);
    h.c.handle_response(h.now, id, Response::OffsetCommit(OffsetCommitResponse::default()));
    assert!(commit_outcome(&mut h, id).is_ok());
    h.no_join();
    h.c.revocation_done(h.now);
    let join = h.req();
    assert!(matches!(join.request, Request::JoinGroup(_)));
}

#[test]
fn a_cooperative_revocation_holds_the_follow_up_join() {
    let mut h = offsets_member(Cooperative, None, false, true);
    h.rebalance(1, &[("t", 0), ("t", 1)]);
    h.c.request_rejoin("test");
    let events = h.rebalance(2, &[("t", 0)]);
    assert!(events.contains(&Event::PartitionsRevoked(parts(&[("t", 1)]))));
    assert!(h.c.rejoin_needed());
    h.no_join();
    assert!(h.c.commit(h.now, vec![PartitionOffset::new("t", 1, 3)]).is_ok());
    let t = h.req();
    assert_eq!(commit_req(&t).generation_id, 2);
    h.c.revocation_done(h.now);
    assert!(matches!(h.req().request, Request::JoinGroup(_)));
}

#[test]
fn a_leave_after_a_revocation_waits_for_it() {
    let mut h = offsets_member(Cooperative, None, false, true);
    h.rebalance(1, &[("t", 0)]);
    h.c.leave(h.now);
    assert_eq!(h.events(), vec![Event::PartitionsRevoked(parts(&[("t", 0)]))]);
    assert!(h.c.commit(h.now, vec![PartitionOffset::new("t", 0, 9)]).is_ok());
    assert!(matches!(h.req().request, Request::OffsetCommit(_)));
    h.no_join();
    h.c.revocation_done(h.now);
    let leave = h.req();
    let Request::LeaveGroup(r) = &leave.request else { panic!("{leave:?}") };
    assert_eq!(r.member_id, "m1");
    assert_eq!(h.c.state(), State::Unjoined);
}

// ---- the leader's assignment off the caller's task (issue 27) ---------------------------------

fn offloading_leader() -> H {
    let mut c =
        Coordinator::new(Config::new("g").with_offload_assignment(true), vec![mover("custom", &[Eager])], 0).unwrap();
    c.update_metadata(0, ClusterMetadata::from_counts([("t", 4)]));
    c.subscribe(0, ["t"]);
    H { c, now: 0 }
}

#[test]
fn an_offloaded_assignment_sends_no_sync_group_until_it_returns_and_heartbeats_go_on() {
    let mut h = offloading_leader();
    let events = join_as_leader(&mut h, "custom", &["t"], vec![("m1", vec![]), ("m2", vec![])]);
    assert!(events.is_empty(), "{events:?}");
    assert!(h.c.is_leader());
    let job = h.c.poll_assignment().expect("the leader's job");
    assert_eq!(job.generation(), 2);
    assert!(h.c.poll_assignment().is_none(), "taken once");
    h.no_join();
    // Heartbeats of generation 2 keep going while the job is out.
    for _ in 0..3 {
        h.heartbeat(ErrorCode::NONE);
    }
    assert_eq!(h.c.state(), State::CompletingRebalance);
    let done = job.run();
    h.c.handle_assignment(h.now, done);
    let sync = h.req();
    let Request::SyncGroup(s) = &sync.request else { panic!("{sync:?}") };
    assert_eq!((s.generation_id, s.assignments.len()), (2, 2));
    h.sync_ok(sync, &[("t", 0)]);
    assert_eq!(h.c.state(), State::Stable);
    // The assignor came back: the next JoinGroup offers it with its subscription.
    h.c.request_rejoin("test");
    let join = h.req();
    assert_eq!(join_req(&join).protocols[0].name, "custom");
}

#[test]
fn an_offloaded_assignment_for_a_generation_that_ended_is_dropped() {
    let mut h = offloading_leader();
    join_as_leader(&mut h, "custom", &["t"], vec![("m1", vec![]), ("m2", vec![])]);
    let job = h.c.poll_assignment().unwrap();
    h.heartbeat(ErrorCode::ILLEGAL_GENERATION);
    // No JoinGroup while the assignor is out: its subscription is needed for it.
    h.no_join();
    h.c.handle_assignment(h.now, job.run());
    let join = h.req();
    assert!(matches!(join.request, Request::JoinGroup(_)), "{join:?}");
    assert_eq!(join_req(&join).protocols[0].name, "custom");
    h.no_join();

    // A job never taken returns by itself when its generation ends.
    let mut h = offloading_leader();
    join_as_leader(&mut h, "custom", &["t"], vec![("m1", vec![])]);
    h.heartbeat(ErrorCode::UNKNOWN_MEMBER_ID);
    assert!(h.c.poll_assignment().is_none());
    assert!(matches!(h.req().request, Request::JoinGroup(_)));
}
