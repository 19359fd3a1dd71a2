//! `kcp simulate` end to end: file and stdin input, `--svg`, `--example`, exit codes.

mod common;

fn kcp(args: &[&str], stdin: Option<&str>) -> (i32, serde_json::Value, String) {
    let out = common::run_kcp(args, stdin.map(str::as_bytes));
    let json = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (out.status.code().unwrap(), json, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn simulate_a_file_and_draw_it() {
    let dir = std::env::temp_dir().join(format!("kcp-sim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let svg = dir.join("out.svg");
    let file = format!("{}/testdata/scenarios/scale-out.json", env!("CARGO_MANIFEST_DIR"));
    let (code, v, err) = kcp(&["simulate", &file, "--svg", svg.to_str().unwrap()], None);
    assert_eq!(code, 0, "{err}");
    assert_eq!(v["summary"]["converged"], true);
    assert_eq!(v["summary"]["partitions_moved"], 7);
    let last = v["timeline"].as_array().unwrap().last().unwrap();
    assert_eq!(last["owned"].as_object().unwrap().len(), 4);
    let picture = std::fs::read_to_string(&svg).unwrap();
    assert!(picture.starts_with("<svg") && picture.trim_end().ends_with("</svg>"));
    assert_eq!(picture.matches("orders-").count(), 12, "one lane label per partition");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn simulate_reads_stdin_and_runs_the_example() {
    let scenario =
        r#"{"seed": 3, "topics": {"t": 2}, "members": [{"id": "a", "assignors": ["roundrobin"], "topics": ["t"]}]}"#;
    let (code, v, _) = kcp(&["simulate"], Some(scenario));
    assert_eq!(code, 0);
    assert_eq!(
        v["timeline"].as_array().unwrap().last().unwrap()["owned"]["a"][0]["partitions"],
        serde_json::json!([0, 1])
    );
    let (code, v, _) = kcp(&["simulate", "--example"], None);
    assert_eq!(code, 0);
    assert_eq!(v["summary"]["converged"], true);
}

#[test]
fn bad_scenarios_exit_1_with_a_json_error() {
    let (code, v, _) = kcp(&["simulate", "-"], Some("{\"steps\": [{\"crash\": \"nobody\"}]}"));
    assert_eq!(code, 1);
    assert_eq!(v["error"]["kind"], "invalid_input");
    let (code, _, _) = kcp(&["simulate", "-"], Some("not json"));
    assert_eq!(code, 1);
    let (code, _, _) = kcp(&["simulate", "--no-such-flag"], None);
    assert_eq!(code, 2);
}

#[test]
fn simulate_a_rolling_upgrade_to_the_consumer_protocol() {
    let file = format!("{}/examples/upgrade-rolling.json", env!("CARGO_MANIFEST_DIR"));
    let (code, v, err) = kcp(&["simulate", &file], None);
    assert_eq!(code, 0, "{err}");
    let s = &v["summary"];
    assert_eq!(s["converged"], true);
    assert_eq!(s["violations"], serde_json::json!([]));
    assert_eq!(s["group_protocol"], "consumer");
    assert_eq!(s["conversions"].as_array().unwrap().len(), 1);
    let timeline = v["timeline"].as_array().unwrap();
    // Classic entries keep their shape; consumer-group entries add the reconciliation keys.
    assert!(timeline[0].get("group_protocol").is_none());
    let converted = timeline.iter().position(|e| e["event"] == "converted").unwrap();
    for e in &timeline[converted..] {
        assert_eq!(e["group_protocol"], "consumer");
        assert!(e["pending_revocation"].is_object() && e["awaiting"].is_object());
    }
    assert!(timeline.iter().any(|e| e["awaiting"].as_object().is_some_and(|m| !m.is_empty())));
    // A fault the consumer protocol's member does not model is refused with exit 1.
    let bad = r#"{"topics": {"t": 2}, "members": [{"id": "a", "assignors": [], "topics": ["t"], "protocol": "consumer"}],
                  "steps": [{"lose_responses": "a"}]}"#;
    let (code, v, err) = kcp(&["simulate"], Some(bad));
    assert_eq!(code, 1, "{err}");
    let message = v["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("not modelled for consumer-protocol member a"), "{v}");
    // An unknown protocol is a shape error, as an unknown key is (exit 2).
    let bad = r#"{"members": [{"id": "a", "assignors": [], "topics": ["t"], "protocol": "kip848"}]}"#;
    let (code, _, err) = kcp(&["simulate"], Some(bad));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("expected `classic` or `consumer`"), "{err}");
}

/// A scenario carries its broker's line (`config.broker_version`, written by `upgrade-check
/// --scenario` from the broker it read): a refusal names that line, not always 4.x; and a
/// conversion of one member says "1 member".
#[test]
fn the_broker_version_of_the_scenario_is_the_one_named() {
    let scenario = |version: &str, policy: &str| {
        format!(
            r#"{{"seed": 7, "topics": {{"orders": 2}},
               "members": [{{"id": "a", "assignors": ["cooperative-sticky"], "topics": ["orders"]}},
                           {{"id": "b", "assignors": ["cooperative-sticky"], "topics": ["orders"]}}],
               "config": {{"migration_policy": "{policy}", "broker_version": "{version}"}},
               "steps": [{{"upgrade": "a"}}]}}"#
        )
    };
    let (code, v, err) = kcp(&["simulate", "-"], Some(&scenario("3.x", "disabled")));
    assert_eq!(code, 0, "{err}");
    let conversions = v["summary"]["conversions"].to_string();
    assert!(conversions.contains("on a 3.x broker") && !conversions.contains("4.x"), "{conversions}");
    let (code, v, err) = kcp(&["simulate", "-"], Some(&scenario("4.x", "bidirectional")));
    assert_eq!(code, 0, "{err}");
    let conversions = v["summary"]["conversions"].to_string();
    assert!(conversions.contains(", 1 member) converted"), "{conversions}");
    let (code, v, err) = kcp(&["simulate", "-"], Some(&scenario("2.x", "disabled")));
    assert_eq!(code, 1, "{err}");
    assert!(v.to_string().contains("config.broker_version"), "{v}");
}
