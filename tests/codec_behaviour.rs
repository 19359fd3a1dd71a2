//! Codec behaviour: the worked byte vectors of the Java reference, canonical encoding, the
//! reader-version matrix, forward compatibility, every error kind with its offset and field,
//! lenient repairs, and agreement of the borrowed, Bytes-backed and owned forms.

mod common;

use bytes::Bytes;
use common::hex;
use kafka_consumer_protocol::{
    Assignment, AssignmentBuf, AssignmentView, CooperativeStickyUserData, DecodeErrorKind, DecodeOptions,
    StickyUserData, StickyUserDataFormat, Subscription, SubscriptionBuf, SubscriptionView, TopicPartitions, Version,
};

/// topics [foo], userData null, owned [foo-0], generation 5, rack "r1".
fn foo_subscription() -> Subscription {
    Subscription::new(["foo"])
        .with_owned_partitions(vec![TopicPartitions::new("foo", [0])])
        .with_generation_id(5)
        .with_rack_id("r1")
}

const FOO_V0: &str = "0000 00000001 0003666f6f ffffffff";
const FOO_V1: &str = "0001 00000001 0003666f6f ffffffff 00000001 0003666f6f 00000001 00000000";
const FOO_V2: &str = "0002 00000001 0003666f6f ffffffff 00000001 0003666f6f 00000001 00000000 00000005";
const FOO_V3: &str = "0003 00000001 0003666f6f ffffffff 00000001 0003666f6f 00000001 00000000 00000005 00027231";

#[test]
fn subscription_encodes_the_reference_bytes_at_every_version() {
    let sub = foo_subscription();
    for (version, expected) in
        [(Version::V0, FOO_V0), (Version::V1, FOO_V1), (Version::V2, FOO_V2), (Version::V3, FOO_V3)]
    {
        let bytes = sub.encode(version).unwrap();
        assert_eq!(bytes, hex(expected), "{version}");
        assert_eq!(sub.encoded_len(version), bytes.len(), "{version}");
    }
    assert_eq!(hex(FOO_V0).len(), 15);
    assert_eq!(hex(FOO_V3).len(), 40);
}

#[test]
fn subscription_decodes_the_reference_bytes_with_version_defaults() {
    let v0 = SubscriptionView::decode(&hex(FOO_V0)[..]).unwrap().to_owned();
    assert_eq!(v0, {
        let mut s = foo_subscription().with_owned_partitions(vec![]).with_generation_id(-1);
        s.rack_id = None;
        s
    });
    let v1 = SubscriptionView::decode(&hex(FOO_V1)[..]).unwrap().to_owned();
    assert_eq!(v1, {
        let mut s = foo_subscription().with_generation_id(-1);
        s.rack_id = None;
        s
    });
    let v2 = SubscriptionView::decode(&hex(FOO_V2)[..]).unwrap().to_owned();
    assert_eq!(v2, {
        let mut s = foo_subscription();
        s.rack_id = None;
        s
    });
    let v3_bytes = hex(FOO_V3);
    let v3 = SubscriptionView::decode(&v3_bytes).unwrap();
    assert_eq!(v3.to_owned(), foo_subscription());
    assert_eq!((v3.version(), v3.read_as(), v3.trailing_bytes()), (3, Version::V3, 0));
}

#[test]
fn empty_and_minimal_subscriptions_match_the_reference() {
    let empty_v3 = hex("0003 00000001 0003666f6f ffffffff 00000000 ffffffff ffff");
    assert_eq!(Subscription::new(["foo"]).encode(Version::V3).unwrap(), empty_v3);
    let minimal_v0 = hex("0000 00000000 00000000");
    let sub = Subscription::default().with_user_data(Some(Bytes::new()));
    assert_eq!(sub.encode(Version::V0).unwrap(), minimal_v0);
    let back = SubscriptionView::decode(&minimal_v0).unwrap();
    assert_eq!(back.user_data(), Some(&[][..]), "empty userData stays empty, not null");
}

#[test]
fn sarama_vectors_decode() {
    let meta_v0 = hex("0000 00000002 00036f6e65 000374776f 00000003 010203");
    let sub = SubscriptionView::decode(&meta_v0).unwrap();
    assert_eq!(sub.topics().iter().collect::<Vec<_>>(), ["one", "two"]);
    assert_eq!(sub.user_data(), Some(&[1, 2, 3][..]));
    let asg_v0 = hex("0000 00000001 00036f6e65 00000003 00000000 00000002 00000004 00000003 010203");
    let a = AssignmentView::decode(&asg_v0).unwrap();
    assert_eq!(a.assigned_partitions().pairs().collect::<Vec<_>>(), [("one", 0), ("one", 2), ("one", 4)]);
    assert_eq!(a.user_data(), Some(&[1, 2, 3][..]));
    assert_eq!(a.to_owned().encode(Version::V0).unwrap(), asg_v0);
}

#[test]
fn assignment_body_is_identical_across_versions() {
    let a = Assignment::new(vec![TopicPartitions::new("foo", [0, 2])]);
    for v in Version::ALL {
        let expected = hex(&format!("000{} 00000001 0003666f6f 00000002 00000000 00000002 ffffffff", v.as_i16()));
        assert_eq!(a.encode(v).unwrap(), expected);
        assert_eq!(a.encoded_len(v), 27);
        assert_eq!(AssignmentView::decode(&expected).unwrap().to_owned(), a);
    }
}

#[test]
fn future_versions_are_read_with_the_v3_layout_and_trailing_bytes_counted() {
    let sub_v100 = hex(
        "0064 00000001 0005746f706963 00000000 00000001 0003626172 00000001 00000002 00000001 00067261636b2d61 0003626172",
    );
    let s = SubscriptionView::decode(&sub_v100).unwrap();
    assert_eq!((s.version(), s.read_as(), s.trailing_bytes()), (100, Version::V3, 5));
    assert_eq!(s.topics().iter().collect::<Vec<_>>(), ["topic"]);
    assert_eq!(s.user_data(), Some(&[][..]));
    assert_eq!(s.owned_partitions().pairs().collect::<Vec<_>>(), [("bar", 2)]);
    assert_eq!((s.generation_id(), s.rack_id()), (1, Some("rack-a")));
    let err = SubscriptionView::decode_with(&sub_v100, DecodeOptions::new().strict(true)).unwrap_err();
    assert_eq!(err.kind(), DecodeErrorKind::TrailingBytes(5));
    assert_eq!(err.offset(), sub_v100.len() - 5);

    let asg_v100 = hex("0064 00000001 0003666f6f 00000001 00000001 00000000 0003626172");
    let a = AssignmentView::decode(&asg_v100).unwrap();
    assert_eq!((a.version(), a.read_as(), a.trailing_bytes()), (100, Version::V3, 5));
    assert_eq!(a.assigned_partitions().pairs().collect::<Vec<_>>(), [("foo", 1)]);
    assert_eq!(a.user_data(), Some(&[][..]));
}

#[test]
fn an_older_reader_sees_a_prefix_and_ignores_the_rest() {
    let bytes = hex(FOO_V3);
    let expect_trailing = [(Version::V0, 25), (Version::V1, 8), (Version::V2, 4), (Version::V3, 0)];
    for (reader, trailing) in expect_trailing {
        let s = SubscriptionView::decode_with(&bytes, DecodeOptions::new().reader_version(reader)).unwrap();
        assert_eq!(s.read_as(), reader);
        assert_eq!(s.trailing_bytes(), trailing, "{reader}");
        assert_eq!(s.owned_partitions().is_empty(), reader < Version::V1);
        assert_eq!(s.generation_id(), if reader >= Version::V2 { 5 } else { -1 });
        assert_eq!(s.rack_id(), if reader >= Version::V3 { Some("r1") } else { None });
    }
    // An older payload read by a newer reader keeps its own layout.
    let v1_bytes = hex(FOO_V1);
    let v1 = SubscriptionView::decode_with(&v1_bytes, DecodeOptions::new().reader_version(Version::V3)).unwrap();
    assert_eq!(v1.read_as(), Version::V1);
}

#[test]
fn subscriptions_are_encoded_canonically_like_java() {
    let a = Subscription::new(["foo", "bar"])
        .with_owned_partitions(vec![TopicPartitions::new("foo", [1]), TopicPartitions::new("bar", [2])]);
    let b = Subscription::new(["bar", "foo"]).with_owned_partitions(vec![
        TopicPartitions::new("foo", [1]),
        TopicPartitions::new("bar", [2]),
        TopicPartitions::new("foo", []),
    ]);
    for v in Version::ALL {
        assert_eq!(a.encode(v).unwrap(), b.encode(v).unwrap(), "{v}");
        assert_eq!(a.encoded_len(v), a.encode(v).unwrap().len());
        assert_eq!(b.encoded_len(v), b.encode(v).unwrap().len());
    }
    let back = Subscription::decode(&b.encode(Version::V1).unwrap()).unwrap();
    assert_eq!(back.topics, ["bar", "foo"]);
    assert_eq!(back.owned_partitions, [TopicPartitions::new("bar", [2]), TopicPartitions::new("foo", [1])]);

    // Owned partitions of one topic given in two groups and out of order are merged and sorted.
    let split = Subscription::default().with_owned_partitions(vec![
        TopicPartitions::new("t", [3, 1]),
        TopicPartitions::new("a", [0]),
        TopicPartitions::new("t", [2]),
    ]);
    let back = Subscription::decode(&split.encode(Version::V3).unwrap()).unwrap();
    assert_eq!(back.owned_partitions, [TopicPartitions::new("a", [0]), TopicPartitions::new("t", [1, 2, 3])]);
    assert_eq!(split.encoded_len(Version::V3), split.encode(Version::V3).unwrap().len());
}

#[test]
fn topics_sort_in_java_utf16_order() {
    // U+1F600 (a surrogate pair in UTF-16) sorts before U+FF5E in Java, after it in UTF-8.
    let sub = Subscription::new(["\u{FF5E}", "\u{1F600}", "a"]);
    let back = Subscription::decode(&sub.encode(Version::V0).unwrap()).unwrap();
    assert_eq!(back.topics, ["a", "\u{1F600}", "\u{FF5E}"]);
}

#[test]
fn assignments_keep_first_appearance_order_and_merge_repeated_topics() {
    let a = Assignment::new(vec![
        TopicPartitions::new("zeta", [5, 1]),
        TopicPartitions::new("alpha", [0]),
        TopicPartitions::new("empty", []),
        TopicPartitions::new("zeta", [3]),
    ]);
    let bytes = a.encode(Version::V3).unwrap();
    assert_eq!(bytes.len(), a.encoded_len(Version::V3));
    let back = Assignment::decode(&bytes).unwrap();
    assert_eq!(back.assigned_partitions, [TopicPartitions::new("zeta", [5, 1, 3]), TopicPartitions::new("alpha", [0])]);
}

#[test]
fn versions_below_zero_are_refused_with_the_header_offset() {
    for bytes in [hex("ffff 00000000 ffffffff"), hex("8000")] {
        let e = SubscriptionView::decode(&bytes).unwrap_err();
        assert!(matches!(e.kind(), DecodeErrorKind::UnsupportedVersion(v) if v < 0));
        assert_eq!((e.offset(), e.field().to_string()), (0, "version".to_owned()));
        let e = AssignmentView::decode(&bytes).unwrap_err();
        assert!(matches!(e.kind(), DecodeErrorKind::UnsupportedVersion(_)));
    }
}

/// (payload, kind, offset, field) for one malformed subscription each. A truncation's offset is
/// where the missing bytes would start; other errors point at the offending length or count.
#[test]
fn every_error_kind_names_its_offset_and_field() {
    let cases: &[(&str, DecodeErrorKind, usize, &str)] = &[
        ("00", DecodeErrorKind::Truncated { needed: 2, available: 1 }, 0, "version"),
        ("0003 0000", DecodeErrorKind::Truncated { needed: 4, available: 2 }, 2, "topics"),
        ("0003 00000001 0003 66", DecodeErrorKind::Truncated { needed: 3, available: 1 }, 8, "topics[0]"),
        ("0003 00000001 ffff", DecodeErrorKind::UnexpectedNull, 6, "topics[0]"),
        ("0003 00000001 fffe", DecodeErrorKind::NegativeLength(-2), 6, "topics[0]"),
        ("0003 00000002 0001 ff 0000", DecodeErrorKind::InvalidUtf8, 6, "topics[0]"),
        ("0003 ffffffff", DecodeErrorKind::UnexpectedNull, 2, "topics"),
        ("0003 fffffff0", DecodeErrorKind::NegativeLength(-16), 2, "topics"),
        ("0003 7fffffff 0000", DecodeErrorKind::TooManyElements { count: i32::MAX, remaining: 2 }, 2, "topics"),
        ("0001 00000000 00000005 0102", DecodeErrorKind::Truncated { needed: 5, available: 2 }, 10, "user_data"),
        (
            "0001 00000000 ffffffff 00000002 0001 61 00000001 00000007 0001 62 00000001 0000",
            DecodeErrorKind::Truncated { needed: 4, available: 2 },
            32,
            "owned_partitions[1].partitions[0]",
        ),
        (
            "0001 00000000 ffffffff 00000001 0001 61 00000003 00000001 00000002 0000",
            DecodeErrorKind::Truncated { needed: 4, available: 2 },
            29,
            "owned_partitions[0].partitions[2]",
        ),
        (
            "0001 00000000 ffffffff 00000001 0001 61 ffffffff",
            DecodeErrorKind::UnexpectedNull,
            17,
            "owned_partitions[0].partitions",
        ),
        (
            "0002 00000000 ffffffff 00000000 0000",
            DecodeErrorKind::Truncated { needed: 4, available: 2 },
            14,
            "generation_id",
        ),
        (
            "0003 00000000 ffffffff 00000000 00000001 0005 7231",
            DecodeErrorKind::Truncated { needed: 5, available: 2 },
            20,
            "rack_id",
        ),
    ];
    for (payload, kind, offset, field) in cases {
        let bytes = hex(payload);
        let e = SubscriptionView::decode(&bytes).unwrap_err();
        assert_eq!(e.kind(), *kind, "{payload}");
        assert_eq!(e.offset(), *offset, "{payload}");
        assert_eq!(e.field().to_string(), *field, "{payload}");
        // The Bytes-backed and owned decoders report the same error.
        assert_eq!(SubscriptionBuf::decode(Bytes::from(bytes.clone())).unwrap_err(), e);
        assert_eq!(Subscription::decode(&bytes).unwrap_err(), e);
    }
}

#[test]
fn assignment_errors_name_their_fields() {
    let e = AssignmentView::decode(&hex("0000 00000001 0001 61 00000002 00000001")).unwrap_err();
    assert_eq!(e.kind(), DecodeErrorKind::Truncated { needed: 4, available: 0 });
    assert_eq!((e.offset(), e.field().to_string()), (17, "assigned_partitions[0].partitions[1]".to_owned()));
    let e = AssignmentView::decode(&hex("0000 00000000 000000")).unwrap_err();
    assert_eq!(e.field().to_string(), "user_data");
    assert_eq!(e.to_string(), "assignment: user_data at byte 6: truncated: needed 4 bytes, 3 left");
}

#[test]
fn nullable_lengths_below_minus_one_are_null_like_java_and_refused_in_strict_mode() {
    let bytes = hex("0003 00000000 fffffffe 00000000 00000001 fffe");
    let s = SubscriptionView::decode(&bytes).unwrap();
    assert_eq!((s.user_data(), s.rack_id()), (None, None));
    let e = SubscriptionView::decode_with(&bytes, DecodeOptions::new().strict(true)).unwrap_err();
    assert_eq!((e.kind(), e.field().to_string()), (DecodeErrorKind::NegativeLength(-2), "user_data".to_owned()));
}

#[test]
fn lenient_mode_repairs_versions_that_promise_absent_fields() {
    // "v1" without owned partitions (kafkajs < 2.2.2, kafka-go, sarama-cluster).
    let v1_bad = hex("0001 00000002 00036f6e65 000374776f 00000003 010203");
    let e = SubscriptionView::decode(&v1_bad).unwrap_err();
    assert_eq!(
        (e.kind(), e.field().to_string()),
        (DecodeErrorKind::Truncated { needed: 4, available: 0 }, "owned_partitions".to_owned())
    );
    let s = SubscriptionView::decode_with(&v1_bad, DecodeOptions::new().lenient(true)).unwrap();
    assert_eq!((s.version(), s.read_as()), (1, Version::V0));
    assert_eq!(s.topics().iter().collect::<Vec<_>>(), ["one", "two"]);
    let repair = s.repair().unwrap();
    assert_eq!((repair.declared_version, repair.read_as), (1, Version::V0));
    assert!(repair.to_string().contains("kafkajs"), "{repair}");

    // "v3" with only v0 fields (samsa), and short v2/v3 payloads.
    for (payload, read_as) in [
        ("0003 00000001 0001 61 ffffffff", Version::V0),
        ("0002 00000000 ffffffff 00000000", Version::V1),
        ("0003 00000000 ffffffff 00000000 00000009", Version::V2),
    ] {
        let bytes = hex(payload);
        assert!(SubscriptionView::decode(&bytes).is_err(), "Java refuses {payload}");
        let s = SubscriptionView::decode_with(&bytes, DecodeOptions::new().lenient(true)).unwrap();
        assert_eq!(s.read_as(), read_as, "{payload}");
        assert_eq!(s.repair().map(|r| r.read_as), Some(read_as));
    }
    // A payload cut inside a field is not repaired.
    let cut = hex("0002 00000000 ffffffff 00000000 0000");
    assert!(SubscriptionView::decode_with(&cut, DecodeOptions::new().lenient(true)).is_err());
    // Valid payloads are never "repaired".
    let valid = hex(FOO_V3);
    let s = SubscriptionView::decode_with(&valid, DecodeOptions::new().lenient(true)).unwrap();
    assert_eq!(s.repair(), None);

    // An assignment without its userData field.
    let asg = hex("0000 00000001 0001 61 00000001 00000000");
    assert!(AssignmentView::decode(&asg).is_err());
    let a = AssignmentView::decode_with(&asg, DecodeOptions::new().lenient(true)).unwrap();
    assert_eq!((a.user_data(), a.repair().is_some()), (None, true));
}

#[test]
fn borrowed_bytes_backed_and_owned_forms_agree() {
    let input = Bytes::from(hex(
        "0003 00000002 0001 61 0001 62 00000002 abcd 00000001 0001 61 00000002 00000000 00000001 00000007 0002 7a31",
    ));
    let view = SubscriptionView::decode(&input).unwrap();
    let buf = SubscriptionBuf::decode(input.clone()).unwrap();
    assert_eq!(buf.view(), view);
    assert_eq!(SubscriptionBuf::from_view(&input, &view).unwrap(), buf);
    assert!(SubscriptionBuf::from_view(&Bytes::from(input.to_vec()), &view).is_none(), "different backing buffer");
    let user_data = buf.user_data().unwrap();
    assert_eq!(&user_data[..], &[0xab, 0xcd]);
    assert!(std::ptr::eq(user_data.as_ptr(), view.user_data().unwrap().as_ptr()), "shares the input buffer");
    assert_eq!(Subscription::decode(&input).unwrap(), view.to_owned());

    fn assert_send_sync_static<T: Send + Sync + 'static>() {}
    assert_send_sync_static::<SubscriptionBuf>();
    assert_send_sync_static::<AssignmentBuf>();

    let a_input = Bytes::from(hex("0003 00000001 0001 61 00000001 00000003 00000002 0102"));
    let a_view = AssignmentView::decode(&a_input).unwrap();
    let a_buf = AssignmentBuf::decode(a_input.clone()).unwrap();
    assert_eq!(a_buf.view(), a_view);
    assert_eq!(AssignmentBuf::from_view(&a_input, &a_view).unwrap(), a_buf);
    assert_eq!(&a_buf.user_data().unwrap()[..], &[1, 2]);
}

#[test]
fn encoding_refuses_what_the_wire_cannot_hold() {
    let long = "x".repeat(32_768);
    let e = Subscription::new([long.as_str()]).encode(Version::V0).unwrap_err();
    assert_eq!(e, kafka_consumer_protocol::EncodeError::StringTooLong { field: "topics", len: 32_768 });
    assert!(Subscription::new(["x".repeat(32_767)]).encode(Version::V0).is_ok());
}

/// The fast path finds a name too long for its `int16` length where it copies it, after the
/// sizes are summed: wherever the name is, the error names its field and nothing is written.
#[test]
fn a_name_too_long_is_refused_wherever_it_is() {
    use kafka_consumer_protocol::EncodeError::StringTooLong;
    for len in [32_767, 32_768, 40_000] {
        let long = "y".repeat(len);
        let expect = |field: &'static str| if len <= 32_767 { None } else { Some(StringTooLong { field, len }) };
        let mut owned = Subscription::new(["a", "b"]);
        owned.owned_partitions = vec![TopicPartitions::new("a", [0]), TopicPartitions::new(long.clone(), [1, 2])];
        assert_eq!(owned.encode(Version::V1).err(), expect("owned_partitions.topic"));
        assert_eq!(owned.encode(Version::V0).err(), None, "v0 has no owned partitions");
        let mut rack = Subscription::new(["a"]);
        rack.rack_id = Some(long.clone());
        assert_eq!(rack.encode(Version::V3).err(), expect("rack_id"));
        assert_eq!(rack.encode(Version::V2).err(), None, "v2 has no rack");
        let assignment = Assignment::new(vec![
            TopicPartitions::new("orders-0001", [0]),
            TopicPartitions::new(long.clone(), [1]),
            TopicPartitions::new("orders-0002", [2]),
        ]);
        assert_eq!(assignment.encode(Version::V3).err(), expect("assigned_partitions.topic"));
        let mut out = b"kept".to_vec();
        assert_eq!(assignment.encode_into(Version::V3, &mut out).err(), expect("assigned_partitions.topic"));
        let mut into = b"kept".to_vec();
        assert_eq!(owned.encode_into(Version::V1, &mut into).err(), expect("owned_partitions.topic"));
        if len > 32_767 {
            assert_eq!(out, b"kept", "a failed encode_into leaves the buffer as it was");
            assert_eq!(into, b"kept");
        } else {
            let bytes = assignment.encode(Version::V3).unwrap();
            assert_eq!(bytes.len(), assignment.encoded_len(Version::V3));
            assert_eq!(Assignment::decode(&bytes).unwrap(), assignment);
            assert_eq!(out, [&b"kept"[..], &bytes].concat(), "encode_into appends encode's bytes");
            assert_eq!(into, [&b"kept"[..], &owned.encode(Version::V1).unwrap()].concat());
        }
    }
}

#[test]
fn cooperative_sticky_user_data_is_an_int32_generation() {
    assert_eq!(&CooperativeStickyUserData { generation: -1 }.encode()[..], &[0xff; 4]);
    assert_eq!(CooperativeStickyUserData::decode(&[0, 0, 0, 10, 99]).unwrap().generation, 10);
    let e = CooperativeStickyUserData::decode(&[0, 0]).unwrap_err();
    assert_eq!(e.to_string(), "cooperative_sticky_user_data: generation at byte 0: truncated: needed 4 bytes, 2 left");
    assert_eq!(CooperativeStickyUserData::java_generation(Some(&[0, 0, 0, 7])), Some(7));
}

#[test]
fn sticky_user_data_falls_back_like_java() {
    let v1 = hex("00000001 0003666f6f 00000002 00000000 00000001 00000003");
    let (data, format) = StickyUserData::decode_java(&v1);
    assert_eq!(format, StickyUserDataFormat::V1);
    assert_eq!(
        data,
        StickyUserData { previous_assignment: vec![TopicPartitions::new("foo", [0, 1])], generation: Some(3) }
    );
    assert_eq!(data.encode().unwrap(), v1);
    let v0 = &v1[..v1.len() - 4];
    let (data, format) = StickyUserData::decode_java(v0);
    assert_eq!((format, data.generation), (StickyUserDataFormat::V0, None));
    assert_eq!(data.previous_assignment.len(), 1);
    let (data, format) = StickyUserData::decode_java(&[1, 2, 3]);
    assert_eq!(
        (format, data),
        (StickyUserDataFormat::Unreadable, StickyUserData { previous_assignment: vec![], generation: Some(-1) })
    );
}

#[test]
fn repeated_topics_are_merged_at_any_group_count() {
    for groups in [2usize, 31, 32, 33, 100] {
        let mut list: Vec<TopicPartitions> =
            (0..groups - 1).map(|i| TopicPartitions::new(format!("t{i}"), [i as i32])).collect();
        list.push(TopicPartitions::new("t0", [99]));
        let a = Assignment::new(list);
        let back = Assignment::decode(&a.encode(Version::V0).unwrap()).unwrap();
        assert_eq!(back.assigned_partitions.len(), groups - 1, "{groups} groups");
        assert_eq!(back.assigned_partitions[0], TopicPartitions::new("t0", [0, 99]));
        assert_eq!(a.encoded_len(Version::V0), a.encode(Version::V0).unwrap().len());
        // Without the repeat, nothing is merged.
        let distinct = Assignment::new((0..groups).map(|i| TopicPartitions::new(format!("t{i}"), [1])).collect());
        assert_eq!(Assignment::decode(&distinct.encode(Version::V0).unwrap()).unwrap(), distinct);
    }
}
