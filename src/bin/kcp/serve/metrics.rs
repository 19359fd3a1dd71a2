//! The OpenMetrics text of the latest snapshots, written with `prometheus-client` once per
//! collection (a scrape copies it; it never waits on Kafka).
//!
//! The metric names and labels are a contract (docs/cli.md, "kcp serve"): only ever extended.
//! Series come from the snapshots alone and are written afresh each time, so a group, member or
//! partition that is gone has no series at the next collection. A partition never committed has
//! no lag series. Series are written in a fixed order (cluster, group, topic, partition), so the
//! same snapshots give the same bytes.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::sync::Arc;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelValue, EncodeMetric, LabelValueEncoder};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::{Registry, Unit};

use super::state::Snapshot;
use super::Granularity;

/// A label value, escaped as the exposition format wants (`\`, `"` and line feeds), which
/// `prometheus-client` leaves to the caller: a group named `a"} 1` must stay one label value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Value<'a>(Cow<'a, str>);

impl EncodeLabelValue for Value<'_> {
    fn encode(&self, encoder: &mut LabelValueEncoder) -> Result<(), std::fmt::Error> {
        for c in self.0.chars() {
            match c {
                '\\' => encoder.write_str("\\\\")?,
                '"' => encoder.write_str("\\\"")?,
                '\n' => encoder.write_str("\\n")?,
                c => encoder.write_char(c)?,
            }
        }
        Ok(())
    }
}

type Labels<'a> = Vec<(&'static str, Value<'a>)>;

/// A borrowed label value.
fn v(s: &str) -> Value<'_> {
    Value(Cow::Borrowed(s))
}

/// A partition number as a label value.
fn number<'a>(partition: i32) -> Value<'a> {
    Value(Cow::Owned(partition.to_string()))
}

/// One metric family: its series, in order.
struct Family<'a> {
    name: &'static str,
    help: &'static str,
    unit: Option<Unit>,
    kind: MetricType,
    series: Vec<(Labels<'a>, f64)>,
}

/// The snapshots of every cluster, as one collector.
#[derive(Debug)]
struct Snapshots {
    clusters: Vec<(String, Arc<Snapshot>)>,
    granularity: Granularity,
}

fn gauge<'a>(name: &'static str, help: &'static str) -> Family<'a> {
    Family { name, help, unit: None, kind: MetricType::Gauge, series: Vec::new() }
}

fn seconds<'a>(name: &'static str, help: &'static str) -> Family<'a> {
    Family { name, help, unit: Some(Unit::Seconds), kind: MetricType::Gauge, series: Vec::new() }
}

fn counter<'a>(name: &'static str, help: &'static str) -> Family<'a> {
    Family { name, help, unit: None, kind: MetricType::Counter, series: Vec::new() }
}

fn write_family(encoder: &mut DescriptorEncoder, family: &Family<'_>) -> Result<(), std::fmt::Error> {
    let mut metric = encoder.encode_descriptor(family.name, family.help, family.unit.as_ref(), family.kind)?;
    for (labels, value) in &family.series {
        let series = metric.encode_family(labels)?;
        match family.kind {
            MetricType::Counter => ConstCounter::new(*value).encode(series)?,
            _ => ConstGauge::new(*value).encode(series)?,
        }
    }
    Ok(())
}

impl Collector for Snapshots {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let mut up = gauge("kcp_up", "1 when the last collection of the cluster succeeded, 0 otherwise.");
        let mut duration = seconds("kcp_collect_duration", "How long the last collection took.");
        let mut errors = counter("kcp_collect_errors", "Errors met while collecting, by error kind.");
        let mut taken =
            seconds("kcp_snapshot_timestamp", "When the snapshot served was taken (Unix time; 0 before the first).");
        let mut info = gauge(
            "kcp_consumergroup_info",
            "1 for every group: its state, protocol type, assignor (protocol) and rebalance protocol (group_protocol: classic or consumer).",
        );
        let mut members = gauge("kcp_consumergroup_members", "Members of the group.");
        let mut status = gauge(
            "kcp_consumergroup_status",
            "The worst partition lag status, Burrow's codes: 0 NOTFOUND, 1 OK, 2 WARN (and UNCOMMITTED), 3 ERR, 4 STOP, 5 STALL, 6 REWIND.",
        );
        let mut group_lag = gauge("kcp_consumergroup_lag", "The group's lag in messages: the sum over its partitions.");
        let mut group_lag_s = seconds(
            "kcp_consumergroup_lag",
            "The group's lag in seconds: the largest over its partitions (the age of the oldest record not consumed).",
        );
        let mut pending = gauge(
            "kcp_consumergroup_pending_partitions",
            "Partitions in a pending hand-over (owned by one member, assigned to another).",
        );
        let mut rebalances = counter(
            "kcp_consumergroup_rebalances",
            "Rebalances (generation or epoch changes) seen since kcp serve first saw the group.",
        );
        let mut member_lag = gauge("kcp_consumergroup_member_lag", "Lag in messages of the partitions a member owns.");
        let mut topic_lag = gauge("kcp_consumergroup_topic_lag", "Lag in messages per topic (--granularity topic).");
        let mut topic_lag_s = seconds(
            "kcp_consumergroup_topic_lag",
            "The largest partition lag in seconds per topic (--granularity topic).",
        );
        let mut part_lag = gauge(
            "kcp_consumergroup_partition_lag",
            "Lag in messages (log end minus committed offset); no series for a partition never committed.",
        );
        let mut part_lag_s = seconds(
            "kcp_consumergroup_partition_lag",
            "Lag in seconds: now minus the timestamp of the record at the committed offset (method fetch), or interpolated from the log end's history (method interpolation); 0 with lag 0 (method none).",
        );
        let mut committed = gauge("kcp_consumergroup_partition_committed_offset", "The group's committed offset.");
        let mut log_end = gauge(
            "kcp_partition_log_end_offset",
            "The partition's log end offset (high watermark, or last stable offset with --isolation read-committed).",
        );
        let mut log_start = gauge("kcp_partition_log_start_offset", "The partition's log start offset.");

        let per_partition = self.granularity == Granularity::Partition;
        for (name, snap) in &self.clusters {
            let cluster = || ("cluster_name", v(name));
            up.series.push((vec![cluster()], if snap.up { 1.0 } else { 0.0 }));
            duration.series.push((vec![cluster()], snap.duration.as_secs_f64()));
            taken.series.push((vec![cluster()], snap.taken_at_ms as f64 / 1000.0));
            for (kind, n) in &snap.errors_total {
                errors.series.push((vec![cluster(), ("kind", v(kind))], *n as f64));
            }
            for (id, g) in &snap.groups {
                let Some(described) = g.described() else { continue };
                let group = || ("group", v(id));
                info.series.push((
                    vec![
                        cluster(),
                        group(),
                        ("state", v(described.state())),
                        ("protocol_type", v(described.protocol_type())),
                        ("protocol", v(described.assignor())),
                        ("group_protocol", v(described.group_protocol())),
                    ],
                    1.0,
                ));
                members.series.push((vec![cluster(), group()], described.member_count() as f64));
                status.series.push((vec![cluster(), group()], f64::from(burrow_code(g.status))));
                group_lag.series.push((vec![cluster(), group()], g.report.lag.total as f64));
                if let Some(s) = g.lag_seconds {
                    group_lag_s.series.push((vec![cluster(), group()], s));
                }
                pending.series.push((vec![cluster(), group()], g.pending as f64));
                rebalances.series.push((vec![cluster(), group()], g.rebalances as f64));
                if self.granularity != Granularity::Group {
                    for (member, info) in &g.members {
                        let lag = g.report.lag.by_member.get(member).copied().unwrap_or(0);
                        member_lag.series.push((
                            vec![cluster(), group(), ("member_id", v(member)), ("client_id", v(&info.client_id))],
                            lag as f64,
                        ));
                    }
                }
                match self.granularity {
                    Granularity::Partition => {
                        for (o, p) in g.report.offsets.iter().zip(&g.partitions) {
                            let Some(offset) = o.committed_offset else { continue };
                            let labels =
                                || vec![cluster(), group(), ("topic", v(&o.topic)), ("partition", number(o.partition))];
                            committed.series.push((labels(), offset as f64));
                            if let Some(lag) = o.lag {
                                part_lag.series.push((labels(), lag as f64));
                            }
                            if let Some((s, method)) = p.lag_seconds {
                                let mut l = labels();
                                l.push(("method", v(method.as_str())));
                                part_lag_s.series.push((l, s));
                            }
                        }
                    }
                    Granularity::Topic => {
                        let mut by_topic: std::collections::BTreeMap<&str, Option<f64>> = Default::default();
                        for (o, p) in g.report.offsets.iter().zip(&g.partitions) {
                            let entry = by_topic.entry(&o.topic).or_default();
                            if let Some((s, _)) = p.lag_seconds {
                                *entry = Some(entry.map_or(s, |m| m.max(s)));
                            }
                        }
                        for (topic, max) in by_topic {
                            let Some(&lag) = g.report.lag.by_topic.get(topic) else { continue };
                            topic_lag.series.push((vec![cluster(), group(), ("topic", v(topic))], lag as f64));
                            if let Some(s) = max {
                                topic_lag_s.series.push((vec![cluster(), group(), ("topic", v(topic))], s));
                            }
                        }
                    }
                    Granularity::Group => {}
                }
            }
            if per_partition {
                for ((topic, partition), (start, end)) in &snap.partitions {
                    let labels = vec![cluster(), ("topic", v(topic)), ("partition", number(*partition))];
                    if let Some(end) = end {
                        log_end.series.push((labels.clone(), *end as f64));
                    }
                    if let Some(start) = start {
                        log_start.series.push((labels, *start as f64));
                    }
                }
            }
        }
        for family in [
            &up,
            &duration,
            &errors,
            &taken,
            &info,
            &members,
            &status,
            &group_lag,
            &group_lag_s,
            &pending,
            &rebalances,
            &member_lag,
            &topic_lag,
            &topic_lag_s,
            &part_lag,
            &part_lag_s,
            &committed,
            &log_end,
            &log_start,
        ] {
            // A family without series is still described (its HELP and TYPE), as
            // prometheus-client's own families are.
            write_family(&mut encoder, family)?;
        }
        Ok(())
    }
}

/// Burrow's numeric status codes. UNCOMMITTED (a member owns a partition it never committed
/// while records wait), which Burrow does not have, counts as WARN.
pub(crate) fn burrow_code(status: kafka_consumer_protocol::inspect::lag::LagStatus) -> u8 {
    use kafka_consumer_protocol::inspect::lag::LagStatus;
    match status {
        LagStatus::Ok => 1,
        LagStatus::Uncommitted => 2,
        LagStatus::Warn => 2,
        LagStatus::Err => 3,
        LagStatus::Stop => 4,
        LagStatus::Stall => 5,
        LagStatus::Rewind => 6,
    }
}

/// The OpenMetrics text of `clusters`' snapshots (ends with `# EOF`).
pub(crate) fn render(clusters: &[(&str, Arc<Snapshot>)], granularity: Granularity) -> String {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(Snapshots {
        clusters: clusters.iter().map(|(n, s)| ((*n).to_owned(), s.clone())).collect(),
        granularity,
    }));
    let mut text = String::new();
    if prometheus_client::encoding::text::encode(&mut text, &registry).is_err() {
        text.clear();
        let _ = writeln!(text, "# EOF");
    }
    text
}
