//! The page of `kcp serve`: the groups list at `/` (and `/clusters/{cluster}`) and a page per group
//! at `/groups/{cluster}/{group}`, server-rendered from the same JSON values `/api/v1` serves (so
//! what a person reads and what the API answers cannot disagree), with one small script
//! (`/assets/app.js`: sorting, filtering, live updates) and one style sheet (`/assets/app.css`),
//! both embedded in the binary. No inline script or style, nothing from another origin: the
//! Content-Security-Policy allows scripts, styles and connections from the server itself only.
//!
//! Every name that comes from the cluster (group, topic, member, client, host, rack, instance ids,
//! assignors, messages) goes through [`escape`], so markup, quotes and control characters in them
//! are shown as text.

use std::fmt::Write as _;

use serde_json::Value;

use super::api;
use super::state::{ClusterHandle, Shared};
use super::timeline;
use super::verdict::Verdict;

/// Rows of the groups list shown at first (the page-size control offers more): a list of 1,000
/// groups lays out one page; sorting and filtering still apply to every group.
const LIST_PAGE: usize = 100;
/// Rows of the offsets table shown at first (the page-size control offers more): a group of
/// 1,000 partitions lays out one page, not 1,000 rows.
const OFFSETS_PAGE: usize = 100;
/// Partitions charted at once (`?p=` beyond these is ignored).
pub(crate) const CHARTED: usize = 8;

/// The page's script, served at `/assets/app.js`.
pub(crate) const APP_JS: &str = include_str!("assets/app.js");
/// The page's style sheet, served at `/assets/app.css`.
pub(crate) const APP_CSS: &str = include_str!("assets/app.css");

/// A page rendered once and served many times: its HTML, and the same gzipped (most browsers
/// ask for gzip; compressing 200 kB per request would cost the answering thread milliseconds).
#[derive(Debug, Default)]
pub(crate) struct Rendered {
    pub(crate) html: bytes::Bytes,
    pub(crate) gzip: bytes::Bytes,
}

impl Rendered {
    pub(crate) fn new(html: String) -> Rendered {
        use std::io::Write as _;
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        // Writing to a Vec cannot fail.
        let gzip = encoder.write_all(html.as_bytes()).and_then(|()| encoder.finish()).unwrap_or_default();
        Rendered { html: html.into(), gzip: gzip.into() }
    }
}

/// Whether an `Accept-Encoding` value accepts gzip (`gzip` or `*`, with a q-value above 0).
pub(crate) fn accepts_gzip(accept_encoding: &str) -> bool {
    accept_encoding.split(',').any(|coding| {
        let mut parts = coding.split(';');
        let name = parts.next().unwrap_or("").trim();
        let refused = parts.any(|p| {
            let p = p.trim();
            p.strip_prefix("q=").or_else(|| p.strip_prefix("Q=")).and_then(|q| q.trim().parse::<f64>().ok())
                == Some(0.0)
        });
        (name.eq_ignore_ascii_case("gzip") || name == "*") && !refused
    })
}

/// HTML-escaped text: `& < > " '` as entities and control characters as their visible escapes, so
/// a name is text in element content and in quoted attribute values alike.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Shown as their escapes (`\n`, `\u{1b}`), as kcp's text output shows them: a numeric
            // reference would not do (U+0000 and U+0080-U+009F are not text in HTML).
            c if c.is_control() => out.extend(c.escape_default()),
            c => out.push(c),
        }
    }
    out
}

/// A path segment: every byte but RFC 3986's unreserved characters percent-encoded (a group id
/// may hold `/`, `?`, `#` or spaces).
pub(crate) fn segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

fn text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => escape(s),
        other => escape(&other.to_string()),
    }
}

/// Seconds shown to a tenth, sorted by the exact figure (`data-v`, only where the tenth is not
/// exact: most figures of a large group are 0). No end tag, no class: see [`open_cell`].
fn seconds_cell(v: &Value) -> String {
    match v.as_f64() {
        Some(n) => {
            let shown = format!("{n:.1}");
            if shown.parse::<f64>().ok() == Some(n) {
                format!("<td>{shown}")
            } else {
                format!("<td data-v=\"{n}\">{shown}")
            }
        }
        None => "<td>-".into(),
    }
}

/// A cell of a large table (the groups list, the offsets and history tables): no end tag (HTML
/// closes a cell at the next cell or row) and no class (the style sheet aligns the number columns
/// by position): the rows of a 1,000-partition group or a 1,000-group list are most of the page's
/// bytes, and these cut them by half.
fn open_cell(content: &str) -> String {
    format!("<td>{content}")
}

/// A number as an [`open_cell`] (`-` for an unknown value, which the script sorts as the
/// smallest).
fn open_num(v: &Value) -> String {
    match v {
        Value::Number(n) => format!("<td>{n}"),
        _ => "<td>-".into(),
    }
}

/// Burrow's status word, with a class for its colour (the word is always there), as an
/// [`open_cell`].
fn status_cell(v: &Value) -> String {
    match v.as_str() {
        Some(s) => format!("<td><span class=\"st-{0}\">{0}</span>", escape(s)),
        None => "<td>-".into(),
    }
}

fn head(title: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><link rel=\"stylesheet\" href=\"/assets/app.css\">\
         <script src=\"/assets/app.js\" defer></script></head>\n",
        escape(title)
    )
}

/// A sortable column header.
fn th(label: &str, kind: &str) -> String {
    format!("<th scope=\"col\" data-sort=\"{kind}\"><button type=\"button\">{label}</button></th>")
}

/// The cluster selector: one link per cluster, the shown one marked.
fn cluster_nav(shared: &Shared, current: &str) -> String {
    if shared.clusters.len() < 2 {
        return String::new();
    }
    let mut out = String::from("<nav aria-label=\"Clusters\"><ul class=\"clusters\">");
    for c in &shared.clusters {
        let name = escape(&c.spec.name);
        let mark = if c.spec.name == current { " aria-current=\"page\"" } else { "" };
        let _ = write!(out, "<li><a href=\"/clusters/{}\"{mark}>{name}</a></li>", segment(&c.spec.name));
    }
    out.push_str("</ul></nav>\n");
    out
}

/// The collection line: when, how long, and whether it failed.
fn collection_line(list: &Value) -> String {
    let mut out = format!(
        "<p id=\"collection\" data-live=\"1\">Collected {} (collection {}, {:.3} s)",
        text(&list["taken_at"]),
        text(&list["collections"]),
        list["collect_duration_s"].as_f64().unwrap_or(0.0)
    );
    if list["up"] == Value::Bool(false) {
        let _ =
            write!(out, " &middot; <strong class=\"down\">last collection failed: {}</strong>", text(&list["error"]));
    }
    out.push_str("</p>\n");
    out
}

/// `GET /` and `GET /clusters/{cluster}`: the groups list.
pub(crate) fn list_page(shared: &Shared, cluster: &ClusterHandle) -> String {
    let list = api::groups(cluster);
    let name = &cluster.spec.name;
    let events = format!("/api/v1/clusters/{}/events", segment(name));
    let mut out = head(&format!("Consumer groups of {name}: kcp serve"));
    let _ = write!(
        out,
        "<body data-events=\"{}\">\n<header><h1>Consumer groups of <span class=\"cluster\">{}</span></h1>",
        escape(&events),
        escape(name)
    );
    out.push_str(&cluster_nav(shared, name));
    out.push_str("</header>\n<main>\n");
    out.push_str(&collection_line(&list));
    out.push_str(
        "<div class=\"controls\"><label for=\"filter-groups\">Filter groups</label> \
         <input id=\"filter-groups\" type=\"search\" data-filter=\"groups\" data-col=\"0\" autocomplete=\"off\"></div>\n",
    );
    out.push_str(&pager("groups", "Groups per page", LIST_PAGE, groups_len(&list)));
    out.push_str("<table id=\"groups\" class=\"sortable\" data-paged=\"1\"><caption>One row per group; select a column header to sort</caption><thead><tr>");
    for (label, kind) in [
        ("Group", "text"),
        ("State", "text"),
        ("Protocol", "text"),
        ("Assignor", "text"),
        ("Members", "num"),
        ("Lag (messages)", "num"),
        ("Lag (seconds)", "num"),
        ("Status", "text"),
        ("Pending hand-overs", "num"),
        ("Rebalances (last hour)", "num"),
    ] {
        out.push_str(&th(label, kind));
    }
    out.push_str("</tr></thead>\n<tbody id=\"groups-body\" data-live=\"1\">");
    let empty = Vec::new();
    // One line for every row (a line end between rows would be text of the open last cell).
    for (i, g) in list["groups"].as_array().unwrap_or(&empty).iter().enumerate() {
        let id = g["group_id"].as_str().unwrap_or("");
        let _ = write!(
            out,
            "<tr{}><th scope=\"row\"><a href=\"/groups/{}/{}\">{}</a>{}{}{}{}{}{}{}{}{}",
            // Beyond the first page: laid out only when the script pages there.
            if i >= LIST_PAGE { " hidden" } else { "" },
            segment(name),
            segment(id),
            escape(id),
            open_cell(&text(&g["state"])),
            open_cell(&text(&g["group_protocol"])),
            open_cell(&text(&g["assignor"])),
            open_num(&g["members"]),
            open_num(&g["lag"]),
            seconds_cell(&g["lag_seconds"]),
            status_cell(&g["status"]),
            open_num(&g["pending_partitions"]),
            open_num(&g["rebalances_last_hour"]),
        );
    }
    out.push_str("</tbody></table>\n");
    let _ = writeln!(
        out,
        "<p class=\"links\"><a href=\"/api/v1/clusters/{0}/groups\">This list as JSON</a> &middot; \
         <a href=\"/metrics\">/metrics</a> &middot; <a href=\"/v3/kafka/{0}/consumer\">Burrow API</a></p>",
        segment(name)
    );
    out.push_str("</main>\n</body></html>\n");
    out
}

fn groups_len(list: &Value) -> usize {
    list["groups"].as_array().map_or(0, Vec::len)
}

/// The page-size control and the previous/next buttons of a paged table (`data-paged`), which the
/// script drives; `rows` the table's rows, `size` the first page's.
fn pager(table: &str, label: &str, size: usize, rows: usize) -> String {
    let options: String = [50, 100, 500, 0]
        .into_iter()
        .map(|n| {
            let shown = if n == 0 { "all".to_owned() } else { n.to_string() };
            let selected = if n == size { " selected" } else { "" };
            format!("<option value=\"{n}\"{selected}>{shown}</option>")
        })
        .collect();
    format!(
        "<div class=\"controls pager\" data-pager=\"{table}\"><label for=\"{table}-size\">{label}</label> \
         <select id=\"{table}-size\" data-page-size=\"{table}\">{options}</select> \
         <button type=\"button\" id=\"{table}-prev\" data-page=\"prev\">Previous page</button> \
         <span id=\"{table}-info\" class=\"page-info\" aria-live=\"polite\">rows 1-{} of {rows}</span> \
         <button type=\"button\" id=\"{table}-next\" data-page=\"next\">Next page</button></div>\n",
        rows.min(size)
    )
}

/// `topic: 0,1,2; other: 4` from `[{"topic", "partitions"}]`.
fn partition_groups(v: &Value) -> String {
    let Some(groups) = v.as_array() else { return String::new() };
    let parts: Vec<String> = groups
        .iter()
        .map(|g| {
            let partitions: Vec<String> =
                g["partitions"].as_array().map(|p| p.iter().map(ToString::to_string).collect()).unwrap_or_default();
            format!("{}: {}", text(&g["topic"]), partitions.join(","))
        })
        .collect();
    parts.join("; ")
}

/// `topic: 0,1` of (topic, partition) pairs, in order.
fn pairs(list: &[(String, i64)]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < list.len() {
        let topic = &list[i].0;
        let mut partitions = Vec::new();
        while i < list.len() && &list[i].0 == topic {
            partitions.push(list[i].1.to_string());
            i += 1;
        }
        out.push(format!("{}: {}", escape(topic), partitions.join(",")));
    }
    out.join("; ")
}

/// The classic group's generation: one past the highest its members claim (as `--format text`).
fn classic_generation(group: &Value) -> String {
    let highest = group["members"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["subscription"]["generation_id"].as_i64())
        .filter(|g| *g >= 0)
        .max();
    match highest {
        Some(g) => (g + 1).to_string(),
        None => "unknown".into(),
    }
}

fn dl_row(out: &mut String, term: &str, value: &str) {
    let _ = write!(out, "<div><dt>{term}</dt><dd>{value}</dd></div>");
}

/// The upgrade-check verdict: the word (with its class for colour), then the first check that
/// blocks it or is undecided, or why it is not known.
fn verdict_html(v: &Verdict) -> String {
    let mut out = format!(
        "<span id=\"upgrade-verdict\" class=\"verdict v-{0}\" data-verdict=\"{0}\" data-check=\"{1}\">{0}</span>",
        v.verdict,
        v.first.as_ref().map_or("", |f| f.0)
    );
    match (&v.first, &v.error) {
        (_, Some(e)) => {
            let _ = write!(out, ": the coordinator could not be asked ({})", escape(e));
        }
        (Some((name, evidence, advice)), None) => {
            let _ = write!(out, ": <span class=\"check\">{name}</span>: {}", escape(evidence));
            if let Some(a) = advice {
                let _ = write!(out, " &rarr; {}", escape(a));
            }
        }
        (None, None) => out.push_str(" (every check passed)"),
    }
    out
}

/// `GET /groups/{cluster}/{group}`, or `None` for a group the server does not know.
pub(crate) fn group_page(
    shared: &Shared,
    cluster: &ClusterHandle,
    id: &str,
    verdict: Option<&Verdict>,
    selected: &[(String, i32)],
) -> Option<String> {
    let group = api::group(cluster, id)?;
    let state = cluster.snapshot().groups.get(id).cloned();
    let generations = state.as_ref().map(|g| g.generations.clone()).unwrap_or_default();
    let history = api::history(cluster, id).unwrap_or(Value::Null);
    let name = &cluster.spec.name;
    let events = format!("/api/v1/clusters/{}/events", segment(name));
    let json_href = format!("/api/v1/clusters/{}/groups/{}", segment(name), segment(id));
    let consumer = group["type"] == "consumer";
    let mut out = head(&format!("{id}: kcp serve"));
    let _ = write!(
        out,
        "<body data-events=\"{}\" data-group=\"{}\">\n<header><p class=\"crumbs\"><a href=\"/clusters/{}\">Consumer groups of {}</a></p>\
         <h1>Group <span class=\"group-id\">{}</span></h1>",
        escape(&events),
        escape(id),
        segment(name),
        escape(name),
        escape(id)
    );
    out.push_str(&cluster_nav(shared, name));
    out.push_str("</header>\n<main>\n");

    // Header.
    out.push_str("<section aria-labelledby=\"h-summary\"><h2 id=\"h-summary\">Summary</h2><dl id=\"summary\" class=\"summary\" data-live=\"1\">");
    dl_row(&mut out, "State", &text(&group["state"]));
    dl_row(&mut out, "Protocol", if consumer { "consumer" } else { "classic" });
    let assignor = if consumer { text(&group["assignor"]) } else { text(&group["protocol"]) };
    dl_row(&mut out, "Assignor", &assignor);
    if consumer {
        dl_row(&mut out, "Group epoch", &text(&group["group_epoch"]));
        dl_row(&mut out, "Assignment epoch", &text(&group["assignment_epoch"]));
    } else {
        dl_row(&mut out, "Generation", &classic_generation(&group));
    }
    let c = &group["coordinator"];
    dl_row(
        &mut out,
        "Coordinator",
        &format!("node {} ({}:{})", text(&c["node_id"]), text(&c["host"]), text(&c["port"])),
    );
    let members = group["members"].as_array().cloned().unwrap_or_default();
    let offsets = group["offsets"].as_array().cloned().unwrap_or_default();
    dl_row(&mut out, "Members", &members.len().to_string());
    dl_row(&mut out, "Partitions", &offsets.len().to_string());
    dl_row(&mut out, "Lag (messages)", &format!("<span id=\"total-lag\">{}</span>", text(&group["lag"]["total"])));
    let seconds = group["lag_seconds"].as_f64().map_or("-".into(), |s| format!("{s:.1}"));
    dl_row(&mut out, "Lag (seconds, max)", &format!("<span id=\"max-lag-seconds\">{seconds}</span>"));
    dl_row(
        &mut out,
        "Status",
        &format!("<span class=\"status st-{0}\" id=\"group-status\">{0}</span>", text(&group["status"])),
    );
    dl_row(&mut out, "Pending hand-overs", &text(&group["pending_partitions"]));
    dl_row(
        &mut out,
        "Rebalances",
        &format!("{} seen, {} in the last hour", text(&group["rebalances"]), text(&group["rebalances_last_hour"])),
    );
    if let Some(v) = verdict {
        let term = if v.direction == "downgrade" { "Downgrade check" } else { "Upgrade check" };
        let _ = write!(out, "<div class=\"wide\"><dt>{term}</dt><dd>{}</dd></div>", verdict_html(v));
    }
    dl_row(&mut out, "Collected", &text(&group["seen_at"]));
    out.push_str("</dl>\n");
    let _ = writeln!(out, "<p class=\"links\"><a href=\"{json_href}\">This group as JSON</a> &middot; <a href=\"{json_href}/history\">Lag history as JSON</a></p></section>");

    // Findings.
    let findings = group["diagnostics"].as_array().cloned().unwrap_or_default();
    out.push_str("<section aria-labelledby=\"h-findings\"><h2 id=\"h-findings\">Findings</h2><ul id=\"findings\" data-live=\"1\">");
    if findings.is_empty() {
        out.push_str("<li>None.</li>");
    }
    for f in &findings {
        let _ = write!(out, "<li><span class=\"kind\">{}</span>: {}</li>", text(&f["kind"]), text(&f["message"]));
    }
    out.push_str("</ul></section>\n");

    // Rebalance timeline.
    out.push_str(
        "<section aria-labelledby=\"h-timeline\"><h2 id=\"h-timeline\">Rebalance timeline</h2>\n<div id=\"timeline\" data-live=\"1\">",
    );
    let now_ms = u64::try_from(
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_millis(),
    )
    .unwrap_or(u64::MAX);
    out.push_str(&timeline::render(id, &generations, now_ms));
    out.push_str("</div></section>\n");

    // Who owns what, and which hand-overs are pending, from the offsets rows.
    let mut gives: std::collections::BTreeMap<&str, Vec<(String, i64)>> = Default::default();
    let mut receives: std::collections::BTreeMap<&str, Vec<(String, i64)>> = Default::default();
    for o in &offsets {
        let to = o["pending_to"].as_str();
        // A withheld partition is given up by its owner before anyone receives it.
        if to.is_some() || o["withheld"] == true {
            let tp = (o["topic"].as_str().unwrap_or("").to_owned(), o["partition"].as_i64().unwrap_or(-1));
            if let Some(from) = o["owner"].as_str() {
                gives.entry(from).or_default().push(tp.clone());
            }
            if let Some(to) = to {
                receives.entry(to).or_default().push(tp);
            }
        }
    }
    let client_of =
        |member: &str| -> Option<&Value> { members.iter().find(|m| m["member_id"].as_str() == Some(member)) };

    // Members.
    out.push_str("<section aria-labelledby=\"h-members\"><h2 id=\"h-members\">Members</h2>\n");
    out.push_str(
        "<div class=\"controls\"><label for=\"filter-members\">Filter members</label> \
         <input id=\"filter-members\" type=\"search\" data-filter=\"members\" data-col=\"*\" autocomplete=\"off\"></div>\n",
    );
    out.push_str("<table id=\"members\" class=\"sortable\"><thead><tr>");
    for (label, kind) in [
        ("Member id", "text"),
        ("Client id", "text"),
        ("Host", "text"),
        ("Rack", "text"),
        ("Instance id", "text"),
        ("Subscription", "text"),
        ("Owned", "text"),
        ("Assigned", "text"),
        ("Hands over", "text"),
        ("Receives", "text"),
        ("Payloads", "text"),
    ] {
        out.push_str(&th(label, kind));
    }
    out.push_str("</tr></thead>\n<tbody id=\"members-body\" data-live=\"1\">\n");
    for m in &members {
        let member_id = m["member_id"].as_str().unwrap_or("");
        let (rack, subscription, owned, assigned) = if consumer {
            let topics: Vec<String> = m["subscribed_topics"].as_array().into_iter().flatten().map(text).collect();
            let mut subscription = topics.join(", ");
            if let Some(regex) = m["subscribed_topic_regex"].as_str() {
                let _ = write!(subscription, " /{}/", escape(regex));
            }
            (
                text(&m["rack_id"]),
                subscription,
                partition_groups(&m["assignment"]),
                partition_groups(&m["target_assignment"]),
            )
        } else {
            let s = &m["subscription"];
            let topics: Vec<String> = s["topics"].as_array().into_iter().flatten().map(text).collect();
            (
                text(&s["rack_id"]),
                topics.join(", "),
                partition_groups(&s["owned_partitions"]),
                partition_groups(&m["assignment"]["assigned_partitions"]),
            )
        };
        let payloads = if consumer {
            String::from("-")
        } else {
            format!(
                "<details><summary>decoded</summary><pre>{}</pre></details>",
                escape(
                    &serde_json::to_string_pretty(
                        &serde_json::json!({"subscription": m["subscription"], "assignment": m["assignment"]})
                    )
                    .unwrap_or_default()
                )
            )
        };
        let _ = writeln!(
            out,
            "<tr><th scope=\"row\" class=\"id\">{}</th><td>{}</td><td>{}</td><td>{rack}</td><td>{}</td><td>{subscription}</td>\
             <td>{owned}</td><td>{assigned}</td><td>{}</td><td>{}</td><td>{payloads}</td></tr>",
            escape(member_id),
            text(&m["client_id"]),
            text(&m["client_host"]),
            text(&m["group_instance_id"]),
            pairs(gives.get(member_id).map_or(&[][..], Vec::as_slice)),
            pairs(receives.get(member_id).map_or(&[][..], Vec::as_slice)),
        );
    }
    out.push_str("</tbody></table></section>\n");

    // Offsets.
    out.push_str("<section aria-labelledby=\"h-offsets\"><h2 id=\"h-offsets\">Offsets</h2>\n");
    out.push_str(
        "<div class=\"controls\"><label for=\"filter-topic\">Filter by topic</label> \
         <input id=\"filter-topic\" type=\"search\" data-filter=\"offsets\" data-col=\"0\" autocomplete=\"off\"> \
         <label for=\"filter-member\">Filter by member</label> \
         <input id=\"filter-member\" type=\"search\" data-filter=\"offsets\" data-col=\"6,8\" autocomplete=\"off\"></div>\n",
    );
    out.push_str(&pager("offsets", "Rows per page", OFFSETS_PAGE, offsets.len()));
    out.push_str("<table id=\"offsets\" class=\"sortable\" data-paged=\"1\" data-pick=\"12\"><thead><tr>");
    for (label, kind) in [
        ("Topic", "text"),
        ("Partition", "num"),
        ("Current offset", "num"),
        ("Log end offset", "num"),
        ("Lag", "num"),
        ("Lag (seconds)", "num"),
        ("Consumer id", "text"),
        ("Host", "text"),
        ("Client id", "text"),
        ("Pending to", "text"),
        ("Status", "text"),
        ("Error", "text"),
        ("Chart", "text"),
    ] {
        out.push_str(&th(label, kind));
    }
    out.push_str("</tr></thead>\n<tbody id=\"offsets-body\" data-live=\"1\">");
    // One line for every row, of open cells (see `open_cell`). The Chart column's boxes are made
    // by the script for the rows it shows (a box does nothing without it), checked from the
    // page's `?p=`: a 1,000-partition group sends and parses no 1,000 inputs.
    for (i, o) in offsets.iter().enumerate() {
        let owner = o["owner"].as_str();
        let owner_member = owner.and_then(client_of);
        let method = o["lag_seconds_method"].as_str().map(|m| format!(" title=\"{}\"", escape(m))).unwrap_or_default();
        let seconds = seconds_cell(&o["lag_seconds"]).replacen("<td", &format!("<td{method}"), 1);
        let _ = write!(
            out,
            "<tr{}>{}{}{}{}{}{seconds}{}{}{}{}{}{}",
            // Beyond the first page: laid out only when the script pages there.
            if i >= OFFSETS_PAGE { " hidden" } else { "" },
            open_cell(&text(&o["topic"])),
            open_num(&o["partition"]),
            open_num(&o["committed_offset"]),
            open_num(&o["log_end_offset"]),
            open_num(&o["lag"]),
            open_cell(&owner.map_or("-".into(), escape)),
            open_cell(&owner_member.map_or("-".into(), |m| text(&m["client_host"]))),
            open_cell(&owner_member.map_or("-".into(), |m| text(&m["client_id"]))),
            open_cell(&pending_cell(o)),
            status_cell(&o["status"]),
            open_cell(&o["error"]["message"].as_str().map_or(String::new(), escape)),
        );
    }
    out.push_str("</tbody></table></section>\n");

    // Lag over time.
    out.push_str("<section aria-labelledby=\"h-history\"><h2 id=\"h-history\">Lag over time</h2>\n<div id=\"history\" data-live=\"1\">");
    out.push_str(&history_block(&history));
    out.push_str(
        "</div>\n<h3 id=\"h-partitions\">Selected partitions</h3><div id=\"partition-chart\" data-live=\"1\">",
    );
    out.push_str(&partitions_block(state.as_deref(), selected));
    out.push_str("</div></section>\n");
    out.push_str("</main>\n</body></html>\n");
    Some(out)
}

/// `?p=topic:partition` values, the partition after the last colon (a topic name may hold one);
/// at most [`CHARTED`], malformed ones ignored.
pub(crate) fn selected_partitions<'a>(values: impl Iterator<Item = &'a str>) -> Vec<(String, i32)> {
    let mut out: Vec<(String, i32)> = Vec::new();
    for v in values {
        let Some((topic, partition)) = v.rsplit_once(':') else { continue };
        let Ok(partition) = partition.parse::<i32>() else { continue };
        let pick = (topic.to_owned(), partition);
        if !out.contains(&pick) && out.len() < CHARTED {
            out.push(pick);
        }
    }
    out
}

/// The selected partitions' lag over the samples of their status windows (one line each, told
/// apart by dash and by its legend, not by colour alone), and the same as a table.
fn partitions_block(state: Option<&super::state::GroupState>, selected: &[(String, i32)]) -> String {
    let mut out = String::new();
    if selected.is_empty() {
        out.push_str("<p>Tick partitions in the offsets table's Chart column to chart their lag here.</p>");
        return out;
    }
    let series: Vec<(&(String, i32), Vec<super::state::WindowPoint>)> = selected
        .iter()
        .map(|tp| {
            let window = state
                .and_then(|g| {
                    g.report
                        .offsets
                        .iter()
                        .zip(&g.partitions)
                        .find(|(o, _)| o.topic == tp.0 && o.partition == tp.1)
                        .map(|(_, p)| p.window.clone())
                })
                .unwrap_or_default();
            (tp, window)
        })
        .collect();
    let all: Vec<&super::state::WindowPoint> = series.iter().flat_map(|(_, w)| w.iter()).collect();
    let _ = write!(
        out,
        "<p>Lag of {} partition(s) over the samples of their status windows (the last collections the lag \
         status is judged on).</p>",
        selected.len()
    );
    if !all.is_empty() {
        let (w, h, pad) = (720.0_f64, 180.0_f64, 40.0_f64);
        let first = all.iter().map(|p| p.at_ms).min().unwrap_or(0) as f64;
        let last = all.iter().map(|p| p.at_ms).max().unwrap_or(0) as f64;
        let span = (last - first).max(1.0);
        let max_lag = all.iter().filter_map(|p| p.lag).max().unwrap_or(0).max(1) as f64;
        let _ = write!(
            out,
            "<svg class=\"chart\" viewBox=\"0 0 {w} {h}\" role=\"img\" aria-labelledby=\"partition-chart-title\">\
             <title id=\"partition-chart-title\">Lag of the selected partitions, up to {max_lag} messages</title>\
             <line x1=\"{pad}\" y1=\"{b}\" x2=\"{r}\" y2=\"{b}\" class=\"axis\"/>",
            b = h - pad / 2.0,
            r = w - pad,
        );
        for (i, ((topic, partition), window)) in series.iter().enumerate() {
            let points: Vec<String> = window
                .iter()
                .filter_map(|p| {
                    let lag = p.lag? as f64;
                    let x = pad + (p.at_ms as f64 - first) / span * (w - 2.0 * pad);
                    Some(format!("{x:.1},{:.1}", h - pad / 2.0 - lag / max_lag * (h - pad)))
                })
                .collect();
            let _ = write!(
                out,
                "<polyline class=\"series s{i}\" points=\"{}\"><title>{}-{partition}</title></polyline>",
                points.join(" "),
                escape(topic)
            );
            let _ = write!(
                out,
                "<text x=\"{pad}\" y=\"{}\" class=\"legend s{i}\">{}-{partition}</text>",
                14 + 12 * i,
                escape(topic)
            );
        }
        out.push_str("</svg>");
    }
    out.push_str(
        "<details><summary>The chart's data as a table</summary><table id=\"partition-table\"><thead><tr>\
         <th scope=\"col\">Partition</th><th scope=\"col\">Collected</th><th scope=\"col\">Committed offset</th>\
         <th scope=\"col\">Lag</th></tr></thead><tbody id=\"partition-body\">",
    );
    for ((topic, partition), window) in &series {
        if window.is_empty() {
            let _ =
                write!(out, "<tr><td>{}-{partition}</td><td>no sample</td><td>-</td><td>-</td></tr>", escape(topic));
        }
        for p in window.iter().rev() {
            let _ = write!(
                out,
                "<tr><td>{}-{partition}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                escape(topic),
                crate::pcap::rfc3339_ms(std::time::Duration::from_millis(p.at_ms)),
                p.offset,
                p.lag.map_or_else(|| "-".to_owned(), |l| l.to_string())
            );
        }
    }
    out.push_str("</tbody></table></details>");
    out
}

/// The lag chart (inline SVG, no script) and its data as a table.
fn history_block(history: &Value) -> String {
    let points = history["points"].as_array().cloned().unwrap_or_default();
    let mut out = String::new();
    if points.is_empty() {
        out.push_str("<p>No collection yet.</p>");
        return out;
    }
    let _ = write!(
        out,
        "<p>The last {} collections (the server keeps {} per group).</p>",
        points.len(),
        text(&history["kept"])
    );
    let (w, h, pad) = (720.0_f64, 180.0_f64, 40.0_f64);
    let first = points[0]["at_ms"].as_f64().unwrap_or(0.0);
    let last = points[points.len() - 1]["at_ms"].as_f64().unwrap_or(first);
    let span = (last - first).max(1.0);
    // A point's total lag is a figure only where some partition's lag was known (a group with no
    // commit sums to 0 but has no lag to show).
    let lag_of = |p: &Value| if p["lag_known"] == false { None } else { p["lag"].as_f64() };
    let max_lag = points.iter().filter_map(lag_of).reduce(f64::max);
    let max_s = points.iter().filter_map(|p| p["lag_seconds"].as_f64()).reduce(f64::max);
    let x = |p: &Value| pad + (p["at_ms"].as_f64().unwrap_or(first) - first) / span * (w - 2.0 * pad);
    // The scale's floor (1) keeps a flat 0 line on the axis; it is never shown as a value.
    let line = |value: &dyn Fn(&Value) -> Option<f64>, max: Option<f64>| -> String {
        let max = max.unwrap_or(0.0).max(1.0);
        points
            .iter()
            .filter_map(|p| value(p).map(|v| format!("{:.1},{:.1}", x(p), h - pad / 2.0 - v / max * (h - pad))))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let (lag_words, seconds_words) = chart_scale_words(max_lag, max_s);
    let _ = write!(
        out,
        "<svg class=\"chart\" viewBox=\"0 0 {w} {h}\" role=\"img\" aria-labelledby=\"chart-title\">\
         <title id=\"chart-title\">Total lag ({lag_words}, solid) and largest lag in seconds ({seconds_words}, dashed) over the last {} collections</title>\
         <line x1=\"{pad}\" y1=\"{b}\" x2=\"{r}\" y2=\"{b}\" class=\"axis\"/>\
         <polyline class=\"lag\" points=\"{}\"/><polyline class=\"lag-seconds\" points=\"{}\"/>\
         <text x=\"{pad}\" y=\"14\" class=\"legend\">lag: {lag_words} (solid) &#183; lag seconds: {seconds_words} (dashed)</text></svg>",
        points.len(),
        line(&lag_of, max_lag),
        line(&|p: &Value| p["lag_seconds"].as_f64(), max_s),
        b = h - pad / 2.0,
        r = w - pad,
    );
    out.push_str(
        "<details><summary>The chart's data as a table</summary><table id=\"history-table\"><thead><tr>\
         <th scope=\"col\">Collected</th><th scope=\"col\">Lag (messages)</th><th scope=\"col\">Lag (seconds, max)</th></tr></thead><tbody id=\"history-body\">",
    );
    for p in points.iter().rev() {
        let lag = if p["lag_known"] == false { Value::Null } else { p["lag"].clone() };
        let _ = write!(out, "<tr>{}{}{}", open_cell(&text(&p["at"])), open_num(&lag), seconds_cell(&p["lag_seconds"]));
    }
    out.push_str("</tbody></table></details>");
    out
}

/// The lag chart's words for its two scales: the largest values charted, or that none is known
/// (a group with no commit, or none measured in seconds), never the scale's floor as a value.
fn chart_scale_words(max_lag: Option<f64>, max_seconds: Option<f64>) -> (String, String) {
    let lag = match max_lag {
        Some(m) => format!("max {m} messages"),
        None => "no lag known (no partition has a committed offset and a log end)".to_owned(),
    };
    let seconds = match max_seconds {
        Some(m) => format!("max {m:.1} s"),
        None => "none measured".to_owned(),
    };
    (lag, seconds)
}

/// An offsets row's hand-over, as text: the receiver, or a cooperative round's withholding.
fn pending_cell(o: &Value) -> String {
    match (o["pending_to"].as_str(), o["withheld"] == true) {
        (Some(to), _) => escape(to),
        // The owner is revoking it; the next round assigns it.
        (None, true) => "withheld (being revoked)".into(),
        (None, false) => "-".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hand_over_shows_its_receiver_or_that_it_is_withheld() {
        let row =
            |pending_to: Value, withheld: bool| serde_json::json!({"pending_to": pending_to, "withheld": withheld});
        assert_eq!(pending_cell(&row(Value::from("<b>"), false)), "&lt;b&gt;");
        assert_eq!(pending_cell(&row(Value::Null, true)), "withheld (being revoked)");
        assert_eq!(pending_cell(&row(Value::Null, false)), "-");
    }

    /// A group whose rows all show lag `-` (nothing committed): the caption said "max 1
    /// messages", the chart's scale floor printed as a value.
    #[test]
    fn a_chart_of_no_known_lag_says_so_and_prints_no_scale_floor() {
        let point = |at_ms: u64, known: bool| serde_json::json!({"at": "t", "at_ms": at_ms, "lag": 0, "lag_known": known, "lag_seconds": null});
        let unknown = serde_json::json!({"kept": 360, "points": [point(1_000, false), point(2_000, false)]});
        let html = history_block(&unknown);
        assert!(html.contains("lag: no lag known"), "{html}");
        assert!(html.contains("lag seconds: none measured"), "{html}");
        assert!(!html.contains("max 1 messages") && !html.contains("max 1.0 s"), "{html}");
        assert!(html.contains("<polyline class=\"lag\" points=\"\"/>"), "no unknown lag drawn as 0: {html}");
        assert!(html.contains("<tr><td>t<td>-<td>-"), "the table says unknown too: {html}");
        let known = serde_json::json!({"kept": 360, "points": [point(1_000, true)]});
        assert!(history_block(&known).contains("lag: max 0 messages"), "a measured 0 is a value");
        assert_eq!(chart_scale_words(Some(24.0), Some(3.25)), ("max 24 messages".into(), "max 3.2 s".into()));
    }

    #[test]
    fn gzip_is_sent_only_where_accepted() {
        assert!(accepts_gzip("gzip, deflate, br"));
        assert!(accepts_gzip("br;q=1.0, gzip;q=0.8") && accepts_gzip("*"));
        assert!(!accepts_gzip("gzip;q=0") && !accepts_gzip("identity") && !accepts_gzip("br, x-gzip2"));
        let page = Rendered::new("<p>x</p>".repeat(100));
        let mut plain = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&page.gzip[..]), &mut plain).unwrap();
        assert_eq!(plain.as_bytes(), &page.html[..]);
    }

    #[test]
    fn names_are_text() {
        assert_eq!(
            escape("<script>alert(\"x\")</script>'q"),
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39;q"
        );
        assert_eq!(escape("a\u{1b}[31m\u{0}b\u{7f}\u{85}\n"), "a\\u{1b}[31m\\u{0}b\\u{7f}\\u{85}\\n");
        assert_eq!(segment("a/b c?<\u{e9}"), "a%2Fb%20c%3F%3C%C3%A9");
    }

    #[test]
    fn charted_partitions_are_parsed_bounded_and_deduplicated() {
        let picked = selected_partitions(["a:b:3", "t:1", "t:1", "bad", "t:x", "t:-1"].into_iter());
        assert_eq!(picked, [("a:b".to_owned(), 3), ("t".to_owned(), 1), ("t".to_owned(), -1)]);
        let many: Vec<String> = (0..20).map(|p| format!("t:{p}")).collect();
        assert_eq!(selected_partitions(many.iter().map(String::as_str)).len(), CHARTED);
    }

    #[test]
    fn the_verdict_names_its_first_blocking_check_as_text() {
        let v = Verdict {
            direction: "upgrade",
            verdict: "blocked",
            first: Some(("assignor", "uses <my-assignor>".into(), Some("use \"range\"".into()))),
            error: None,
        };
        let html = verdict_html(&v);
        assert!(html.contains("data-verdict=\"blocked\" data-check=\"assignor\">blocked</span>"), "{html}");
        assert!(html.contains("uses &lt;my-assignor&gt; &rarr; use &quot;range&quot;"), "{html}");
        let unknown = Verdict { verdict: "unknown", first: None, error: Some("timeout: <x>".into()), ..v };
        assert!(verdict_html(&unknown).contains("could not be asked (timeout: &lt;x&gt;)"));
    }
}
