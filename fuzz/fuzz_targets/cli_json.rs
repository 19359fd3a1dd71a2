//! The JSON documents of `kcp encode`, `kcp assign` and `kcp simulate`: arbitrary bytes end in a
//! value or a typed error, and what is accepted is sound (see `cli_json_checks.rs`).
#![no_main]

#[path = "../cli_json_checks.rs"]
mod cli_json_checks;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| cli_json_checks::check(data));
