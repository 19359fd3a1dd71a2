#![no_main]

#[path = "../pcap_checks.rs"]
mod pcap_checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| pcap_checks::kafka_framing(data));
