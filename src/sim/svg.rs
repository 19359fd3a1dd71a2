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

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Renders the outcome's timeline.
pub fn render(o: &Outcome) -> String {
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
    let (left, top, width) = (110.0, 64.0, 1000.0);
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
    let _ = writeln!(
        out,
        r#"<text x="{left}" y="18" font-size="13">{} rebalances, {} partitions moved, converged: {}, violations: {}</text>"#,
        s.rebalances,
        s.partitions_moved,
        s.converged,
        s.violations.len()
    );
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
    for (i, tp) in lanes.iter().enumerate() {
        let y = top + lane_h * i as f64;
        if lane_h >= 10.0 {
            let _ = writeln!(
                out,
                r#"<text x="{}" y="{}" text-anchor="end">{}-{}</text>"#,
                left - 6.0,
                y + lane_h * 0.75,
                esc(tp.0),
                tp.1
            );
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
    // Step labels go to the first of four rows where they do not overlap the previous one.
    let mut row_end = [f64::MIN; 4];
    for e in &o.timeline {
        if matches!(e.event.as_str(), "lost" | "revoked" | "assigned" | "error") {
            continue;
        }
        let xx = x(e.t_ms);
        let _ = writeln!(
            out,
            r##"<line x1="{xx:.2}" y1="{}" x2="{xx:.2}" y2="{bottom}" stroke="#333" stroke-dasharray="3,3" stroke-width="0.7"/>"##,
            top - 4.0
        );
        let label = match &e.member {
            Some(m) => match &e.detail {
                Some(d) => format!("{} {} [{}]", e.event, m, d),
                None => format!("{} {}", e.event, m),
            },
            None => format!("{} {}", e.event, e.detail.clone().unwrap_or_default()),
        };
        let row = row_end.iter().position(|end| *end < xx).unwrap_or(3);
        row_end[row] = xx + 4.6 * label.chars().count() as f64;
        let _ =
            writeln!(out, r#"<text x="{xx:.2}" y="{}" font-size="8">{}</text>"#, 26.0 + 8.0 * row as f64, esc(&label));
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
    let _ = writeln!(out, r#"<text x="{left}" y="{}">0 ms</text>"#, bottom + 14.0);
    let _ = writeln!(out, r#"<text x="{}" y="{}" text-anchor="end">{end} ms</text>"#, left + width, bottom + 14.0);
    for (i, m) in members.iter().enumerate() {
        let lx = left + 160.0 * (i % 6) as f64;
        let ly = bottom + 30.0 + 18.0 * (i / 6) as f64;
        let _ = writeln!(out, r#"<rect x="{lx}" y="{}" width="12" height="12" fill="{}"/>"#, ly - 10.0, color(m));
        let _ = writeln!(out, r#"<text x="{}" y="{ly}">{}</text>"#, lx + 16.0, esc(m));
    }
    out.push_str("</svg>\n");
    out
}
