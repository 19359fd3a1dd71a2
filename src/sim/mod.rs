//! A whole consumer group in virtual time (feature `sim`): the broker's group coordinator, every
//! member's sans-IO [`Coordinator`](crate::coordinator::Coordinator) with its assignors, message
//! latency from a seeded PRNG, injected faults, and an invariant checker. The checker is the
//! point of the simulator: a scenario that ever lets two members of the group own one partition
//! fails.
//!
//! The files, one job each:
//! - `scenario.rs`: what a run is given ([`Scenario`], [`MemberSpec`], [`Step`], [`SimConfig`]),
//!   the [`limits`] and [`SimError`];
//! - `engine.rs`: plays a scenario in virtual time ([`run`], [`run_with`]);
//! - `broker.rs`: the broker's classic group coordinator for the one group;
//! - `modern.rs`: the broker's KIP-848 consumer group, with classic members inside it, once the
//!   first consumer-protocol member converted the classic group (its module doc says what it
//!   models of Kafka's coordinator and where it simplifies);
//! - `checker.rs`: the invariants, after every event in small groups (members x partitions up to
//!   about 4,000, which covers every test scenario) and at every settle point in larger ones;
//! - `outcome.rs`: what a run returns ([`Outcome`], [`Summary`], [`TimelineEntry`], [`is_balanced`]);
//! - `rehearse.rs`: a live classic group's rolling upgrade to the consumer protocol as a
//!   scenario ([`rehearsal_scenario`], from what `inspect::upgrade` read and judged);
//! - `gen.rs` (seeded random scenarios, on `raw.rs`'s mapping of raw bytes onto a valid
//!   scenario), `json.rs` (scenario files and output), `svg.rs` (the timeline drawn; through
//!   `internal` only, its markup is not a stable API).
//!
//! ```
//! use kafka_consumer_protocol::sim::{MemberSpec, Scenario, Step};
//! let mut s = Scenario::new(1, [("orders", 6)]);
//! s.members.push(MemberSpec::new("a", ["cooperative-sticky"], ["orders"]));
//! s.members.push(MemberSpec::new("b", ["cooperative-sticky"], ["orders"]));
//! s.push(Step::Join(MemberSpec::new("c", ["cooperative-sticky"], ["orders"])));
//! let out = kafka_consumer_protocol::sim::run(&s).unwrap();
//! assert!(out.summary.converged);
//! assert!(out.summary.violations.is_empty());
//! // Cooperative scale-out from 2 to 3 members moves exactly the 2 partitions balance needs.
//! assert_eq!(out.summary.partitions_moved, 2);
//! ```

// `broker`, `engine`, `raw` and `svg` are crate-visible for `internal`, the one door of the
// simulator's scaffolding (the broker for the client's tests, the generator, the fuzzer's raw
// steps, the SVG markup): their items are not part of `sim`'s API.
pub(crate) mod broker;
mod checker;
pub(crate) mod engine;
/// Seeded random scenarios.
pub mod gen;
#[cfg(feature = "json")]
#[cfg_attr(docsrs, doc(cfg(feature = "json")))]
/// JSON scenario files and output (feature `json`).
pub mod json;
mod modern;
mod outcome;
pub(crate) mod raw;
mod rehearse;
mod scenario;
pub(crate) mod svg;

pub use broker::GroupState;
use engine::Rng;
pub use engine::{run, run_with};
pub use outcome::{is_balanced, Outcome, Summary, TimelineEntry};
pub use rehearse::{
    rehearsal_scenario, rehearsal_scenario_with, MemberTimeouts, Rehearsal, RehearsalError, RehearsalTiming,
    TimeoutInputs, TimingSource, TimingValue, JAVA_REBALANCE_TIMEOUT_MS, JAVA_SESSION_TIMEOUT_MS,
};
pub use scenario::{limits, GroupProtocol, MemberSpec, Scenario, SimConfig, SimError, Step, StepSpec};
