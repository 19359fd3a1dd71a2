//! The `kcp simulate` JSON shapes: scenario files in, timeline and summary out.
//!
//! ```
//! use kafka_consumer_protocol::sim::{json, run};
//! let scenario = json::parse_scenario(r#"{"seed": 1, "topics": {"orders": 4},
//!   "members": [{"id": "a", "assignors": ["range"], "topics": ["orders"]}],
//!   "steps": [{"join": {"id": "b", "assignors": ["range"], "topics": ["orders"]}}]}"#).unwrap();
//! let out = json::outcome_json(&run(&scenario).unwrap());
//! assert_eq!(out["summary"]["converged"], true);
//! assert_eq!(out["timeline"].as_array().unwrap().last().unwrap()["owned"]["b"][0]["partitions"].as_array().unwrap().len(), 2);
//! ```

//!
//! # The scenario shape
//!
//! Every key is optional; unknown keys are refused (a typo is an error naming the key, never
//! silently ignored):
//!
//! ```json
//! {"description": "free text",
//!  "seed": 1,
//!  "topics": {"orders": 12},
//!  "members": [{"id": "a", "assignors": ["range"], "topics": ["orders"], "rack": null, "static_id": null,
//!               "protocol": "classic"}],
//!  "config": {"session_timeout_ms": 10000, "rebalance_timeout_ms": 30000, "heartbeat_interval_ms": 1000,
//!             "retry_backoff_ms": 100, "request_timeout_ms": 30000, "initial_rebalance_delay_ms": 3000,
//!             "latency_ms": 2, "jitter_ms": 3, "metadata_delay_ms": 100, "restart_delay_ms": 1000,
//!             "settle_limit_ms": 600000, "record_timeline": true, "max_events": 10000000,
//!             "migration_policy": "bidirectional", "server_assignor": "uniform", "broker_version": "4.x"},
//!  "steps": [
//!    {"join": {"id": "d", "assignors": ["cooperative-sticky", "range"], "topics": ["orders"]}},
//!    {"restart": {"id": "a", "assignors": ["cooperative-sticky"], "topics": ["orders"]}},
//!    {"upgrade": "a"},
//!    {"leave": "b"}, {"crash": "c"}, {"miss_rebalance": "d"},
//!    {"subscribe": {"id": "d", "topics": ["orders", "audit"]}},
//!    {"create_topic": {"name": "audit", "partitions": 4}},
//!    {"add_partitions": {"topic": "orders", "count": 16}}, {"delete_topic": "audit"},
//!    {"wait": 5000}, {"wait": {"ms": 5000}},
//!    {"delay_responses": {"id": "a", "ms": 4000, "count": 2}},
//!    {"lose_responses": {"id": "leader", "count": 1}},
//!    {"stale_metadata": {"id": "leader", "ms": 2000}},
//!    {"settle": {}},
//!    {"leave": "d", "settle": false}]}
//! ```
//!
//! Each step object holds one step; `"settle": true|false` beside it overrides whether the group
//! settles afterwards (faults and `wait` do not settle by default). A member named by a step can
//! be given as `"x"` or `{"id": "x"}`; `"leader"` names the current leader. The limits of
//! A member's `"protocol"` is `"classic"` (the default) or `"consumer"` (KIP-848; its
//! `assignors` are then ignored, the broker's `config.server_assignor` assigns); `{"upgrade": "a"}`
//! restarts classic member `a` as a consumer member. Once the group is a consumer group, timeline
//! entries add `group_protocol`, `pending_revocation` and `awaiting` (per member), and the summary
//! `group_protocol` and `conversions`. [`crate::sim::limits`] are checked while parsing: a scenario above one is refused with an error
//! that names the limit.

use serde::de::{Deserializer, IgnoredAny};
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::limits::{MAX_DURATION_MS, MAX_MEMBERS, MAX_PARTITIONS, MAX_STEPS};
use super::{GroupProtocol, MemberSpec, Outcome, Scenario, SimConfig, Step, StepSpec, Summary, TimelineEntry};
use crate::codec::json::{plain_numbers, Expecting, ObjectOnly};
use crate::TopicPartitions;

/// Why a scenario file was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    kind: ScenarioErrorKind,
    message: String,
}

/// What kind of problem a [`ScenarioError`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScenarioErrorKind {
    /// Not JSON at all.
    Syntax,
    /// JSON of the wrong shape: an unknown key, a value of the wrong type, two steps in one object.
    Shape,
    /// A value out of range (a partition count of 0, a limit exceeded).
    Value,
}

impl ScenarioError {
    fn new(kind: ScenarioErrorKind, message: impl Into<String>) -> Self {
        ScenarioError { kind, message: message.into() }
    }

    /// What kind of problem it is.
    pub fn kind(&self) -> ScenarioErrorKind {
        self.kind
    }
}

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ScenarioError {}

impl Expecting for ScenarioDoc {
    const EXPECTING: &'static str = "a scenario object {\"topics\", \"members\", \"steps\", ...}";
}

impl Expecting for MemberDoc {
    const EXPECTING: &'static str = "a member object {\"id\", \"assignors\", \"topics\", \"rack\", \"static_id\"}";
}

impl Expecting for StepDoc {
    const EXPECTING: &'static str = "a step object such as {\"join\": {...}} or {\"leave\": \"a\"}";
}

fn value_error(message: impl Into<String>) -> ScenarioError {
    ScenarioError::new(ScenarioErrorKind::Value, message)
}

fn shape_error(message: impl Into<String>) -> ScenarioError {
    ScenarioError::new(ScenarioErrorKind::Shape, message)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a scenario object {\"topics\", \"members\", \"steps\", ...}")]
struct ScenarioDoc {
    #[serde(rename = "description")]
    _description: Option<IgnoredAny>,
    seed: Option<u64>,
    topics: Option<std::collections::BTreeMap<String, i64>>,
    members: Option<Vec<ObjectOnly<MemberDoc>>>,
    steps: Option<Vec<ObjectOnly<StepDoc>>>,
    config: Option<ConfigDoc>,
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a member object {\"id\", \"assignors\", \"topics\", \"rack\", \"static_id\", \"protocol\"}"
)]
struct MemberDoc {
    id: String,
    assignors: Vec<String>,
    topics: Vec<String>,
    rack: Option<String>,
    static_id: Option<String>,
    protocol: Option<ProtocolDoc>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "lowercase", expecting = "a group protocol: \"classic\" or \"consumer\"")]
enum ProtocolDoc {
    Classic,
    Consumer,
}

impl From<MemberDoc> for MemberSpec {
    fn from(m: MemberDoc) -> Self {
        let protocol = match m.protocol {
            Some(ProtocolDoc::Consumer) => GroupProtocol::Consumer,
            _ => GroupProtocol::Classic,
        };
        MemberSpec {
            id: m.id,
            assignors: m.assignors,
            topics: m.topics,
            rack: m.rack,
            static_id: m.static_id,
            protocol,
        }
    }
}

/// `"x"` or `{"id": "x"}`.
struct Id(String);

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Obj {
            id: String,
        }
        #[derive(Deserialize)]
        #[serde(untagged, expecting = "a member name: \"x\" or {\"id\": \"x\"}")]
        enum Form {
            Name(String),
            Obj(Obj),
        }
        Ok(Id(match Form::deserialize(d)? {
            Form::Name(n) => n,
            Form::Obj(o) => o.id,
        }))
    }
}

/// `"t"` or `{"name": "t"}`.
struct TopicName(String);

impl<'de> Deserialize<'de> for TopicName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Obj {
            name: String,
        }
        #[derive(Deserialize)]
        #[serde(untagged, expecting = "a topic name: \"t\" or {\"name\": \"t\"}")]
        enum Form {
            Name(String),
            Obj(Obj),
        }
        Ok(TopicName(match Form::deserialize(d)? {
            Form::Name(n) => n,
            Form::Obj(o) => o.name,
        }))
    }
}

/// `5000` or `{"ms": 5000}`.
struct Ms(u64);

impl<'de> Deserialize<'de> for Ms {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Obj {
            ms: u64,
        }
        #[derive(Deserialize)]
        #[serde(untagged, expecting = "milliseconds: a non-negative integer or {\"ms\": n}")]
        enum Form {
            Number(u64),
            Obj(Obj),
        }
        Ok(Ms(match Form::deserialize(d)? {
            Form::Number(n) => n,
            Form::Obj(o) => o.ms,
        }))
    }
}

/// The `settle` key: a step (`{}`) or the flag beside another step (`true`/`false`).
enum SettleKey {
    Flag(bool),
    Step,
}

impl<'de> Deserialize<'de> for SettleKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Empty {}
        #[derive(Deserialize)]
        #[serde(untagged, expecting = "`{}` (a settle step) or a boolean (settle after this step or not)")]
        enum Form {
            Flag(bool),
            Step(Empty),
        }
        Ok(match Form::deserialize(d)? {
            Form::Flag(b) => SettleKey::Flag(b),
            Form::Step(Empty {}) => SettleKey::Step,
        })
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RestartDoc {
    id: String,
    assignors: Option<Vec<String>>,
    topics: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SubscribeDoc {
    id: String,
    topics: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateTopicDoc {
    name: String,
    partitions: i64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AddPartitionsDoc {
    topic: String,
    count: i64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DelayDoc {
    id: String,
    ms: u64,
    count: Option<u32>,
}

/// `"x"`, `{"id": "x"}` or `{"id": "x", "count": n}`.
struct LoseDoc {
    id: String,
    count: Option<u32>,
}

impl<'de> Deserialize<'de> for LoseDoc {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Obj {
            id: String,
            count: Option<u32>,
        }
        #[derive(Deserialize)]
        #[serde(untagged, expecting = "a member name \"x\" or {\"id\": \"x\", \"count\": n}")]
        enum Form {
            Name(String),
            Obj(Obj),
        }
        Ok(match Form::deserialize(d)? {
            Form::Name(id) => LoseDoc { id, count: None },
            Form::Obj(o) => LoseDoc { id: o.id, count: o.count },
        })
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StaleDoc {
    id: String,
    ms: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a step object such as {\"join\": {...}} or {\"leave\": \"a\"}")]
struct StepDoc {
    join: Option<ObjectOnly<MemberDoc>>,
    restart: Option<RestartDoc>,
    upgrade: Option<Id>,
    leave: Option<Id>,
    crash: Option<Id>,
    miss_rebalance: Option<Id>,
    subscribe: Option<SubscribeDoc>,
    create_topic: Option<CreateTopicDoc>,
    add_partitions: Option<AddPartitionsDoc>,
    delete_topic: Option<TopicName>,
    settle: Option<SettleKey>,
    wait: Option<Ms>,
    delay_responses: Option<DelayDoc>,
    lose_responses: Option<LoseDoc>,
    stale_metadata: Option<StaleDoc>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a config object of millisecond settings")]
struct ConfigDoc {
    session_timeout_ms: Option<u64>,
    rebalance_timeout_ms: Option<u64>,
    heartbeat_interval_ms: Option<u64>,
    retry_backoff_ms: Option<u64>,
    request_timeout_ms: Option<u64>,
    initial_rebalance_delay_ms: Option<u64>,
    latency_ms: Option<u64>,
    jitter_ms: Option<u64>,
    metadata_delay_ms: Option<u64>,
    restart_delay_ms: Option<u64>,
    settle_limit_ms: Option<u64>,
    record_timeline: Option<bool>,
    max_events: Option<u64>,
    migration_policy: Option<String>,
    server_assignor: Option<String>,
    broker_version: Option<String>,
}

fn duration(ms: u64, ctx: &str) -> Result<u64, ScenarioError> {
    if ms > MAX_DURATION_MS {
        return Err(value_error(format!(
            "{ctx}: {ms} ms is longer than the limit of {MAX_DURATION_MS} ms (one virtual day)"
        )));
    }
    Ok(ms)
}

/// Partition counts, checked against the running total over all topics.
struct PartitionBudget {
    total: u64,
}

impl PartitionBudget {
    fn count(&mut self, n: i64, ctx: &str) -> Result<i32, ScenarioError> {
        let n = i32::try_from(n)
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| value_error(format!("{ctx}: partition count must be 1..2^31, got {n}")))?;
        self.total += n as u64;
        if self.total > MAX_PARTITIONS {
            return Err(value_error(format!(
                "{ctx}: the scenario has more than {MAX_PARTITIONS} partitions in all, the simulator's limit"
            )));
        }
        Ok(n)
    }
}

fn step(doc: StepDoc, i: usize, budget: &mut PartitionBudget, members: &mut usize) -> Result<StepSpec, ScenarioError> {
    let ctx = format!("steps[{i}]");
    let StepDoc {
        join,
        restart,
        upgrade,
        leave,
        crash,
        miss_rebalance,
        subscribe,
        create_topic,
        add_partitions,
        delete_topic,
        settle,
        wait,
        delay_responses,
        lose_responses,
        stale_metadata,
    } = doc;
    let (settle_flag, settle_step) = match settle {
        Some(SettleKey::Flag(b)) => (Some(b), None),
        Some(SettleKey::Step) => (None, Some(())),
        None => (None, None),
    };
    let mut found: Vec<(&str, Step)> = Vec::new();
    if let Some(ObjectOnly(m)) = join {
        *members += 1;
        found.push(("join", Step::Join(m.into())));
    }
    if let Some(r) = restart {
        found.push(("restart", Step::Restart { id: r.id, assignors: r.assignors, topics: r.topics }));
    }
    if let Some(Id(id)) = upgrade {
        found.push(("upgrade", Step::Upgrade(id)));
    }
    if let Some(Id(id)) = leave {
        found.push(("leave", Step::Leave(id)));
    }
    if let Some(Id(id)) = crash {
        found.push(("crash", Step::Crash(id)));
    }
    if let Some(Id(id)) = miss_rebalance {
        found.push(("miss_rebalance", Step::MissRebalance(id)));
    }
    if let Some(s) = subscribe {
        found.push(("subscribe", Step::Subscribe { id: s.id, topics: s.topics }));
    }
    if let Some(c) = create_topic {
        let partitions = budget.count(c.partitions, &format!("{ctx}.create_topic.partitions"))?;
        found.push(("create_topic", Step::CreateTopic { name: c.name, partitions }));
    }
    if let Some(a) = add_partitions {
        let count = budget.count(a.count, &format!("{ctx}.add_partitions.count"))?;
        found.push(("add_partitions", Step::AddPartitions { topic: a.topic, count }));
    }
    if let Some(TopicName(name)) = delete_topic {
        found.push(("delete_topic", Step::DeleteTopic(name)));
    }
    if settle_step.is_some() {
        found.push(("settle", Step::Settle));
    }
    if let Some(Ms(ms)) = wait {
        found.push(("wait", Step::Wait(duration(ms, &format!("{ctx}.wait"))?)));
    }
    if let Some(d) = delay_responses {
        let ms = duration(d.ms, &format!("{ctx}.delay_responses.ms"))?;
        found.push(("delay_responses", Step::DelayResponses { id: d.id, ms, count: d.count.unwrap_or(1) }));
    }
    if let Some(l) = lose_responses {
        found.push(("lose_responses", Step::LoseResponses { id: l.id, count: l.count.unwrap_or(1) }));
    }
    if let Some(s) = stale_metadata {
        let ms = duration(s.ms, &format!("{ctx}.stale_metadata.ms"))?;
        found.push(("stale_metadata", Step::StaleMetadata { id: s.id, ms }));
    }
    let mut found = found.into_iter();
    let (first, step) = found.next().ok_or_else(|| shape_error(format!("{ctx}: empty step")))?;
    if let Some((second, _)) = found.next() {
        return Err(shape_error(format!("{ctx}: one step per object, found \"{first}\" and \"{second}\"")));
    }
    let settle = settle_flag.unwrap_or_else(|| step.settles_by_default());
    Ok(StepSpec { step, settle })
}

fn config(doc: Option<ConfigDoc>) -> Result<SimConfig, ScenarioError> {
    let mut c = SimConfig::default();
    let Some(doc) = doc else { return Ok(c) };
    let set = |target: &mut u64, value: Option<u64>, key: &str| -> Result<(), ScenarioError> {
        if let Some(v) = value {
            *target = duration(v, &format!("config.{key}"))?;
        }
        Ok(())
    };
    set(&mut c.session_timeout_ms, doc.session_timeout_ms, "session_timeout_ms")?;
    set(&mut c.rebalance_timeout_ms, doc.rebalance_timeout_ms, "rebalance_timeout_ms")?;
    set(&mut c.heartbeat_interval_ms, doc.heartbeat_interval_ms, "heartbeat_interval_ms")?;
    set(&mut c.retry_backoff_ms, doc.retry_backoff_ms, "retry_backoff_ms")?;
    set(&mut c.request_timeout_ms, doc.request_timeout_ms, "request_timeout_ms")?;
    set(&mut c.initial_rebalance_delay_ms, doc.initial_rebalance_delay_ms, "initial_rebalance_delay_ms")?;
    set(&mut c.latency_ms, doc.latency_ms, "latency_ms")?;
    set(&mut c.jitter_ms, doc.jitter_ms, "jitter_ms")?;
    set(&mut c.metadata_delay_ms, doc.metadata_delay_ms, "metadata_delay_ms")?;
    set(&mut c.restart_delay_ms, doc.restart_delay_ms, "restart_delay_ms")?;
    set(&mut c.settle_limit_ms, doc.settle_limit_ms, "settle_limit_ms")?;
    if let Some(b) = doc.record_timeline {
        c.record_timeline = b;
    }
    if let Some(n) = doc.max_events {
        if n > super::limits::MAX_EVENTS {
            return Err(value_error(format!(
                "config.max_events: {n} is above the limit of {}",
                super::limits::MAX_EVENTS
            )));
        }
        c.max_events = n;
    }
    if let Some(p) = doc.migration_policy {
        if !["bidirectional", "upgrade", "downgrade", "disabled"].contains(&p.as_str()) {
            return Err(value_error(format!(
                "config.migration_policy: {p:?} is not bidirectional, upgrade, downgrade or disabled"
            )));
        }
        c.migration_policy = p;
    }
    if let Some(a) = doc.server_assignor {
        if !["uniform", "range"].contains(&a.as_str()) {
            return Err(value_error(format!("config.server_assignor: {a:?} is not uniform or range")));
        }
        c.server_assignor = a;
    }
    if let Some(v) = doc.broker_version {
        if !["3.x", "4.x"].contains(&v.as_str()) {
            return Err(value_error(format!("config.broker_version: {v:?} is not 3.x or 4.x")));
        }
        c.broker_version = v;
    }
    if c.heartbeat_interval_ms == 0 || c.session_timeout_ms == 0 {
        return Err(value_error("config: heartbeat_interval_ms and session_timeout_ms must be positive"));
    }
    Ok(c)
}

fn serde_error(e: serde_json::Error) -> ScenarioError {
    // serde_json's messages name the key or type and the line and column; long ones are cut.
    let mut message = plain_numbers(&e.to_string());
    if message.len() > 400 {
        let cut = (0..=400).rev().find(|&i| message.is_char_boundary(i)).unwrap_or(0);
        message = format!("{}... ({} bytes)", &message[..cut], message.len());
    }
    match e.classify() {
        serde_json::error::Category::Data => shape_error(format!("scenario: {message}")),
        _ => ScenarioError::new(ScenarioErrorKind::Syntax, format!("scenario is not JSON: {message}")),
    }
}

/// Parses a scenario file (the `kcp simulate` input shape described above).
pub fn parse_scenario(text: &str) -> Result<Scenario, ScenarioError> {
    let ObjectOnly(doc) = serde_json::from_str::<ObjectOnly<ScenarioDoc>>(text).map_err(serde_error)?;
    scenario_from_doc(doc)
}

/// Reads a scenario from a JSON value (the same shape and checks as [`parse_scenario`]).
pub fn scenario_from_value(v: &Value) -> Result<Scenario, ScenarioError> {
    scenario_from_doc(ObjectOnly::<ScenarioDoc>::deserialize(v).map_err(serde_error)?.0)
}

fn scenario_from_doc(doc: ScenarioDoc) -> Result<Scenario, ScenarioError> {
    let mut budget = PartitionBudget { total: 0 };
    let mut topics = std::collections::BTreeMap::new();
    for (name, n) in doc.topics.unwrap_or_default() {
        let count = budget.count(n, &format!("topics.{name:?}"))?;
        topics.insert(name, count);
    }
    let members: Vec<MemberSpec> =
        doc.members.unwrap_or_default().into_iter().map(|ObjectOnly(m)| MemberSpec::from(m)).collect();
    let mut member_count = members.len();
    let step_docs = doc.steps.unwrap_or_default();
    if step_docs.len() > MAX_STEPS {
        return Err(value_error(format!("steps: {} steps, more than the limit of {MAX_STEPS}", step_docs.len())));
    }
    let steps = step_docs
        .into_iter()
        .enumerate()
        .map(|(i, ObjectOnly(d))| step(d, i, &mut budget, &mut member_count))
        .collect::<Result<Vec<_>, _>>()?;
    if member_count > MAX_MEMBERS {
        return Err(value_error(format!(
            "members: {member_count} members (initial and joining), more than the limit of {MAX_MEMBERS}"
        )));
    }
    Ok(Scenario { seed: doc.seed.unwrap_or(0), topics, members, steps, config: config(doc.config)? })
}

fn partitions_json(p: &[TopicPartitions]) -> Value {
    Value::Array(p.iter().map(|g| json!({"topic": g.topic, "partitions": g.partitions})).collect())
}

/// One timeline entry as JSON.
pub fn entry_json(e: &TimelineEntry) -> Value {
    let mut m = Map::new();
    m.insert("seq".into(), json!(e.seq));
    m.insert("t_ms".into(), json!(e.t_ms));
    m.insert("generation".into(), json!(e.generation));
    m.insert("event".into(), json!(e.event));
    m.insert("member".into(), json!(e.member));
    m.insert("protocol".into(), json!(e.protocol));
    m.insert("assignor".into(), json!(e.assignor));
    if !e.partitions.is_empty() || e.event == "assigned" {
        m.insert("partitions".into(), partitions_json(&e.partitions));
    }
    if let Some(d) = &e.detail {
        m.insert("detail".into(), json!(d));
    }
    m.insert("owned".into(), Value::Object(e.owned.iter().map(|(k, v)| (k.clone(), partitions_json(v))).collect()));
    m.insert("generations".into(), json!(e.generations));
    // Only once the group is a consumer group, so classic runs keep their exact shape.
    if e.group_protocol == GroupProtocol::Consumer {
        m.insert("group_protocol".into(), json!(e.group_protocol.as_str()));
        let map = |x: &std::collections::BTreeMap<String, Vec<TopicPartitions>>| {
            Value::Object(x.iter().map(|(k, v)| (k.clone(), partitions_json(v))).collect())
        };
        m.insert("pending_revocation".into(), map(&e.pending_revocation));
        m.insert("awaiting".into(), map(&e.awaiting));
    }
    Value::Object(m)
}

/// The summary as JSON.
pub fn summary_json(s: &Summary) -> Value {
    let mut v = json!({
        "rebalances": s.rebalances,
        "partitions_moved": s.partitions_moved,
        "converged": s.converged,
        "violations": s.violations,
        "unconverged": s.unconverged,
        "fatal": s.fatal.iter().map(|(m, e)| json!({"member": m, "error": e})).collect::<Vec<_>>(),
        "duration_ms": s.duration_ms,
        "final_generation": s.final_generation,
        "events": s.events,
    });
    if !s.conversions.is_empty() {
        v["group_protocol"] = json!(s.group_protocol.as_str());
        v["conversions"] = json!(s.conversions);
    }
    v
}

/// The output document: `{"timeline": [...], "summary": {...}}` (a streaming writer of the same
/// document is `kcp simulate`'s: see [`crate::sim::run_with`]).
pub fn outcome_json(o: &Outcome) -> Value {
    json!({
        "timeline": o.timeline.iter().map(entry_json).collect::<Vec<_>>(),
        "summary": summary_json(&o.summary),
    })
}

fn member_json(m: &MemberSpec) -> Value {
    let mut v = json!({"id": m.id, "assignors": m.assignors, "topics": m.topics});
    if let Some(r) = &m.rack {
        v["rack"] = json!(r);
    }
    if let Some(s) = &m.static_id {
        v["static_id"] = json!(s);
    }
    if m.protocol != GroupProtocol::Classic {
        v["protocol"] = json!(m.protocol.as_str());
    }
    v
}

fn step_json(s: &StepSpec) -> Value {
    let mut v = match &s.step {
        Step::Join(m) => json!({"join": member_json(m)}),
        Step::Restart { id, assignors, topics } => {
            let mut r = json!({"id": id});
            if let Some(a) = assignors {
                r["assignors"] = json!(a);
            }
            if let Some(t) = topics {
                r["topics"] = json!(t);
            }
            json!({"restart": r})
        }
        Step::Upgrade(id) => json!({"upgrade": id}),
        Step::Leave(id) => json!({"leave": id}),
        Step::Crash(id) => json!({"crash": id}),
        Step::MissRebalance(id) => json!({"miss_rebalance": id}),
        Step::Subscribe { id, topics } => json!({"subscribe": {"id": id, "topics": topics}}),
        Step::CreateTopic { name, partitions } => json!({"create_topic": {"name": name, "partitions": partitions}}),
        Step::AddPartitions { topic, count } => json!({"add_partitions": {"topic": topic, "count": count}}),
        Step::DeleteTopic(name) => json!({"delete_topic": name}),
        Step::Settle => json!({"settle": {}}),
        Step::Wait(ms) => json!({"wait": ms}),
        Step::DelayResponses { id, ms, count } => json!({"delay_responses": {"id": id, "ms": ms, "count": count}}),
        Step::LoseResponses { id, count } => json!({"lose_responses": {"id": id, "count": count}}),
        Step::StaleMetadata { id, ms } => json!({"stale_metadata": {"id": id, "ms": ms}}),
    };
    // A settle step has no flag beside it; others carry it only when it differs from the default.
    if !matches!(s.step, Step::Settle) && s.settle != s.step.settles_by_default() {
        v["settle"] = json!(s.settle);
    }
    v
}

/// A scenario as a scenario file ([`parse_scenario`] reads it back to an equal [`Scenario`]),
/// with an optional `description`. Every config key is written, so the file shows the
/// timeouts it runs with.
///
/// ```
/// use kafka_consumer_protocol::sim::{json, MemberSpec, Scenario, Step};
/// let mut s = Scenario::new(3, [("orders", 4)]);
/// s.members.push(MemberSpec::new("a", ["cooperative-sticky"], ["orders"]));
/// s.push(Step::Upgrade("a".into()));
/// let v = json::scenario_json(&s, Some("one member upgraded"));
/// assert_eq!(v["steps"][0]["upgrade"], "a");
/// assert_eq!(json::scenario_from_value(&v).unwrap(), s);
/// ```
pub fn scenario_json(s: &Scenario, description: Option<&str>) -> Value {
    let c = &s.config;
    let mut v = Map::new();
    if let Some(d) = description {
        v.insert("description".into(), json!(d));
    }
    v.insert("seed".into(), json!(s.seed));
    v.insert("topics".into(), json!(s.topics));
    v.insert("members".into(), Value::Array(s.members.iter().map(member_json).collect()));
    v.insert(
        "config".into(),
        json!({
            "session_timeout_ms": c.session_timeout_ms,
            "rebalance_timeout_ms": c.rebalance_timeout_ms,
            "heartbeat_interval_ms": c.heartbeat_interval_ms,
            "retry_backoff_ms": c.retry_backoff_ms,
            "request_timeout_ms": c.request_timeout_ms,
            "initial_rebalance_delay_ms": c.initial_rebalance_delay_ms,
            "latency_ms": c.latency_ms,
            "jitter_ms": c.jitter_ms,
            "metadata_delay_ms": c.metadata_delay_ms,
            "restart_delay_ms": c.restart_delay_ms,
            "settle_limit_ms": c.settle_limit_ms,
            "record_timeline": c.record_timeline,
            "max_events": c.max_events,
            "migration_policy": c.migration_policy,
            "server_assignor": c.server_assignor,
            "broker_version": c.broker_version,
        }),
    );
    v.insert("steps".into(), Value::Array(s.steps.iter().map(step_json).collect()));
    Value::Object(v)
}
