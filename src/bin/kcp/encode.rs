//! `kcp encode`.

use std::io::Read;

use kafka_consumer_protocol::Version;
use serde_json::Value;

use crate::input::to_hex;
use crate::shapes::{assignment_from, subscription_from};
use crate::{CliError, Output};

/// Which message to encode.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum EncodeKind {
    /// ConsumerProtocolSubscription.
    Subscription,
    /// ConsumerProtocolAssignment.
    Assignment,
}

/// `kcp encode` arguments.
#[derive(clap::Args, Debug, Clone)]
pub struct EncodeArgs {
    /// Which message.
    #[arg(long, value_enum)]
    pub kind: EncodeKind,
    /// Version to write; above 3 is written as 3, as Apache Kafka's Java client does.
    #[arg(long, value_parser = clap::value_parser!(i16).range(0..))]
    pub version: i16,
    /// The decode-shaped JSON, from a file or `-` for stdin.
    #[arg(value_name = "JSON-FILE | -", default_value = "-")]
    pub json: String,
}

/// `kcp encode`: prints lowercase hex.
pub fn run_encode(args: &EncodeArgs) -> Result<Output, CliError> {
    let text = if args.json == "-" {
        let mut s = String::new();
        std::io::stdin().read_to_string(&mut s).map_err(|e| CliError::input(format!("cannot read stdin: {e}")))?;
        s
    } else {
        std::fs::read_to_string(&args.json).map_err(|e| CliError::input(format!("cannot read {}: {e}", args.json)))?
    };
    let value: Value = serde_json::from_str(&text).map_err(|e| CliError::input(format!("invalid JSON: {e}")))?;
    let version = Version::try_from(args.version.min(Version::LATEST.as_i16())).unwrap_or(Version::LATEST);
    let bytes = match args.kind {
        EncodeKind::Subscription => subscription_from(&value)?.encode(version),
        EncodeKind::Assignment => assignment_from(&value)?.encode(version),
    }
    .map_err(|e| CliError::input(e.to_string()))?;
    Ok(Output::Text(to_hex(&bytes) + "\n"))
}
