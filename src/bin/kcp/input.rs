//! Reading the command line's inputs: payload bytes (hex, base64, a file or stdin) and JSON
//! documents, each within [`MAX_INPUT_BYTES`].

use std::io::Read;

use base64::Engine;

use super::CliError;

/// The largest input `kcp` reads (a payload, a group or scenario file, stdin): 64 MiB. Larger
/// inputs are refused before they are held in memory. (Captures are streamed and have their own
/// budgets, see `kcp pcap`.)
pub const MAX_INPUT_BYTES: u64 = 64 << 20;

/// Where the payload comes from (mutually exclusive flags, checked by clap).
#[derive(clap::Args, Debug, Clone)]
pub struct PayloadInput {
    /// The payload as hex (spaces, colons and a 0x prefix allowed), or `-` for stdin: read as hex
    /// text when every byte is printable ASCII or whitespace, else as raw bytes.
    #[arg(value_name = "HEX | -", conflicts_with_all = ["file", "base64", "example"])]
    pub hex: Option<String>,
    /// Read raw bytes from a file.
    #[arg(long, value_name = "PATH", conflicts_with_all = ["base64", "example"])]
    pub file: Option<std::path::PathBuf>,
    /// The payload as base64.
    #[arg(long, value_name = "B64", conflicts_with = "example")]
    pub base64: Option<String>,
    /// Use an embedded example: the v3 subscription Apache Kafka's Java client (kafka-clients
    /// 3.9.1) sends for a cooperative-sticky member that owns foo-0 and foo-1 at generation 10.
    #[arg(long)]
    pub example: bool,
}

/// The `--example` payload (testdata/vectors/java-3.9.1/subscription-v3-cooperative-sticky.json).
pub const EXAMPLE_SUBSCRIPTION: &str =
    "0003000000010003666f6f000000040000000a000000010003666f6f0000000200000000000000010000000affff";

impl PayloadInput {
    /// The bytes, or an `invalid_input` error. An empty payload is an error of its own.
    pub fn read(&self) -> Result<Vec<u8>, CliError> {
        let (bytes, source) = self.read_any()?;
        if bytes.is_empty() {
            return Err(CliError::input(format!("the payload is empty: {source} gave no bytes")));
        }
        Ok(bytes)
    }

    fn read_any(&self) -> Result<(Vec<u8>, String), CliError> {
        if self.example {
            return Ok((parse_hex(EXAMPLE_SUBSCRIPTION)?, "--example".into()));
        }
        if let Some(path) = &self.file {
            let file = std::fs::File::open(path)
                .map_err(|e| CliError::input(format!("cannot read {}: {e}", path.display())))?;
            let what = path.display().to_string();
            return Ok((read_limited(file, &what)?, what));
        }
        if let Some(b64) = &self.base64 {
            let cleaned: String = b64.split_whitespace().collect();
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(cleaned.as_bytes())
                .map_err(|e| CliError::input(format!("invalid base64: {e}")))?;
            return Ok((bytes, "--base64".into()));
        }
        match self.hex.as_deref() {
            Some("-") | None => {
                let raw = read_limited(std::io::stdin().lock(), "stdin")?;
                Ok((detect_stdin(raw)?, "stdin".into()))
            }
            Some(hex) => Ok((parse_hex(hex)?, "the hex argument".into())),
        }
    }
}

/// Reads all of `reader`, refusing more than [`MAX_INPUT_BYTES`] (the limit is checked while
/// reading, so `--file /dev/zero` ends at once).
pub fn read_limited(reader: impl Read, what: &str) -> Result<Vec<u8>, CliError> {
    let mut bytes = Vec::new();
    reader
        .take(MAX_INPUT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| CliError::input(format!("cannot read {what}: {e}")))?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(CliError::input(format!(
            "{what} is larger than the input limit of {} MiB ({MAX_INPUT_BYTES} bytes)",
            MAX_INPUT_BYTES >> 20
        )));
    }
    Ok(bytes)
}

/// A JSON document from a file or `-` (stdin), within the input limit.
pub fn read_document(path: &str) -> Result<Vec<u8>, CliError> {
    if path == "-" {
        read_limited(std::io::stdin().lock(), "stdin")
    } else {
        let file = std::fs::File::open(path).map_err(|e| CliError::input(format!("cannot read {path}: {e}")))?;
        read_limited(file, path)
    }
}

/// Whether stdin holds text: every byte printable ASCII or whitespace. A raw payload never is
/// (its version's first byte is 0x00).
fn is_text(raw: &[u8]) -> bool {
    raw.iter().all(|&b| b.is_ascii_graphic() || b.is_ascii_whitespace())
}

/// Stdin holds either hex text or the raw payload; text that is not valid hex is an error that
/// says it was read as text, never silently taken as raw bytes.
fn detect_stdin(raw: Vec<u8>) -> Result<Vec<u8>, CliError> {
    if raw.is_empty() || !is_text(&raw) {
        return Ok(raw);
    }
    let text = std::str::from_utf8(&raw).expect("ASCII is UTF-8");
    parse_hex(text).map_err(|e| match e {
        CliError::Input(m) => CliError::input(format!(
            "stdin is text (every byte printable ASCII), so it was read as hex, and {m}; \
             pass raw bytes with --file PATH"
        )),
        other => other,
    })
}

/// Parses hex with optional `0x` prefixes, spaces, colons and newlines between digits (the
/// library's parser of the JSON documents' byte fields).
pub fn parse_hex(text: &str) -> Result<Vec<u8>, CliError> {
    Ok(kafka_consumer_protocol::codec::json::parse_hex(text)?)
}

/// Lowercase hex.
pub fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[(b >> 4) as usize] as char);
        out.push(DIGITS[(b & 15) as usize] as char);
    }
    out
}
