//! The `range` assignor (Java `RangeAssignor`), with KIP-881 rack awareness and
//! co-partitioning.
//!
//! Per topic, the members subscribed to it (in Java `MemberInfo` order: static members by
//! instance id first, then dynamic members by member id) each take a contiguous range of
//! `partitions / members` partitions, the first `partitions % members` one more.
//!
//! When racks apply (some member rack matches some replica rack, and the partitions of a topic
//! are not all on the same rack set), a first pass gives each member partitions that have a
//! replica on its rack, within its per-topic quota. Topics with the same member set and the same
//! partition count are *co-partitioned*: partition `p` of all of them goes to the same member. A
//! second, rack-blind pass assigns what is left. Balance per topic and co-partitioning take
//! priority over rack alignment, as in Java.
//!
//! An empty rack id counts as no rack, as in Java.
//!
//! Differences from Java (deliberate): a member listing the same topic twice counts once (Java
//! does the same for range); members with equal instance ids are ordered by member id (Java keeps
//! its `HashMap` order); each member's partitions are reported grouped per topic in topic order
//! (Java's list order depends on `HashMap` order when racks are not used).

use super::common::{build_group_assignment, check_members, member_info_order, Member, Topics, NONE};
use super::{AssignError, ClusterMetadata, GroupAssignment, GroupMember, GroupMemberView, PartitionAssignor};

/// The `range` assignor.
///
/// ```
/// use kafka_consumer_protocol::assignor::{ClusterMetadata, GroupMember, PartitionAssignor, RangeAssignor};
/// use kafka_consumer_protocol::{Subscription, TopicPartitions};
/// let metadata = ClusterMetadata::from_counts([("orders", 3)]);
/// let member = |id: &str| GroupMember {
///     member_id: id.into(),
///     group_instance_id: None,
///     subscription: Subscription::new(["orders"]),
/// };
/// let out = RangeAssignor.assign(&metadata, &[member("b"), member("a")]).unwrap();
/// assert_eq!(out.partitions_of("a"), [TopicPartitions::new("orders", [0, 1])]);
/// assert_eq!(out.partitions_of("b"), [TopicPartitions::new("orders", [2])]);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RangeAssignor;

struct TopicState<'a> {
    t: u32,
    /// Members subscribed, in `MemberInfo` order.
    consumers: Vec<u32>,
    /// Rack of each consumer (parallel to `consumers`).
    racks: Vec<Option<&'a str>>,
    /// Per-partition replica racks (sorted, deduplicated) when any consumer has a rack.
    partition_racks: Option<Vec<Vec<&'a str>>>,
    needs_rack: bool,
    /// Partitions not yet assigned, ascending.
    unassigned: Vec<u32>,
    num_assigned: Vec<u32>,
    per_consumer: u32,
    extra_left: u32,
}

impl TopicState<'_> {
    fn max_assignable(&self, ci: usize) -> u32 {
        (self.per_consumer + u32::from(self.extra_left > 0)).saturating_sub(self.num_assigned[ci])
    }

    fn racks_match(&self, ci: usize, p: u32) -> bool {
        match self.racks[ci] {
            None => true,
            Some(rack) => self
                .partition_racks
                .as_ref()
                .and_then(|r| r.get(p as usize))
                .is_some_and(|r| r.binary_search(&rack).is_ok()),
        }
    }

    fn on_assigned(&mut self, ci: usize, n: u32) {
        self.num_assigned[ci] += n;
        if self.num_assigned[ci] > self.per_consumer {
            self.extra_left = self.extra_left.saturating_sub(1);
        }
    }
}

/// Java's `useRackAwareAssignment` without the test hook.
fn use_rack_aware(consumer_racks: &[&str], partition_racks: &[Vec<&str>]) -> bool {
    let mut all: Vec<&str> = partition_racks.iter().flatten().copied().collect();
    all.sort_unstable();
    all.dedup();
    if consumer_racks.is_empty() || !consumer_racks.iter().any(|r| all.binary_search(r).is_ok()) {
        return false;
    }
    !partition_racks.iter().all(|r| *r == all)
}

fn assign_ranges(state: &mut TopicState<'_>, owner: &mut [u32], base: u32, rack_matching: bool) {
    for ci in 0..state.consumers.len() {
        if state.unassigned.is_empty() {
            break;
        }
        let max = state.max_assignable(ci) as usize;
        if max == 0 {
            continue;
        }
        let mut taken: Vec<u32> = Vec::with_capacity(max);
        for &p in &state.unassigned {
            if taken.len() == max {
                break;
            }
            if !rack_matching || state.racks_match(ci, p) {
                taken.push(p);
            }
        }
        if taken.is_empty() {
            continue;
        }
        let m = state.consumers[ci];
        for &p in &taken {
            owner[(base + p) as usize] = m;
        }
        state.on_assigned(ci, taken.len() as u32);
        if taken.len() == state.unassigned.len() {
            state.unassigned.clear();
        } else {
            // `taken` is an ascending subsequence of `unassigned`.
            let mut k = 0;
            state.unassigned.retain(|&p| {
                if k < taken.len() && taken[k] == p {
                    k += 1;
                    false
                } else {
                    true
                }
            });
        }
    }
}

fn assign_co_partitioned(
    states: &mut [TopicState<'_>],
    group: &[usize],
    num_partitions: u32,
    owner: &mut [u32],
    topics: &Topics<'_>,
) {
    let consumers = states[group[0]].consumers.clone();
    let mut remaining: Vec<usize> = (0..consumers.len()).collect();
    for p in 0..num_partitions {
        let found = remaining
            .iter()
            .position(|&ci| group.iter().all(|&s| states[s].racks_match(ci, p) && states[s].max_assignable(ci) > 0));
        if let Some(pos) = found {
            let ci = remaining[pos];
            for &s in group {
                let st = &mut states[s];
                owner[(topics.base[st.t as usize] + p) as usize] = consumers[ci];
                st.on_assigned(ci, 1);
                if let Ok(i) = st.unassigned.binary_search(&p) {
                    st.unassigned.remove(i);
                }
            }
            if group.iter().all(|&s| states[s].max_assignable(ci) == 0) {
                remaining.remove(pos);
                if remaining.is_empty() {
                    break;
                }
            }
        }
    }
}

impl PartitionAssignor for RangeAssignor {
    fn name(&self) -> &str {
        "range"
    }

    fn assign(&self, metadata: &ClusterMetadata, members: &[GroupMember]) -> Result<GroupAssignment, AssignError> {
        assign_range(metadata, &Member::all_owned(members))
    }

    fn assign_views(
        &self,
        metadata: &ClusterMetadata,
        members: &[GroupMemberView<'_>],
    ) -> Result<GroupAssignment, AssignError> {
        assign_range(metadata, &Member::all_views(members))
    }
}

fn assign_range(metadata: &ClusterMetadata, members: &[Member<'_>]) -> Result<GroupAssignment, AssignError> {
    check_members(members)?;
    let topics = Topics::new(metadata, members)?;
    let subs = topics.subscriptions(members);
    let order = member_info_order(members);
    let mut consumers_of: Vec<Vec<u32>> = vec![Vec::new(); topics.len()];
    for &m in &order {
        for &t in &subs[m as usize] {
            consumers_of[t as usize].push(m);
        }
    }
    let mut owner = vec![NONE; topics.total()];
    let rack_of = |m: u32| members[m as usize].rack();
    if (0..members.len() as u32).all(|m| rack_of(m).is_none()) {
        // No racks: plain ranges, consumer i of a topic takes a contiguous block.
        for (t, consumers) in consumers_of.iter().enumerate() {
            plain_ranges(&mut owner[topics.base[t] as usize..topics.base[t + 1] as usize], consumers);
        }
        drop(consumers_of); // before the output is built: lowers the peak
        return Ok(build_group_assignment(&topics, members, &owner, Vec::new(), &[]));
    }
    let mut states: Vec<TopicState<'_>> = Vec::with_capacity(topics.len());
    for (t, consumers) in consumers_of.into_iter().enumerate() {
        let n = topics.count(t as u32);
        let racks: Vec<Option<&str>> = consumers.iter().map(|&m| rack_of(m)).collect();
        let mut consumer_racks: Vec<&str> = racks.iter().flatten().copied().collect();
        consumer_racks.sort_unstable();
        consumer_racks.dedup();
        let partition_racks = (!consumer_racks.is_empty()).then(|| {
            let info = topics.info[t];
            (0..n as usize)
                .map(|p| {
                    let mut r: Vec<&str> =
                        info.partition_racks.get(p).map(|v| v.iter().map(String::as_str).collect()).unwrap_or_default();
                    r.sort_unstable();
                    r.dedup();
                    r
                })
                .collect::<Vec<_>>()
        });
        let needs_rack = partition_racks.as_ref().is_some_and(|pr| use_rack_aware(&consumer_racks, pr));
        let c = consumers.len() as u32;
        let num_assigned = vec![0; consumers.len()];
        states.push(TopicState {
            t: t as u32,
            per_consumer: n.checked_div(c).unwrap_or(0),
            extra_left: n.checked_rem(c).unwrap_or(0),
            consumers,
            racks,
            partition_racks,
            needs_rack,
            unassigned: Vec::new(),
            num_assigned,
        });
    }

    if states.iter().any(|s| s.needs_rack) {
        for st in &mut states {
            st.unassigned = (0..topics.count(st.t)).collect();
        }
        // Group topics by (consumer list, rack-map size); groups of 2+ are co-partitioned.
        let mut keys: Vec<usize> = (0..states.len()).collect();
        let key =
            |s: &TopicState<'_>| (s.consumers.clone(), if s.partition_racks.is_some() { topics.count(s.t) } else { 0 });
        keys.sort_by_key(|&i| key(&states[i]));
        let mut i = 0;
        while i < keys.len() {
            let k = key(&states[keys[i]]);
            let mut j = i + 1;
            while j < keys.len() && key(&states[keys[j]]) == k {
                j += 1;
            }
            let group: Vec<usize> = keys[i..j].to_vec();
            if group.len() > 1 {
                assign_co_partitioned(&mut states, &group, k.1, &mut owner, &topics);
            } else {
                let st = &mut states[group[0]];
                if st.needs_rack {
                    assign_ranges(st, &mut owner, topics.base[st.t as usize], true);
                }
            }
            i = j;
        }
        for st in &mut states {
            assign_ranges(st, &mut owner, topics.base[st.t as usize], false);
        }
    } else {
        for st in &states {
            let base = topics.base[st.t as usize] as usize;
            plain_ranges(&mut owner[base..base + topics.count(st.t) as usize], &st.consumers);
        }
    }
    Ok(build_group_assignment(&topics, members, &owner, Vec::new(), &[]))
}

/// Java's plain ranges for one topic: consumer `i` (in `MemberInfo` order) takes the next
/// `partitions / consumers` partitions, the first `partitions % consumers` one more.
fn plain_ranges(owner: &mut [u32], consumers: &[u32]) {
    if consumers.is_empty() {
        return;
    }
    let per = owner.len() / consumers.len();
    let extra = owner.len() % consumers.len();
    let mut next = 0;
    for (ci, &m) in consumers.iter().enumerate() {
        let take = per + usize::from(ci < extra);
        owner[next..next + take].fill(m);
        next += take;
    }
}
