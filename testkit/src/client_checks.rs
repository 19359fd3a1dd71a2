//! The property the `client_response` fuzz target checks: the client's response decoding path
//! (the response header, the structural check of every length and count, then
//! `kafka-protocol`'s decoder) never panics on arbitrary bytes, whatever the API and version,
//! and its errors are `protocol` errors naming the API and version. Shared with
//! `tests/client_corpus.rs`.
#![allow(dead_code)]

use bytes::Bytes;
use kafka_consumer_protocol::client::{decode_response_frame, ErrorKind, DECODED_API_KEYS};

/// `data`: one byte choosing the API (an index into the decoded APIs), one byte for the
/// version (0..=15), then the response frame after its size.
pub fn client_response(data: &[u8]) {
    let [api, version, frame @ ..] = data else { return };
    let api_key = DECODED_API_KEYS[usize::from(*api) % DECODED_API_KEYS.len()];
    let version = i16::from(version % 16);
    match decode_response_frame(api_key, version, Bytes::copy_from_slice(frame)) {
        Ok(_) => {}
        Err(e) => {
            assert_eq!(e.kind(), ErrorKind::Protocol, "{e}");
            assert!(e.message().contains(&format!(" v{version} ")), "{e}");
        }
    }
}

/// A corpus input for `api_key` (one of the decoded APIs) at `version`.
pub fn input(api_key: i16, version: i16, frame: &[u8]) -> Vec<u8> {
    let index = DECODED_API_KEYS.iter().position(|&k| k == api_key).expect("a decoded API");
    let mut data = vec![index as u8, version as u8];
    data.extend_from_slice(frame);
    data
}
