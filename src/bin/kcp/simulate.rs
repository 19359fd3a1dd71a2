//! `kcp simulate`: the timeline is written entry by entry as the simulation runs, so a long run
//! or a large group never holds its whole timeline in memory (except with `--svg`, which draws
//! the whole timeline and so is limited to small groups).

use kafka_consumer_protocol::internal::svg;
use kafka_consumer_protocol::sim::{json, run_with, Outcome, Scenario, Step, TimelineEntry};
use serde_json::Value;

use super::input::read_document;
use super::{CliError, Out, WriteFailed};

/// The scenario `--example` runs: the KIP-429 two-rolling-bounce upgrade from range to
/// cooperative-sticky.
pub const EXAMPLE: &str = include_str!("../../../testdata/scenarios/rolling-upgrade.json");

/// `--svg` draws the whole timeline, which it keeps in memory: at most this many members
/// (initial and joining) ...
pub const SVG_MAX_MEMBERS: usize = 100;
/// ... and this many partitions in all.
pub const SVG_MAX_PARTITIONS: i64 = 2_000;

/// `kcp simulate` arguments.
#[derive(clap::Args, Debug, Clone)]
pub struct SimulateArgs {
    /// The scenario, from a file or `-` for stdin.
    #[arg(value_name = "SCENARIO-FILE | -", default_value = "-")]
    pub scenario: String,
    /// Also draw the timeline as SVG (one lane per partition, coloured by owner).
    #[arg(long, value_name = "OUT.svg")]
    pub svg: Option<String>,
    /// Run the built-in example scenario (a rolling upgrade) instead of reading one.
    #[arg(long, conflicts_with = "scenario")]
    pub example: bool,
}

fn indented(value: &Value, indent: &str) -> String {
    let text = serde_json::to_string_pretty(value).expect("JSON values serialize");
    text.replace('\n', &format!("\n{indent}"))
}

fn check_svg_size(s: &Scenario) -> Result<(), CliError> {
    let members = s.members.len() + s.steps.iter().filter(|st| matches!(st.step, Step::Join(_))).count();
    let partitions: i64 = s.topics.values().map(|n| i64::from(*n)).sum::<i64>()
        + s.steps
            .iter()
            .map(|st| match st.step {
                Step::CreateTopic { partitions, .. } => i64::from(partitions),
                Step::AddPartitions { count, .. } => i64::from(count),
                _ => 0,
            })
            .sum::<i64>();
    if members > SVG_MAX_MEMBERS || partitions > SVG_MAX_PARTITIONS {
        return Err(CliError::input(format!(
            "--svg draws at most {SVG_MAX_MEMBERS} members and {SVG_MAX_PARTITIONS} partitions (this scenario has \
             {members} and {partitions}); run without --svg for the JSON timeline"
        )));
    }
    Ok(())
}

/// Runs the scenario and prints `{"timeline", "summary"}`, the timeline as it happens.
pub fn run_simulate(args: &SimulateArgs, out: &mut Out) -> Result<(), CliError> {
    let text = if args.example { EXAMPLE.as_bytes().to_vec() } else { read_document(&args.scenario)? };
    let text = std::str::from_utf8(&text).map_err(|e| CliError::input(format!("the scenario is not UTF-8: {e}")))?;
    let scenario = json::parse_scenario(text).map_err(|e| match e.kind() {
        json::ScenarioErrorKind::Shape => CliError::usage(e.to_string()),
        _ => CliError::input(e.to_string()),
    })?;
    if args.svg.is_some() {
        check_svg_size(&scenario)?;
    }
    let mut kept: Vec<TimelineEntry> = Vec::new();
    let mut first = true;
    let mut failed: Option<std::io::Error> = None;
    let keep = args.svg.is_some();
    out.text("{\n  \"timeline\": [")?;
    let result = {
        let w = out.writer();
        let mut on_entry = |e: &TimelineEntry| -> bool {
            let sep = if first { "\n    " } else { ",\n    " };
            first = false;
            if let Err(err) = write!(w, "{sep}{}", indented(&json::entry_json(e), "    ")) {
                failed = Some(err);
                return false;
            }
            if keep {
                kept.push(e.clone());
            }
            true
        };
        run_with(&scenario, &mut on_entry)
    };
    if let Some(e) = failed {
        return Err(CliError::Output(WriteFailed(e)));
    }
    let close = if first { "],\n" } else { "\n  ],\n" };
    let outcome: Outcome = match result {
        Ok(o) => o,
        Err(e) => {
            // The timeline so far is already out: the document ends with the error instead of a
            // summary, so it is still one JSON object with an "error" key.
            let error = CliError::input(format!("invalid scenario: {e}")).json_error();
            out.text(&format!("{close}  \"error\": {}\n}}\n", indented(&error, "  ")))?;
            return Err(CliError::Reported);
        }
    };
    out.text(&format!("{close}  \"summary\": {}\n}}\n", indented(&json::summary_json(&outcome.summary), "  ")))?;
    if let Some(path) = &args.svg {
        let picture = svg::render(&Outcome { timeline: kept, ..outcome.clone() });
        std::fs::write(path, picture).map_err(|e| CliError::input(format!("cannot write {path}: {e}")))?;
    }
    if let Some(limit) = outcome.summary.unconverged.iter().find(|u| u.contains("config.max_events")) {
        super::out::note(&format!("kcp: {limit}"));
        return Err(CliError::Reported);
    }
    Ok(())
}
