//! Runs the `kcp` binary: decode, encode and compat as the CLI contract describes.
#![cfg(feature = "cli")]

mod common;

use std::process::Output;

use serde_json::{json, Value};

const SUB_V3: &str = "0003 00000001 0003666f6f ffffffff 00000001 0003666f6f 00000001 00000000 00000005 00027231";

fn kcp(args: &[&str], stdin: Option<&[u8]>) -> Output {
    common::run_kcp(args, stdin)
}

fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

fn hex_bytes(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
}

#[test]
fn decode_prints_the_subscription_shape() {
    let out = kcp(&["decode", SUB_V3], None);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        json_of(&out),
        json!({"kind": "subscription", "version": 3, "read_as_version": 3, "topics": ["foo"], "user_data": null,
               "owned_partitions": [{"topic": "foo", "partitions": [0]}], "generation_id": 5, "rack_id": "r1",
               "trailing_bytes": 0, "warnings": []})
    );
}

#[test]
fn every_input_form_gives_the_same_result() {
    let expected = json_of(&kcp(&["decode", SUB_V3], None));
    let raw = hex_bytes(SUB_V3);
    let colons: String = raw.iter().map(|b| format!("{b:02X}")).collect::<Vec<_>>().join(":");
    let file = std::env::temp_dir().join(format!("kcp-test-{}.bin", std::process::id()));
    std::fs::write(&file, &raw).unwrap();
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD.encode(&raw);
    for out in [
        kcp(&["decode", &format!("0x{}", SUB_V3.replace(' ', ""))], None),
        kcp(&["decode", &colons], None),
        kcp(&["decode", "--file", file.to_str().unwrap()], None),
        kcp(&["decode", "--base64", &b64], None),
        kcp(&["decode", "-"], Some(&raw)),
        kcp(&["decode", "-"], Some(format!("{SUB_V3}\n").as_bytes())),
    ] {
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(json_of(&out), expected);
    }
    std::fs::remove_file(file).ok();
}

#[test]
fn decode_errors_are_json_with_exit_status_1() {
    let out = kcp(&["decode", "--kind", "subscription", "0003 00000001 0003"], None);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        json_of(&out),
        json!({"error": {"kind": "truncated", "offset": 8, "field": "topics[0]", "message": "needed 3 bytes, 0 left"}})
    );
    let out = kcp(&["decode", "zz"], None);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(json_of(&out)["error"]["kind"], "invalid_input");
    let out = kcp(&["decode", "--format", "text", "--kind", "subscription", "0003"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("topics at byte 2: truncated"));
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(kcp(&["decode", "--reader-version", "7", SUB_V3], None).status.code(), Some(2));
    assert_eq!(kcp(&["frobnicate"], None).status.code(), Some(2));
    assert_eq!(kcp(&["encode", "--version", "1"], None).status.code(), Some(2));
}

#[test]
fn kind_auto_prefers_the_exact_reading_and_warns_on_a_tie() {
    // A v1 assignment: as a subscription it would leave trailing bytes or fail.
    let asg = "0001 00000001 0003666f6f 00000002 00000000 00000002 ffffffff";
    let out = json_of(&kcp(&["decode", asg], None));
    assert_eq!(out["kind"], "assignment");
    assert_eq!(out["assigned_partitions"], json!([{"topic": "foo", "partitions": [0, 2]}]));
    // Empty topics + null userData reads exactly both ways at v0.
    let tie = json_of(&kcp(&["decode", "0000 00000000 ffffffff"], None));
    assert_eq!(tie["kind"], "subscription");
    assert!(tie["warnings"][0].as_str().unwrap().contains("both"));
}

#[test]
fn kind_auto_with_an_older_reader_chooses_by_the_whole_layout() {
    // Issue 26: a v3 subscription read by a v0 reader leaves its newer fields as trailing bytes;
    // --kind auto used to count that against the subscription and explain that the payload "as an
    // assignment" needed 33554432 bytes. The kind is chosen by the whole layout; the older reader
    // then reads it, and only its own warning remains.
    let readme_payload = "AAMAAAABAANmb28AAAAEAAAACgAAAAEAA2ZvbwAAAAIAAAAAAAAAAQAAAAr//w==";
    for reader in ["0", "1", "2"] {
        let out = json_of(&kcp(&["decode", "--reader-version", reader, "--base64", readme_payload], None));
        assert_eq!(out["kind"], "subscription", "reader v{reader}");
        assert_eq!(out["read_as_version"], json!(reader.parse::<i64>().unwrap()));
        let warnings = out["warnings"].as_array().unwrap();
        assert_eq!(warnings.len(), 1, "reader v{reader}: {warnings:?}");
        assert!(warnings[0].as_str().unwrap().contains("older reader"), "{warnings:?}");
    }
    let out = json_of(&kcp(&["decode", "--reader-version", "0", SUB_V3], None));
    assert_eq!((out["kind"].clone(), out["trailing_bytes"].clone()), (json!("subscription"), json!(25)));
    // An assignment is still recognised when an older reader reads it.
    let asg = "0001 00000001 0003666f6f 00000002 00000000 00000002 ffffffff";
    let out = json_of(&kcp(&["decode", "--reader-version", "0", asg], None));
    assert_eq!(out["kind"], "assignment");
}

#[test]
fn strict_lenient_and_reader_version_flags() {
    let v1_bad = "0001 00000001 0003666f6f ffffffff";
    let out = kcp(&["decode", "--kind", "subscription", v1_bad], None);
    assert_eq!(out.status.code(), Some(1));
    let out = json_of(&kcp(&["decode", "--kind", "subscription", "--lenient", v1_bad], None));
    assert_eq!((out["version"].clone(), out["read_as_version"].clone()), (json!(1), json!(0)));
    assert!(out["warnings"][0].as_str().unwrap().starts_with("lenient:"));
    let out = json_of(&kcp(&["decode", "--kind", "subscription", "--reader-version", "1", SUB_V3], None));
    assert_eq!((out["read_as_version"].clone(), out["trailing_bytes"].clone()), (json!(1), json!(8)));
    assert_eq!(out["owned_partitions"], json!([{"topic": "foo", "partitions": [0]}]));
    assert!(out["warnings"][0].as_str().unwrap().contains("older reader"));
    let out = kcp(&["decode", "--strict", "--kind", "subscription", &format!("{SUB_V3} 00")], None);
    assert_eq!(json_of(&out)["error"]["kind"], "trailing_bytes");
}

#[test]
fn encode_round_trips_the_decode_shape() {
    let decoded = kcp(&["decode", SUB_V3], None).stdout;
    for (version, expected_len) in [("0", 15), ("1", 32), ("2", 36), ("3", 40), ("9", 40)] {
        let out = kcp(&["encode", "--kind", "subscription", "--version", version, "-"], Some(&decoded));
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
        let hex = String::from_utf8(out.stdout).unwrap();
        assert_eq!(hex.trim().len(), expected_len * 2, "version {version}");
    }
    let out = kcp(&["encode", "--kind", "subscription", "--version", "3", "-"], Some(&decoded));
    assert_eq!(String::from_utf8(out.stdout).unwrap().trim(), SUB_V3.replace(' ', ""));
    let asg = json!({"assigned_partitions": [{"topic": "b", "partitions": [1]}, {"topic": "a", "partitions": [0]}],
                     "user_data": "0102"});
    let out = kcp(&["encode", "--kind", "assignment", "--version", "0", "-"], Some(asg.to_string().as_bytes()));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().trim(),
        "0000000000020001620000000100000001000161000000010000000000000002".to_owned() + "0102"
    );
    // A value of the wrong type is a usage error naming the key (tests/cli_hostile.rs has more).
    let out = kcp(&["encode", "--kind", "assignment", "--version", "0", "-"], Some(b"{\"assigned_partitions\": 5}"));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid type: integer `5`, expected a sequence"));
}

#[test]
fn compat_shows_every_reader() {
    let out = json_of(&kcp(&["compat", SUB_V3], None));
    assert_eq!((out["kind"].clone(), out["written_version"].clone()), (json!("subscription"), json!(3)));
    let readers = out["readers"].as_array().unwrap();
    let dropped: Vec<Value> = readers.iter().map(|r| r["dropped_fields"].clone()).collect();
    assert_eq!(
        dropped,
        [
            json!(["owned_partitions", "generation_id", "rack_id"]),
            json!(["generation_id", "rack_id"]),
            json!(["rack_id"]),
            json!([])
        ]
    );
    assert!(readers.iter().all(|r| r["ok"] == true));
    assert_eq!(readers[0]["decoded"]["generation_id"], -1);
    assert_eq!(readers[2]["decoded"]["generation_id"], 5);
    // A payload only older readers can read: v2 that ends before its generation.
    let cut = "0002 00000001 0003666f6f ffffffff 00000000";
    let out = kcp(&["compat", cut], None);
    assert_eq!(out.status.code(), Some(0));
    let out = json_of(&out);
    let ok: Vec<Value> = out["readers"].as_array().unwrap().iter().map(|r| r["ok"].clone()).collect();
    assert_eq!(ok, [json!(true), json!(true), json!(false), json!(false)]);
    assert_eq!(out["readers"][2]["error"]["field"], "generation_id");
    assert_eq!(out["readers"][1]["dropped_fields"], json!(["generation_id"]));
    // Nothing reads garbage: exit 1 with the newest reader's error.
    let out = kcp(&["compat", "--kind", "subscription", "0003 0000"], None);
    assert_eq!((out.status.code(), json_of(&out)["error"]["field"].clone()), (Some(1), json!("topics")));
}

#[test]
fn text_format_is_readable() {
    let out = kcp(&["decode", "--format", "text", SUB_V3], None);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("owned_partitions  foo[0]"), "{text}");
    assert!(text.contains("rack_id           r1"), "{text}");
    let out = kcp(&["compat", "--format", "text", SUB_V3], None);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("reader v0: reads it, ignores [\"owned_partitions\",\"generation_id\",\"rack_id\"]"),
        "{text}"
    );
}

#[test]
fn the_embedded_example_is_a_java_written_cooperative_sticky_subscription() {
    let out = kcp(&["decode", "--example"], None);
    assert_eq!(out.status.code(), Some(0));
    let v = json_of(&out);
    assert_eq!(v["owned_partitions"], json!([{"topic": "foo", "partitions": [0, 1]}]));
    assert_eq!((v["generation_id"].clone(), v["user_data"].clone()), (json!(10), json!("0000000a")));
    assert_eq!(kcp(&["decode", "--example", "00"], None).status.code(), Some(2), "--example excludes other input");
}
