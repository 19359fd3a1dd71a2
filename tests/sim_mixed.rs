//! Mixed groups: classic and KIP-848 consumer-protocol members in one group, the conversion of a
//! classic group by the first consumer member, and the broker's reconciliation (a partition reaches
//! its new owner only once its previous owner acknowledged the revocation).

use std::collections::BTreeMap;

use kafka_consumer_protocol::sim::{json, run, GroupProtocol, MemberSpec, Outcome, Scenario, SimConfig, Step};
use kafka_consumer_protocol::PartitionSet;

fn example(name: &str) -> Scenario {
    let path = format!("{}/examples/{name}.json", env!("CARGO_MANIFEST_DIR"));
    json::parse_scenario(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Independently of the simulator's own checker: at no timeline entry does a partition appear in
/// two members' ownership, and a partition pending revocation is still its owner's alone.
fn assert_exclusive(o: &Outcome) {
    for e in &o.timeline {
        let mut owner: BTreeMap<(String, i32), &str> = BTreeMap::new();
        for (m, groups) in &e.owned {
            for (t, p) in PartitionSet::from_groups(groups).iter() {
                if let Some(other) = owner.insert((t.to_owned(), p), m) {
                    panic!("seq {}: {t}-{p} owned by {other} and {m}", e.seq);
                }
            }
        }
        for (m, groups) in &e.pending_revocation {
            for (t, p) in PartitionSet::from_groups(groups).iter() {
                let held_by = owner.get(&(t.to_owned(), p)).copied();
                assert!(held_by.is_none() || held_by == Some(m.as_str()), "seq {}: {t}-{p} pending at {m}", e.seq);
            }
        }
    }
}

#[test]
fn rolling_upgrade_of_three_cooperative_members_converges_without_double_ownership() {
    let o = run(&example("upgrade-rolling")).unwrap();
    assert!(o.summary.violations.is_empty(), "{:?}", o.summary.violations);
    assert!(o.summary.converged, "{:?}", o.summary.unconverged);
    assert_eq!(o.summary.group_protocol, GroupProtocol::Consumer);
    assert_eq!(o.summary.conversions.len(), 1, "{:?}", o.summary.conversions);
    assert_exclusive(&o);
    // Every member ends as a consumer-protocol member holding 2 of the 6 partitions.
    let last = o.timeline.last().unwrap();
    assert_eq!(last.group_protocol, GroupProtocol::Consumer);
    for m in ["a", "b", "c"] {
        assert!(o.timeline.iter().any(|e| e.event == "join" && e.member.as_deref() == Some(m) && e.protocol.is_none()
            || e.event == "join"
                && e.member.as_deref() == Some(m)
                && e.detail.as_deref() == Some("group.protocol=consumer")));
        assert_eq!(o.final_owned[m].len(), 2, "{m}: {:?}", o.final_owned);
    }
    // Partitions were withheld on the way: some entry shows a member awaiting partitions.
    assert!(o.timeline.iter().any(|e| !e.awaiting.is_empty()));
    assert!(o.timeline.iter().any(|e| !e.pending_revocation.is_empty()));
}

#[test]
fn a_partition_moves_only_after_its_previous_owner_revoked_it() {
    let o = run(&example("upgrade-rolling")).unwrap();
    // Replay the listener events: a member gaining a partition never finds another member
    // still holding it.
    let mut held: BTreeMap<(String, i32), String> = BTreeMap::new();
    let mut gains = 0;
    for e in &o.timeline {
        let m = e.member.clone().unwrap_or_default();
        for (t, p) in PartitionSet::from_groups(&e.partitions).iter() {
            let key = (t.to_owned(), p);
            match e.event.as_str() {
                "assigned" => {
                    if let Some(prev) = held.get(&key) {
                        assert_eq!(prev, &m, "seq {}: {t}-{p} given to {m} while {prev} holds it", e.seq);
                    }
                    held.insert(key, m.clone());
                    gains += 1;
                }
                "revoked" | "lost" => {
                    held.remove(&key);
                }
                _ => {}
            }
        }
        // A stopped member's partitions go with it.
        held.retain(|_, owner| e.owned.contains_key(owner));
    }
    assert!(gains > 6, "{gains}");
}

#[test]
fn same_scenario_same_output() {
    let a = json::outcome_json(&run(&example("upgrade-rolling")).unwrap());
    let b = json::outcome_json(&run(&example("upgrade-rolling")).unwrap());
    assert_eq!(a, b);
}

#[test]
fn a_policy_that_forbids_the_upgrade_makes_the_consumer_member_fail() {
    let mut s = example("upgrade-rolling");
    s.config.migration_policy = "disabled".into();
    let o = run(&s).unwrap();
    assert!(o.summary.violations.is_empty(), "{:?}", o.summary.violations);
    // a and b stop on GROUP_ID_NOT_FOUND, as the Java consumer does; once c, the last classic
    // member, has left, the group is empty and c's heartbeat replaces it instead of converting it.
    let fatal: Vec<&str> = o.summary.fatal.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(fatal, ["a", "b"]);
    assert!(o.summary.fatal.iter().all(|(_, e)| e.contains("GROUP_ID_NOT_FOUND")), "{:?}", o.summary.fatal);
    assert_eq!(o.summary.conversions.len(), 3, "{:?}", o.summary.conversions);
    assert!(o.summary.conversions[..2].iter().all(|c| c.contains("refused") && c.contains("migration_policy")));
    assert!(o.summary.conversions[2].contains("empty classic group replaced"));
    assert_eq!(o.summary.group_protocol, GroupProtocol::Consumer);
    assert!(!o.summary.converged);
}

#[test]
fn a_new_group_of_consumer_members_with_range_on_the_broker() {
    let mut s = Scenario::new(3, [("orders", 6), ("audit", 3)]);
    s.config = SimConfig { server_assignor: "range".into(), ..SimConfig::default() };
    for id in ["a", "b"] {
        let mut m = MemberSpec::new(id, Vec::<String>::new(), ["orders", "audit"]);
        m.protocol = GroupProtocol::Consumer;
        s.members.push(m);
    }
    let mut c = MemberSpec::new("c", Vec::<String>::new(), ["orders", "audit"]);
    c.protocol = GroupProtocol::Consumer;
    s.push(Step::Join(c));
    s.push(Step::Crash("a".into()));
    let o = run(&s).unwrap();
    assert!(o.summary.violations.is_empty(), "{:?}", o.summary.violations);
    assert!(o.summary.converged, "{:?}", o.summary.unconverged);
    assert_exclusive(&o);
    // Range on two members after the crash: orders 3/3, audit 2/1.
    let sizes: Vec<usize> = o.final_owned.values().map(PartitionSet::len).collect();
    assert_eq!(sizes, [5, 4]);
}

#[test]
fn classic_eager_members_inside_a_consumer_group() {
    let mut s = Scenario::new(5, [("orders", 8)]);
    for id in ["a", "b", "c"] {
        s.members.push(MemberSpec::new(id, ["range"], ["orders"]));
    }
    let mut d = MemberSpec::new("d", Vec::<String>::new(), ["orders"]);
    d.protocol = GroupProtocol::Consumer;
    s.push(Step::Join(d));
    s.push(Step::Leave("b".into()));
    s.push(Step::AddPartitions { topic: "orders".into(), count: 12 });
    let o = run(&s).unwrap();
    assert!(o.summary.violations.is_empty(), "{:?}", o.summary.violations);
    assert!(o.summary.converged, "{:?}", o.summary.unconverged);
    assert_exclusive(&o);
    assert_eq!(o.summary.group_protocol, GroupProtocol::Consumer);
    let sizes: Vec<usize> = o.final_owned.values().map(PartitionSet::len).collect();
    assert_eq!(sizes, [4, 4, 4]);
}
