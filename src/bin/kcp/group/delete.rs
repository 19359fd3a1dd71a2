//! `kcp group delete`: delete groups and their committed offsets, as `kafka-consumer-groups.sh
//! --delete` does (DeleteGroups), for groups without active members. A dry run unless
//! `--execute`. If any group named has members, nothing is deleted.

use std::time::Duration;

use kafka_consumer_protocol::client::{Client, ClientError, Deadline, ErrorKind};
use serde_json::{json, Value};

use super::table::table;
use super::writes::{activity, dry_run_note, refusal, report_refusal, Apply};
use super::ConnectionArgs;
use crate::out::{note, Out};
use crate::text::clean;
use crate::{CliError, Format};

/// `kcp group delete`.
#[derive(clap::Args, Debug)]
pub struct DeleteArgs {
    #[command(flatten)]
    pub connection: ConnectionArgs,
    /// A group to delete (repeat for several); none may have active members.
    #[arg(long = "group", value_name = "G", required = true)]
    pub groups: Vec<String>,
    #[command(flatten)]
    pub apply: Apply,
    /// Output format: the JSON contract, or a table.
    #[arg(long, value_enum, default_value = "json")]
    pub format: Format,
}

fn error_json(e: &ClientError) -> Value {
    json!({"kind": e.kind().as_str(), "message": e.message()})
}

pub(super) async fn delete(
    client: &Client,
    args: &DeleteArgs,
    timeout: Duration,
    out: &mut Out,
) -> Result<bool, CliError> {
    let deadline = Deadline::after(timeout);
    let mut groups: Vec<&str> = Vec::new();
    for g in &args.groups {
        if !groups.contains(&g.as_str()) {
            groups.push(g);
        }
    }
    // Every group is checked before anything is deleted.
    let mut states = Vec::new();
    for &group in &groups {
        let state = activity(client, group, deadline).await?;
        if let Some(refused) = refusal(group, &state, "delete the group") {
            return Err(report_refusal(&refused, args.format, out));
        }
        states.push(state);
    }
    let offsets = client.fetch_committed_offsets(&groups, deadline).await?;
    let mut results: Vec<Option<Result<(), ClientError>>> = vec![None; groups.len()];
    if args.apply.execute {
        let existing: Vec<&str> = groups.iter().zip(&states).filter(|(_, s)| s.exists()).map(|(g, _)| *g).collect();
        let deleted = if existing.is_empty() { Vec::new() } else { client.delete_groups(&existing, deadline).await? };
        for (i, group) in groups.iter().enumerate() {
            results[i] = Some(match deleted.iter().find(|(g, _)| g == group) {
                Some((_, result)) => result.clone(),
                None => Err(ClientError::new(ErrorKind::NotFound, format!("group '{group}' does not exist"))),
            });
        }
    }
    let mut ok = true;
    let entries: Vec<Value> = groups
        .iter()
        .zip(&states)
        .zip(offsets.iter().chain(std::iter::repeat(&Err(ClientError::new(ErrorKind::Protocol, "no answer")))))
        .zip(&results)
        .map(|(((group, state), committed), result)| {
            let committed_json: Vec<Value> = match committed {
                Ok(c) => c
                    .offsets
                    .iter()
                    .filter_map(|o| {
                        o.offset.map(|off| json!({"topic": o.topic, "partition": o.partition, "offset": off}))
                    })
                    .collect(),
                Err(_) => Vec::new(),
            };
            let error = match result {
                Some(Err(e)) => {
                    ok = false;
                    Some(error_json(e))
                }
                None if !state.exists() => {
                    ok = false;
                    Some(json!({"kind": "not_found", "message": format!("group '{group}' does not exist")}))
                }
                _ => None,
            };
            json!({
                "group_id": group,
                "type": state.kind,
                "state": state.state,
                "committed_offsets": committed_json,
                "deleted": matches!(result, Some(Ok(()))),
                "error": error,
            })
        })
        .collect();
    match args.format {
        Format::Json => {
            out.json_pretty(&json!({"action": "delete", "executed": args.apply.execute, "groups": entries}))?
        }
        Format::Text => {
            let cells: Vec<[String; 5]> = entries
                .iter()
                .map(|g| {
                    let status = match (&g["error"]["kind"], g["deleted"].as_bool()) {
                        (Value::String(kind), _) => format!("failed: {kind}"),
                        (_, Some(true)) => "deleted".to_owned(),
                        _ => "would delete".to_owned(),
                    };
                    [
                        clean(g["group_id"].as_str().unwrap_or("")).into_owned(),
                        g["type"].as_str().unwrap_or("-").to_owned(),
                        clean(g["state"].as_str().unwrap_or("-")).into_owned(),
                        g["committed_offsets"].as_array().map_or(0, Vec::len).to_string(),
                        status,
                    ]
                })
                .collect();
            out.text(&table(&["GROUP", "TYPE", "STATE", "COMMITTED-PARTITIONS", "STATUS"], &cells, ""))?;
        }
    }
    for g in &entries {
        if let Some(message) = g["error"]["message"].as_str() {
            note(&format!("kcp: group {}: {}", clean(g["group_id"].as_str().unwrap_or("")), clean(message)));
        }
    }
    dry_run_note(args.apply.execute, "delete these groups");
    Ok(ok)
}
