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
