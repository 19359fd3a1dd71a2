//! Escaping of strings taken from an input before they reach an error message or a terminal:
//! one copy of the rules for the JSON readers and the `kcp` binary (which reaches them through
//! [`crate::internal`]).

use std::borrow::Cow;
use std::fmt::Write;

/// Whether `c` must not reach a terminal as is: controls, escape sequences, line breaks,
/// bidirectional embeddings, overrides and isolates, and the line/paragraph separators.
fn needs_escape(c: char) -> bool {
    c == '\\'
        || c.is_control()
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}')
}

fn push_clean(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if needs_escape(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
}

/// `s` with every character that could act on a terminal written as an escape (`\n`, `\t`,
/// `\u{1b}`, `\\`); printable text unchanged (and not copied). A rack id or member id from a
/// payload must not move the cursor, colour the terminal or forge a line of output.
///
/// Public (through [`crate::internal`]) so that the `kcp` binary escapes what it prints exactly
/// as the JSON readers' error messages do, with one copy of the rules.
pub fn terminal_safe(s: &str) -> Cow<'_, str> {
    if !s.chars().any(needs_escape) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    push_clean(&mut out, s);
    Cow::Owned(out)
}

/// At most `max` characters of `s`, escaped as [`terminal_safe`] does, in double quotes; a longer
/// value is cut and says how long it was (a message never dumps a whole buffer).
///
/// Public (through [`crate::internal`]) for the `kcp` binary, as [`terminal_safe`].
pub fn quoted(s: &str, max: usize) -> String {
    let mut out = String::from("\"");
    match s.char_indices().nth(max) {
        None => {
            push_clean(&mut out, s);
            out.push('"');
        }
        Some((cut, _)) => {
            push_clean(&mut out, &s[..cut]);
            let _ = write!(out, "\"... ({} bytes)", s.len());
        }
    }
    out
}

/// At most `max` characters of `text`, escaped, then its length when it was cut.
pub(crate) fn excerpt(text: &str, max: usize) -> String {
    let mut out = String::new();
    match text.char_indices().nth(max) {
        None => push_clean(&mut out, text),
        Some((cut, _)) => {
            push_clean(&mut out, &text[..cut]);
            let _ = write!(out, "... ({} bytes in all)", text.len());
        }
    }
    out
}
