//! `kcp encode`.

use kafka_consumer_protocol::codec::json::{assignment_from_json, subscription_from_json};
use kafka_consumer_protocol::Version;

use super::input::{read_document, to_hex};
use super::{CliError, Out};

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

/// The payload a decode-shaped JSON document describes (the document is read by
/// `codec::json`).
fn encode_document(text: &[u8], kind: EncodeKind, version: i16) -> Result<Vec<u8>, CliError> {
    let version = Version::try_from(version.clamp(0, Version::LATEST.as_i16())).unwrap_or(Version::LATEST);
    match kind {
        EncodeKind::Subscription => subscription_from_json(text)?.encode(version),
        EncodeKind::Assignment => assignment_from_json(text)?.encode(version),
    }
    .map_err(|e| CliError::input(e.to_string()))
}

/// `kcp encode`: prints lowercase hex.
pub fn run_encode(args: &EncodeArgs, out: &mut Out) -> Result<(), CliError> {
    let text = read_document(&args.json)?;
    let bytes = encode_document(&text, args.kind, args.version)?;
    out.text(&to_hex(&bytes))?;
    out.text("\n")?;
    Ok(())
}
