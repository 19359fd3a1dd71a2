//! The driver against the simulator's model of the broker's group coordinator, on tokio's paused
//! clock: real concurrency (parked JoinGroups, heartbeats beside them, the application's slow
//! callbacks), deterministic time.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

use super::*;
use crate::assignor::builtin;
// The broker model is the simulator's, reached through the one door for test scaffolding.
use crate::internal::{Broker, Reply};

/// One request as the fake network saw it.
#[derive(Clone, Debug)]
struct Seen {
    at_ms: u64,
    member: String,
    api: &'static str,
    lane: Lane,
}

struct Net {
    broker: Broker,
    origin: Instant,
    waiters: HashMap<(String, RequestId), oneshot::Sender<Response>>,
    next_id: u64,
    metadata: ClusterMetadata,
    /// Members whose network is down: their requests fail at once.
    down: BTreeSet<String>,
    log: Vec<Seen>,
}

impl Net {
    fn now(&self) -> u64 {
        self.origin.elapsed().as_millis() as u64
    }

    fn route(&mut self, out: Vec<(Reply, Response)>) {
        for (reply, response) in out {
            if let Some(tx) = self.waiters.remove(&(reply.member, reply.id)) {
                let _ = tx.send(response);
            }
        }
    }
}

#[derive(Clone)]
struct SimTransport {
    net: Arc<Mutex<Net>>,
    wake: Arc<Notify>,
    member: String,
}

impl GroupTransport for SimTransport {
    async fn send(
        &self,
        _group_id: &str,
        lane: Lane,
        request: Request,
        timeout: Duration,
    ) -> Result<Response, TransportError> {
        let rx = {
            let mut net = self.net.lock().unwrap();
            let at_ms = net.now();
            net.log.push(Seen { at_ms, member: self.member.clone(), api: request.api_name(), lane });
            if net.down.contains(&self.member) {
                return Err(TransportError::new(TransportErrorKind::Unreachable, "network down"));
            }
            let id = RequestId(net.next_id);
            net.next_id += 1;
            let (tx, rx) = oneshot::channel();
            net.waiters.insert((self.member.clone(), id), tx);
            let mut out = net.broker.handle(at_ms, Reply { member: self.member.clone(), incarnation: 0, id }, request);
            out.extend(net.broker.tick(at_ms));
            net.route(out);
            rx
        };
        self.wake.notify_one();
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(response)) => Ok(response),
            Ok(Err(_)) => Err(TransportError::new(TransportErrorKind::Unreachable, "connection closed")),
            Err(_) => Err(TransportError::new(TransportErrorKind::Timeout, "no response")),
        }
    }

    async fn metadata(&self, _timeout: Duration) -> Result<ClusterMetadata, TransportError> {
        let net = self.net.lock().unwrap();
        if net.down.contains(&self.member) {
            return Err(TransportError::new(TransportErrorKind::Unreachable, "network down"));
        }
        Ok(net.metadata.clone())
    }
}

/// The fake broker: its timers (join barrier, session expiry) run in a task of their own.
struct Cluster {
    net: Arc<Mutex<Net>>,
    wake: Arc<Notify>,
    ticker: JoinHandle<()>,
}

impl Cluster {
    fn new(partitions: i32) -> Cluster {
        let net = Arc::new(Mutex::new(Net {
            broker: Broker::new(0),
            origin: Instant::now(),
            waiters: HashMap::new(),
            next_id: 1,
            metadata: ClusterMetadata::from_counts([("t", partitions)]),
            down: BTreeSet::new(),
            log: Vec::new(),
        }));
        let wake = Arc::new(Notify::new());
        let ticker = tokio::spawn({
            let (net, wake) = (Arc::clone(&net), Arc::clone(&wake));
            async move {
                loop {
                    let next = {
                        let mut n = net.lock().unwrap();
                        let now = n.now();
                        let out = n.broker.tick(now);
                        n.route(out);
                        n.broker.next_deadline(now).map(|t| n.origin + Duration::from_millis(t))
                    };
                    match next {
                        Some(at) => tokio::select! {
                            () = sleep_until(at) => {}
                            () = wake.notified() => {}
                        },
                        None => wake.notified().await,
                    }
                }
            }
        });
        Cluster { net, wake, ticker }
    }

    fn member(&self, name: &str, instance: Option<&str>) -> MemberDriver {
        let mut config = MemberConfig::new("g", ["t"]);
        config.coordinator.session_timeout_ms = 6_000;
        config.coordinator.heartbeat_interval_ms = 1_000;
        config.coordinator.rebalance_timeout_ms = 20_000;
        config.coordinator.group_instance_id = instance.map(str::to_string);
        let transport =
            SimTransport { net: Arc::clone(&self.net), wake: Arc::clone(&self.wake), member: name.to_string() };
        MemberDriver::start(transport, config, vec![builtin("cooperative-sticky").unwrap()]).unwrap()
    }

    fn set_down(&self, member: &str, down: bool) {
        let mut net = self.net.lock().unwrap();
        if down {
            net.down.insert(member.to_string());
        } else {
            net.down.remove(member);
        }
    }

    fn log(&self) -> Vec<Seen> {
        self.net.lock().unwrap().log.clone()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.ticker.abort();
    }
}

/// Events of one member, acknowledged at once.
#[derive(Default)]
struct Seen2 {
    events: Vec<MemberEvent>,
}

impl Seen2 {
    fn owned(&self) -> PartitionSet {
        let mut owned = PartitionSet::new();
        for e in &self.events {
            match e {
                MemberEvent::Revoked { owned: o, .. }
                | MemberEvent::Assigned { owned: o, .. }
                | MemberEvent::Lost { owned: o, .. } => owned = PartitionSet::from_groups(o),
                _ => {}
            }
        }
        owned
    }
}

/// Reads `member`'s events (acknowledging each) until `stop` holds for the last one, at most
/// `limit_ms` of virtual time.
async fn until(
    member: &mut MemberDriver,
    seen: &mut Seen2,
    limit_ms: u64,
    stop: impl Fn(&MemberEvent) -> bool,
) -> bool {
    let deadline = Instant::now() + Duration::from_millis(limit_ms);
    loop {
        let next = tokio::select! {
            d = member.next() => d,
            () = sleep_until(deadline) => return false,
        };
        let Some(d) = next else { return false };
        let hit = stop(&d.event);
        seen.events.push(d.event.clone());
        if hit {
            return true;
        }
    }
}

/// Runs both members' event loops for `ms` of virtual time, acknowledging everything.
async fn settle(a: &mut MemberDriver, sa: &mut Seen2, b: &mut MemberDriver, sb: &mut Seen2, ms: u64) {
    let deadline = Instant::now() + Duration::from_millis(ms);
    loop {
        tokio::select! {
            Some(d) = a.next() => sa.events.push(d.event.clone()),
            Some(d) = b.next() => sb.events.push(d.event.clone()),
            () = sleep_until(deadline) => return,
        }
    }
}

fn all(n: i32) -> PartitionSet {
    (0..n).map(|p| ("t", p)).collect()
}

fn is_assigned(e: &MemberEvent) -> bool {
    matches!(e, MemberEvent::Assigned { .. })
}

#[tokio::test(start_paused = true)]
async fn two_members_share_the_partitions_and_the_last_one_takes_all_after_a_leave() {
    let cluster = Cluster::new(4);
    let (mut a, mut sa) = (cluster.member("a", None), Seen2::default());
    assert!(until(&mut a, &mut sa, 10_000, is_assigned).await);
    assert!(matches!(&sa.events[0], MemberEvent::Joined { generation_id: 1, leader: true, assignor, protocol, .. }
        if assignor == "cooperative-sticky" && *protocol == RebalanceProtocol::Cooperative));
    assert_eq!(sa.owned(), all(4));

    let (mut b, mut sb) = (cluster.member("b", None), Seen2::default());
    settle(&mut a, &mut sa, &mut b, &mut sb, 15_000).await;
    let (oa, ob) = (sa.owned(), sb.owned());
    assert_eq!((oa.len(), ob.len()), (2, 2), "a {oa:?} b {ob:?}");
    assert!(oa.is_disjoint(&ob));
    // Cooperative: a gave two partitions up without losing the other two.
    assert!(sa.events.iter().any(
        |e| matches!(e, MemberEvent::Revoked { partitions, .. } if PartitionSet::from_groups(partitions).len() == 2)
    ));
    assert!(!sa.events.iter().any(|e| matches!(e, MemberEvent::Lost { .. })));

    a.leave();
    assert!(until(&mut a, &mut sa, 5_000, |e| *e == MemberEvent::Left).await);
    assert!(matches!(&sa.events[sa.events.len() - 2], MemberEvent::Revoked { owned, .. } if owned.is_empty()));
    assert!(a.next().await.is_none(), "nothing after left");
    assert!(cluster.log().iter().any(|s| s.member == "a" && s.api == "LeaveGroup"));
    let mut none = Seen2::default();
    let mut idle = cluster.member("idle", None);
    idle.leave();
    settle(&mut b, &mut sb, &mut idle, &mut none, 10_000).await;
    assert_eq!(sb.owned(), all(4));
    assert_eq!(none.events, [MemberEvent::Left], "a member that never joined just leaves");
}

#[tokio::test(start_paused = true)]
async fn requests_wait_for_the_callback_while_heartbeats_continue() {
    let cluster = Cluster::new(4);
    let (mut a, mut sa) = (cluster.member("a", None), Seen2::default());
    assert!(until(&mut a, &mut sa, 10_000, is_assigned).await);
    let (mut b, mut sb) = (cluster.member("b", None), Seen2::default());
    // Read a's events until the revocation and hold it for 4 s (under the 6 s session).
    let revoked = loop {
        tokio::select! {
            Some(d) = a.next() => if matches!(d.event, MemberEvent::Revoked { .. }) { break d } else { sa.events.push(d.event.clone()) },
            Some(d) = b.next() => sb.events.push(d.event.clone()),
        }
    };
    assert!(revoked.awaits_ack());
    let held_from = cluster.net.lock().unwrap().now();
    let hold = sleep_until(Instant::now() + Duration::from_millis(4_000));
    tokio::pin!(hold);
    loop {
        tokio::select! {
            () = &mut hold => break,
            Some(d) = b.next() => sb.events.push(d.event.clone()),
        }
    }
    let held_to = cluster.net.lock().unwrap().now();
    let during: Vec<Seen> =
        cluster.log().into_iter().filter(|s| s.member == "a" && s.at_ms > held_from && s.at_ms <= held_to).collect();
    assert!(during.iter().all(|s| s.api == "Heartbeat" && s.lane == Lane::Heartbeat), "{during:?}");
    assert!(during.len() >= 3, "heartbeats continue during the callback: {during:?}");
    sa.events.push(revoked.event.clone());
    revoked.ack();
    settle(&mut a, &mut sa, &mut b, &mut sb, 10_000).await;
    let rejoin = cluster.log().into_iter().find(|s| s.member == "a" && s.at_ms >= held_to && s.api == "JoinGroup");
    assert!(rejoin.is_some(), "the follow-up JoinGroup goes once the callback is done");
    assert_eq!(sa.owned().len() + sb.owned().len(), 4);
    assert!(sa.owned().is_disjoint(&sb.owned()));
}

#[tokio::test(start_paused = true)]
async fn a_member_cut_off_past_its_session_reports_lost_then_rejoins() {
    let cluster = Cluster::new(4);
    let (mut a, mut sa) = (cluster.member("a", None), Seen2::default());
    let (mut b, mut sb) = (cluster.member("b", None), Seen2::default());
    settle(&mut a, &mut sa, &mut b, &mut sb, 15_000).await;
    assert_eq!(sa.owned().len(), 2);
    cluster.set_down("a", true);
    // The broker expels a after 6 s and b takes everything; a hears nothing and times its own
    // session out: lost, never revoked.
    let before = sa.events.len();
    settle(&mut a, &mut sa, &mut b, &mut sb, 9_000).await;
    let after: Vec<&MemberEvent> =
        sa.events[before..].iter().filter(|e| !matches!(e, MemberEvent::Error { .. })).collect();
    assert!(
        matches!(after.first(), Some(MemberEvent::Lost { owned, partitions, .. }) if owned.is_empty() && partitions.len() == 1),
        "{after:?}"
    );
    assert!(!after.iter().any(|e| matches!(e, MemberEvent::Revoked { .. })));
    assert!(sa.events[before..]
        .iter()
        .any(|e| matches!(e, MemberEvent::Error { fatal: false, error: MemberError::Transport(_) })));
    assert_eq!(sb.owned(), all(4));
    cluster.set_down("a", false);
    settle(&mut a, &mut sa, &mut b, &mut sb, 20_000).await;
    assert_eq!((sa.owned().len(), sb.owned().len()), (2, 2));
    assert!(sa.owned().is_disjoint(&sb.owned()));
}

#[tokio::test(start_paused = true)]
async fn a_static_member_sends_no_leave_group() {
    let cluster = Cluster::new(2);
    let (mut s, mut ss) = (cluster.member("s", Some("instance-1")), Seen2::default());
    assert!(until(&mut s, &mut ss, 10_000, is_assigned).await);
    s.leave();
    assert!(until(&mut s, &mut ss, 5_000, |e| *e == MemberEvent::Left).await);
    let apis: Vec<&str> = cluster.log().iter().filter(|x| x.member == "s").map(|x| x.api).collect();
    assert!(!apis.contains(&"LeaveGroup"), "{apis:?}");
    assert!(apis.contains(&"SyncGroup"));
}

#[tokio::test(start_paused = true)]
async fn an_unreachable_cluster_at_startup_is_fatal_after_the_startup_timeout() {
    let cluster = Cluster::new(2);
    cluster.set_down("x", true);
    let mut config = MemberConfig::new("g", ["t"]);
    config.startup_timeout = Some(Duration::from_millis(2_000));
    let transport = SimTransport { net: Arc::clone(&cluster.net), wake: Arc::clone(&cluster.wake), member: "x".into() };
    let mut m = MemberDriver::start(transport, config, vec![builtin("range").unwrap()]).unwrap();
    let mut seen = Seen2::default();
    let started = Instant::now();
    assert!(until(&mut m, &mut seen, 10_000, |e| matches!(e, MemberEvent::Error { fatal: true, .. })).await);
    assert!(started.elapsed() >= Duration::from_millis(2_000));
    let retries = seen.events.iter().filter(|e| matches!(e, MemberEvent::Error { fatal: false, .. })).count();
    // 100 ms doubling up to 1 s: a handful of attempts, not one per millisecond.
    assert!((3..=8).contains(&retries), "{retries} retries");
    assert!(m.next().await.is_none());
}

#[tokio::test(start_paused = true)]
async fn run_calls_the_listener_in_order_and_leaves_on_shutdown() {
    #[derive(Default)]
    struct Record(Vec<String>);
    impl RebalanceListener for Record {
        async fn on_joined(&mut self, _member_id: &str, generation_id: i32, _assignor: &str, leader: bool) {
            self.0.push(format!("joined {generation_id} {leader}"));
        }
        async fn on_partitions_assigned(&mut self, partitions: &[TopicPartitions]) {
            // An async callback that takes its time: the member waits for it.
            tokio::time::sleep(Duration::from_millis(500)).await;
            self.0.push(format!("assigned {:?}", PartitionSet::from_groups(partitions).len()));
        }
        async fn on_partitions_revoked(&mut self, partitions: &[TopicPartitions]) {
            self.0.push(format!("revoked {:?}", PartitionSet::from_groups(partitions).len()));
        }
    }
    let cluster = Cluster::new(3);
    let member = cluster.member("a", None);
    let mut listener = Record::default();
    let shutdown = tokio::time::sleep(Duration::from_millis(5_000));
    member.run(&mut listener, shutdown).await.unwrap();
    assert_eq!(listener.0, ["joined 1 true", "assigned 3", "revoked 3"]);
    let groups: BTreeMap<&str, usize> = cluster.log().iter().fold(BTreeMap::new(), |mut m, s| {
        *m.entry(s.api).or_default() += 1;
        m
    });
    assert_eq!(groups.get("LeaveGroup"), Some(&1));
}

#[tokio::test(start_paused = true)]
async fn a_subscribed_topic_missing_from_the_metadata_is_looked_for_again_soon() {
    // The topic is not in the cluster's metadata yet (just created): the member joins and is
    // assigned nothing; once the topic appears it must own it well before metadata.max.age (5 min).
    let cluster = Cluster::new(4);
    let full = std::mem::take(&mut cluster.net.lock().unwrap().metadata);
    let (mut a, mut sa) = (cluster.member("a", None), Seen2::default());
    assert!(until(&mut a, &mut sa, 10_000, is_assigned).await);
    assert!(sa.owned().is_empty());
    cluster.net.lock().unwrap().metadata = full;
    assert!(
        until(&mut a, &mut sa, 30_000, |e| matches!(e, MemberEvent::Assigned { owned, .. } if !owned.is_empty())).await,
        "the topic was not picked up within 30 s: {:?}",
        sa.events
    );
    assert_eq!(sa.owned(), all(4));
}

#[tokio::test(start_paused = true)]
async fn a_revoke_callback_commits_before_the_rejoin_and_the_next_owner_starts_there() {
    let cluster = Cluster::new(4);
    let (mut a, mut sa) = (cluster.member("a", None), Seen2::default());
    assert!(until(&mut a, &mut sa, 10_000, is_assigned).await);
    assert!(matches!(&sa.events[1], MemberEvent::Assigned { committed, .. } if committed.is_empty()));
    let control = a.control();
    let first: Vec<PartitionOffset> = (0..4).map(|p| PartitionOffset::new("t", p, 10 + i64::from(p))).collect();
    assert_eq!(control.commit(first.clone()).await, Ok(first.clone()));
    assert_eq!(control.committed().await, first);

    let (mut b, mut sb) = (cluster.member("b", None), Seen2::default());
    // a's revocation: commit the revoked partitions from inside the callback, then acknowledge.
    let deadline = Instant::now() + Duration::from_millis(20_000);
    let mut revoked_commit = None;
    while sb.owned().len() < 2 && Instant::now() < deadline {
        tokio::select! {
            Some(d) = a.next() => {
                if let MemberEvent::Revoked { partitions, .. } = &d.event {
                    let moved: Vec<PartitionOffset> = PartitionSet::from_groups(partitions)
                        .iter()
                        .map(|(t, p)| PartitionOffset::new(t, p, 100 + i64::from(p)))
                        .collect();
                    let at = cluster.log().len();
                    assert_eq!(control.commit(moved.clone()).await, Ok(moved.clone()), "in generation 1");
                    revoked_commit = Some((at, moved));
                }
                sa.events.push(d.event.clone());
            }
            Some(d) = b.next() => sb.events.push(d.event.clone()),
            () = sleep_until(deadline) => break,
        }
    }
    let (log_at, moved) = revoked_commit.expect("a revoked partitions");
    assert_eq!(sb.owned().len(), 2);
    // b was told where a stopped.
    let told: Vec<PartitionOffset> = sb
        .events
        .iter()
        .filter_map(|e| match e {
            MemberEvent::Assigned { committed, .. } => Some(committed.clone()),
            _ => None,
        })
        .flatten()
        .collect();
    assert_eq!(told, moved);
    // a's rejoin went out only after the commit made in its callback.
    let log = cluster.log();
    let a_requests: Vec<&str> = log[log_at..].iter().filter(|s| s.member == "a").map(|s| s.api).collect();
    let commit = a_requests.iter().position(|&api| api == "OffsetCommit").expect("the callback's commit");
    let join = a_requests.iter().position(|&api| api == "JoinGroup").expect("the rejoin");
    assert!(commit < join, "{a_requests:?}");
}

#[tokio::test(start_paused = true)]
async fn a_commit_during_a_rebalance_fails_at_once() {
    let cluster = Cluster::new(2);
    let mut a = cluster.member("a", None);
    let control = a.control();
    // Not joined yet: out of any generation, or rebalancing.
    let early = control.commit_async(vec![PartitionOffset::new("t", 0, 1)]).await;
    assert!(matches!(early, Err(CommitError::CommitFailed | CommitError::RebalanceInProgress)), "{early:?}");
    let mut sa = Seen2::default();
    assert!(until(&mut a, &mut sa, 10_000, is_assigned).await);
    assert_eq!(control.commit_async(vec![PartitionOffset::new("t", 0, 1)]).await.map(|v| v.len()), Ok(1));
    let commits = cluster.log().iter().filter(|s| s.api == "OffsetCommit").count();
    assert_eq!(commits, 1, "the early commit was never sent");
}

/// An assignor that blocks until released, and records how many heartbeats its member sent
/// while it was blocked.
struct SlowAssignor {
    net: Arc<Mutex<Net>>,
    started: std::sync::mpsc::Sender<()>,
    release: Mutex<std::sync::mpsc::Receiver<()>>,
    heartbeats_meanwhile: Arc<Mutex<Option<usize>>>,
}

impl PartitionAssignor for SlowAssignor {
    fn name(&self) -> &str {
        "slow"
    }
    fn assign(
        &self,
        md: &ClusterMetadata,
        members: &[crate::assignor::GroupMember],
    ) -> Result<crate::assignor::GroupAssignment, crate::assignor::AssignError> {
        let heartbeats =
            |net: &Arc<Mutex<Net>>| net.lock().unwrap().log.iter().filter(|s| s.api == "Heartbeat").count();
        let before = heartbeats(&self.net);
        let _ = self.started.send(());
        // Bounded in real time, so that a driver that blocks on it still ends the test.
        let _ = self.release.lock().unwrap().recv_timeout(std::time::Duration::from_secs(10));
        *self.heartbeats_meanwhile.lock().unwrap() = Some(heartbeats(&self.net) - before);
        let mut out = crate::assignor::GroupAssignment::new();
        for (i, m) in members.iter().enumerate() {
            let parts = if i > 0 {
                vec![]
            } else {
                md.topics
                    .iter()
                    .map(|(t, info)| TopicPartitions::new(t.clone(), (0..info.partitions).collect::<Vec<_>>()))
                    .collect()
            };
            out.insert(m.member_id.clone(), &crate::Assignment::new(parts));
        }
        Ok(out)
    }
}

// Real time: tokio's paused clock does not advance while a blocking task runs.
#[tokio::test]
async fn a_slow_assignment_never_holds_up_the_heartbeats() {
    let cluster = Cluster::new(2);
    let (started_tx, started) = std::sync::mpsc::channel();
    let (release, release_rx) = std::sync::mpsc::channel();
    let meanwhile = Arc::new(Mutex::new(None));
    let assignor = SlowAssignor {
        net: Arc::clone(&cluster.net),
        started: started_tx,
        release: Mutex::new(release_rx),
        heartbeats_meanwhile: Arc::clone(&meanwhile),
    };
    let mut config = MemberConfig::new("g", ["t"]);
    config.coordinator.session_timeout_ms = 6_000;
    config.coordinator.heartbeat_interval_ms = 100;
    let transport = SimTransport { net: Arc::clone(&cluster.net), wake: Arc::clone(&cluster.wake), member: "a".into() };
    let mut a = MemberDriver::start(transport, config, vec![Box::new(assignor)]).unwrap();
    let mut sa = Seen2::default();
    // Wait until the assignor runs, then for three heartbeats past it (at most 5 s).
    let count = || cluster.log().iter().filter(|s| s.api == "Heartbeat").count();
    let mut since = None;
    for _ in 0..100 {
        if since.is_none() && started.try_recv().is_ok() {
            since = Some(count());
        }
        if since.is_some_and(|n| count() >= n + 3) {
            break;
        }
        tokio::select! {
            Some(d) = a.next() => sa.events.push(d.event.clone()),
            () = tokio::time::sleep(Duration::from_millis(50)) => {}
        }
    }
    let _ = release.send(());
    if !sa.events.iter().any(is_assigned) {
        assert!(until(&mut a, &mut sa, 10_000, is_assigned).await, "{:?}", sa.events);
    }
    assert_eq!(sa.owned(), all(2));
    let meanwhile = meanwhile.lock().unwrap().expect("the assignor ran");
    assert!(meanwhile >= 3, "{meanwhile} heartbeats while the assignment ran");
}
