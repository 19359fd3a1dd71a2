#![no_main]

use kcp_testkit::offsets_log_checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| offsets_log_checks::segment(data));
