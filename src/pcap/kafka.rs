//! Kafka framing of one TCP connection: request/response frames, correlation, and decoding of the
//! JoinGroup/SyncGroup messages with the `kafka-protocol` crate.

use std::collections::VecDeque;

use bytes::{Buf, Bytes};
use kafka_protocol::messages::join_group_response::JoinGroupResponseMember;
use kafka_protocol::messages::{
    ApiKey, JoinGroupRequest, JoinGroupResponse, RequestHeader, ResponseHeader, SyncGroupRequest, SyncGroupResponse,
};
use kafka_protocol::protocol::{Decodable, StrBytes};

use super::{
    FrameCounts, GroupBody, GroupFrame, JoinGroupResponseBody, JoinMembers, MessageDirection, Payload,
    SyncGroupResponseBody,
};
use crate::group_api::kafka as convert;
use crate::group_api::{ErrorCode, JoinGroupMember};
use crate::{AssignmentBuf, DecodeOptions, SubscriptionBuf};

const JOIN_GROUP: i16 = 11;
const SYNC_GROUP: i16 = 14;
const METADATA: i16 = 3;
/// Topic partition counts a decoder holds for its reader before they are taken.
const MAX_LEARNED: usize = 100_000;
/// Largest frame Kafka accepts by default (`socket.request.max.bytes`).
pub(crate) const MAX_FRAME: usize = 100 * 1024 * 1024;
/// Requests remembered per connection while waiting for their responses.
const MAX_PENDING: usize = 1024;

/// The API key and version of a request if they are ones Kafka knows.
fn known_api(key: i16, version: i16) -> Option<ApiKey> {
    let api = ApiKey::try_from(key).ok()?;
    // Accept older versions than the crate decodes (it dropped some that Kafka 4 removed).
    (version >= 0 && version <= api.valid_versions().max).then_some(api)
}

fn be_i32(b: &[u8], at: usize) -> Option<i32> {
    Some(i32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn be_i16(b: &[u8], at: usize) -> Option<i16> {
    Some(i16::from_be_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

/// Is there a plausible request frame start at the beginning of `b`? `None`: need more bytes.
pub(crate) fn plausible_request(b: &[u8]) -> Option<bool> {
    let size = be_i32(b, 0)?;
    if !(10..=MAX_FRAME as i32).contains(&size) {
        return Some(false);
    }
    let key = be_i16(b, 4)?;
    let version = be_i16(b, 6)?;
    let Some(api) = known_api(key, version) else { return Some(false) };
    let correlation = be_i32(b, 8)?;
    if correlation < 0 {
        return Some(false);
    }
    if api.request_header_version(version) < 1 {
        return Some(true);
    }
    let client_len = be_i16(b, 12)?;
    if client_len < -1 || i32::from(client_len) > size - 10 {
        return Some(false);
    }
    if client_len > 0 {
        let len = client_len as usize;
        // Look at up to 64 bytes of the client id: printable UTF-8.
        let shown = len.min(64);
        let id = b.get(14..14 + shown)?;
        let ok = match std::str::from_utf8(id) {
            Ok(s) => s.chars().all(|c| !c.is_control()),
            Err(e) => e.error_len().is_none() && shown < len,
        };
        return Some(ok);
    }
    Some(true)
}

/// Finds the first offset in `b` where a plausible request starts. `Err(keep)`: none found, the
/// last `keep` bytes may still start one.
pub(crate) fn find_request(b: &[u8]) -> Result<usize, usize> {
    for at in 0..b.len() {
        match plausible_request(&b[at..]) {
            Some(true) => return Ok(at),
            Some(false) => {}
            None => return Err(b.len() - at),
        }
    }
    Err(0)
}

#[derive(Debug, Clone)]
struct PendingRequest {
    correlation_id: i32,
    api_key: i16,
    api_version: i16,
    client_id: Option<String>,
    /// For group requests: what the response needs to be read in context.
    context: Option<RequestContext>,
}

#[derive(Debug, Clone, Default)]
struct RequestContext {
    group_id: String,
    member_id: String,
    generation_id: i32,
    protocol_type: Option<String>,
}

#[derive(Debug, Default)]
struct Stream {
    buf: Vec<u8>,
    /// Bytes of the current frame still to throw away.
    skip: usize,
    synced: bool,
}

impl Stream {
    fn gap(&mut self) {
        self.buf = Vec::new();
        self.skip = 0;
        self.synced = false;
    }

    /// Gives back memory a big frame left behind.
    fn shrink(&mut self) {
        if self.buf.capacity() > 64 * 1024 && self.buf.len() < self.buf.capacity() / 4 {
            self.buf.shrink_to(self.buf.len().max(4096));
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        let mut bytes = bytes;
        if self.skip > 0 {
            let n = self.skip.min(bytes.len());
            self.skip -= n;
            bytes = &bytes[n..];
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Drops `n` buffered bytes, or all of them and remembers to skip the rest.
    fn discard(&mut self, n: usize) {
        if n <= self.buf.len() {
            self.buf.drain(..n);
        } else {
            self.skip = n - self.buf.len();
            self.buf.clear();
        }
    }
}

/// Sans-IO decoder of one Kafka connection: feed it the client's and the broker's byte streams
/// (each in order) and it yields the JoinGroup/SyncGroup messages found in them.
///
/// ```
/// use kafka_consumer_protocol::pcap::{ConnectionDecoder, GroupBody};
///
/// // A JoinGroup v0 request: group "g", member "", protocol type "consumer", one protocol "range"
/// // whose metadata is a v0 Subscription to topic "t".
/// let subscription = [0u8, 0, 0, 0, 0, 1, 0, 1, b't', 0xff, 0xff, 0xff, 0xff];
/// let mut body = Vec::new();
/// body.extend_from_slice(&[0, 11, 0, 0, 0, 0, 0, 7, 0, 1, b'c']); // key, version, correlation, client "c"
/// body.extend_from_slice(&[0, 1, b'g', 0, 0, 0x75, 0x30, 0, 0]); // group, session timeout, member ""
/// body.extend_from_slice(&[0, 8]);
/// body.extend_from_slice(b"consumer");
/// body.extend_from_slice(&[0, 0, 0, 1, 0, 5]);
/// body.extend_from_slice(b"range");
/// body.extend_from_slice(&(subscription.len() as i32).to_be_bytes());
/// body.extend_from_slice(&subscription);
/// let mut frame = (body.len() as i32).to_be_bytes().to_vec();
/// frame.extend_from_slice(&body);
///
/// let mut decoder = ConnectionDecoder::new(Default::default(), true);
/// let mut out = Vec::new();
/// decoder.request_bytes(&frame[..5], &mut out); // split anywhere
/// decoder.request_bytes(&frame[5..], &mut out);
/// assert_eq!(out.len(), 1);
/// let GroupBody::JoinGroupRequest(join) = &out[0].body else { panic!() };
/// assert_eq!(join.group_id, "g");
/// assert_eq!(join.protocols[0].name, "range");
/// assert_eq!(join.protocols[0].metadata.subscription().unwrap().view().topics().iter().collect::<Vec<_>>(), ["t"]);
/// ```
#[derive(Debug)]
pub struct ConnectionDecoder {
    options: DecodeOptions,
    max_group_frame: usize,
    requests: Stream,
    responses: Stream,
    pending: VecDeque<PendingRequest>,
    /// Protocol type of each group seen in JoinGroup requests on this connection.
    group_types: Vec<(String, String)>,
    counts: FrameCounts,
    /// Topic partition counts read from Metadata responses, not yet taken.
    learned: Vec<(String, i32)>,
}

impl ConnectionDecoder {
    /// A decoder. `from_start`: the streams start at a frame boundary (the TCP handshake was
    /// seen); otherwise both resynchronise on the first plausible frame.
    pub fn new(options: DecodeOptions, from_start: bool) -> Self {
        Self::with_limit(options, from_start, 16 * 1024 * 1024)
    }

    /// Like [`ConnectionDecoder::new`], buffering at most `max_group_frame` bytes for one
    /// JoinGroup/SyncGroup frame (larger ones are skipped and counted).
    pub fn with_limit(options: DecodeOptions, from_start: bool, max_group_frame: usize) -> Self {
        ConnectionDecoder {
            options,
            max_group_frame,
            requests: Stream { synced: from_start, ..Stream::default() },
            responses: Stream { synced: from_start, ..Stream::default() },
            pending: VecDeque::new(),
            group_types: Vec::new(),
            counts: FrameCounts::default(),
            learned: Vec::new(),
        }
    }

    /// Takes the `(topic, partition count)` pairs read from the Metadata responses decoded
    /// since the last call (topics without error and with partitions only). Rules that need the
    /// partition counts (`kcp conform`'s `leader.assignment`) learn them from here.
    pub fn take_partition_counts(&mut self) -> Vec<(String, i32)> {
        std::mem::take(&mut self.learned)
    }

    /// What was found and skipped so far.
    pub fn counts(&self) -> &FrameCounts {
        &self.counts
    }

    /// Bytes buffered (both directions, with the remembered requests).
    pub fn buffered(&self) -> usize {
        self.requests.buf.len() + self.responses.buf.len() + self.pending.len() * 64
    }

    /// Bytes were lost in the client-to-broker stream: resynchronise.
    pub fn request_gap(&mut self) {
        self.requests.gap();
    }

    /// Bytes were lost in the broker-to-client stream: resynchronise.
    pub fn response_gap(&mut self) {
        self.responses.gap();
    }

    /// Bytes left in unfinished frames (call at the end of the capture to count them).
    pub fn finish(&mut self) {
        if !self.requests.buf.is_empty() || self.requests.skip > 0 {
            self.counts.incomplete_frames += 1;
        }
        if !self.responses.buf.is_empty() || self.responses.skip > 0 {
            self.counts.incomplete_frames += 1;
        }
        self.requests.gap();
        self.responses.gap();
    }

    /// Feeds client-to-broker bytes.
    pub fn request_bytes(&mut self, bytes: &[u8], out: &mut Vec<GroupFrame>) {
        self.request_frames(bytes, out);
        self.requests.shrink();
    }

    fn request_frames(&mut self, bytes: &[u8], out: &mut Vec<GroupFrame>) {
        self.requests.push(bytes);
        loop {
            let s = &mut self.requests;
            if s.skip > 0 || s.buf.is_empty() {
                break;
            }
            if !s.synced {
                match find_request(&s.buf) {
                    Ok(at) => {
                        self.counts.skipped_bytes += at as u64;
                        s.buf.drain(..at);
                        s.synced = true;
                        self.counts.resyncs += 1;
                    }
                    Err(keep) => {
                        let drop = s.buf.len() - keep;
                        self.counts.skipped_bytes += drop as u64;
                        s.buf.drain(..drop);
                        break;
                    }
                }
            }
            match plausible_request(&s.buf) {
                None => break,
                Some(false) => {
                    // Lost step: look for the next plausible frame.
                    self.counts.desyncs += 1;
                    s.synced = false;
                    s.buf.drain(..1);
                    self.counts.skipped_bytes += 1;
                    continue;
                }
                Some(true) => {}
            }
            let size = be_i32(&s.buf, 0).unwrap_or(0) as usize;
            let key = be_i16(&s.buf, 4).unwrap_or(-1);
            let version = be_i16(&s.buf, 6).unwrap_or(-1);
            let correlation_id = be_i32(&s.buf, 8).unwrap_or(-1);
            let group = key == JOIN_GROUP || key == SYNC_GROUP;
            if group && size <= self.max_group_frame {
                if s.buf.len() < 4 + size {
                    break;
                }
                let frame = Bytes::copy_from_slice(&s.buf[4..4 + size]);
                s.buf.drain(..4 + size);
                self.counts.requests += 1;
                self.group_request(key, version, correlation_id, frame, out);
            } else {
                if group {
                    self.counts.oversized_frames += 1;
                }
                self.counts.requests += 1;
                s.discard(4 + size);
                self.remember(PendingRequest {
                    correlation_id,
                    api_key: key,
                    api_version: version,
                    client_id: None,
                    context: None,
                });
            }
        }
    }

    fn remember(&mut self, request: PendingRequest) {
        if self.pending.len() >= MAX_PENDING {
            self.pending.pop_front();
            self.counts.unanswered_requests += 1;
        }
        self.pending.push_back(request);
    }

    /// Takes the pending request with this correlation id; requests before it were not answered
    /// (Kafka answers in order; e.g. Produce with acks=0 has no response).
    fn take(&mut self, correlation_id: i32) -> Option<PendingRequest> {
        let at = self.pending.iter().position(|p| p.correlation_id == correlation_id)?;
        self.counts.unanswered_requests += at as u64;
        self.pending.drain(..at);
        self.pending.pop_front()
    }

    /// Feeds broker-to-client bytes.
    pub fn response_bytes(&mut self, bytes: &[u8], out: &mut Vec<GroupFrame>) {
        self.response_frames(bytes, out);
        self.responses.shrink();
    }

    fn response_frames(&mut self, bytes: &[u8], out: &mut Vec<GroupFrame>) {
        self.responses.push(bytes);
        loop {
            if self.responses.skip > 0 || self.responses.buf.len() < 8 {
                break;
            }
            if !self.responses.synced {
                // A response starts where a sane size is followed by a pending correlation id.
                let buf = &self.responses.buf;
                let found = (0..=buf.len() - 8).find(|&at| {
                    let size = be_i32(buf, at).unwrap_or(-1);
                    let corr = be_i32(buf, at + 4).unwrap_or(-1);
                    (4..=MAX_FRAME as i32).contains(&size) && self.pending.iter().any(|p| p.correlation_id == corr)
                });
                match found {
                    Some(at) => {
                        self.counts.skipped_bytes += at as u64;
                        self.responses.buf.drain(..at);
                        self.responses.synced = true;
                        self.counts.resyncs += 1;
                    }
                    None => {
                        let drop = buf.len() - 7;
                        self.counts.skipped_bytes += drop as u64;
                        self.responses.buf.drain(..drop);
                        break;
                    }
                }
            }
            let size = be_i32(&self.responses.buf, 0).unwrap_or(-1);
            let correlation_id = be_i32(&self.responses.buf, 4).unwrap_or(-1);
            if !(4..=MAX_FRAME as i32).contains(&size) {
                self.counts.desyncs += 1;
                self.responses.synced = false;
                self.responses.buf.drain(..1);
                self.counts.skipped_bytes += 1;
                continue;
            }
            let size = size as usize;
            let Some(request) = self.take(correlation_id) else {
                // Framing says this is a response, but to nothing we saw: skip it.
                self.counts.responses += 1;
                self.counts.unmatched_responses += 1;
                self.responses.discard(4 + size);
                continue;
            };
            let group = request.context.is_some();
            let metadata = request.api_key == METADATA && self.learned.len() < MAX_LEARNED;
            if (group || metadata) && size <= self.max_group_frame {
                if self.responses.buf.len() < 4 + size {
                    // Wait for the rest: put the request back.
                    self.pending.push_front(request);
                    break;
                }
                if metadata {
                    let counts = metadata_partition_counts(request.api_version, &self.responses.buf[4..4 + size]);
                    self.learned.extend(counts.into_iter().flatten().take(MAX_LEARNED));
                    self.responses.buf.drain(..4 + size);
                    self.counts.responses += 1;
                    continue;
                }
                let frame = Bytes::copy_from_slice(&self.responses.buf[4..4 + size]);
                self.responses.buf.drain(..4 + size);
                self.counts.responses += 1;
                self.group_response(request, frame, out);
            } else {
                if group {
                    self.counts.oversized_frames += 1;
                }
                self.counts.responses += 1;
                self.responses.discard(4 + size);
            }
        }
    }

    fn payload(&mut self, protocol_type: Option<&str>, bytes: Bytes, subscription: bool) -> Payload {
        let payload = decode_payload(self.options, consumer_protocol(protocol_type), bytes, subscription);
        if matches!(payload, Payload::Invalid { .. }) {
            self.counts.payload_errors += 1;
        }
        payload
    }

    fn group_type(&self, group_id: &str) -> Option<String> {
        self.group_types.iter().rev().find(|(g, _)| g == group_id).map(|(_, t)| t.clone())
    }

    fn group_request(&mut self, key: i16, version: i16, correlation_id: i32, frame: Bytes, out: &mut Vec<GroupFrame>) {
        let decoded = decode_request(key, version, frame);
        let Some((client_id, body)) = decoded else {
            self.counts.undecodable_frames += 1;
            self.remember(PendingRequest {
                correlation_id,
                api_key: key,
                api_version: version,
                client_id: None,
                context: None,
            });
            return;
        };
        let (context, body) = match body {
            RawRequest::Join(r) => {
                let r = convert::from_join_group_request(r);
                let protocol_type = r.protocol_type.clone();
                let group_id = &r.group_id;
                if !self.group_types.iter().any(|(g, t)| g == group_id && *t == protocol_type) {
                    self.group_types.retain(|(g, _)| g != group_id);
                    if self.group_types.len() >= 64 {
                        self.group_types.remove(0);
                    }
                    self.group_types.push((group_id.clone(), protocol_type.clone()));
                }
                let context = RequestContext {
                    group_id: r.group_id.clone(),
                    member_id: r.member_id.clone(),
                    generation_id: -1,
                    protocol_type: Some(protocol_type.clone()),
                };
                let body = GroupBody::JoinGroupRequest(r.map_payloads(|m| self.payload(Some(&protocol_type), m, true)));
                (context, body)
            }
            RawRequest::Sync(r) => {
                let mut r = convert::from_sync_group_request(r);
                // Before v5 the request names no protocol type: the group's last JoinGroup here did.
                if r.protocol_type.is_none() {
                    r.protocol_type = self.group_type(&r.group_id);
                }
                let protocol_type = r.protocol_type.clone();
                let context = RequestContext {
                    group_id: r.group_id.clone(),
                    member_id: r.member_id.clone(),
                    generation_id: r.generation_id,
                    protocol_type: protocol_type.clone(),
                };
                let body =
                    GroupBody::SyncGroupRequest(r.map_payloads(|a| self.payload(protocol_type.as_deref(), a, false)));
                (context, body)
            }
        };
        self.counts.group_messages += 1;
        out.push(GroupFrame {
            direction: MessageDirection::Request,
            api_version: version,
            correlation_id,
            client_id: client_id.clone(),
            body,
        });
        self.remember(PendingRequest {
            correlation_id,
            api_key: key,
            api_version: version,
            client_id,
            context: Some(context),
        });
    }

    fn group_response(&mut self, request: PendingRequest, frame: Bytes, out: &mut Vec<GroupFrame>) {
        let context = request.context.unwrap_or_default();
        let Some(raw) = decode_response(request.api_key, request.api_version, frame) else {
            self.counts.undecodable_frames += 1;
            return;
        };
        let body = match raw {
            RawResponse::Join(r, members) => {
                let protocol_type = opt(r.protocol_type).or(context.protocol_type.clone());
                let members = JoinMembers {
                    bytes: members.bytes,
                    count: members.count,
                    version: request.api_version,
                    options: self.options,
                    consumer: consumer_protocol(protocol_type.as_deref()),
                };
                // Every member is decoded once here, to refuse a frame that does not decode and
                // to count the payloads the codec refuses, and dropped at once: the body keeps
                // the frame's bytes only.
                let mut rest = members.bytes.clone();
                for _ in 0..members.count {
                    let Some(member) = decode_join_member(&mut rest, members.version) else {
                        self.counts.undecodable_frames += 1;
                        return;
                    };
                    if join_member_payload(member, members.options, members.consumer).1 {
                        self.counts.payload_errors += 1;
                    }
                }
                if rest.has_remaining() {
                    self.counts.undecodable_frames += 1;
                    return;
                }
                GroupBody::JoinGroupResponse(JoinGroupResponseBody {
                    group_id: context.group_id,
                    error: ErrorCode(r.error_code),
                    generation_id: r.generation_id,
                    protocol_type,
                    protocol_name: opt(r.protocol_name),
                    leader: r.leader.to_string(),
                    skip_assignment: r.skip_assignment,
                    member_id: r.member_id.to_string(),
                    members,
                })
            }
            RawResponse::Sync(r) => {
                let mut r = convert::from_sync_group_response(r);
                r.protocol_type = r.protocol_type.take().or(context.protocol_type.clone());
                let protocol_type = r.protocol_type.clone();
                let response = r.map_payloads(|a| self.payload(protocol_type.as_deref(), a, false));
                GroupBody::SyncGroupResponse(SyncGroupResponseBody {
                    group_id: context.group_id,
                    member_id: context.member_id,
                    generation_id: context.generation_id,
                    response,
                })
            }
        };
        self.counts.group_messages += 1;
        out.push(GroupFrame {
            direction: MessageDirection::Response,
            api_version: request.api_version,
            correlation_id: request.correlation_id,
            client_id: request.client_id,
            body,
        });
    }
}

fn opt(s: Option<StrBytes>) -> Option<String> {
    s.map(|s| s.to_string())
}

/// Payloads of the protocol type `consumer`, or of an unknown one, are decoded by the codec;
/// those of another (Kafka Connect, custom) are kept as they are.
fn consumer_protocol(protocol_type: Option<&str>) -> bool {
    !matches!(protocol_type, Some(t) if !t.is_empty() && t != "consumer")
}

fn decode_payload(options: DecodeOptions, consumer: bool, bytes: Bytes, subscription: bool) -> Payload {
    if bytes.is_empty() {
        return Payload::Empty;
    }
    if !consumer {
        return Payload::Raw(bytes);
    }
    let result = if subscription {
        SubscriptionBuf::decode_with(bytes.clone(), options).map(Payload::Subscription)
    } else {
        AssignmentBuf::decode_with(bytes.clone(), options).map(Payload::Assignment)
    };
    result.unwrap_or_else(|error| Payload::Invalid { bytes, error })
}

/// One member of a JoinGroup response's member array, taken from the front of `rest`.
pub(super) fn decode_join_member(rest: &mut Bytes, version: i16) -> Option<JoinGroupResponseMember> {
    JoinGroupResponseMember::decode(rest, version).ok()
}

/// A decoded member in `group_api`'s shape with its payload decoded, and whether the codec
/// refused the payload.
pub(super) fn join_member_payload(
    m: JoinGroupResponseMember,
    options: DecodeOptions,
    consumer: bool,
) -> (JoinGroupMember<Payload>, bool) {
    let metadata = decode_payload(options, consumer, m.metadata, true);
    let refused = matches!(metadata, Payload::Invalid { .. });
    let member =
        JoinGroupMember { member_id: m.member_id.to_string(), group_instance_id: opt(m.group_instance_id), metadata };
    (member, refused)
}

/// The member array of a JoinGroup response, left undecoded in its frame.
struct MemberArray {
    bytes: Bytes,
    count: usize,
}

enum RawRequest {
    Join(JoinGroupRequest),
    Sync(SyncGroupRequest),
}

enum RawResponse {
    /// The response without its members (decoded from the frame with an empty member array)
    /// and the member array itself.
    Join(JoinGroupResponse, MemberArray),
    Sync(SyncGroupResponse),
}

/// Decodes a request frame (after the size) of a group API; `None` if it does not parse exactly.
fn decode_request(key: i16, version: i16, mut frame: Bytes) -> Option<(Option<String>, RawRequest)> {
    let api = ApiKey::try_from(key).ok()?;
    let range = api.valid_versions();
    if version < range.min || version > range.max {
        return None;
    }
    let header = RequestHeader::decode(&mut frame, api.request_header_version(version)).ok()?;
    let flexible = api.request_header_version(version) >= 2;
    check_body(key, version, flexible, true, &frame)?;
    let body = match key {
        JOIN_GROUP => RawRequest::Join(JoinGroupRequest::decode(&mut frame, version).ok()?),
        SYNC_GROUP => RawRequest::Sync(SyncGroupRequest::decode(&mut frame, version).ok()?),
        _ => return None,
    };
    (!frame.has_remaining()).then(|| (opt(header.client_id), body))
}

fn decode_response(key: i16, version: i16, mut frame: Bytes) -> Option<RawResponse> {
    let api = ApiKey::try_from(key).ok()?;
    let _header = ResponseHeader::decode(&mut frame, api.response_header_version(version)).ok()?;
    let flexible = api.response_header_version(version) >= 1;
    let members = check_body(key, version, flexible, false, &frame)?;
    let body = match key {
        JOIN_GROUP => {
            let span = members?;
            // The fields around the member array are decoded by `kafka-protocol` from the frame
            // with the array emptied; the members stay in the frame (see `JoinMembers`).
            let mut rest = Vec::with_capacity(frame.len() - (span.end - span.count_at) + 4);
            rest.extend_from_slice(&frame[..span.count_at]);
            if flexible {
                rest.push(1);
            } else {
                rest.extend_from_slice(&0i32.to_be_bytes());
            }
            rest.extend_from_slice(&frame[span.end..]);
            let mut rest = Bytes::from(rest);
            let response = JoinGroupResponse::decode(&mut rest, version).ok()?;
            if rest.has_remaining() {
                return None;
            }
            let members = MemberArray { bytes: frame.slice(span.start..span.end), count: span.count };
            return Some(RawResponse::Join(response, members));
        }
        SYNC_GROUP => RawResponse::Sync(SyncGroupResponse::decode(&mut frame, version).ok()?),
        _ => return None,
    };
    (!frame.has_remaining()).then_some(body)
}

/// Where a JoinGroup response's member array is in its body: its count at `count_at`, its
/// `count` members from `start` to `end`.
#[derive(Debug, Clone, Copy)]
struct MemberSpan {
    count_at: usize,
    start: usize,
    end: usize,
    count: usize,
}

/// A structural walk over a group message body that checks every length and array count
/// against the bytes present before `kafka-protocol` (which pre-allocates arrays by their
/// declared count) sees it. `None` when the body does not walk exactly; a JoinGroup response's
/// walk also says where its member array is.
fn check_body(key: i16, v: i16, flexible: bool, request: bool, body: &[u8]) -> Option<Option<MemberSpan>> {
    let mut c = Walk { b: body, at: 0, flexible };
    let mut span = None;
    let ok = match (key, request) {
        (JOIN_GROUP, true) => (|| {
            c.string()?;
            c.fixed(4)?;
            if v >= 1 {
                c.fixed(4)?;
            }
            c.string()?;
            if v >= 5 {
                c.string()?;
            }
            c.string()?;
            for _ in 0..c.array()? {
                c.string()?;
                c.bytes()?;
                c.tags()?;
            }
            if v >= 8 {
                c.string()?;
            }
            c.tags()
        })(),
        (JOIN_GROUP, false) => (|| {
            if v >= 2 {
                c.fixed(4)?;
            }
            c.fixed(2 + 4)?;
            if v >= 7 {
                c.string()?;
            }
            c.string()?;
            c.string()?;
            if v >= 9 {
                c.fixed(1)?;
            }
            c.string()?;
            let count_at = c.at;
            let count = c.array()?;
            let start = c.at;
            for _ in 0..count {
                c.string()?;
                if v >= 5 {
                    c.string()?;
                }
                c.bytes()?;
                c.tags()?;
            }
            span = Some(MemberSpan { count_at, start, end: c.at, count });
            c.tags()
        })(),
        (SYNC_GROUP, true) => (|| {
            c.string()?;
            c.fixed(4)?;
            c.string()?;
            if v >= 3 {
                c.string()?;
            }
            if v >= 5 {
                c.string()?;
                c.string()?;
            }
            for _ in 0..c.array()? {
                c.string()?;
                c.bytes()?;
                c.tags()?;
            }
            c.tags()
        })(),
        (SYNC_GROUP, false) => (|| {
            if v >= 1 {
                c.fixed(4)?;
            }
            c.fixed(2)?;
            if v >= 5 {
                c.string()?;
                c.string()?;
            }
            c.bytes()?;
            c.tags()
        })(),
        _ => None,
    };
    (ok.is_some() && c.at == body.len()).then_some(span)
}

/// The `(topic, partition count)` pairs of a Metadata response frame (after its size: the
/// header, then the body) of any version 0-13; `None` when it does not walk exactly. Topics
/// with an error or no partitions are left out. Nothing is allocated by a declared count.
pub(crate) fn metadata_partition_counts(version: i16, frame: &[u8]) -> Option<Vec<(String, i32)>> {
    if !(0..=13).contains(&version) {
        return None;
    }
    let flexible = version >= 9;
    let mut w = Walk { b: frame, at: 0, flexible };
    w.fixed(4)?; // correlation id
    w.tags()?; // response header v1 (flexible versions)
    if version >= 3 {
        w.fixed(4)?; // throttle_time_ms
    }
    for _ in 0..w.array()? {
        w.fixed(4)?; // node_id
        w.string()?; // host
        w.fixed(4)?; // port
        if version >= 1 {
            w.string()?; // rack
        }
        w.tags()?;
    }
    if version >= 2 {
        w.string()?; // cluster_id
    }
    if version >= 1 {
        w.fixed(4)?; // controller_id
    }
    let mut counts = Vec::new();
    for _ in 0..w.array()? {
        let error = be_i16(w.b, w.at)?;
        w.fixed(2)?;
        let name = w.text()?.map(str::to_owned);
        if version >= 10 {
            w.fixed(16)?; // topic_id
        }
        if version >= 1 {
            w.fixed(1)?; // is_internal
        }
        let partitions = w.array()?;
        for _ in 0..partitions {
            w.fixed(2 + 4 + 4)?; // error_code, partition_index, leader_id
            if version >= 7 {
                w.fixed(4)?; // leader_epoch
            }
            let arrays = if version >= 5 { 3 } else { 2 }; // replicas, isr, offline replicas
            for _ in 0..arrays {
                let n = w.array()?;
                w.fixed(n.checked_mul(4)?)?;
            }
            w.tags()?;
        }
        if version >= 8 {
            w.fixed(4)?; // topic_authorized_operations
        }
        w.tags()?;
        if let (0, Some(name), 1..) = (error, name, partitions) {
            counts.push((name, i32::try_from(partitions).ok()?));
        }
    }
    if (8..=10).contains(&version) {
        w.fixed(4)?; // cluster_authorized_operations
    }
    if version >= 13 {
        w.fixed(2)?; // error_code
    }
    w.tags()?;
    (w.at == frame.len()).then_some(counts)
}

struct Walk<'a> {
    b: &'a [u8],
    at: usize,
    flexible: bool,
}

impl Walk<'_> {
    fn fixed(&mut self, n: usize) -> Option<()> {
        let end = self.at.checked_add(n)?;
        (end <= self.b.len()).then(|| self.at = end)
    }

    fn varint(&mut self) -> Option<u64> {
        let mut value = 0u64;
        for shift in 0..5 {
            let byte = *self.b.get(self.at)?;
            self.at += 1;
            value |= u64::from(byte & 0x7f) << (7 * shift);
            if byte & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }

    fn string(&mut self) -> Option<()> {
        self.sized(2)
    }

    /// A nullable string's text; `Some(None)` for null, `None` when it is not UTF-8 or too long.
    fn text(&mut self) -> Option<Option<&str>> {
        let start = self.at;
        self.string()?;
        let header = if self.flexible {
            let mut w = Walk { b: self.b, at: start, flexible: true };
            let n = w.varint()?;
            if n == 0 {
                return Some(None);
            }
            w.at - start
        } else {
            if be_i16(self.b, start)? < 0 {
                return Some(None);
            }
            2
        };
        std::str::from_utf8(&self.b[start + header..self.at]).ok().map(Some)
    }

    fn bytes(&mut self) -> Option<()> {
        self.sized(4)
    }

    /// A nullable string or byte field: a compact (varint length + 1) length when flexible,
    /// else a big-endian length of `width` bytes (2 or 4); lengths below -1 are refused.
    fn sized(&mut self, width: usize) -> Option<()> {
        if self.flexible {
            let n = self.varint()?;
            return self.fixed(n.saturating_sub(1) as usize);
        }
        let n = if width == 2 { i32::from(be_i16(self.b, self.at)?) } else { be_i32(self.b, self.at)? };
        self.at += width;
        if n < -1 {
            return None;
        }
        self.fixed(n.max(0) as usize)
    }

    /// An array count, refused when more elements are declared than bytes remain.
    fn array(&mut self) -> Option<usize> {
        let n = if self.flexible {
            self.varint()?.saturating_sub(1) as usize
        } else {
            let n = be_i32(self.b, self.at)?;
            self.at += 4;
            usize::try_from(n.max(0)).ok()?
        };
        (n <= self.b.len() - self.at).then_some(n)
    }

    fn tags(&mut self) -> Option<()> {
        if !self.flexible {
            return Some(());
        }
        let n = self.varint()?;
        if n > (self.b.len() - self.at) as u64 {
            return None;
        }
        for _ in 0..n {
            self.varint()?;
            let size = self.varint()?;
            self.fixed(usize::try_from(size).ok()?)?;
        }
        Some(())
    }
}

#[cfg(test)]
mod metadata_tests {
    use bytes::BytesMut;
    use kafka_protocol::messages::metadata_response::{
        MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
    };
    use kafka_protocol::messages::{MetadataResponse, ResponseHeader, TopicName};
    use kafka_protocol::protocol::{Encodable, StrBytes};

    use super::*;

    fn frame(version: i16, response: &MetadataResponse) -> Vec<u8> {
        let mut buf = BytesMut::new();
        let header = ResponseHeader::default().with_correlation_id(7);
        header.encode(&mut buf, ApiKey::Metadata.response_header_version(version)).unwrap();
        response.encode(&mut buf, version).unwrap();
        buf.to_vec()
    }

    fn response(version: i16) -> MetadataResponse {
        let partition = |i: i32| {
            MetadataResponsePartition::default()
                .with_partition_index(i)
                .with_replica_nodes(vec![1.into(), 2.into()])
                .with_isr_nodes(vec![1.into()])
                .with_offline_replicas(if version >= 5 { vec![2.into()] } else { vec![] })
        };
        let topic = |name: &str, n: i32, error: i16| {
            MetadataResponseTopic::default()
                .with_error_code(error)
                .with_name(Some(TopicName(StrBytes::from_string(name.to_owned()))))
                .with_partitions((0..n).map(partition).collect())
        };
        let broker = MetadataResponseBroker::default()
            .with_node_id(1.into())
            .with_host(StrBytes::from_static_str("localhost"))
            .with_port(9092)
            .with_rack(if version >= 1 { Some(StrBytes::from_static_str("r1")) } else { None });
        MetadataResponse::default()
            .with_brokers(vec![broker])
            .with_cluster_id(if version >= 2 { Some(StrBytes::from_static_str("c")) } else { None })
            // An unknown topic (error 3) has no count.
            .with_topics(vec![topic("orders", 6, 0), topic("audit", 3, 0), topic("missing", 0, 3)])
    }

    #[test]
    fn partition_counts_of_every_version() {
        for version in 0..=ApiKey::Metadata.valid_versions().max.min(13) {
            let bytes = frame(version, &response(version));
            let counts = metadata_partition_counts(version, &bytes).unwrap_or_else(|| panic!("v{version}"));
            assert_eq!(counts, [("orders".to_owned(), 6), ("audit".to_owned(), 3)], "v{version}");
            // Every truncation is refused (never a panic), and so is a trailing byte.
            for cut in 0..bytes.len() {
                assert_eq!(metadata_partition_counts(version, &bytes[..cut]), None, "v{version} cut {cut}");
            }
            let mut longer = bytes.clone();
            longer.push(0);
            assert_eq!(metadata_partition_counts(version, &longer), None);
        }
    }

    #[test]
    fn a_huge_declared_count_is_refused_without_allocating_for_it() {
        // v0: correlation id, no brokers, then 2^31-1 topics declared in six bytes.
        let bytes = [0, 0, 0, 7, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff, 0, 0];
        assert_eq!(metadata_partition_counts(0, &bytes), None);
    }
}
