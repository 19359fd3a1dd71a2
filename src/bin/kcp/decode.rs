//! `kcp decode` and `kcp compat`.

use std::io::Write;

use kafka_consumer_protocol::codec::TopicPartitionsList;
use kafka_consumer_protocol::{AssignmentView, DecodeError, DecodeOptions, SubscriptionView, Version};
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

use super::input::{to_hex, PayloadInput};
use super::shapes::{assignment_warnings, decode_error_json, subscription_warnings, AssignmentJson, SubscriptionJson};
use super::text::clean;
use super::{CliError, Format, Out, WriteFailed};

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
    #[arg(long, conflicts_with = "lenient")]
    pub strict: bool,
    /// Accept the malformed payloads real clients send and name the repair in `warnings`.
    #[arg(long)]
    pub lenient: bool,
    /// Output format.
    #[arg(long, value_enum, default_value = "json")]
    pub format: Format,
    // Where the payload comes from (clap takes a flattened field's help from its own fields).
    #[allow(missing_docs)]
    #[command(flatten)]
    pub input: PayloadInput,
}

/// `kcp compat` arguments: those of `decode`; `--reader-version` is refused, since compat shows
/// every reader version.
#[derive(clap::Args, Debug, Clone)]
pub struct CompatArgs {
    // The options of `decode`.
    #[allow(missing_docs)]
    #[command(flatten)]
    pub decode: DecodeArgs,
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

/// The decode shape of either kind, with notes added to its warnings.
pub struct DecodedJson<'v, 'a> {
    decoded: &'v Decoded<'a>,
    notes: &'v [String],
}

impl Serialize for DecodedJson<'_, '_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.decoded {
            Decoded::Subscription(view) => SubscriptionJson { view, notes: self.notes }.serialize(s),
            Decoded::Assignment(view) => AssignmentJson { view, notes: self.notes }.serialize(s),
        }
    }
}

/// Decodes as `kind`, resolving `auto` by which layout reads the payload exactly. The notes say
/// how `auto` chose when that is not plain (a tie, or a fall-back and why the other kind failed).
pub fn decode_kind(
    bytes: &[u8],
    kind: KindArg,
    options: DecodeOptions,
) -> Result<(Decoded<'_>, Vec<String>), DecodeError> {
    match kind {
        KindArg::Subscription => {
            Ok((Decoded::Subscription(SubscriptionView::decode_with(bytes, options)?), Vec::new()))
        }
        KindArg::Assignment => Ok((Decoded::Assignment(AssignmentView::decode_with(bytes, options)?), Vec::new())),
        KindArg::Auto => {
            // The kind is chosen by the whole layout, as the newest reader sees it: an older
            // reader (--reader-version) ignores the newer fields, so its trailing bytes say
            // nothing about the kind, and the other kind's failure would only confuse (a v3
            // subscription read as a v0 assignment "needs 33554432 bytes"). The payload is
            // then read as the chosen kind by the reader asked for.
            let probe = options.reader_version(Version::LATEST);
            let sub = SubscriptionView::decode_with(bytes, probe);
            let asg = AssignmentView::decode_with(bytes, probe);
            let sub_exact = sub.as_ref().is_ok_and(|s| s.trailing_bytes() == 0);
            let asg_exact = asg.as_ref().is_ok_and(|a| a.trailing_bytes() == 0);
            let why_not = |what: &str, result: Result<usize, &DecodeError>| match result {
                Ok(trailing) => format!("as {what} it leaves {trailing} trailing bytes"),
                Err(e) => format!("as {what} it does not decode: {e}"),
            };
            let (kind, notes) = if sub_exact && asg_exact {
                let note = "--kind auto: the payload reads exactly as both a subscription and an assignment; \
                            shown as a subscription (pass --kind assignment for the other reading)";
                (KindArg::Subscription, vec![note.to_owned()])
            } else if asg_exact {
                let reason = why_not("a subscription", sub.as_ref().map(|s| s.trailing_bytes()));
                let note =
                    format!("--kind auto: read as an assignment, since {reason} (pass --kind subscription to insist)");
                (KindArg::Assignment, vec![note])
            } else {
                match &sub {
                    Ok(_) if sub_exact => (KindArg::Subscription, Vec::new()),
                    Ok(_) => {
                        let reason = why_not("an assignment", asg.as_ref().map(|a| a.trailing_bytes()));
                        (
                            KindArg::Subscription,
                            vec![format!("--kind auto: read as a subscription, which reads the most; {reason}")],
                        )
                    }
                    Err(e) if asg.is_ok() => {
                        let reason = why_not("a subscription", Err(e));
                        (KindArg::Assignment, vec![format!("--kind auto: read as an assignment, since {reason}")])
                    }
                    // Neither kind decodes: the subscription's error, read as asked.
                    Err(_) => (KindArg::Subscription, Vec::new()),
                }
            };
            let (decoded, _) = decode_kind(bytes, kind, options)?;
            Ok((decoded, notes))
        }
    }
}

fn partitions_text(w: &mut dyn Write, list: TopicPartitionsList<'_>) -> std::io::Result<()> {
    for (i, g) in list.iter().enumerate() {
        if i > 0 {
            w.write_all(b" ")?;
        }
        write!(w, "{}[", clean(g.topic))?;
        for (j, p) in g.partitions.iter().enumerate() {
            write!(w, "{}{p}", if j > 0 { "," } else { "" })?;
        }
        w.write_all(b"]")?;
    }
    Ok(())
}

fn text_of(w: &mut dyn Write, decoded: &Decoded<'_>, notes: &[String]) -> std::io::Result<()> {
    let row = |w: &mut dyn Write, key: &str, value: &dyn std::fmt::Display| writeln!(w, "{key:<17} {value}");
    let null_or = |s: Option<String>| s.unwrap_or_else(|| "null".into());
    let warnings = match decoded {
        Decoded::Subscription(s) => {
            row(w, "kind", &"subscription")?;
            row(w, "version", &s.version())?;
            row(w, "read_as_version", &s.read_as().as_i16())?;
            write!(w, "{:<17} [", "topics")?;
            for (i, t) in s.topics().iter().enumerate() {
                write!(w, "{}\"{}\"", if i > 0 { "," } else { "" }, clean(t))?;
            }
            writeln!(w, "]")?;
            row(w, "user_data", &null_or(s.user_data().map(to_hex)))?;
            write!(w, "{:<17} ", "owned_partitions")?;
            partitions_text(w, s.owned_partitions())?;
            writeln!(w)?;
            row(w, "generation_id", &s.generation_id())?;
            row(w, "rack_id", &null_or(s.rack_id().map(|r| clean(r).into_owned())))?;
            row(w, "trailing_bytes", &s.trailing_bytes())?;
            subscription_warnings(s)
        }
        Decoded::Assignment(a) => {
            row(w, "kind", &"assignment")?;
            row(w, "version", &a.version())?;
            row(w, "read_as_version", &a.read_as().as_i16())?;
            write!(w, "{:<17} ", "assigned_partitions")?;
            partitions_text(w, a.assigned_partitions())?;
            writeln!(w)?;
            row(w, "user_data", &null_or(a.user_data().map(to_hex)))?;
            row(w, "trailing_bytes", &a.trailing_bytes())?;
            assignment_warnings(a)
        }
    };
    for warning in warnings.iter().chain(notes) {
        writeln!(w, "warning: {}", clean(warning))?;
    }
    Ok(())
}

/// `kcp decode`.
pub fn run_decode(args: &DecodeArgs, out: &mut Out) -> Result<(), CliError> {
    let bytes = args.input.read()?;
    let (decoded, notes) = decode_kind(&bytes, args.kind, args.options()).map_err(CliError::Decode)?;
    match args.format {
        Format::Text => text_of(out.writer(), &decoded, &notes).map_err(WriteFailed)?,
        Format::Json => out.json_pretty(&DecodedJson { decoded: &decoded, notes: &notes })?,
    }
    Ok(())
}

/// Fields appended after v0, with the version that added them.
const SUBSCRIPTION_FIELDS: [(Version, &str); 3] =
    [(Version::V1, "owned_partitions"), (Version::V2, "generation_id"), (Version::V3, "rack_id")];

/// One reader's line of the compat table, decoded when it is written.
struct ReaderJson<'a> {
    bytes: &'a [u8],
    kind: KindArg,
    written_layout: Version,
    options: DecodeOptions,
}

impl ReaderJson<'_> {
    fn dropped(&self, reader: Version) -> Vec<&'static str> {
        match self.kind {
            KindArg::Subscription => SUBSCRIPTION_FIELDS
                .iter()
                .filter(|(v, _)| *v <= self.written_layout && *v > reader)
                .map(|(_, f)| *f)
                .collect(),
            _ => Vec::new(),
        }
    }
}

impl Serialize for ReaderJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let reader = self.options.get_reader_version();
        let mut m = s.serialize_map(Some(4))?;
        m.serialize_entry("reader_version", &reader.as_i16())?;
        match decode_kind(self.bytes, self.kind, self.options) {
            Ok((decoded, _)) => {
                m.serialize_entry("ok", &true)?;
                m.serialize_entry("decoded", &DecodedJson { decoded: &decoded, notes: &[] })?;
                m.serialize_entry("dropped_fields", &self.dropped(reader))?;
            }
            Err(e) => {
                m.serialize_entry("ok", &false)?;
                m.serialize_entry("error", &decode_error_json(&e)["error"])?;
                m.serialize_entry("dropped_fields", &[] as &[&str])?;
            }
        }
        m.end()
    }
}

/// `kcp compat`: what every reader version sees of one payload. A payload that only older
/// readers can read (for example a v2 that ends before its generation) still gets a full table.
/// Each reader's decoding is written as it is made: the payload is never held as JSON.
pub fn run_compat(args: &CompatArgs, out: &mut Out) -> Result<(), CliError> {
    let args = &args.decode;
    if args.reader_version.is_some() {
        return Err(CliError::usage(
            "compat shows what every reader version 0..3 sees; --reader-version is for `kcp decode`",
        ));
    }
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
    let Some((decoded, notes)) = resolved else {
        return Err(CliError::Decode(first_error.expect("at least one reader ran")));
    };
    let (kind, written) = match &decoded {
        Decoded::Subscription(s) => (KindArg::Subscription, s.version()),
        Decoded::Assignment(a) => (KindArg::Assignment, a.version()),
    };
    let kind_name = if kind == KindArg::Subscription { "subscription" } else { "assignment" };
    let written_layout = Version::layout_for_wire(written).unwrap_or(Version::LATEST);
    let readers: Vec<ReaderJson<'_>> = Version::ALL
        .iter()
        .map(|&reader| ReaderJson { bytes: &bytes, kind, written_layout, options: base.reader_version(reader) })
        .collect();
    if args.format == Format::Text {
        let w = out.writer();
        let mut text = || -> std::io::Result<()> {
            writeln!(w, "{kind_name} written as version {written}")?;
            for r in &readers {
                let reader = r.options.get_reader_version();
                let status = match decode_kind(&bytes, kind, r.options) {
                    Ok(_) => "reads it".to_owned(),
                    Err(e) => format!("fails: {}", clean(&e.to_string())),
                };
                let dropped = r.dropped(reader);
                let ignores = if dropped.is_empty() {
                    String::new()
                } else {
                    format!(", ignores {}", serde_json::to_string(&dropped).unwrap_or_default())
                };
                writeln!(w, "reader v{}: {status}{ignores}", reader.as_i16())?;
            }
            for note in &notes {
                writeln!(w, "warning: {}", clean(note))?;
            }
            Ok(())
        };
        return text().map_err(|e| CliError::Output(WriteFailed(e)));
    }
    struct Table<'a> {
        kind: &'a str,
        written: i16,
        readers: &'a [ReaderJson<'a>],
        notes: &'a [String],
    }
    impl Serialize for Table<'_> {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let mut m = s.serialize_map(Some(4))?;
            m.serialize_entry("kind", self.kind)?;
            m.serialize_entry("written_version", &self.written)?;
            m.serialize_entry("readers", self.readers)?;
            m.serialize_entry("warnings", self.notes)?;
            m.end()
        }
    }
    out.json_pretty(&Table { kind: kind_name, written, readers: &readers, notes: &notes })?;
    Ok(())
}
