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

use kafka_consumer_protocol::client::collect::DescribedGroup;
use kafka_consumer_protocol::inspect::offsets::PartitionOffsets as OffsetRow;

use super::state::{GroupState, PartitionState, Snapshot};
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

/// The snapshots of every cluster, as one collector.
#[derive(Debug)]
struct Snapshots {
    clusters: Vec<(String, Arc<Snapshot>)>,
    granularity: Granularity,
}

/// Writes one metric family: its descriptor, then each series `series` emits, straight into the
/// text. Nothing is gathered first: at 10,000 groups and 100,000 partitions the 600,000 series'
/// label vectors, held until the end, were larger than the text itself.
fn family(
    encoder: &mut DescriptorEncoder,
    (name, help, unit, kind): (&str, &str, Option<Unit>, MetricType),
    series: impl FnOnce(&mut dyn FnMut(&Labels<'_>, f64) -> Result<(), std::fmt::Error>) -> Result<(), std::fmt::Error>,
) -> Result<(), std::fmt::Error> {
    // A family without series is still described (its HELP and TYPE), as prometheus-client's
    // own families are.
    let mut metric = encoder.encode_descriptor(name, help, unit.as_ref(), kind)?;
    let mut emit = |labels: &Labels<'_>, value: f64| {
        let series = metric.encode_family(labels)?;
        match kind {
            MetricType::Counter => ConstCounter::new(value).encode(series),
            _ => ConstGauge::new(value).encode(series),
        }
    };
    series(&mut emit)
}

fn cluster(name: &str) -> (&'static str, Value<'_>) {
    ("cluster_name", v(name))
}

fn group(id: &str) -> (&'static str, Value<'_>) {
    ("group", v(id))
}

/// The labels of a group's partition.
fn labels<'a>(name: &'a str, id: &'a str, o: &'a OffsetRow) -> Labels<'a> {
    vec![cluster(name), group(id), ("topic", v(&o.topic)), ("partition", number(o.partition))]
}

/// A group's lag in seconds per topic: the largest of its partitions'.
fn by_topic(g: &GroupState) -> std::collections::BTreeMap<&str, Option<f64>> {
    let mut by_topic: std::collections::BTreeMap<&str, Option<f64>> = Default::default();
    for (o, p) in g.report.offsets.iter().zip(&g.partitions) {
        let entry = by_topic.entry(o.topic.as_str()).or_default();
        if let Some((s, _)) = p.lag_seconds {
            *entry = Some(entry.map_or(s, |m| m.max(s)));
        }
    }
    by_topic
}

/// Called with each committed partition of each group: cluster, group, row, state, offset.
type PartitionSeries<'f> = dyn FnMut(&str, &str, &OffsetRow, &PartitionState, i64) -> Result<(), std::fmt::Error> + 'f;

/// Called with each partition's labels, log start and log end.
type LogSeries<'f> = dyn FnMut(&Labels<'_>, Option<i64>, Option<i64>) -> Result<(), std::fmt::Error> + 'f;

type Spec<'a> = (&'a str, &'a str, Option<Unit>, MetricType);

fn gauge<'a>(name: &'a str, help: &'a str) -> Spec<'a> {
    (name, help, None, MetricType::Gauge)
}

fn seconds<'a>(name: &'a str, help: &'a str) -> Spec<'a> {
    (name, help, Some(Unit::Seconds), MetricType::Gauge)
}

fn counter<'a>(name: &'a str, help: &'a str) -> Spec<'a> {
    (name, help, None, MetricType::Counter)
}

impl Snapshots {
    /// Calls `each` with every described group of every cluster, in order (cluster, group id).
    fn groups<'s>(
        &'s self,
        mut each: impl FnMut(&'s str, &'s str, &'s GroupState, &'s DescribedGroup) -> Result<(), std::fmt::Error>,
    ) -> Result<(), std::fmt::Error> {
        for (name, snap) in &self.clusters {
            for (id, g) in &snap.groups {
                if let Some(described) = g.described() {
                    each(name, id, g, described)?;
                }
            }
        }
        Ok(())
    }
}

impl Collector for Snapshots {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let e = &mut encoder;
        family(e, gauge("kcp_up", "1 when the last collection of the cluster succeeded, 0 otherwise."), |emit| {
            self.clusters
                .iter()
                .try_for_each(|(name, snap)| emit(&vec![cluster(name)], if snap.up { 1.0 } else { 0.0 }))
        })?;
        family(e, seconds("kcp_collect_duration", "How long the last collection took."), |emit| {
            self.clusters.iter().try_for_each(|(name, snap)| emit(&vec![cluster(name)], snap.duration.as_secs_f64()))
        })?;
        family(e, counter("kcp_collect_errors", "Errors met while collecting, by error kind."), |emit| {
            for (name, snap) in &self.clusters {
                for (kind, n) in &snap.errors_total {
                    emit(&vec![cluster(name), ("kind", v(kind))], *n as f64)?;
                }
            }
            Ok(())
        })?;
        family(
            e,
            seconds("kcp_snapshot_timestamp", "When the snapshot served was taken (Unix time; 0 before the first)."),
            |emit| {
                self.clusters
                    .iter()
                    .try_for_each(|(name, snap)| emit(&vec![cluster(name)], snap.taken_at_ms as f64 / 1000.0))
            },
        )?;
        family(
            e,
            gauge(
                "kcp_consumergroup_info",
                "1 for every group: its state, protocol type, assignor (protocol) and rebalance protocol (group_protocol: classic or consumer).",
            ),
            |emit| {
                self.groups(|name, id, _, described| {
                    let labels = vec![
                        cluster(name),
                        group(id),
                        ("state", v(described.state())),
                        ("protocol_type", v(described.protocol_type())),
                        ("protocol", v(described.assignor())),
                        ("group_protocol", v(described.group_protocol())),
                    ];
                    emit(&labels, 1.0)
                })
            },
        )?;
        family(e, gauge("kcp_consumergroup_members", "Members of the group."), |emit| {
            self.groups(|name, id, _, described| emit(&vec![cluster(name), group(id)], described.member_count() as f64))
        })?;
        family(
            e,
            gauge(
                "kcp_consumergroup_status",
                "The worst partition lag status, Burrow's codes: 0 NOTFOUND, 1 OK, 2 WARN (and UNCOMMITTED), 3 ERR, 4 STOP, 5 STALL, 6 REWIND.",
            ),
            |emit| self.groups(|name, id, g, _| emit(&vec![cluster(name), group(id)], f64::from(burrow_code(g.status)))),
        )?;
        family(
            e,
            gauge("kcp_consumergroup_lag", "The group's lag in messages: the sum over its partitions."),
            |emit| self.groups(|name, id, g, _| emit(&vec![cluster(name), group(id)], g.report.lag.total as f64)),
        )?;
        family(
            e,
            seconds(
                "kcp_consumergroup_lag",
                "The group's lag in seconds: the largest over its partitions (the age of the oldest record not consumed).",
            ),
            |emit| {
                self.groups(|name, id, g, _| match g.lag_seconds {
                    Some(s) => emit(&vec![cluster(name), group(id)], s),
                    None => Ok(()),
                })
            },
        )?;
        family(
            e,
            gauge(
                "kcp_consumergroup_pending_partitions",
                "Partitions in a pending hand-over (owned by one member, assigned to another).",
            ),
            |emit| self.groups(|name, id, g, _| emit(&vec![cluster(name), group(id)], g.pending as f64)),
        )?;
        family(
            e,
            counter(
                "kcp_consumergroup_rebalances",
                "Rebalances (generation or epoch changes) seen since kcp serve first saw the group.",
            ),
            |emit| self.groups(|name, id, g, _| emit(&vec![cluster(name), group(id)], g.rebalances as f64)),
        )?;
        family(e, gauge("kcp_consumergroup_member_lag", "Lag in messages of the partitions a member owns."), |emit| {
            if self.granularity == Granularity::Group {
                return Ok(());
            }
            self.groups(|name, id, g, _| {
                for (member, info) in &g.members {
                    let lag = g.report.lag.by_member.get(member).copied().unwrap_or(0);
                    let labels =
                        vec![cluster(name), group(id), ("member_id", v(member)), ("client_id", v(&info.client_id))];
                    emit(&labels, lag as f64)?;
                }
                Ok(())
            })
        })?;
        // Per topic (--granularity topic): the lag sum and the largest lag in seconds.
        let per_topic = self.granularity == Granularity::Topic;
        family(e, gauge("kcp_consumergroup_topic_lag", "Lag in messages per topic (--granularity topic)."), |emit| {
            if !per_topic {
                return Ok(());
            }
            self.groups(|name, id, g, _| {
                for (topic, _) in by_topic(g) {
                    let Some(&lag) = g.report.lag.by_topic.get(topic) else { continue };
                    emit(&vec![cluster(name), group(id), ("topic", v(topic))], lag as f64)?;
                }
                Ok(())
            })
        })?;
        family(
            e,
            seconds(
                "kcp_consumergroup_topic_lag",
                "The largest partition lag in seconds per topic (--granularity topic).",
            ),
            |emit| {
                if !per_topic {
                    return Ok(());
                }
                self.groups(|name, id, g, _| {
                    for (topic, max) in by_topic(g) {
                        let (true, Some(s)) = (g.report.lag.by_topic.contains_key(topic), max) else { continue };
                        emit(&vec![cluster(name), group(id), ("topic", v(topic))], s)?;
                    }
                    Ok(())
                })
            },
        )?;
        let per_partition = self.granularity == Granularity::Partition;
        // Every committed partition of every group (--granularity partition).
        let partitions = |each: &mut PartitionSeries<'_>| -> Result<(), std::fmt::Error> {
            if !per_partition {
                return Ok(());
            }
            self.groups(|name, id, g, _| {
                for (o, p) in g.report.offsets.iter().zip(&g.partitions) {
                    let Some(offset) = o.committed_offset else { continue };
                    each(name, id, o, p, offset)?;
                }
                Ok(())
            })
        };
        family(
            e,
            gauge(
                "kcp_consumergroup_partition_lag",
                "Lag in messages (log end minus committed offset); no series for a partition never committed.",
            ),
            |emit| {
                partitions(&mut |name, id, o, _, _| match o.lag {
                    Some(lag) => emit(&labels(name, id, o), lag as f64),
                    None => Ok(()),
                })
            },
        )?;
        family(
            e,
            seconds(
                "kcp_consumergroup_partition_lag",
                "Lag in seconds: now minus the timestamp of the record at the committed offset (method fetch), or interpolated from the log end's history (method interpolation); 0 with lag 0 (method none).",
            ),
            |emit| {
                partitions(&mut |name, id, o, p, _| match p.lag_seconds {
                    Some((s, method)) => {
                        let mut l = labels(name, id, o);
                        l.push(("method", v(method.as_str())));
                        emit(&l, s)
                    }
                    None => Ok(()),
                })
            },
        )?;
        family(e, gauge("kcp_consumergroup_partition_committed_offset", "The group's committed offset."), |emit| {
            partitions(&mut |name, id, o, _, offset| emit(&labels(name, id, o), offset as f64))
        })?;
        // The log ends and starts of every partition of the groups' topics.
        let logs = |each: &mut LogSeries<'_>| {
            if !per_partition {
                return Ok(());
            }
            for (name, snap) in &self.clusters {
                for ((topic, partition), (start, end)) in &snap.partitions {
                    each(&vec![cluster(name), ("topic", v(topic)), ("partition", number(*partition))], *start, *end)?;
                }
            }
            Ok(())
        };
        family(
            e,
            gauge(
                "kcp_partition_log_end_offset",
                "The partition's log end offset (high watermark, or last stable offset with --isolation read-committed).",
            ),
            |emit| {
                logs(&mut |labels, _, end| match end {
                    Some(end) => emit(labels, end as f64),
                    None => Ok(()),
                })
            },
        )?;
        family(e, gauge("kcp_partition_log_start_offset", "The partition's log start offset."), |emit| {
            logs(&mut |labels, start, _| match start {
                Some(start) => emit(labels, start as f64),
                None => Ok(()),
            })
        })?;
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

/// The OpenMetrics text as served: plain, and gzip-compressed for the scrapers that accept it
/// (Prometheus does). Both are made once per collection, on the collection thread; a scrape
/// clones a `Bytes` (a reference count), so it never waits on compression either.
#[derive(Clone, Debug, Default)]
pub(crate) struct Body {
    pub(crate) plain: bytes::Bytes,
    pub(crate) gzip: bytes::Bytes,
}

impl Body {
    /// `text` and its gzip member. `gzip_hint` is the previous compressed length (the buffer is
    /// allocated once at about the right size). Level 1: the text is label sets repeated line
    /// after line, so the fastest level already shrinks it about 10 times (2.2 MB to 0.2 MB
    /// at 1,000 groups), at a third of the default level's time; at 10,000 groups (70 MB) the
    /// compression is part of every collection, whether or not anyone scrapes.
    pub(crate) fn of(text: String, gzip_hint: usize) -> Body {
        use std::io::Write as _;
        let mut encoder = flate2::write::GzEncoder::new(
            Vec::with_capacity(gzip_hint.saturating_add(gzip_hint / 16).max(64)),
            flate2::Compression::fast(),
        );
        // Writing into a Vec cannot fail.
        let gzip = encoder.write_all(text.as_bytes()).and_then(|()| encoder.finish()).unwrap_or_default();
        Body { plain: bytes::Bytes::from(text), gzip: bytes::Bytes::from(gzip) }
    }
}

/// The OpenMetrics text of `clusters`' snapshots (ends with `# EOF`).
///
/// `size_hint` is the previous text's length: the text is written into a buffer of about that
/// size rather than one doubled as it grows (at 70 MB, up to 128 MB held for the served copy).
pub(crate) fn render(clusters: &[(&str, Arc<Snapshot>)], granularity: Granularity, size_hint: usize) -> String {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(Snapshots {
        clusters: clusters.iter().map(|(n, s)| ((*n).to_owned(), s.clone())).collect(),
        granularity,
    }));
    let mut text = String::with_capacity(size_hint.saturating_add(size_hint / 32));
    if prometheus_client::encoding::text::encode(&mut text, &registry).is_err() {
        text.clear();
        let _ = writeln!(text, "# EOF");
    }
    text
}
