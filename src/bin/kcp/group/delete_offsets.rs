//! `kcp group delete-offsets`: delete a group's committed offsets of some partitions, as
//! `kafka-consumer-groups.sh --delete-offsets` does (OffsetDelete), for a group without active
//! members. A dry run unless `--execute`.

use std::collections::BTreeMap;
use std::time::Duration;

use kafka_consumer_protocol::client::{Client, ClientError, Deadline, ErrorKind};
use serde_json::{json, Value};

use super::table::table;
use super::writes::{
    activity, dry_run_note, parse_topic_scope, refusal, report_refusal, resolve_scopes, Apply, TopicScope,
};
use super::ConnectionArgs;
use crate::out::{note, Out};
use crate::text::clean;
use crate::{CliError, Format};

/// `kcp group delete-offsets`.
#[derive(clap::Args, Debug)]
pub struct DeleteOffsetsArgs {
    #[command(flatten)]
    pub connection: ConnectionArgs,
    /// The group whose offsets to delete (it must have no active members).
    #[arg(long, value_name = "G")]
    pub group: String,
    /// A topic (every partition) or TOPIC:P,P,... (repeat for several).
    #[arg(long = "topic", value_name = "T[:P,...]", value_parser = parse_topic_scope, required = true)]
    pub(super) topics: Vec<TopicScope>,
    #[command(flatten)]
    pub apply: Apply,
    /// Output format: the JSON contract, or a table like Kafka's tool's.
    #[arg(long, value_enum, default_value = "json")]
    pub format: Format,
}

pub(super) async fn delete_offsets(
    client: &Client,
    args: &DeleteOffsetsArgs,
    timeout: Duration,
    out: &mut Out,
) -> Result<bool, CliError> {
    let deadline = Deadline::after(timeout);
    let group = args.group.as_str();
    let state = activity(client, group, deadline).await?;
    if let Some(refused) = refusal(group, &state, "delete offsets") {
        return Err(report_refusal(&refused, args.format, out));
    }
    if !state.exists() {
        return Err(CliError::Client(ClientError::new(
            ErrorKind::NotFound,
            format!("group '{group}' does not exist: neither a classic nor a consumer group has this id"),
        )));
    }
    let names: Vec<&str> = args.topics.iter().map(|s| s.topic.as_str()).collect();
    let metadata = client.metadata(Some(&names), deadline).await?;
    let partitions = resolve_scopes(&args.topics, &metadata)?;
    let committed = client
        .fetch_committed_offsets(&[group], deadline)
        .await?
        .pop()
        .unwrap_or_else(|| Err(ClientError::new(ErrorKind::Protocol, "OffsetFetch answered nothing")))?;
    let keys: Vec<(String, i32)> =
        partitions.iter().flat_map(|t| t.partitions.iter().map(|&p| (t.topic.clone(), p))).collect();

    let mut errors: BTreeMap<(String, i32), ClientError> = BTreeMap::new();
    let mut now: BTreeMap<(String, i32), Option<i64>> = BTreeMap::new();
    if args.apply.execute && !keys.is_empty() {
        for written in client.delete_committed_offsets(group, &partitions, deadline).await? {
            if let Err(e) = written.result {
                errors.insert((written.topic, written.partition), e);
            }
        }
        if let Some(Ok(reread)) = client.fetch_committed_offsets(&[group], deadline).await?.pop() {
            for (topic, partition) in &keys {
                now.insert((topic.clone(), *partition), reread.get(topic, *partition).and_then(|c| c.offset));
            }
        }
    }
    let rows: Vec<Value> = keys
        .iter()
        .map(|key| {
            let before = committed.get(&key.0, key.1).and_then(|c| c.offset);
            let after = if args.apply.execute { now.get(key).copied().flatten() } else { None };
            json!({
                "topic": key.0,
                "partition": key.1,
                "before": before,
                "after": after,
                "error": errors.get(key).map(|e| json!({"kind": e.kind().as_str(), "message": e.message()})),
            })
        })
        .collect();
    match args.format {
        Format::Json => out.json_pretty(&json!({
            "group_id": group,
            "action": "delete_offsets",
            "executed": args.apply.execute,
            "type": state.kind,
            "state": state.state,
            "partitions": rows,
        }))?,
        Format::Text => {
            let cells: Vec<[String; 4]> = rows
                .iter()
                .map(|r| {
                    let before = r["before"].as_i64();
                    let status = match (args.apply.execute, r["error"]["kind"].as_str(), before) {
                        (true, Some(kind), _) => format!("failed: {kind}"),
                        (true, None, _) => "deleted".to_owned(),
                        (false, _, Some(_)) => "would delete".to_owned(),
                        (false, _, None) => "no committed offset".to_owned(),
                    };
                    [
                        clean(r["topic"].as_str().unwrap_or("")).into_owned(),
                        r["partition"].to_string(),
                        before.map_or("-".into(), |o| o.to_string()),
                        status,
                    ]
                })
                .collect();
            out.text(&table(&["TOPIC", "PARTITION", "CURRENT-OFFSET", "STATUS"], &cells, ""))?;
        }
    }
    for ((topic, partition), e) in &errors {
        note(&format!("kcp: {}-{partition}: {}: {}", clean(topic), e.kind(), clean(e.message())));
    }
    dry_run_note(args.apply.execute, "delete these offsets");
    Ok(errors.is_empty())
}
