//! Per-direction TCP stream reassembly with bounded buffering.

use std::collections::BTreeMap;

/// What a direction's reassembler hands on, in stream order.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Chunk {
    /// Contiguous stream bytes.
    Data(Vec<u8>),
    /// Bytes were lost (never captured, cut by the snap length, or given up on): the reader must
    /// resynchronise after this point.
    Gap,
}

/// Counters the reassembler adds to.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct TcpCounts {
    pub retransmitted_segments: u64,
    pub out_of_order_segments: u64,
    pub overflows: u64,
    pub gaps: u64,
}

/// What holding one out-of-order segment costs beyond its payload: its map entry, its vector's
/// header and the allocator's rounding, about. The out-of-order budget counts it, so a flood of
/// one-byte segments is bounded by the same budget as a few large ones.
pub(crate) const SEGMENT_OVERHEAD: usize = 96;

/// One direction of a TCP connection.
#[derive(Debug, Default)]
pub(crate) struct Direction {
    /// The next expected sequence number, once known.
    next: Option<u32>,
    /// Whether the stream was seen from its SYN (so the first byte is a frame boundary).
    pub from_start: bool,
    /// Segments ahead of `next`, keyed by their distance from `next` at insertion time
    /// expressed as an absolute 64-bit stream offset.
    pending: BTreeMap<u64, Vec<u8>>,
    /// What `pending` costs: payload bytes plus [`SEGMENT_OVERHEAD`] per segment.
    pending_bytes: usize,
    /// Absolute 64-bit offset of `next` (wrap-free).
    offset: u64,
}

impl Direction {
    /// Whether a SYN with this sequence number starts a new connection on the same ports (not
    /// a retransmitted SYN of this one).
    pub fn is_new_syn(&self, seq: u32) -> bool {
        match self.next {
            None => false,
            Some(next) => !(self.from_start && self.offset == 0 && next == seq.wrapping_add(1)),
        }
    }

    /// Memory held out of order: payload bytes plus the bookkeeping of each held segment.
    pub fn buffered(&self) -> usize {
        self.pending_bytes
    }

    /// Feeds one segment; delivered chunks are appended to `out`.
    #[allow(clippy::too_many_arguments)]
    pub fn segment(
        &mut self,
        seq: u32,
        syn: bool,
        payload: &[u8],
        missing: usize,
        max_pending: usize,
        counts: &mut TcpCounts,
        out: &mut Vec<Chunk>,
    ) {
        if syn {
            if self.next.is_none() {
                self.next = Some(seq.wrapping_add(1));
                self.from_start = true;
            }
            if payload.is_empty() && missing == 0 {
                return;
            }
        }
        let seq = if syn { seq.wrapping_add(1) } else { seq };
        let len = payload.len() + missing;
        if len == 0 {
            return;
        }
        let next = *self.next.get_or_insert(seq);
        let delta = seq.wrapping_sub(next) as i32;
        if delta < 0 {
            let behind = delta.unsigned_abs() as usize;
            if behind >= len {
                counts.retransmitted_segments += 1;
                return;
            }
            // Partly new: keep the new tail.
            counts.retransmitted_segments += 1;
            let skip_present = behind.min(payload.len());
            self.deliver(&payload[skip_present..], missing - (behind - skip_present), counts, out);
        } else if delta == 0 {
            self.deliver(payload, missing, counts, out);
        } else {
            // Ahead of what we have: hold it (bounded).
            if delta as usize > (1 << 30) {
                // Not plausibly this stream.
                return;
            }
            counts.out_of_order_segments += 1;
            let at = self.offset + delta as u64;
            let bytes = payload.to_vec();
            if self.pending.get(&at).is_none_or(|old| old.len() < bytes.len()) {
                if let Some(old) = self.pending.insert(at, bytes) {
                    self.pending_bytes -= old.len() + SEGMENT_OVERHEAD;
                }
                self.pending_bytes += payload.len() + SEGMENT_OVERHEAD;
            }
            if self.pending_bytes > max_pending {
                counts.overflows += 1;
                self.skip_to_pending(counts, out);
            }
        }
        self.drain(counts, out);
    }

    fn deliver(&mut self, payload: &[u8], missing: usize, counts: &mut TcpCounts, out: &mut Vec<Chunk>) {
        if !payload.is_empty() {
            out.push(Chunk::Data(payload.to_vec()));
        }
        let len = payload.len() + missing;
        self.advance(len);
        if missing > 0 {
            counts.gaps += 1;
            out.push(Chunk::Gap);
        }
    }

    fn advance(&mut self, len: usize) {
        self.offset += len as u64;
        self.next = self.next.map(|n| n.wrapping_add(len as u32));
    }

    /// Delivers held segments that are now contiguous.
    fn drain(&mut self, counts: &mut TcpCounts, out: &mut Vec<Chunk>) {
        while let Some(entry) = self.pending.first_entry() {
            let at = *entry.key();
            if at > self.offset {
                break;
            }
            let bytes = entry.remove();
            self.pending_bytes -= bytes.len() + SEGMENT_OVERHEAD;
            let end = at + bytes.len() as u64;
            if end <= self.offset {
                counts.retransmitted_segments += 1;
                continue;
            }
            let skip = (self.offset - at) as usize;
            self.deliver(&bytes[skip..], 0, counts, out);
        }
    }

    /// Gives up on the missing bytes before the first held segment.
    fn skip_to_pending(&mut self, counts: &mut TcpCounts, out: &mut Vec<Chunk>) {
        if let Some((&at, _)) = self.pending.first_key_value() {
            let jump = at - self.offset;
            self.offset = at;
            self.next = self.next.map(|n| n.wrapping_add(jump as u32));
            counts.gaps += 1;
            out.push(Chunk::Gap);
        }
    }

    /// At the end of the capture: hands on everything held, with gaps where bytes are missing.
    pub fn flush(&mut self, counts: &mut TcpCounts, out: &mut Vec<Chunk>) {
        while !self.pending.is_empty() {
            self.drain(counts, out);
            self.skip_to_pending(counts, out);
        }
    }

    /// Drops everything held (memory budget exceeded); the stream resumes with a gap.
    pub fn drop_pending(&mut self, counts: &mut TcpCounts, out: &mut Vec<Chunk>) {
        if !self.pending.is_empty() {
            self.pending.clear();
            self.pending_bytes = 0;
            self.next = None;
            counts.gaps += 1;
            out.push(Chunk::Gap);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(dir: &mut Direction, segs: &[(u32, &[u8])]) -> Vec<Chunk> {
        let mut out = Vec::new();
        let mut counts = TcpCounts::default();
        for (seq, p) in segs {
            dir.segment(*seq, false, p, 0, 1 << 20, &mut counts, &mut out);
        }
        out
    }

    fn data(chunks: &[Chunk]) -> Vec<u8> {
        chunks
            .iter()
            .flat_map(|c| match c {
                Chunk::Data(d) => d.clone(),
                Chunk::Gap => b"|".to_vec(),
            })
            .collect()
    }

    #[test]
    fn in_order_out_of_order_and_retransmitted() {
        let mut d = Direction::default();
        let out = run(&mut d, &[(100, b"abc"), (106, b"ghi"), (103, b"def"), (101, b"bcd"), (109, b"j")]);
        assert_eq!(data(&out), b"abcdefghij");
    }

    #[test]
    fn wraps_around_sequence_space() {
        let mut d = Direction::default();
        let out = run(&mut d, &[(u32::MAX - 1, b"ab"), (1, b"de"), (0, b"c")]);
        assert_eq!(data(&out), b"abcde");
    }

    #[test]
    fn the_budget_counts_each_held_segment_not_only_its_bytes() {
        // One-byte segments ahead of a missing one: each costs its bookkeeping, so a budget of
        // ten segments' worth holds about ten, not the budget's number of bytes.
        let budget = 10 * (1 + SEGMENT_OVERHEAD);
        let mut d = Direction::default();
        let mut out = Vec::new();
        let mut counts = TcpCounts::default();
        d.segment(0, false, b"a", 0, budget, &mut counts, &mut out);
        let mut most = 0;
        for i in 0..10_000u32 {
            d.segment(10 + 2 * i, false, b"x", 0, budget, &mut counts, &mut out);
            most = most.max(d.pending.len());
            assert!(d.buffered() <= budget + 1 + SEGMENT_OVERHEAD);
        }
        assert!(most <= 11, "{most} segments held");
        assert!(counts.overflows > 0);
    }

    #[test]
    fn overflow_skips_the_gap() {
        let mut d = Direction::default();
        let mut out = Vec::new();
        let mut counts = TcpCounts::default();
        let budget = 4 + SEGMENT_OVERHEAD;
        d.segment(0, false, b"ab", 0, budget, &mut counts, &mut out);
        d.segment(10, false, b"xyz", 0, budget, &mut counts, &mut out);
        d.segment(13, false, b"uv", 0, budget, &mut counts, &mut out);
        assert_eq!(data(&out), b"ab|xyzuv");
        assert_eq!(counts.overflows, 1);
    }
}
