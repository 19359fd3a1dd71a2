#![no_main]

use kcp_testkit::pcap_checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| pcap_checks::kafka_framing(data));
