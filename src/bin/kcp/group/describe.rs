//! `kcp group describe`: every member's decoded subscription and assignment, and diagnostics,
//! group by group in the order asked while later groups are already being described.

use kafka_consumer_protocol::client::collect::{CollectedGroup, Collector, DescribedGroup, GroupSelection, Offsets};
use kafka_consumer_protocol::client::{Client, Deadline};
use serde_json::{json, Value};
use std::time::Duration;

use super::json::{classic_json, consumer_json};
use super::offsets::{add_to_group, offsets_json, offsets_table};
use super::table::text_of_group;
use super::DescribeArgs;
use crate::out::{note, Out, WriteFailed};
use crate::text::clean;
use crate::{client_error_json, CliError, Format};

/// One group's rendered output: its JSON and, in text mode, its table.
struct GroupOutput {
    json: Value,
    text: String,
}

pub(super) async fn describe(
    client: Client,
    args: &DescribeArgs,
    timeout: Duration,
    out: &mut Out,
) -> Result<Outcome, CliError> {
    let deadline = Deadline::after(timeout);
    let collector = Collector::new(client);
    let selection = if args.all_groups { GroupSelection::All } else { GroupSelection::Named(args.groups.clone()) };
    let wanted = collector.select(&selection, deadline).await?;
    let as_array = args.all_groups || wanted.len() > 1;
    let format = args.format;

    // Phase 1: describe every group, 50 to a call, a few calls in flight.
    let found = collector.describe(wanted, deadline).await;

    // Phase 2: the offsets of every described group in one go: one OffsetFetch per coordinator,
    // one ListOffsets per leader and offset kind, whatever the number of groups and partitions.
    let (offsets, fatal) = match collector.offsets(&found, args.isolation.level(), deadline).await {
        Ok(offsets) => (Some(offsets), None),
        Err(e) => (None, Some(e)),
    };

    // Phase 3: render in the order asked.
    let mut all_ok = true;
    let mut partial = false;
    let mut first = true;
    let mut tables_written = 0usize;
    if as_array && format == Format::Json {
        out.text("[")?;
    }
    if let Some(offsets) = &offsets {
        for f in &found {
            let group = render(f, offsets, format);
            let (value, text) = match group {
                Ok((GroupOutput { json, text }, gap)) => {
                    partial |= gap;
                    (json, text)
                }
                Err((value, line)) => {
                    all_ok = false;
                    (value, line)
                }
            };
            match format {
                Format::Json if as_array => {
                    out.text(if first { "\n" } else { ",\n" })?;
                    out.text(&serde_json::to_string_pretty(&value).map_err(WriteFailed::from)?)?;
                }
                Format::Json if value.get("group_id").is_some() && value.get("error").is_some() => {
                    // One group asked for and it failed: the plain error object.
                    out.json_pretty(&json!({"error": value["error"]}))?;
                }
                Format::Json => out.json_pretty(&value)?,
                Format::Text if value.get("error").is_some() => note(&text),
                Format::Text => {
                    if tables_written > 0 {
                        out.text("\n")?;
                    }
                    out.text(&text)?;
                    tables_written += 1;
                }
            }
            first = false;
            out.flush()?;
        }
    }
    if let Some(e) = fatal {
        if as_array && format == Format::Json {
            out.text(if first { "\n" } else { ",\n" })?;
            out.text(&serde_json::to_string_pretty(&client_error_json(&e)).map_err(WriteFailed::from)?)?;
            out.text("\n]\n")?;
            return Ok(Outcome::Failed);
        }
        return Err(CliError::Client(e));
    }
    if as_array && format == Format::Json {
        out.text(if first { "]\n" } else { "\n]\n" })?;
    }
    Ok(if !all_ok {
        Outcome::Failed
    } else if partial {
        Outcome::Partial
    } else {
        Outcome::Complete
    })
}

/// How `describe` ended: exit status 0, 1 (a group could not be described) or 3 (every group
/// was described but a gap in its offsets was reported).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Outcome {
    Complete,
    Failed,
    Partial,
}

/// One group's output (and whether its offsets have gaps), or its error as JSON and as a
/// line for stderr.
fn render(f: &CollectedGroup, offsets: &Offsets, format: Format) -> Result<(GroupOutput, bool), (Value, String)> {
    let name = &f.group_id;
    match &f.described {
        Ok(described) => {
            let view = offsets_json(offsets, name, described);
            let (mut json, extra) = match described {
                DescribedGroup::Classic(g) => classic_json(g, &f.metadata),
                DescribedGroup::Consumer(g) => (consumer_json(g, &f.metadata), Vec::new()),
            };
            add_to_group(&mut json, &view);
            let text = if format == Format::Text {
                format!("{}{}", text_of_group(&json, &extra), offsets_table(&json))
            } else {
                String::new()
            };
            Ok((GroupOutput { json, text }, view.partial))
        }
        Err(e) => {
            let v = client_error_json(e);
            let line = format!("kcp: group {}: {}: {}", clean(name), e.kind(), clean(e.message()));
            Err((json!({"group_id": name, "error": v["error"]}), line))
        }
    }
}
