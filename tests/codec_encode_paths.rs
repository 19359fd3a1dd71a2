//! The encoders (`encode`, and `encode_into` appending) against an independent model of what
//! Java writes: topics sorted by UTF-16 code units, owned partitions sorted and grouped per topic,
//! assignment topics merged in order of first appearance, written field by field by a reference
//! writer in this file. Values in Java's order take the fast path (one pass that writes the fields
//! as given and checks on the way that they are canonical); the others the general one. Names are drawn to hit every branch of the fast path: lengths 0 to 40
//! (the 8-to-16-byte word copies and order keys, the short and long copies), shared prefixes,
//! and the characters whose UTF-16 order differs from their UTF-8 order.

use std::cmp::Ordering;

use bytes::Bytes;
use kafka_consumer_protocol::{Assignment, Subscription, TopicPartitions, Version};
use proptest::prelude::*;

fn utf16_cmp(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// A name: a common prefix of some length, then a few characters from a set with ASCII,
/// two-byte, three-byte (below and above U+E000) and four-byte characters.
fn name() -> impl Strategy<Value = String> {
    let prefix =
        prop::sample::select(vec!["", "t", "orders-", "orders-0", "abcdefghijklmno", "abcdefghijklmnopqrstuvwx"]);
    let chars = prop::collection::vec(
        prop::sample::select(vec![
            "a",
            "b",
            "z",
            "0",
            "9",
            "\0",
            "\u{7f}",
            "é",
            "\u{D7FF}",
            "\u{E000}",
            "\u{FF5E}",
            "\u{1F600}",
            "\u{10000}",
        ]),
        0..6,
    );
    (prefix, chars).prop_map(|(p, cs)| format!("{p}{}", cs.concat()))
}

fn partitions() -> impl Strategy<Value = Vec<i32>> {
    prop::collection::vec(prop_oneof![0..8i32, Just(i32::MIN), Just(i32::MAX), -3..0i32], 0..20)
}

fn groups() -> impl Strategy<Value = Vec<TopicPartitions>> {
    prop::collection::vec((name(), partitions()).prop_map(|(t, p)| TopicPartitions::new(t, p)), 0..12)
}

fn subscription() -> impl Strategy<Value = Subscription> {
    (
        prop::collection::vec(name(), 0..12),
        prop::option::of(prop::collection::vec(any::<u8>(), 0..40)),
        groups(),
        any::<i32>(),
        prop::option::of(name()),
        any::<bool>(),
    )
        .prop_map(|(topics, user_data, owned, generation_id, rack_id, canonical)| {
            let sub = {
                let mut s = Subscription::new(topics)
                    .with_user_data(user_data.map(Bytes::from))
                    .with_owned_partitions(owned)
                    .with_generation_id(generation_id);
                s.rack_id = rack_id;
                s
            };
            if canonical {
                model(&sub)
            } else {
                sub
            }
        })
}

/// What Java writes for `sub`, as a value: topics sorted, owned partitions sorted by (topic,
/// partition) and grouped per topic.
fn model(sub: &Subscription) -> Subscription {
    let mut topics = sub.topics.clone();
    topics.sort_by(|a, b| utf16_cmp(a, b));
    let mut flat: Vec<(&str, i32)> =
        sub.owned_partitions.iter().flat_map(|g| g.partitions.iter().map(move |&p| (g.topic.as_str(), p))).collect();
    flat.sort_by(|a, b| utf16_cmp(a.0, b.0).then(a.1.cmp(&b.1)));
    let mut owned: Vec<TopicPartitions> = Vec::new();
    for (t, p) in flat {
        match owned.last_mut() {
            Some(g) if g.topic == t => g.partitions.push(p),
            _ => owned.push(TopicPartitions::new(t, [p])),
        }
    }
    let mut canonical = sub.clone();
    (canonical.topics, canonical.owned_partitions) = (topics, owned);
    canonical
}

fn merged(groups: &[TopicPartitions]) -> Vec<TopicPartitions> {
    let mut out: Vec<TopicPartitions> = Vec::new();
    for g in groups.iter().filter(|g| !g.partitions.is_empty()) {
        match out.iter_mut().find(|o| o.topic == g.topic) {
            Some(o) => o.partitions.extend(&g.partitions),
            None => out.push(g.clone()),
        }
    }
    out
}

/// Java's bytes for a value already in Java's order, written field by field with no check and
/// no reordering: the reference the encoders are compared with.
fn reference_subscription(sub: &Subscription, version: Version) -> Vec<u8> {
    let mut out = version.as_i16().to_be_bytes().to_vec();
    out.extend((sub.topics.len() as i32).to_be_bytes());
    for t in &sub.topics {
        reference_string(&mut out, t);
    }
    reference_bytes(&mut out, sub.user_data.as_deref());
    if version >= Version::V1 {
        reference_groups(&mut out, &sub.owned_partitions);
    }
    if version >= Version::V2 {
        out.extend(sub.generation_id.to_be_bytes());
    }
    if version >= Version::V3 {
        match &sub.rack_id {
            Some(r) => reference_string(&mut out, r),
            None => out.extend((-1i16).to_be_bytes()),
        }
    }
    out
}

fn reference_assignment(groups: &[TopicPartitions], user_data: Option<&[u8]>) -> Vec<u8> {
    let mut out = 3i16.to_be_bytes().to_vec();
    reference_groups(&mut out, groups);
    reference_bytes(&mut out, user_data);
    out
}

fn reference_string(out: &mut Vec<u8>, s: &str) {
    out.extend((s.len() as i16).to_be_bytes());
    out.extend(s.as_bytes());
}

fn reference_bytes(out: &mut Vec<u8>, bytes: Option<&[u8]>) {
    match bytes {
        Some(b) => {
            out.extend((b.len() as i32).to_be_bytes());
            out.extend(b);
        }
        None => out.extend((-1i32).to_be_bytes()),
    }
}

fn reference_groups(out: &mut Vec<u8>, groups: &[TopicPartitions]) {
    out.extend((groups.len() as i32).to_be_bytes());
    for g in groups {
        reference_string(out, &g.topic);
        out.extend((g.partitions.len() as i32).to_be_bytes());
        for p in &g.partitions {
            out.extend(p.to_be_bytes());
        }
    }
}

/// `encode_into` appends `encode`'s bytes after what the buffer holds.
fn appended<E>(prefix: &[u8], encode_into: impl FnOnce(&mut Vec<u8>) -> Result<(), E>) -> Result<Vec<u8>, E> {
    let mut out = prefix.to_vec();
    encode_into(&mut out)?;
    Ok(out)
}

const VERSIONS: [Version; 4] = [Version::V0, Version::V1, Version::V2, Version::V3];

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn subscriptions_encode_like_the_model(sub in subscription()) {
        let expected = model(&sub);
        for version in VERSIONS {
            let bytes = sub.encode(version).unwrap();
            prop_assert_eq!(&bytes, &reference_subscription(&expected, version));
            prop_assert_eq!(bytes.len(), sub.encoded_len(version));
            // Appending agrees byte for byte, and so does encoding the model itself.
            let into = appended(b"prefix", |out| sub.encode_into(version, out)).unwrap();
            prop_assert_eq!(&into[..6], b"prefix");
            prop_assert_eq!(&into[6..], &bytes[..]);
            prop_assert_eq!(&bytes, &expected.encode(version).unwrap());
            let back = Subscription::decode(&bytes).unwrap();
            prop_assert_eq!(&back.topics, &expected.topics);
            prop_assert_eq!(&back.user_data, &expected.user_data);
            if version >= Version::V1 {
                prop_assert_eq!(&back.owned_partitions, &expected.owned_partitions);
            }
            if version >= Version::V2 {
                prop_assert_eq!(back.generation_id, expected.generation_id);
            }
            if version >= Version::V3 {
                prop_assert_eq!(&back.rack_id, &expected.rack_id);
            }
        }
    }

    #[test]
    fn assignments_encode_like_the_model(groups in groups(), user_data in prop::option::of(prop::collection::vec(any::<u8>(), 0..20))) {
        let asg = Assignment::new(groups).with_user_data(user_data.map(Bytes::from));
        let bytes = asg.encode(Version::V3).unwrap();
        prop_assert_eq!(&bytes, &reference_assignment(&merged(&asg.assigned_partitions), asg.user_data.as_deref()));
        prop_assert_eq!(bytes.len(), asg.encoded_len(Version::V3));
        let into = appended(b"x", |out| asg.encode_into(Version::V3, out)).unwrap();
        prop_assert_eq!(&into[..1], b"x");
        prop_assert_eq!(&into[1..], &bytes[..]);
        let back = Assignment::decode(&bytes).unwrap();
        prop_assert_eq!(&back.assigned_partitions, &merged(&asg.assigned_partitions));
        prop_assert_eq!(&back.user_data, &asg.user_data);
    }
}

/// More than 32 groups and many near-identical names: the fingerprint filter collides, and the
/// exact check must still find (or rule out) repeated topics.
#[test]
fn many_assignment_groups_with_and_without_repeats() {
    for n in [1, 31, 32, 33, 100, 1000] {
        let groups: Vec<TopicPartitions> = (0..n).map(|i| TopicPartitions::new(format!("t{i}"), [i])).collect();
        let asg = Assignment::new(groups.clone());
        assert_eq!(Assignment::decode(&asg.encode(Version::V3).unwrap()).unwrap().assigned_partitions, groups);
        let mut repeated = groups.clone();
        repeated.push(TopicPartitions::new("t0", [-1]));
        let asg = Assignment::new(repeated.clone());
        let bytes = asg.encode(Version::V3).unwrap();
        assert_eq!(bytes.len(), asg.encoded_len(Version::V3));
        assert_eq!(Assignment::decode(&bytes).unwrap().assigned_partitions, merged(&repeated));
    }
}
