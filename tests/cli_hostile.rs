//! `kcp` under hostile and careless input: closed pipes and full disks, inputs over the size
//! limits, counts that would need huge allocations, wrong JSON shapes, strings that would act on
//! a terminal, and the smaller ways a command could answer wrongly without a word.
#![cfg(feature = "cli")]

mod common;

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};

const SUB_V3: &str = "0003 00000001 0003666f6f ffffffff 00000001 0003666f6f 00000001 00000000 00000005 00027231";

fn kcp(args: &[&str], stdin: Option<&[u8]>) -> Output {
    common::run_kcp(args, stdin)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", stdout(out)))
}

fn manifest(path: &str) -> String {
    format!("{}/{path}", env!("CARGO_MANIFEST_DIR"))
}

fn temp(name: &str, contents: &[u8]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("kcp-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path
}

/// Every command with an input that makes it print something (stdin, arguments).
fn every_command() -> Vec<(Vec<String>, Vec<u8>)> {
    let capture = manifest("testdata/pcap/java-cooperative-sticky.pcap");
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    vec![
        (s(&["decode", "--example"]), vec![]),
        (s(&["decode", "--example", "--format", "text"]), vec![]),
        (s(&["compat", "--example"]), vec![]),
        (s(&["compat", "--example", "--format", "text"]), vec![]),
        (s(&["encode", "--kind", "subscription", "--version", "3", "-"]), br#"{"topics": ["a"]}"#.to_vec()),
        (
            s(&["assign", "--strategy", "cooperative-sticky", "-"]),
            br#"{"topics": {"t": 4}, "members": [{"member_id": "a", "topics": ["t"]}]}"#.to_vec(),
        ),
        (s(&["simulate", "--example"]), vec![]),
        (s(&["pcap", &capture]), vec![]),
        (s(&["pcap", &capture, "--format", "text"]), vec![]),
    ]
}

/// Runs kcp with stdout a pipe whose reading end is already closed.
fn with_closed_stdout(args: &[String], stdin: &[u8]) -> Output {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let mut child = Command::new(env!("CARGO_BIN_EXE_kcp"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .expect("kcp runs");
    let mut pipe = child.stdin.take().unwrap();
    let _ = pipe.write_all(stdin);
    drop(pipe);
    child.wait_with_output().unwrap()
}

#[test]
fn a_closed_pipe_ends_every_command_quietly() {
    for (args, stdin) in every_command() {
        let out = with_closed_stdout(&args, &stdin);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), "", "{args:?}");
    }
}

#[test]
fn a_full_disk_is_exit_1_with_a_message_in_every_command() {
    if !std::path::Path::new("/dev/full").exists() {
        println!("SKIP: no /dev/full on this machine");
        return;
    }
    for (args, stdin) in every_command() {
        let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_kcp"))
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(full)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut pipe = child.stdin.take().unwrap();
        let _ = pipe.write_all(&stdin);
        drop(pipe);
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("kcp: cannot write the output: No space left on device"), "{args:?}");
    }
}

#[test]
fn inputs_over_the_size_limit_are_refused_while_reading() {
    if std::path::Path::new("/dev/zero").exists() {
        let out = kcp(&["decode", "--file", "/dev/zero"], None);
        assert_eq!(out.status.code(), Some(1));
        let message = json_of(&out)["error"]["message"].as_str().unwrap().to_owned();
        assert!(message.contains("input limit of 64 MiB"), "{message}");
        for args in [&["assign", "--strategy", "range", "/dev/zero"][..], &["simulate", "/dev/zero"]] {
            let out = kcp(args, None);
            assert_eq!(out.status.code(), Some(1), "{args:?}");
            assert!(stdout(&out).contains("input limit of 64 MiB"), "{args:?}: {}", stdout(&out));
        }
    }
    let big = vec![b' '; (64 << 20) + 1];
    let out = kcp(&["encode", "--kind", "assignment", "--version", "0", "-"], Some(&big));
    assert_eq!(out.status.code(), Some(1));
    assert!(json_of(&out)["error"]["message"].as_str().unwrap().starts_with("stdin is larger than the input limit"));
}

#[test]
fn stdin_hex_with_a_typo_is_an_error_that_says_it_was_read_as_hex() {
    let out = kcp(&["decode", "-"], Some(b"0003 0000 00zz\n"));
    assert_eq!(out.status.code(), Some(1));
    let error = &json_of(&out)["error"];
    assert_eq!(error["kind"], "invalid_input");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("read as hex") && message.contains("\"zz\" at digit"), "{message}");
    // Raw bytes (a payload starts with its version's 0x00) are still read raw.
    let raw = common::hex(SUB_V3);
    assert_eq!(json_of(&kcp(&["decode", "-"], Some(&raw)))["rack_id"], "r1");
}

#[test]
fn empty_input_is_reported_as_empty() {
    for (args, stdin) in [(&["decode", "-"][..], &b""[..]), (&["decode", ""], b""), (&["compat", "-"], b"")] {
        let out = kcp(args, Some(stdin));
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let error = &json_of(&out)["error"];
        assert_eq!(error["kind"], "invalid_input", "{args:?}");
        assert!(error["message"].as_str().unwrap().starts_with("the payload is empty"), "{error}");
    }
}

#[test]
fn kind_auto_says_why_it_fell_back_to_an_assignment() {
    // A v1 assignment: as a subscription it does not decode.
    let asg = "0001 00000001 0003666f6f 00000002 00000000 00000002 ffffffff";
    let out = json_of(&kcp(&["decode", asg], None));
    assert_eq!(out["kind"], "assignment");
    let warning = out["warnings"][0].as_str().unwrap();
    assert!(warning.starts_with("--kind auto: read as an assignment, since as a subscription it"), "{warning}");
}

#[test]
fn strict_with_lenient_and_compat_reader_version_are_usage_errors() {
    let out = kcp(&["decode", "--strict", "--lenient", SUB_V3], None);
    assert_eq!(out.status.code(), Some(2));
    let out = kcp(&["compat", "--reader-version", "1", SUB_V3], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--reader-version is for `kcp decode`"), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
}

/// Runs with `stdin` and expects a usage error (exit 2) whose message contains `want`.
fn usage_error(args: &[&str], stdin: &str, want: &str) {
    let out = kcp(args, Some(stdin.as_bytes()));
    assert_eq!(out.status.code(), Some(2), "{args:?} {stdin}: {}{}", stdout(&out), stderr(&out));
    assert!(stderr(&out).contains(want), "{args:?} {stdin}: {}", stderr(&out));
    assert!(out.stdout.is_empty(), "{}", stdout(&out));
}

#[test]
fn wrong_shapes_are_usage_errors_naming_the_key() {
    let sub = &["encode", "--kind", "subscription", "--version", "3", "-"][..];
    usage_error(sub, "null", "expected a subscription object");
    usage_error(sub, "[1,2,3]", "expected a subscription object");
    usage_error(sub, r#"{"foo": 1}"#, "unknown field `foo`");
    usage_error(sub, r#"{"topcs": ["a"]}"#, "unknown field `topcs`");
    usage_error(sub, r#"{"topics": "a"}"#, "invalid type: string \"a\", expected a sequence");
    // A decoded assignment fed as a subscription.
    let decoded = kcp(&["decode", "--kind", "assignment", "0000 00000001 0001 74 00000001 00000000 ffffffff"], None);
    usage_error(sub, &stdout(&decoded), "\"kind\" is \"assignment\", not \"subscription\"");
    let assign = &["assign", "--strategy", "range", "-"][..];
    usage_error(assign, "null", "expected a group object");
    usage_error(assign, r#"{"topics": {}, "members": [], "extra": 1}"#, "unknown field `extra`");
    let both = json!({"topics": {"t": 1}, "members": [{"member_id": "a", "subscription": "0000000000000000", "topics": ["t"]}]});
    usage_error(assign, &both.to_string(), "members[0]: both \"subscription\" and \"topics\" given");
    let typo = json!({"topics": {"t": 1}, "members": [{"member_id": "a", "topic": ["t"]}]});
    usage_error(assign, &typo.to_string(), "unknown field `topic`");
    let simulate = &["simulate", "-"][..];
    usage_error(simulate, "null", "expected a scenario object");
    usage_error(simulate, "[1,2,3]", "expected a scenario object");
    usage_error(simulate, r#"{"foo": 1}"#, "unknown field `foo`");
    usage_error(
        simulate,
        r#"{"steps": [{"join": {"id": "a", "assignors": ["range"], "topics": []}, "leave": "a"}]}"#,
        "one step per object, found \"join\" and \"leave\"",
    );
    usage_error(simulate, r#"{"config": {"session_timeout": 5}}"#, "unknown field `session_timeout`");
}

#[test]
fn numbers_in_messages_are_never_in_exponent_form() {
    let out = kcp(&["assign", "--strategy", "range", "-"], Some(br#"{"topics": {"t": 1e23}, "members": []}"#));
    assert_eq!(out.status.code(), Some(2));
    assert!(!stderr(&out).contains("e+"), "{}", stderr(&out));
    let out = kcp(
        &["encode", "--kind", "assignment", "--version", "0", "-"],
        Some(br#"{"assigned_partitions": [{"topic": "t", "partitions": [1e23]}]}"#),
    );
    assert!(!stderr(&out).contains("e+"), "{}", stderr(&out));
}

#[test]
fn partition_counts_over_the_limits_are_refused_before_any_allocation() {
    // Run under an address-space cap: an allocation sized by 2^31 - 1 partitions aborts instead.
    let capped = |args: &[&str], stdin: &str| -> Output {
        let mut child = Command::new("bash")
            .arg("-c")
            .arg("ulimit -v 1048576 && exec \"$0\" \"$@\"")
            .arg(env!("CARGO_BIN_EXE_kcp"))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
        child.wait_with_output().unwrap()
    };
    let group = r#"{"topics": {"t": 2147483647}, "members": [{"member_id": "a", "topics": ["t"]}]}"#;
    let out = capped(&["assign", "--strategy", "cooperative-sticky", "-"], group);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stdout(&out).contains("more than 1000000 partitions, the limit of kcp assign"), "{}", stdout(&out));
    let member = r#"{"id": "a", "assignors": ["range"], "topics": ["t"]}"#;
    for scenario in [
        format!(r#"{{"topics": {{"t": 2147483647}}, "members": [{member}]}}"#),
        format!(
            r#"{{"topics": {{"t": 1}}, "members": [{member}], "steps": [{{"add_partitions": {{"topic": "t", "count": 2147483647}}}}]}}"#
        ),
        format!(
            r#"{{"members": [{member}], "steps": [{{"create_topic": {{"name": "t", "partitions": 2147483647}}}}]}}"#
        ),
    ] {
        let out = capped(&["simulate", "-"], &scenario);
        assert_eq!(out.status.code(), Some(1), "{scenario}: {}", stderr(&out));
        assert!(stdout(&out).contains("more than 100000 partitions in all, the simulator's limit"), "{}", stdout(&out));
    }
}

#[test]
fn simulated_time_and_steps_have_named_limits() {
    let member = r#"{"id": "a", "assignors": ["range"], "topics": ["t"]}"#;
    let wait = format!(r#"{{"topics": {{"t": 1}}, "members": [{member}], "steps": [{{"wait": 1000000000000}}]}}"#);
    let out = kcp(&["simulate", "-"], Some(wait.as_bytes()));
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("steps[0].wait: 1000000000000 ms is longer than the limit of 86400000 ms"));
    let near_max = format!(
        r#"{{"topics": {{"t": 1}}, "members": [{member}], "steps": [{{"wait": 9223372036854775000}}, {{"wait": 9223372036854775000}}]}}"#
    );
    let out = kcp(&["simulate", "-"], Some(near_max.as_bytes()));
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("longer than the limit"));
    let many: Vec<String> = (0..10_001).map(|_| r#"{"settle": {}}"#.to_owned()).collect();
    let steps = format!(r#"{{"steps": [{}]}}"#, many.join(","));
    let out = kcp(&["simulate", "-"], Some(steps.as_bytes()));
    assert!(stdout(&out).contains("10001 steps, more than the limit of 10000"), "{}", stdout(&out));
    // The event budget ends a run that would go on for hours, and says so.
    let busy = format!(
        r#"{{"topics": {{"t": 1}}, "members": [{member}], "config": {{"heartbeat_interval_ms": 1, "max_events": 20000}},
            "steps": [{{"wait": 86400000}}]}}"#
    );
    let out = kcp(&["simulate", "-"], Some(busy.as_bytes()));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let v = json_of(&out);
    let reasons = v["summary"]["unconverged"].to_string();
    assert!(reasons.contains("stopped after 20000 events, the limit (config.max_events"), "{reasons}");
    assert!(stderr(&out).contains("config.max_events"));
}

#[test]
fn a_simulation_that_fails_midway_still_prints_one_json_object() {
    let out = kcp(&["simulate", "-"], Some(br#"{"topics": {"t": 2}, "members": [{"id": "a", "assignors": ["range"], "topics": ["t"]}], "steps": [{"crash": "ghost"}]}"#));
    assert_eq!(out.status.code(), Some(1));
    let v = json_of(&out);
    assert!(!v["timeline"].as_array().unwrap().is_empty());
    assert_eq!(v["error"]["kind"], "invalid_input");
    assert!(v["error"]["message"].as_str().unwrap().contains("ghost"));
}

#[test]
fn the_streamed_timeline_is_the_documented_document() {
    let out = kcp(&["simulate", "--example"], None);
    let scenario =
        kafka_consumer_protocol::sim::json::parse_scenario(include_str!("../testdata/scenarios/rolling-upgrade.json"))
            .unwrap();
    let whole =
        kafka_consumer_protocol::sim::json::outcome_json(&kafka_consumer_protocol::sim::run(&scenario).unwrap());
    assert_eq!(stdout(&out), serde_json::to_string_pretty(&whole).unwrap() + "\n");
}

/// A rack id, topic, member or group id that would clear the screen and forge a line.
const EVIL: &str = "r1\x1b[2J\nkcp: all good\u{202e}";

#[test]
fn text_output_escapes_control_characters_from_the_input() {
    let sub = json!({"topics": [EVIL], "owned_partitions": [{"topic": EVIL, "partitions": [0]}], "generation_id": 1, "rack_id": EVIL});
    let hex =
        stdout(&kcp(&["encode", "--kind", "subscription", "--version", "3", "-"], Some(sub.to_string().as_bytes())));
    for args in [&["decode", "--format", "text", hex.trim()][..], &["compat", "--format", "text", hex.trim()]] {
        let out = kcp(args, None);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let text = stdout(&out);
        assert!(!text.contains('\x1b') && !text.contains('\u{202e}') && !text.contains("\nkcp: all good"), "{text}");
    }
    let text = stdout(&kcp(&["decode", "--format", "text", hex.trim()], None));
    assert!(text.contains("rack_id           r1\\u{1b}[2J\\nkcp: all good\\u{202e}"), "{text}");
    // And in the capture story: a JoinGroup whose group id carries the same.
    let capture = temp("evil.pcap", &capture_of(&[join_v0(1, EVIL, &[])], &[]));
    let out = kcp(&["pcap", capture.to_str().unwrap(), "--format", "text"], None);
    let text = stdout(&out);
    assert!(text.starts_with("group r1\\u{1b}[2J\\nkcp: all good"), "{text}");
    assert!(!text.contains('\x1b'), "{text}");
}

#[test]
fn a_group_filter_that_matches_nothing_says_so() {
    let capture = manifest("testdata/pcap/java-cooperative-sticky.pcap");
    let out = kcp(&["pcap", &capture, "--group", "no-such-group"], None);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    let err = stderr(&out);
    assert!(
        err.contains("kcp: no message of group \"no-such-group\" in the capture (48 group messages of other groups)"),
        "{err}"
    );
    assert!(err.lines().last().unwrap().starts_with("{\"summary\""), "the summary stays the last line");
}

#[test]
fn cooperative_sticky_never_hands_a_partition_from_a_member_to_itself() {
    let owned = json!([{"topic": "t", "partitions": [0, 1, 2, 3]}]);
    for members in [2, 3] {
        let group = json!({"topics": {"t": 4}, "members": (0..members).map(|i| {
            let mut m = json!({"member_id": format!("m{i}"), "topics": ["t"], "generation_id": 3});
            if i < 2 { m["owned_partitions"] = owned.clone(); }
            m
        }).collect::<Vec<_>>()});
        let out =
            json_of(&kcp(&["assign", "--strategy", "cooperative-sticky", "-"], Some(group.to_string().as_bytes())));
        let pending = out["pending"].as_array().unwrap();
        assert!(!pending.is_empty());
        for p in pending {
            assert_ne!(p["from"], p["to"], "{p}");
        }
        // Both claimers are named: each must revoke what goes to someone else.
        for claimer in ["m0", "m1"] {
            assert!(pending.iter().any(|p| p["from"] == claimer), "{claimer} never named: {pending:?}");
        }
        let pairs: Vec<(i64, &str)> =
            pending.iter().map(|p| (p["partition"].as_i64().unwrap(), p["from"].as_str().unwrap())).collect();
        if members == 3 {
            // A partition going to m2 is withheld from both claimers.
            let to_m2: Vec<_> = pending.iter().filter(|p| p["to"] == "m2").collect();
            assert!(to_m2.len() >= 2 && to_m2.len() % 2 == 0, "{pairs:?}");
        }
    }
}

// ---- captures -------------------------------------------------------------------------------

/// A classic pcap (Ethernet, microseconds) of one TCP connection 10.0.0.1:40000 ->
/// 10.0.0.2:9092 from its SYNs: the client's frames, then the broker's, in segments of up to
/// 60,000 bytes.
fn capture_of(client: &[Vec<u8>], server: &[Vec<u8>]) -> Vec<u8> {
    let mut out = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    out.extend_from_slice(&65535u32.to_le_bytes());
    out.extend_from_slice(&1u32.to_le_bytes());
    let mut packet = |from_client: bool, seq: u32, syn: bool, payload: &[u8]| {
        let (client, broker) = (([10u8, 0, 0, 1], 40000u16), ([10u8, 0, 0, 2], 9092u16));
        let (src, dst) = if from_client { (client, broker) } else { (broker, client) };
        let mut tcp = Vec::new();
        tcp.extend_from_slice(&src.1.to_be_bytes());
        tcp.extend_from_slice(&dst.1.to_be_bytes());
        tcp.extend_from_slice(&seq.to_be_bytes());
        tcp.extend_from_slice(&[0, 0, 0, 0, 0x50, if syn { 0x02 } else { 0x18 }, 0xff, 0xff, 0, 0, 0, 0]);
        tcp.extend_from_slice(payload);
        let mut frame = vec![0u8; 12];
        frame.extend_from_slice(&[0x08, 0x00, 0x45, 0]);
        frame.extend_from_slice(&((20 + tcp.len()) as u16).to_be_bytes());
        frame.extend_from_slice(&[0, 0, 0x40, 0, 64, 6, 0, 0]);
        frame.extend_from_slice(&src.0);
        frame.extend_from_slice(&dst.0);
        frame.extend_from_slice(&tcp);
        out.extend_from_slice(&1_700_000_000u32.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        out.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        out.extend_from_slice(&frame);
    };
    let (mut cseq, mut sseq) = (1000u32, 5000u32);
    packet(true, cseq - 1, true, &[]);
    packet(false, sseq - 1, true, &[]);
    for f in client {
        for chunk in f.chunks(60_000) {
            packet(true, cseq, false, chunk);
            cseq = cseq.wrapping_add(chunk.len() as u32);
        }
    }
    for f in server {
        for chunk in f.chunks(60_000) {
            packet(false, sseq, false, chunk);
            sseq = sseq.wrapping_add(chunk.len() as u32);
        }
    }
    out
}

fn string16(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as i16).to_be_bytes());
    out.extend_from_slice(s.as_bytes());
}

fn framed(body: Vec<u8>) -> Vec<u8> {
    let mut frame = (body.len() as i32).to_be_bytes().to_vec();
    frame.extend_from_slice(&body);
    frame
}

/// A JoinGroup v0 request of group `group` with one `consumer` protocol.
fn join_v0(correlation: i32, group: &str, metadata: &[u8]) -> Vec<u8> {
    let mut body = vec![0, 11, 0, 0];
    body.extend_from_slice(&correlation.to_be_bytes());
    string16(&mut body, "kcp-test");
    string16(&mut body, group);
    body.extend_from_slice(&30_000i32.to_be_bytes());
    string16(&mut body, "");
    string16(&mut body, "consumer");
    body.extend_from_slice(&1i32.to_be_bytes());
    string16(&mut body, "range");
    body.extend_from_slice(&(metadata.len() as i32).to_be_bytes());
    body.extend_from_slice(metadata);
    framed(body)
}

/// The leader's JoinGroup v0 response with `members` members, each with the v0 subscription
/// of no topics (10 bytes) as metadata.
fn join_response_v0(correlation: i32, members: usize) -> Vec<u8> {
    let metadata = [0u8, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff];
    let mut body = correlation.to_be_bytes().to_vec();
    body.extend_from_slice(&[0, 0, 0, 0, 0, 1]);
    string16(&mut body, "range");
    string16(&mut body, "");
    string16(&mut body, "");
    body.extend_from_slice(&(members as i32).to_be_bytes());
    for _ in 0..members {
        string16(&mut body, "");
        body.extend_from_slice(&(metadata.len() as i32).to_be_bytes());
        body.extend_from_slice(&metadata);
    }
    framed(body)
}

#[test]
fn a_join_response_with_many_members_streams_within_a_memory_cap() {
    // 250,000 members, each with a subscription as metadata (4 MB of JoinGroup response): held
    // as one JSON document this took over a gigabyte (a million members, 16 MB: over 5 GB);
    // written member by member it stays far below the 512 MiB address-space cap.
    let members = 250_000;
    let capture = temp("many.pcap", &capture_of(&[join_v0(7, "g", &[])], &[join_response_v0(7, members)]));
    let output = temp("many.jsonl", b"");
    let run = Command::new("bash")
        .arg("-c")
        .arg("ulimit -v 524288 && exec \"$0\" pcap \"$1\" > \"$2\"")
        .arg(env!("CARGO_BIN_EXE_kcp"))
        .arg(&capture)
        .arg(&output)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let text = std::fs::read_to_string(&output).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2);
    assert!(lines[0].contains("\"direction\":\"request\""));
    assert!(lines[1].contains("\"direction\":\"response\""));
    assert_eq!(
        lines[1]
            .matches("{\"member_id\":\"\",\"group_instance_id\":null,\"metadata\":{\"kind\":\"subscription\"")
            .count(),
        members
    );
    assert!(lines[1].ends_with("}]}"));
    std::fs::remove_file(output).ok();
    std::fs::remove_file(capture).ok();
}

#[test]
fn a_simulation_streams_its_timeline_within_a_memory_cap() {
    // 300 members joining a 600-partition topic: 12 MB of timeline, every entry with every
    // member's ownership. Kept whole (and then as one JSON document) it needed several times
    // the 64 MiB address-space cap; streamed it needs the group's state only.
    let members: Vec<Value> = (0..300)
        .map(|i| json!({"id": format!("m{i:03}"), "assignors": ["cooperative-sticky"], "topics": ["t"]}))
        .collect();
    let scenario =
        temp("300.json", json!({"seed": 1, "topics": {"t": 600}, "members": members}).to_string().as_bytes());
    let out = Command::new("bash")
        .arg("-c")
        .arg("ulimit -v 65536 && exec \"$0\" simulate \"$1\"")
        .arg(env!("CARGO_BIN_EXE_kcp"))
        .arg(&scenario)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json_of(&out);
    assert_eq!(v["summary"]["converged"], true);
    let last = v["timeline"].as_array().unwrap().last().unwrap();
    assert_eq!(last["owned"].as_object().unwrap().len(), 300);
}

#[test]
fn group_setting_and_argument_errors_are_a_message_and_exit_2_in_every_subcommand() {
    // None of these reaches the network: the configuration is refused first. `join` reported
    // them through its own copy of the error handling (with a catch-all that exited 1 without a
    // word); every subcommand now shares one, and says the same thing for the same mistake.
    let jks =
        temp("jceks.properties", b"bootstrap.servers=127.0.0.1:1\nsecurity.protocol=SSL\nssl.truststore.type=JCEKS\n");
    let jks = jks.to_str().unwrap();
    let bad_server = "no\u{1b}[2Jport";
    let subcommands: [&[&str]; 7] = [
        &["list"],
        &["describe", "--group", "g"],
        &["watch", "--group", "g"],
        &["join", "--group", "g", "--topics", "t"],
        &["reset-offsets", "--group", "g", "--topic", "t", "--to-earliest"],
        &["delete-offsets", "--group", "g", "--topic", "t"],
        &["delete", "--group", "g"],
    ];
    let cases: [(&[&str], &str); 3] = [
        (&[], "kcp: no brokers to connect to: pass --bootstrap-server HOST:PORT or set bootstrap.servers in --command-config"),
        (
            &["--command-config", jks],
            "kcp: ssl.truststore.type: JCEKS stores are not supported (kcp reads JKS, PKCS12 and PEM): convert it \
             to PKCS12 (keytool -importkeystore -srckeystore FILE -destkeystore FILE.p12 -deststoretype PKCS12) or \
             to PEM (keytool -exportcert -rfc; openssl pkcs12 -nodes)",
        ),
        (&["--bootstrap-server", bad_server], "kcp: bootstrap.servers: 'no\\u{1b}[2Jport' is not HOST:PORT: no port"),
    ];
    for subcommand in subcommands {
        for (options, message) in cases {
            let mut args = vec!["group"];
            args.extend(subcommand);
            args.extend(options);
            let out = kcp(&args, None);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
            assert!(out.stdout.is_empty(), "{args:?}: {}", stdout(&out));
            assert_eq!(stderr(&out), format!("{message}\n"), "{args:?}");
        }
    }
}

#[test]
fn group_join_commit_at_refuses_a_bad_position_and_execute_alone_before_the_network() {
    let base = ["group", "join", "--group", "g", "--topics", "t", "--bootstrap-server", "127.0.0.1:1"];
    for (extra, says) in [
        (&["--commit-at", "soon"][..], "--commit-at: 'end' or an offset of 0 or more, not 'soon'"),
        (&["--commit-at=-1"][..], "--commit-at: 'end' or an offset of 0 or more, not '-1'"),
        (&["--execute"][..], "--commit-at"),
    ] {
        let mut args = base.to_vec();
        args.extend(extra);
        let out = kcp(&args, None);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(out.stdout.is_empty(), "{args:?}: {}", stdout(&out));
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn write_action_usage_errors_exit_2_before_any_connection() {
    // Port 1 on loopback refuses connections: a usage error must be found before that matters.
    let base = ["group", "reset-offsets", "--bootstrap-server", "127.0.0.1:1", "--group", "g"];
    let cases: [&[&str]; 6] = [
        &["--topic", "t"],                                  // no --to-*
        &["--to-earliest"],                                 // no scope
        &["--topic", "t", "--all-topics", "--to-earliest"], // two scopes
        &["--topic", "t", "--to-earliest", "--to-latest"],  // two targets
        &["--topic", "t:x", "--to-earliest"],               // a partition that is no number
        &["--topic", "t", "--to-datetime", "yesterday"],    // not a time
    ];
    for extra in cases {
        let mut args = base.to_vec();
        args.extend(extra);
        let out = kcp(&args, None);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
    }
    let out =
        kcp(&["group", "delete", "--bootstrap-server", "127.0.0.1:1", "--group", "g", "--execute", "--dry-run"], None);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let out = kcp(&["group", "delete-offsets", "--bootstrap-server", "127.0.0.1:1", "--group", "g"], None);
    assert_eq!(out.status.code(), Some(2), "--topic is required: {}", stderr(&out));
}
