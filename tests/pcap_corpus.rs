//! Replays the committed `kafka_framing` fuzz corpus (`fuzz/corpus/kafka_framing/`) through the
//! same check the fuzz target runs.

use kcp_testkit::{pcap_checks, replay};

#[test]
fn kafka_framing_corpus() {
    let n = replay("kafka_framing", pcap_checks::kafka_framing);
    assert!(n >= 20, "{n} corpus files");
}

#[test]
fn synthetic_wrapper_reaches_the_kafka_layer() {
    // A JoinGroup v0 request cut in two segments, through the fuzz target's own pcap wrapper.
    let sub = [0u8, 0, 0, 0, 0, 1, 0, 1, b't', 0xff, 0xff, 0xff, 0xff];
    let mut body = vec![0, 11, 0, 0, 0, 0, 0, 7, 0, 1, b'c', 0, 1, b'g', 0, 0, 0x75, 0x30, 0, 0, 0, 8];
    body.extend_from_slice(b"consumer");
    body.extend_from_slice(&[0, 0, 0, 1, 0, 5]);
    body.extend_from_slice(b"range");
    body.extend_from_slice(&(sub.len() as i32).to_be_bytes());
    body.extend_from_slice(&sub);
    let mut frame = (body.len() as i32).to_be_bytes().to_vec();
    frame.extend_from_slice(&body);
    let mut records = vec![0x02, 0, 7, 0]; // SYN from the client (seq 999)
    for part in frame.chunks(30) {
        records.extend_from_slice(&[0, 0, 8, part.len() as u8]);
        records.extend_from_slice(part);
    }
    let file = pcap_checks::synthetic_pcap(&records);
    let mut reader = kafka_consumer_protocol::pcap::GroupReader::new(&file[..], Default::default()).unwrap();
    let messages: Vec<_> = reader.by_ref().collect();
    assert_eq!(messages.len(), 1, "{:?}", reader.summary());
    assert_eq!(messages[0].frame.body.group_id(), "g");
}
