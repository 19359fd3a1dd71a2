//! What the write actions (`reset-offsets`, `delete-offsets`, `delete`) share: the check that a
//! group has no active members (Kafka's tool refuses a reset otherwise, and the broker refuses
//! an administrator's commit and a group deletion), the `--topic T[:P,...]` scopes, and the
//! dry-run notice.
//!
//! Every write action is a dry run unless `--execute`: it describes the group, reads what it
//! would change and prints the plan, before and after per partition. The check and the write
//! are two requests: a member that joins between them makes the broker refuse the write
//! (UNKNOWN_MEMBER_ID, NON_EMPTY_GROUP, GROUP_SUBSCRIBED_TO_TOPIC), which is reported per
//! partition or group.

use std::collections::BTreeSet;

use kafka_consumer_protocol::client::{Client, ClientError, Deadline, ErrorKind, Metadata};
use kafka_consumer_protocol::TopicPartitions;
use serde_json::{json, Value};

use crate::out::{note, Out};
use crate::text::clean;
use crate::{CliError, Format};

/// What a group is right now, as far as a write action cares.
/// `--execute` and `--dry-run`, as every write action takes them: a dry run unless `--execute`.
#[derive(clap::Args, Debug)]
pub struct Apply {
    /// Make the change (without it, a dry run that prints what would change).
    #[arg(long, conflicts_with = "dry_run")]
    pub execute: bool,
    /// A dry run (the default; accepted as Kafka's tool takes it).
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) struct Activity {
    /// `classic` or `consumer` (KIP-848); `None` when no group has this id.
    pub kind: Option<&'static str>,
    /// The group's state (`Dead` when it does not exist).
    pub state: String,
    /// Its members: `member_id`, `group_instance_id`, `client_id`, `client_host`.
    pub members: Vec<Value>,
}

impl Activity {
    pub fn exists(&self) -> bool {
        self.kind.is_some()
    }
}

/// Describes `group` (DescribeGroups, then ConsumerGroupDescribe when no classic group has the
/// id, as `describe` does).
pub(super) async fn activity(client: &Client, group: &str, deadline: Deadline) -> Result<Activity, ClientError> {
    let names = [group];
    match client.describe_groups(&names, deadline).await?.pop() {
        // DescribeGroups before v6 answers Dead without members both for an unknown group and
        // for a KIP-848 group; v6 answers GROUP_ID_NOT_FOUND.
        Some(Ok(g)) if !(g.group.state == "Dead" && g.group.members.is_empty()) => {
            let members = g
                .group
                .members
                .iter()
                .map(|m| {
                    json!({"member_id": m.member_id, "group_instance_id": m.group_instance_id,
                           "client_id": m.client_id, "client_host": m.client_host})
                })
                .collect();
            return Ok(Activity { kind: Some("classic"), state: g.group.state.clone(), members });
        }
        Some(Err(e)) if e.kind() != ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    match client.describe_consumer_groups(&names, deadline).await?.pop() {
        Some(Ok(g)) => {
            let members = g
                .group
                .members
                .iter()
                .map(|m| {
                    json!({"member_id": m.member_id, "group_instance_id": m.instance_id,
                           "client_id": m.client_id, "client_host": m.client_host})
                })
                .collect();
            Ok(Activity { kind: Some("consumer"), state: g.group.state.clone(), members })
        }
        Some(Err(e)) if e.kind() != ErrorKind::NotFound => Err(e),
        _ => Ok(Activity { kind: None, state: "Dead".into(), members: Vec::new() }),
    }
}

/// The refusal of a write on a group with members: `{"error": {"kind": "active_group", ...}}`
/// naming every member (JSON), or lines on stderr (text); exit 1. `None` when the group has none.
pub(super) fn refusal(group: &str, activity: &Activity, action: &str) -> Option<Value> {
    if activity.members.is_empty() {
        return None;
    }
    let ids: Vec<String> = activity
        .members
        .iter()
        .map(|m| {
            let id = m["member_id"].as_str().unwrap_or("");
            match m["client_id"].as_str() {
                Some(client) if !client.is_empty() => format!("{id} (client {client})"),
                _ => id.to_owned(),
            }
        })
        .collect();
    let message = format!(
        "refusing to {action}: group '{group}' has {} active member(s) (state {}): {}; stop them first (a group \
         can only be changed while it has no members, as kafka-consumer-groups.sh requires)",
        activity.members.len(),
        activity.state,
        ids.join(", ")
    );
    Some(json!({"error": {
        "kind": "active_group",
        "message": message,
        "group_id": group,
        "state": activity.state,
        "members": activity.members,
    }}))
}

/// Prints a refusal (see [`refusal`]) and returns the exit-1 error.
pub(super) fn report_refusal(refusal: &Value, format: Format, out: &mut Out) -> CliError {
    let written = match format {
        Format::Json => out.json_pretty(refusal).and_then(|()| out.flush()),
        Format::Text => {
            note(&format!("kcp: active_group: {}", clean(refusal["error"]["message"].as_str().unwrap_or(""))));
            Ok(())
        }
    };
    match written {
        Err(e) => CliError::Output(e),
        Ok(()) => CliError::Reported,
    }
}

/// One `--topic` argument: `T` (every partition) or `T:P,P,...`, as Kafka's tool takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicScope {
    pub topic: String,
    pub partitions: Option<Vec<i32>>,
}

/// Parses `--topic T` or `--topic T:0,1,2` (clap's value parser).
pub(super) fn parse_topic_scope(arg: &str) -> Result<TopicScope, String> {
    let Some((topic, list)) = arg.split_once(':') else {
        if arg.is_empty() {
            return Err("an empty topic name".into());
        }
        return Ok(TopicScope { topic: arg.to_owned(), partitions: None });
    };
    if topic.is_empty() {
        return Err(format!("'{arg}': no topic name before ':'"));
    }
    let mut partitions = Vec::new();
    for p in list.split(',') {
        let id: i32 = p
            .trim()
            .parse()
            .ok()
            .filter(|id| *id >= 0)
            .ok_or_else(|| format!("'{arg}': '{p}' is not a partition number (expected TOPIC:P,P,...)"))?;
        partitions.push(id);
    }
    Ok(TopicScope { topic: topic.to_owned(), partitions: Some(partitions) })
}

/// The partitions the scopes name, checked against the metadata: a topic that does not exist
/// or a partition beyond its count is a `not_found` error naming them all (Kafka's tool refuses
/// the same way before changing anything).
pub(super) fn resolve_scopes(scopes: &[TopicScope], metadata: &Metadata) -> Result<Vec<TopicPartitions>, ClientError> {
    let mut wanted: std::collections::BTreeMap<String, BTreeSet<i32>> = std::collections::BTreeMap::new();
    let mut missing: Vec<String> = Vec::new();
    for scope in scopes {
        let topic = metadata.topic(&scope.topic).filter(|t| t.error_code == 0);
        let Some(topic) = topic else {
            missing.push(format!("topic '{}'", scope.topic));
            continue;
        };
        let count = i32::try_from(topic.partition_count()).unwrap_or(i32::MAX);
        let entry = wanted.entry(scope.topic.clone()).or_default();
        match &scope.partitions {
            None => entry.extend(0..count),
            Some(ids) => {
                for &p in ids {
                    if p >= count {
                        missing.push(format!("{}-{p} (the topic has {count} partitions)", scope.topic));
                    } else {
                        entry.insert(p);
                    }
                }
            }
        }
    }
    if !missing.is_empty() {
        return Err(ClientError::new(ErrorKind::NotFound, format!("no such partitions: {}", missing.join(", "))));
    }
    Ok(wanted
        .into_iter()
        .map(|(topic, ids)| TopicPartitions::new(topic, ids.into_iter().collect::<Vec<i32>>()))
        .collect())
}

/// The line that says a dry run changed nothing, or what `--execute` did.
pub(super) fn dry_run_note(execute: bool, what: &str) {
    if !execute {
        note(&format!("kcp: dry run: nothing was changed; run again with --execute to {what}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topic_scopes_read_as_kafkas_tool_reads_them() {
        assert_eq!(parse_topic_scope("orders"), Ok(TopicScope { topic: "orders".into(), partitions: None }));
        assert_eq!(
            parse_topic_scope("orders:0,2, 5"),
            Ok(TopicScope { topic: "orders".into(), partitions: Some(vec![0, 2, 5]) })
        );
        assert!(parse_topic_scope("orders:").unwrap_err().contains("not a partition number"));
        assert!(parse_topic_scope("orders:-1").unwrap_err().contains("'-1'"));
        assert!(parse_topic_scope(":1").unwrap_err().contains("no topic name"));
        assert!(parse_topic_scope("").is_err());
    }

    #[test]
    fn a_group_with_members_is_refused_by_name() {
        let idle = Activity { kind: Some("classic"), state: "Empty".into(), members: vec![] };
        assert_eq!(refusal("g", &idle, "reset offsets"), None);
        let busy = Activity {
            kind: Some("classic"),
            state: "Stable".into(),
            members: vec![
                json!({"member_id": "c1-1", "group_instance_id": null, "client_id": "c1", "client_host": "/127.0.0.1"}),
            ],
        };
        let r = refusal("g", &busy, "reset offsets").unwrap();
        assert_eq!(r["error"]["kind"], "active_group");
        assert_eq!(r["error"]["members"][0]["member_id"], "c1-1");
        let message = r["error"]["message"].as_str().unwrap();
        assert!(message.contains("c1-1 (client c1)") && message.contains("state Stable"), "{message}");
    }
}
