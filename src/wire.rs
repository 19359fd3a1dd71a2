//! The only module that knows the primitive byte layout: big-endian integers, `int16`-length
//! strings, `int32`-length bytes and `int32`-count arrays (Kafka's non-flexible encoding).

use core::cmp::Ordering;

use crate::error::{DecodeError, DecodeErrorKind, EncodeError, FieldPath, MessageKind};

/// A cursor over untrusted input. Every read checks the bytes left first, so nothing is ever
/// sized by a count before that count is known to fit in the input.
#[derive(Clone, Copy)]
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    message: MessageKind,
}

impl<'a> Reader<'a> {
    #[inline]
    pub(crate) fn new(buf: &'a [u8], message: MessageKind) -> Self {
        Reader { buf, pos: 0, message }
    }

    #[inline]
    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    #[inline]
    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    #[cold]
    pub(crate) fn error(&self, kind: DecodeErrorKind, offset: usize, field: FieldPath) -> DecodeError {
        DecodeError::new(self.message, kind, offset, field)
    }

    #[inline]
    pub(crate) fn take(&mut self, n: usize, field: FieldPath) -> Result<&'a [u8], DecodeError> {
        if self.remaining() < n {
            return Err(self.error(
                DecodeErrorKind::Truncated { needed: n, available: self.remaining() },
                self.pos,
                field,
            ));
        }
        let out = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    #[inline]
    pub(crate) fn i16(&mut self, field: FieldPath) -> Result<i16, DecodeError> {
        let b = self.take(2, field)?;
        Ok(i16::from_be_bytes([b[0], b[1]]))
    }

    #[inline]
    pub(crate) fn i32(&mut self, field: FieldPath) -> Result<i32, DecodeError> {
        let b = self.take(4, field)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A non-nullable string.
    #[inline]
    pub(crate) fn string(&mut self, field: FieldPath) -> Result<&'a str, DecodeError> {
        let start = self.pos;
        match self.i16(field)? {
            -1 => Err(self.error(DecodeErrorKind::UnexpectedNull, start, field)),
            len if len < 0 => Err(self.error(DecodeErrorKind::NegativeLength(len.into()), start, field)),
            len => self.utf8(len as usize, start, field),
        }
    }

    /// A nullable string. Java reads every negative length as null; `strict` accepts only `-1`.
    #[inline]
    pub(crate) fn nullable_string(&mut self, field: FieldPath, strict: bool) -> Result<Option<&'a str>, DecodeError> {
        let start = self.pos;
        match self.i16(field)? {
            -1 => Ok(None),
            len if len < 0 && strict => Err(self.error(DecodeErrorKind::NegativeLength(len.into()), start, field)),
            len if len < 0 => Ok(None),
            len => self.utf8(len as usize, start, field).map(Some),
        }
    }

    #[inline]
    fn utf8(&mut self, len: usize, start: usize, field: FieldPath) -> Result<&'a str, DecodeError> {
        let bytes = self.take(len, field)?;
        core::str::from_utf8(bytes).map_err(|_| self.error(DecodeErrorKind::InvalidUtf8, start, field))
    }

    /// Nullable bytes (`int32` length). Java reads every negative length as null; `strict`
    /// accepts only `-1`.
    #[inline]
    pub(crate) fn nullable_bytes(&mut self, field: FieldPath, strict: bool) -> Result<Option<&'a [u8]>, DecodeError> {
        let start = self.pos;
        match self.i32(field)? {
            -1 => Ok(None),
            len if len < 0 && strict => Err(self.error(DecodeErrorKind::NegativeLength(len), start, field)),
            len if len < 0 => Ok(None),
            len => self.take(len as usize, field).map(Some),
        }
    }

    /// A non-nullable array count. Like Java, a count larger than the bytes left is refused
    /// before any element is read.
    #[inline]
    pub(crate) fn array_len(&mut self, field: FieldPath) -> Result<usize, DecodeError> {
        let start = self.pos;
        match self.i32(field)? {
            -1 => Err(self.error(DecodeErrorKind::UnexpectedNull, start, field)),
            n if n < 0 => Err(self.error(DecodeErrorKind::NegativeLength(n), start, field)),
            n if n as usize > self.remaining() => Err(self.error(
                DecodeErrorKind::TooManyElements { count: n, remaining: self.remaining() },
                start,
                field,
            )),
            n => Ok(n as usize),
        }
    }

    /// `count` big-endian `int32`s as one slice; a short input names the first element that
    /// does not fit.
    #[inline]
    pub(crate) fn int32_array(
        &mut self,
        count: usize,
        field: impl Fn(usize) -> FieldPath,
    ) -> Result<&'a [u8], DecodeError> {
        let needed = count * 4; // count <= remaining bytes, so this cannot overflow
        if self.remaining() < needed {
            let index = self.remaining() / 4;
            return Err(self.error(
                DecodeErrorKind::Truncated { needed: 4, available: self.remaining() % 4 },
                self.pos + index * 4,
                field(index),
            ));
        }
        self.take(needed, field(0))
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

/// Counts bytes instead of writing them.
#[derive(Default)]
pub(crate) struct Counter(pub(crate) usize);

impl Sink for Counter {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.0 += bytes.len();
    }
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
    // Fast path: UTF-8 byte order equals UTF-16 order until a byte of 0xEE or above (U+E000 and
    // up, or a 4-byte sequence) is involved.
    let (ab, bb) = (a.as_bytes(), b.as_bytes());
    let common = ab.iter().zip(bb).take_while(|(x, y)| x == y).count();
    match (ab.get(common), bb.get(common)) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(&x), Some(&y)) if x < 0xEE && y < 0xEE => x.cmp(&y),
        _ => a.encode_utf16().cmp(b.encode_utf16()),
    }
}
