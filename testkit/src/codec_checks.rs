//! The properties the fuzz targets check. Shared with `tests/codec_corpus.rs`, which replays the
//! committed corpus through the same functions in `cargo test`.
#![allow(dead_code)]

use arbitrary::{Arbitrary, Unstructured};
use bytes::Bytes;
use kafka_consumer_protocol::codec::java_string_cmp;
use kafka_consumer_protocol::{
    Assignment, AssignmentBuf, AssignmentView, DecodeErrorKind, DecodeOptions, Subscription, SubscriptionBuf,
    SubscriptionView, TopicPartitions, Version,
};

fn option_sets() -> [DecodeOptions; 6] {
    let o = DecodeOptions::new();
    [
        o,
        o.strict(true),
        o.lenient(true),
        o.reader_version(Version::V0),
        o.reader_version(Version::V1),
        o.reader_version(Version::V2).lenient(true),
    ]
}

/// Sorted `(topic, partition)` pairs, the canonical content of a partition list.
fn sorted_pairs(groups: &[TopicPartitions]) -> Vec<(String, i32)> {
    let mut pairs: Vec<(String, i32)> =
        groups.iter().flat_map(|g| g.partitions.iter().map(move |&p| (g.topic.clone(), p))).collect();
    pairs.sort_by(|a, b| java_string_cmp(&a.0, &b.0).then(a.1.cmp(&b.1)));
    pairs
}

/// `encode_into` appends exactly what `encode` returns, or fails with the same error and leaves
/// the buffer as it was.
fn appends_like_encode<E: PartialEq + std::fmt::Debug>(
    encoded: &Result<Vec<u8>, E>,
    encode_into: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
) {
    const PREFIX: &[u8] = b"prefix";
    let mut out = PREFIX.to_vec();
    match (encoded, encode_into(&mut out)) {
        (Ok(bytes), Ok(())) => {
            assert_eq!(&out[..PREFIX.len()], PREFIX, "encode_into keeps what the buffer held");
            assert_eq!(&out[PREFIX.len()..], &bytes[..], "encode_into appends encode's bytes");
        }
        (Err(e), Err(f)) => {
            assert_eq!(e, &f);
            assert_eq!(out, PREFIX, "a failed encode_into leaves the buffer");
        }
        (a, b) => panic!("encode {a:?} but encode_into {b:?}"),
    }
}

/// Encoding a subscription, decoding it and encoding again is stable, and the decoded value is
/// the canonical form of the input.
fn subscription_roundtrip(sub: &Subscription, version: Version) {
    let encoded = sub.encode(version);
    appends_like_encode(&encoded, |out| sub.encode_into(version, out));
    let Ok(bytes) = encoded else { return };
    assert_eq!(bytes.len(), sub.encoded_len(version), "encoded_len is exact");
    let view =
        SubscriptionView::decode_with(&bytes, DecodeOptions::new().strict(true)).expect("own output decodes strictly");
    assert_eq!(view.read_as(), version);
    let back = view.to_owned();
    let mut topics = sub.topics.clone();
    topics.sort_by(|a, b| java_string_cmp(a, b));
    assert_eq!(back.topics, topics);
    assert_eq!(back.user_data, sub.user_data);
    if version >= Version::V1 {
        assert_eq!(sorted_pairs(&back.owned_partitions), sorted_pairs(&sub.owned_partitions));
    }
    assert_eq!(back.generation_id, if version >= Version::V2 { sub.generation_id } else { -1 });
    assert_eq!(back.rack_id, if version >= Version::V3 { sub.rack_id.clone() } else { None });
    assert_eq!(back.encode(version).expect("re-encode"), bytes, "encode is stable");
}

fn assignment_roundtrip(asg: &Assignment, version: Version) {
    let encoded = asg.encode(version);
    appends_like_encode(&encoded, |out| asg.encode_into(version, out));
    let Ok(bytes) = encoded else { return };
    assert_eq!(bytes.len(), asg.encoded_len(version), "encoded_len is exact");
    let back =
        AssignmentView::decode_with(&bytes, DecodeOptions::new().strict(true)).expect("own output decodes").to_owned();
    let mut want = sorted_pairs(&asg.assigned_partitions);
    let mut got = sorted_pairs(&back.assigned_partitions);
    want.sort();
    got.sort();
    assert_eq!(got, want, "same partitions");
    assert_eq!(back.user_data, asg.user_data);
    assert_eq!(back.encode(version).expect("re-encode"), bytes, "encode is stable");
}

/// Decoding arbitrary bytes never panics; every form agrees; whatever decodes re-encodes stably.
pub fn decode_subscription(data: &[u8]) {
    let shared = Bytes::copy_from_slice(data);
    for options in option_sets() {
        let view = SubscriptionView::decode_with(data, options);
        let buf = SubscriptionBuf::decode_with(shared.clone(), options);
        match (&view, &buf) {
            (Ok(v), Ok(b)) => assert_eq!(*v, b.view()),
            (Err(e), Err(f)) => {
                assert_eq!(e, f);
                assert!(e.offset() <= data.len(), "offset {} beyond input {}", e.offset(), data.len());
                let _ = e.to_string();
            }
            _ => panic!("borrowed and Bytes-backed decoders disagree"),
        }
        if let Ok(v) = view {
            assert!(v.read_as() <= options.get_reader_version());
            let owned = v.to_owned();
            assert_eq!(owned.topics.len(), v.topics().len());
            assert!(v.trailing_bytes() <= data.len());
            assert!(!(options.is_strict() && v.trailing_bytes() > 0));
            subscription_roundtrip(&owned, v.read_as());
        }
    }
}

/// The same for assignments.
pub fn decode_assignment(data: &[u8]) {
    let shared = Bytes::copy_from_slice(data);
    for options in option_sets() {
        let view = AssignmentView::decode_with(data, options);
        let buf = AssignmentBuf::decode_with(shared.clone(), options);
        match (&view, &buf) {
            (Ok(v), Ok(b)) => assert_eq!(*v, b.view()),
            (Err(e), Err(f)) => {
                assert_eq!(e, f);
                assert!(e.offset() <= data.len());
            }
            _ => panic!("borrowed and Bytes-backed decoders disagree"),
        }
        if let Ok(v) = view {
            assignment_roundtrip(&v.to_owned(), v.read_as());
        }
    }
}

#[derive(Arbitrary, Debug)]
struct ArbGroup {
    topic: String,
    partitions: Vec<i32>,
}

#[derive(Arbitrary, Debug)]
struct ArbInput {
    version: u8,
    topics: Vec<String>,
    user_data: Option<Vec<u8>>,
    owned: Vec<ArbGroup>,
    generation_id: i32,
    rack_id: Option<String>,
    assigned: Vec<ArbGroup>,
}

fn groups(arb: Vec<ArbGroup>) -> Vec<TopicPartitions> {
    arb.into_iter().map(|g| TopicPartitions::new(g.topic, g.partitions)).collect()
}

/// Structured values (from `arbitrary`) survive encode → decode → encode at every version.
pub fn roundtrip_arbitrary(data: &[u8]) {
    let Ok(input) = ArbInput::arbitrary(&mut Unstructured::new(data)) else { return };
    let version = Version::ALL[usize::from(input.version % 4)];
    let user_data = input.user_data.map(Bytes::from);
    let sub = {
        let mut s = Subscription::new(input.topics)
            .with_user_data(user_data.clone())
            .with_owned_partitions(groups(input.owned))
            .with_generation_id(input.generation_id);
        s.rack_id = input.rack_id;
        s
    };
    subscription_roundtrip(&sub, version);
    assignment_roundtrip(&Assignment::new(groups(input.assigned)).with_user_data(user_data), version);
}

/// Our decoder agrees with the `kafka-protocol` crate on v0..=3 payloads, except where it
/// follows Apache Kafka's Java client on purpose:
/// - a nullable length below -1 is null for Java and us; kafka-protocol refuses it (our strict
///   mode does too);
/// - an array count larger than the bytes left is refused before anything is read; kafka-protocol
///   would first allocate `count` elements (an untrusted allocation, up to tens of GiB), so such
///   inputs are not handed to it.
pub fn differential_kafka_protocol(data: &[u8]) {
    use kafka_protocol::messages::{ConsumerProtocolAssignment, ConsumerProtocolSubscription};
    use kafka_protocol::protocol::Decodable;
    let Some(version) = data.get(..2).map(|h| i16::from_be_bytes([h[0], h[1]])) else { return };
    if !(0..=3).contains(&version) {
        return;
    }
    let strict_no_trailing = |kind: DecodeErrorKind| !matches!(kind, DecodeErrorKind::TrailingBytes(_));

    let ours = SubscriptionView::decode(data);
    let ours_strict = SubscriptionView::decode_with(data, DecodeOptions::new().strict(true));
    let too_many = matches!(&ours, Err(e) if matches!(e.kind(), DecodeErrorKind::TooManyElements { .. }));
    if !too_many {
        let theirs = ConsumerProtocolSubscription::decode(&mut Bytes::copy_from_slice(&data[2..]), version);
        let expect_ok = match &ours_strict {
            Ok(_) => true,
            Err(e) => !strict_no_trailing(e.kind()),
        };
        assert_eq!(theirs.is_ok(), expect_ok, "subscription: ours {ours_strict:?}, kafka-protocol {theirs:?}");
        if let (Ok(ours), Ok(theirs)) = (&ours, &theirs) {
            let names: Vec<&str> = theirs.topics.iter().map(|t| t.as_str()).collect();
            assert_eq!(ours.topics().iter().collect::<Vec<_>>(), names);
            assert_eq!(ours.user_data(), theirs.user_data.as_deref());
            let owned: Vec<(&str, Vec<i32>)> =
                theirs.owned_partitions.iter().map(|g| (g.topic.0.as_str(), g.partitions.clone())).collect();
            let ours_owned: Vec<(&str, Vec<i32>)> =
                ours.owned_partitions().iter().map(|g| (g.topic, g.partitions.to_vec())).collect();
            assert_eq!(ours_owned, owned);
            assert_eq!(ours.generation_id(), theirs.generation_id);
            assert_eq!(ours.rack_id(), theirs.rack_id.as_ref().map(|r| r.as_str()));
        }
    }

    let ours = AssignmentView::decode(data);
    let ours_strict = AssignmentView::decode_with(data, DecodeOptions::new().strict(true));
    let too_many = matches!(&ours, Err(e) if matches!(e.kind(), DecodeErrorKind::TooManyElements { .. }));
    if !too_many {
        let theirs = ConsumerProtocolAssignment::decode(&mut Bytes::copy_from_slice(&data[2..]), version);
        let expect_ok = match &ours_strict {
            Ok(_) => true,
            Err(e) => !strict_no_trailing(e.kind()),
        };
        assert_eq!(theirs.is_ok(), expect_ok, "assignment: ours {ours_strict:?}, kafka-protocol {theirs:?}");
        if let (Ok(ours), Ok(theirs)) = (&ours, &theirs) {
            let parts: Vec<(&str, Vec<i32>)> =
                theirs.assigned_partitions.iter().map(|g| (g.topic.0.as_str(), g.partitions.clone())).collect();
            let ours_parts: Vec<(&str, Vec<i32>)> =
                ours.assigned_partitions().iter().map(|g| (g.topic, g.partitions.to_vec())).collect();
            assert_eq!(ours_parts, parts);
            assert_eq!(ours.user_data(), theirs.user_data.as_deref());
        }
    }
}
