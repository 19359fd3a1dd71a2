//! Runs `kcp pcap` on the committed captures: one JSON object per line on stdout, the summary as
//! the last stderr line, `--group`, `--port`, `--format text` and the exit codes.
#![cfg(feature = "cli")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn kcp(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kcp")).args(args).output().expect("kcp runs")
}

fn capture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/pcap").join(name)
}

fn expect(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(capture(&format!("{name}.expect.json"))).unwrap()).unwrap()
}

fn lines(out: &Output) -> Vec<Value> {
    String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not one JSON object per line ({e}): {l}")))
        .collect()
}

fn summary(out: &Output) -> Value {
    let stderr = String::from_utf8(out.stderr.clone()).unwrap();
    let last = stderr.lines().last().expect("a summary line");
    serde_json::from_str::<Value>(last).unwrap()["summary"].clone()
}

#[test]
fn json_lines_follow_the_contract() {
    for name in ["java-cooperative-sticky", "rdkafka-range", "rdkafka-cooperative-sticky", "mixed-java-rdkafka"] {
        let path = capture(&format!("{name}.pcap"));
        let out = kcp(&["pcap", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{name}");
        let lines = lines(&out);
        assert!(!lines.is_empty());
        for l in &lines {
            for key in
                ["ts", "src", "dst", "api", "direction", "api_version", "correlation_id", "client_id", "group_id"]
            {
                assert!(l.get(key).is_some(), "{name}: {key} missing in {l}");
            }
            let ts = l["ts"].as_str().unwrap();
            assert!(ts.starts_with("20") && ts.ends_with('Z') && ts.len() == 27, "{ts}");
            match (l["api"].as_str().unwrap(), l["direction"].as_str().unwrap()) {
                ("JoinGroup", "request") => assert!(l["protocols"].is_array() && l["generation_id"] == -1),
                ("JoinGroup", "response") => assert!(l["members"].is_array() && l["generation_id"].is_i64()),
                ("SyncGroup", "request") => assert!(l["assignments"].is_array()),
                ("SyncGroup", "response") => assert!(l.get("assignment").is_some()),
                other => panic!("{other:?}"),
            }
        }
        let s = summary(&out);
        assert_eq!(s["messages"].as_u64().unwrap() as usize, lines.len());
        assert_eq!(s["undecodable_group_frames"], 0);
        // Every member's SyncGroup assignment in every generation, as decoded JSON.
        let want = expect(name);
        for gen in want["groups"][0]["generations"].as_array().unwrap() {
            for member in gen["members"].as_array().unwrap() {
                let got = lines
                    .iter()
                    .find(|l| {
                        l["api"] == "SyncGroup"
                            && l["direction"] == "response"
                            && l["member_id"] == member["member_id"]
                            && l["generation_id"] == gen["generation_id"]
                            && l["error_code"] == 0
                    })
                    .unwrap_or_else(|| panic!("{name}: no SyncGroup response for {}", member["member_id"]));
                let a = &got["assignment"];
                assert_eq!(a["kind"], "assignment");
                assert_eq!(a["assigned_partitions"], member["assignment"]["assigned_partitions"]);
                assert_eq!(a["version"], member["assignment"]["version"]);
                assert_eq!(a["user_data"], member["assignment"]["user_data"]);
            }
        }
    }
}

#[test]
fn group_and_port_filters() {
    let path = capture("mixed-java-rdkafka.pcap");
    let path = path.to_str().unwrap();
    let group = expect("mixed-java-rdkafka")["groups"][0]["group_id"].as_str().unwrap().to_owned();
    let all = lines(&kcp(&["pcap", path]));
    let only = lines(&kcp(&["pcap", path, "--group", &group]));
    assert_eq!(all.len(), only.len());
    assert!(lines(&kcp(&["pcap", path, "--group", "no-such-group"])).is_empty());
    assert_eq!(lines(&kcp(&["pcap", path, "--port", "9092"])).len(), all.len());
    let out = kcp(&["pcap", path, "--port", "1", "--port", "2"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(lines(&out).is_empty());
    assert_eq!(summary(&out)["kafka_connections"], 0);
}

#[test]
fn text_tells_the_story_by_generation() {
    let name = "rdkafka-cooperative-sticky";
    let out = kcp(&["pcap", "--format", "text", capture(&format!("{name}.pcap")).to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    let want = expect(name);
    let group = &want["groups"][0];
    assert!(text.starts_with(&format!("group {}\n", group["group_id"].as_str().unwrap())), "{text}");
    for gen in group["generations"].as_array().unwrap() {
        let line = format!(
            "  generation {}: protocol {}, leader {} (client {}), {} members",
            gen["generation_id"],
            gen["protocol"].as_str().unwrap(),
            gen["leader"].as_str().unwrap(),
            gen["leader_client_id"].as_str().unwrap(),
            gen["member_count"]
        );
        assert!(text.contains(&line), "missing {line:?} in\n{text}");
    }
    assert!(text.contains("MEMBER_ID_REQUIRED"));
    assert!(summary(&out).is_object());
}

#[test]
fn errors_and_usage() {
    let out = kcp(&["pcap", "/nonexistent/capture.pcap"]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["error"]["kind"], "invalid_input");
    let dir = std::env::temp_dir().join(format!("kcp-pcap-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let junk = dir.join("junk.pcap");
    std::fs::write(&junk, b"this is not a capture").unwrap();
    let out = kcp(&["pcap", junk.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["error"]["message"].as_str().unwrap().contains("not a pcap"));
    // A truncated capture: what came before is printed, exit 0, the summary says so.
    let full = std::fs::read(capture("rdkafka-range.pcap")).unwrap();
    let cut = dir.join("cut.pcap");
    std::fs::write(&cut, &full[..full.len() / 2 + 3]).unwrap();
    let out = kcp(&["pcap", cut.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    assert!(!lines(&out).is_empty());
    assert_eq!(summary(&out)["truncated_capture"], true);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(kcp(&["pcap"]).status.code(), Some(2));
    assert_eq!(kcp(&["pcap", "x.pcap", "--format", "yaml"]).status.code(), Some(2));
}

#[test]
fn contract_checker_passes_with_a_capture() {
    // ../shared beside the checkout (as .ci/run has it), or KCP_CONTRACT_CHECKER.
    let checker = std::env::var_os("KCP_CONTRACT_CHECKER")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/tools/check-cli-contract"));
    if !checker.exists() {
        eprintln!("{} not found; skipped", checker.display());
        return;
    }
    let out = Command::new("python3")
        .arg(&checker)
        .arg(env!("CARGO_BIN_EXE_kcp"))
        .arg(capture("java-cooperative-sticky.pcap"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(!stdout.contains("FAIL"), "{stdout}");
}

use kcp_testkit::pcap_checks;

/// A JoinGroup v0 request frame with one protocol.
fn join_v0(correlation: i32, protocol_type: &str, metadata: &[u8]) -> Vec<u8> {
    let mut body = vec![0, 11, 0, 0];
    body.extend_from_slice(&correlation.to_be_bytes());
    body.extend_from_slice(&[0, 1, b'c', 0, 1, b'g', 0, 0, 0x75, 0x30, 0, 0]);
    body.extend_from_slice(&(protocol_type.len() as i16).to_be_bytes());
    body.extend_from_slice(protocol_type.as_bytes());
    body.extend_from_slice(&[0, 0, 0, 1, 0, 1, b'p']);
    body.extend_from_slice(&(metadata.len() as i32).to_be_bytes());
    body.extend_from_slice(metadata);
    let mut frame = (body.len() as i32).to_be_bytes().to_vec();
    frame.extend_from_slice(&body);
    frame
}

#[test]
fn other_protocol_types_are_hex_and_refused_payloads_show_their_error() {
    let connect = b"\x00\x01connect-worker-metadata";
    let mut records = vec![0x02, 0, 7, 0]; // client SYN
    for frame in [join_v0(1, "connect", connect), join_v0(2, "consumer", &[0, 3, 0, 0, 0, 1, 0])] {
        records.extend_from_slice(&[0, 0, 8, frame.len() as u8]);
        records.extend_from_slice(&frame);
    }
    let dir = std::env::temp_dir().join(format!("kcp-pcap-types-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("types.pcap");
    std::fs::write(&path, pcap_checks::synthetic_pcap(&records)).unwrap();
    let out = kcp(&["pcap", path.to_str().unwrap()]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(out.status.code(), Some(0));
    let lines = lines(&out);
    assert_eq!(lines.len(), 2, "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(lines[0]["protocol_type"], "connect");
    let hex: String = connect.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(lines[0]["protocols"][0]["metadata"], serde_json::json!({ "hex": hex }));
    let refused = &lines[1]["protocols"][0]["metadata"];
    assert_eq!(refused["error"]["kind"], "truncated");
    assert_eq!(refused["hex"], "00030000000100");
    assert_eq!(summary(&out)["payload_errors"], 1);
}
