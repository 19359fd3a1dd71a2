//! `kcp conform`: the report's shape and the exit statuses (0 no failure, 4 a failed rule, 1 not
//! a capture, 2 usage).
#![cfg(feature = "cli")]

use std::path::Path;
use std::process::Command;

fn kcp(args: &[&str]) -> (i32, serde_json::Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kcp"))
        .args(args)
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")))
        .output()
        .expect("kcp runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let json = serde_json::from_str(&stdout).unwrap_or(serde_json::Value::Null);
    (out.status.code().unwrap_or(-1), json, stdout)
}

#[test]
fn report_shape_and_exit_statuses() {
    let (code, report, _) = kcp(&["conform", "--pcap", "testdata/pcap/java-cooperative-sticky.pcap"]);
    assert_eq!(code, 0);
    let groups = report["groups"].as_array().expect("groups");
    assert_eq!(groups[0]["group_id"], "kcp-java-coop");
    let names: Vec<&str> = groups[0]["rules"].as_array().unwrap().iter().map(|r| r["rule"].as_str().unwrap()).collect();
    assert_eq!(names, ["protocol.names", "leader.assignment"]);
    let member = &groups[0]["members"][0];
    assert!(member["member_id"].is_string() && member["client_id"].is_string());
    let rules = member["rules"].as_array().unwrap();
    assert_eq!(rules.len(), 10);
    let revoke: Vec<&serde_json::Value> = groups[0]["members"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["rules"].as_array().unwrap())
        .filter(|r| r["rule"] == "cooperative.revoke" && r["result"] == "pass")
        .collect();
    assert!(!revoke.is_empty(), "{report}");
    // The capture's Metadata responses give the partition counts: completeness is judged.
    let leader = &groups[0]["rules"][1];
    assert_eq!(leader["result"], "pass", "{leader}");
    assert!(leader["evidence"].as_str().unwrap().contains("every subscribed partition given"), "{leader}");
    for r in rules {
        assert!(["pass", "unknown"].contains(&r["result"].as_str().unwrap()), "{r}");
        assert!(r["evidence"].is_string() && r["consequence"].is_string());
    }

    let (code, _, _) = kcp(&["conform", "--pcap", "testdata/pcap/rdkafka-cooperative-sticky.pcap"]);
    assert_eq!(code, 4);
    let (code, _, text) =
        kcp(&["conform", "--pcap", "testdata/pcap/rdkafka-cooperative-sticky.pcap", "--format", "text"]);
    assert_eq!(code, 4);
    assert!(text.contains("FAIL    userdata") && text.contains("consequence: "), "{text}");
    // --partitions wins over the capture: kcp-orders said to have 7 partitions, one is unassigned.
    let (code, report, _) =
        kcp(&["conform", "--pcap", "testdata/pcap/java-cooperative-sticky.pcap", "--partitions", "kcp-orders=7"]);
    assert_eq!(code, 4);
    let leader = &report["groups"][0]["rules"][1];
    assert!(leader["evidence"].as_str().unwrap().contains("kcp-orders-6, subscribed by"), "{leader}");
    let (code, _, _) = kcp(&["conform", "--pcap", "testdata/pcap/java-cooperative-sticky.pcap", "--partitions", "t"]);
    assert_eq!(code, 2);
    let (code, _, _) = kcp(&["conform", "--pcap", "README.md"]);
    assert_eq!(code, 1);
    let (code, _, _) = kcp(&["conform"]);
    assert_eq!(code, 2);
}
