//! `kcp decode` and `kcp compat`.

use kafka_consumer_protocol::{AssignmentView, DecodeError, DecodeOptions, SubscriptionView, Version};
use serde_json::{json, Value};

use crate::input::PayloadInput;
use crate::shapes::{assignment_json, decode_error_json, subscription_json};
use crate::{CliError, Format, Output};

/// Which message the payload is.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum KindArg {
    /// ConsumerProtocolSubscription (JoinGroup protocol metadata).
    Subscription,
    /// ConsumerProtocolAssignment (SyncGroup assignment).
    Assignment,
    /// The kind whose layout reads the whole payload exactly (subscription on a tie).
    Auto,
}

/// Options shared by `decode` and `compat`.
#[derive(clap::Args, Debug, Clone)]
pub struct DecodeArgs {
    /// Which message the payload is.
    #[arg(long, value_enum, default_value = "auto")]
    pub kind: KindArg,
    /// Decode as a reader that knows versions up to N (what an older consumer sees).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(0..=3))]
    pub reader_version: Option<u8>,
    /// Trailing bytes (and nullable lengths below -1) are errors.
    #[arg(long)]
    pub strict: bool,
    /// Accept the malformed payloads real clients send and name the repair in `warnings`.
    #[arg(long)]
    pub lenient: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "json")]
    pub format: Format,
    #[command(flatten)]
    pub input: PayloadInput,
}

impl DecodeArgs {
    fn options(&self) -> DecodeOptions {
        let reader = self.reader_version.map_or(Version::LATEST, |v| Version::try_from(v as i16).unwrap_or_default());
        DecodeOptions::new().reader_version(reader).strict(self.strict).lenient(self.lenient)
    }
}

/// One payload decoded as one kind.
pub enum Decoded<'a> {
    /// A subscription.
    Subscription(SubscriptionView<'a>),
    /// An assignment.
    Assignment(AssignmentView<'a>),
}

impl Decoded<'_> {
    /// The decode JSON shape.
    pub fn to_json(&self) -> Value {
        match self {
            Decoded::Subscription(s) => subscription_json(s),
            Decoded::Assignment(a) => assignment_json(a),
        }
    }
}

/// Decodes as `kind`, resolving `auto` by which layout reads the payload exactly.
pub fn decode_kind<'a>(
    bytes: &'a [u8],
    kind: KindArg,
    options: DecodeOptions,
) -> Result<(Decoded<'a>, Option<String>), DecodeError> {
    match kind {
        KindArg::Subscription => Ok((Decoded::Subscription(SubscriptionView::decode_with(bytes, options)?), None)),
        KindArg::Assignment => Ok((Decoded::Assignment(AssignmentView::decode_with(bytes, options)?), None)),
        KindArg::Auto => {
            let sub = SubscriptionView::decode_with(bytes, options);
            let asg = AssignmentView::decode_with(bytes, options);
            let sub_exact = sub.as_ref().is_ok_and(|s| s.trailing_bytes() == 0);
            let asg_exact = asg.as_ref().is_ok_and(|a| a.trailing_bytes() == 0);
            match (sub, asg) {
                (Ok(s), Ok(_)) if sub_exact && asg_exact => Ok((
                    Decoded::Subscription(s),
                    Some(
                        "--kind auto: the payload reads exactly as both a subscription and an assignment; \
                          shown as a subscription (pass --kind assignment for the other reading)"
                            .to_owned(),
                    ),
                )),
                (_, Ok(a)) if asg_exact && !sub_exact => Ok((Decoded::Assignment(a), None)),
                (Ok(s), _) => Ok((Decoded::Subscription(s), None)),
                (Err(_), Ok(a)) => Ok((Decoded::Assignment(a), None)),
                (Err(e), Err(_)) => Err(e),
            }
        }
    }
}

fn text_of(value: &Value) -> String {
    let mut out = String::new();
    if let Some(obj) = value.as_object() {
        for (k, v) in obj {
            if k == "warnings" {
                for w in v.as_array().into_iter().flatten() {
                    out.push_str(&format!("warning: {}\n", w.as_str().unwrap_or_default()));
                }
                continue;
            }
            let shown = match v {
                Value::Array(items) if items.iter().all(|i| i.get("topic").is_some()) => items
                    .iter()
                    .map(|i| format!("{}{}", i["topic"].as_str().unwrap_or_default(), i["partitions"]))
                    .collect::<Vec<_>>()
                    .join(" "),
                Value::Null => "null".to_owned(),
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            out.push_str(&format!("{k:<17} {shown}\n"));
        }
    }
    out
}

/// `kcp decode`.
pub fn run_decode(args: &DecodeArgs) -> Result<Output, CliError> {
    let bytes = args.input.read()?;
    let (decoded, note) = decode_kind(&bytes, args.kind, args.options()).map_err(CliError::Decode)?;
    let mut value = decoded.to_json();
    if let Some(note) = note {
        value["warnings"].as_array_mut().expect("warnings is an array").push(Value::String(note));
    }
    Ok(match args.format {
        Format::Text => Output::Text(text_of(&value)),
        Format::Json => Output::Json(value),
    })
}

/// Fields appended after v0, with the version that added them.
const SUBSCRIPTION_FIELDS: [(Version, &str); 3] =
    [(Version::V1, "owned_partitions"), (Version::V2, "generation_id"), (Version::V3, "rack_id")];

/// `kcp compat`: what every reader version sees of one payload. A payload that only older
/// readers can read (for example a v2 that ends before its generation) still gets a full table.
pub fn run_compat(args: &DecodeArgs) -> Result<Output, CliError> {
    let bytes = args.input.read()?;
    let base = args.options().reader_version(Version::LATEST);
    let mut newest_first = Version::ALL;
    newest_first.reverse();
    let mut first_error = None;
    let mut resolved = None;
    for reader in newest_first {
        match decode_kind(&bytes, args.kind, base.reader_version(reader)) {
            Ok(found) => {
                resolved = Some(found);
                break;
            }
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    let Some((decoded, note)) = resolved else {
        return Err(CliError::Decode(first_error.expect("at least one reader ran")));
    };
    let (kind, written) = match &decoded {
        Decoded::Subscription(s) => (KindArg::Subscription, s.version()),
        Decoded::Assignment(a) => (KindArg::Assignment, a.version()),
    };
    let written_layout = Version::layout_for_wire(written).unwrap_or(Version::LATEST);
    let readers: Vec<Value> = Version::ALL
        .iter()
        .map(|&reader| match decode_kind(&bytes, kind, base.reader_version(reader)) {
            Ok((d, _)) => {
                let dropped: Vec<&str> = match kind {
                    KindArg::Subscription => SUBSCRIPTION_FIELDS
                        .iter()
                        .filter(|(v, _)| *v <= written_layout && *v > reader)
                        .map(|(_, f)| *f)
                        .collect(),
                    _ => Vec::new(),
                };
                json!({"reader_version": reader.as_i16(), "ok": true, "decoded": d.to_json(), "dropped_fields": dropped})
            }
            Err(e) => json!({"reader_version": reader.as_i16(), "ok": false,
                             "error": decode_error_json(&e)["error"].clone(), "dropped_fields": []}),
        })
        .collect();
    let value = json!({
        "kind": if kind == KindArg::Subscription { "subscription" } else { "assignment" },
        "written_version": written,
        "readers": readers,
        "warnings": note.into_iter().collect::<Vec<_>>(),
    });
    if args.format == Format::Text {
        let mut out = format!("{} written as version {written}\n", value["kind"].as_str().unwrap_or_default());
        for r in value["readers"].as_array().into_iter().flatten() {
            let status = if r["ok"] == true { "reads it".to_owned() } else { format!("fails: {}", r["error"]) };
            let dropped = r["dropped_fields"].as_array().map(|d| d.len()).unwrap_or(0);
            out.push_str(&format!(
                "reader v{}: {status}{}\n",
                r["reader_version"],
                if dropped > 0 { format!(", ignores {}", r["dropped_fields"]) } else { String::new() }
            ));
        }
        return Ok(Output::Text(out));
    }
    Ok(Output::Json(value))
}
