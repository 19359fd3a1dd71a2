//! A model of Apache Kafka's own sticky assignor (`AbstractStickyAssignor`, 3.9), `HashMap`
//! iteration order included: the oracle the assignor parity tests compare ours with, where no
//! recorded run of Java itself exists (random groups, whole rebalances played round by round).
//! It lives in the tests' helper crate, not in the product: the product never computes Java's
//! answer (issue 27); `tests/assignor_java_model.rs` checks the model against Java's own results
//! round for round.
//!
//! The model follows Java's steps on Java's data structures where their order decides the answer.
//! The leader's `Map<String, Subscription>` is a `HashMap` (as in `ConsumerCoordinator`): it
//! iterates in bucket order at its capacity (from `String.hashCode` and the table's growth), then
//! in insertion order among ids that share a bucket. The model breaks that last tie by member id
//! instead of arrival order, so its result stays independent of the order members are listed in;
//! it is Java's exactly whenever the ids sharing a bucket arrived in id order or their order does
//! not matter, which holds on every committed parity run. The partition sets of the balancing
//! loop's movement records are `HashSet`s of `TopicPartition`, whose first element is found by the
//! same rule (bucket, then insertion). `TreeSet`s and sorts are deterministic and taken as they
//! are. Where Java would throw, hand out a partition that does not exist, or reach a state whose
//! order the model does not follow (a `HashSet` bin turned into a tree), and past its work
//! budget, the model answers `None`.
//!
//! It reads the group through the crate's public types only: topics and members as
//! [`ClusterMetadata`] and [`GroupMember`], claims through `internal::member_claim` (the
//! crate's own reading of a claim).

use kafka_consumer_protocol::assignor::{ClusterMetadata, GroupMember, TopicInfo};
use kafka_consumer_protocol::codec::java_string_cmp;
use kafka_consumer_protocol::internal::member_claim;
use std::collections::{BTreeSet, HashMap};

type FxMap<K, V> = HashMap<K, V>;

/// "No member" in the model's per-partition arrays.
const NONE: u32 = u32::MAX;

/// The topics the members subscribe to that exist with partitions, in Java's name order, with
/// their partitions numbered flat (topic by topic).
struct Topics<'a> {
    names: Vec<&'a str>,
    info: Vec<&'a TopicInfo>,
    /// Prefix sums of partition counts; `base.len() == names.len() + 1`.
    base: Vec<u32>,
    index: HashMap<&'a str, u32>,
}

impl<'a> Topics<'a> {
    fn new(metadata: &'a ClusterMetadata, members: &[Member<'a>]) -> Option<Self> {
        let mut names: Vec<&'a str> = Vec::new();
        for m in members {
            for t in m.topics() {
                if let Some((name, info)) = metadata.topics.get_key_value(t) {
                    if info.partitions > 0 && !names.contains(&name.as_str()) {
                        names.push(name.as_str());
                    }
                }
            }
        }
        names.sort_unstable_by(|a, b| java_string_cmp(a, b));
        let info: Vec<&TopicInfo> = names.iter().map(|n| &metadata.topics[*n]).collect();
        let mut base = vec![0u32];
        let mut acc = 0u64;
        for i in &info {
            acc += i.partitions as u64;
            if acc >= u64::from(u32::MAX) {
                return None;
            }
            base.push(acc as u32);
        }
        let index = names.iter().enumerate().map(|(i, n)| (*n, i as u32)).collect();
        Some(Topics { names, info, base, index })
    }

    fn len(&self) -> usize {
        self.names.len()
    }

    fn total(&self) -> usize {
        *self.base.last().unwrap_or(&0) as usize
    }

    fn id(&self, name: &str) -> Option<u32> {
        self.index.get(name).copied()
    }

    fn count(&self, t: u32) -> u32 {
        self.base[t as usize + 1] - self.base[t as usize]
    }

    fn topic_of(&self, p: u32) -> u32 {
        (self.base.partition_point(|&b| b <= p) - 1) as u32
    }

    fn flat(&self, t: u32, partition: i32) -> Option<u32> {
        (partition >= 0 && (partition as u32) < self.count(t)).then(|| self.base[t as usize] + partition as u32)
    }
}

/// A member as the model reads it.
#[derive(Clone, Copy)]
struct Member<'a>(&'a GroupMember);

impl<'a> Member<'a> {
    fn id(self) -> &'a str {
        &self.0.member_id
    }

    fn topics(self) -> impl Iterator<Item = &'a str> {
        self.0.subscription.topics.iter().map(String::as_str)
    }

    fn generation_id(self) -> i32 {
        self.0.subscription.generation_id
    }

    fn rack(self) -> Option<&'a str> {
        self.0.subscription.rack_id.as_deref().filter(|r| !r.is_empty())
    }

    /// `owned_partitions`, per topic as listed.
    fn owned(self) -> impl Iterator<Item = (&'a str, &'a [i32])> {
        self.0.subscription.owned_partitions.iter().map(|g| (g.topic.as_str(), g.partitions.as_slice()))
    }
}

/// Member indices in member-id (`String.compareTo`) order.
fn member_id_order(members: &[Member<'_>]) -> Vec<u32> {
    let mut order: Vec<u32> = (0..members.len() as u32).collect();
    order.sort_by(|&a, &b| java_string_cmp(members[a as usize].id(), members[b as usize].id()));
    order
}

/// The inverse of an order of member indices: per member index, its position.
fn rank_of(order: &[u32]) -> Vec<u32> {
    let mut rank = vec![0u32; order.len()];
    for (r, &m) in order.iter().enumerate() {
        rank[m as usize] = r as u32;
    }
    rank
}

/// One round of the model's answer ([`java_sticky_model`]): per member, its `(topic, partition)`s.
pub type JavaModelRound = Vec<(String, Vec<(String, i32)>)>;

/// Java's `DEFAULT_GENERATION`.
const DEFAULT_GENERATION: i32 = -1;

/// Java `String.hashCode`: over UTF-16 code units, wrapping.
fn string_hash(s: &str) -> i32 {
    s.encode_utf16().fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// `HashMap.hash`: the high half folded into the low half.
fn spread(h: i32) -> u32 {
    let h = h as u32;
    h ^ (h >> 16)
}

/// The table size of a default `HashMap` (16, doubled whenever the size passes 3/4 of it) after
/// `n` insertions.
fn default_capacity(n: usize) -> usize {
    let mut cap = 16;
    while n > cap / 4 * 3 {
        cap *= 2;
    }
    cap
}

/// The `HashSet<TopicPartition>` of one movement record. Only its first element is ever read, so
/// it keeps (partition, spread hash, insertion stamp) and the table size.
struct JavaPartitionHashSet {
    items: Vec<(u32, u32, u64)>,
    cap: u32,
}

impl JavaPartitionHashSet {
    fn new() -> Self {
        JavaPartitionHashSet { items: Vec::new(), cap: 16 }
    }

    /// `add`; false when Java would turn a bin into a tree (the order is not modelled then).
    fn insert(&mut self, p: u32, hash: u32, stamp: u64) -> bool {
        if self.items.iter().any(|&(q, _, _)| q == p) {
            return true;
        }
        let bin = hash & (self.cap - 1);
        let in_bin = self.items.iter().filter(|&&(_, h, _)| h & (self.cap - 1) == bin).count();
        self.items.push((p, hash, stamp));
        if in_bin >= 8 {
            // `treeifyBin`: a small table grows instead.
            if self.cap < 64 {
                self.cap *= 2;
            } else {
                return false;
            }
        }
        if self.items.len() > (self.cap as usize) / 4 * 3 {
            self.cap *= 2;
        }
        true
    }

    fn remove(&mut self, p: u32) {
        self.items.retain(|&(q, _, _)| q != p);
    }

    /// `iterator().next()`: the lowest bin, then the oldest entry in it.
    fn first(&self) -> Option<u32> {
        let mask = self.cap - 1;
        self.items.iter().min_by_key(|&&(_, h, s)| (h & mask, s)).map(|&(p, _, _)| p)
    }
}

/// Java's `PartitionMovements`: where each moved partition came from, and per (topic, from,
/// to) the partitions moved that way.
#[derive(Default)]
struct Movements {
    by_partition: FxMap<u32, (u32, u32)>,
    by_pair: FxMap<(u32, u32, u32), JavaPartitionHashSet>,
    pairs_per_topic: FxMap<u32, usize>,
    stamp: u64,
    unmodelled: bool,
}

impl Movements {
    fn remove_record(&mut self, p: u32, t: u32) -> (u32, u32) {
        let pair = self.by_partition.remove(&p).expect("a record exists");
        let key = (t, pair.0, pair.1);
        let set = self.by_pair.get_mut(&key).expect("its set exists");
        set.remove(p);
        if set.items.is_empty() {
            self.by_pair.remove(&key);
            let n = self.pairs_per_topic.get_mut(&t).expect("counted");
            *n -= 1;
            if *n == 0 {
                self.pairs_per_topic.remove(&t);
            }
        }
        pair
    }

    fn add_record(&mut self, p: u32, t: u32, hash: u32, pair: (u32, u32)) {
        self.by_partition.insert(p, pair);
        let key = (t, pair.0, pair.1);
        let set = self.by_pair.entry(key).or_insert_with(|| {
            *self.pairs_per_topic.entry(t).or_insert(0) += 1;
            JavaPartitionHashSet::new()
        });
        self.stamp += 1;
        if !set.insert(p, hash, self.stamp) {
            self.unmodelled = true;
        }
    }

    fn move_partition(&mut self, p: u32, t: u32, hash: u32, old: u32, new: u32) {
        if self.by_partition.contains_key(&p) {
            let (src, _) = self.remove_record(p, t);
            if src != new {
                self.add_record(p, t, hash, (src, new));
            }
        } else {
            self.add_record(p, t, hash, (old, new));
        }
    }

    /// `getTheActualPartitionToBeMoved`: moving `p` from `old` to `new` when some partition of
    /// the topic went from `new` to `old`'s origin before moves that one back instead.
    fn actual_partition(&self, p: u32, t: u32, mut old: u32, new: u32) -> u32 {
        if !self.pairs_per_topic.contains_key(&t) {
            return p;
        }
        if let Some(&(src, _)) = self.by_partition.get(&p) {
            old = src;
        }
        match self.by_pair.get(&(t, new, old)) {
            Some(set) => set.first().unwrap_or(p),
            None => p,
        }
    }
}

/// The group as Java's assignor reads it, on member indices (input order) and flat partitions.
struct Model<'a> {
    topics: &'a Topics<'a>,
    ids: Vec<&'a str>,
    /// Member indices in the leader's `HashMap` iteration order (ties in a bucket by id).
    order: Vec<u32>,
    /// Rank in member-id (`String.compareTo`) order, per member.
    rank: Vec<u32>,
    /// Per member: its subscription's topic names as listed.
    raw_topics: Vec<Vec<&'a str>>,
    /// Per member: the known topics of its list, as listed (duplicates kept, as Java's lists).
    known: Vec<Vec<u32>>,
    /// Per member: the same, sorted and deduplicated (membership tests).
    subscribed: Vec<Vec<u32>>,
    /// Per member: its claim (`MemberData`) on known topics, and its generation.
    claims: Vec<(Vec<u32>, Option<i32>)>,
    /// Per member: the subscription's own generation field (`-1` when absent).
    wire_generation: Vec<i32>,
    /// Rack-aware assignment is on (Java's `useRackAwareAssignment`).
    active: bool,
    /// Per member: its rack id (interned), when it has one.
    member_rack: Vec<Option<u32>>,
    /// Per partition: its replicas' racks (interned, sorted).
    partition_racks: Vec<Vec<u32>>,
    /// Per partition: the number of members on its replicas' racks (Java's
    /// `numConsumersByPartition`); empty when no member has a rack.
    members_on_racks: Vec<u32>,
    topic_hash: Vec<i32>,
    /// Per flat partition: its topic.
    topic_of: Vec<u32>,
    /// Some member owns partitions of topics that are not assigned (cooperative): it revokes
    /// them, which takes a follow-up round.
    owns_unknown: bool,
}

/// Java's `TopicPartition.hashCode`.
fn partition_hash(topic_hash: i32, partition: u32) -> u32 {
    spread(31i32.wrapping_mul(31i32.wrapping_add(partition as i32)).wrapping_add(topic_hash))
}

/// The most rounds the model plays for `cooperative-sticky`, as the parity tool (30): Java's
/// mostly converge in one to a few follow-ups, but some large rack-aware groups take 17, and a
/// few never stop withholding (the model then gives up, and ours stands).
const MAX_FOLLOW_UPS: usize = 29;

/// Per member (input order), its partitions in Java's list order.
type Lists = Vec<Vec<u32>>;

/// Java's answer in each round, after the cooperative assignor withheld what others must
/// revoke first; and (cooperative) the first round's lists before anything was withheld.
fn java_rounds(topics: &Topics<'_>, members: &[Member<'_>], cooperative: bool) -> Option<(Vec<Lists>, Option<Lists>)> {
    if members.is_empty() {
        return None;
    }
    let mut model = Model::new(topics, members, cooperative)?;
    let mut rounds = Vec::new();
    let mut first = None;
    loop {
        let (mut assignment, withheld) = model.assign()?;
        if cooperative {
            if rounds.is_empty() {
                first = Some(assignment.clone());
            }
            for list in &mut assignment {
                list.retain(|&p| !withheld[p as usize]);
            }
        }
        // Another round while some member lost a partition it owned (it revokes, and rejoins).
        let lost = |m: usize, list: &[u32]| {
            let mut kept = list.to_vec();
            kept.sort_unstable();
            model.claims[m].0.iter().any(|p| kept.binary_search(p).is_err())
        };
        let done = !cooperative
            || !(std::mem::take(&mut model.owns_unknown) || assignment.iter().enumerate().any(|(m, l)| lost(m, l)));
        if done || rounds.len() == MAX_FOLLOW_UPS {
            rounds.push(assignment);
            return done.then_some((rounds, first));
        }
        // Every later round starts from the last one's lists at one shared generation: a round
        // that repeats an earlier one means Java cycles and never converges.
        if cooperative && rounds.contains(&assignment) {
            return None;
        }
        // Everyone rejoins owning what it was given, at the next generation.
        // (Past `i32::MAX` Java would wrap: the model stops there.)
        let generation =
            model.claims.iter().filter_map(|c| c.1).max().unwrap_or(DEFAULT_GENERATION).max(0).checked_add(1)?;
        for (m, list) in assignment.iter().enumerate() {
            model.claims[m] = (list.clone(), Some(generation));
            model.wire_generation[m] = generation;
        }
        rounds.push(assignment);
    }
}

/// What the model of Java's sticky assignor answers in each round (one for `sticky`; for
/// `cooperative-sticky` the first and every follow-up until nothing is withheld, each member
/// rejoining with what it was given at the next generation), per member in input order,
/// partitions in Java's list order; `None` where Java throws, does not converge within
/// [`MAX_FOLLOW_UPS`] follow-ups, or the model does not follow Java (see the module).
pub fn java_sticky_model(
    metadata: &ClusterMetadata,
    members: &[GroupMember],
    cooperative: bool,
) -> Option<Vec<JavaModelRound>> {
    let members: Vec<Member<'_>> = members.iter().map(Member).collect();
    let topics = Topics::new(metadata, &members)?;
    let (rounds, _) = java_rounds(&topics, &members, cooperative)?;
    let name = |p: u32| {
        let t = topics.topic_of(p);
        (topics.names[t as usize].to_owned(), (p - topics.base[t as usize]) as i32)
    };
    Some(
        rounds
            .iter()
            .map(|round| {
                members
                    .iter()
                    .zip(round)
                    .map(|(m, list)| (m.id().to_owned(), list.iter().map(|&p| name(p)).collect()))
                    .collect()
            })
            .collect(),
    )
}

impl<'a> Model<'a> {
    fn new(topics: &'a Topics<'a>, members: &[Member<'a>], cooperative: bool) -> Option<Self> {
        let n = members.len();
        let ids: Vec<&str> = members.iter().map(|m| m.id()).collect();
        let cap = default_capacity(n) as u32;
        let rank = rank_of(&member_id_order(members));
        // Bucket order; ids sharing a bucket by id, not arrival (see the module).
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.sort_by_key(|&i| (spread(string_hash(ids[i as usize])) & (cap - 1), rank[i as usize]));
        let mut raw_topics = Vec::with_capacity(n);
        let mut known = Vec::with_capacity(n);
        let mut subscribed = Vec::with_capacity(n);
        let mut claims = Vec::with_capacity(n);
        let mut wire_generation = Vec::with_capacity(n);
        for &m in members {
            let mut raw = Vec::new();
            raw.extend(m.topics());
            let k: Vec<u32> = raw.iter().filter_map(|t| topics.id(t)).collect();
            let mut s = k.clone();
            s.sort_unstable();
            s.dedup();
            raw_topics.push(raw);
            known.push(k);
            subscribed.push(s);
            claims.push(member_data(topics, m, cooperative)?);
            wire_generation.push(if m.generation_id() >= 0 { m.generation_id() } else { DEFAULT_GENERATION });
        }
        // Racks, interned.
        let mut rack_names: Vec<&str> = Vec::new();
        let intern = |r: &'a str, names: &mut Vec<&'a str>| -> u32 {
            match names.iter().position(|&x| x == r) {
                Some(i) => i as u32,
                None => {
                    names.push(r);
                    (names.len() - 1) as u32
                }
            }
        };
        let member_rack: Vec<Option<u32>> =
            members.iter().map(|m| m.rack().map(|r| intern(r, &mut rack_names))).collect();
        let any_member_rack = member_rack.iter().any(Option::is_some);
        let total = topics.total();
        let mut partition_racks: Vec<Vec<u32>> = vec![Vec::new(); if any_member_rack { total } else { 0 }];
        let mut members_on_racks = Vec::new();
        let mut active = false;
        if any_member_rack {
            for (t, info) in topics.info.iter().enumerate() {
                for p in 0..topics.count(t as u32) {
                    let flat = topics.base[t] + p;
                    let mut rs: Vec<u32> = info
                        .partition_racks
                        .get(p as usize)
                        .into_iter()
                        .flatten()
                        .map(|r| intern(r.as_str(), &mut rack_names))
                        .collect();
                    rs.sort_unstable();
                    rs.dedup();
                    partition_racks[flat as usize] = rs;
                }
            }
            let mut on_rack = vec![0u32; rack_names.len()];
            for r in member_rack.iter().flatten() {
                on_rack[*r as usize] += 1;
            }
            members_on_racks = partition_racks.iter().map(|rs| rs.iter().map(|&r| on_rack[r as usize]).sum()).collect();
            // `useRackAwareAssignment`: some member rack holds replicas, and not every
            // partition has the same racks as all partitions together.
            let mut all: Vec<u32> = partition_racks.iter().flatten().copied().collect();
            all.sort_unstable();
            all.dedup();
            let overlap = member_rack.iter().flatten().any(|r| all.binary_search(r).is_ok());
            active = overlap && !partition_racks.iter().all(|rs| *rs == all);
        }
        let topic_hash = topics.names.iter().map(|t| string_hash(t)).collect();
        Some(Model {
            topics,
            ids,
            order,
            rank,
            raw_topics,
            known,
            subscribed,
            claims,
            wire_generation,
            active,
            member_rack,
            partition_racks,
            members_on_racks,
            topic_hash,
            topic_of: (0..topics.len() as u32).flat_map(|t| std::iter::repeat_n(t, topics.count(t) as usize)).collect(),
            owns_unknown: cooperative
                && members.iter().any(|m| {
                    let mut unknown = false;
                    for (t, parts) in m.owned() {
                        unknown |= topics.id(t).is_none() && !parts.is_empty();
                    }
                    unknown
                }),
        })
    }

    /// One run of Java's assignor: per member its partitions, and which partitions
    /// `cooperative-sticky` withholds (all false for `sticky`: the caller ignores them). Checked
    /// valid: each partition once, to a member subscribed to its topic.
    fn assign(&self) -> Option<(Vec<Vec<u32>>, Vec<bool>)> {
        let total = self.topics.total();
        let (owned, multiple, max_generation) = self.resolve_claims();
        let mut withheld = vec![false; total];
        let assignment = if self.all_subscriptions_equal() {
            let (assignment, maybe_revoked) = self.constrained(owned, &multiple)?;
            // The constrained builder's `partitionsTransferringOwnership`.
            for (m, list) in assignment.iter().enumerate() {
                for &p in list {
                    let from = maybe_revoked[p as usize];
                    withheld[p as usize] = (from != NONE && from != m as u32) || multiple.contains(&p);
                }
            }
            assignment
        } else {
            let assignment = self.general(owned, max_generation)?;
            // `computePartitionsTransferringOwnership`: given to a member that did not own it,
            // and owned by a member that lost it.
            let mut holder = vec![NONE; total];
            for (m, list) in assignment.iter().enumerate() {
                for &p in list {
                    holder[p as usize] = m as u32;
                }
            }
            let mut revoked = vec![false; total];
            let mut owned_by: Vec<Vec<u32>> = vec![Vec::new(); self.ids.len()];
            for (m, (parts, _)) in self.claims.iter().enumerate() {
                for &p in parts {
                    if holder[p as usize] != m as u32 {
                        revoked[p as usize] = true;
                    }
                }
                owned_by[m] = parts.clone();
                owned_by[m].sort_unstable();
            }
            for (m, list) in assignment.iter().enumerate() {
                for &p in list {
                    withheld[p as usize] = revoked[p as usize] && owned_by[m].binary_search(&p).is_err();
                }
            }
            assignment
        };
        let mut seen = vec![false; total];
        for (m, list) in assignment.iter().enumerate() {
            for &p in list {
                let t = self.topic_of[p as usize];
                if std::mem::replace(&mut seen[p as usize], true) || self.subscribed[m].binary_search(&t).is_err() {
                    return None;
                }
            }
        }
        seen.iter().all(|&s| s).then_some((assignment, withheld))
    }

    fn hash(&self, p: u32) -> u32 {
        let t = self.topic_of[p as usize];
        partition_hash(self.topic_hash[t as usize], p - self.topics.base[t as usize])
    }

    /// `racksMismatch`: the member has a rack (rack awareness on) that holds no replica.
    fn mismatch(&self, m: u32, p: u32) -> bool {
        self.active
            && self.member_rack[m as usize].is_some_and(|r| self.partition_racks[p as usize].binary_search(&r).is_err())
    }

    /// `allSubscriptionsEqual`'s claim resolution: per member the partitions it keeps claiming,
    /// the partitions claimed twice at one generation, and the highest generation.
    fn resolve_claims(&self) -> (Vec<Vec<u32>>, BTreeSet<u32>, i32) {
        let n = self.ids.len();
        let mut owned: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut multiple = BTreeSet::new();
        let mut previous_owner: Vec<u32> = vec![NONE; self.topics.total()];
        let mut max_generation = DEFAULT_GENERATION;
        for &m in &self.order {
            let (parts, generation) = &self.claims[m as usize];
            let g = generation.unwrap_or(DEFAULT_GENERATION);
            max_generation = max_generation.max(g);
            for &p in parts {
                match previous_owner[p as usize] {
                    NONE => {
                        owned[m as usize].push(p);
                        previous_owner[p as usize] = m;
                    }
                    other => {
                        let og = self.wire_generation[other as usize];
                        if g == og {
                            multiple.insert(p);
                            remove_first(&mut owned[other as usize], p);
                            previous_owner[p as usize] = m;
                        } else if g > og {
                            owned[m as usize].push(p);
                            remove_first(&mut owned[other as usize], p);
                            previous_owner[p as usize] = m;
                        }
                    }
                }
            }
        }
        (owned, multiple, max_generation)
    }

    /// Whether every member lists the same topics (Java compares the raw lists as sets, the
    /// first member's list in map order setting the set).
    fn all_subscriptions_equal(&self) -> bool {
        let mut set: Vec<&str> = Vec::new();
        let mut equal = true;
        for &m in &self.order {
            let list = &self.raw_topics[m as usize];
            if set.is_empty() {
                set = list.clone();
                set.sort_unstable();
                set.dedup();
            } else if equal && !(list.len() == set.len() && list.iter().all(|t| set.binary_search(t).is_ok())) {
                equal = false;
            }
        }
        equal
    }

    /// `ConstrainedAssignmentBuilder`.
    fn constrained(&self, owned: Vec<Vec<u32>>, multiple: &BTreeSet<u32>) -> Option<(Vec<Vec<u32>>, Vec<u32>)> {
        let n = self.ids.len();
        let total = self.topics.total();
        let min_quota = total / n;
        let max_quota = total.div_ceil(n);
        let expected_over = total % n;
        let mut over = 0usize;
        let mut assignment: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut assigned: Vec<u32> = Vec::new();
        let mut under: Vec<u32> = Vec::new();
        let mut exact: Vec<u32> = Vec::new();
        // `maybeRevokedPartitions`: owned partitions not kept, with the member that owned them.
        let mut maybe_revoked = vec![NONE; total];
        for &m in &self.order {
            let mut mine: Vec<u32> = Vec::new();
            for &p in &owned[m as usize] {
                if self.mismatch(m, p) {
                    maybe_revoked[p as usize] = m;
                } else {
                    mine.push(p);
                }
            }
            // By partition number, then topic name (topic ids are in name order).
            mine.sort_by_key(|&p| {
                let t = self.topic_of[p as usize];
                (p - self.topics.base[t as usize], t)
            });
            for &p in multiple {
                remove_first(&mut mine, p);
            }
            let target = &mut assignment[m as usize];
            if mine.len() < min_quota {
                target.extend_from_slice(&mine);
                assigned.extend_from_slice(&mine);
                under.push(m);
            } else if mine.len() >= max_quota && over < expected_over {
                over += 1;
                if over == expected_over {
                    exact.clear();
                }
                target.extend_from_slice(&mine[..max_quota]);
                assigned.extend_from_slice(&mine[..max_quota]);
                for &p in &mine[max_quota..] {
                    maybe_revoked[p as usize] = m;
                }
            } else {
                target.extend_from_slice(&mine[..min_quota]);
                assigned.extend_from_slice(&mine[..min_quota]);
                for &p in &mine[min_quota..] {
                    maybe_revoked[p as usize] = m;
                }
                if over < expected_over {
                    exact.push(m);
                }
            }
        }
        // Unassigned, in topic-name then partition order (flat order), fewest members on their
        // racks first when some member has a rack (a stable sort).
        let mut taken = vec![false; total];
        for &p in &assigned {
            taken[p as usize] = true;
        }
        let mut unassigned: Vec<u32> = (0..total as u32).filter(|&p| !taken[p as usize]).collect();
        if !self.members_on_racks.is_empty() {
            unassigned.sort_by_key(|&p| self.members_on_racks[p as usize]);
        }
        let by_id = |list: &mut Vec<u32>| list.sort_by_key(|&m| self.rank[m as usize]);
        by_id(&mut under);
        by_id(&mut exact);
        if self.active {
            self.rack_round_robin(
                &mut unassigned,
                &mut assignment,
                &mut under,
                &mut exact,
                &mut over,
                expected_over,
                (min_quota, max_quota),
            );
        }
        // `assignRoundRobin`.
        let mut cursor = 0usize;
        for &p in &unassigned {
            let c = if cursor < under.len() {
                cursor += 1;
                under[cursor - 1]
            } else if under.is_empty() && exact.is_empty() {
                return None;
            } else if under.is_empty() {
                exact.remove(0)
            } else {
                cursor = 1;
                under[0]
            };
            assignment[c as usize].push(p);
            let count = assignment[c as usize].len();
            if count == min_quota {
                // The iterator's `remove()`: the member it just returned.
                if cursor == 0 || under.get(cursor - 1) != Some(&c) {
                    return None;
                }
                under.remove(cursor - 1);
                cursor -= 1;
                exact.push(c);
            } else if count == max_quota {
                over += 1;
            }
        }
        // `verifyUnfilledMembers`.
        if !under.is_empty()
            && (over != expected_over || under.iter().any(|&m| assignment[m as usize].len() != min_quota))
        {
            return None;
        }
        Some((assignment, maybe_revoked))
    }

    /// `assignRackAwareRoundRobin`.
    #[allow(clippy::too_many_arguments)]
    fn rack_round_robin(
        &self,
        unassigned: &mut Vec<u32>,
        assignment: &mut [Vec<u32>],
        under: &mut Vec<u32>,
        exact: &mut Vec<u32>,
        over: &mut usize,
        expected_over: usize,
        (min_quota, max_quota): (usize, usize),
    ) {
        let mut next = 0usize;
        let mut rest = Vec::with_capacity(unassigned.len());
        for &p in unassigned.iter() {
            let mut consumer = None;
            if let Some(mut index) = self.next_rack_member(p, under, next) {
                let c = under[index];
                let count = assignment[c as usize].len() + 1;
                if count >= min_quota {
                    under.remove(index);
                    if count < max_quota && *over < expected_over {
                        exact.push(c);
                    }
                } else {
                    index += 1;
                }
                next = if under.is_empty() { 0 } else { index % under.len() };
                consumer = Some(c);
            } else if !exact.is_empty() {
                if let Some(first) = self.next_rack_member(p, exact, 0) {
                    let c = exact[first];
                    if assignment[c as usize].len() + 1 == max_quota {
                        exact.remove(first);
                        *over += 1;
                        if *over == expected_over {
                            exact.clear();
                        }
                    }
                    consumer = Some(c);
                }
            }
            match consumer {
                Some(c) => assignment[c as usize].push(p),
                None => rest.push(p),
            }
        }
        *unassigned = rest;
    }

    /// `nextRackConsumer`: from `first` on, round the list, the first member on one of `p`'s racks.
    fn next_rack_member(&self, p: u32, list: &[u32], first: usize) -> Option<usize> {
        let racks = &self.partition_racks[p as usize];
        if racks.is_empty() {
            return None;
        }
        (0..list.len())
            .map(|i| (first + i) % list.len())
            .find(|&index| self.member_rack[list[index] as usize].is_some_and(|r| racks.binary_search(&r).is_ok()))
    }

    /// `GeneralAssignmentBuilder`.
    fn general(&self, owned: Vec<Vec<u32>>, max_generation: i32) -> Option<Vec<Vec<u32>>> {
        let mut g = General::new(self, owned);
        // `prepopulateCurrentAssignments`: the claim at the highest generation below the top,
        // first in map order on a tie.
        let mut prev: Vec<(u32, i32)> = vec![(NONE, 0); self.topics.total()];
        for &m in &self.order {
            let (parts, generation) = &self.claims[m as usize];
            let generation = match generation {
                Some(gen) if *gen < max_generation => *gen,
                None if max_generation > DEFAULT_GENERATION => DEFAULT_GENERATION,
                _ => continue,
            };
            for &p in parts {
                let slot = &mut prev[p as usize];
                if slot.0 == NONE || generation > slot.1 {
                    *slot = (m, generation);
                }
            }
        }
        // `assignOwnedPartitions`: owned partitions of unsubscribed topics, or off the owner's
        // rack, are given up.
        let mut assigned_any = false;
        for m in 0..self.ids.len() as u32 {
            let mut kept = Vec::new();
            for &p in &g.current[m as usize] {
                let t = self.topic_of[p as usize];
                let listed = self.raw_topics[m as usize].contains(&self.topics.names[t as usize]);
                if !listed || self.mismatch(m, p) {
                    g.revocation_required = true;
                } else {
                    kept.push(p);
                    assigned_any = true;
                }
            }
            g.current[m as usize] = kept;
        }
        // Partitions given up stay recorded with their old owner (Java leaves them in
        // `currentPartitionConsumer`) until reassigned.
        let mut taken = vec![false; self.topics.total()];
        for list in &g.current {
            for &p in list {
                taken[p as usize] = true;
            }
        }
        let mut unassigned: Vec<u32> = if assigned_any {
            g.sorted_all.iter().copied().filter(|&p| !taken[p as usize]).collect()
        } else {
            g.sorted_all.clone()
        };
        for m in 0..self.ids.len() as u32 {
            g.enter(m);
        }
        g.balance(&prev, &mut unassigned)?;
        Some(g.current)
    }
}

/// The state of `GeneralAssignmentBuilder`.
struct General<'m, 'a> {
    model: &'m Model<'a>,
    current: Vec<Vec<u32>>,
    /// `currentPartitionConsumer`.
    holder: Vec<u32>,
    /// `sortedCurrentSubscriptions`: (size, rank).
    sorted: BTreeSet<(u32, u32)>,
    /// The same members split by (subscribed topics, rack when rack awareness is on): the
    /// smallest member passing a test that only reads those is the smallest first member of
    /// the classes that pass it, which spares a scan of every member per partition.
    class_of: Vec<u32>,
    class_topics: Vec<Vec<u32>>,
    class_rack: Vec<Option<u32>>,
    class_sorted: Vec<BTreeSet<(u32, u32)>>,
    by_rank: Vec<u32>,
    /// `topic2AllPotentialConsumers` sizes (a member listing a topic twice counts twice).
    potential: Vec<u32>,
    /// Per topic: its subscribers.
    subscribers: Vec<Vec<u32>>,
    sorted_all: Vec<u32>,
    fixed: Vec<bool>,
    revocation_required: bool,
    movements: Movements,
    /// Work left (about one unit per member or partition looked at): Java's balancing loop can
    /// take time quadratic in the partitions, and the model gives up rather than stall a leader.
    budget: u64,
}

/// The model's work budget per run (see [`General::budget`]).
const WORK_BUDGET: u64 = 1 << 26;

impl<'m, 'a> General<'m, 'a> {
    fn new(model: &'m Model<'a>, owned: Vec<Vec<u32>>) -> Self {
        let topics = model.topics;
        let nt = topics.len();
        let mut potential = vec![0u32; nt];
        let mut subscribers = vec![Vec::new(); nt];
        for &m in &model.order {
            for &t in &model.known[m as usize] {
                potential[t as usize] += 1;
            }
            for &t in &model.subscribed[m as usize] {
                subscribers[t as usize].push(m);
            }
        }
        let mut holder = vec![NONE; topics.total()];
        for (m, list) in owned.iter().enumerate() {
            for &p in list {
                holder[p as usize] = m as u32;
            }
        }
        // Topics by number of potential members, then name; their partitions in order.
        let mut sorted_topics: Vec<u32> = (0..nt as u32).collect();
        sorted_topics.sort_by(|&a, &b| {
            potential[a as usize]
                .cmp(&potential[b as usize])
                .then_with(|| java_string_cmp(topics.names[a as usize], topics.names[b as usize]))
        });
        let sorted_all =
            sorted_topics.iter().flat_map(|&t| topics.base[t as usize]..topics.base[t as usize + 1]).collect();
        let mut by_rank = vec![0u32; model.ids.len()];
        for (m, &r) in model.rank.iter().enumerate() {
            by_rank[r as usize] = m as u32;
        }
        let mut classes: HashMap<(&[u32], Option<u32>), u32> = HashMap::new(); // once per run, by member
        let (mut class_topics, mut class_rack) = (Vec::new(), Vec::new());
        let class_of = (0..model.ids.len())
            .map(|m| {
                let rack = if model.active { model.member_rack[m] } else { None };
                *classes.entry((&model.subscribed[m], rack)).or_insert_with(|| {
                    class_topics.push(model.subscribed[m].clone());
                    class_rack.push(rack);
                    (class_topics.len() - 1) as u32
                })
            })
            .collect();
        let class_sorted = vec![BTreeSet::new(); class_topics.len()];
        General {
            model,
            current: owned,
            holder,
            sorted: BTreeSet::new(),
            class_of,
            class_topics,
            class_rack,
            class_sorted,
            by_rank,
            potential,
            subscribers,
            sorted_all,
            fixed: vec![false; model.ids.len()],
            revocation_required: false,
            movements: Movements::default(),
            budget: WORK_BUDGET,
        }
    }

    fn size(&self, m: u32) -> u32 {
        self.current[m as usize].len() as u32
    }

    fn key(&self, m: u32) -> (u32, u32) {
        (self.size(m), self.model.rank[m as usize])
    }

    /// Into `sortedCurrentSubscriptions` (and its class), at the member's current size.
    fn enter(&mut self, m: u32) {
        let key = self.key(m);
        self.sorted.insert(key);
        self.class_sorted[self.class_of[m as usize] as usize].insert(key);
    }

    /// Out of `sortedCurrentSubscriptions` (and its class); before its size changes.
    fn leave(&mut self, m: u32) {
        let key = self.key(m);
        self.sorted.remove(&key);
        self.class_sorted[self.class_of[m as usize] as usize].remove(&key);
    }

    /// The first member of `sortedCurrentSubscriptions` that subscribes to `t` and, with
    /// `on_rack_of`, is not off that partition's racks.
    fn smallest_subscriber(&self, t: u32, on_rack_of: Option<u32>) -> Option<u32> {
        let mut best: Option<(u32, u32)> = None;
        for (k, topics) in self.class_topics.iter().enumerate() {
            if topics.binary_search(&t).is_err() {
                continue;
            }
            if let (Some(p), Some(r)) = (on_rack_of, self.class_rack[k]) {
                if self.model.partition_racks[p as usize].binary_search(&r).is_err() {
                    continue;
                }
            }
            if let Some(&first) = self.class_sorted[k].first() {
                if best.is_none_or(|b| first < b) {
                    best = Some(first);
                }
            }
        }
        best.map(|(_, r)| self.by_rank[r as usize])
    }

    /// `getMaxAssignmentSize`.
    fn max_size(&self, m: u32) -> usize {
        let known = &self.model.known[m as usize];
        if known.len() == self.model.topics.len() {
            self.model.topics.total()
        } else {
            known.iter().map(|&t| self.model.topics.count(t) as usize).sum()
        }
    }

    fn balance(&mut self, prev: &[(u32, i32)], unassigned: &mut Vec<u32>) -> Option<()> {
        let model = self.model;
        let initializing = self.sorted.last().is_none_or(|&(size, _)| size == 0);
        if model.active {
            // Rack-aligned first (members without a rack count as aligned), then the rest.
            let mut rest = Vec::with_capacity(unassigned.len());
            for &p in unassigned.iter() {
                if !self.maybe_assign(p, true) {
                    rest.push(p);
                }
            }
            for &p in &rest {
                self.maybe_assign(p, false);
            }
        } else {
            for &p in unassigned.iter() {
                self.maybe_assign(p, false);
            }
        }
        // Topics only one member can take, and members that can take nothing else, sit out.
        let potential = std::mem::take(&mut self.potential);
        let reassignable_topic = |p: u32| potential[model.topic_of[p as usize] as usize] >= 2;
        self.sorted_all.retain(|&p| reassignable_topic(p));
        unassigned.retain(|&p| reassignable_topic(p));
        for m in 0..model.ids.len() as u32 {
            let can = (self.size(m) as usize) < self.max_size(m)
                || self.current[m as usize].iter().any(|&p| reassignable_topic(p));
            if !can {
                self.leave(m);
                self.fixed[m as usize] = true;
            }
        }
        let before = (self.current.clone(), self.holder.clone());
        if !self.revocation_required {
            let list = std::mem::take(unassigned);
            self.perform_reassignments(&list, prev)?;
        }
        let list = std::mem::take(&mut self.sorted_all);
        let performed = self.perform_reassignments(&list, prev)?;
        if !initializing && performed && self.balance_score() >= score_of(&before.0, &self.fixed) {
            self.current = before.0;
            self.holder = before.1;
        }
        if self.movements.unmodelled {
            return None;
        }
        Some(())
    }

    /// `maybeAssignPartition`: to the smallest member (then lowest id) that subscribes to its
    /// topic, and (`on_rack`) is not off its racks.
    fn maybe_assign(&mut self, p: u32, on_rack: bool) -> bool {
        let t = self.model.topic_of[p as usize];
        let Some(m) = self.smallest_subscriber(t, on_rack.then_some(p)) else { return false };
        self.leave(m);
        self.current[m as usize].push(p);
        self.holder[p as usize] = m;
        self.enter(m);
        true
    }

    /// Sum over member pairs of their size difference (`getBalanceScore`), members sitting
    /// out excluded.
    fn balance_score(&self) -> u64 {
        score_of(&self.current, &self.fixed)
    }

    /// `isBalanced`: no member could take a partition of one of its topics from a holder with
    /// two or more partitions more.
    fn is_balanced(&mut self) -> bool {
        let (Some(&(min, _)), Some(&(max, _))) = (self.sorted.first(), self.sorted.last()) else { return true };
        if min + 1 >= max {
            return true;
        }
        let cost =
            self.model.topics.len() + self.current.iter().chain(&self.model.subscribed).map(Vec::len).sum::<usize>();
        self.budget = self.budget.saturating_sub(cost as u64);
        let nt = self.model.topics.len();
        let mut largest_holder = vec![0u32; nt];
        let mut smallest_subscriber = vec![u32::MAX; nt];
        for &(size, r) in &self.sorted {
            let m = self.by_rank[r as usize];
            for &p in &self.current[m as usize] {
                let t = self.model.topic_of[p as usize] as usize;
                largest_holder[t] = largest_holder[t].max(size);
            }
            for &t in &self.model.subscribed[m as usize] {
                let s = &mut smallest_subscriber[t as usize];
                *s = (*s).min(size);
            }
        }
        (0..nt).all(|t| smallest_subscriber[t] == u32::MAX || largest_holder[t] <= smallest_subscriber[t] + 1)
    }

    /// `performReassignments`; `None` where Java would throw.
    fn perform_reassignments(&mut self, list: &[u32], prev: &[(u32, i32)]) -> Option<bool> {
        let mut performed = false;
        loop {
            let mut modified = false;
            for &p in list {
                if self.is_balanced() {
                    break;
                }
                self.budget = self.budget.saturating_sub(1 + self.sorted.len() as u64);
                if self.budget == 0 {
                    return None;
                }
                let c = self.holder[p as usize];
                if c == NONE || self.fixed[c as usize] {
                    return None;
                }
                let (pc, _) = prev[p as usize];
                if pc != NONE {
                    if self.fixed[pc as usize] {
                        return None;
                    }
                    if self.size(c) > self.size(pc) + 1 {
                        self.reassign_to(p, pc)?;
                        performed = true;
                        modified = true;
                        continue;
                    }
                }
                // Java looks for a smaller member on the partition's racks first, then any; either
                // way the partition goes to the smallest subscriber.
                let t = self.model.topic_of[p as usize];
                let smallest = self.subscribers[t as usize].iter().map(|&o| self.size(o)).min();
                if smallest.is_some_and(|s| self.size(c) > s + 1) {
                    let new = self.smallest_subscriber(t, None)?;
                    self.reassign_to(p, new)?;
                    performed = true;
                    modified = true;
                }
            }
            if !modified {
                return Some(performed);
            }
        }
    }

    fn reassign_to(&mut self, p: u32, new: u32) -> Option<()> {
        let t = self.model.topic_of[p as usize];
        let c = self.holder[p as usize];
        let q = self.movements.actual_partition(p, t, c, new);
        let old = self.holder[q as usize];
        if old == NONE || self.fixed[old as usize] {
            return None;
        }
        self.leave(old);
        self.leave(new);
        let hash = self.model.hash(q);
        self.movements.move_partition(q, t, hash, old, new);
        remove_first(&mut self.current[old as usize], q);
        self.current[new as usize].push(q);
        self.holder[q as usize] = new;
        self.enter(new);
        self.enter(old);
        Some(())
    }
}

fn score_of(current: &[Vec<u32>], fixed: &[bool]) -> u64 {
    let mut sizes: Vec<u64> = current.iter().zip(fixed).filter(|(_, &f)| !f).map(|(l, _)| l.len() as u64).collect();
    sizes.sort_unstable();
    // Sum over pairs i < j of s_j - s_i.
    let (mut score, mut prefix) = (0u64, 0u64);
    for (i, &s) in sizes.iter().enumerate() {
        score += s * i as u64 - prefix;
        prefix += s;
    }
    score
}

fn remove_first(list: &mut Vec<u32>, p: u32) {
    if let Some(i) = list.iter().position(|&q| q == p) {
        list.remove(i);
    }
}

/// Java's `memberData`: the member's claim on known topics (in list order) and generation;
/// `None` for a claim on a partition id the topic does not have (Java would keep it).
fn member_data(topics: &Topics<'_>, m: Member<'_>, cooperative: bool) -> Option<(Vec<u32>, Option<i32>)> {
    let (claim, generation) = member_claim(&m.0.subscription, cooperative);
    let mut parts = Vec::new();
    for group in claim.iter() {
        let Some(t) = topics.id(&group.topic) else { continue };
        for &partition in &group.partitions {
            parts.push(topics.flat(t, partition)?);
        }
    }
    Some((parts, generation))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_hash_is_javas() {
        // Values from Java's "".hashCode(), "a".hashCode(), "topic".hashCode(), "c10".hashCode().
        assert_eq!(string_hash(""), 0);
        assert_eq!(string_hash("a"), 97);
        assert_eq!(string_hash("topic"), 110_546_223);
        assert_eq!(string_hash("c10"), 96_706);
    }

    #[test]
    fn default_capacity_doubles_past_three_quarters() {
        assert_eq!(default_capacity(0), 16);
        assert_eq!(default_capacity(12), 16);
        assert_eq!(default_capacity(13), 32);
        assert_eq!(default_capacity(25), 64);
    }

    #[test]
    fn a_partition_set_returns_the_lowest_bin_then_the_oldest() {
        let mut s = JavaPartitionHashSet::new();
        assert!(s.insert(1, 0x25, 1)); // bin 5
        assert!(s.insert(2, 0x03, 2)); // bin 3
        assert!(s.insert(3, 0x13, 3)); // bin 3, later
        assert_eq!(s.first(), Some(2));
        s.remove(2);
        assert_eq!(s.first(), Some(3));
    }
}
