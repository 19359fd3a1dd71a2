//! Rebalance and listener metrics with the names Apache Kafka's Java consumer registers
//! (`consumer-coordinator-metrics`).

use std::collections::BTreeMap;

/// Java's default `metrics.sample.window.ms`.
const WINDOW_MS: u64 = 30_000;
/// Java's default `metrics.num.samples`.
const SAMPLES: usize = 2;

#[derive(Clone, Copy, Debug, Default)]
struct Sample {
    start: u64,
    count: u64,
    sum: f64,
    max: f64,
}

/// A sampled statistic like Java's `SampledStat`: two 30-second windows.
#[derive(Clone, Debug, Default)]
struct Sampled {
    samples: Vec<Sample>,
}

impl Sampled {
    fn record(&mut self, now: u64, value: f64) {
        let need_new = match self.samples.last() {
            Some(s) => now >= s.start + WINDOW_MS,
            None => true,
        };
        if need_new {
            self.samples.push(Sample { start: now, count: 0, sum: 0.0, max: f64::NEG_INFINITY });
            if self.samples.len() > SAMPLES {
                self.samples.remove(0);
            }
        }
        let s = self.samples.last_mut().expect("just pushed");
        s.count += 1;
        s.sum += value;
        s.max = s.max.max(value);
    }

    fn live(&self, now: u64) -> impl Iterator<Item = &Sample> {
        // Java purges samples older than `samples * window`.
        self.samples.iter().filter(move |s| now < s.start + WINDOW_MS * SAMPLES as u64)
    }

    fn avg(&self, now: u64) -> f64 {
        let (c, s) = self.live(now).fold((0u64, 0.0), |(c, s), x| (c + x.count, s + x.sum));
        if c == 0 {
            f64::NAN
        } else {
            s / c as f64
        }
    }

    fn max(&self, now: u64) -> f64 {
        let m = self.live(now).filter(|s| s.count > 0).map(|s| s.max).fold(f64::NEG_INFINITY, f64::max);
        if m == f64::NEG_INFINITY {
            f64::NAN
        } else {
            m
        }
    }

    /// Java's `Rate(TimeUnit.HOURS, WindowedCount)`.
    fn rate_per_hour(&self, now: u64) -> f64 {
        let live: Vec<&Sample> = self.live(now).collect();
        let count: u64 = live.iter().map(|s| s.count).sum();
        let oldest = live.first().map_or(now, |s| s.start);
        let mut elapsed = now.saturating_sub(oldest);
        let full = elapsed / WINDOW_MS;
        let min_full = (SAMPLES - 1) as u64;
        if full < min_full {
            elapsed += (min_full - full) * WINDOW_MS;
        }
        count as f64 / (elapsed as f64 / 3_600_000.0)
    }
}

/// Which listener callback a latency belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ListenerKind {
    /// `onPartitionsRevoked`.
    Revoked,
    /// `onPartitionsAssigned`.
    Assigned,
    /// `onPartitionsLost`.
    Lost,
}

/// The coordinator's metrics.
#[derive(Clone, Debug, Default)]
pub struct Metrics {
    rebalance_latency: Sampled,
    rebalance_latency_total: f64,
    rebalance_total: u64,
    failed_total: u64,
    failed: Sampled,
    last_rebalance_end: Option<u64>,
    revoked: Sampled,
    assigned: Sampled,
    lost: Sampled,
}

impl Metrics {
    pub(crate) fn record_rebalance(&mut self, now: u64, latency_ms: u64) {
        self.rebalance_latency.record(now, latency_ms as f64);
        self.rebalance_latency_total += latency_ms as f64;
        self.rebalance_total += 1;
        self.last_rebalance_end = Some(now);
    }

    pub(crate) fn record_failed(&mut self, now: u64) {
        self.failed_total += 1;
        self.failed.record(now, 1.0);
    }

    pub(crate) fn record_listener(&mut self, now: u64, kind: ListenerKind, latency_ms: u64) {
        let s = match kind {
            ListenerKind::Revoked => &mut self.revoked,
            ListenerKind::Assigned => &mut self.assigned,
            ListenerKind::Lost => &mut self.lost,
        };
        s.record(now, latency_ms as f64);
    }

    /// Successful rebalances so far (`rebalance-total`).
    pub fn rebalance_total(&self) -> u64 {
        self.rebalance_total
    }

    /// Failed JoinGroup/SyncGroup rounds so far (`failed-rebalance-total`).
    pub fn failed_rebalance_total(&self) -> u64 {
        self.failed_total
    }

    /// Every metric by its Java name at time `now` (ms). Values without samples are `NaN`, as
    /// in Java; `last-rebalance-seconds-ago` is `-1` before the first rebalance.
    ///
    /// ```
    /// use kafka_consumer_protocol::coordinator::Metrics;
    /// let m = Metrics::default().snapshot(0);
    /// assert_eq!(m["rebalance-total"], 0.0);
    /// assert_eq!(m["last-rebalance-seconds-ago"], -1.0);
    /// assert!(m["rebalance-latency-avg"].is_nan());
    /// ```
    pub fn snapshot(&self, now: u64) -> BTreeMap<&'static str, f64> {
        let mut m = BTreeMap::new();
        m.insert("rebalance-latency-avg", self.rebalance_latency.avg(now));
        m.insert("rebalance-latency-max", self.rebalance_latency.max(now));
        m.insert("rebalance-latency-total", self.rebalance_latency_total);
        m.insert("rebalance-total", self.rebalance_total as f64);
        m.insert("rebalance-rate-per-hour", self.rebalance_latency.rate_per_hour(now));
        m.insert("failed-rebalance-total", self.failed_total as f64);
        m.insert("failed-rebalance-rate-per-hour", self.failed.rate_per_hour(now));
        m.insert(
            "last-rebalance-seconds-ago",
            self.last_rebalance_end.map_or(-1.0, |t| (now.saturating_sub(t) / 1000) as f64),
        );
        m.insert("partitions-revoked-latency-avg", self.revoked.avg(now));
        m.insert("partitions-revoked-latency-max", self.revoked.max(now));
        m.insert("partitions-assigned-latency-avg", self.assigned.avg(now));
        m.insert("partitions-assigned-latency-max", self.assigned.max(now));
        m.insert("partitions-lost-latency-avg", self.lost.avg(now));
        m.insert("partitions-lost-latency-max", self.lost.max(now));
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `AbstractCoordinatorTest.testMetrics`: latencies 1, 6, 2.
    #[test]
    fn java_test_metrics_figures() {
        let mut m = Metrics::default();
        m.record_rebalance(1000, 1);
        m.record_rebalance(1000, 6);
        m.record_rebalance(1000, 2);
        let s = m.snapshot(1000);
        assert_eq!(s["rebalance-latency-avg"], 3.0);
        assert_eq!(s["rebalance-latency-max"], 6.0);
        assert_eq!(s["rebalance-latency-total"], 9.0);
        assert_eq!(s["rebalance-total"], 3.0);
        assert_eq!(s["rebalance-rate-per-hour"], 360.0);
        assert_eq!(s["last-rebalance-seconds-ago"], 0.0);
        assert_eq!(m.snapshot(31_500)["last-rebalance-seconds-ago"], 30.0);
        m.record_failed(1000);
        assert_eq!(m.snapshot(1000)["failed-rebalance-rate-per-hour"], 120.0);
    }

    #[test]
    fn listener_latency_avg_and_max() {
        let mut m = Metrics::default();
        m.record_listener(0, ListenerKind::Revoked, 1);
        m.record_listener(0, ListenerKind::Revoked, 2);
        let s = m.snapshot(0);
        assert_eq!(s["partitions-revoked-latency-avg"], 1.5);
        assert_eq!(s["partitions-revoked-latency-max"], 2.0);
        assert!(s["partitions-lost-latency-avg"].is_nan());
        // Samples expire after two windows.
        assert!(m.snapshot(61_000)["partitions-revoked-latency-max"].is_nan());
    }
}
