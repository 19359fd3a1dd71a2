#![no_main]

#[path = "../client_checks.rs"]
mod client_checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| client_checks::client_response(data));
