//! `kcp`: decode, encode and check Kafka consumer-group protocol payloads, run assignors and
//! simulate groups. Its JSON output is a contract (see the README).

// The binary does arguments and I/O; the input documents are parsed by the library
// (`codec::json`, `assignor::json`, `sim::json`), which the fuzz targets call directly.
mod assign;
mod conform;
mod decode;
mod encode;
mod group;
mod input;
mod out;
mod pcap;
mod serve;
mod shapes;
mod simulate;
mod text;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use kafka_consumer_protocol::client::{ClientError, ConfigError};
use kafka_consumer_protocol::codec::json::{DocumentError, DocumentErrorKind};
use kafka_consumer_protocol::DecodeError;
use serde_json::json;

pub use out::{Out, WriteFailed};

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
    /// Bad hex, base64, JSON or file, or a limit exceeded (exit 1, kind `invalid_input`).
    Input(String),
    /// The input document has the wrong shape: an unknown key, a value of the wrong type, a
    /// document of another kind (exit 2, like the command-line usage errors).
    Usage(String),
    /// A connection setting that cannot be honoured or is missing (exit 2, like the usage
    /// errors; the message names the setting).
    Config(String),
    /// The cluster could not be reached, refused, or answered an error (exit 1, the error object
    /// `{"kind", "message"}` of the contract's `kcp group` commands).
    Client(ClientError),
    /// Writing the output failed.
    Output(WriteFailed),
    /// The command failed and has already said why (exit 1, nothing more to print).
    Reported,
    /// The command printed its whole answer, but with gaps it reported where they are (exit 3,
    /// nothing more to print): `kcp group describe`'s offsets.
    Partial,
    /// The command printed its whole answer and it is "no" (exit 4, nothing more to print):
    /// `kcp group upgrade-check`'s `blocked` verdict, so that a pipeline can stop on it.
    Blocked,
}

impl From<WriteFailed> for CliError {
    fn from(e: WriteFailed) -> Self {
        CliError::Output(e)
    }
}

impl From<ClientError> for CliError {
    fn from(e: ClientError) -> Self {
        CliError::Client(e)
    }
}

impl From<DocumentError> for CliError {
    /// A document of the wrong shape is a usage error (exit 2); one that is not JSON or holds an
    /// unusable value is invalid input (exit 1).
    fn from(e: DocumentError) -> Self {
        match e.kind() {
            DocumentErrorKind::Shape => CliError::Usage(e.to_string()),
            _ => CliError::Input(e.to_string()),
        }
    }
}

impl CliError {
    /// An `invalid_input` error.
    pub fn input(message: impl Into<String>) -> Self {
        CliError::Input(message.into())
    }

    /// A usage error (exit status 2).
    pub fn usage(message: impl Into<String>) -> Self {
        CliError::Usage(message.into())
    }

    /// A [`ConfigError`] (exit status 2).
    pub fn config(e: ConfigError) -> Self {
        CliError::Config(text::clean(&e.to_string()).into_owned())
    }

    /// The `{"kind", "offset", "field", "message"}` object inside `{"error": ...}`.
    pub fn json_error(&self) -> serde_json::Value {
        let mut value = self.json();
        value["error"].take()
    }

    fn json(&self) -> serde_json::Value {
        match self {
            CliError::Reported => json!({"error": {"kind": "reported"}}),
            CliError::Partial => json!({"error": {"kind": "partial"}}),
            CliError::Blocked => json!({"error": {"kind": "blocked"}}),
            CliError::Decode(e) => shapes::decode_error_json(e),
            CliError::Input(m) | CliError::Usage(m) => {
                json!({"error": {"kind": "invalid_input", "offset": null, "field": null, "message": m}})
            }
            CliError::Client(e) => client_error_json(e),
            CliError::Config(m) => json!({"error": {"kind": "invalid_input", "message": m}}),
            CliError::Output(e) => json!({"error": {"kind": "output", "message": e.0.to_string()}}),
        }
    }

    fn line(&self) -> String {
        match self {
            CliError::Decode(e) => e.to_string(),
            CliError::Input(m) => format!("invalid input: {m}"),
            CliError::Usage(m) => format!("error: {m}"),
            CliError::Config(m) => m.clone(),
            CliError::Client(e) => format!("{}: {}", e.kind(), text::clean(e.message())),
            CliError::Output(e) => format!("cannot write the output: {}", e.0),
            CliError::Reported | CliError::Partial | CliError::Blocked => String::new(),
        }
    }
}

/// A client error as the contract's `kcp group` commands show it: `{"error": {"kind", "message"}}`.
pub fn client_error_json(e: &ClientError) -> serde_json::Value {
    json!({"error": {"kind": e.kind().as_str(), "message": e.message()}})
}

#[derive(Parser, Debug)]
#[command(
    name = "kcp",
    version,
    about = "Kafka consumer-group protocol tool: decode, encode, compat, assign, simulate, pcap, group"
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
    Compat(decode::CompatArgs),
    /// Decode the JoinGroup/SyncGroup traffic of a pcap/pcapng capture.
    ///
    /// Prints one JSON object per message on stdout (or, with `--format text`, the group's story
    /// by generation). What was skipped (non-Kafka traffic, retransmissions, gaps, undecodable
    /// frames, a truncated capture) is summarised as the last line on stderr:
    /// `{"summary": {...}}`. Exit status 0 also for a truncated capture; 1 when the file cannot be
    /// opened, is not a pcap/pcapng capture, or is corrupt at some point (reading stops there; the
    /// summary's `capture_error` says where).
    Pcap(pcap::PcapArgs),
    /// Judge every group and member of a capture against the client conformance rules.
    ///
    /// Reads the capture as `kcp pcap` does (streamed) and writes the report (JSON, or text with
    /// `--format text`); the capture summary goes to stderr as `kcp pcap`'s. Exit status 0 when
    /// no rule fails, 4 when one does, 1 when the capture cannot be read, 2 usage.
    Conform(conform::ConformArgs),
    /// Run a whole consumer group in virtual time (scenario file in, timeline out).
    Simulate(simulate::SimulateArgs),
    /// Run a built-in assignor on a group described in JSON.
    Assign(assign::AssignArgs),
    /// A running cluster's consumer groups: list, describe (decoded, with offsets, lag and
    /// diagnostics), watch, history (from __consumer_offsets), upgrade-check (KIP-848), join (a
    /// real member), reset-offsets, delete-offsets, delete.
    #[command(subcommand)]
    Group(group::GroupCommand),
    /// Collect every consumer group of one or more clusters in the background and serve the
    /// latest snapshot: Prometheus metrics (/metrics), a Burrow-compatible API (/v3/kafka),
    /// kcp's API with change events (/api/v1), /healthz and /readyz. Read-only; binds loopback
    /// unless --listen says otherwise.
    Serve(serve::ServeArgs),
}

/// Ends a command: flushes its output and maps the result to the exit status. The binary's one
/// exit policy: every command, `kcp group` included, ends here.
///
/// Exit status: 0 success (also when stdout is a pipe that was closed, and for a command that
/// runs until interrupted, on SIGINT/SIGTERM), 1 invalid input, a cluster that failed, a
/// failure the command already reported (an unknown group: `not_found`), or an output that
/// could not be written, 2 usage error or a connection setting that cannot be honoured, 3 an
/// answer with gaps (`describe`), 4 a `blocked` upgrade verdict. Errors go to stdout as
/// JSON (json format) or to stderr (text); usage and setting errors always to stderr, as clap's.
pub fn finish(result: Result<(), CliError>, format: Format, out: &mut Out) -> ExitCode {
    let error = match result.and_then(|()| out.flush().map_err(CliError::Output)) {
        Ok(()) => return ExitCode::SUCCESS,
        Err(e) => e,
    };
    // What reporting the error wrote, and the status the error itself calls for.
    let (reported, status) = match error {
        CliError::Output(e) => (Err(e), 0),
        CliError::Reported => (Ok(()), 1),
        CliError::Partial => (Ok(()), 3),
        CliError::Blocked => (Ok(()), 4),
        CliError::Usage(_) | CliError::Config(_) => {
            out::note(&format!("kcp: {}", error.line()));
            return ExitCode::from(2);
        }
        _ if format == Format::Json => (out.json_pretty(&error.json()).and_then(|()| out.flush()), 1),
        _ => {
            out::note(&format!("kcp: {}", error.line()));
            (Ok(()), 1)
        }
    };
    match reported {
        // The reader has gone: nobody to tell, and nothing it wanted was lost.
        Err(e) if e.is_closed_pipe() => ExitCode::from(status),
        Err(e) => {
            out::note(&format!("kcp: {}", CliError::Output(e).line()));
            ExitCode::from(1)
        }
        Ok(()) => ExitCode::from(status),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut out = Out::stdout();
    let (result, format) = match cli.command {
        Command::Decode(args) => (decode::run_decode(&args, &mut out), args.format),
        Command::Compat(args) => (decode::run_compat(&args, &mut out), args.decode.format),
        Command::Encode(args) => (encode::run_encode(&args, &mut out), Format::Json),
        Command::Pcap(args) => (pcap::run_pcap(&args, &mut out), args.format),
        Command::Conform(args) => (conform::run_conform(&args, &mut out), args.format),
        Command::Simulate(args) => (simulate::run_simulate(&args, &mut out), Format::Json),
        Command::Assign(args) => (assign::run_assign(&args, &mut out), Format::Json),
        Command::Group(command) => (group::run_group(&command, &mut out), command.format()),
        Command::Serve(args) => (serve::run_serve(&args), Format::Text),
    };
    finish(result, format, &mut out)
}
