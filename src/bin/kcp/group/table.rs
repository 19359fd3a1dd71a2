//! The text tables of `--format text`, drawn from the JSON so that text shows exactly what the
//! JSON says.

use serde_json::Value;

use crate::text::clean;

/// `audit 1; orders 0-2,5` from partition groups (JSON form), topics sorted, so that a member's
/// claimed and assigned partitions read alike whatever order each payload lists them in.
fn partitions_text(groups: &Value) -> String {
    let Some(groups) = groups.as_array() else { return "-".into() };
    let mut groups: Vec<&Value> = groups.iter().collect();
    groups.sort_by(|a, b| a["topic"].as_str().cmp(&b["topic"].as_str()));
    let parts: Vec<String> = groups
        .iter()
        .filter_map(|g| {
            let topic = g.get("topic")?.as_str()?;
            let ids: Vec<i64> = g.get("partitions")?.as_array()?.iter().filter_map(Value::as_i64).collect();
            Some(format!("{} {}", clean(topic), ranges(&ids)))
        })
        .collect();
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join("; ")
    }
}

/// `0-2,5` (ids sorted first; duplicates kept visible as repeats).
fn ranges(ids: &[i64]) -> String {
    let mut ids = ids.to_vec();
    ids.sort_unstable();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let start = ids[i];
        let mut end = start;
        while i + 1 < ids.len() && ids[i + 1] == end + 1 {
            i += 1;
            end = ids[i];
        }
        out.push(if end > start { format!("{start}-{end}") } else { start.to_string() });
        i += 1;
    }
    out.join(",")
}

/// A table with a header, columns as wide as their widest cell.
pub(super) fn table<const N: usize>(header: &[&str; N], rows: &[[String; N]], indent: &str) -> String {
    let mut widths: [usize; N] = header.map(|h| h.chars().count());
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let line = |cells: Vec<&str>, out: &mut String| {
        out.push_str(indent);
        let last = cells.len() - 1;
        for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
            out.push_str(cell);
            if i < last {
                out.push_str(&" ".repeat(w - cell.chars().count() + 2));
            }
        }
        out.push('\n');
    };
    line(header.to_vec(), &mut out);
    for row in rows {
        line(row.iter().map(String::as_str).collect(), &mut out);
    }
    out
}

fn str_of(v: &Value) -> String {
    match v {
        Value::Null => "-".into(),
        Value::String(s) if s.is_empty() => "-".into(),
        Value::String(s) => clean(s).into_owned(),
        other => other.to_string(),
    }
}

/// The table of one described group (from its JSON, so text shows exactly what JSON says;
/// `extra` has each classic member's generation and claims).
pub(super) fn text_of_group(v: &Value, extra: &[Value]) -> String {
    let consumer = v["type"] == "consumer";
    let c = &v["coordinator"];
    let mut out = format!(
        "group {} ({}, {}, {}; coordinator {} at {}:{})\n",
        str_of(&v["group_id"]),
        str_of(&v["type"]),
        str_of(&v["state"]),
        if consumer {
            format!(
                "assignor {}, group epoch {}, assignment epoch {}",
                str_of(&v["assignor"]),
                v["group_epoch"],
                v["assignment_epoch"]
            )
        } else {
            // DescribeGroups does not report the generation: each member claims, in its
            // subscription, the generation it joined from, so the group's is one past the highest.
            let current = extra.iter().filter_map(|e| e["generation"].as_i64()).max();
            format!(
                "protocol {}, generation {}",
                str_of(&v["protocol"]),
                current.map_or_else(|| "unknown".to_owned(), |g| (g + 1).to_string())
            )
        },
        c["node_id"],
        str_of(&c["host"]),
        c["port"]
    );
    let members = v["members"].as_array().cloned().unwrap_or_default();
    if members.is_empty() {
        out.push_str("  no members\n");
    }
    let rows: Vec<[String; 6]> = members
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let mut member = str_of(&m["member_id"]);
            if let Some(instance) = m["group_instance_id"].as_str() {
                member.push_str(&format!(" (static {})", clean(instance)));
            }
            if consumer {
                if m["member_type"] == "classic" {
                    member.push_str(" (classic)");
                }
                [
                    member,
                    str_of(&m["client_id"]),
                    str_of(&m["rack_id"]),
                    format!("epoch {}", m["member_epoch"]),
                    partitions_text(&m["assignment"]),
                    partitions_text(&m["target_assignment"]),
                ]
            } else {
                let sub = &m["subscription"];
                let asg = &m["assignment"];
                let payload = |p: &Value, groups: &Value| {
                    if p.is_null() {
                        "(rebalancing)".to_owned()
                    } else if p.get("error").is_some() {
                        format!("undecodable: {}", str_of(&p["error"]["kind"]))
                    } else if p.get("hex").is_some() {
                        "(not a consumer payload)".to_owned()
                    } else {
                        partitions_text(groups)
                    }
                };
                let generation = extra.get(i).map_or(Value::Null, |e| e["generation"].clone());
                let owned = extra.get(i).map_or(Value::Null, |e| e["owned"].clone());
                [
                    member,
                    str_of(&m["client_id"]),
                    if sub.get("kind").is_some() { str_of(&sub["rack_id"]) } else { "-".into() },
                    str_of(&generation),
                    payload(sub, &owned),
                    payload(asg, &asg["assigned_partitions"]),
                ]
            }
        })
        .collect();
    if !rows.is_empty() {
        let header = if consumer {
            ["MEMBER", "CLIENT", "RACK", "EPOCH", "OWNED", "TARGET"]
        } else {
            ["MEMBER", "CLIENT", "RACK", "JOINED FROM GEN", "OWNED AT JOIN", "ASSIGNED NOW"]
        };
        out.push_str(&table(&header, &rows, "  "));
    }
    let diagnostics = v["diagnostics"].as_array().cloned().unwrap_or_default();
    if diagnostics.is_empty() {
        out.push_str("  no findings\n");
    } else {
        out.push_str("  findings:\n");
        for d in &diagnostics {
            out.push_str(&format!("    {}: {}\n", str_of(&d["kind"]), str_of(&d["message"])));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn partition_ranges_read_at_a_glance() {
        assert_eq!(ranges(&[5, 0, 1, 2]), "0-2,5");
        assert_eq!(ranges(&[3]), "3");
        assert_eq!(ranges(&[1, 1]), "1,1");
        assert_eq!(
            partitions_text(
                &json!([{"topic": "orders", "partitions": [0, 1, 2, 5]}, {"topic": "a\u{1b}", "partitions": [1]}])
            ),
            "a\\u{1b} 1; orders 0-2,5"
        );
        assert_eq!(partitions_text(&json!([])), "-");
    }

    #[test]
    fn a_classic_group_shows_its_generation_and_what_each_column_is() {
        let member = |id: &str, assigned: Value| {
            json!({"member_id": id, "group_instance_id": null, "client_id": id,
                   "subscription": {"kind": "subscription", "rack_id": null},
                   "assignment": {"kind": "assignment", "assigned_partitions": assigned}})
        };
        let group = json!({
            "group_id": "g", "type": "classic", "state": "Stable", "protocol": "cooperative-sticky",
            "coordinator": {"node_id": 1, "host": "h", "port": 9092},
            "members": [member("a", json!([{"topic": "orders", "partitions": [1]}, {"topic": "audit", "partitions": [0, 2]}]))],
            "diagnostics": [],
        });
        let extra = [
            json!({"generation": 4, "owned": [{"topic": "audit", "partitions": [0, 2]}, {"topic": "orders", "partitions": [1]}]}),
        ];
        let text = text_of_group(&group, &extra);
        assert!(text.starts_with("group g (classic, Stable, protocol cooperative-sticky, generation 5;"), "{text}");
        assert!(text.contains("JOINED FROM GEN  OWNED AT JOIN"), "{text}");
        assert!(text.contains("ASSIGNED NOW"), "{text}");
        // Claimed and assigned read alike although the assignment lists orders first.
        assert_eq!(text.matches("audit 0,2; orders 1").count(), 2, "{text}");
        let unknown = text_of_group(&group, &[json!({"generation": null, "owned": []})]);
        assert!(unknown.contains("generation unknown;"), "{unknown}");
    }

    #[test]
    fn tables_align_their_columns() {
        let rows = [["a".to_string(), "bbb".to_string()], ["cccc".to_string(), "d".to_string()]];
        assert_eq!(table(&["X", "Y"], &rows, "  "), "  X     Y\n  a     bbb\n  cccc  d\n");
    }
}
