//! Golden vectors: every file under `testdata/vectors/` (written by Apache Kafka's Java client
//! and by other clients, with what Java's reader returns at every reader version) is decoded
//! and, where canonical, re-encoded byte for byte. Every strict prefix of every valid payload
//! must be a typed error.

mod common;

use std::path::Path;

use bytes::Bytes;
use common::{hex, json_files, to_hex};
use kafka_consumer_protocol::codec::TopicPartitionsList;
use kafka_consumer_protocol::{
    AssignmentBuf, AssignmentView, CooperativeStickyUserData, DecodeErrorKind, DecodeOptions, StickyUserData,
    StickyUserDataFormat, SubscriptionBuf, SubscriptionView, Version,
};
use serde_json::{json, Value};

fn partitions_json(list: TopicPartitionsList<'_>) -> Value {
    Value::Array(list.iter().map(|g| json!({"topic": g.topic, "partitions": g.partitions.to_vec()})).collect())
}

fn sub_json(s: &SubscriptionView<'_>) -> Value {
    json!({
        "version": s.version(), "read_as_version": s.read_as().as_i16(),
        "topics": s.topics().iter().collect::<Vec<_>>(), "user_data": s.user_data().map(to_hex),
        "owned_partitions": partitions_json(s.owned_partitions()), "generation_id": s.generation_id(),
        "rack_id": s.rack_id(), "trailing_bytes": s.trailing_bytes(),
    })
}

fn asg_json(a: &AssignmentView<'_>) -> Value {
    json!({
        "version": a.version(), "read_as_version": a.read_as().as_i16(),
        "assigned_partitions": partitions_json(a.assigned_partitions()), "user_data": a.user_data().map(to_hex),
        "trailing_bytes": a.trailing_bytes(),
    })
}

/// Decodes `bytes` as `kind` with `options` into the vector JSON shape, or the error kind.
fn decode(kind: &str, bytes: &[u8], options: DecodeOptions) -> Result<Value, DecodeErrorKind> {
    match kind {
        "subscription" => SubscriptionView::decode_with(bytes, options).map(|s| sub_json(&s)).map_err(|e| e.kind()),
        _ => AssignmentView::decode_with(bytes, options).map(|a| asg_json(&a)).map_err(|e| e.kind()),
    }
}

/// Keeps only the keys of `expected`, so producers may record extra keys.
fn project(actual: &Value, expected: &Value) -> Value {
    match (actual, expected) {
        (Value::Object(a), Value::Object(e)) => {
            Value::Object(e.keys().filter_map(|k| a.get(k).map(|v| (k.clone(), v.clone()))).collect())
        }
        _ => actual.clone(),
    }
}

/// Where we differ from Java's reader on purpose: Java decodes invalid UTF-8 with U+FFFD
/// replacement characters; we refuse it (`invalid_utf8`), since a name that does not
/// round-trip cannot be matched against topic metadata.
fn is_invalid_utf8(bytes: &[u8], kind: &str) -> bool {
    decode(kind, bytes, DecodeOptions::new()) == Err(DecodeErrorKind::InvalidUtf8)
}

struct Tally {
    files: usize,
    payloads_checked: usize,
    prefixes_checked: usize,
    canonical_reencoded: usize,
    reader_entries: usize,
    divergences: Vec<String>,
    lenient_refusals: Vec<String>,
}

fn check_vector(path: &Path, tally: &mut Tally) {
    let text = std::fs::read_to_string(path).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let name = path.display().to_string();
    let kind = v["kind"].as_str().unwrap_or_else(|| panic!("{name}: no kind"));
    let bytes = hex(v["hex"].as_str().unwrap());
    let expect = &v["expect"];
    tally.files += 1;
    match kind {
        "cooperative_sticky_user_data" => {
            let generation = expect["generation"].as_i64().map(|g| g as i32);
            assert_eq!(CooperativeStickyUserData::java_generation(Some(&bytes)), generation, "{name}");
            return;
        }
        "sticky_user_data" => {
            let (data, format) = StickyUserData::decode_java(&bytes);
            let format_name = match format {
                StickyUserDataFormat::V1 => "v1",
                StickyUserDataFormat::V0 => "v0",
                StickyUserDataFormat::Unreadable => "unreadable",
            };
            assert_eq!(format_name, expect["format"], "{name}");
            let previous: Vec<Value> = data
                .previous_assignment
                .iter()
                .map(|g| json!({"topic": g.topic, "partitions": g.partitions}))
                .collect();
            assert_eq!(Value::Array(previous), expect["previous_assignment"], "{name}");
            assert_eq!(data.generation.map_or(Value::Null, |g| json!(g)), expect["generation"], "{name}");
            return;
        }
        "subscription" | "assignment" => {}
        other => panic!("{name}: unknown kind {other}"),
    }
    tally.payloads_checked += 1;

    if expect.get("error").is_some() {
        assert!(decode(kind, &bytes, DecodeOptions::new()).is_err(), "{name}: Java rejects it, so must we");
        if let Some(lenient) = v.get("lenient_expect") {
            match decode(kind, &bytes, DecodeOptions::new().lenient(true)) {
                Ok(got) => assert_eq!(project(&got, lenient), *lenient, "{name}: lenient repair"),
                // Lenient mode repairs fields that are absent, not a field cut in the middle:
                // that is a damaged payload, not a known client defect.
                Err(DecodeErrorKind::Truncated { available, .. }) if available > 0 => {
                    tally.lenient_refusals.push(name.clone())
                }
                Err(e) => panic!("{name}: lenient decode failed: {e:?}"),
            }
        }
    } else if is_invalid_utf8(&bytes, kind) {
        tally.divergences.push(format!("{name}: invalid UTF-8 refused (Java substitutes U+FFFD)"));
    } else {
        let got = decode(kind, &bytes, DecodeOptions::new()).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        assert_eq!(project(&got, expect), *expect, "{name}: decode differs from Java's reader");
        // Lenient mode changes nothing on a payload Java reads.
        assert_eq!(decode(kind, &bytes, DecodeOptions::new().lenient(true)), Ok(got.clone()), "{name}: lenient");
        // The Bytes-backed form agrees with the borrowed one.
        let shared = Bytes::from(bytes.clone());
        match kind {
            "subscription" => assert_eq!(sub_json(&SubscriptionBuf::decode(shared).unwrap().view()), got),
            _ => assert_eq!(asg_json(&AssignmentBuf::decode(shared).unwrap().view()), got),
        }
        if v["canonical"] == true {
            let version = Version::layout_for_wire(got["version"].as_i64().unwrap() as i16).unwrap();
            let encoded = match kind {
                "subscription" => SubscriptionView::decode(&bytes).unwrap().to_owned().encode(version).unwrap(),
                _ => AssignmentView::decode(&bytes).unwrap().to_owned().encode(version).unwrap(),
            };
            assert_eq!(to_hex(&encoded), v["hex"].as_str().unwrap(), "{name}: canonical re-encode");
            tally.canonical_reencoded += 1;
        }
        let consumed = bytes.len() - got["trailing_bytes"].as_u64().unwrap() as usize;
        for cut in 0..consumed {
            let prefix = &bytes[..cut];
            assert!(decode(kind, prefix, DecodeOptions::new()).is_err(), "{name}: prefix of {cut} bytes decoded");
            tally.prefixes_checked += 1;
        }
    }

    for reader in v["readers"].as_array().into_iter().flatten() {
        let n = reader["reader_version"].as_i64().unwrap() as i16;
        let options = DecodeOptions::new().reader_version(Version::try_from(n).unwrap());
        let ours = decode(kind, &bytes, options);
        if reader["ok"] == true {
            if ours == Err(DecodeErrorKind::InvalidUtf8) {
                continue; // the documented divergence above
            }
            let got = ours.unwrap_or_else(|e| panic!("{name}: reader {n} failed with {e:?}, Java read it"));
            assert_eq!(project(&got, &reader["decoded"]), reader["decoded"], "{name}: reader {n}");
        } else {
            assert!(ours.is_err(), "{name}: reader {n} decoded what Java refuses: {ours:?}");
        }
        tally.reader_entries += 1;
    }
}

#[test]
fn golden_vectors_decode_encode_and_truncate_like_java() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/vectors");
    let files = json_files(&root);
    let mut tally = Tally {
        files: 0,
        payloads_checked: 0,
        prefixes_checked: 0,
        canonical_reencoded: 0,
        reader_entries: 0,
        divergences: Vec::new(),
        lenient_refusals: Vec::new(),
    };
    for file in &files {
        check_vector(file, &mut tally);
    }
    // Guard against a silently empty or shrunken corpus: every producer with its committed count.
    let producers = [
        ("java-3.9.1", 177),
        ("java-4.1.1", 177),
        ("java-client-capture-3.9.1", 39),
        ("librdkafka-2.16.0", 42),
        ("franz-go-1.22.3", 33),
        ("sarama-1.61.1", 33),
        ("shopify-sarama-1.19.0", 5),
        ("kafka-go-0.4.51", 12),
        ("kafkajs-2.2.4", 14),
        ("kafkajs-2.2.1", 2),
        ("kafka-python-3.0.12", 28),
        ("aiokafka-0.14.0", 10),
        ("kafka-node-5.0.0", 6),
        ("platformatic-kafka-2.12.1", 18),
        ("handbuilt-malformed", 4),
    ];
    for (producer, expected) in producers {
        let count = files.iter().filter(|f| f.parent().unwrap().ends_with(producer)).count();
        assert_eq!(count, expected, "{producer}");
    }
    assert_eq!(tally.files, 600, "vector files outside the known producers");
    assert!(tally.canonical_reencoded >= 390, "{} canonical re-encodes", tally.canonical_reencoded);
    assert!(tally.prefixes_checked >= 80_000, "{} prefixes", tally.prefixes_checked);
    assert!(tally.reader_entries >= 2_200, "{} reader entries", tally.reader_entries);
    // The documented divergences: Java's own invalid-UTF-8 vector (both versions) and kafka-node's
    // non-ASCII topic (UTF-16 length, UTF-8 bytes), which Java reads as "caf\u{FFFD}".
    let divergent: Vec<&str> = tally.divergences.iter().map(|d| d.rsplit('/').next().unwrap()).collect();
    assert_eq!(
        divergent,
        [
            "subscription-v0-topic-invalid-utf8.json: invalid UTF-8 refused (Java substitutes U+FFFD)",
            "subscription-v0-topic-invalid-utf8.json: invalid UTF-8 refused (Java substitutes U+FFFD)",
            "roundrobin-join-metadata-non-ascii-topic.json: invalid UTF-8 refused (Java substitutes U+FFFD)",
        ]
    );
    let refused: Vec<&str> = tally.lenient_refusals.iter().map(|d| d.rsplit('/').next().unwrap()).collect();
    assert_eq!(refused, ["short-subscription-v3-partial-rack.json"], "lenient refusals");
    eprintln!(
        "{} files, {} payloads, {} canonical re-encodes, {} reader entries, {} truncated prefixes",
        tally.files, tally.payloads_checked, tally.canonical_reencoded, tally.reader_entries, tally.prefixes_checked
    );
}
