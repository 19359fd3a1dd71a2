//! The coordinator's leader path on hostile member subscriptions: raw or structured-but-hostile
//! JoinGroup metadata (huge, negative, duplicate partition ids; unknown topics; odd names; any
//! version), every built-in assignor and a custom cooperative one that hands out anything. No
//! panic, typed errors where due, and a SyncGroup that keeps the leader's rules otherwise. Run
//! with `-malloc_limit_mb=512 -rss_limit_mb=1024` so an allocation sized by a claim is a crash.
#![no_main]

use kcp_testkit::leader_checks;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| leader_checks::check(data));
