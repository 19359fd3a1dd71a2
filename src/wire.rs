//! The only module that knows the primitive byte layout: big-endian integers, `int16`-length
//! strings, `int32`-length bytes and `int32`-count arrays (Kafka's non-flexible encoding).

use core::cmp::Ordering;

use crate::error::{DecodeError, DecodeErrorKind, EncodeError, FieldPath, MessageKind};

/// What went wrong and where, without the field path: the hot path carries only this small
/// value, and the caller attaches the path (built lazily) when it turns it into a [`DecodeError`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fault {
    pub(crate) kind: DecodeErrorKind,
    pub(crate) offset: usize,
}

impl Fault {
    #[cold]
    #[inline(never)]
    pub(crate) fn at(self, message: MessageKind, field: FieldPath) -> DecodeError {
        DecodeError::new(message, self.kind, self.offset, field)
    }
}

/// A cursor over untrusted input. Every read checks the bytes left first, so nothing is ever
/// sized by a count before that count is known to fit in the input.
#[derive(Clone, Copy)]
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

#[cold]
#[inline(never)]
fn fault(kind: DecodeErrorKind, offset: usize) -> Fault {
    Fault { kind, offset }
}

impl<'a> Reader<'a> {
    #[inline]
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    #[inline]
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    #[inline]
    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// The unread input.
    #[inline]
    pub(crate) fn rest(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }

    /// Skips `n` bytes that a fast scan of [`Reader::rest`] already validated.
    #[inline]
    pub(crate) fn advance(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.buf.len());
    }

    #[inline(always)]
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], Fault> {
        if n <= self.remaining() {
            let out = &self.buf[self.pos..self.pos + n];
            self.pos += n;
            Ok(out)
        } else {
            Err(fault(DecodeErrorKind::Truncated { needed: n, available: self.remaining() }, self.pos))
        }
    }

    #[inline(always)]
    pub(crate) fn i16(&mut self) -> Result<i16, Fault> {
        let b = self.take(2)?;
        Ok(i16::from_be_bytes([b[0], b[1]]))
    }

    #[inline(always)]
    pub(crate) fn i32(&mut self) -> Result<i32, Fault> {
        let b = self.take(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A nullable string. Java reads every negative length as null; `strict` accepts only `-1`.
    #[inline(always)]
    pub(crate) fn nullable_string(&mut self, strict: bool) -> Result<Option<&'a str>, Fault> {
        let start = self.pos;
        match self.i16()? {
            len if len >= 0 => self.utf8(len as usize, start).map(Some),
            len if len < -1 && strict => Err(fault(DecodeErrorKind::NegativeLength(len.into()), start)),
            _ => Ok(None),
        }
    }

    /// A non-nullable string, validated but not returned (the views re-read it lazily). ASCII,
    /// the common case for topic names, is checked a word at a time.
    #[inline]
    pub(crate) fn skip_string(&mut self) -> Result<(), Fault> {
        let start = self.pos;
        match self.i16()? {
            len if len >= 0 => {
                let bytes = self.take(len as usize)?;
                if bytes.is_ascii() || core::str::from_utf8(bytes).is_ok() {
                    Ok(())
                } else {
                    Err(fault(DecodeErrorKind::InvalidUtf8, start))
                }
            }
            -1 => Err(fault(DecodeErrorKind::UnexpectedNull, start)),
            len => Err(fault(DecodeErrorKind::NegativeLength(len.into()), start)),
        }
    }

    #[inline]
    fn utf8(&mut self, len: usize, start: usize) -> Result<&'a str, Fault> {
        let bytes = self.take(len)?;
        core::str::from_utf8(bytes).map_err(|_| fault(DecodeErrorKind::InvalidUtf8, start))
    }

    /// Nullable bytes (`int32` length). Java reads every negative length as null; `strict`
    /// accepts only `-1`.
    #[inline(always)]
    pub(crate) fn nullable_bytes(&mut self, strict: bool) -> Result<Option<&'a [u8]>, Fault> {
        let start = self.pos;
        match self.i32()? {
            len if len >= 0 => self.take(len as usize).map(Some),
            len if len < -1 && strict => Err(fault(DecodeErrorKind::NegativeLength(len), start)),
            _ => Ok(None),
        }
    }

    /// A non-nullable array count. Like Java, a count larger than the bytes left is refused
    /// before any element is read.
    #[inline(always)]
    pub(crate) fn array_len(&mut self) -> Result<usize, Fault> {
        let start = self.pos;
        match self.i32()? {
            n if n >= 0 && n as usize <= self.remaining() => Ok(n as usize),
            -1 => Err(fault(DecodeErrorKind::UnexpectedNull, start)),
            n if n < 0 => Err(fault(DecodeErrorKind::NegativeLength(n), start)),
            n => Err(fault(DecodeErrorKind::TooManyElements { count: n, remaining: self.remaining() }, start)),
        }
    }

    /// `count` big-endian `int32`s as one slice. On a short input the fault points at the first
    /// element that does not fit; its index is `(fault.offset - start) / 4`.
    #[inline]
    pub(crate) fn int32_array(&mut self, count: usize) -> Result<&'a [u8], Fault> {
        let needed = count * 4; // count <= remaining bytes, so this cannot overflow
        if self.remaining() < needed {
            let index = self.remaining() / 4;
            return Err(fault(
                DecodeErrorKind::Truncated { needed: 4, available: self.remaining() % 4 },
                self.pos + index * 4,
            ));
        }
        self.take(needed)
    }
}

/// Reads validated input again without checks failing: used by the lazily iterated views,
/// whose bytes were fully validated when the view was made.
#[derive(Clone, Copy)]
pub(crate) struct Validated<'a> {
    pub(crate) buf: &'a [u8],
}

impl<'a> Validated<'a> {
    #[inline]
    pub(crate) fn i16(&mut self) -> i16 {
        match self.buf {
            [a, b, rest @ ..] => {
                self.buf = rest;
                i16::from_be_bytes([*a, *b])
            }
            _ => 0,
        }
    }

    #[inline]
    pub(crate) fn i32(&mut self) -> i32 {
        match self.buf {
            [a, b, c, d, rest @ ..] => {
                self.buf = rest;
                i32::from_be_bytes([*a, *b, *c, *d])
            }
            _ => 0,
        }
    }

    #[inline]
    pub(crate) fn take(&mut self, n: usize) -> &'a [u8] {
        let n = n.min(self.buf.len());
        let (head, rest) = self.buf.split_at(n);
        self.buf = rest;
        head
    }

    #[inline]
    pub(crate) fn str(&mut self) -> &'a str {
        let len = self.i16().max(0) as usize;
        // Validated at decode time; the fallback is unreachable for views built by this crate.
        core::str::from_utf8(self.take(len)).unwrap_or("")
    }
}

/// Where encoded bytes go: a real buffer, or a counter for `encoded_len`.
pub(crate) trait Sink {
    fn put(&mut self, bytes: &[u8]);

    #[inline]
    fn i16(&mut self, v: i16) {
        self.put(&v.to_be_bytes());
    }

    #[inline]
    fn i32(&mut self, v: i32) {
        self.put(&v.to_be_bytes());
    }

    /// Many `int32`s (a partition list).
    #[inline]
    fn i32s(&mut self, values: &[i32]) {
        for &v in values {
            self.i32(v);
        }
    }

    #[inline]
    fn string(&mut self, s: &str, field: &'static str) -> Result<(), EncodeError> {
        if s.len() > i16::MAX as usize {
            return Err(EncodeError::StringTooLong { field, len: s.len() });
        }
        self.i16(s.len() as i16);
        self.put(s.as_bytes());
        Ok(())
    }

    #[inline]
    fn nullable_string(&mut self, s: Option<&str>, field: &'static str) -> Result<(), EncodeError> {
        match s {
            None => {
                self.i16(-1);
                Ok(())
            }
            Some(s) => self.string(s, field),
        }
    }

    #[inline]
    fn nullable_bytes(&mut self, b: Option<&[u8]>, field: &'static str) -> Result<(), EncodeError> {
        match b {
            None => self.i32(-1),
            Some(b) => {
                self.count(b.len(), field)?;
                self.put(b);
            }
        }
        Ok(())
    }

    #[inline]
    fn count(&mut self, n: usize, field: &'static str) -> Result<(), EncodeError> {
        if n > i32::MAX as usize {
            return Err(EncodeError::TooManyElements { field, len: n });
        }
        self.i32(n as i32);
        Ok(())
    }
}

impl Sink for Vec<u8> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.extend_from_slice(bytes);
    }
}

/// Writes into a buffer sized in advance by `encoded_len`: fixed-size stores instead of a
/// capacity check per field. If the size was short it falls back to appending (never panics).
pub(crate) struct Presized {
    buf: Vec<u8>,
    pos: usize,
}

impl Presized {
    pub(crate) fn new(len: usize) -> Self {
        Presized { buf: vec![0; len], pos: 0 }
    }

    pub(crate) fn finish(mut self) -> Vec<u8> {
        self.buf.truncate(self.pos);
        self.buf
    }
}

impl Sink for Presized {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        let end = self.pos + bytes.len();
        match self.buf.get_mut(self.pos..end) {
            Some(dst) => dst.copy_from_slice(bytes),
            None => {
                self.buf.truncate(self.pos);
                self.buf.extend_from_slice(bytes);
            }
        }
        self.pos = end;
    }

    #[inline]
    fn i32s(&mut self, values: &[i32]) {
        let end = self.pos + 4 * values.len();
        match self.buf.get_mut(self.pos..end) {
            Some(dst) => {
                for (chunk, v) in dst.chunks_exact_mut(4).zip(values) {
                    chunk.copy_from_slice(&v.to_be_bytes());
                }
                self.pos = end;
            }
            None => {
                for &v in values {
                    self.i32(v);
                }
            }
        }
    }
}

/// Counts bytes instead of writing them.
#[derive(Default)]
pub(crate) struct Counter(pub(crate) usize);

impl Sink for Counter {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.0 += bytes.len();
    }

    #[inline]
    fn i32s(&mut self, values: &[i32]) {
        self.0 += 4 * values.len();
    }
}

/// An order-preserving key for short ASCII strings (up to 16 bytes): comparing keys equals
/// comparing the strings in Java's order, with a few integer comparisons. `None` for anything
/// else, which [`java_string_cmp`] handles.
#[inline]
pub(crate) fn short_ascii_key(s: &str) -> Option<(u64, u64, usize)> {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let bytes = s.as_bytes();
    let n = bytes.len();
    let (hi, lo) = match (bytes.first_chunk::<8>(), bytes.last_chunk::<8>()) {
        // Big-endian words of the bytes padded with zeros to 16; the length breaks ties, so a
        // string sorts before its extensions as in lexicographic order.
        (Some(head), Some(tail)) if n <= 16 => {
            let rest = if n == 8 { 0 } else { u64::from_be_bytes(*tail) << (8 * (16 - n)) };
            (u64::from_be_bytes(*head), rest)
        }
        (Some(_), _) => return None,
        _ => (bytes.iter().enumerate().fold(0u64, |acc, (i, &b)| acc | u64::from(b) << (56 - 8 * i)), 0),
    };
    ((hi | lo) & HIGH == 0).then_some((hi, lo, n))
}

/// True when `names` are in Java's order: ascending, or strictly ascending.
pub(crate) fn is_sorted_java<'a>(mut names: impl Iterator<Item = &'a str>, strictly: bool) -> bool {
    let Some(mut previous) = names.next() else { return true };
    let mut previous_key = short_ascii_key(previous);
    for name in names {
        let key = short_ascii_key(name);
        let order = match (previous_key, key) {
            (Some(a), Some(b)) => a.cmp(&b),
            _ => java_string_cmp(previous, name),
        };
        if order.is_gt() || (strictly && order.is_eq()) {
            return false;
        }
        (previous, previous_key) = (name, key);
    }
    true
}

/// Java's `String.compareTo`: lexicographic over UTF-16 code units. It equals byte order for
/// everything but supplementary-plane characters, which sort below U+E000..U+FFFF in UTF-16.
///
/// ```
/// use kafka_consumer_protocol::java_string_cmp;
/// use std::cmp::Ordering;
/// assert_eq!(java_string_cmp("bar", "foo"), Ordering::Less);
/// // U+1F600 is a surrogate pair (0xD83D ...) in UTF-16, which sorts before U+FF5E.
/// assert_eq!(java_string_cmp("\u{1F600}", "\u{FF5E}"), Ordering::Less);
/// assert_eq!("\u{1F600}".cmp("\u{FF5E}"), Ordering::Greater);
/// ```
pub fn java_string_cmp(a: &str, b: &str) -> Ordering {
    let (ab, bb) = (a.as_bytes(), b.as_bytes());
    let common = ab.len().min(bb.len());
    let mut i = 0;
    while i + 8 <= common {
        let (Ok(x), Ok(y)) = (<[u8; 8]>::try_from(&ab[i..i + 8]), <[u8; 8]>::try_from(&bb[i..i + 8])) else {
            break;
        };
        if u64::from_ne_bytes(x) != u64::from_ne_bytes(y) {
            break;
        }
        i += 8;
    }
    while i < common && ab[i] == bb[i] {
        i += 1;
    }
    match (ab.get(i), bb.get(i)) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        // The first differing bytes decide unless one of them starts a character at or above
        // U+E000 (lead byte 0xEE and up, every 4-byte sequence included): those are the only
        // characters whose UTF-16 order differs from their UTF-8 order.
        (Some(&x), Some(&y)) if x < 0xEE && y < 0xEE => x.cmp(&y),
        _ => a.encode_utf16().cmp(b.encode_utf16()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The short-key order agrees with Java's order on every pair of a set of tricky names.
    #[test]
    fn short_keys_order_like_java() {
        let names = [
            "",
            "a",
            "a\0",
            "a\0\0",
            "ab",
            "abcdefg",
            "abcdefgh",
            "abcdefgh\0",
            "abcdefghi",
            "abcdefghij",
            "abcdefghijklmnop",
            "abcdefghijklmnoo",
            "abcdefghijklmnopq",
            "b",
            "orders-0009",
            "orders-0010",
            "orders-001",
            "Z",
            "zzzzzzzzzzzzzzzz",
            "\u{7f}",
            "é",
            "\u{1F600}",
            "\u{FF5E}",
        ];
        for a in names {
            for b in names {
                let java = java_string_cmp(a, b);
                if let (Some(ka), Some(kb)) = (short_ascii_key(a), short_ascii_key(b)) {
                    assert_eq!(ka.cmp(&kb), java, "{a:?} vs {b:?}");
                }
                assert_eq!(is_sorted_java([a, b].into_iter(), false), java.is_le(), "{a:?} vs {b:?}");
                assert_eq!(is_sorted_java([a, b].into_iter(), true), java.is_lt(), "{a:?} vs {b:?}");
            }
        }
        assert!(short_ascii_key("abcdefghijklmnopq").is_none(), "longer than 16 bytes");
        assert!(short_ascii_key("é").is_none(), "not ASCII");
    }
}
