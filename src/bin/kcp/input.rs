//! Reading payload bytes from the command line: hex, base64, a file or stdin.

use std::io::Read;

use base64::Engine;

use crate::CliError;

/// Where the payload comes from (mutually exclusive flags, checked by clap).
#[derive(clap::Args, Debug, Clone)]
pub struct PayloadInput {
    /// The payload as hex (spaces, colons and a 0x prefix allowed), or `-` for stdin (hex text
    /// or raw bytes, detected).
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
    /// The bytes, or an `invalid_input` error.
    pub fn read(&self) -> Result<Vec<u8>, CliError> {
        if self.example {
            return parse_hex(EXAMPLE_SUBSCRIPTION);
        }
        if let Some(path) = &self.file {
            return std::fs::read(path).map_err(|e| CliError::input(format!("cannot read {}: {e}", path.display())));
        }
        if let Some(b64) = &self.base64 {
            let cleaned: String = b64.split_whitespace().collect();
            return base64::engine::general_purpose::STANDARD
                .decode(cleaned.as_bytes())
                .map_err(|e| CliError::input(format!("invalid base64: {e}")));
        }
        match self.hex.as_deref() {
            Some("-") | None => {
                let mut raw = Vec::new();
                std::io::stdin()
                    .read_to_end(&mut raw)
                    .map_err(|e| CliError::input(format!("cannot read stdin: {e}")))?;
                Ok(detect_stdin(raw))
            }
            Some(hex) => parse_hex(hex),
        }
    }
}

/// Stdin holds either hex text or the raw payload: hex text is taken as hex when it parses.
fn detect_stdin(raw: Vec<u8>) -> Vec<u8> {
    match std::str::from_utf8(&raw) {
        Ok(text) if !text.trim().is_empty() => parse_hex(text).unwrap_or(raw),
        _ => raw,
    }
}

/// Parses hex with optional `0x` prefixes, spaces, colons and newlines between digits.
pub fn parse_hex(text: &str) -> Result<Vec<u8>, CliError> {
    let text = text.trim();
    let text = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")).unwrap_or(text);
    let digits: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace() && *b != b':').collect();
    if digits.len() % 2 != 0 {
        return Err(CliError::input(format!("invalid hex: odd number of digits ({})", digits.len())));
    }
    digits
        .chunks_exact(2)
        .enumerate()
        .map(|(i, pair)| {
            let nibble = |c: u8| (c as char).to_digit(16);
            match (nibble(pair[0]), nibble(pair[1])) {
                (Some(h), Some(l)) => Ok((h * 16 + l) as u8),
                _ => {
                    Err(CliError::input(format!("invalid hex: {:?} at digit {}", String::from_utf8_lossy(pair), i * 2)))
                }
            }
        })
        .collect()
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
