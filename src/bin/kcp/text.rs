//! Strings from the input shown in text output and error messages: control characters, escape
//! sequences, line breaks and bidirectional overrides are escaped (a rack id or member id must not
//! move the cursor, colour the terminal or forge a line of the story), and long values are cut
//! with their length in bytes (an error message never dumps a whole buffer).

use std::borrow::Cow;
use std::fmt::Write;

/// Whether `c` must not reach a terminal as is.
fn needs_escape(c: char) -> bool {
    c == '\\'
        || c.is_control()
        // Bidirectional embeddings, overrides and isolates, and the line/paragraph separators.
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}')
}

/// `s` with every character that could act on a terminal written as an escape (`\n`, `\t`,
/// `\u{1b}`, `\\`); printable text unchanged.
pub fn clean(s: &str) -> Cow<'_, str> {
    if !s.chars().any(needs_escape) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
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
    Cow::Owned(out)
}

/// At most `max` characters of `s`, cleaned, in double quotes; a longer value is cut and says
/// how long it was.
pub fn quoted(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => format!("\"{}\"", clean(s)),
        Some((cut, _)) => format!("\"{}\"... ({} bytes)", clean(&s[..cut]), s.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_acts_on_a_terminal() {
        assert_eq!(clean("use1-az1"), "use1-az1");
        assert_eq!(clean("a\nb\x1b[2J\\"), "a\\nb\\u{1b}[2J\\\\");
        assert_eq!(clean("x\u{202e}y\u{85}"), "x\\u{202e}y\\u{85}");
    }

    #[test]
    fn long_values_are_cut_with_their_length() {
        assert_eq!(quoted("abcdef", 3), "\"abc\"... (6 bytes)");
        assert_eq!(quoted("ab", 3), "\"ab\"");
    }
}
