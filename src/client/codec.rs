//! Request frames out, response frames in: the request header and body encoded with
//! `kafka-protocol`, the response checked by [`guard`](super::guard) and then decoded.
//!
//! This is the whole decoding path of a response, a pure function of the bytes, so that the
//! `client_response` fuzz target exercises exactly what a broker's bytes go through.

use bytes::{BufMut, Bytes, BytesMut};
use kafka_protocol::messages::{ApiKey, RequestHeader, ResponseHeader};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, Message, Request, StrBytes};

use super::error::ClientError;
use super::guard;
use super::DecodedResponse;

/// The name of an API key (`JoinGroup`), or `API n` for a key `kafka-protocol` does not know.
pub(crate) fn api_name(api_key: i16) -> String {
    match ApiKey::try_from(api_key) {
        Ok(key) => format!("{key:?}"),
        Err(()) => format!("API {api_key}"),
    }
}

/// Encodes one request frame: the 4-byte size, the request header, the body.
pub(crate) fn encode_request<R: Request>(
    request: &R,
    version: i16,
    correlation_id: i32,
    client_id: &str,
) -> Result<Bytes, ClientError> {
    let header = RequestHeader::default()
        .with_request_api_key(R::KEY)
        .with_request_api_version(version)
        .with_correlation_id(correlation_id)
        .with_client_id(Some(StrBytes::from_string(client_id.to_string())));
    let header_version = R::header_version(version);
    let mut frame = BytesMut::new();
    frame.put_i32(0);
    let encoded = header.encode(&mut frame, header_version).and_then(|()| request.encode(&mut frame, version));
    encoded
        .map_err(|e| ClientError::protocol(format!("cannot encode {} v{version} request: {e}", api_name(R::KEY))))?;
    let size = i32::try_from(frame.len() - 4)
        .map_err(|_| ClientError::protocol(format!("{} v{version} request is too large", api_name(R::KEY))))?;
    frame[..4].copy_from_slice(&size.to_be_bytes());
    Ok(frame.freeze())
}

/// The correlation id at the start of a response frame (after its size).
pub(crate) fn correlation_id(frame: &[u8]) -> Option<i32> {
    Some(i32::from_be_bytes(frame.get(..4)?.try_into().ok()?))
}

/// Decodes a response frame (without its 4-byte size) of `api_key` at `version`, with the
/// response type `M`. Errors are `protocol` errors naming the API and version.
pub(crate) fn decode_response<M: Decodable + HeaderVersion>(
    api_key: i16,
    version: i16,
    frame: Bytes,
) -> Result<M, ClientError> {
    let fail = |what: String| ClientError::protocol(format!("{} v{version} response {what}", api_name(api_key)));
    let header_version = M::header_version(version);
    let header_len = guard::check_header(header_version, &frame).map_err(|e| fail(format!("header: {e}")))?;
    guard::check_response(api_key, version, &frame[header_len..]).map_err(|e| fail(format!("does not decode: {e}")))?;
    let mut buf = frame;
    ResponseHeader::decode(&mut buf, header_version).map_err(|e| fail(format!("header does not decode: {e}")))?;
    M::decode(&mut buf, version).map_err(|e| fail(format!("does not decode: {e}")))
}

/// The API keys whose responses [`decode_response_frame`](super::decode_response_frame) decodes.
pub(crate) const DECODED_APIS: [i16; 12] = [3, 10, 11, 12, 13, 14, 15, 16, 17, 18, 36, 69];

/// Decodes a response frame of any API in [`DECODED_APIS`].
pub(crate) fn decode_any(api_key: i16, version: i16, frame: Bytes) -> Result<DecodedResponse, ClientError> {
    use kafka_protocol::messages::*;
    let unsupported =
        || ClientError::protocol(format!("{} v{version} responses are not decoded here", api_name(api_key)));
    let supported = |range: kafka_protocol::protocol::VersionRange| {
        if (range.min..=range.max).contains(&version) {
            Ok(())
        } else {
            Err(unsupported())
        }
    };
    Ok(match api_key {
        3 => {
            supported(MetadataResponse::VERSIONS)?;
            DecodedResponse::Metadata(decode_response(api_key, version, frame)?)
        }
        10 => {
            supported(FindCoordinatorResponse::VERSIONS)?;
            DecodedResponse::FindCoordinator(decode_response(api_key, version, frame)?)
        }
        11 => {
            supported(JoinGroupResponse::VERSIONS)?;
            DecodedResponse::JoinGroup(decode_response(api_key, version, frame)?)
        }
        12 => {
            supported(HeartbeatResponse::VERSIONS)?;
            DecodedResponse::Heartbeat(decode_response(api_key, version, frame)?)
        }
        13 => {
            supported(LeaveGroupResponse::VERSIONS)?;
            DecodedResponse::LeaveGroup(decode_response(api_key, version, frame)?)
        }
        14 => {
            supported(SyncGroupResponse::VERSIONS)?;
            DecodedResponse::SyncGroup(decode_response(api_key, version, frame)?)
        }
        15 => {
            supported(DescribeGroupsResponse::VERSIONS)?;
            DecodedResponse::DescribeGroups(decode_response(api_key, version, frame)?)
        }
        16 => {
            supported(ListGroupsResponse::VERSIONS)?;
            DecodedResponse::ListGroups(decode_response(api_key, version, frame)?)
        }
        17 => {
            supported(SaslHandshakeResponse::VERSIONS)?;
            DecodedResponse::SaslHandshake(decode_response(api_key, version, frame)?)
        }
        18 => {
            supported(ApiVersionsResponse::VERSIONS)?;
            DecodedResponse::ApiVersions(decode_response(api_key, version, frame)?)
        }
        36 => {
            supported(SaslAuthenticateResponse::VERSIONS)?;
            DecodedResponse::SaslAuthenticate(decode_response(api_key, version, frame)?)
        }
        69 => {
            supported(ConsumerGroupDescribeResponse::VERSIONS)?;
            DecodedResponse::ConsumerGroupDescribe(decode_response(api_key, version, frame)?)
        }
        _ => return Err(unsupported()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::messages::{HeartbeatRequest, HeartbeatResponse, ListGroupsResponse};

    #[test]
    fn request_frames_carry_their_size_and_header() {
        let frame = encode_request(&HeartbeatRequest::default(), 4, 7, "me").unwrap();
        let size = i32::from_be_bytes(frame[..4].try_into().unwrap()) as usize;
        assert_eq!(size, frame.len() - 4);
        // api key 12, version 4, correlation 7, client id "me", no header tags.
        assert_eq!(&frame[4..18], &[0, 12, 0, 4, 0, 0, 0, 7, 0, 2, b'm', b'e', 0, 1]);
    }

    #[test]
    fn undecodable_responses_name_the_api_and_version() {
        let e = decode_response::<ListGroupsResponse>(16, 3, Bytes::from_static(&[0, 0, 0, 1, 0, 0])).unwrap_err();
        assert_eq!(e.kind(), super::super::ErrorKind::Protocol);
        assert!(e.message().starts_with("ListGroups v3 response does not decode"), "{e}");
        let e = decode_response::<HeartbeatResponse>(12, 0, Bytes::from_static(&[0, 0])).unwrap_err();
        assert!(e.message().starts_with("Heartbeat v0 response header"), "{e}");
        let ok = decode_response::<HeartbeatResponse>(12, 0, Bytes::from_static(&[0, 0, 0, 1, 0, 27])).unwrap();
        assert_eq!(ok.error_code, 27);
    }
}
