//! `kcp group upgrade-check` without a broker: its usage errors (exit 2) and a cluster that
//! cannot be reached (exit 1 with the contract's error object). The verdicts themselves are
//! tested in `src/inspect/upgrade/tests.rs` and against real brokers in `tests/live_upgrade.rs`.

use std::net::TcpListener;
use std::process::{Command, Output};

fn kcp(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kcp")).args(args).output().expect("kcp runs")
}

#[test]
fn a_group_or_all_groups_is_required() {
    let out = kcp(&["group", "upgrade-check", "--bootstrap-server", "127.0.0.1:9"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let both = kcp(&["group", "upgrade-check", "--bootstrap-server", "127.0.0.1:9", "--group", "g", "--all-groups"]);
    assert_eq!(both.status.code(), Some(2), "{both:?}");
}

#[test]
fn only_the_broker_assignors_can_be_simulated() {
    let out =
        kcp(&["group", "upgrade-check", "--bootstrap-server", "127.0.0.1:9", "--group", "g", "--assignor", "sticky"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("uniform"), "{out:?}");
}

#[test]
fn an_unreachable_cluster_is_an_error_object() {
    // A port that was free a moment ago: nothing listens there.
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let bootstrap = format!("127.0.0.1:{port}");
    let out =
        kcp(&["group", "upgrade-check", "--bootstrap-server", &bootstrap, "--group", "g", "--timeout-ms", "1500"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let value: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"));
    assert!(value["error"]["kind"] == "unreachable" || value["error"]["kind"] == "timeout", "{value}");
}
