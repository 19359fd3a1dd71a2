//! `kcp`: decode, encode and check Kafka consumer-group protocol payloads, run assignors and
//! simulate groups. Its JSON output is a contract (see the README).

mod assign;
mod decode;
mod encode;
mod group;
mod input;
mod pcap;
mod shapes;
mod simulate;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use kafka_consumer_protocol::DecodeError;
use serde_json::{json, Value};

/// Output format.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// The JSON contract.
    Json,
    /// Human-friendly text.
    Text,
}

/// Why a command did not produce its normal output.
#[derive(Debug)]
pub enum CliError {
    /// The payload was read but is invalid.
    Decode(DecodeError),
    /// Bad hex, base64, JSON or file (exit 1, kind `invalid_input`).
    Input(String),
}

/// What a command prints on success.
#[derive(Debug)]
pub enum Output {
    /// A JSON document (pretty-printed).
    Json(Value),
    /// Rendered text, printed as is.
    Text(String),
}

impl CliError {
    /// An `invalid_input` error.
    pub fn input(message: impl Into<String>) -> Self {
        CliError::Input(message.into())
    }

    fn json(&self) -> Value {
        match self {
            CliError::Decode(e) => shapes::decode_error_json(e),
            CliError::Input(m) => {
                json!({"error": {"kind": "invalid_input", "offset": null, "field": null, "message": m}})
            }
        }
    }

    fn line(&self) -> String {
        match self {
            CliError::Decode(e) => e.to_string(),
            CliError::Input(m) => format!("invalid input: {m}"),
        }
    }
}

#[derive(Parser, Debug)]
#[command(
    name = "kcp",
    version,
    about = "Kafka consumer-group protocol tool: decode, encode, compat, assign, simulate, pcap"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Decode a Subscription or Assignment payload.
    Decode(decode::DecodeArgs),
    /// Encode a Subscription or Assignment from its JSON shape.
    Encode(encode::EncodeArgs),
    /// Show what every reader version 0..=3 sees of one payload.
    Compat(decode::DecodeArgs),
    /// Decode the JoinGroup/SyncGroup traffic of a pcap/pcapng capture.
    ///
    /// Prints one JSON object per message on stdout (or, with `--format text`, the group's story
    /// by generation). What was skipped (non-Kafka traffic, retransmissions, gaps, undecodable
    /// frames, a truncated capture) is summarised as the last line on stderr:
    /// `{"summary": {...}}`. Exit status 0 also for a truncated capture; 1 when the file cannot be
    /// opened or is not a pcap/pcapng capture.
    Pcap(pcap::PcapArgs),
    /// Run a whole consumer group in virtual time (scenario file in, timeline out).
    Simulate(simulate::SimulateArgs),
    /// Run a built-in assignor on a group described in JSON.
    Assign(assign::AssignArgs),
    /// A running cluster's consumer groups: list, describe (decoded, with diagnostics), watch.
    #[command(subcommand)]
    Group(group::GroupCommand),
}

fn print_json(value: &Value) {
    println!("{}", serde_json::to_string_pretty(value).expect("JSON values serialize"));
}

/// Prints a command's result; errors go to stdout as JSON (json format) or stderr (text).
/// Exit status: 0 success, 1 invalid input (usage errors exit 2 through clap).
pub fn finish(result: Result<Output, CliError>, format: Format) -> ExitCode {
    match result {
        Ok(Output::Json(value)) => {
            print_json(&value);
            ExitCode::SUCCESS
        }
        Ok(Output::Text(text)) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            match format {
                Format::Json => print_json(&e.json()),
                Format::Text => eprintln!("kcp: {}", e.line()),
            }
            ExitCode::from(1)
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Decode(args) => finish(decode::run_decode(&args), args.format),
        Command::Compat(args) => finish(decode::run_compat(&args), args.format),
        Command::Encode(args) => finish(encode::run_encode(&args), Format::Json),
        Command::Pcap(args) => pcap::run_pcap(&args),
        Command::Simulate(args) => finish(simulate::run_simulate(&args), Format::Json),
        Command::Assign(args) => finish(assign::run_assign(&args), Format::Json),
        Command::Group(command) => group::run_group(&command, &mut group::Out::stdout()),
    }
}
