//! `kcp group describe --all-groups` when the deadline passes mid-way, against a fake broker
//! that lists two groups and then never answers FindCoordinator: the output keeps the
//! contract's shape, an array with one `{"group_id", "error"}` entry per group (issue 26; it
//! used to end with a bare error object without `group_id`).

mod client_support;

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::Arc;

use client_support::*;
use kafka_protocol::messages::list_groups_response::ListedGroup;
use kafka_protocol::messages::metadata_response::MetadataResponseBroker;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use serde_json::Value;

fn s(text: &str) -> StrBytes {
    StrBytes::from_string(text.to_string())
}

#[test]
fn all_groups_keeps_its_shape_when_the_deadline_passes() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let port = Arc::new(AtomicU16::new(0));
    let own_port = port.clone();
    let broker = runtime.block_on(start(move |request| {
        let v = request.version;
        match request.api_key {
            18 => api_versions(request, all_api_versions()),
            3 => body(
                &MetadataResponse::default().with_brokers(vec![MetadataResponseBroker::default()
                    .with_node_id(1.into())
                    .with_host(s("127.0.0.1"))
                    .with_port(i32::from(own_port.load(Ordering::SeqCst)))]),
                v,
            ),
            16 => {
                let group = |id: &str| {
                    let mut g = ListedGroup::default().with_group_id(GroupId(s(id))).with_protocol_type(s("consumer"));
                    if v >= 4 {
                        g.group_state = s("Stable");
                    }
                    if v >= 5 {
                        g.group_type = s("classic");
                    }
                    g
                };
                body(&ListGroupsResponse::default().with_groups(vec![group("b-group"), group("a-group")]), v)
            }
            // The coordinators are never found: the deadline passes while the groups are described.
            _ => Reply::Silent,
        }
    }));
    port.store(broker.port, Ordering::SeqCst);
    let out = Command::new(env!("CARGO_BIN_EXE_kcp"))
        .args(["group", "describe", "--all-groups", "--bootstrap-server", &broker.address(), "--timeout-ms", "1500"])
        .stdin(Stdio::null())
        .output()
        .expect("kcp runs");
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)));
    let entries = v.as_array().unwrap_or_else(|| panic!("not an array: {v}"));
    let ids: Vec<&str> = entries.iter().map(|e| e["group_id"].as_str().unwrap_or("(none)")).collect();
    assert_eq!(ids, ["a-group", "b-group"], "{v}");
    for e in entries {
        assert_eq!(e["error"]["kind"], "timeout", "{e}");
        assert_eq!(e.as_object().unwrap().len(), 2, "only group_id and error: {e}");
    }
    drop(broker);
    runtime.shutdown_background();
}
