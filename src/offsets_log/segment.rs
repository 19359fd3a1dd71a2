//! Framing of a segment file: record batches (magic 2) and message sets (magic 0 and 1), their
//! checksums, and decompression bounded by [`Limits`].

use std::io::Read;

use super::error::{LogError, LogErrorKind};

/// Bounds on what one batch may cost; a batch past them is an error, never unbounded memory.
///
/// Reading a segment holds one batch's bytes and, when it is compressed, its inflated records:
/// at most `max_batch_bytes + max_inflated_bytes` whatever the file's size, plus for zstd the
/// decoder's window (at most twice `max_inflated_bytes`, within 8 to 128 MiB).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The largest batch read (bytes after the length field). Default 64 MiB, far above what a
    /// broker accepts (`message.max.bytes` defaults to 1 MiB; `__consumer_offsets` batches are
    /// bounded by `offsets.load.buffer.size`-sized reads).
    pub max_batch_bytes: usize,
    /// The most a compressed batch may inflate to. Default 128 MiB.
    pub max_inflated_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_batch_bytes: 64 << 20, max_inflated_bytes: 128 << 20 }
    }
}

/// The codec a batch's records are compressed with (attribute bits 0-2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Compression {
    /// Not compressed.
    None,
    /// gzip (codec 1).
    Gzip,
    /// Snappy (codec 2), with Kafka's xerial framing or raw.
    Snappy,
    /// LZ4 frame format (codec 3).
    Lz4,
    /// Zstandard (codec 4).
    Zstd,
}

impl Compression {
    fn from_attributes(attributes: i16, position: u64) -> Result<Self, LogError> {
        Ok(match attributes & 0x07 {
            0 => Compression::None,
            1 => Compression::Gzip,
            2 => Compression::Snappy,
            3 => Compression::Lz4,
            4 => Compression::Zstd,
            c => return Err(LogError::new(LogErrorKind::UnknownCompression(c as u8), position, "attributes")),
        })
    }

    /// The codec's name as Kafka's `compression.type` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Snappy => "snappy",
            Compression::Lz4 => "lz4",
            Compression::Zstd => "zstd",
        }
    }
}

/// A batch's header: where it is, what it claims, whether its checksum holds.
///
/// For magic 0 and 1 a "batch" is one top-level message: one record, or the inner messages of
/// a compressed wrapper.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchHeader {
    /// Byte offset of the batch in the segment.
    pub position: u64,
    /// Size of the batch in bytes, its offset and length fields included.
    pub size: usize,
    /// The first offset (magic 2: `baseOffset`; magic 0/1: the wrapper's offset).
    pub base_offset: i64,
    /// The magic byte: 0, 1 or 2.
    pub magic: i8,
    /// The codec of its records.
    pub compression: Compression,
    /// The checksum stored in the batch.
    pub stored_crc: u32,
    /// The checksum computed over its bytes (CRC-32C for magic 2, CRC-32 for 0 and 1).
    pub computed_crc: u32,
    /// Magic 2: a transaction marker batch (its records are not coordinator records).
    pub is_control: bool,
    /// Magic 2: part of a transaction.
    pub is_transactional: bool,
    /// `LogAppendTime` timestamps (attribute bit 3).
    pub log_append_time: bool,
    /// Magic 2: `maxTimestamp`; magic 1: the message's timestamp; magic 0: -1.
    pub max_timestamp: i64,
    /// Magic 2: the record count the header declares; magic 0/1: 1 for a plain message, -1 for a
    /// compressed wrapper (known once read).
    pub declared_records: i32,
    /// Magic 2: the producer id (-1 without one).
    pub producer_id: i64,
}

impl BatchHeader {
    /// Whether the stored checksum matches the bytes.
    pub fn crc_valid(&self) -> bool {
        self.stored_crc == self.computed_crc
    }
}

/// One record of a batch, borrowed from the reader's buffers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogRecord<'a> {
    /// The record's offset in the partition.
    pub offset: i64,
    /// Its timestamp (ms since the epoch; -1 for magic 0).
    pub timestamp: i64,
    /// Its key, `None` when null.
    pub key: Option<&'a [u8]>,
    /// Its value, `None` for a tombstone.
    pub value: Option<&'a [u8]>,
    /// Byte offset of the record in the segment (of its batch when the batch is compressed).
    pub position: u64,
}

/// A batch read from a segment: its header and an iterator over its records.
#[derive(Debug)]
pub struct Batch<'r> {
    /// The header.
    pub header: BatchHeader,
    records: &'r [u8],
    mode: Mode,
}

#[derive(Clone, Copy, Debug)]
enum Mode {
    /// Magic 2 records, `count` declared, relative to the bases.
    V2 { base_offset: i64, base_timestamp: i64, log_append_time: bool, max_timestamp: i64, count: i32 },
    /// A message set (the inflated inner set of a wrapper): `offset_shift` is added to each inner
    /// offset (magic 1 inner offsets are relative); `wrapper_timestamp` replaces inner timestamps
    /// under LogAppendTime.
    Legacy { offset_shift: i64, wrapper_timestamp: Option<i64> },
    /// One plain magic 0/1 message, its key and value ranges in `records`.
    Single { offset: i64, timestamp: i64, key: Option<(usize, usize)>, value: Option<(usize, usize)> },
}

impl<'r> Batch<'r> {
    /// The records, in order; an error ends the iteration (the next batch is still read).
    pub fn records(&self) -> Records<'r> {
        Records { bytes: self.records, pos: 0, read: 0, mode: self.mode, done: false, position: self.header.position }
    }
}

/// The records of a [`Batch`].
#[derive(Debug)]
pub struct Records<'r> {
    bytes: &'r [u8],
    pos: usize,
    read: i32,
    mode: Mode,
    done: bool,
    position: u64,
}

impl<'r> Iterator for Records<'r> {
    type Item = Result<LogRecord<'r>, LogError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let item = match self.mode {
            Mode::Single { offset, timestamp, key, value } => {
                self.done = true;
                let slice = |r: Option<(usize, usize)>| r.map(|(a, b)| &self.bytes[a..b]);
                return Some(Ok(LogRecord {
                    offset,
                    timestamp,
                    key: slice(key),
                    value: slice(value),
                    position: self.position,
                }));
            }
            Mode::V2 { base_offset, base_timestamp, log_append_time, max_timestamp, count } => {
                if self.read >= count {
                    self.done = true;
                    return None;
                }
                self.next_v2(base_offset, base_timestamp, log_append_time, max_timestamp, count)
            }
            Mode::Legacy { offset_shift, wrapper_timestamp } => {
                if self.pos >= self.bytes.len() {
                    self.done = true;
                    return None;
                }
                self.next_legacy(offset_shift, wrapper_timestamp)
            }
        };
        if item.is_err() {
            self.done = true;
        } else {
            self.read += 1;
        }
        Some(item)
    }
}

impl<'r> Records<'r> {
    fn err(&self, kind: LogErrorKind, field: &'static str) -> LogError {
        LogError::new(kind, self.position, field)
    }

    fn next_v2(
        &mut self,
        base_offset: i64,
        base_timestamp: i64,
        log_append_time: bool,
        max_timestamp: i64,
        count: i32,
    ) -> Result<LogRecord<'r>, LogError> {
        if self.pos >= self.bytes.len() {
            return Err(self.err(LogErrorKind::RecordCountBeyondBatch { declared: count, read: self.read }, "records"));
        }
        let mut c = Cur { buf: self.bytes, pos: self.pos };
        let length = c.varint().map_err(|k| self.err(k, "record.length"))?;
        if length < 0 || length as usize > c.remaining() {
            return Err(
                self.err(LogErrorKind::RecordCountBeyondBatch { declared: count, read: self.read }, "record.length")
            );
        }
        let end = c.pos + length as usize;
        let mut r = Cur { buf: &self.bytes[..end], pos: c.pos };
        let map = |k| LogError::new(k, self.position, "record");
        r.take(1).map_err(map)?; // attributes
        let timestamp_delta = r.varlong().map_err(map)?;
        let offset_delta = r.varint().map_err(map)?;
        let key = r.varbytes().map_err(|k| self.err(k, "record.key"))?;
        let value = r.varbytes().map_err(|k| self.err(k, "record.value"))?;
        // Headers are not used by coordinator records; the record's length already bounds them.
        self.pos = end;
        let timestamp = if log_append_time { max_timestamp } else { base_timestamp.wrapping_add(timestamp_delta) };
        Ok(LogRecord {
            offset: base_offset.wrapping_add(i64::from(offset_delta)),
            timestamp,
            key,
            value,
            position: self.position,
        })
    }

    fn next_legacy(&mut self, offset_shift: i64, wrapper_timestamp: Option<i64>) -> Result<LogRecord<'r>, LogError> {
        let mut c = Cur { buf: self.bytes, pos: self.pos };
        let map = |k| LogError::new(k, self.position, "message");
        let offset = c.i64().map_err(map)?;
        let size = c.i32().map_err(map)?;
        if size < 14 || size as usize > c.remaining() {
            return Err(self.err(LogErrorKind::InvalidLength(i64::from(size)), "message.size"));
        }
        let end = c.pos + size as usize;
        let mut m = Cur { buf: &self.bytes[..end], pos: c.pos };
        m.take(4).map_err(map)?; // crc: covered by the wrapper's
        let magic = m.i8().map_err(map)?;
        m.take(1).map_err(map)?; // attributes
        let timestamp = if magic >= 1 { m.i64().map_err(map)? } else { -1 };
        let key = m.bytes32().map_err(|k| self.err(k, "message.key"))?;
        let value = m.bytes32().map_err(|k| self.err(k, "message.value"))?;
        self.pos = end;
        Ok(LogRecord {
            offset: offset.wrapping_add(offset_shift),
            timestamp: wrapper_timestamp.unwrap_or(timestamp),
            key,
            value,
            position: self.position,
        })
    }
}

/// Reads the batches of a segment from any [`Read`], one at a time, holding one batch in memory.
///
/// ```
/// use kafka_consumer_protocol::offsets_log::{Limits, SegmentReader};
///
/// let empty: &[u8] = &[];
/// let mut reader = SegmentReader::new(empty, Limits::default());
/// assert!(reader.next_batch().is_none());
/// ```
#[derive(Debug)]
pub struct SegmentReader<R> {
    input: R,
    limits: Limits,
    position: u64,
    buf: Vec<u8>,
    inflated: Vec<u8>,
    finished: bool,
}

const LOG_OVERHEAD: usize = 12;
const V2_HEADER: usize = 61;
const LEGACY_MIN: usize = 14;

impl<R: Read> SegmentReader<R> {
    /// A reader over `input` (a segment file, or a slice of one), with `limits`.
    pub fn new(input: R, limits: Limits) -> Self {
        SegmentReader { input, limits, position: 0, buf: Vec::new(), inflated: Vec::new(), finished: false }
    }

    /// Bytes consumed so far.
    pub fn position(&self) -> u64 {
        self.position
    }

    /// The next batch, or an error about it; `None` at the end of the input.
    ///
    /// After an error that leaves the framing intact (a batch above the limit, one that does not
    /// decompress) the next call reads the following batch; after one that breaks it (a truncated
    /// batch, an invalid length) the next call returns `None`.
    #[allow(clippy::should_implement_trait)]
    pub fn next_batch(&mut self) -> Option<Result<Batch<'_>, LogError>> {
        if self.finished {
            return None;
        }
        match self.fill() {
            Ok(false) => {
                self.finished = true;
                None
            }
            Ok(true) => Some(self.parse()),
            Err(e) => Some(Err(e)),
        }
    }

    fn fail(&mut self, kind: LogErrorKind, field: &'static str, position: u64) -> LogError {
        self.finished = true;
        LogError::new(kind, position, field)
    }

    /// Reads the next batch's bytes into `buf`; false at a clean end of input.
    fn fill(&mut self) -> Result<bool, LogError> {
        let start = self.position;
        let mut head = [0u8; LOG_OVERHEAD];
        let got =
            read_full(&mut self.input, &mut head).map_err(|e| self.fail(LogErrorKind::Io(e.kind()), "batch", start))?;
        if got == 0 {
            return Ok(false);
        }
        if got < LOG_OVERHEAD {
            return Err(self.fail(LogErrorKind::Truncated, "batch.length", start));
        }
        self.position += LOG_OVERHEAD as u64;
        let length = i32::from_be_bytes([head[8], head[9], head[10], head[11]]);
        if length < LEGACY_MIN as i32 {
            return Err(self.fail(LogErrorKind::InvalidBatchLength(length), "batch.length", start + 8));
        }
        let len = length as usize;
        if len > self.limits.max_batch_bytes {
            // Skip it without holding it: the next batch is still framed.
            let skipped = std::io::copy(&mut (&mut self.input).take(len as u64), &mut std::io::sink())
                .map_err(|e| self.fail(LogErrorKind::Io(e.kind()), "batch", start))?;
            self.position += skipped;
            if skipped < len as u64 {
                return Err(self.fail(
                    LogErrorKind::BatchBeyondFile { length, available: skipped },
                    "batch.length",
                    start + 8,
                ));
            }
            return Err(LogError::new(
                LogErrorKind::BatchTooLarge { length, limit: self.limits.max_batch_bytes },
                start + 8,
                "batch.length",
            ));
        }
        self.buf.clear();
        self.buf.extend_from_slice(&head);
        // Grow with what actually arrives, never by the claimed length up front.
        let got = (&mut self.input)
            .take(len as u64)
            .read_to_end(&mut self.buf)
            .map_err(|e| self.fail(LogErrorKind::Io(e.kind()), "batch", start))?;
        self.position += got as u64;
        if got < len {
            return Err(self.fail(
                LogErrorKind::BatchBeyondFile { length, available: got as u64 },
                "batch.length",
                start + 8,
            ));
        }
        Ok(true)
    }

    fn parse(&mut self) -> Result<Batch<'_>, LogError> {
        let position = self.position - self.buf.len() as u64;
        let buf = &self.buf;
        let magic = buf[16] as i8;
        match magic {
            2 => {
                if buf.len() < V2_HEADER {
                    return Err(LogError::new(
                        LogErrorKind::InvalidBatchLength(buf.len() as i32 - 12),
                        position + 8,
                        "batch.length",
                    ));
                }
                let mut c = Cur { buf, pos: 0 };
                let base_offset = c.i64().unwrap_or(0);
                c.pos = 17;
                let stored_crc = c.i32().unwrap_or(0) as u32;
                let attributes = c.i16().unwrap_or(0);
                let _last_offset_delta = c.i32().unwrap_or(0);
                let base_timestamp = c.i64().unwrap_or(0);
                let max_timestamp = c.i64().unwrap_or(0);
                let producer_id = c.i64().unwrap_or(0);
                c.pos = 57;
                let count = c.i32().unwrap_or(0);
                let computed_crc = crc32c::crc32c(&buf[21..]);
                let compression = Compression::from_attributes(attributes, position + 21)?;
                if count < 0 {
                    return Err(LogError::new(
                        LogErrorKind::InvalidLength(i64::from(count)),
                        position + 57,
                        "batch.records_count",
                    ));
                }
                let header = BatchHeader {
                    position,
                    size: buf.len(),
                    base_offset,
                    magic,
                    compression,
                    stored_crc,
                    computed_crc,
                    is_control: attributes & 0x20 != 0,
                    is_transactional: attributes & 0x10 != 0,
                    log_append_time: attributes & 0x08 != 0,
                    max_timestamp,
                    declared_records: count,
                    producer_id,
                };
                let mode = Mode::V2 {
                    base_offset,
                    base_timestamp,
                    log_append_time: header.log_append_time,
                    max_timestamp,
                    count,
                };
                let records: &[u8] = if compression == Compression::None {
                    &self.buf[V2_HEADER..]
                } else {
                    inflate(
                        compression,
                        &self.buf[V2_HEADER..],
                        &mut self.inflated,
                        self.limits.max_inflated_bytes,
                        position,
                    )?;
                    &self.inflated
                };
                Ok(Batch { header, records, mode })
            }
            0 | 1 => {
                let mut c = Cur { buf, pos: 0 };
                let base_offset = c.i64().unwrap_or(0);
                c.pos = 12;
                let stored_crc = c.i32().unwrap_or(0) as u32;
                let computed_crc = crc32fast::hash(&buf[16..]);
                c.pos = 17;
                let map = |k| LogError::new(k, position, "message");
                let attributes = c.i8().map_err(map)?;
                let timestamp = if magic == 1 { c.i64().map_err(map)? } else { -1 };
                let key_start = c.pos + 4;
                let key = c.bytes32().map_err(|k| LogError::new(k, position, "message.key"))?;
                let key_range = key.map(|k| (key_start, key_start + k.len()));
                let value_start = c.pos + 4;
                let value = c.bytes32().map_err(|k| LogError::new(k, position, "message.value"))?;
                let value_range = value.map(|v| (value_start, value_start + v.len()));
                let compression = Compression::from_attributes(i16::from(attributes), position + 17)?;
                let log_append_time = magic == 1 && attributes & 0x08 != 0;
                let header = BatchHeader {
                    position,
                    size: buf.len(),
                    base_offset,
                    magic,
                    compression,
                    stored_crc,
                    computed_crc,
                    is_control: false,
                    is_transactional: false,
                    log_append_time,
                    max_timestamp: timestamp,
                    declared_records: if compression == Compression::None { 1 } else { -1 },
                    producer_id: -1,
                };
                if compression == Compression::None {
                    let mode = Mode::Single { offset: base_offset, timestamp, key: key_range, value: value_range };
                    return Ok(Batch { header, records: &self.buf, mode });
                }
                let (a, b) = value_range.unwrap_or((0, 0));
                inflate(compression, &self.buf[a..b], &mut self.inflated, self.limits.max_inflated_bytes, position)?;
                // Magic 1 inner offsets are relative, the wrapper carries the last one's absolute
                // offset; magic 0 inner offsets are absolute.
                let offset_shift = if magic == 1 { base_offset - last_inner_offset(&self.inflated) } else { 0 };
                let mode = Mode::Legacy { offset_shift, wrapper_timestamp: log_append_time.then_some(timestamp) };
                Ok(Batch { header, records: &self.inflated, mode })
            }
            other => Err(LogError::new(LogErrorKind::UnsupportedMagic(other), position + 16, "batch.magic")),
        }
    }
}

/// The offset of the last well-framed message of a message set (0 when none).
fn last_inner_offset(set: &[u8]) -> i64 {
    let mut c = Cur { buf: set, pos: 0 };
    let mut last = 0;
    while let (Ok(offset), Ok(size)) = (c.i64(), c.i32()) {
        if size < 0 || c.take(size as usize).is_err() {
            break;
        }
        last = offset;
    }
    last
}

fn read_full(input: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match input.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Inflates `input` into `out` (cleared first), never past `limit` bytes.
pub(crate) fn inflate(
    codec: Compression,
    input: &[u8],
    out: &mut Vec<u8>,
    limit: usize,
    position: u64,
) -> Result<(), LogError> {
    out.clear();
    let too_large = || LogError::new(LogErrorKind::InflatedTooLarge { limit }, position, "records");
    let bad = |name| LogError::new(LogErrorKind::Decompression(name), position, "records");
    let read_bounded = |r: &mut dyn Read, out: &mut Vec<u8>, name| -> Result<(), LogError> {
        let n = r.take(limit as u64 + 1).read_to_end(out).map_err(|_| bad(name))?;
        if n > limit {
            return Err(too_large());
        }
        Ok(())
    };
    match codec {
        Compression::None => {
            if input.len() > limit {
                return Err(too_large());
            }
            out.extend_from_slice(input);
            Ok(())
        }
        Compression::Gzip => read_bounded(&mut flate2::read::GzDecoder::new(input), out, "gzip"),
        Compression::Zstd => {
            let mut decoder = zstd::stream::read::Decoder::with_buffer(input).map_err(|_| bad("zstd"))?;
            // The window is memory the decoder holds: at most twice the inflate limit, but no
            // less than 8 MiB (the window of zstd's levels 1-9 when the content size is not
            // pledged, as Kafka's streaming compressor does) and no more than zstd's own default
            // cap of 128 MiB.
            let window_log = (usize::BITS - limit.leading_zeros()).clamp(23, 27);
            decoder.window_log_max(window_log).map_err(|_| bad("zstd"))?;
            let n = decoder.take(limit as u64 + 1).read_to_end(out).map_err(|e| {
                // A frame whose window is above the limit would inflate past it too.
                if e.to_string().contains("too much memory") {
                    too_large()
                } else {
                    bad("zstd")
                }
            })?;
            if n > limit {
                return Err(too_large());
            }
            Ok(())
        }
        Compression::Snappy => inflate_snappy(input, out, limit).map_err(|k| match k {
            Some(()) => too_large(),
            None => bad("snappy"),
        }),
        Compression::Lz4 => inflate_lz4(input, out, limit).map_err(|k| match k {
            Some(()) => too_large(),
            None => bad("lz4"),
        }),
    }
}

const XERIAL_MAGIC: [u8; 8] = [0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0];

/// `Err(Some(()))`: past the limit; `Err(None)`: malformed.
fn inflate_snappy(input: &[u8], out: &mut Vec<u8>, limit: usize) -> Result<(), Option<()>> {
    let raw_block = |block: &[u8], out: &mut Vec<u8>| -> Result<(), Option<()>> {
        let len = snap::raw::decompress_len(block).map_err(|_| None)?;
        if len > limit - out.len() {
            return Err(Some(()));
        }
        let start = out.len();
        out.resize(start + len, 0);
        let n = snap::raw::Decoder::new().decompress(block, &mut out[start..]).map_err(|_| None)?;
        out.truncate(start + n);
        Ok(())
    };
    if input.len() >= 16 && input[..8] == XERIAL_MAGIC {
        // Kafka's Java producer: SnappyOutputStream framing (magic, version, compatible version,
        // then blocks each prefixed by a big-endian int32 length).
        let mut c = Cur { buf: input, pos: 16 };
        while c.remaining() > 0 {
            let len = c.i32().map_err(|_| None)?;
            if len < 0 {
                return Err(None);
            }
            let block = c.take(len as usize).map_err(|_| None)?;
            raw_block(block, out)?;
        }
        Ok(())
    } else {
        raw_block(input, out)
    }
}

/// The LZ4 frame format as Kafka writes it (KafkaLZ4BlockOutputStream; its magic 0 header
/// checksum defect is why the header checksum is not verified).
fn inflate_lz4(input: &[u8], out: &mut Vec<u8>, limit: usize) -> Result<(), Option<()>> {
    let mut c = Cur { buf: input, pos: 0 };
    let magic = c.take(4).map_err(|_| None)?;
    if magic != [0x04, 0x22, 0x4D, 0x18] {
        return Err(None);
    }
    let flg = c.take(1).map_err(|_| None)?[0];
    let bd = c.take(1).map_err(|_| None)?[0];
    if flg >> 6 != 1 {
        return Err(None);
    }
    let independent = flg & 0x20 != 0;
    let block_checksum = flg & 0x10 != 0;
    let content_size = flg & 0x08 != 0;
    let dict_id = flg & 0x01 != 0;
    let max_block = match (bd >> 4) & 0x07 {
        4 => 64 << 10,
        5 => 256 << 10,
        6 => 1 << 20,
        7 => 4 << 20,
        _ => return Err(None),
    };
    c.take(if content_size { 8 } else { 0 } + if dict_id { 4 } else { 0 } + 1).map_err(|_| None)?;
    loop {
        let size = c.take(4).map_err(|_| None)?;
        let size = u32::from_le_bytes([size[0], size[1], size[2], size[3]]);
        if size == 0 {
            return Ok(()); // end mark; an optional content checksum may follow
        }
        let uncompressed = size & 0x8000_0000 != 0;
        let block = c.take((size & 0x7FFF_FFFF) as usize).map_err(|_| None)?;
        if block_checksum {
            c.take(4).map_err(|_| None)?;
        }
        let start = out.len();
        if uncompressed {
            if block.len() > limit - start {
                return Err(Some(()));
            }
            out.extend_from_slice(block);
            continue;
        }
        let room = max_block.min(limit - start);
        out.resize(start + room, 0);
        let result = if independent || start == 0 {
            lz4_flex::block::decompress_into(block, &mut out[start..])
        } else {
            let (before, after) = out.split_at_mut(start);
            let dict = &before[start.saturating_sub(64 << 10)..];
            lz4_flex::block::decompress_into_with_dict(block, after, dict)
        };
        match result {
            Ok(n) => out.truncate(start + n),
            Err(_) if room < max_block => return Err(Some(())),
            Err(_) => return Err(None),
        }
    }
}

/// A big-endian cursor over a slice; errors carry only the kind, callers add where.
pub(crate) struct Cur<'a> {
    pub(crate) buf: &'a [u8],
    pub(crate) pos: usize,
}

impl<'a> Cur<'a> {
    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], LogErrorKind> {
        if n > self.remaining() {
            return Err(LogErrorKind::Truncated);
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], LogErrorKind> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    pub(crate) fn i8(&mut self) -> Result<i8, LogErrorKind> {
        Ok(self.array::<1>()?[0] as i8)
    }
    pub(crate) fn i16(&mut self) -> Result<i16, LogErrorKind> {
        Ok(i16::from_be_bytes(self.array()?))
    }
    pub(crate) fn i32(&mut self) -> Result<i32, LogErrorKind> {
        Ok(i32::from_be_bytes(self.array()?))
    }
    pub(crate) fn i64(&mut self) -> Result<i64, LogErrorKind> {
        Ok(i64::from_be_bytes(self.array()?))
    }
    pub(crate) fn uuid(&mut self) -> Result<[u8; 16], LogErrorKind> {
        self.array()
    }

    /// An unsigned LEB128 varint of at most 32 bits.
    pub(crate) fn uvarint(&mut self) -> Result<u32, LogErrorKind> {
        let mut value: u32 = 0;
        for i in 0..5 {
            let b = self.take(1)?[0];
            value |= u32::from(b & 0x7F) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(LogErrorKind::InvalidVarint)
    }

    fn uvarlong(&mut self) -> Result<u64, LogErrorKind> {
        let mut value: u64 = 0;
        for i in 0..10 {
            let b = self.take(1)?[0];
            value |= u64::from(b & 0x7F) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(LogErrorKind::InvalidVarint)
    }

    /// A zigzag varint (record framing).
    pub(crate) fn varint(&mut self) -> Result<i32, LogErrorKind> {
        let v = self.uvarint()?;
        Ok((v >> 1) as i32 ^ -((v & 1) as i32))
    }

    fn varlong(&mut self) -> Result<i64, LogErrorKind> {
        let v = self.uvarlong()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    /// Zigzag-varint-length bytes, -1 for null.
    fn varbytes(&mut self) -> Result<Option<&'a [u8]>, LogErrorKind> {
        match self.varint()? {
            -1 => Ok(None),
            n if n < 0 => Err(LogErrorKind::InvalidLength(i64::from(n))),
            n => self.take(n as usize).map(Some),
        }
    }

    /// Int32-length bytes, -1 for null.
    pub(crate) fn bytes32(&mut self) -> Result<Option<&'a [u8]>, LogErrorKind> {
        match self.i32()? {
            -1 => Ok(None),
            n if n < 0 => Err(LogErrorKind::InvalidLength(i64::from(n))),
            n => self.take(n as usize).map(Some),
        }
    }
}
