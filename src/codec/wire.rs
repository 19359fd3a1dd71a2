//! The only module that knows the primitive byte layout: big-endian integers, `int16`-length
//! strings, `int32`-length bytes and `int32`-count arrays (Kafka's non-flexible encoding).

use core::cmp::Ordering;
use core::ops::Range;

use crate::codec::error::{DecodeError, DecodeErrorKind, EncodeError, FieldPath, MessageKind};

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

    /// A nullable string, validated and returned as its bytes (the views re-read it lazily).
    /// Java reads every negative length as null; `strict` accepts only `-1`.
    #[inline(always)]
    pub(crate) fn nullable_string(&mut self, strict: bool) -> Result<Option<&'a [u8]>, Fault> {
        let start = self.pos;
        match self.i16()? {
            len if len >= 0 => self.utf8(len as usize, start).map(Some),
            len if len < -1 && strict => Err(fault(DecodeErrorKind::NegativeLength(len.into()), start)),
            _ => Ok(None),
        }
    }

    /// A non-nullable string, validated but not returned (the views re-read it lazily).
    #[inline]
    pub(crate) fn skip_string(&mut self) -> Result<(), Fault> {
        let start = self.pos;
        match self.i16()? {
            len if len >= 0 => self.utf8(len as usize, start).map(|_| ()),
            -1 => Err(fault(DecodeErrorKind::UnexpectedNull, start)),
            len => Err(fault(DecodeErrorKind::NegativeLength(len.into()), start)),
        }
    }

    /// `len` bytes of UTF-8 (see [`is_utf8`]).
    #[inline]
    fn utf8(&mut self, len: usize, start: usize) -> Result<&'a [u8], Fault> {
        let bytes = self.take(len)?;
        if is_utf8(bytes) {
            Ok(bytes)
        } else {
            Err(fault(DecodeErrorKind::InvalidUtf8, start))
        }
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

/// Byte range and element count of a validated array inside the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub(crate) struct ArrayRegion {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) count: usize,
}

impl ArrayRegion {
    #[inline]
    pub(crate) fn bytes<'a>(&self, buf: &'a [u8]) -> &'a [u8] {
        buf.get(self.start..self.end).unwrap_or(&[])
    }
}

/// Optional byte range (for nullable fields).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub(crate) struct OptRange {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) present: bool,
}

impl OptRange {
    /// The range of a field that was just read, ending at `end`.
    #[inline]
    pub(crate) fn ending_at(end: usize, slice: Option<&[u8]>) -> Self {
        match slice {
            None => OptRange::default(),
            Some(s) => OptRange { start: end - s.len(), end, present: true },
        }
    }

    #[inline]
    pub(crate) fn get<'a>(&self, buf: &'a [u8]) -> Option<&'a [u8]> {
        if self.present {
            buf.get(self.start..self.end)
        } else {
            None
        }
    }

    #[inline]
    pub(crate) fn range(&self) -> Option<Range<usize>> {
        self.present.then_some(self.start..self.end)
    }
}

/// Fast validation of one string at `buf[at..]`: its end, or `None` for anything the precise
/// reader must look at (which then reports the exact error).
#[inline(always)]
fn scan_string(buf: &[u8], at: usize) -> Option<usize> {
    let len = i16::from_be_bytes(buf.get(at..at + 2)?.try_into().ok()?);
    let end = at + 2 + usize::try_from(len).ok()?;
    let bytes = buf.get(at + 2..end)?;
    is_utf8(bytes).then_some(end)
}

/// Whether `bytes` are UTF-8, with ASCII (the common case for names and racks) checked a word
/// at a time, without a call.
#[inline(always)]
pub(crate) fn is_utf8(bytes: &[u8]) -> bool {
    is_ascii(bytes) || core::str::from_utf8(bytes).is_ok()
}

/// ASCII check tuned for topic-name lengths: two overlapping word loads for 8 to 16 bytes.
#[inline(always)]
fn is_ascii(bytes: &[u8]) -> bool {
    const HIGH: u64 = 0x8080_8080_8080_8080;
    match (bytes.first_chunk::<8>(), bytes.last_chunk::<8>()) {
        (Some(head), Some(tail)) if bytes.len() <= 16 => {
            (u64::from_ne_bytes(*head) | u64::from_ne_bytes(*tail)) & HIGH == 0
        }
        (Some(_), _) => bytes.is_ascii(),
        _ => bytes.iter().fold(0, |acc, &b| acc | b) < 0x80,
    }
}

/// Fast validation of `count` strings: the bytes they take, or `None` on any problem.
#[inline]
fn scan_strings(buf: &[u8], count: usize) -> Option<usize> {
    let mut at = 0;
    for _ in 0..count {
        at = scan_string(buf, at)?;
    }
    Some(at)
}

/// Fast validation of `count` `{topic, partitions}` groups: the bytes they take, or `None`.
#[inline]
fn scan_topic_partitions(buf: &[u8], count: usize) -> Option<usize> {
    let mut at = 0;
    for _ in 0..count {
        at = scan_string(buf, at)?;
        let n = i32::from_be_bytes(buf.get(at..at + 4)?.try_into().ok()?);
        at = at.checked_add(4)?.checked_add(usize::try_from(n).ok()?.checked_mul(4)?)?;
        if at > buf.len() {
            return None;
        }
    }
    Some(at)
}

/// Reads and validates `[string]` (e.g. `topics`), returning its region.
#[inline]
pub(crate) fn read_string_array(
    r: &mut Reader<'_>,
    message: MessageKind,
    name: &'static str,
) -> Result<ArrayRegion, DecodeError> {
    read_array(r, message, name, scan_strings, |r, i| {
        r.skip_string().map_err(|f| f.at(message, FieldPath::element(name, i)))
    })
}

/// Reads and validates `[{topic: string, partitions: [int32]}]`, returning its region.
#[inline]
pub(crate) fn read_topic_partitions_array(
    r: &mut Reader<'_>,
    message: MessageKind,
    name: &'static str,
) -> Result<ArrayRegion, DecodeError> {
    read_array(r, message, name, scan_topic_partitions, |r, i| {
        let entry = || FieldPath::element(name, i);
        r.skip_string().map_err(|f| f.at(message, entry().child("topic", None)))?;
        let n = r.array_len().map_err(|f| f.at(message, entry().child("partitions", None)))?;
        let first = r.pos();
        r.int32_array(n).map_err(|f| f.at(message, entry().child("partitions", Some((f.offset - first) / 4))))?;
        Ok(())
    })
}

/// An array's count, then its elements: validated by the tight `scan` when it accepts them,
/// else element by element with `precise`, which names the failing field.
#[inline(always)]
fn read_array(
    r: &mut Reader<'_>,
    message: MessageKind,
    name: &'static str,
    scan: impl Fn(&[u8], usize) -> Option<usize>,
    mut precise: impl FnMut(&mut Reader<'_>, usize) -> Result<(), DecodeError>,
) -> Result<ArrayRegion, DecodeError> {
    let count = r.array_len().map_err(|f| f.at(message, FieldPath::field(name)))?;
    let start = r.pos();
    if let Some(len) = scan(r.rest(), count) {
        r.advance(len);
        return Ok(ArrayRegion { start, end: r.pos(), count });
    }
    for i in 0..count {
        precise(r, i)?;
    }
    Ok(ArrayRegion { start, end: r.pos(), count })
}

/// The `int32` in a validated 4-byte chunk of an `int32` array (the list views' element reader).
#[inline(always)]
pub(crate) fn int32_of(b: &[u8]) -> i32 {
    i32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// One `{topic, partitions}` group as the writers see it: the owned message types implement it
/// one layer up, so this module stays the bottom of the codec and imports nothing above it.
pub(crate) trait PartitionGroup {
    /// The topic name.
    fn topic(&self) -> &str;
    /// Its partition ids.
    fn partitions(&self) -> &[i32];
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

    /// A string's bytes without validating them again (they were at decode time): for callers
    /// that only compare them with known names, where UTF-8 validation was a fifth of an eager
    /// sticky reassignment's instructions.
    #[inline]
    pub(crate) fn str_bytes(&mut self) -> &'a [u8] {
        let len = self.i16().max(0) as usize;
        self.take(len)
    }

    #[inline]
    pub(crate) fn str(&mut self) -> &'a str {
        // Validated at decode time; the fallback is unreachable for views built by this crate.
        core::str::from_utf8(self.str_bytes()).unwrap_or("")
    }
}

/// Where encoded bytes go: a real buffer, or a counter for `encoded_len`.
pub(crate) trait Sink {
    fn put(&mut self, bytes: &[u8]);

    /// A fixed-size field (the big-endian bytes of an integer).
    #[inline(always)]
    fn array<const N: usize>(&mut self, bytes: [u8; N]) {
        self.put(&bytes);
    }

    #[inline(always)]
    fn i16(&mut self, v: i16) {
        self.array(v.to_be_bytes());
    }

    #[inline(always)]
    fn i32(&mut self, v: i32) {
        self.array(v.to_be_bytes());
    }

    /// Many `int32`s (a partition list).
    #[inline]
    fn i32s(&mut self, values: &[i32]) {
        for &v in values {
            self.i32(v);
        }
    }

    #[inline(always)]
    fn string(&mut self, s: &str, field: &'static str) -> Result<(), EncodeError> {
        if s.len() > i16::MAX as usize {
            return Err(EncodeError::StringTooLong { field, len: s.len() });
        }
        self.i16(s.len() as i16);
        self.put(s.as_bytes());
        Ok(())
    }

    #[inline(always)]
    fn nullable_string(&mut self, s: Option<&str>, field: &'static str) -> Result<(), EncodeError> {
        match s {
            None => {
                self.i16(-1);
                Ok(())
            }
            Some(s) => self.string(s, field),
        }
    }

    #[inline(always)]
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

    #[inline(always)]
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

/// Writes into a zeroed buffer sized in advance by `encoded_len`: every field is a store into a
/// slice whose length is known, with no capacity check and no call to `memcpy` for the short
/// fields (names up to 32 bytes, integers, partition lists). The loops over names and groups
/// split each entry off the unwritten rest with one bounds check and keep their state in
/// registers: nothing here can grow or move the buffer. If the size was short, writing stops
/// and [`Presized::complete`] says so (the caller then encodes the ordinary way); it never
/// panics.
///
/// It borrows the buffer's bytes rather than owning the vector: the writers out of line see a
/// slice, and the vector's own fields stay in the caller's registers until it is returned.
/// (Moved through memory just before being returned, the vector would be stored field by field
/// and loaded back 16 bytes at a time, and a load spanning two recent stores waits for both to
/// reach the cache: measured, a fifth of a typical assignment's encoding.)
pub(crate) struct Presized<'a> {
    buf: &'a mut [u8],
    /// Where the next write goes; past the end of `buf` once a write did not fit.
    pos: usize,
}

/// A buffer of `len` zero bytes, to encode into.
#[inline]
pub(crate) fn zeroed(len: usize) -> Vec<u8> {
    // Not `vec![0; len]`: that asks the allocator for zeroed memory (`calloc`), which in
    // glibc bypasses the per-thread cache that a plain allocation and free go through
    // (measured: 22 ns against 14 ns for 300 bytes, allocation and free included).
    #[allow(clippy::slow_vector_initialization)]
    let mut buf = Vec::with_capacity(len);
    buf.resize(len, 0);
    buf
}

impl<'a> Presized<'a> {
    #[inline]
    pub(crate) fn new(buf: &'a mut [u8]) -> Self {
        Presized { buf, pos: 0 }
    }

    /// Whether every write fitted and they filled the buffer exactly.
    #[inline]
    pub(crate) fn complete(&self) -> bool {
        self.pos == self.buf.len()
    }

    /// A non-nullable name: its `int16` length, then its bytes; a name too long for its length
    /// makes the write fail.
    #[inline(always)]
    pub(crate) fn name(&mut self, s: &str) {
        match self.next(2 + s.len()).and_then(|dst| put_name::<Key>(dst, s.as_bytes())) {
            Some(_) => {}
            None => self.fail(),
        }
    }

    /// The unwritten part of the buffer, for a loop that writes many entries: it splits each
    /// entry off the front with a single bounds check. [`Presized::rejoin`] moves the position
    /// to what is left.
    #[inline(always)]
    fn unwritten(&mut self) -> &mut [u8] {
        self.buf.get_mut(self.pos..).unwrap_or_default()
    }

    #[inline(always)]
    fn rejoin(&mut self, left: usize) {
        self.pos = self.buf.len() - left;
    }

    /// Writes `names` as [`Presized::name`] does; whether they are in Java's order
    /// (non-strictly: a repeated name is in order).
    #[inline(never)]
    pub(crate) fn names_in_order(&mut self, names: &[String]) -> bool {
        let mut keys = KeyOrder::default();
        let mut rest = self.unwritten();
        for name in names {
            let bytes = name.as_bytes();
            let Some((key, tail)) =
                rest.split_at_mut_checked(2 + bytes.len()).and_then(|(dst, tail)| Some((put_name(dst, bytes)?, tail)))
            else {
                self.fail();
                return false;
            };
            keys.push(key);
            rest = tail;
        }
        let left = rest.len();
        self.rejoin(left);
        keys.ascending() || in_java_order(names.iter().map(String::as_str), false)
    }

    /// Writes a partition list's entries (without its count); whether they are canonical for
    /// a subscription: topics strictly in Java's order, partitions ascending.
    #[inline(never)]
    pub(crate) fn groups_in_order<G: PartitionGroup>(&mut self, groups: &[G]) -> bool {
        let mut keys = KeyOrder::default();
        let mut rest = self.unwritten();
        for g in groups {
            match put_group(rest, g.topic(), g.partitions(), put_ascending) {
                Some((tail, key, true)) => {
                    keys.push(key);
                    rest = tail;
                }
                // Partitions out of order: the caller encodes the general way.
                Some((_, _, false)) => return false,
                None => {
                    self.fail();
                    return false;
                }
            }
        }
        let left = rest.len();
        self.rejoin(left);
        keys.ascending() || in_java_order(groups.iter().map(|g| g.topic()), true)
    }

    /// Writes a partition list's entries (without its count); `false` when no topic can be
    /// listed twice, `true` when one may be (see [`RepeatFilter`]).
    #[inline(never)]
    pub(crate) fn groups_may_repeat<G: PartitionGroup>(&mut self, groups: &[G]) -> bool {
        let mut filter = RepeatFilter::default();
        let mut rest = self.unwritten();
        for g in groups {
            let Some((tail, print, ())) = put_group(rest, g.topic(), g.partitions(), put_any) else {
                // `complete` fails: whether topics repeat no longer matters.
                self.fail();
                return false;
            };
            filter.insert(print);
            rest = tail;
        }
        let left = rest.len();
        self.rejoin(left);
        filter.collision
    }

    /// Moves past the end after a write that did not fit: no later write fits, and
    /// [`Presized::complete`] fails.
    #[cold]
    fn fail(&mut self) {
        self.pos = self.buf.len() + 1;
    }

    /// The next `n` bytes of the buffer, or `None` when they do not fit. The position moves
    /// on either way, so after a write that did not fit it stays past the end. (It cannot
    /// overflow: it is a sum of lengths of slices in memory.)
    #[inline(always)]
    fn next(&mut self, n: usize) -> Option<&mut [u8]> {
        let start = self.pos;
        self.pos = start + n;
        self.buf.get_mut(start..self.pos)
    }
}

/// What [`order_key`] says about a name: its order key, and the OR of the bytes the key was
/// made from (their high bits say whether the key's order is also Java's).
#[derive(Clone, Copy)]
pub(crate) struct Key(u128, u64);

/// Whether a sequence of names is strictly ascending by [`order_key`] and made of ASCII keys:
/// then it is strictly ascending in Java's order too. (The converse does not hold: names that
/// share their first 15 bytes tie, and so do repeated names; the exact check decides those.)
#[derive(Clone, Copy, Default)]
pub(crate) struct KeyOrder {
    previous: u128,
    /// The OR of the bytes the keys were made from, with bit 7 also set by a key not above the
    /// one before it (one word, so that the loops pushing keys keep it in a register). The
    /// empty name's key is 0, so a list starting with it also goes to the exact check.
    high: u64,
}

impl KeyOrder {
    #[inline(always)]
    pub(crate) fn push(&mut self, key: Key) {
        self.high |= key.1 | u64::from(key.0 <= self.previous) << 7;
        self.previous = key.0;
    }

    /// True when the keys pushed are strictly ascending and ASCII.
    #[inline(always)]
    pub(crate) fn ascending(&self) -> bool {
        self.high & 0x8080_8080_8080_8080 == 0
    }
}

/// Names in Java's order (strictly, or allowing repeats), by [`java_cmp`].
#[cold]
#[inline(never)]
pub(crate) fn in_java_order<'a>(names: impl Iterator<Item = &'a str> + Clone, strictly: bool) -> bool {
    names.clone().zip(names.skip(1)).all(|(a, b)| match java_cmp(a, b) {
        Ordering::Less => true,
        Ordering::Equal => !strictly,
        Ordering::Greater => false,
    })
}

/// Whether `names` are in Java's order: strictly, or allowing a name to repeat.
#[inline]
pub(crate) fn names_sorted<'a>(names: impl Iterator<Item = &'a str> + Clone, strictly: bool) -> bool {
    let mut keys = KeyOrder::default();
    for name in names.clone() {
        keys.push(order_key(name.as_bytes()));
    }
    keys.ascending() || in_java_order(names, strictly)
}

/// A name's order key: its first 15 bytes, zero-padded, as a big-endian integer, with its length
/// (16 for every name longer than 15 bytes) in the lowest byte. Keys order names as their bytes
/// do where they differ: a smaller key is a smaller name. Equal keys are equal names, or two
/// names longer than 15 bytes with the same first 15. Byte order is Java's order when the bytes
/// are ASCII, which the key's second part tells.
#[inline(always)]
pub(crate) fn order_key(b: &[u8]) -> Key {
    let n = b.len();
    match (b.first_chunk::<8>(), b.last_chunk::<8>()) {
        (Some(head), Some(tail)) if n < 16 => short_key(head, tail, n),
        (Some(head), _) => match b.get(8..16).and_then(|s| s.first_chunk::<8>()) {
            Some(second) => {
                let rest = u64::from_be_bytes(*second) & !0xFF | 16;
                let key = u128::from(u64::from_be_bytes(*head)) << 64 | u128::from(rest);
                Key(key, u64::from_ne_bytes(*head) | u64::from_ne_bytes(*second))
            }
            None => Key(0, u64::MAX), // unreachable: `n >= 16` here
        },
        _ => match (b.first_chunk::<4>(), b.last_chunk::<4>()) {
            // Two overlapping 4-byte loads; the bytes they share land in the same place.
            (Some(first), Some(last)) => {
                let head =
                    u64::from(u32::from_be_bytes(*first)) << 32 | u64::from(u32::from_be_bytes(*last)) << (8 * (8 - n));
                Key(
                    u128::from(head) << 64 | n as u128,
                    u64::from(u32::from_ne_bytes(*first) | u32::from_ne_bytes(*last)),
                )
            }
            _ => {
                let head = b.iter().enumerate().fold(0, |acc, (i, &x)| acc | u64::from(x) << (56 - 8 * i));
                Key(u128::from(head) << 64 | n as u128, head)
            }
        },
    }
}

/// [`order_key`] of a name of `n` bytes, 8 to 15, from its first and last eight.
#[inline(always)]
fn short_key(head: &[u8; 8], tail: &[u8; 8], n: usize) -> Key {
    // Bytes 8.. of the name are the last `n - 8` of `tail`: shift them to the top (a shift by
    // 64 for `n == 8`, done as two shifts, leaves nothing).
    let rest = u64::from_be_bytes(*tail) << 1 << (8 * (16 - n) - 1);
    let key = u128::from(u64::from_be_bytes(*head)) << 64 | u128::from(rest | n as u64);
    Key(key, u64::from_ne_bytes(*head) | u64::from_ne_bytes(*tail))
}

/// A cheap fingerprint of a name, from its length and its first and last eight bytes (all of
/// it when shorter): equal names have equal fingerprints.
#[inline]
pub(crate) fn fingerprint_of(name: &[u8]) -> u64 {
    match (name.first_chunk::<8>(), name.last_chunk::<8>()) {
        (Some(head), Some(tail)) => mix(head, tail, name.len()),
        _ => mix(&[0; 8], &name.iter().fold(0u64, |acc, &b| acc << 8 | u64::from(b)).to_le_bytes(), name.len()),
    }
}

#[inline(always)]
fn mix(head: &[u8; 8], tail: &[u8; 8], n: usize) -> u64 {
    let mixed = u64::from_ne_bytes(*head) ^ u64::from_ne_bytes(*tail).rotate_left(23) ^ n as u64;
    mixed.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// What the encoders learn about a name from the loads that copy it.
trait NameSummary {
    /// For a name of `n` bytes, 8 to 15, from its first and last eight.
    fn short(head: &[u8; 8], tail: &[u8; 8], n: usize) -> Self;
    /// For any other name.
    fn other(name: &[u8]) -> Self;
}

impl NameSummary for Key {
    #[inline(always)]
    fn short(head: &[u8; 8], tail: &[u8; 8], n: usize) -> Self {
        short_key(head, tail, n)
    }

    #[inline(always)]
    fn other(name: &[u8]) -> Self {
        order_key(name)
    }
}

/// A fingerprint of a name: equal names have equal fingerprints.
struct Fingerprint(u64);

/// Whether a fingerprint may have been seen before: a Bloom filter of two 64-bit words, one bit
/// set in each by six bits of the fingerprint. A repeat always sets `collision`; distinct names
/// set it rarely for a few (about 6% of lists of 10 distinct names, 18% of 16), and then the
/// exact check decides. Two words in registers rather than a larger table in memory: a load
/// from the table can depend on the store just before it to an address that is only known
/// late, and how the processor guesses at that depends on where the code lies (measured: a
/// typical assignment took 47 or 58 ns from the same code, placed differently).
#[derive(Default)]
struct RepeatFilter {
    words: [u64; 2],
    collision: bool,
}

impl RepeatFilter {
    #[inline(always)]
    fn insert(&mut self, Fingerprint(print): Fingerprint) {
        let bits = [1u64 << (print >> 58), 1u64 << (print >> 52 & 63)];
        self.collision |= (self.words[0] & bits[0] != 0) & (self.words[1] & bits[1] != 0);
        self.words[0] |= bits[0];
        self.words[1] |= bits[1];
    }
}

impl NameSummary for Fingerprint {
    #[inline(always)]
    fn short(head: &[u8; 8], tail: &[u8; 8], n: usize) -> Self {
        Fingerprint(mix(head, tail, n))
    }

    #[inline(always)]
    fn other(name: &[u8]) -> Self {
        Fingerprint(fingerprint_of(name))
    }
}

/// Writes a name's `int16` length and bytes at the start of `dst` (`2 + name.len()` bytes) and
/// returns what `K` makes of it, from the same loads as the copy; `None` when the name is too
/// long for its `int16` length. Names of 8 to 15 bytes are done here, with two 8-byte moves;
/// the others out of line, so that the loops calling this keep their values in registers.
#[inline(always)]
fn put_name<K: NameSummary>(dst: &mut [u8], name: &[u8]) -> Option<K> {
    let n = name.len();
    match (name.first_chunk::<8>(), name.last_chunk::<8>(), dst.split_first_chunk_mut::<2>()) {
        (Some(&head), Some(&tail), Some((len, d))) if n < 16 => {
            // Loaded once, into registers: the stores below could overlap the name as far as
            // the compiler knows, and would otherwise make it load the words again.
            *len = (n as u16).to_be_bytes();
            if let Some(d) = d.first_chunk_mut::<8>() {
                *d = head;
            }
            if let Some(d) = d.last_chunk_mut::<8>() {
                *d = tail;
            }
            Some(K::short(&head, &tail, n))
        }
        _ => put_other_name(dst, name),
    }
}

/// [`put_name`] for names shorter than 8 bytes or longer than 15. Marked cold so that the
/// loops calling it are laid out for the inline case, with no taken jump on its way.
#[cold]
#[inline(never)]
fn put_other_name<K: NameSummary>(dst: &mut [u8], name: &[u8]) -> Option<K> {
    if name.len() > i16::MAX as usize {
        return None;
    }
    if let Some((len, rest)) = dst.split_first_chunk_mut::<2>() {
        *len = (name.len() as u16).to_be_bytes();
        if let Some(d) = rest.get_mut(..name.len()) {
            copy_short(d, name);
        }
    }
    Some(K::other(name))
}

/// Splits a topic's entry in a partition list off the front of `rest` and writes it there: its
/// name as [`put_name`] does, then its `int32` partition count and partitions. Returns the rest
/// after it, what `K` makes of the name, and what `put_partitions` returns; `None` when the
/// entry does not fit, its name is too long, or it has no partition (Java cannot write an
/// empty group: the general path drops it).
///
/// The entry is split in two (name and count, then partitions) with one bounds check each; for
/// a name of 8 to 15 bytes the fixed-size moves below need no further check.
#[inline(always)]
fn put_group<'b, K: NameSummary, R>(
    rest: &'b mut [u8],
    topic: &str,
    partitions: &[i32],
    put_partitions: impl FnOnce(&mut [u8], &[i32]) -> R,
) -> Option<(&'b mut [u8], K, R)> {
    let name = topic.as_bytes();
    let n = name.len();
    let (dst, tail) = rest.split_at_mut_checked(n + 6 + 4 * partitions.len())?;
    let (head, values) = dst.split_at_mut_checked(n + 6)?;
    if partitions.is_empty() {
        return None;
    }
    let count = (partitions.len() as u32).to_be_bytes();
    let summary = match (name.first_chunk::<8>(), name.last_chunk::<8>()) {
        (Some(&first), Some(&last)) if n < 16 => {
            // Length and first eight bytes at the front; last eight and the count at the back.
            if let Some(d) = head.first_chunk_mut::<10>() {
                d[..2].copy_from_slice(&(n as u16).to_be_bytes());
                d[2..].copy_from_slice(&first);
            }
            if let Some(d) = head.last_chunk_mut::<12>() {
                d[..8].copy_from_slice(&last);
                d[8..].copy_from_slice(&count);
            }
            K::short(&first, &last, n)
        }
        _ => {
            if let Some(d) = head.last_chunk_mut::<4>() {
                *d = count;
            }
            put_other_name(head, name)?
        }
    };
    Some((tail, summary, put_partitions(values, partitions)))
}

/// Writes `values` as big-endian `int32`s into `dst` (their size) while they ascend; `false`
/// (the rest unwritten) at the first one below the one before.
///
/// Four values per step (fewer loop steps than two at a time: 130 instructions per entry of ten
/// partitions instead of 143). The early exit keeps this a short scalar loop: vectorized (with
/// SSE2 only, byte swaps are long shuffle sequences) its setup would cost more than the few
/// partitions a topic usually has.
#[inline(always)]
fn put_ascending(dst: &mut [u8], values: &[i32]) -> bool {
    let mut previous = i32::MIN;
    // Four at a time, then the rest (up to three) one by one; each loop counts one index.
    let (values, rest) = values.split_at(values.len() & !3);
    let Some((dst, dst_rest)) = dst.split_at_mut_checked(4 * values.len()) else { return false };
    for (d, v) in dst.chunks_exact_mut(16).zip(values.chunks_exact(4)) {
        if let (Some(d), [a, b, c, e]) = (d.first_chunk_mut::<16>(), v) {
            if *a < previous || *b < *a || *c < *b || *e < *c {
                return false;
            }
            d[..4].copy_from_slice(&a.to_be_bytes());
            d[4..8].copy_from_slice(&b.to_be_bytes());
            d[8..12].copy_from_slice(&c.to_be_bytes());
            d[12..].copy_from_slice(&e.to_be_bytes());
            previous = *e;
        }
    }
    for (d, v) in dst_rest.chunks_exact_mut(4).zip(rest) {
        if *v < previous {
            return false;
        }
        d.copy_from_slice(&v.to_be_bytes());
        previous = *v;
    }
    true
}

/// Writes `values` as big-endian `int32`s into `dst` (their size). Up to four (the usual
/// number of partitions per topic in an assignment) without a loop; more out of line, four at
/// a time.
#[inline(always)]
fn put_any(dst: &mut [u8], values: &[i32]) {
    match values {
        [a, b, c, e] => {
            if let Some(d) = dst.first_chunk_mut::<16>() {
                put_four(d, [*a, *b, *c, *e]);
            }
        }
        _ if values.len() < 4 => {
            put_up_to_three(dst, values);
        }
        _ => put_many(dst, values),
    }
}

/// [`put_any`] for more than four values.
#[inline(never)]
fn put_many(dst: &mut [u8], values: &[i32]) {
    let mut quads = dst.chunks_exact_mut(16);
    let mut values_quads = values.chunks_exact(4);
    for (d, v) in (&mut quads).zip(&mut values_quads) {
        if let (Some(d), [a, b, c, e]) = (d.first_chunk_mut::<16>(), v) {
            put_four(d, [*a, *b, *c, *e]);
        }
    }
    put_up_to_three(quads.into_remainder(), values_quads.remainder());
}

#[inline(always)]
fn put_four(d: &mut [u8; 16], [a, b, c, e]: [i32; 4]) {
    if let Some((d0, d1)) = d.split_first_chunk_mut::<8>() {
        *d0 = pair_be(a, b);
        if let Some(d1) = d1.first_chunk_mut::<8>() {
            *d1 = pair_be(c, e);
        }
    }
}

#[inline(always)]
fn put_up_to_three(dst: &mut [u8], values: &[i32]) {
    match values {
        [a] => {
            if let Some(d) = dst.first_chunk_mut::<4>() {
                *d = a.to_be_bytes();
            }
        }
        [a, b] => {
            if let Some(d) = dst.first_chunk_mut::<8>() {
                *d = pair_be(*a, *b);
            }
        }
        [a, b, c] => {
            if let Some((d0, d1)) = dst.first_chunk_mut::<12>().and_then(|d| d.split_first_chunk_mut::<8>()) {
                *d0 = pair_be(*a, *b);
                if let Some(d1) = d1.first_chunk_mut::<4>() {
                    *d1 = c.to_be_bytes();
                }
            }
        }
        _ => {}
    }
}

/// Two `int32`s as eight big-endian bytes, with one byte swap of a word holding both (little-
/// endian: the swap reverses it, the rotation puts the first back first).
#[inline(always)]
fn pair_be(a: i32, b: i32) -> [u8; 8] {
    let word = u64::from(a as u32) | u64::from(b as u32) << 32;
    word.swap_bytes().rotate_left(32).to_le_bytes()
}

/// `dst.copy_from_slice(src)` for slices of equal length, with the short lengths done as two
/// overlapping fixed-size moves (inlined) instead of a call to `memcpy`.
#[inline(always)]
fn copy_short(dst: &mut [u8], src: &[u8]) {
    #[inline(always)]
    fn overlapping<const N: usize>(dst: &mut [u8], src: &[u8]) {
        if let (Some(d), Some(s)) = (dst.first_chunk_mut::<N>(), src.first_chunk::<N>()) {
            *d = *s;
        }
        if let (Some(d), Some(s)) = (dst.last_chunk_mut::<N>(), src.last_chunk::<N>()) {
            *d = *s;
        }
    }
    match src.len() {
        0 => {}
        1..=3 => {
            for (d, s) in dst.iter_mut().zip(src) {
                *d = *s;
            }
        }
        4..=7 => overlapping::<4>(dst, src),
        8..=15 => overlapping::<8>(dst, src),
        16..=32 => overlapping::<16>(dst, src),
        _ => dst.copy_from_slice(src),
    }
}

impl Sink for Presized<'_> {
    #[inline(always)]
    fn put(&mut self, bytes: &[u8]) {
        if let Some(dst) = self.next(bytes.len()) {
            copy_short(dst, bytes);
        }
    }

    #[inline(always)]
    fn array<const N: usize>(&mut self, bytes: [u8; N]) {
        if let Some(dst) = self.next(N).and_then(|d| d.first_chunk_mut::<N>()) {
            *dst = bytes;
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

/// True when `partitions` are in ascending order. Branch-free, so the compiler can vectorize it.
#[inline(always)]
pub(crate) fn is_ascending(partitions: &[i32]) -> bool {
    let next = partitions.get(1..).unwrap_or_default();
    !partitions.iter().zip(next).fold(false, |unsorted, (a, b)| unsorted | (a > b))
}

/// Java's `String.compareTo`: lexicographic over UTF-16 code units. It equals byte order for
/// everything but supplementary-plane characters, which sort below U+E000..U+FFFF in UTF-16.
///
/// ```
/// use kafka_consumer_protocol::codec::java_string_cmp;
/// use std::cmp::Ordering;
/// assert_eq!(java_string_cmp("bar", "foo"), Ordering::Less);
/// // U+1F600 is a surrogate pair (0xD83D ...) in UTF-16, which sorts before U+FF5E.
/// assert_eq!(java_string_cmp("\u{1F600}", "\u{FF5E}"), Ordering::Less);
/// assert_eq!("\u{1F600}".cmp("\u{FF5E}"), Ordering::Greater);
/// ```
#[inline]
pub fn java_string_cmp(a: &str, b: &str) -> Ordering {
    java_cmp(a, b)
}

/// [`java_string_cmp`], always inlined (the encoders' order checks call it once per name).
///
/// It compares eight bytes at a time as big-endian words (the last word of the common prefix
/// overlaps the one before it). The first differing bytes decide unless one of them starts a
/// character at or above U+E000 (lead byte 0xEE and up, every 4-byte sequence included): those
/// are the only characters whose UTF-16 order differs from their UTF-8 order, and they go to the
/// slow path. A differing continuation byte follows equal lead bytes, so it orders the same way
/// in both encodings.
#[inline(always)]
pub(crate) fn java_cmp(a: &str, b: &str) -> Ordering {
    let (ab, bb) = (a.as_bytes(), b.as_bytes());
    let common = ab.len().min(bb.len());
    if common >= 8 {
        let mut at = 0;
        loop {
            let (Some(x), Some(y)) = (word_at(ab, at), word_at(bb, at)) else {
                return java_cmp_utf16(a, b); // unreachable: `at + 8 <= common`
            };
            if x != y {
                let shift = 56 - ((x ^ y).leading_zeros() & !7);
                return if ((x >> shift) as u8).max((y >> shift) as u8) < 0xEE {
                    x.cmp(&y)
                } else {
                    java_cmp_utf16(a, b)
                };
            }
            if at + 8 >= common {
                return ab.len().cmp(&bb.len());
            }
            at = (at + 8).min(common - 8);
        }
    }
    for (&x, &y) in ab.iter().zip(bb) {
        if x != y {
            return if x.max(y) < 0xEE { x.cmp(&y) } else { java_cmp_utf16(a, b) };
        }
    }
    ab.len().cmp(&bb.len())
}

#[inline(always)]
fn word_at(bytes: &[u8], at: usize) -> Option<u64> {
    bytes.get(at..)?.first_chunk::<8>().map(|w| u64::from_be_bytes(*w))
}

#[cold]
#[inline(never)]
fn java_cmp_utf16(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TopicPartitions;

    /// The fingerprint the assignment fast path takes from the words it copies.
    fn copied_fingerprint(name: &str) -> Fingerprint {
        let mut dst = vec![0; 2 + name.len()];
        put_name(&mut dst, name.as_bytes()).unwrap()
    }

    /// Two distinct names that the repeat filter cannot tell apart send the assignment encoder
    /// to the exact check, which finds them distinct: the fast path's bytes stand, and equal
    /// the general writer's. A repeat is always caught.
    #[test]
    fn repeat_filter_false_positives_are_settled_exactly() {
        let mut seen = std::collections::HashMap::new();
        let (first, second) = (0..100_000)
            .map(|i| format!("topic-{i:05}"))
            .find_map(|name| {
                let Fingerprint(print) = copied_fingerprint(&name);
                seen.insert((print >> 58, print >> 52 & 63), name.clone()).map(|earlier| (earlier, name))
            })
            .expect("two names share both bits");
        let mut filter = RepeatFilter::default();
        filter.insert(copied_fingerprint(&first));
        assert!(!filter.collision);
        filter.insert(copied_fingerprint(&second));
        assert!(filter.collision, "{first} and {second}");

        let distinct = crate::Assignment::new(vec![
            TopicPartitions::new(first.clone(), [0, 1]),
            TopicPartitions::new(second.clone(), [2]),
        ]);
        let bytes = distinct.encode(crate::Version::V3).unwrap();
        let mut general = Vec::new();
        distinct.encode_into(crate::Version::V3, &mut general).unwrap();
        assert_eq!(bytes, general);
        assert_eq!(crate::Assignment::decode(&bytes).unwrap(), distinct);

        let repeated = crate::Assignment::new(vec![
            TopicPartitions::new(first.clone(), [0]),
            TopicPartitions::new(second, [2]),
            TopicPartitions::new(first.clone(), [1]),
        ]);
        let merged = crate::Assignment::decode(&repeated.encode(crate::Version::V3).unwrap()).unwrap();
        assert_eq!(merged.assigned_partitions[0], TopicPartitions::new(first, [0, 1]));
        assert_eq!(merged.assigned_partitions.len(), 2);
    }

    /// A smaller order key is a smaller name in byte order, and equal keys are equal names or
    /// names longer than 15 bytes that share their first 15; the key's second part has a high
    /// bit set exactly when one of the bytes it covers (the first 16) is not ASCII. Checked on
    /// every pair of names of every length from 0 to 20 over a small alphabet (with the zero
    /// byte, which pads the keys), and a few non-ASCII ones.
    #[test]
    fn order_keys_order_names_by_their_bytes() {
        let mut names: Vec<Vec<u8>> = vec![Vec::new()];
        for len in 1..=20 {
            for fill in [b'\0', b'a', b'z'] {
                for last in [b'\0', b'a', b'b', b'z'] {
                    let mut name = vec![fill; len];
                    name[len - 1] = last;
                    names.push(name.clone());
                    // The same name with a byte changed in the middle.
                    name[len / 2] = b'm';
                    names.push(name);
                }
            }
        }
        names.push("é".repeat(5).into_bytes());
        names.push(format!("abcdefghijklmn{}", '\u{FF5E}').into_bytes());
        names.push(format!("abc{}", '\u{1F600}').into_bytes());
        for a in &names {
            let ka = order_key(a);
            let ascii = a.iter().take(16).all(u8::is_ascii);
            assert_eq!(ka.1 & 0x8080_8080_8080_8080 == 0, ascii, "{a:?}");
            for b in &names {
                let kb = order_key(b);
                if ka.0 < kb.0 {
                    assert!(a < b, "{a:?} keyed below {b:?}");
                } else if ka.0 == kb.0 {
                    assert!(a == b || (a.len() > 15 && b.len() > 15 && a[..15] == b[..15]), "{a:?} ties {b:?}");
                }
            }
        }
    }

    /// The fast comparison agrees with comparing UTF-16 code units on every pair of a set of
    /// names chosen to hit each path: short and long common prefixes, the overlapping last word,
    /// prefixes of each other, and the characters whose UTF-16 order differs from UTF-8's.
    #[test]
    fn java_order_matches_utf16_order() {
        let mut names: Vec<String> = [
            "",
            "a",
            "a\0",
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
            "\u{7f}",
            "é",
            "\u{1F600}",
            "\u{FF5E}",
            "\u{E000}",
            "\u{D7FF}",
            "\u{10000}",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // The tricky characters at every position of a long name, against each other.
        for c in ["\u{1F600}", "\u{FF5E}", "\u{E000}", "\u{EFFF}", "\u{D7FF}", "é", "z"] {
            for at in [0, 3, 7, 8, 9, 15, 16, 20] {
                let mut s = "x".repeat(at);
                s.push_str(c);
                s.push_str("tail");
                names.push(s);
            }
        }
        for a in &names {
            for b in &names {
                let java = a.encode_utf16().cmp(b.encode_utf16());
                assert_eq!(java_string_cmp(a, b), java, "{a:?} vs {b:?}");
            }
        }
    }
}
