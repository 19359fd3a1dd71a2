//! Drives the group simulator with arbitrary step sequences (every kind of step and fault,
//! any assignor family) and checks the ownership invariants: no partition owned by two
//! members of the group, no partition held long after expulsion, and convergence.
#![no_main]

use kcp_testkit::sim_checks;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| sim_checks::check(data));
