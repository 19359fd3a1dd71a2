//! `kcp simulate`.

use std::io::Read;

use kafka_consumer_protocol::sim::{json, run, svg};

use crate::{CliError, Output};

/// The scenario `--example` runs: the KIP-429 two-rolling-bounce upgrade from range to
/// cooperative-sticky.
pub const EXAMPLE: &str = include_str!("../../../testdata/scenarios/rolling-upgrade.json");

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

/// Runs the scenario and prints `{"timeline", "summary"}`.
pub fn run_simulate(args: &SimulateArgs) -> Result<Output, CliError> {
    let text = if args.example {
        EXAMPLE.to_string()
    } else if args.scenario == "-" {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s).map_err(|e| CliError::input(format!("cannot read stdin: {e}")))?;
        s
    } else {
        std::fs::read_to_string(&args.scenario)
            .map_err(|e| CliError::input(format!("cannot read {}: {e}", args.scenario)))?
    };
    let scenario = json::parse_scenario(&text).map_err(CliError::input)?;
    let outcome = run(&scenario).map_err(|e| CliError::input(format!("invalid scenario: {e}")))?;
    if let Some(path) = &args.svg {
        std::fs::write(path, svg::render(&outcome))
            .map_err(|e| CliError::input(format!("cannot write {path}: {e}")))?;
    }
    Ok(Output::Json(json::outcome_json(&outcome)))
}
