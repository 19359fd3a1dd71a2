//! A consumer-group member in a hundred lines: joins a group with the crate's coordinator over
//! real connections, prints every rebalance callback, and leaves the group on Ctrl-C.
//!
//! ```sh
//! cargo run --example join_group --features client -- 127.0.0.1:9092 my-group orders,audit
//! ```
//!
//! Copy it into your client: the member runs in a tokio task of its own; your code only reacts to
//! the callbacks. A callback may take its time (commit offsets, drain a pipeline): the member
//! sends no further JoinGroup, SyncGroup or LeaveGroup until it returns, and keeps heartbeating
//! meanwhile. Each partition is reported assigned to this member before it may read it and
//! revoked (or lost) before another member may.

use std::time::Duration;

use kafka_consumer_protocol::assignor::builtin;
use kafka_consumer_protocol::client::member::{
    ClientTransport, MemberConfig, MemberDriver, MemberError, RebalanceListener,
};
use kafka_consumer_protocol::client::ClientConfig;
use kafka_consumer_protocol::TopicPartitions;

/// What this application does on each callback: print it.
struct Printer;

fn show(partitions: &[TopicPartitions]) -> String {
    let parts: Vec<String> = partitions.iter().map(|g| format!("{}{:?}", g.topic, g.partitions)).collect();
    if parts.is_empty() {
        "nothing".into()
    } else {
        parts.join(" ")
    }
}

impl RebalanceListener for Printer {
    async fn on_joined(&mut self, member_id: &str, generation_id: i32, assignor: &str, leader: bool) {
        let role = if leader { "leader" } else { "follower" };
        println!("joined generation {generation_id} as {member_id} ({role}, assignor {assignor})");
    }

    async fn on_partitions_assigned(&mut self, partitions: &[TopicPartitions]) {
        // Start reading these partitions here (seek to the committed offsets, spawn fetchers).
        println!("assigned: {}", show(partitions));
    }

    async fn on_partitions_revoked(&mut self, partitions: &[TopicPartitions]) {
        // Stop reading these and commit what was processed: another member takes them next.
        println!("revoked: {}", show(partitions));
    }

    async fn on_partitions_lost(&mut self, partitions: &[TopicPartitions]) {
        // Another member may already own these: stop at once, commit nothing.
        println!("lost: {}", show(partitions));
    }

    async fn on_error(&mut self, error: &MemberError) {
        // The member retries by itself (a broker restart, a moved coordinator).
        eprintln!("retrying after: {error}");
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(bootstrap), Some(group)) = (args.next(), args.next()) else {
        eprintln!("usage: join_group BOOTSTRAP GROUP [TOPIC,TOPIC...]");
        std::process::exit(2);
    };
    let topics: Vec<String> = args.next().unwrap_or_else(|| "orders".into()).split(',').map(String::from).collect();

    // Connections: PLAINTEXT here; ClientConfig::from_properties_file reads TLS and SASL settings.
    let transport = ClientTransport::new(ClientConfig::new([bootstrap.as_str()])?)?;

    // The member: Java's defaults, a shorter session so a crash is noticed in 10 s.
    let mut config = MemberConfig::new(group, topics);
    config.coordinator.session_timeout_ms = 10_000;
    config.coordinator.heartbeat_interval_ms = 3_000;
    config.startup_timeout = Some(Duration::from_secs(30));
    let assignors = vec![builtin("cooperative-sticky").expect("a built-in assignor")];
    let member = MemberDriver::start(transport, config, assignors)?;

    // Run the callbacks until Ctrl-C, then leave: revoke everything, send LeaveGroup, return.
    let shutdown = async {
        let _ = tokio::signal::ctrl_c().await;
        println!("leaving the group");
    };
    member.run(&mut Printer, shutdown).await?;
    println!("left");
    Ok(())
}
