#![no_main]

use kcp_testkit::codec_checks as checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::differential_kafka_protocol(data));
