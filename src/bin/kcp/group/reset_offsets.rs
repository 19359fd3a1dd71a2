//! `kcp group reset-offsets`: move a group's committed offsets, as `kafka-consumer-groups.sh
//! --reset-offsets` does, for a group without active members. A dry run unless `--execute`.
//!
//! The new offset of each partition: `--to-earliest` the log-start offset, `--to-latest` the
//! log-end offset (high watermark), `--to-datetime` the first record at or after the time (the
//! log-end offset when there is none, as Kafka's tool falls back), `--shift-by N` the committed
//! offset plus N (a partition without a committed offset is an error, as in Kafka's tool),
//! `--to-offset N` and `--from-file` the given offset; the last three are clamped into
//! [log-start, log-end] as Kafka's tool clamps them, with a note saying so.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

use kafka_consumer_protocol::client::{
    Client, ClientError, Deadline, ErrorKind, IsolationLevel, OffsetSpec, OffsetToCommit,
};
use kafka_consumer_protocol::TopicPartitions;
use serde_json::{json, Value};

use super::table::table;
use super::writes::{
    activity, dry_run_note, parse_topic_scope, refusal, report_refusal, resolve_scopes, Apply, TopicScope,
};
use super::ConnectionArgs;
use crate::out::{note, Out};
use crate::text::clean;
use crate::{CliError, Format};

/// `kcp group reset-offsets`.
#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("scope").required(true).args(["topics", "all_topics", "from_file"])))]
#[command(group(
    clap::ArgGroup::new("to")
        .required(true)
        .args(["to_earliest", "to_latest", "to_datetime", "shift_by", "to_offset", "from_file"])
))]
pub struct ResetOffsetsArgs {
    #[command(flatten)]
    pub connection: ConnectionArgs,
    /// The group whose offsets to reset (it must have no active members).
    #[arg(long, value_name = "G")]
    pub group: String,
    /// A topic (every partition) or TOPIC:P,P,... (repeat for several).
    #[arg(long = "topic", value_name = "T[:P,...]", value_parser = parse_topic_scope)]
    pub(super) topics: Vec<TopicScope>,
    /// Every partition the group has committed offsets for.
    #[arg(long)]
    pub all_topics: bool,
    /// To each partition's log-start offset.
    #[arg(long)]
    pub to_earliest: bool,
    /// To each partition's log-end offset.
    #[arg(long)]
    pub to_latest: bool,
    /// To the first record at or after this time: YYYY-MM-DDTHH:MM:SS[.mmm][Z|+HH:MM|-HH:MM]
    /// (UTC when no offset is given; Kafka's tool reads it in the machine's time zone).
    // The help text is printed as written: its brackets are the format's notation, not links.
    #[allow(rustdoc::broken_intra_doc_links)]
    #[arg(long, value_name = "TS", value_parser = parse_datetime_ms)]
    pub to_datetime: Option<i64>,
    /// The committed offset plus N (N may be negative), within the log.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub shift_by: Option<i64>,
    /// To offset N, within the log.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(i64).range(0..))]
    pub to_offset: Option<i64>,
    /// Offsets from a CSV file: TOPIC,PARTITION,OFFSET lines (or GROUP,TOPIC,PARTITION,OFFSET, as
    /// Kafka's tool exports them; lines of other groups are skipped).
    #[arg(long, value_name = "CSV")]
    pub from_file: Option<PathBuf>,
    #[command(flatten)]
    pub apply: Apply,
    /// Output format: the JSON contract, or a table like Kafka's tool's.
    #[arg(long, value_enum, default_value = "json")]
    pub format: Format,
}

/// How the new offset is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Strategy {
    Earliest,
    Latest,
    Datetime(i64),
    ShiftBy(i64),
    ToOffset(i64),
    FromFile,
}

impl Strategy {
    fn json(self) -> Value {
        match self {
            Strategy::Earliest => json!({"to": "earliest"}),
            Strategy::Latest => json!({"to": "latest"}),
            Strategy::Datetime(ms) => json!({"to": "datetime", "timestamp_ms": ms}),
            Strategy::ShiftBy(n) => json!({"to": "shift_by", "shift_by": n}),
            Strategy::ToOffset(n) => json!({"to": "offset", "offset": n}),
            Strategy::FromFile => json!({"to": "file"}),
        }
    }
}

/// The new offset of one partition, and a note when it is not the one asked for. `requested`
/// is the file's offset (`FromFile`); `by_timestamp` what ListOffsets found for `Datetime`.
fn new_offset(
    strategy: Strategy,
    before: Option<i64>,
    log_start: i64,
    log_end: i64,
    requested: Option<i64>,
    by_timestamp: Option<i64>,
) -> Result<(i64, Option<String>), String> {
    let clamp = |asked: i64| {
        if asked > log_end {
            (log_end, Some(format!("asked {asked}, above the log-end offset: set to {log_end}, as Kafka's tool does")))
        } else if asked < log_start {
            (
                log_start,
                Some(format!("asked {asked}, below the log-start offset: set to {log_start}, as Kafka's tool does")),
            )
        } else {
            (asked, None)
        }
    };
    Ok(match strategy {
        Strategy::Earliest => (log_start, None),
        Strategy::Latest => (log_end, None),
        Strategy::Datetime(_) => match by_timestamp {
            Some(offset) => (offset, None),
            None => {
                (log_end, Some("no record at or after the time: the log-end offset, as Kafka's tool falls back".into()))
            }
        },
        Strategy::ShiftBy(n) => {
            let Some(before) = before else {
                return Err("no committed offset to shift (as Kafka's tool, kcp does not guess one)".into());
            };
            clamp(before.saturating_add(n))
        }
        Strategy::ToOffset(n) => clamp(n),
        Strategy::FromFile => clamp(requested.ok_or("not in the file")?),
    })
}

/// Reads a reset plan: `TOPIC,PARTITION,OFFSET` lines, or `GROUP,TOPIC,PARTITION,OFFSET` lines of
/// which only `group`'s are kept. Blank lines are skipped; anything else names its line.
fn parse_plan(text: &str, group: &str) -> Result<BTreeMap<(String, i32), i64>, String> {
    let mut plan = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        let (topic, partition, offset) = match fields.as_slice() {
            [t, p, o] => (*t, *p, *o),
            [g, t, p, o] if *g == group => (*t, *p, *o),
            [_, _, _, _] => continue,
            _ => {
                return Err(format!(
                    "line {}: expected TOPIC,PARTITION,OFFSET or GROUP,TOPIC,PARTITION,OFFSET, found {} fields",
                    n + 1,
                    fields.len()
                ))
            }
        };
        let partition: i32 = partition
            .parse()
            .ok()
            .filter(|p| *p >= 0)
            .ok_or_else(|| format!("line {}: '{}' is not a partition number", n + 1, clean(partition)))?;
        let offset: i64 = offset
            .parse()
            .ok()
            .filter(|o| *o >= 0)
            .ok_or_else(|| format!("line {}: '{}' is not an offset", n + 1, clean(offset)))?;
        if topic.is_empty() {
            return Err(format!("line {}: no topic", n + 1));
        }
        plan.insert((topic.to_owned(), partition), offset);
    }
    Ok(plan)
}

/// `YYYY-MM-DDTHH:MM:SS[.mmm][Z|+HH:MM|-HH:MM|+HHMM]` as milliseconds since the epoch (UTC when
/// no offset is given).
pub(super) fn parse_datetime_ms(text: &str) -> Result<i64, String> {
    let bad = || format!("'{text}': expected YYYY-MM-DDTHH:MM:SS[.mmm][Z|+HH:MM|-HH:MM]");
    let b = text.as_bytes();
    if b.len() < 19
        || b[4] != b'-'
        || b[7] != b'-'
        || !(b[10] == b'T' || b[10] == b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return Err(bad());
    }
    let num = |range: std::ops::Range<usize>| -> Result<i64, String> {
        let s = text.get(range).ok_or_else(bad)?;
        if !s.bytes().all(|c| c.is_ascii_digit()) {
            return Err(bad());
        }
        s.parse().map_err(|_| bad())
    };
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let mut rest = &text[19..];
    let mut millis = 0;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || digits > 9 {
            return Err(bad());
        }
        let scaled = format!("{:0<3}", &frac[..digits.min(3)]);
        millis = scaled.parse::<i64>().map_err(|_| bad())?;
        rest = &frac[digits..];
    }
    let offset_minutes = match rest {
        "" | "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes()[0] {
                b'+' => 1,
                b'-' => -1,
                _ => return Err(bad()),
            };
            let zone = rest[1..].replace(':', "");
            if zone.len() != 4 || !zone.bytes().all(|c| c.is_ascii_digit()) {
                return Err(bad());
            }
            let (h, m): (i64, i64) = (zone[..2].parse().map_err(|_| bad())?, zone[2..].parse().map_err(|_| bad())?);
            if h > 18 || m > 59 {
                return Err(bad());
            }
            sign * (h * 60 + m)
        }
    };
    let days_in_month = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        _ => return Err(bad()),
    };
    if day < 1 || day > days_in_month || hour > 23 || minute > 59 || second > 59 {
        return Err(bad());
    }
    // Days since 1970-01-01 (Howard Hinnant's days_from_civil).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset_minutes * 60;
    Ok(seconds * 1000 + millis)
}

/// One partition of the plan.
struct Row {
    topic: String,
    partition: i32,
    before: Option<i64>,
    after: i64,
    log_start: i64,
    log_end: i64,
    note: Option<String>,
}

pub(super) async fn reset_offsets(
    client: &Client,
    args: &ResetOffsetsArgs,
    timeout: Duration,
    out: &mut Out,
) -> Result<bool, CliError> {
    let deadline = Deadline::after(timeout);
    let group = args.group.as_str();
    let strategy = match (args.to_earliest, args.to_latest, args.to_datetime, args.shift_by, args.to_offset) {
        (true, ..) => Strategy::Earliest,
        (_, true, ..) => Strategy::Latest,
        (_, _, Some(ms), ..) => Strategy::Datetime(ms),
        (_, _, _, Some(n), _) => Strategy::ShiftBy(n),
        (_, _, _, _, Some(n)) => Strategy::ToOffset(n),
        _ => Strategy::FromFile,
    };
    let plan_file = match &args.from_file {
        Some(path) => {
            let bytes = crate::input::read_document(&path.to_string_lossy())?;
            let text =
                String::from_utf8(bytes).map_err(|_| CliError::input(format!("{}: not UTF-8 text", path.display())))?;
            let plan = parse_plan(&text, group).map_err(|e| CliError::input(format!("{}: {e}", path.display())))?;
            if plan.is_empty() {
                return Err(CliError::input(format!("{}: no offsets for group '{group}'", path.display())));
            }
            Some(plan)
        }
        None => None,
    };

    let state = activity(client, group, deadline).await?;
    if let Some(refused) = refusal(group, &state, "reset offsets") {
        return Err(report_refusal(&refused, args.format, out));
    }
    let committed = client
        .fetch_committed_offsets(&[group], deadline)
        .await?
        .pop()
        .unwrap_or_else(|| Err(ClientError::new(ErrorKind::Protocol, "OffsetFetch answered nothing")))?;
    let before_of = |topic: &str, partition: i32| committed.get(topic, partition).and_then(|c| c.offset);

    // The partitions to reset.
    let partitions: Vec<TopicPartitions> = if args.all_topics {
        let mut by_topic: BTreeMap<String, BTreeSet<i32>> = BTreeMap::new();
        for c in committed.offsets.iter().filter(|c| c.offset.is_some()) {
            by_topic.entry(c.topic.clone()).or_default().insert(c.partition);
        }
        by_topic.into_iter().map(|(t, ids)| TopicPartitions::new(t, ids.into_iter().collect::<Vec<i32>>())).collect()
    } else {
        let scopes: Vec<TopicScope> = match &plan_file {
            Some(plan) => {
                let mut by_topic: BTreeMap<String, Vec<i32>> = BTreeMap::new();
                for (topic, partition) in plan.keys() {
                    by_topic.entry(topic.clone()).or_default().push(*partition);
                }
                by_topic.into_iter().map(|(topic, ids)| TopicScope { topic, partitions: Some(ids) }).collect()
            }
            None => args.topics.clone(),
        };
        let names: Vec<&str> = scopes.iter().map(|s| s.topic.as_str()).collect();
        let metadata = client.metadata(Some(&names), deadline).await?;
        resolve_scopes(&scopes, &metadata)?
    };
    if partitions.is_empty() {
        note(&format!("kcp: group '{}' has no committed offsets: nothing to reset", clean(group)));
    }

    // The log's bounds, and for --to-datetime the offsets by time.
    let topic_names: Vec<&str> = partitions.iter().map(|t| t.topic.as_str()).collect();
    let logs = client.log_offsets(&topic_names, IsolationLevel::ReadUncommitted, deadline).await?;
    let by_time: BTreeMap<(String, i32), Option<i64>> = match strategy {
        Strategy::Datetime(ms) if !partitions.is_empty() => {
            let mut found = BTreeMap::new();
            for p in client
                .list_offsets(&partitions, OffsetSpec::Timestamp(ms), IsolationLevel::ReadUncommitted, deadline)
                .await?
            {
                let offset = p.result?.offset;
                found.insert((p.topic, p.partition), offset);
            }
            found
        }
        _ => BTreeMap::new(),
    };
    let mut rows = Vec::new();
    for tp in &partitions {
        let log = logs
            .iter()
            .find(|l| l.topic == tp.topic)
            .ok_or_else(|| ClientError::new(ErrorKind::Protocol, format!("no log offsets for topic '{}'", tp.topic)))?;
        for &partition in &tp.partitions {
            let bounds = log.partition(partition).ok_or_else(|| {
                ClientError::new(ErrorKind::NotFound, format!("{}-{partition}: no such partition", tp.topic))
            })?;
            let log_start = bounds.log_start_offset.clone()?;
            let log_end = bounds.log_end_offset.clone()?;
            let before = before_of(&tp.topic, partition);
            let requested = plan_file.as_ref().and_then(|p| p.get(&(tp.topic.clone(), partition)).copied());
            let found = by_time.get(&(tp.topic.clone(), partition)).copied().flatten();
            let (after, why) = new_offset(strategy, before, log_start, log_end, requested, found).map_err(|e| {
                CliError::Client(ClientError::new(ErrorKind::NotFound, format!("{}-{partition}: {e}", tp.topic)))
            })?;
            rows.push(Row { topic: tp.topic.clone(), partition, before, after, log_start, log_end, note: why });
        }
    }

    // Execute: commit, then read back what the group holds now.
    let mut errors: BTreeMap<(String, i32), ClientError> = BTreeMap::new();
    let mut now: BTreeMap<(String, i32), Option<i64>> = BTreeMap::new();
    if args.apply.execute && !rows.is_empty() {
        let offsets: Vec<OffsetToCommit> =
            rows.iter().map(|r| OffsetToCommit::new(r.topic.clone(), r.partition, r.after)).collect();
        for written in client.commit_offsets_as_admin(group, &offsets, deadline).await? {
            if let Err(e) = written.result {
                errors.insert((written.topic, written.partition), e);
            }
        }
        let reread = client.fetch_committed_offsets(&[group], deadline).await?.pop();
        if let Some(Ok(reread)) = reread {
            for r in &rows {
                now.insert((r.topic.clone(), r.partition), reread.get(&r.topic, r.partition).and_then(|c| c.offset));
            }
        }
    }

    let ok = errors.is_empty();
    let partitions_json: Vec<Value> = rows
        .iter()
        .map(|r| {
            let key = (r.topic.clone(), r.partition);
            let after = if args.apply.execute {
                now.get(&key).copied().flatten().map_or(Value::Null, Value::from)
            } else {
                json!(r.after)
            };
            json!({
                "topic": r.topic,
                "partition": r.partition,
                "before": r.before,
                "after": after,
                "new_offset": r.after,
                "log_start_offset": r.log_start,
                "log_end_offset": r.log_end,
                "note": r.note,
                "error": errors.get(&key).map(|e| json!({"kind": e.kind().as_str(), "message": e.message()})),
            })
        })
        .collect();
    match args.format {
        Format::Json => out.json_pretty(&json!({
            "group_id": group,
            "action": "reset_offsets",
            "executed": args.apply.execute,
            "type": state.kind,
            "state": state.state,
            "strategy": strategy.json(),
            "partitions": partitions_json,
        }))?,
        Format::Text => {
            let rows_text: Vec<[String; 6]> = partitions_json
                .iter()
                .map(|p| {
                    let status = if !args.apply.execute {
                        "would commit".to_owned()
                    } else if let Some(kind) = p["error"]["kind"].as_str() {
                        format!("failed: {kind}")
                    } else {
                        "committed".to_owned()
                    };
                    [
                        clean(group).into_owned(),
                        clean(p["topic"].as_str().unwrap_or("")).into_owned(),
                        p["partition"].to_string(),
                        p["before"].as_i64().map_or("-".into(), |o| o.to_string()),
                        p["new_offset"].to_string(),
                        status,
                    ]
                })
                .collect();
            if !rows_text.is_empty() {
                out.text(&table(
                    &["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "NEW-OFFSET", "STATUS"],
                    &rows_text,
                    "",
                ))?;
            }
        }
    }
    for r in &rows {
        if let Some(why) = &r.note {
            note(&format!("kcp: {}-{}: {}", clean(&r.topic), r.partition, why));
        }
    }
    for ((topic, partition), e) in &errors {
        note(&format!("kcp: {}-{partition}: {}: {}", clean(topic), e.kind(), clean(e.message())));
    }
    dry_run_note(args.apply.execute, "commit these offsets");
    Ok(ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_chosen_and_clamped_as_kafkas_tool_does() {
        // log [10, 50), committed 30
        let at = |s, req, found| new_offset(s, Some(30), 10, 50, req, found);
        assert_eq!(at(Strategy::Earliest, None, None), Ok((10, None)));
        assert_eq!(at(Strategy::Latest, None, None), Ok((50, None)));
        assert_eq!(at(Strategy::ShiftBy(-5), None, None), Ok((25, None)));
        let (o, why) = at(Strategy::ShiftBy(-100), None, None).unwrap();
        assert_eq!(o, 10);
        assert!(why.unwrap().contains("below the log-start offset"));
        let (o, why) = at(Strategy::ToOffset(99), None, None).unwrap();
        assert_eq!(o, 50);
        assert!(why.unwrap().contains("above the log-end offset"));
        assert_eq!(at(Strategy::FromFile, Some(12), None), Ok((12, None)));
        assert_eq!(at(Strategy::Datetime(0), None, Some(17)), Ok((17, None)));
        let (o, why) = at(Strategy::Datetime(0), None, None).unwrap();
        assert_eq!(o, 50);
        assert!(why.unwrap().contains("log-end offset"));
        // Shifting needs a committed offset.
        assert!(new_offset(Strategy::ShiftBy(1), None, 0, 5, None, None).unwrap_err().contains("no committed offset"));
        // i64 overflow saturates, then clamps.
        assert_eq!(new_offset(Strategy::ShiftBy(i64::MAX), Some(3), 0, 5, None, None).unwrap().0, 5);
    }

    #[test]
    fn reset_plans_read_both_csv_forms() {
        let plan = parse_plan("orders,0,5\norders,1,7\n\n", "g").unwrap();
        assert_eq!(plan.get(&("orders".to_owned(), 1)), Some(&7));
        let plan = parse_plan("g,orders,0,5\nother,orders,0,9\n", "g").unwrap();
        assert_eq!(plan.len(), 1);
        assert_eq!(plan.get(&("orders".to_owned(), 0)), Some(&5));
        assert!(parse_plan("orders,x,5", "g").unwrap_err().starts_with("line 1: 'x'"));
        assert!(parse_plan("orders,0,5\norders,0", "g").unwrap_err().starts_with("line 2: expected"));
        assert!(parse_plan("orders,0,-3", "g").unwrap_err().contains("not an offset"));
    }

    #[test]
    fn datetimes_read_as_utc_unless_an_offset_is_given() {
        assert_eq!(parse_datetime_ms("1970-01-01T00:00:00"), Ok(0));
        assert_eq!(parse_datetime_ms("1970-01-01T00:00:01.5Z"), Ok(1500));
        assert_eq!(parse_datetime_ms("2026-12-03T16:00:00.000"), Ok(1_796_313_600_000));
        assert_eq!(parse_datetime_ms("2026-12-03T17:00:00+01:00"), Ok(1_796_313_600_000));
        assert_eq!(parse_datetime_ms("2026-12-03T15:30:00-0030"), Ok(1_796_313_600_000));
        assert_eq!(parse_datetime_ms("2024-02-29T00:00:00"), Ok(1_709_164_800_000));
        for bad in [
            "2023-02-29T00:00:00",
            "2026-13-01T00:00:00",
            "2026-12-03",
            "2026-12-03T24:00:00",
            "2026-12-03T16:00:00+1",
            "x",
        ] {
            assert!(parse_datetime_ms(bad).is_err(), "{bad}");
        }
    }
}
