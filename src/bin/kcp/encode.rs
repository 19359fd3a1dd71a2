//! `kcp encode`.

use kafka_consumer_protocol::Version;

use crate::input::{read_document, to_hex};
use crate::shapes::{parse_document, AssignmentShape, SubscriptionShape};
use crate::{CliError, Out};

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
pub fn run_encode(args: &EncodeArgs, out: &mut Out) -> Result<(), CliError> {
    let text = read_document(&args.json)?;
    let version = Version::try_from(args.version.min(Version::LATEST.as_i16())).unwrap_or(Version::LATEST);
    let bytes = match args.kind {
        EncodeKind::Subscription => {
            parse_document::<SubscriptionShape>(&text, "the subscription")?.into_subscription("")?.encode(version)
        }
        EncodeKind::Assignment => {
            parse_document::<AssignmentShape>(&text, "the assignment")?.into_assignment()?.encode(version)
        }
    }
    .map_err(|e| CliError::input(e.to_string()))?;
    out.text(&to_hex(&bytes))?;
    out.text("\n")?;
    Ok(())
}
