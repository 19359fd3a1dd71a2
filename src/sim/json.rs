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

use serde_json::{json, Map, Value};

use super::{MemberSpec, Outcome, Scenario, SimConfig, Step, StepSpec};
use crate::TopicPartitions;

fn field<'a>(v: &'a Value, key: &str, ctx: &str) -> Result<&'a Value, String> {
    v.get(key).ok_or_else(|| format!("{ctx}: missing \"{key}\""))
}

fn string(v: &Value, ctx: &str) -> Result<String, String> {
    v.as_str().map(str::to_string).ok_or_else(|| format!("{ctx}: expected a string, got {v}"))
}

fn strings(v: &Value, ctx: &str) -> Result<Vec<String>, String> {
    v.as_array().ok_or_else(|| format!("{ctx}: expected an array of strings"))?.iter().map(|x| string(x, ctx)).collect()
}

fn int(v: &Value, ctx: &str) -> Result<i64, String> {
    v.as_i64().ok_or_else(|| format!("{ctx}: expected an integer, got {v}"))
}

fn opt_string(v: Option<&Value>, ctx: &str) -> Result<Option<String>, String> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(x) => string(x, ctx).map(Some),
    }
}

fn member(v: &Value, ctx: &str) -> Result<MemberSpec, String> {
    Ok(MemberSpec {
        id: string(field(v, "id", ctx)?, ctx)?,
        assignors: strings(field(v, "assignors", ctx)?, ctx)?,
        topics: strings(field(v, "topics", ctx)?, ctx)?,
        rack: opt_string(v.get("rack"), ctx)?,
        static_id: opt_string(v.get("static_id"), ctx)?,
    })
}

/// `"x"` or `{"id": "x", ...}`.
fn id_of(v: &Value, ctx: &str) -> Result<String, String> {
    match v {
        Value::String(s) => Ok(s.clone()),
        _ => string(field(v, "id", ctx)?, ctx),
    }
}

fn count(v: &Value, key: &str, default: i64, ctx: &str) -> Result<i64, String> {
    match v.get(key) {
        None => Ok(default),
        Some(x) => int(x, ctx),
    }
}

fn positive(n: i64, ctx: &str) -> Result<i32, String> {
    i32::try_from(n).ok().filter(|n| *n > 0).ok_or_else(|| format!("{ctx}: partition count must be 1..2^31"))
}

fn step(v: &Value, i: usize) -> Result<StepSpec, String> {
    let ctx = format!("steps[{i}]");
    let obj = v.as_object().ok_or_else(|| format!("{ctx}: expected an object"))?;
    let settle_flag = match obj.get("settle") {
        Some(Value::Bool(b)) => Some(*b),
        _ => None,
    };
    let mut keys = obj.keys().filter(|k| !(k.as_str() == "settle" && settle_flag.is_some()));
    let key = keys.next().ok_or_else(|| format!("{ctx}: empty step"))?.clone();
    if let Some(extra) = keys.next() {
        return Err(format!("{ctx}: one step per object, found \"{key}\" and \"{extra}\""));
    }
    let a = &obj[&key];
    let ms = |a: &Value| -> Result<u64, String> {
        let n = match a {
            Value::Number(_) => int(a, &ctx)?,
            _ => int(field(a, "ms", &ctx)?, &ctx)?,
        };
        u64::try_from(n).map_err(|_| format!("{ctx}: negative time"))
    };
    let step = match key.as_str() {
        "join" => Step::Join(member(a, &ctx)?),
        "restart" => Step::Restart {
            id: id_of(a, &ctx)?,
            assignors: a.get("assignors").map(|x| strings(x, &ctx)).transpose()?,
            topics: a.get("topics").map(|x| strings(x, &ctx)).transpose()?,
        },
        "leave" => Step::Leave(id_of(a, &ctx)?),
        "crash" => Step::Crash(id_of(a, &ctx)?),
        "miss_rebalance" => Step::MissRebalance(id_of(a, &ctx)?),
        "subscribe" => Step::Subscribe { id: id_of(a, &ctx)?, topics: strings(field(a, "topics", &ctx)?, &ctx)? },
        "create_topic" => Step::CreateTopic {
            name: string(field(a, "name", &ctx)?, &ctx)?,
            partitions: positive(int(field(a, "partitions", &ctx)?, &ctx)?, &ctx)?,
        },
        "add_partitions" => Step::AddPartitions {
            topic: string(field(a, "topic", &ctx)?, &ctx)?,
            count: positive(int(field(a, "count", &ctx)?, &ctx)?, &ctx)?,
        },
        "delete_topic" => Step::DeleteTopic(match a {
            Value::String(s) => s.clone(),
            _ => string(field(a, "name", &ctx)?, &ctx)?,
        }),
        "settle" => Step::Settle,
        "wait" => Step::Wait(ms(a)?),
        "delay_responses" => Step::DelayResponses {
            id: id_of(a, &ctx)?,
            ms: ms(a)?,
            count: u32::try_from(count(a, "count", 1, &ctx)?).map_err(|_| format!("{ctx}: bad count"))?,
        },
        "lose_responses" => Step::LoseResponses {
            id: id_of(a, &ctx)?,
            count: u32::try_from(count(a, "count", 1, &ctx)?).map_err(|_| format!("{ctx}: bad count"))?,
        },
        "stale_metadata" => Step::StaleMetadata { id: id_of(a, &ctx)?, ms: ms(a)? },
        other => return Err(format!("{ctx}: unknown step \"{other}\"")),
    };
    let settle = settle_flag.unwrap_or_else(|| step.settles_by_default());
    Ok(StepSpec { step, settle })
}

fn config(v: Option<&Value>) -> Result<SimConfig, String> {
    let mut c = SimConfig::default();
    let Some(v) = v else { return Ok(c) };
    let obj = v.as_object().ok_or("config: expected an object")?;
    for (k, x) in obj {
        let ctx = format!("config.{k}");
        if k == "record_timeline" {
            c.record_timeline = x.as_bool().ok_or(format!("{ctx}: expected a boolean"))?;
            continue;
        }
        let n = u64::try_from(int(x, &ctx)?).map_err(|_| format!("{ctx}: negative"))?;
        match k.as_str() {
            "session_timeout_ms" => c.session_timeout_ms = n,
            "rebalance_timeout_ms" => c.rebalance_timeout_ms = n,
            "heartbeat_interval_ms" => c.heartbeat_interval_ms = n,
            "retry_backoff_ms" => c.retry_backoff_ms = n,
            "request_timeout_ms" => c.request_timeout_ms = n,
            "initial_rebalance_delay_ms" => c.initial_rebalance_delay_ms = n,
            "latency_ms" => c.latency_ms = n,
            "jitter_ms" => c.jitter_ms = n,
            "metadata_delay_ms" => c.metadata_delay_ms = n,
            "restart_delay_ms" => c.restart_delay_ms = n,
            "settle_limit_ms" => c.settle_limit_ms = n,
            _ => return Err(format!("{ctx}: unknown setting")),
        }
    }
    if c.heartbeat_interval_ms == 0 || c.session_timeout_ms == 0 {
        return Err("config: heartbeat_interval_ms and session_timeout_ms must be positive".into());
    }
    Ok(c)
}

/// Parses a scenario file (the `kcp simulate` input shape).
pub fn parse_scenario(text: &str) -> Result<Scenario, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("scenario is not JSON: {e}"))?;
    scenario_from_value(&v)
}

/// Reads a scenario from a JSON value.
pub fn scenario_from_value(v: &Value) -> Result<Scenario, String> {
    let seed = match v.get("seed") {
        None => 0,
        Some(x) => x.as_u64().ok_or("seed: expected a non-negative integer")?,
    };
    let mut topics = std::collections::BTreeMap::new();
    if let Some(t) = v.get("topics") {
        for (name, n) in t.as_object().ok_or("topics: expected an object")? {
            topics.insert(name.clone(), positive(int(n, &format!("topics.{name}"))?, &format!("topics.{name}"))?);
        }
    }
    let members = match v.get("members") {
        None => Vec::new(),
        Some(m) => m
            .as_array()
            .ok_or("members: expected an array")?
            .iter()
            .enumerate()
            .map(|(i, x)| member(x, &format!("members[{i}]")))
            .collect::<Result<_, _>>()?,
    };
    let steps = match v.get("steps") {
        None => Vec::new(),
        Some(s) => s
            .as_array()
            .ok_or("steps: expected an array")?
            .iter()
            .enumerate()
            .map(|(i, x)| step(x, i))
            .collect::<Result<_, _>>()?,
    };
    Ok(Scenario { seed, topics, members, steps, config: config(v.get("config"))? })
}

fn partitions_json(p: &[TopicPartitions]) -> Value {
    Value::Array(p.iter().map(|g| json!({"topic": g.topic, "partitions": g.partitions})).collect())
}

/// The output document: `{"timeline": [...], "summary": {...}}`.
pub fn outcome_json(o: &Outcome) -> Value {
    let timeline: Vec<Value> = o
        .timeline
        .iter()
        .map(|e| {
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
            m.insert(
                "owned".into(),
                Value::Object(e.owned.iter().map(|(k, v)| (k.clone(), partitions_json(v))).collect()),
            );
            m.insert("generations".into(), json!(e.generations));
            Value::Object(m)
        })
        .collect();
    let s = &o.summary;
    json!({
        "timeline": timeline,
        "summary": {
            "rebalances": s.rebalances,
            "partitions_moved": s.partitions_moved,
            "converged": s.converged,
            "violations": s.violations,
            "unconverged": s.unconverged,
            "fatal": s.fatal.iter().map(|(m, e)| json!({"member": m, "error": e})).collect::<Vec<_>>(),
            "duration_ms": s.duration_ms,
            "final_generation": s.final_generation,
            "events": s.events,
        }
    })
}
