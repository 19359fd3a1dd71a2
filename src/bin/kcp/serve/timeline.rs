//! The rebalance timeline of a group's page: what the collections saw of the group's generations
//! (state, generation or epoch, members and their assignments), kept per group while it changes
//! ([`next`], called by the collection loop), and drawn by the simulator's renderer
//! (`sim::svg::render_with`, as `kcp group history --svg` draws a group's past) with the same data
//! as a table.
//!
//! A collection only adds an entry when something changed since the last one, and at most
//! [`KEPT`] entries within the last [`SPAN_MS`] are kept per group: a quiet group keeps one
//! entry, a storming one its last 64 changes.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt::Write as _;
use std::sync::Arc;

use kafka_consumer_protocol::client::collect::DescribedGroup;
use kafka_consumer_protocol::inspect::watch::Snapshot as WatchSnapshot;
use kafka_consumer_protocol::sim::{Outcome, Summary, TimelineEntry};
use kafka_consumer_protocol::{PartitionSet, TopicPartitions};

use super::page::escape;

/// Entries kept per group.
pub(crate) const KEPT: usize = 64;
/// How far back entries are kept: 3 hours (the lag history's span at the default interval).
pub(crate) const SPAN_MS: u64 = 3 * 3_600_000;
/// Partitions drawn as lanes: a group of 1,000 partitions shows its first 48 (the table and the
/// members' rows say the rest), so the picture stays a few kilobytes.
const LANES: usize = 48;

/// What one collection saw of a group's generation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Seen {
    /// When (ms since the epoch).
    pub(crate) at_ms: u64,
    pub(crate) state: String,
    /// The group epoch, or the classic generation the members claim (see `inspect::watch`).
    pub(crate) epoch: Option<i32>,
    /// Rebalances the server had counted by then (`Watcher::rebalances_seen`).
    pub(crate) rebalances: u64,
    pub(crate) assignor: String,
    /// Member id -> (client id, assignment when the poll reported it).
    pub(crate) members: BTreeMap<String, (String, Option<Vec<TopicPartitions>>)>,
}

impl Seen {
    /// What a collection saw, from the Watcher's snapshot of it (before it is observed).
    pub(crate) fn of(at_ms: u64, snapshot: &WatchSnapshot, described: &DescribedGroup) -> Seen {
        let clients: BTreeMap<&str, &str> =
            described.member_identities().into_iter().map(|(member, client, _)| (member, client)).collect();
        let members = snapshot
            .members
            .iter()
            .map(|(id, assignment)| {
                let client = clients.get(id.as_str()).copied().unwrap_or_default().to_owned();
                (id.clone(), (client, assignment.clone()))
            })
            .collect();
        Seen {
            at_ms,
            state: snapshot.state.clone(),
            epoch: snapshot.epoch,
            rebalances: 0,
            assignor: described.assignor().to_owned(),
            members,
        }
    }

    fn same_as(&self, other: &Seen) -> bool {
        self.state == other.state
            && self.epoch == other.epoch
            && self.rebalances == other.rebalances
            && self.assignor == other.assignor
            && self.members == other.members
    }
}

/// The group's entries after a collection saw `seen`: `previous` with `seen` added when it differs
/// from the last entry, then bounded to [`KEPT`] entries and [`SPAN_MS`] (the newest always stays).
pub(crate) fn next(previous: Option<&VecDeque<Arc<Seen>>>, seen: Seen) -> VecDeque<Arc<Seen>> {
    let mut entries = previous.cloned().unwrap_or_default();
    if entries.back().is_none_or(|last| !last.same_as(&seen)) {
        entries.push_back(Arc::new(seen));
    }
    let newest = entries.back().map_or(0, |e| e.at_ms);
    while entries.len() > KEPT || (entries.len() > 1 && entries.front().is_some_and(|e| e.at_ms + SPAN_MS < newest)) {
        entries.pop_front();
    }
    entries
}

/// Whether [`next`] would give `entries` back unchanged for `seen`: its last entry saw the same
/// (the bounds depend on the newest entry only, so they cut nothing more).
pub(crate) fn unchanged(entries: &VecDeque<Arc<Seen>>, seen: &Seen) -> bool {
    entries.back().is_some_and(|last| last.same_as(seen))
}

/// A name from the cluster for the picture: control characters as their escapes (the renderer
/// escapes markup).
fn visible(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() }).collect()
}

/// A member's short name: its client id and the start of the rest of its id (as
/// `kcp group history` names them).
fn short_member(member_id: &str, client_id: &str) -> String {
    let rest = member_id.strip_prefix(client_id).map(|r| r.trim_start_matches('-')).unwrap_or(member_id);
    let name = if client_id.is_empty() {
        rest.chars().take(24).collect()
    } else {
        format!("{}-{}", client_id, rest.chars().take(6).collect::<String>())
    };
    visible(&name)
}

/// The generation a entry stands for: the epoch, or (a classic group whose members claim none)
/// the rebalances counted.
fn generation(e: &Seen) -> i32 {
    e.epoch.unwrap_or_else(|| i32::try_from(e.rebalances).unwrap_or(i32::MAX))
}

fn rfc3339(ms: u64) -> String {
    crate::pcap::rfc3339_ms(std::time::Duration::from_millis(ms))
}

/// The timeline section's content: the picture and its data as a table (newest first).
pub(crate) fn render(group_id: &str, entries: &VecDeque<Arc<Seen>>, now_ms: u64) -> String {
    let mut out = String::new();
    let (Some(first), Some(last)) = (entries.front(), entries.back()) else {
        out.push_str("<p>No collection yet.</p>");
        return out;
    };
    let rebalances = last.rebalances.saturating_sub(first.rebalances);
    let _ = write!(
        out,
        "<p id=\"timeline-summary\" data-rebalances=\"{rebalances}\">{} change(s) seen since {}, {rebalances} rebalance(s) counted \
         (the server keeps the last {KEPT} changes of the last {} hours).</p>",
        entries.len(),
        rfc3339(first.at_ms),
        SPAN_MS / 3_600_000
    );
    out.push_str("<div class=\"timeline-svg\">");
    out.push_str(&svg(group_id, entries, now_ms));
    out.push_str("</div>");
    out.push_str(
        "<details><summary>The timeline's data as a table</summary><table id=\"timeline-table\"><thead><tr>\
         <th scope=\"col\">Seen</th><th scope=\"col\">Generation</th><th scope=\"col\">State</th>\
         <th scope=\"col\">Assignor</th><th scope=\"col\">Members</th><th scope=\"col\">Joined</th>\
         <th scope=\"col\">Left</th></tr></thead><tbody id=\"timeline-body\">",
    );
    let mut rows = Vec::new();
    let mut before: Option<&Seen> = None;
    for e in entries {
        let names = |ids: Vec<&String>| -> String {
            ids.iter()
                .map(|id| escape(&short_member(id, &e.members.get(*id).map(|m| m.0.clone()).unwrap_or_default())))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let (joined, left) = match before {
            Some(b) => (
                names(e.members.keys().filter(|m| !b.members.contains_key(*m)).collect()),
                b.members
                    .iter()
                    .filter(|(m, _)| !e.members.contains_key(*m))
                    .map(|(m, (client, _))| escape(&short_member(m, client)))
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
            None => (String::new(), String::new()),
        };
        rows.push(format!(
            "<tr><td>{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{joined}</td><td>{left}</td></tr>",
            rfc3339(e.at_ms),
            e.epoch.map_or_else(|| "-".to_owned(), |g| g.to_string()),
            escape(&e.state),
            escape(&e.assignor),
            e.members.len()
        ));
        before = Some(e);
    }
    for row in rows.iter().rev() {
        out.push_str(row);
    }
    out.push_str("</tbody></table></details>");
    out
}

/// The picture: the simulator's timeline of the entries (time from the first entry to now; each
/// entry's reported assignments as the ownership; joins, leaves and state changes as steps).
fn svg(group_id: &str, entries: &VecDeque<Arc<Seen>>, now_ms: u64) -> String {
    use kafka_consumer_protocol::internal::svg;

    let t0 = entries.front().map_or(now_ms, |e| e.at_ms);
    let t = |at: u64| at.saturating_sub(t0);
    let mut all: BTreeSet<(&str, i32)> = BTreeSet::new();
    for e in entries {
        for (_, assignment) in e.members.values() {
            for tp in assignment.iter().flatten() {
                for &p in &tp.partitions {
                    all.insert((tp.topic.as_str(), p));
                }
            }
        }
    }
    let mut lanes = PartitionSet::new();
    for (topic, p) in all.iter().take(LANES) {
        lanes.insert(topic, *p);
    }
    let step = |t_ms: u64, generation: i32, event: &str, owned: &BTreeMap<String, Vec<TopicPartitions>>| {
        TimelineEntry::ownership(t_ms, generation, event, owned.clone())
    };
    let mut timeline = Vec::new();
    let mut owned: BTreeMap<String, Vec<TopicPartitions>> = BTreeMap::new();
    let mut before: Option<&Seen> = None;
    for e in entries {
        let at = t(e.at_ms);
        let name = |id: &str, client: &str| short_member(id, client);
        if let Some(b) = before {
            for (id, (client, _)) in b.members.iter().filter(|(m, _)| !e.members.contains_key(*m)) {
                let mut s = step(at, generation(e), "left", &owned);
                s.member = Some(name(id, client));
                timeline.push(s);
            }
            for (id, (client, _)) in e.members.iter().filter(|(m, _)| !b.members.contains_key(*m)) {
                let mut s = step(at, generation(e), "joined", &owned);
                s.member = Some(name(id, client));
                timeline.push(s);
            }
            if b.state != e.state {
                let mut s = step(at, generation(e), "state", &owned);
                s.detail = Some(visible(&e.state));
                timeline.push(s);
            }
        }
        // Assignments not reported (a classic group between generations): nobody is drawn as
        // owning anything until a poll reports them.
        owned = e
            .members
            .iter()
            .filter_map(|(id, (client, assignment))| Some((name(id, client), assignment.clone()?)))
            .collect();
        let mut s = step(at, generation(e), "assigned", &owned);
        s.assignor = Some(visible(&e.assignor));
        timeline.push(s);
        before = Some(e);
    }
    for (i, e) in timeline.iter_mut().enumerate() {
        e.seq = i as u64;
    }
    let (first, last) = (entries.front(), entries.back());
    let rebalances = last.map_or(0, |l| l.rebalances.saturating_sub(first.map_or(0, |f| f.rebalances)));
    let summary = Summary {
        rebalances,
        duration_ms: t(now_ms).max(last.map_or(0, |l| t(l.at_ms))),
        final_generation: last.map_or(0, |l| generation(l)),
        events: timeline.len() as u64,
        ..Summary::default()
    };
    let final_owned = owned.iter().map(|(m, parts)| (m.clone(), PartitionSet::from_groups(parts))).collect();
    let mut title = format!(
        "group {}: {} rebalance(s), generation {} now",
        visible(group_id),
        rebalances,
        last.and_then(|l| l.epoch).map_or_else(|| "unknown".to_owned(), |g| g.to_string())
    );
    if all.len() > LANES {
        let _ = write!(title, " (the first {LANES} of {} partitions drawn)", all.len());
    }
    let labels = svg::Labels { title: Some(title), start_epoch_ms: i64::try_from(t0).ok() };
    svg::render_with(&Outcome { timeline, summary, partitions: lanes, final_owned }, &labels)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(at_ms: u64, epoch: i32, members: &[(&str, &str, &[i32])]) -> Seen {
        Seen {
            at_ms,
            state: "Stable".into(),
            epoch: Some(epoch),
            rebalances: u64::try_from(epoch).unwrap(),
            assignor: "range".into(),
            members: members
                .iter()
                .map(|(id, client, parts)| {
                    let tp = TopicPartitions { topic: "t<x>".into(), partitions: parts.to_vec() };
                    ((*id).to_owned(), ((*client).to_owned(), Some(vec![tp])))
                })
                .collect(),
        }
    }

    #[test]
    fn only_changes_are_kept_and_bounded() {
        let a = seen(1_000, 1, &[("c-1", "c", &[0, 1])]);
        let entries = next(None, a.clone());
        let entries = next(Some(&entries), Seen { at_ms: 2_000, ..a.clone() });
        assert_eq!(entries.len(), 1, "nothing changed: no entry");
        let entries = next(Some(&entries), seen(3_000, 2, &[("c-1", "c", &[0]), ("d-2", "d", &[1])]));
        assert_eq!(entries.len(), 2);
        let mut many = entries;
        for i in 0..200 {
            many = next(Some(&many), seen(4_000 + i, 3 + i32::try_from(i).unwrap(), &[("c-1", "c", &[0])]));
        }
        assert_eq!(many.len(), KEPT);
        let late = next(Some(&many), seen(SPAN_MS + 10_000, 500, &[("c-1", "c", &[0])]));
        assert_eq!(late.len(), 1, "older than the span: gone, the newest stays");
    }

    #[test]
    fn the_picture_and_table_show_generations_as_text() {
        let a = seen(1_796_140_178_000, 1, &[("<b>c-1", "<b>c", &[0, 1])]);
        let b = seen(1_796_140_188_000, 2, &[("<b>c-1", "<b>c", &[0]), ("d\u{1}-2", "d\u{1}", &[1])]);
        let entries = next(Some(&next(None, a)), b);
        let html = render("g\"<script>", &entries, 1_796_140_198_000);
        assert!(html.contains("<svg") && html.contains(">g2 range"), "{html}");
        assert!(!html.contains("<script>") && !html.contains("<b>") && !html.contains('\u{1}'), "{html}");
        assert!(html.contains("d\\u{1}-2"), "{html}");
        assert!(html.contains("data-rebalances=\"1\""), "{html}");
        // Newest first in the table.
        let body = html.split("<tbody id=\"timeline-body\">").nth(1).unwrap();
        assert!(body.find("2026-12-01T15:49:48").unwrap() < body.find("2026-12-01T15:49:38").unwrap(), "{body}");
    }
}
