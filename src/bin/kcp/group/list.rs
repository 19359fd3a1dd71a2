//! `kcp group list`: the cluster's groups with their type and state.

use std::time::Duration;

use kafka_consumer_protocol::client::{Client, Deadline, ListGroupsFilter};
use serde_json::{json, Value};

use super::table::table;
use crate::out::Out;
use crate::text::clean;
use crate::{CliError, Format};

pub(super) async fn list(client: &Client, timeout: Duration, format: Format, out: &mut Out) -> Result<(), CliError> {
    let deadline = Deadline::after(timeout);
    let groups = client.list_groups(&ListGroupsFilter::default(), deadline).await?;
    match format {
        Format::Json => {
            let groups: Vec<Value> = groups
                .iter()
                .map(|g| {
                    json!({
                        "group_id": g.group_id,
                        "type": g.group_type.as_deref().unwrap_or("classic"),
                        "state": g.state,
                        "protocol_type": g.protocol_type,
                    })
                })
                .collect();
            out.json_pretty(&json!({ "groups": groups }))?;
        }
        Format::Text => {
            let rows: Vec<[String; 4]> = groups
                .iter()
                .map(|g| {
                    [
                        clean(&g.group_id).into_owned(),
                        g.group_type.clone().unwrap_or_else(|| "classic".into()),
                        clean(g.state.as_deref().unwrap_or("-")).into_owned(),
                        clean(if g.protocol_type.is_empty() { "-" } else { &g.protocol_type }).into_owned(),
                    ]
                })
                .collect();
            out.text(&table(&["GROUP", "TYPE", "STATE", "PROTOCOL TYPE"], &rows, ""))?;
        }
    }
    Ok(())
}
