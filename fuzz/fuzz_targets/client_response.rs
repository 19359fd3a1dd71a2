#![no_main]

use kcp_testkit::client_checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| client_checks::client_response(data));
