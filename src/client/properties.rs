//! A reader of Java `.properties` text that reads exactly what `java.util.Properties.load` reads
//! (its `LineReader` and `loadConvert`, JDK 9 and later): `#` and `!` comments, blank lines,
//! `=`, `:` or white space (space, tab, form feed) between key and value, backslash escapes
//! (`\t`, `\n`, `\r`, `\f`, `\uXXXX`, any other character standing for itself), line
//! continuations (a line ending in an odd number of backslashes goes on on the next line, whose
//! leading white space is dropped) and `\n`, `\r\n` or a lone `\r` as line ends.
//!
//! A file is read as Kafka's tools read `--command-config`: `Properties.load(InputStream)`,
//! one byte one ISO-8859-1 character ([`decode_file`]); non-ASCII text belongs in `\uXXXX`
//! escapes, as Java requires. `tests/properties_corpus` holds files with what Java 17 read from
//! them (`tools/java-properties/regen.sh`), checked by `tests/properties_corpus.rs`.
//!
//! One difference: a `\uXXXX` escape of a lone UTF-16 surrogate (half of a pair) is an error,
//! since a Rust string cannot hold it; an escaped pair (`\uD83D\uDE00`) is one character.

use super::error::ConfigError;

/// A file's bytes as `Properties.load(InputStream)` sees them: each byte is the ISO-8859-1
/// character of the same number (so a UTF-8 `é` is read as `Ã©`, as Java reads it).
pub(crate) fn decode_file(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| char::from(b)).collect()
}

/// The key/value pairs of a properties text, in order; a key given twice keeps its last value
/// (as `Properties` does) and its first position. Java's one refusal, a malformed `\uXXXX`
/// escape, is an error naming the line.
pub(crate) fn parse(text: &str) -> Result<Vec<(String, String)>, ConfigError> {
    let chars: Vec<char> = text.chars().collect();
    let mut reader = LineReader { chars: &chars, at: 0, line: 1 };
    let mut pairs: Vec<(String, String)> = Vec::new();
    while let Some((line, logical)) = reader.read_line() {
        let (key, value) =
            split_pair(&logical).map_err(|what| ConfigError::new("", format!("properties line {line}: {what}")))?;
        match pairs.iter_mut().find(|(k, _)| *k == key) {
            Some(pair) => pair.1 = value,
            None => pairs.push((key, value)),
        }
    }
    Ok(pairs)
}

fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\x0c')
}

/// Java's `Properties.LineReader`: yields logical lines, comments and blank lines skipped.
struct LineReader<'a> {
    chars: &'a [char],
    at: usize,
    /// The physical line of `chars[at]`, counted from 1, for error messages.
    line: usize,
}

impl LineReader<'_> {
    fn next_char(&mut self) -> Option<char> {
        let c = *self.chars.get(self.at)?;
        self.at += 1;
        if c == '\n' || (c == '\r' && self.chars.get(self.at) != Some(&'\n')) {
            self.line += 1;
        }
        Some(c)
    }

    /// The next logical line and the physical line it starts on.
    fn read_line(&mut self) -> Option<(usize, Vec<char>)> {
        let mut buf: Vec<char> = Vec::new();
        let mut start = self.line;
        let mut skip_white = true;
        let mut appended_line_begin = false;
        let mut preceding_backslash = false;
        loop {
            let line_of_c = self.line;
            let Some(c) = self.next_char() else {
                if buf.is_empty() {
                    return None;
                }
                if preceding_backslash {
                    buf.pop();
                }
                return Some((start, buf));
            };
            if skip_white {
                if is_blank(c) || (!appended_line_begin && (c == '\r' || c == '\n')) {
                    continue;
                }
                skip_white = false;
                appended_line_begin = false;
            }
            if buf.is_empty() {
                start = line_of_c;
                // A comment starts a logical line, even one begun by a continuation that left
                // nothing (Java checks `len == 0`).
                if c == '#' || c == '!' {
                    while let Some(c) = self.next_char() {
                        if c == '\n' || c == '\r' {
                            break;
                        }
                    }
                    skip_white = true;
                    continue;
                }
            }
            if c != '\n' && c != '\r' {
                buf.push(c);
                preceding_backslash = c == '\\' && !preceding_backslash;
                continue;
            }
            if buf.is_empty() {
                skip_white = true;
                continue;
            }
            if self.at >= self.chars.len() || !preceding_backslash {
                if preceding_backslash {
                    buf.pop();
                }
                return Some((start, buf));
            }
            // The backslash before the line end is not part of the line; the next line's
            // leading white space is skipped, and a `\n` right after a `\r` belongs to this end.
            buf.pop();
            skip_white = true;
            appended_line_begin = true;
            preceding_backslash = false;
            if c == '\r' && self.chars.get(self.at) == Some(&'\n') {
                self.next_char();
            }
        }
    }
}

/// Splits a logical line into its unescaped key and value (Java's `load0`).
fn split_pair(line: &[char]) -> Result<(String, String), String> {
    let mut key_len = 0;
    let mut value_start = line.len();
    let mut has_separator = false;
    let mut preceding_backslash = false;
    while key_len < line.len() {
        let c = line[key_len];
        if (c == '=' || c == ':') && !preceding_backslash {
            value_start = key_len + 1;
            has_separator = true;
            break;
        } else if is_blank(c) && !preceding_backslash {
            value_start = key_len + 1;
            break;
        }
        preceding_backslash = c == '\\' && !preceding_backslash;
        key_len += 1;
    }
    while value_start < line.len() {
        let c = line[value_start];
        if !is_blank(c) {
            if !has_separator && (c == '=' || c == ':') {
                has_separator = true;
            } else {
                break;
            }
        }
        value_start += 1;
    }
    Ok((unescape(&line[..key_len])?, unescape(&line[value_start..])?))
}

/// Java's `loadConvert`, with escaped surrogate pairs joined into one character.
fn unescape(s: &[char]) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        i += 1;
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(&escaped) = s.get(i) else { break };
        i += 1;
        let unit = match escaped {
            'u' => {
                let unit = hex4(s.get(i..i + 4))?;
                i += 4;
                unit
            }
            't' => '\t' as u32,
            'n' => '\n' as u32,
            'r' => '\r' as u32,
            'f' => '\x0c' as u32,
            other => other as u32,
        };
        let ch = match unit {
            0xD800..=0xDBFF => {
                // A high surrogate: only a following escaped low surrogate makes a character.
                let low = match (s.get(i), s.get(i + 1)) {
                    (Some('\\'), Some('u')) => hex4(s.get(i + 2..i + 6)).ok().filter(|u| (0xDC00..=0xDFFF).contains(u)),
                    _ => None,
                };
                let Some(low) = low else { return Err(lone_surrogate(unit)) };
                i += 6;
                char::from_u32(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
            }
            _ => char::from_u32(unit),
        };
        out.push(ch.ok_or_else(|| lone_surrogate(unit))?);
    }
    Ok(out)
}

fn lone_surrogate(unit: u32) -> String {
    format!("\\u{unit:04X} is half of a UTF-16 surrogate pair, which kcp cannot represent alone")
}

/// Four hexadecimal digits (and nothing else: no sign, as Java).
fn hex4(digits: Option<&[char]>) -> Result<u32, String> {
    let malformed = || "four hexadecimal digits must follow \\u (Java: \"Malformed \\uxxxx encoding.\")".to_string();
    let digits = digits.ok_or_else(malformed)?;
    digits.iter().try_fold(0u32, |value, c| c.to_digit(16).map(|d| value << 4 | d)).ok_or_else(malformed)
}

#[cfg(test)]
mod tests {
    use super::{decode_file, parse};

    fn pairs(text: &str) -> Vec<(String, String)> {
        parse(text).unwrap()
    }

    fn one(text: &str) -> (String, String) {
        let mut p = pairs(text);
        assert_eq!(p.len(), 1, "{p:?}");
        p.remove(0)
    }

    #[test]
    fn separators_and_white_space() {
        assert_eq!(one("a=b"), ("a".into(), "b".into()));
        assert_eq!(one("a : b"), ("a".into(), "b".into()));
        assert_eq!(one("  a   b c "), ("a".into(), "b c ".into()));
        assert_eq!(one("a=  =b"), ("a".into(), "=b".into()));
        assert_eq!(one("a"), ("a".into(), "".into()));
        assert_eq!(one("a="), ("a".into(), "".into()));
        assert_eq!(one("\ta\t=\tb"), ("a".into(), "b".into()));
    }

    #[test]
    fn comments_and_blank_lines() {
        let p = pairs("# c\n! c\n\n   \n  # indented comment\na=1 # not a comment\n");
        assert_eq!(p, vec![("a".into(), "1 # not a comment".into())]);
    }

    #[test]
    fn escapes() {
        assert_eq!(one(r"a\=b\:c\ d=e"), ("a=b:c d".into(), "e".into()));
        assert_eq!(one(r"k=\t\n\r\f\\\q"), ("k".into(), "\t\n\r\x0c\\q".into()));
        assert_eq!(one(r"k=caf\u00e9 \u20AC"), ("k".into(), "café €".into()));
        assert!(parse(r"k=\u12").is_err());
        assert!(parse(r"k=\uzzzz").is_err());
        assert!(parse(r"k=\u+123").is_err());
        assert_eq!(one(r"k=\uD83D\uDE00"), ("k".into(), "\u{1F600}".into()));
        assert!(parse(r"k=\uDE00").is_err());
        let err = parse("a=1\nk=\\uD800").unwrap_err();
        assert!(err.to_string().contains("line 2"), "{err}");
    }

    #[test]
    fn continuations() {
        let text =
            "sasl.jaas.config=org.example.Module required \\\n    username=\"u\" \\\r\n\tpassword=\"p\";\nnext=1";
        assert_eq!(
            pairs(text),
            vec![
                ("sasl.jaas.config".into(), "org.example.Module required username=\"u\" password=\"p\";".into()),
                ("next".into(), "1".into())
            ]
        );
        // An even number of backslashes is an escaped backslash, not a continuation.
        assert_eq!(pairs("a=x\\\\\nb=y").len(), 2);
        // A continuation at the end of the text just ends.
        assert_eq!(one("a=x\\"), ("a".into(), "x".into()));
        // A continued line that starts with # is not a comment.
        assert_eq!(one("a=x\\\n#y"), ("a".into(), "x#y".into()));
    }

    /// Every file of `tests/properties_corpus` reads as Java 17 read it (the `.java-expected`
    /// files, written by `tools/java-properties/regen.sh`).
    #[test]
    fn java_corpus() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/properties_corpus");
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "properties"))
            .collect();
        names.sort();
        assert!(names.len() >= 20, "{names:?}");
        let escape = |s: &str| -> String {
            s.encode_utf16()
                .map(|u| match char::from_u32(u32::from(u)) {
                    Some(c) if (' '..='~').contains(&c) && c != '\\' && c != '=' => c.to_string(),
                    _ => format!("\\u{u:04X}"),
                })
                .collect()
        };
        for path in names {
            let expected = std::fs::read_to_string(path.with_extension("java-expected")).unwrap();
            let ours = match parse(&decode_file(&std::fs::read(&path).unwrap())) {
                Ok(pairs) => {
                    let mut lines: Vec<String> =
                        pairs.iter().map(|(k, v)| format!("{}={}\n", escape(k), escape(v))).collect();
                    lines.sort();
                    lines.concat()
                }
                Err(e) => format!("ERROR {e}\n"),
            };
            if path.ends_with("lone_surrogate.properties") {
                // The one difference (module documentation): Java keeps the lone surrogate.
                assert_eq!(expected, "k=\\uD800\n");
                assert!(ours.starts_with("ERROR") && ours.contains("line 1") && ours.contains("surrogate"), "{ours}");
            } else if let Some(java_error) = expected.strip_prefix("ERROR ") {
                assert!(ours.starts_with("ERROR") && ours.contains(java_error.trim()), "{path:?}: {ours}");
            } else {
                assert_eq!(ours, expected, "{path:?}");
            }
        }
    }

    #[test]
    fn last_value_wins() {
        assert_eq!(pairs("a=1\nb=2\na=3"), vec![("a".into(), "3".into()), ("b".into(), "2".into())]);
    }
}
