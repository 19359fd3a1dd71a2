//! The JSON input documents of `kcp encode`, `kcp assign` and `kcp simulate`, as the library
//! parses them (`codec::json`, `assignor::json`, `sim::json`): arbitrary bytes end in a value or
//! a typed error, and what is accepted is sound (see `kcp_testkit::cli_json_checks`).
#![no_main]

use kcp_testkit::cli_json_checks;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| cli_json_checks::check(data));
