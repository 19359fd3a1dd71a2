//! Draws a simulation as SVG: one lane per partition, coloured by owner, gaps where nobody
//! owns it, dashed lines at scenario steps. Hand-written SVG, no dependency.
//!
//! ```
//! use kafka_consumer_protocol::internal::svg;
//! use kafka_consumer_protocol::sim::{run, MemberSpec, Scenario};
//! let mut s = Scenario::new(3, [("orders", 4)]);
//! s.members.push(MemberSpec::new("a", ["range"], ["orders"]));
//! let picture = svg::render(&run(&s).unwrap());
//! assert!(picture.starts_with("<svg") && picture.contains("orders-3"));
//! ```

use std::collections::BTreeMap;
use std::fmt::Write;

use super::Outcome;

const PALETTE: [&str; 12] = [
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
    "#1f77b4", "#8c564b",
];

/// Width of a lane label's character at the picture's 11 px font, a little over a sans-serif
/// font's average (digits and capitals are wider than lower case), so a label is never cut.
const LANE_CHAR_W: f64 = 6.8;
/// The narrowest and widest left margin (the lane labels' column).
const MIN_LEFT: f64 = 110.0;
const MAX_LEFT: f64 = 320.0;
/// Width of a step label's character at its 8 px font (likewise generous).
const STEP_CHAR_W: f64 = 5.0;
/// Rows of step labels above the lanes, and their spacing.
const STEP_ROWS: usize = 4;
const STEP_ROW_H: f64 = 9.0;

/// The left margin: wide enough for the longest lane label (and `assignor`), within
/// [`MIN_LEFT`]..=[`MAX_LEFT`]; longer labels are shortened by [`fit_label`].
fn left_margin<'a>(labels: impl Iterator<Item = &'a str>) -> f64 {
    let longest = labels.map(|l| l.chars().count()).max().unwrap_or(0).max("assignor".len());
    (LANE_CHAR_W * longest as f64 + 12.0).clamp(MIN_LEFT, MAX_LEFT)
}

/// A lane label that fits the margin `left`: whole, or its start and end around an ellipsis
/// (the partition number at the end stays), the whole name then in the lane's `<title>`.
fn fit_label(label: &str, left: f64) -> Option<String> {
    let room = ((left - 12.0) / LANE_CHAR_W).floor().max(4.0) as usize;
    let chars: Vec<char> = label.chars().collect();
    if chars.len() <= room {
        return None;
    }
    let tail = (room - 1) / 2;
    let head = room - 1 - tail;
    Some(chars[..head].iter().chain(std::iter::once(&'\u{2026}')).chain(&chars[chars.len() - tail..]).collect())
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// What the picture says around the timeline, when the caller knows better than a simulation's
/// summary (`kcp group history --svg` draws a real group's past).
#[derive(Clone, Debug, Default)]
pub struct Labels {
    /// The title line; `None`: the simulation's summary (rebalances, moves, convergence,
    /// violations).
    pub title: Option<String>,
    /// The wall-clock time of `t_ms` 0 in milliseconds since the epoch: the time axis is then
    /// labelled in UTC (`HH:MM:SS`, the first label with its date); `None`: time since the
    /// start of the simulation.
    pub start_epoch_ms: Option<i64>,
}

/// Renders the outcome's timeline.
pub fn render(o: &Outcome) -> String {
    render_with(o, &Labels::default())
}

/// `YYYY-MM-DD` and `HH:MM:SS` (UTC) of a time in milliseconds since the epoch.
fn utc(ms: i64) -> (String, String) {
    let secs = ms.div_euclid(1_000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (format!("{y:04}-{m:02}-{d:02}"), format!("{:02}:{:02}:{:02}", rem / 3_600, rem % 3_600 / 60, rem % 60))
}

/// The step between time-axis ticks: 1, 2 or 5 times a power of ten milliseconds, at most
/// eight ticks over `end`.
fn tick_step(end: u64) -> u64 {
    let mut step = 1u64;
    loop {
        for k in [1, 2, 5] {
            let s = step.saturating_mul(k);
            if end / s <= 8 {
                return s;
            }
        }
        step = step.saturating_mul(10);
    }
}

/// A time-axis label: relative (`1.5 s`, `250 ms`) or, with a start time, UTC.
fn time_label(t: u64, step: u64, labels: &Labels, first: bool) -> String {
    match labels.start_epoch_ms {
        Some(start) => {
            let (date, time) = utc(start.saturating_add(i64::try_from(t).unwrap_or(i64::MAX)));
            if first {
                format!("{date} {time} UTC")
            } else {
                time
            }
        }
        None if step >= 1_000 => format!("{} s", t / 1_000),
        None if step >= 100 && t >= 1_000 => format!("{:.1} s", t as f64 / 1_000.0),
        None => format!("{t} ms"),
    }
}

/// Renders the outcome's timeline with `labels`.
pub fn render_with(o: &Outcome, labels: &Labels) -> String {
    let lanes: Vec<(&str, i32)> = o.partitions.iter().collect();
    let lane_index: BTreeMap<(&str, i32), usize> = lanes.iter().enumerate().map(|(i, &tp)| (tp, i)).collect();
    let mut members: Vec<String> = Vec::new();
    for e in &o.timeline {
        for m in e.owned.keys() {
            if !members.contains(m) {
                members.push(m.clone());
            }
        }
    }
    let color = |m: &str| PALETTE[members.iter().position(|x| x == m).unwrap_or(0) % PALETTE.len()];
    let end = o.timeline.last().map_or(0, |e| e.t_ms).max(o.summary.duration_ms).max(1);
    let lane_labels: Vec<String> = lanes.iter().map(|(t, p)| format!("{t}-{p}")).collect();
    let left = left_margin(lane_labels.iter().map(String::as_str));
    let (top, width) = (64.0, 1000.0);
    let lane_h = if lanes.len() > 60 { 6.0 } else { 16.0 };
    let height = top + lane_h * lanes.len() as f64 + 70.0 + 18.0 * members.len().div_ceil(6) as f64;
    let x = |t: u64| left + width * t as f64 / end as f64;
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{height}" viewBox="0 0 {} {height}" font-family="sans-serif" font-size="11">"#,
        left + width + 160.0,
        left + width + 160.0
    );
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let s = &o.summary;
    let title = labels.title.clone().unwrap_or_else(|| {
        format!(
            "{} rebalances, {} partitions moved, converged: {}, violations: {}",
            s.rebalances,
            s.partitions_moved,
            s.converged,
            s.violations.len()
        )
    });
    let _ = writeln!(out, r#"<text x="{left}" y="18" font-size="13">{}</text>"#, esc(&title));
    // Step labels end within the time axis: one that would run past its end ends at its line.
    let right_edge = left + width;
    // Ownership intervals: (lane, owner) -> start.
    let mut open: BTreeMap<(usize, String), u64> = BTreeMap::new();
    let mut rects: Vec<(usize, String, u64, u64)> = Vec::new();
    for e in &o.timeline {
        let mut now_owned: BTreeMap<(usize, String), ()> = BTreeMap::new();
        for (m, parts) in &e.owned {
            for g in parts {
                for &p in &g.partitions {
                    if let Some(&i) = lane_index.get(&(g.topic.as_str(), p)) {
                        now_owned.insert((i, m.clone()), ());
                    }
                }
            }
        }
        let closing: Vec<(usize, String)> = open.keys().filter(|k| !now_owned.contains_key(*k)).cloned().collect();
        for k in closing {
            let start = open.remove(&k).expect("open");
            rects.push((k.0, k.1, start, e.t_ms));
        }
        for k in now_owned.into_keys() {
            open.entry(k).or_insert(e.t_ms);
        }
    }
    for ((i, m), start) in open {
        rects.push((i, m, start, end));
    }
    for (i, label) in lane_labels.iter().enumerate() {
        let y = top + lane_h * i as f64;
        if lane_h >= 10.0 {
            let (x, y) = (left - 6.0, y + lane_h * 0.75);
            match fit_label(label, left) {
                None => {
                    let _ = writeln!(out, r#"<text x="{x}" y="{y}" text-anchor="end">{}</text>"#, esc(label));
                }
                Some(short) => {
                    let _ = writeln!(
                        out,
                        r#"<text x="{x}" y="{y}" text-anchor="end"><title>{}</title>{}</text>"#,
                        esc(label),
                        esc(&short)
                    );
                }
            }
        }
        let _ =
            writeln!(out, r##"<rect x="{left}" y="{y}" width="{width}" height="{}" fill="#f4f4f4"/>"##, lane_h - 1.0);
    }
    for (i, m, a, b) in rects {
        let y = top + lane_h * i as f64;
        let w = (x(b) - x(a)).max(0.5);
        let _ = writeln!(
            out,
            r#"<rect x="{:.2}" y="{y}" width="{w:.2}" height="{}" fill="{}"><title>{} {a}-{b}ms</title></rect>"#,
            x(a),
            lane_h - 1.0,
            color(&m),
            esc(&m)
        );
    }
    // Scenario steps.
    let bottom = top + lane_h * lanes.len() as f64;
    // Step labels go to the first of the rows where they do not overlap the labels before them;
    // a label with no room left in any row is not drawn, and its step line carries it as a
    // `<title>` (several steps close together at the end of the axis crowded one another).
    let mut row_end = [f64::MIN; STEP_ROWS];
    for e in &o.timeline {
        if matches!(e.event.as_str(), "lost" | "revoked" | "assigned" | "error") {
            continue;
        }
        let xx = x(e.t_ms);
        let label = match &e.member {
            Some(m) => match &e.detail {
                Some(d) => format!("{} {} [{}]", e.event, m, d),
                None => format!("{} {}", e.event, m),
            },
            None => format!("{} {}", e.event, e.detail.clone().unwrap_or_default()),
        };
        let label_width = STEP_CHAR_W * label.chars().count() as f64;
        // A label that would run past the end of the axis ends at its line instead.
        let (from, anchor) = if xx + label_width > right_edge { (xx - label_width, "end") } else { (xx, "start") };
        let row = row_end.iter().position(|end| *end + 3.0 < from);
        let line = format!(
            r##"<line x1="{xx:.2}" y1="{}" x2="{xx:.2}" y2="{bottom}" stroke="#333" stroke-dasharray="3,3" stroke-width="0.7""##,
            top - 4.0
        );
        match row {
            Some(row) => {
                row_end[row] = from + label_width;
                let _ = writeln!(out, "{line}/>");
                let _ = writeln!(
                    out,
                    r#"<text x="{xx:.2}" y="{}" font-size="8" text-anchor="{anchor}">{}</text>"#,
                    26.0 + STEP_ROW_H * row as f64,
                    esc(&label)
                );
            }
            None => {
                let _ = writeln!(out, "{line}><title>{}</title></line>", esc(&label));
            }
        }
    }
    // The assignor and protocols of each generation, from its first `assigned` event.
    let mut gens: Vec<(u64, i32, String)> = Vec::new();
    for e in o.timeline.iter().filter(|e| e.event == "assigned") {
        if gens.last().is_none_or(|g| g.1 != e.generation) {
            gens.push((e.t_ms, e.generation, e.assignor.clone().unwrap_or_default()));
        }
    }
    let band = bottom + 4.0;
    let _ = writeln!(out, r#"<text x="{}" y="{}" text-anchor="end">assignor</text>"#, left - 6.0, band + 11.0);
    for (i, (t, g, a)) in gens.iter().enumerate() {
        let t_end = gens.get(i + 1).map_or(end, |n| n.0);
        let fill = if a.contains("cooperative") { "#cfe3f7" } else { "#f7e3cf" };
        let protocols: std::collections::BTreeSet<&str> = o
            .timeline
            .iter()
            .filter(|e| e.event == "assigned" && e.generation == *g)
            .filter_map(|e| e.protocol)
            .collect();
        let _ = writeln!(
            out,
            r##"<rect x="{:.2}" y="{band}" width="{:.2}" height="14" fill="{fill}" stroke="#999" stroke-width="0.5"><title>generation {g}: {} ({})</title></rect>"##,
            x(*t),
            (x(t_end) - x(*t)).max(0.5),
            esc(a),
            protocols.iter().copied().collect::<Vec<_>>().join("+")
        );
        let short = a.replace("cooperative-sticky", "coop-sticky");
        let protos = protocols.iter().copied().collect::<Vec<_>>().join("+");
        let room = x(t_end) - x(*t);
        let text =
            [format!("g{g} {a} {protos}"), format!("g{g} {short} {protos}"), format!("g{g} {short}"), format!("g{g}")]
                .into_iter()
                .find(|t| room >= 4.4 * t.chars().count() as f64);
        if let Some(text) = text {
            let _ = writeln!(
                out,
                r#"<text x="{:.2}" y="{}" font-size="8">{}</text>"#,
                x(*t) + 2.0,
                band + 10.0,
                esc(&text)
            );
        }
    }
    let bottom = bottom + 20.0;
    // The time axis: a tick and a label at each step, the last label at the end.
    let step = tick_step(end);
    let mut t = 0;
    while t < end {
        let xx = x(t);
        let _ = writeln!(
            out,
            r##"<line x1="{xx:.2}" y1="{bottom}" x2="{xx:.2}" y2="{}" stroke="#333" stroke-width="0.7"/>"##,
            bottom + 4.0
        );
        // The label of the last tick gives way to the end's when they would overlap.
        if t == 0 || x(end) - xx > 90.0 {
            let _ = writeln!(
                out,
                r#"<text x="{xx:.2}" y="{}" font-size="9">{}</text>"#,
                bottom + 14.0,
                esc(&time_label(t, step, labels, t == 0))
            );
        }
        t = t.saturating_add(step);
    }
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" font-size="9" text-anchor="end">{}</text>"#,
        left + width,
        bottom + 14.0,
        esc(&time_label(end, step.min(if end.is_multiple_of(1_000) { step } else { 100 }), labels, false))
    );
    for (i, m) in members.iter().enumerate() {
        let lx = left + 160.0 * (i % 6) as f64;
        let ly = bottom + 30.0 + 18.0 * (i / 6) as f64;
        let _ = writeln!(out, r#"<rect x="{lx}" y="{}" width="12" height="12" fill="{}"/>"#, ly - 10.0, color(m));
        let _ = writeln!(out, r#"<text x="{}" y="{ly}">{}</text>"#, lx + 16.0, esc(m));
    }
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{run, MemberSpec, Scenario};

    fn outcome() -> Outcome {
        let mut s = Scenario::new(3, [("orders", 4)]);
        s.members.push(MemberSpec::new("a", ["range"], ["orders"]));
        s.members.push(MemberSpec::new("b", ["range"], ["orders"]));
        run(&s).unwrap()
    }

    #[test]
    fn a_given_title_and_start_time_replace_the_simulations() {
        let o = outcome();
        let plain = render(&o);
        assert!(plain.contains("converged: true"), "{plain}");
        let labels = Labels { title: Some("group g: 2 generations".into()), start_epoch_ms: Some(1_796_140_178_670) };
        let real = render_with(&o, &labels);
        assert!(real.contains(">group g: 2 generations</text>") && !real.contains("converged"), "{real}");
        assert!(real.contains(">2026-12-01 15:49:38 UTC</text>"), "{real}");
        assert!(!real.contains(" ms</text>"), "{real}");
    }

    /// The KIP's rolling upgrade ends with steps whose labels ran past the end of the time axis
    /// into the margin (and, in a viewer's wider font, off the picture).
    #[cfg(feature = "json")]
    #[test]
    fn step_labels_end_inside_the_picture() {
        let scenario =
            crate::sim::json::parse_scenario(include_str!("../../testdata/scenarios/rolling-upgrade.json")).unwrap();
        let o = run(&scenario).unwrap();
        let picture = render(&o);
        let width = 110.0 + 1000.0; // the end of the time axis
        for line in picture.lines().filter(|l| l.contains(r#"font-size="8""#) && l.starts_with("<text")) {
            let x: f64 = line.split("x=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
            let text = line.split('>').nth(1).unwrap().split('<').next().unwrap();
            let end = if line.contains(r#"text-anchor="end""#) { x } else { x + 4.6 * text.chars().count() as f64 };
            assert!(end <= width, "{line} ends at {end}, the time axis at {width}");
        }
    }

    /// An outcome of one member owning `topics`' partition 0 from the start, with `steps` joins
    /// (at the given times) of members named `name-N`.
    fn drawn(topics: &[&str], steps: &[u64], name: &str) -> String {
        use crate::sim::{Summary, TimelineEntry};
        use crate::{PartitionSet, TopicPartitions};
        let mut partitions = PartitionSet::new();
        let owned: Vec<TopicPartitions> =
            topics.iter().map(|t| TopicPartitions { topic: (*t).to_owned(), partitions: vec![0] }).collect();
        for t in topics {
            partitions.insert(t, 0);
        }
        let owned: BTreeMap<String, Vec<TopicPartitions>> = [("m".to_owned(), owned)].into();
        let mut timeline = vec![TimelineEntry::ownership(0, 1, "assigned", owned.clone())];
        for (i, &t) in steps.iter().enumerate() {
            let mut e = TimelineEntry::ownership(t, 1, "joined", owned.clone());
            e.member = Some(format!("{name}-{i}"));
            timeline.push(e);
        }
        let summary = Summary { duration_ms: 1_000, ..Summary::default() };
        render(&Outcome { timeline, summary, partitions, final_owned: BTreeMap::new() })
    }

    fn attr(line: &str, name: &str) -> f64 {
        line.split(&format!("{name}=\"")).nth(1).unwrap().split('"').next().unwrap().parse().unwrap()
    }

    /// A real group's topic names are long: its lane labels ran off the picture's left edge
    /// (the margin was 110 px whatever the names).
    #[test]
    fn lane_labels_fit_the_margin_or_are_shortened_with_their_full_name() {
        let long = "x".repeat(100);
        let picture = drawn(&["page-10670-85589592-0-t", &long], &[], "m");
        let lane_labels: Vec<&str> = picture
            .lines()
            .filter(|l| l.starts_with("<text") && l.contains(r#"text-anchor="end""#) && !l.contains("font-size"))
            .collect();
        assert_eq!(lane_labels.len(), 3, "two lanes and `assignor`: {picture}");
        for line in lane_labels {
            // The text shown: after the `<title>` where there is one.
            let after = line.split("</title>").nth(1).unwrap_or_else(|| line.split_once('>').unwrap().1);
            let shown = after.split('<').next().unwrap();
            let start = attr(line, "x") - LANE_CHAR_W * shown.chars().count() as f64;
            assert!(start >= 0.0, "{line} starts at {start}");
        }
        assert!(picture.contains(">page-10670-85589592-0-t-0</text>"), "a label that fits is whole: {picture}");
        assert!(picture.contains(&format!("<title>{long}-0</title>xxx")), "the full name kept: {picture}");
        assert!(picture.contains("\u{2026}x"), "shortened around an ellipsis: {picture}");
    }

    /// Steps close together at the end of the axis: their labels were stacked into the last row
    /// over one another. Now no two drawn labels of a row overlap, and every label is either
    /// drawn or its line's `<title>`.
    #[test]
    fn crowded_step_labels_never_overlap_and_none_is_lost() {
        let steps: Vec<u64> = (0..9).map(|i| 990 + i).collect();
        let picture = drawn(&["t"], &steps, "a-member-with-a-long-name");
        let mut rows: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
        let mut drawn_or_titled = 0;
        for line in picture.lines() {
            if line.starts_with("<text") && line.contains(r#"font-size="8""#) && line.contains(">joined ") {
                let text = line.split('>').nth(1).unwrap().split('<').next().unwrap();
                let x = attr(line, "x");
                let w = STEP_CHAR_W * text.chars().count() as f64;
                let span = if line.contains(r#"text-anchor="end""#) { (x - w, x) } else { (x, x + w) };
                rows.entry(line.split("y=\"").nth(1).unwrap().split('"').next().unwrap().to_owned())
                    .or_default()
                    .push(span);
                drawn_or_titled += 1;
            }
            if line.starts_with("<line") && line.contains("<title>joined ") {
                drawn_or_titled += 1;
            }
        }
        assert_eq!(drawn_or_titled, steps.len(), "{picture}");
        assert!(rows.len() <= STEP_ROWS, "{rows:?}");
        for (y, spans) in &rows {
            for (i, a) in spans.iter().enumerate() {
                for b in &spans[i + 1..] {
                    assert!(a.1 <= b.0 || b.1 <= a.0, "row {y}: {a:?} and {b:?} overlap\n{picture}");
                }
            }
        }
    }

    #[test]
    fn ticks_are_round() {
        assert_eq!([tick_step(10_090), tick_step(800), tick_step(3_600_000)], [2_000, 100, 500_000]);
        assert_eq!(utc(0), ("1970-01-01".to_owned(), "00:00:00".to_owned()));
    }
}
