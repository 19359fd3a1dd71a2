//! A reader of Java `.properties` text, as `java.util.Properties.load` reads it: `#` and `!`
//! comments, `=`, `:` or white space between key and value, backslash escapes (`\t`, `\n`, `\r`,
//! `\f`, `\uXXXX`, any other character taken literally) and line continuations.
//!
//! One deliberate difference: the text is UTF-8 (Java's `load(InputStream)` reads ISO-8859-1),
//! so a non-ASCII password written by a UTF-8 editor is read as written.

use super::error::ConfigError;

/// The key/value pairs of a properties text, in order; a key given twice keeps its last value
/// (as `Properties` does) and its first position.
pub(crate) fn parse(text: &str) -> Result<Vec<(String, String)>, ConfigError> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    let mut lines = text.split_inclusive('\n').enumerate().peekable();
    while let Some((index, first)) = lines.next() {
        let first = strip_line_end(first);
        let trimmed = first.trim_start_matches(is_blank);
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with('!') {
            continue;
        }
        // Join the continuation lines: a line ending with an odd number of backslashes goes on
        // on the next line, whose leading white space is dropped.
        let mut logical = String::from(trimmed);
        while ends_with_odd_backslashes(&logical) {
            logical.pop();
            match lines.next() {
                Some((_, next)) => logical.push_str(strip_line_end(next).trim_start_matches(is_blank)),
                None => break,
            }
        }
        let (key, value) = split_pair(&logical)
            .map_err(|what| ConfigError::new("", format!("properties line {}: {what}", index + 1)))?;
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

fn strip_line_end(line: &str) -> &str {
    let line = line.strip_suffix('\n').unwrap_or(line);
    line.strip_suffix('\r').unwrap_or(line)
}

fn ends_with_odd_backslashes(s: &str) -> bool {
    s.bytes().rev().take_while(|&b| b == b'\\').count() % 2 == 1
}

/// Splits a logical line into its unescaped key and value.
fn split_pair(line: &str) -> Result<(String, String), String> {
    let mut chars = line.char_indices();
    let mut key_end = line.len();
    let mut escaped = false;
    for (i, c) in chars.by_ref() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == '=' || c == ':' || is_blank(c) {
            key_end = i;
            break;
        }
    }
    let key = unescape(&line[..key_end])?;
    let mut rest = line[key_end..].trim_start_matches(is_blank);
    if let Some(after) = rest.strip_prefix(['=', ':']) {
        rest = after.trim_start_matches(is_blank);
    }
    Ok((key, unescape(rest)?))
}

fn unescape(s: &str) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\x0c'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                let code = (hex.len() == 4).then(|| u32::from_str_radix(&hex, 16).ok()).flatten();
                match code.and_then(char::from_u32) {
                    Some(ch) => out.push(ch),
                    // Java throws "Malformed \uxxxx encoding" here; a lone surrogate has no
                    // Rust character either.
                    None => return Err(format!("malformed \\u escape \\u{hex}")),
                }
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::parse;

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

    #[test]
    fn last_value_wins() {
        assert_eq!(pairs("a=1\nb=2\na=3"), vec![("a".into(), "3".into()), ("b".into(), "2".into())]);
    }
}
