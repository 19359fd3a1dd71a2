//! The property the `offsets_log_segment` fuzz target checks: reading arbitrary bytes as a
//! `__consumer_offsets` segment never panics, ends, stays within its limits, and gives the same
//! batches whether the input is a slice or a reader handing out a few bytes at a time. Shared
//! with `tests/offsets_log_corpus.rs`.

use std::io::Read;

use kafka_consumer_protocol::offsets_log::json::{key_json, value_json, Embedded};
use kafka_consumer_protocol::offsets_log::{CoordinatorRecord, Limits, SegmentReader};

/// Small limits so that the fuzzer reaches the limit paths.
fn small_limits() -> Limits {
    Limits { max_batch_bytes: 8 << 10, max_inflated_bytes: 64 << 10 }
}

/// A reader that returns at most 7 bytes per call, to exercise partial reads.
struct Trickle<'a>(&'a [u8]);

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(7).min(self.0.len());
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

/// Per batch: its position, and per record its offset or error text, keys and values as JSON.
fn summary(input: impl Read, limits: Limits, len: usize) -> Vec<String> {
    let mut reader = SegmentReader::new(input, limits);
    let mut out = Vec::new();
    // Every batch takes at least its 12-byte log overhead: a bound on the iterations.
    for _ in 0..=len / 12 + 1 {
        let Some(batch) = reader.next_batch() else { break };
        match batch {
            Err(e) => out.push(format!("error {e}")),
            Ok(batch) => {
                out.push(format!("batch {} crc {}", batch.header.position, batch.header.crc_valid()));
                for record in batch.records() {
                    match record.and_then(|r| CoordinatorRecord::decode(r.key, r.value).map(|d| (r.offset, d))) {
                        Err(e) => out.push(format!("record error {e}")),
                        Ok((offset, d)) => {
                            let value = d
                                .value
                                .map(|(v, value)| value_json(v, &value, &|_: Embedded, b: &[u8]| b.len().into()));
                            out.push(format!("{offset} {} {value:?}", key_json(&d.key)));
                        }
                    }
                }
            }
        }
        assert!(reader.position() <= len as u64);
    }
    assert!(reader.next_batch().is_none(), "the reader ends");
    out
}

pub fn segment(data: &[u8]) {
    let whole = summary(data, small_limits(), data.len());
    let trickled = summary(Trickle(data), small_limits(), data.len());
    assert_eq!(whole, trickled);
    // The default limits read the same framing (no batch here is near them).
    let _ = summary(data, Limits::default(), data.len());
}
