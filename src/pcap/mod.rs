//! Decode consumer-group traffic (JoinGroup/SyncGroup) from packet captures.
//!
//! Enabled by the `pcap` cargo feature. [`GroupReader`] reads a pcap or pcapng capture as a
//! stream (bounded buffer), reassembles the TCP streams (out-of-order segments, retransmissions,
//! frames split over segments or sharing one, captures that start mid-stream), finds the Kafka
//! connections from the traffic itself (or from given broker ports), matches responses to
//! requests by correlation id, decodes JoinGroup v0-v9 and SyncGroup v0-v5 with the
//! `kafka-protocol` crate and the embedded Subscriptions/Assignments with this crate's codec.
//! Whatever it cannot use is skipped and counted in a [`CaptureSummary`], never a panic.
//!
//! The messages are [`group_api`](crate::group_api)'s, built by its `kafka` conversions, with
//! their payloads decoded (`JoinGroupRequest<Payload>`, ...): a capture speaks the same
//! vocabulary as the coordinator and the network client. A response's body adds its request's
//! context (group, member, generation), which the response itself does not carry.
//!
//! ```no_run
//! use kafka_consumer_protocol::pcap::{GroupBody, GroupReader, ReaderOptions};
//!
//! let file = std::fs::File::open("capture.pcap")?;
//! let mut reader = GroupReader::new(file, ReaderOptions::default())?;
//! for message in &mut reader {
//!     if let GroupBody::SyncGroupResponse(sync) = &message.frame.body {
//!         if let Some(assignment) = sync.response.assignment.assignment() {
//!             println!("{} got {:?}", sync.member_id, assignment.view().assigned_partitions());
//!         }
//!     }
//! }
//! println!("{:?}", reader.summary());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod kafka;
mod packet;
mod tcp;

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use pcap_parser::traits::PcapReaderIterator;
use pcap_parser::{PcapBlockOwned, PcapError};

pub use kafka::ConnectionDecoder;

use crate::group_api::{
    ErrorCode, JoinGroupMember, JoinGroupRequest, JoinGroupResponse, SyncGroupRequest, SyncGroupResponse,
};
use crate::{AssignmentBuf, DecodeError, DecodeOptions, SubscriptionBuf};

/// Request or response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageDirection {
    /// Client to broker.
    Request,
    /// Broker to client.
    Response,
}

/// An embedded consumer-protocol payload (JoinGroup metadata or SyncGroup assignment).
#[derive(Debug, Clone)]
pub enum Payload {
    /// A Subscription decoded by this crate's codec (protocol type `consumer` or unknown).
    Subscription(SubscriptionBuf),
    /// An Assignment decoded by this crate's codec (protocol type `consumer` or unknown).
    Assignment(AssignmentBuf),
    /// Bytes the codec refuses, with its error.
    Invalid {
        /// The payload.
        bytes: Bytes,
        /// Why the codec refused it.
        error: DecodeError,
    },
    /// The payload of another protocol type (Kafka Connect, custom), not decoded.
    Raw(Bytes),
    /// A zero-length payload (for example the assignment of a failed SyncGroup).
    Empty,
}

impl Payload {
    /// The decoded Subscription, if it is one.
    pub fn subscription(&self) -> Option<&SubscriptionBuf> {
        match self {
            Payload::Subscription(s) => Some(s),
            _ => None,
        }
    }

    /// The decoded Assignment, if it is one.
    pub fn assignment(&self) -> Option<&AssignmentBuf> {
        match self {
            Payload::Assignment(a) => Some(a),
            _ => None,
        }
    }

    /// The payload bytes as they were on the wire.
    pub fn bytes(&self) -> Bytes {
        match self {
            Payload::Subscription(s) => s.as_bytes().clone(),
            Payload::Assignment(a) => a.as_bytes().clone(),
            Payload::Invalid { bytes, .. } | Payload::Raw(bytes) => bytes.clone(),
            Payload::Empty => Bytes::new(),
        }
    }
}

/// A JoinGroup response with the group id of its request (the response does not name the group).
///
/// Unlike the other bodies it is not a [`group_api::JoinGroupResponse`](JoinGroupResponse): its
/// members stay in the frame they came in and are decoded one at a time by
/// [`members`](Self::members), so that a frame of millions of members (4 bytes each at the least)
/// costs the frame's bytes, never a record per member. [`to_response`](Self::to_response) builds
/// the whole `group_api` message when it is wanted.
#[derive(Debug, Clone)]
pub struct JoinGroupResponseBody {
    /// Group id of the matching request.
    pub group_id: String,
    /// Error code.
    pub error: ErrorCode,
    /// The new generation.
    pub generation_id: i32,
    /// Protocol type, taken from the request when the response has none (before v7).
    pub protocol_type: Option<String>,
    /// The selected protocol (assignor name).
    pub protocol_name: Option<String>,
    /// The leader's member id.
    pub leader: String,
    /// Static leader rejoin: keep the current assignment (JoinGroup v9+).
    pub skip_assignment: bool,
    /// This member's id.
    pub member_id: String,
    members: JoinMembers,
}

impl JoinGroupResponseBody {
    /// How many members the response lists (the leader's response lists them all).
    pub fn member_count(&self) -> usize {
        self.members.count
    }

    /// The members in order, each decoded from the frame as it is reached, with its payload
    /// decoded as the rest of the capture's are.
    pub fn members(&self) -> JoinMembersIter<'_> {
        JoinMembersIter { members: &self.members, rest: self.members.bytes.clone(), left: self.members.count }
    }

    /// The whole response as [`group_api`](crate::group_api)'s message, every member held in
    /// memory.
    pub fn to_response(&self) -> JoinGroupResponse<Payload> {
        JoinGroupResponse {
            error: self.error,
            generation_id: self.generation_id,
            protocol_type: self.protocol_type.clone(),
            protocol_name: self.protocol_name.clone(),
            leader: self.leader.clone(),
            skip_assignment: self.skip_assignment,
            member_id: self.member_id.clone(),
            members: self.members().collect(),
        }
    }
}

/// A JoinGroup response's member array as it was in the frame (already checked to decode).
#[derive(Clone)]
struct JoinMembers {
    bytes: Bytes,
    count: usize,
    version: i16,
    options: DecodeOptions,
    /// The protocol type is `consumer` or unknown: the metadata is decoded as a Subscription.
    consumer: bool,
}

impl std::fmt::Debug for JoinMembers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JoinMembers").field("count", &self.count).field("bytes", &self.bytes.len()).finish()
    }
}

/// The members of a [`JoinGroupResponseBody`], decoded one at a time.
#[derive(Debug)]
pub struct JoinMembersIter<'a> {
    members: &'a JoinMembers,
    rest: Bytes,
    left: usize,
}

impl Iterator for JoinMembersIter<'_> {
    type Item = JoinGroupMember<Payload>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        let m = &self.members;
        let Some(member) = kafka::decode_join_member(&mut self.rest, m.version) else {
            // Checked when the frame was read, so not reached; end rather than panic.
            self.left = 0;
            return None;
        };
        self.left -= 1;
        let (member, _) = kafka::join_member_payload(member, m.options, m.consumer);
        Some(member)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for JoinMembersIter<'_> {}

/// A SyncGroup response with what its request said (the response names no group, member or
/// generation).
#[derive(Debug, Clone)]
pub struct SyncGroupResponseBody {
    /// Group id of the matching request.
    pub group_id: String,
    /// Member id of the matching request.
    pub member_id: String,
    /// Generation of the matching request.
    pub generation_id: i32,
    /// The response, with `protocol_type` taken from the request when the response has none
    /// (before v5).
    pub response: SyncGroupResponse<Payload>,
}

/// A decoded group message: [`group_api`](crate::group_api)'s messages with their embedded
/// payloads decoded ([`Payload`]), the responses with their request's context.
#[derive(Debug, Clone)]
pub enum GroupBody {
    /// JoinGroup request; `protocol_type` is `consumer` for consumer groups.
    JoinGroupRequest(JoinGroupRequest<Payload>),
    /// JoinGroup response.
    JoinGroupResponse(JoinGroupResponseBody),
    /// SyncGroup request; `protocol_type` (v5+) is, before v5, the one this group's last
    /// JoinGroup on the connection gave.
    SyncGroupRequest(SyncGroupRequest<Payload>),
    /// SyncGroup response.
    SyncGroupResponse(SyncGroupResponseBody),
}

impl GroupBody {
    /// `"JoinGroup"` or `"SyncGroup"`.
    pub fn api(&self) -> &'static str {
        match self {
            GroupBody::JoinGroupRequest(_) | GroupBody::JoinGroupResponse(_) => "JoinGroup",
            GroupBody::SyncGroupRequest(_) | GroupBody::SyncGroupResponse(_) => "SyncGroup",
        }
    }

    /// The group id (of the request, for responses).
    pub fn group_id(&self) -> &str {
        match self {
            GroupBody::JoinGroupRequest(b) => &b.group_id,
            GroupBody::JoinGroupResponse(b) => &b.group_id,
            GroupBody::SyncGroupRequest(b) => &b.group_id,
            GroupBody::SyncGroupResponse(b) => &b.group_id,
        }
    }
}

/// A group message as found in one connection's byte streams.
#[derive(Debug, Clone)]
pub struct GroupFrame {
    /// Request or response.
    pub direction: MessageDirection,
    /// API version (of the request, for responses).
    pub api_version: i16,
    /// Correlation id.
    pub correlation_id: i32,
    /// Client id from the request header.
    pub client_id: Option<String>,
    /// The decoded message.
    pub body: GroupBody,
}

/// A group message found in a capture.
#[derive(Debug, Clone)]
pub struct GroupMessage {
    /// Capture time of the packet that completed the message, since the Unix epoch.
    pub timestamp: std::time::Duration,
    /// Sender.
    pub src: SocketAddr,
    /// Receiver.
    pub dst: SocketAddr,
    /// The message.
    pub frame: GroupFrame,
}

/// Counters of a [`ConnectionDecoder`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FrameCounts {
    /// Request frames seen.
    pub requests: u64,
    /// Response frames seen.
    pub responses: u64,
    /// JoinGroup/SyncGroup messages decoded.
    pub group_messages: u64,
    /// Responses whose correlation id matches no request seen.
    pub unmatched_responses: u64,
    /// Requests never answered (or forgotten: at most 1024 are remembered per connection).
    pub unanswered_requests: u64,
    /// JoinGroup/SyncGroup frames that did not decode exactly.
    pub undecodable_frames: u64,
    /// JoinGroup/SyncGroup frames above the buffering limit (skipped).
    pub oversized_frames: u64,
    /// Embedded payloads the codec refused (shown as [`Payload::Invalid`]).
    pub payload_errors: u64,
    /// Times a stream found a frame boundary after starting mid-stream or after a gap.
    pub resyncs: u64,
    /// Times a stream lost its framing (implausible frame header).
    pub desyncs: u64,
    /// Bytes thrown away while looking for a frame boundary.
    pub skipped_bytes: u64,
    /// Frames left unfinished at the end of the capture.
    pub incomplete_frames: u64,
}

impl FrameCounts {
    fn add(&mut self, o: &FrameCounts) {
        self.requests += o.requests;
        self.responses += o.responses;
        self.group_messages += o.group_messages;
        self.unmatched_responses += o.unmatched_responses;
        self.unanswered_requests += o.unanswered_requests;
        self.undecodable_frames += o.undecodable_frames;
        self.oversized_frames += o.oversized_frames;
        self.payload_errors += o.payload_errors;
        self.resyncs += o.resyncs;
        self.desyncs += o.desyncs;
        self.skipped_bytes += o.skipped_bytes;
        self.incomplete_frames += o.incomplete_frames;
    }
}

/// What a [`GroupReader`] read and what it skipped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CaptureSummary {
    /// Capture format: `"pcap"` or `"pcapng"`.
    pub format: &'static str,
    /// Packets (frames) read.
    pub packets: u64,
    /// TCP segments among them.
    pub tcp_segments: u64,
    /// Frames that are not IPv4/IPv6 TCP (ARP, UDP, ...).
    pub non_tcp_packets: u64,
    /// IP fragments (not reassembled).
    pub ip_fragments: u64,
    /// Frames with headers cut short or malformed.
    pub malformed_packets: u64,
    /// Frames on an interface of a link type this reader does not know.
    pub unsupported_link_type_packets: u64,
    /// Segments whose payload the capture cut short (snap length).
    pub truncated_segments: u64,
    /// TCP connections seen.
    pub tcp_connections: u64,
    /// Connections identified as Kafka.
    pub kafka_connections: u64,
    /// Connections not identified as Kafka (skipped).
    pub other_connections: u64,
    /// Connections ignored because too many were open at once.
    pub connections_over_limit: u64,
    /// Retransmitted segments (fully or partly already seen).
    pub retransmitted_segments: u64,
    /// Segments that arrived ahead of a missing one.
    pub out_of_order_segments: u64,
    /// Streams whose out-of-order buffer overflowed (the missing bytes were given up on).
    pub stream_overflows: u64,
    /// Places where stream bytes were missing (the decoder resynchronised after each).
    pub stream_gaps: u64,
    /// Streams whose buffers were dropped to stay within the total memory budget.
    pub streams_dropped_for_memory: u64,
    /// Kafka framing counters over all connections.
    pub frames: FrameCounts,
    /// Group messages yielded.
    pub messages: u64,
    /// The capture ended inside a block (a truncated file).
    pub truncated_capture: bool,
    /// The capture file was corrupt at some point (reading stopped there).
    pub capture_error: Option<String>,
}

/// Limits and decoding choices of a [`GroupReader`].
#[derive(Debug, Clone)]
pub struct ReaderOptions {
    /// Broker ports: when not empty, only connections to these ports are decoded (the side
    /// with the port is the broker); when empty, Kafka connections are found from the traffic.
    pub ports: Vec<u16>,
    /// How embedded payloads are decoded.
    pub decode: DecodeOptions,
    /// Out-of-order bytes held per stream direction before the missing bytes are given up on.
    pub max_out_of_order: usize,
    /// Largest JoinGroup/SyncGroup frame buffered (larger ones are skipped and counted).
    pub max_group_frame: usize,
    /// Total bytes buffered over all connections before a stream is dropped.
    pub max_total_buffered: usize,
    /// Connections tracked at once.
    pub max_connections: usize,
    /// Initial size of the capture read buffer (at least 4 KiB; grown for larger blocks, up to
    /// 64 MiB).
    pub read_buffer: usize,
}

impl Default for ReaderOptions {
    fn default() -> Self {
        ReaderOptions {
            ports: Vec::new(),
            decode: DecodeOptions::new(),
            max_out_of_order: 4 * 1024 * 1024,
            max_group_frame: 16 * 1024 * 1024,
            max_total_buffered: 256 * 1024 * 1024,
            max_connections: 65_536,
            read_buffer: 1 << 20,
        }
    }
}

/// Why a capture cannot be read at all: its first bytes are no pcap or pcapng header. The
/// `pcap-parser` error is the [`source`](std::error::Error::source).
#[derive(Debug)]
pub struct CaptureError {
    source: PcapError<&'static [u8]>,
}

impl std::fmt::Display for CaptureError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // In words: the error's Debug form carries the input bytes it failed on.
        write!(f, "not a pcap or pcapng capture ({})", describe(&self.source))
    }
}

impl std::error::Error for CaptureError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// Bytes held while a connection's role is unknown, per direction.
const MAX_UNKNOWN: usize = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct ConnKey(SocketAddr, SocketAddr);

impl ConnKey {
    /// The key and whether `src` is the first endpoint.
    fn of(src: SocketAddr, dst: SocketAddr) -> (ConnKey, bool) {
        if src <= dst {
            (ConnKey(src, dst), true)
        } else {
            (ConnKey(dst, src), false)
        }
    }
}

#[derive(Debug)]
enum Role {
    /// Not known yet: bytes held per direction (index 0: from the key's first endpoint).
    Unknown { held: [Vec<u8>; 2], gap: [bool; 2], rejected: [bool; 2] },
    /// The client is the key's endpoint `client` (0 or 1).
    Kafka { client: usize, decoder: Box<ConnectionDecoder>, confirmed: bool },
    /// Not Kafka: ignored.
    Other,
}

#[derive(Debug)]
struct Connection {
    dirs: [tcp::Direction; 2],
    role: Role,
    accounted: usize,
    fin: [bool; 2],
}

impl Connection {
    fn buffered(&self) -> usize {
        let role = match &self.role {
            Role::Unknown { held, .. } => held[0].len() + held[1].len(),
            Role::Kafka { decoder, .. } => decoder.buffered(),
            Role::Other => 0,
        };
        self.dirs[0].buffered() + self.dirs[1].buffered() + role
    }
}

struct Interface {
    linktype: i32,
    /// Units per second of timestamps.
    resolution: u64,
    offset: i64,
}

/// Counts the bytes read from the capture (for a progress indicator).
struct Counting<R> {
    inner: R,
    read: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Streaming reader of the group messages in a pcap/pcapng capture (an iterator).
///
/// ```
/// use kafka_consumer_protocol::pcap::{GroupReader, ReaderOptions};
///
/// // An empty classic pcap file (Ethernet): no messages, one summary.
/// let mut file = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0];
/// file.extend_from_slice(&[0; 8]);
/// file.extend_from_slice(&65535u32.to_le_bytes());
/// file.extend_from_slice(&1u32.to_le_bytes());
/// let mut reader = GroupReader::new(&file[..], ReaderOptions::default()).unwrap();
/// assert_eq!(reader.by_ref().count(), 0);
/// assert_eq!(reader.summary().format, "pcap");
/// assert_eq!(reader.summary().packets, 0);
///
/// assert!(GroupReader::new(&b"not a capture at all"[..], ReaderOptions::default()).is_err());
/// ```
pub struct GroupReader<'a> {
    reader: Box<dyn PcapReaderIterator + 'a>,
    read: Arc<AtomicU64>,
    options: ReaderOptions,
    interfaces: Vec<Interface>,
    legacy: Option<Interface>,
    connections: HashMap<ConnKey, Connection>,
    servers: HashSet<SocketAddr>,
    total_buffered: usize,
    /// Timestamp of the last packet read.
    last_ts: std::time::Duration,
    tcp_counts: tcp::TcpCounts,
    summary: CaptureSummary,
    queue: std::collections::VecDeque<GroupMessage>,
    done: bool,
    /// Buffer size of the pcap reader, grown up to `MAX_BLOCK` for big blocks.
    capacity: usize,
    /// Partition counts learned from Metadata responses, by topic.
    partition_counts: std::collections::BTreeMap<String, i32>,
    /// How many times `partition_counts` changed.
    partition_count_updates: u64,
}

/// Topics whose partition counts a reader remembers (one cluster's worth; more are ignored).
const MAX_TOPICS: usize = 100_000;

/// Moves the partition counts a Kafka connection's decoder read into the reader's map.
fn learn_partition_counts(role: &mut Role, counts: &mut std::collections::BTreeMap<String, i32>, updates: &mut u64) {
    let Role::Kafka { decoder, .. } = role else { return };
    for (topic, n) in decoder.take_partition_counts() {
        if counts.len() >= MAX_TOPICS && !counts.contains_key(&topic) {
            continue;
        }
        if counts.insert(topic, n) != Some(n) {
            *updates += 1;
        }
    }
}

const MAX_BLOCK: usize = 64 * 1024 * 1024;

impl std::fmt::Debug for GroupReader<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupReader").field("summary", &self.summary).finish_non_exhaustive()
    }
}

impl<'a> GroupReader<'a> {
    /// Opens a capture (pcap or pcapng, detected from its first bytes).
    pub fn new<R: Read + 'a>(reader: R, options: ReaderOptions) -> Result<Self, CaptureError> {
        let read = Arc::new(AtomicU64::new(0));
        let capacity = options.read_buffer.clamp(4096, MAX_BLOCK);
        let reader = pcap_parser::create_reader(capacity, Counting { inner: reader, read: read.clone() })
            .map_err(|source| CaptureError { source })?;
        Ok(GroupReader {
            reader,
            read,
            options,
            interfaces: Vec::new(),
            legacy: None,
            connections: HashMap::new(),
            servers: HashSet::new(),
            total_buffered: 0,
            last_ts: std::time::Duration::ZERO,
            tcp_counts: tcp::TcpCounts::default(),
            summary: CaptureSummary::default(),
            queue: Default::default(),
            done: false,
            capacity,
            partition_counts: Default::default(),
            partition_count_updates: 0,
        })
    }

    /// The partition count of each topic, as the Metadata responses read so far give it (the
    /// latest response wins). Complete for the capture once the iterator returned `None`.
    ///
    /// ```
    /// use kafka_consumer_protocol::pcap::{GroupReader, ReaderOptions};
    /// let bytes = std::fs::read("testdata/pcap/rdkafka-range.pcap").unwrap();
    /// let mut reader = GroupReader::new(&bytes[..], ReaderOptions::default()).unwrap();
    /// reader.by_ref().for_each(drop);
    /// // The clients' Metadata responses: kcp-orders has 6 partitions, kcp-audit 3.
    /// assert_eq!(reader.partition_counts().get("kcp-orders"), Some(&6));
    /// assert_eq!(reader.partition_counts().get("kcp-audit"), Some(&3));
    /// ```
    pub fn partition_counts(&self) -> &std::collections::BTreeMap<String, i32> {
        &self.partition_counts
    }

    /// How many times [`GroupReader::partition_counts`] changed so far: a caller that follows
    /// the counts while reading copies them only when this moved.
    pub fn partition_count_updates(&self) -> u64 {
        self.partition_count_updates
    }

    /// Bytes of the capture read so far.
    pub fn bytes_read(&self) -> u64 {
        self.read.load(Ordering::Relaxed)
    }

    /// What was read and skipped so far (complete once the iterator returned `None`).
    pub fn summary(&self) -> &CaptureSummary {
        &self.summary
    }

    /// Reads blocks until at least one message is queued or the capture ends.
    fn fill(&mut self) {
        while self.queue.is_empty() && !self.done {
            match self.reader.next() {
                Ok((offset, block)) => {
                    let packet = match block {
                        PcapBlockOwned::LegacyHeader(h) => {
                            self.summary.format = "pcap";
                            let resolution = if h.is_nanosecond_precision() { 1_000_000_000 } else { 1_000_000 };
                            self.legacy = Some(Interface { linktype: h.network.0, resolution, offset: 0 });
                            None
                        }
                        PcapBlockOwned::Legacy(b) => {
                            let ts = self.legacy.as_ref().map_or(std::time::Duration::ZERO, |i| {
                                timestamp(u64::from(b.ts_sec) * i.resolution + u64::from(b.ts_usec), i)
                            });
                            let linktype = self.legacy.as_ref().map_or(-1, |i| i.linktype);
                            Some((linktype, ts, b.data.to_vec()))
                        }
                        PcapBlockOwned::NG(block) => ng_block(&mut self.interfaces, &mut self.summary, block),
                    };
                    self.reader.consume(offset);
                    if let Some((linktype, ts, data)) = packet {
                        self.packet(linktype, ts, &data);
                    }
                }
                Err(PcapError::Eof) => self.end(),
                Err(PcapError::Incomplete(_)) => {
                    if self.reader.reader_exhausted() {
                        self.summary.truncated_capture = true;
                        self.end();
                        continue;
                    }
                    let before = self.reader.data().len();
                    if !self.refill() {
                        continue;
                    }
                    if self.reader.data().len() == before && !self.reader.reader_exhausted() {
                        // The buffer is full and the block still does not fit.
                        self.grow();
                    }
                }
                Err(PcapError::BufferTooSmall) => {
                    if self.grow() {
                        self.refill();
                    }
                }
                Err(PcapError::UnexpectedEof) => {
                    self.summary.truncated_capture = true;
                    self.end();
                }
                Err(e) => {
                    let what = describe(&e);
                    let at = self.reader.consumed();
                    self.summary.capture_error = Some(format!("corrupt capture at byte {at}: {what}"));
                    self.end();
                }
            }
        }
    }

    /// Reads more of the capture; false (and the reading ends) on a read error.
    fn refill(&mut self) -> bool {
        if self.reader.refill().is_ok() {
            return true;
        }
        self.summary.capture_error = Some(format!("read error at byte {}", self.reader.consumed()));
        self.end();
        false
    }

    /// Doubles the read buffer for a block larger than it, up to [`MAX_BLOCK`]; a larger block
    /// ends the reading with a `capture_error` that says so (never a silent end).
    fn grow(&mut self) -> bool {
        let target = (self.capacity * 2).min(MAX_BLOCK);
        if self.capacity >= MAX_BLOCK || !self.reader.grow(target) {
            self.summary.capture_error = Some(format!(
                "a block at byte {} is larger than the {} MiB block limit",
                self.reader.consumed(),
                MAX_BLOCK >> 20
            ));
            self.end();
            return false;
        }
        self.capacity = target;
        true
    }

    fn packet(&mut self, linktype: i32, ts: std::time::Duration, data: &[u8]) {
        self.summary.packets += 1;
        self.last_ts = ts;
        let segment = match packet::parse_frame(linktype, data) {
            Ok(s) => s,
            Err(packet::Skip::LinkType) => return self.summary.unsupported_link_type_packets += 1,
            Err(packet::Skip::NotTcp) => return self.summary.non_tcp_packets += 1,
            Err(packet::Skip::Fragment) => return self.summary.ip_fragments += 1,
            Err(packet::Skip::Malformed) => return self.summary.malformed_packets += 1,
        };
        self.summary.tcp_segments += 1;
        if segment.missing > 0 {
            self.summary.truncated_segments += 1;
        }
        let (key, first) = ConnKey::of(segment.src, segment.dst);
        let side = if first { 0 } else { 1 };
        if segment.syn && self.connections.get(&key).is_some_and(|c| c.dirs[side].is_new_syn(segment.seq)) {
            // The ports were reused for a new connection: finish the old one.
            self.close(key);
        }
        if !self.connections.contains_key(&key) {
            if !segment.syn && segment.payload.is_empty() && segment.missing == 0 {
                // A bare ACK/FIN/RST of a connection already closed (or never seen).
                return;
            }
            if self.connections.len() >= self.options.max_connections {
                self.summary.connections_over_limit += 1;
                return;
            }
            self.summary.tcp_connections += 1;
            let role = if !self.options.ports.is_empty() {
                let client = if self.options.ports.contains(&key.1.port()) {
                    Some(0)
                } else if self.options.ports.contains(&key.0.port()) {
                    Some(1)
                } else {
                    None
                };
                match client {
                    Some(client) => Role::Kafka { client, decoder: self.decoder(segment.syn), confirmed: false },
                    None => {
                        self.summary.other_connections += 1;
                        Role::Other
                    }
                }
            } else if self.servers.contains(&key.1) {
                Role::Kafka { client: 0, decoder: self.decoder(segment.syn), confirmed: false }
            } else if self.servers.contains(&key.0) {
                Role::Kafka { client: 1, decoder: self.decoder(segment.syn), confirmed: false }
            } else {
                Role::Unknown { held: Default::default(), gap: [false; 2], rejected: [false; 2] }
            };
            self.connections.insert(key, Connection { dirs: Default::default(), role, accounted: 0, fin: [false; 2] });
        }
        let mut chunks = Vec::new();
        let Some(conn) = self.connections.get_mut(&key) else { return };
        if matches!(conn.role, Role::Other) {
            if segment.rst || segment.fin {
                self.connections.remove(&key);
            }
            return;
        }
        conn.dirs[side].segment(
            segment.seq,
            segment.syn,
            segment.payload,
            segment.missing,
            self.options.max_out_of_order,
            &mut self.tcp_counts,
            &mut chunks,
        );
        let from_start = conn.dirs[side].from_start;
        let closing = segment.rst || segment.fin;
        if segment.fin {
            conn.fin[side] = true;
        }
        let mut frames = Vec::new();
        Self::feed(conn, side, &chunks, from_start, &self.options, &mut self.summary, &mut frames);
        learn_partition_counts(&mut conn.role, &mut self.partition_counts, &mut self.partition_count_updates);
        // Confirmation: a response matched a request.
        if let Role::Kafka { client, decoder, confirmed } = &mut conn.role {
            if !*confirmed && decoder.counts().responses > decoder.counts().unmatched_responses {
                *confirmed = true;
                self.summary.kafka_connections += 1;
                self.servers.insert(if *client == 0 { key.1 } else { key.0 });
            }
        }
        if let Role::Kafka { client, .. } = &conn.role {
            let client = *client;
            for frame in frames {
                let (src, dst) = endpoints(key, client, frame.direction);
                self.summary.messages += 1;
                self.queue.push_back(GroupMessage { timestamp: ts, src, dst, frame });
            }
        }
        // Memory budget.
        let now = conn.buffered();
        self.total_buffered = self.total_buffered - conn.accounted.min(self.total_buffered) + now;
        conn.accounted = now;
        if self.total_buffered > self.options.max_total_buffered {
            self.summary.streams_dropped_for_memory += 1;
            let mut gaps = Vec::new();
            for d in 0..2 {
                conn.dirs[d].drop_pending(&mut self.tcp_counts, &mut gaps);
            }
            match &mut conn.role {
                Role::Kafka { decoder, .. } => {
                    decoder.request_gap();
                    decoder.response_gap();
                }
                Role::Unknown { held, gap, .. } => {
                    *held = Default::default();
                    *gap = [true; 2];
                }
                Role::Other => {}
            }
            let now = conn.buffered();
            self.total_buffered = self.total_buffered - conn.accounted.min(self.total_buffered) + now;
            conn.accounted = now;
        }
        if segment.rst || (closing && conn.fin[0] && conn.fin[1]) {
            self.close(key);
        }
    }

    fn decoder(&self, from_start: bool) -> Box<ConnectionDecoder> {
        Box::new(ConnectionDecoder::with_limit(self.options.decode, from_start, self.options.max_group_frame))
    }

    /// Feeds delivered stream chunks of direction `side` into the connection's decoder.
    fn feed(
        conn: &mut Connection,
        side: usize,
        chunks: &[tcp::Chunk],
        from_start: bool,
        options: &ReaderOptions,
        summary: &mut CaptureSummary,
        frames: &mut Vec<GroupFrame>,
    ) {
        if chunks.is_empty() {
            return;
        }
        let other_from_start = conn.dirs[1 - side].from_start;
        if let Role::Unknown { held, gap, rejected } = &mut conn.role {
            for chunk in chunks {
                match chunk {
                    tcp::Chunk::Data(d) => held[side].extend_from_slice(d),
                    tcp::Chunk::Gap => {
                        held[side].clear();
                        gap[side] = true;
                    }
                }
            }
            // Does this direction start with (or, mid-stream, contain) a Kafka request?
            let found = if from_start && !gap[side] {
                kafka::plausible_request(&held[side])
            } else {
                match kafka::find_request(&held[side]) {
                    Ok(_) => Some(true),
                    Err(_) => None,
                }
            };
            match found {
                Some(true) => {
                    let held = std::mem::take(held);
                    let gap = *gap;
                    let mut decoder = Box::new(ConnectionDecoder::with_limit(
                        options.decode,
                        from_start && !gap[side],
                        options.max_group_frame,
                    ));
                    // The other direction: from its start only if nothing was lost there.
                    let other = 1 - side;
                    if gap[other] || !other_from_start {
                        decoder.response_gap();
                    }
                    decoder.request_bytes(&held[side], frames);
                    decoder.response_bytes(&held[other], frames);
                    conn.role = Role::Kafka { client: side, decoder, confirmed: false };
                }
                Some(false) => {
                    // Kafka clients speak first: a stream that starts with something else is
                    // not Kafka (unless the other side turns out to be a client).
                    rejected[side] = true;
                    if rejected[1 - side] || held[side].len() > MAX_UNKNOWN {
                        summary.other_connections += 1;
                        conn.role = Role::Other;
                    }
                }
                None => {
                    if held[side].len() > MAX_UNKNOWN {
                        summary.other_connections += 1;
                        conn.role = Role::Other;
                    }
                }
            }
            return;
        }
        if let Role::Kafka { client, decoder, .. } = &mut conn.role {
            for chunk in chunks {
                match (chunk, side == *client) {
                    (tcp::Chunk::Data(d), true) => decoder.request_bytes(d, frames),
                    (tcp::Chunk::Data(d), false) => decoder.response_bytes(d, frames),
                    (tcp::Chunk::Gap, true) => decoder.request_gap(),
                    (tcp::Chunk::Gap, false) => decoder.response_gap(),
                }
            }
        }
    }

    /// Flushes and forgets a connection.
    fn close(&mut self, key: ConnKey) {
        let Some(mut conn) = self.connections.remove(&key) else { return };
        self.total_buffered -= conn.accounted.min(self.total_buffered);
        let mut frames = Vec::new();
        for side in 0..2 {
            let mut chunks = Vec::new();
            conn.dirs[side].flush(&mut self.tcp_counts, &mut chunks);
            let from_start = conn.dirs[side].from_start;
            Self::feed(&mut conn, side, &chunks, from_start, &self.options, &mut self.summary, &mut frames);
        }
        learn_partition_counts(&mut conn.role, &mut self.partition_counts, &mut self.partition_count_updates);
        match &mut conn.role {
            Role::Kafka { decoder, client, .. } => {
                decoder.finish();
                self.summary.frames.add(decoder.counts());
                for frame in frames {
                    let (src, dst) = endpoints(key, *client, frame.direction);
                    self.summary.messages += 1;
                    self.queue.push_back(GroupMessage { timestamp: self.last_ts, src, dst, frame });
                }
            }
            Role::Unknown { .. } => self.summary.other_connections += 1,
            Role::Other => {}
        }
    }

    fn end(&mut self) {
        self.done = true;
        let mut keys: Vec<ConnKey> = self.connections.keys().copied().collect();
        keys.sort();
        for key in keys {
            self.close(key);
        }
        self.summary.retransmitted_segments = self.tcp_counts.retransmitted_segments;
        self.summary.out_of_order_segments = self.tcp_counts.out_of_order_segments;
        self.summary.stream_overflows = self.tcp_counts.overflows;
        self.summary.stream_gaps = self.tcp_counts.gaps;
    }
}

impl Iterator for GroupReader<'_> {
    type Item = GroupMessage;

    fn next(&mut self) -> Option<GroupMessage> {
        self.fill();
        self.queue.pop_front()
    }
}

fn ng_block(
    interfaces: &mut Vec<Interface>,
    summary: &mut CaptureSummary,
    block: pcap_parser::Block<'_>,
) -> Option<(i32, std::time::Duration, Vec<u8>)> {
    use pcap_parser::Block;
    summary.format = "pcapng";
    match block {
        Block::SectionHeader(_) => {
            interfaces.clear();
            None
        }
        Block::InterfaceDescription(idb) => {
            interfaces.push(Interface {
                linktype: idb.linktype.0,
                resolution: ts_resolution(idb.if_tsresol),
                offset: idb.ts_offset(),
            });
            None
        }
        Block::EnhancedPacket(epb) => {
            let Some(i) = interfaces.get(epb.if_id as usize) else {
                summary.malformed_packets += 1;
                return None;
            };
            let ts = timestamp((u64::from(epb.ts_high) << 32) | u64::from(epb.ts_low), i);
            Some((i.linktype, ts, epb.data.to_vec()))
        }
        Block::SimplePacket(spb) => {
            let linktype = interfaces.first().map_or(-1, |i| i.linktype);
            Some((linktype, std::time::Duration::ZERO, spb.data.to_vec()))
        }
        _ => None,
    }
}

/// Units per second of an interface's timestamps from its `if_tsresol` option: 10^-n seconds,
/// or 2^-n when the high bit is set (pcap-parser 0.16 refuses every binary resolution, so it is
/// computed here). A resolution that does not fit 64 bits is taken as the default, microseconds.
fn ts_resolution(if_tsresol: u8) -> u64 {
    let n = u32::from(if_tsresol & 0x7f);
    let units = if if_tsresol & 0x80 == 0 { 10u64.checked_pow(n) } else { 1u64.checked_shl(n).filter(|_| n < 64) };
    units.unwrap_or(1_000_000)
}

/// A pcap-parser error in a few words: never the input bytes it carries (a corrupt block's
/// whole buffer would otherwise end up in the summary).
fn describe<I>(e: &PcapError<I>) -> String {
    match e {
        PcapError::Eof => "end of file".into(),
        PcapError::BufferTooSmall => "a block larger than the read buffer".into(),
        PcapError::UnexpectedEof => "unexpected end of file".into(),
        PcapError::ReadError => "read error".into(),
        PcapError::Incomplete(n) => format!("incomplete block ({n} more bytes needed)"),
        PcapError::HeaderNotRecognized => "header not recognized as pcap or pcapng".into(),
        PcapError::NomError(_, kind) | PcapError::OwnedNomError(_, kind) => format!("malformed block ({kind:?})"),
    }
}

/// Sender and receiver of a message on a connection whose client is endpoint `client` of `key`.
fn endpoints(key: ConnKey, client: usize, direction: MessageDirection) -> (SocketAddr, SocketAddr) {
    let (c, b) = if client == 0 { (key.0, key.1) } else { (key.1, key.0) };
    match direction {
        MessageDirection::Request => (c, b),
        MessageDirection::Response => (b, c),
    }
}

fn timestamp(units: u64, i: &Interface) -> std::time::Duration {
    let resolution = i.resolution.max(1);
    let secs = (units / resolution) as i64;
    let frac = units % resolution;
    let nanos = (u128::from(frac) * 1_000_000_000 / u128::from(resolution)) as u32;
    let secs = secs.saturating_add(i.offset).max(0) as u64;
    std::time::Duration::new(secs, nanos)
}
