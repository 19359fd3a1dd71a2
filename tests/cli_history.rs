//! `kcp group history` on the real captures of testdata/offsets-log: every record printed by
//! `--records` (as many as Kafka's DumpLogSegments printed), the rebuilt history of each group of
//! the scenario, the text story, and hostile files reported without stopping the run.

use std::process::{Command, Output};

use serde_json::Value;

fn kcp(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kcp")).args(args).output().expect("kcp runs")
}

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/offsets-log/4.1.1-lz4");

#[test]
fn records_prints_every_record_dump_log_printed() {
    let out = kcp(&["group", "history", "--log-dir", DIR, "--all-groups", "--records"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let dump = std::fs::read_to_string(format!("{DIR}/dump.txt")).unwrap();
    assert_eq!(lines.len(), dump.lines().filter(|l| l.starts_with("| offset:")).count());
    // A classic member's subscription in `kcp decode`'s shape.
    let group = lines
        .iter()
        .find(|l| l["key"]["type"] == 2 && l["value"]["data"]["members"].as_array().is_some_and(|m| !m.is_empty()))
        .unwrap();
    let sub = &group["value"]["data"]["members"][0]["subscription"];
    assert_eq!(sub["kind"], "subscription");
    assert_eq!(sub["topics"][0], "hist-t");
    // A tombstone has a null value.
    assert!(lines.iter().any(|l| l["value"].is_null()));
    // --group keeps only that group's records.
    let out = kcp(&["group", "history", "--log-dir", DIR, "--group", "hist-admin", "--records"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 3, "{text}");
    assert!(text.lines().all(|l| l.contains(r#""group":"hist-admin""#)));
}

#[test]
fn the_history_tells_what_happened() {
    let out = kcp(&["group", "history", "--log-dir", DIR, "--all-groups"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["read_problems"].as_array().unwrap().len(), 0);
    let group = |id: &str| doc["groups"].as_array().unwrap().iter().find(|g| g["group"] == id).unwrap().clone();
    let coop = group("hist-coop");
    let gens = coop["generations"].as_array().unwrap();
    assert!(gens
        .iter()
        .any(|g| g["members"].as_array().unwrap().len() == 2 && g["joined"].as_array().unwrap().len() == 1));
    assert!(gens.iter().any(|g| g["left"].as_array().unwrap().len() == 1));
    assert_eq!(gens[1]["protocol"], "cooperative-sticky");
    let admin = group("hist-admin");
    assert_eq!(admin["commits"][0]["rewinds"][0]["from"], 20);
    assert_eq!(admin["commits"][0]["rewinds"][0]["to"], 5);
    assert!(group("hist-gone")["deleted"].is_object());
    let k848 = group("hist-848");
    assert!(k848["consumer_group_events"].as_array().unwrap().iter().any(|e| e["event"] == "member_joined"));

    let text = kcp(&["group", "history", "--log-dir", DIR, "--group", "hist-static", "--format", "text"]);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("static member s1 rejoined"), "{text}");
    assert!(text.contains("history starts at offset"), "{text}");
}

#[test]
fn a_damaged_file_is_reported_and_the_rest_still_read() {
    let mut bytes = std::fs::read(format!("{DIR}/00000000000000000000.log")).unwrap();
    let len = bytes.len();
    bytes[len / 2] ^= 0xFF; // a flipped byte somewhere in the middle
    bytes.truncate(len - 10); // and a cut last batch
    let path = std::env::temp_dir().join(format!("kcp-history-damaged-{}.log", std::process::id()));
    std::fs::write(&path, &bytes).unwrap();
    let out = kcp(&["group", "history", "--file", path.to_str().unwrap(), "--all-groups"]);
    std::fs::remove_file(&path).unwrap();
    assert!(out.status.success());
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let problems = doc["read_problems"].as_array().unwrap();
    assert!(problems.iter().any(|p| p["error"]["kind"] == "batch_beyond_file"), "{problems:?}");
    assert!(problems.len() >= 2, "the flipped byte is reported too: {problems:?}");
    assert!(doc["records"].as_u64().unwrap() > 100, "the rest is read");
    assert!(String::from_utf8_lossy(&out.stderr).contains("reading problem"));
}

#[test]
fn svg_draws_the_real_generations() {
    let path = std::env::temp_dir().join(format!("kcp-history-{}.svg", std::process::id()));
    let out = kcp(&["group", "history", "--log-dir", DIR, "--group", "hist-coop", "--svg", path.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // A file writer prints one line saying what it wrote, not the whole history.
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    let wrote: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!((wrote["svg"].as_str(), wrote["group"].as_str()), (path.to_str(), Some("hist-coop")));
    let out = kcp(&["group", "history", "--log-dir", DIR, "--group", "hist-coop"]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let svg = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
    // One lane per partition assigned, a band per generation with members, joins and leaves.
    for p in 0..4 {
        assert!(svg.contains(&format!(">hist-t-{p}</text>")), "lane {p}");
    }
    let with_members: Vec<&Value> = doc["groups"][0]["generations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| !g["members"].as_array().unwrap().is_empty())
        .collect();
    // The title counts what the text view counts, in its words (not the simulator's).
    let generations = doc["groups"][0]["generations"].as_array().unwrap();
    let moves: usize = generations.iter().map(|g| g["moved"].as_array().unwrap().len()).sum();
    let title = format!(
        "group hist-coop: {} generation(s), {} with members, {moves} partition move(s)",
        generations.len(),
        with_members.len()
    );
    assert!(svg.contains(&title), "{title} in {svg}");
    assert!(!svg.contains("converged") && !svg.contains("violations"), "{svg}");
    // The time axis in UTC, from the group's first record.
    assert!(svg.contains(" UTC</text>") && !svg.contains(" ms</text>"), "{svg}");
    for g in &with_members {
        assert!(svg.contains(&format!("<title>generation {}: cooperative-sticky", g["generation"])), "{svg}");
    }
    assert!(svg.contains(">joined consumer-hist-coop-") && svg.contains(">left consumer-hist-coop-"));
    // --svg draws one group: with --all-groups or --records it is a usage error.
    let out = kcp(&["group", "history", "--log-dir", DIR, "--all-groups", "--svg", "x.svg"]);
    assert_eq!(out.status.code(), Some(2));
    // The live options are refused offline.
    let out = kcp(&["group", "history", "--log-dir", DIR, "--group", "g", "--follow"]);
    assert_eq!(out.status.code(), Some(2));
}

/// Commits per partition carry their rate over the span and the pauses longer than
/// `--commit-gap-s`, longest first (the captured consumer commits every few seconds).
#[test]
fn commits_have_a_rate_and_their_pauses() {
    let commits = |gap: &str| -> Vec<Value> {
        let out = kcp(&["group", "history", "--log-dir", DIR, "--group", "hist-coop", "--commit-gap-s", gap]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        doc["groups"][0]["commits"].as_array().unwrap().clone()
    };
    let every_second = commits("1");
    assert!(!every_second.is_empty());
    for c in &every_second {
        let (count, span) = (c["count"].as_u64().unwrap(), c["span_ms"].as_i64().unwrap());
        let first = c["first"]["commit_timestamp"].as_i64().unwrap();
        assert_eq!(span, c["last"]["commit_timestamp"].as_i64().unwrap() - first);
        let per_minute = c["commits_per_minute"].as_f64().unwrap();
        assert!((per_minute - (count - 1) as f64 * 60_000.0 / span as f64).abs() < 1e-6, "{c}");
        let gaps: Vec<i64> =
            c["largest_gaps"].as_array().unwrap().iter().map(|g| g["length_ms"].as_i64().unwrap()).collect();
        assert!(c["gap_count"].as_u64().unwrap() >= gaps.len() as u64 && !gaps.is_empty(), "{c}");
        assert!(gaps.len() <= 8 && gaps.windows(2).all(|w| w[0] >= w[1]) && gaps.iter().all(|&g| g > 1_000), "{c}");
        for g in c["largest_gaps"].as_array().unwrap() {
            let (from, to) =
                (g["from"]["commit_timestamp"].as_i64().unwrap(), g["to"]["commit_timestamp"].as_i64().unwrap());
            assert_eq!(g["length_ms"].as_i64().unwrap(), to - from);
        }
    }
    // The default (60 s) is longer than any pause of this consumer.
    assert!(commits("60").iter().all(|c| c["gap_count"] == 0 && c["largest_gaps"].as_array().unwrap().is_empty()));
    let text =
        kcp(&["group", "history", "--log-dir", DIR, "--group", "hist-coop", "--commit-gap-s", "1", "--format", "text"]);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("commit(s)/min") && text.contains("pause(s) without a commit; longest"), "{text}");
}

/// Every classic generation carries `kcp group describe`'s findings on its members: the
/// cooperative group's revocation round (generation 2) assigns the two partitions it moves to
/// nobody, and the generations that follow have none.
#[test]
fn each_generation_has_describes_findings() {
    let out = kcp(&["group", "history", "--log-dir", DIR, "--group", "hist-coop"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let gens = doc["groups"][0]["generations"].as_array().unwrap();
    let findings = |n: i64| -> Vec<Value> {
        gens.iter().filter(|g| g["generation"] == n).flat_map(|g| g["findings"].as_array().unwrap().clone()).collect()
    };
    let round = findings(2);
    assert_eq!(round.len(), 1, "{round:?}");
    assert_eq!(round[0]["kind"], "unassigned_partition");
    assert_eq!(round[0]["partitions"], serde_json::json!([{"topic": "hist-t", "partitions": [2, 3]}]));
    // The withheld partitions are the ones the next generation moves.
    let moved_to_nobody: Vec<i64> = gens
        .iter()
        .filter(|g| g["generation"] == 2)
        .flat_map(|g| g["moved"].as_array().unwrap().clone())
        .filter(|m| m["to"].is_null())
        .map(|m| m["partition"].as_i64().unwrap())
        .collect();
    assert_eq!(moved_to_nobody, [2, 3]);
    assert!(gens
        .iter()
        .filter(|g| g["generation"].as_i64().unwrap() > 2)
        .all(|g| g["findings"] == serde_json::json!([])));
    let text = kcp(&["group", "history", "--log-dir", DIR, "--group", "hist-coop", "--format", "text"]);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("finding unassigned_partition: 2 of 4 partitions of hist-t are assigned to nobody"),
        "{text}"
    );
}

/// A KIP-848 member's `member_assignment` event lists the partitions of its
/// `ConsumerGroupCurrentMemberAssignment` record (per topic id, as `--records` shows them under
/// `assignedPartitions`), with the counts beside them; the text story prints them.
#[test]
fn member_assignment_events_list_the_partitions() {
    let out = kcp(&["group", "history", "--log-dir", DIR, "--group", "hist-848", "--records"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let records: Vec<Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let out = kcp(&["group", "history", "--log-dir", DIR, "--group", "hist-848"]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let events: Vec<&Value> = doc["groups"][0]["consumer_group_events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["event"] == "member_assignment")
        .collect();
    let assignments: Vec<&Value> = records.iter().filter(|r| r["key"]["type"] == 8 && !r["value"].is_null()).collect();
    assert!(!events.is_empty() && events.len() == assignments.len(), "{events:?}");
    let mut with_partitions = 0;
    for (e, r) in events.iter().zip(&assignments) {
        assert_eq!(e["offset"], r["offset"]);
        let data = &r["value"]["data"];
        for (list, count, field) in [
            ("assigned", "assigned_partitions", "assignedPartitions"),
            ("pending_revocation", "partitions_pending_revocation", "partitionsPendingRevocation"),
        ] {
            let ours: Vec<(String, Vec<i64>)> = e[list]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| {
                    (
                        t["topic_id"].as_str().unwrap().to_string(),
                        serde_json::from_value(t["partitions"].clone()).unwrap(),
                    )
                })
                .collect();
            let theirs: Vec<(String, Vec<i64>)> = data[field]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| {
                    (
                        t["topicId"].as_str().unwrap().to_string(),
                        serde_json::from_value(t["partitions"].clone()).unwrap(),
                    )
                })
                .collect();
            assert_eq!(ours, theirs, "{list} at offset {}", e["offset"]);
            assert_eq!(e[count], ours.iter().map(|t| t.1.len()).sum::<usize>());
        }
        with_partitions += usize::from(e["assigned_partitions"].as_u64().unwrap() > 0);
    }
    assert!(with_partitions > 0, "some member was assigned partitions: {events:?}");

    let text = kcp(&["group", "history", "--log-dir", DIR, "--group", "hist-848", "--format", "text"]);
    let text = String::from_utf8(text.stdout).unwrap();
    let e = events.iter().find(|e| e["assigned_partitions"].as_u64().unwrap() > 0).unwrap();
    let t = &e["assigned"][0];
    let parts: Vec<String> = t["partitions"].as_array().unwrap().iter().map(|p| p.to_string()).collect();
    let shown = format!("[{}:{}", t["topic_id"].as_str().unwrap(), parts.join(","));
    assert!(text.contains(&shown), "{shown} in\n{text}");
}

const SHARE_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/offsets-log-share/4.1.1-zstd");

/// A share group's records (a real 4.1.1 broker, real KafkaShareConsumers): every key and value
/// decoded by `--records`, the story told by the history in JSON and text.
#[test]
fn a_share_groups_records_and_story() {
    let out = kcp(&["group", "history", "--log-dir", SHARE_DIR, "--group", "hist-share", "--records"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let dump = std::fs::read_to_string(format!("{SHARE_DIR}/dump.txt")).unwrap();
    assert_eq!(lines.len(), dump.lines().filter(|l| l.starts_with("| offset:")).count());
    for l in &lines {
        assert!(l["value"].is_null() || l["value"]["data"].is_object(), "undecoded: {l}");
    }
    let member = lines.iter().find(|l| l["key"]["type"] == 10 && !l["value"].is_null()).unwrap();
    assert!(member["key"]["data"]["memberId"].is_string(), "{member}");
    assert_eq!(member["value"]["data"]["clientId"], "share-a");
    assert_eq!(member["value"]["data"]["subscribedTopicNames"][0], "share-t");

    let out = kcp(&["group", "history", "--log-dir", SHARE_DIR, "--group", "hist-share"]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let g = &doc["groups"][0];
    let events = g["share_group_events"].as_array().unwrap();
    let kinds: Vec<&str> = events.iter().map(|e| e["event"].as_str().unwrap()).collect();
    for kind in
        ["member_joined", "group_epoch", "assignment_epoch", "member_assignment", "state_partitions", "member_left"]
    {
        assert!(kinds.contains(&kind), "{kind} in {kinds:?}");
    }
    let full = events
        .iter()
        .find(|e| e["event"] == "member_assignment" && e["assigned_partitions"] == 3)
        .expect("share-a with every partition");
    assert_eq!(full["assigned"][0]["topic"], "share-t");
    assert_eq!(full["assigned"][0]["partitions"], serde_json::json!([0, 1, 2]));
    assert!(g["deleted"].is_object());
    assert_eq!(g["consumer_group_events"].as_array().unwrap().len(), 0);

    let text = kcp(&["group", "history", "--log-dir", SHARE_DIR, "--group", "hist-share", "--format", "text"]);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("member_joined") && text.contains("client_id share-b"), "{text}");
    assert!(text.contains("state_partitions initialized [share-t:0,1,2]"), "{text}");
    assert!(text.contains("state_partitions deleting [share-t]"), "{text}");
    assert!(text.contains("deleted at offset"), "{text}");
}

/// A streams group's records (a real 4.1.1 broker, Kafka Streams members): every key and value
/// decoded by `--records`; the history counts them by type.
#[test]
fn a_streams_groups_records_are_decoded() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/offsets-log-streams/4.1.1-zstd");
    let out = kcp(&["group", "history", "--log-dir", dir, "--group", "hist-streams", "--records"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(!lines.is_empty());
    for l in &lines {
        assert!(l["value"].is_null() || l["value"]["data"].is_object(), "undecoded: {l}");
    }
    let topology = lines.iter().find(|l| l["key"]["type"] == 23).expect("the topology");
    assert_eq!(topology["value"]["data"]["subtopologies"][0]["sourceTopics"][0], "hist-streams-in");
    let member = lines.iter().find(|l| l["key"]["type"] == 19 && !l["value"].is_null()).unwrap();
    assert!(member["key"]["data"]["memberId"].is_string(), "{member}");
    assert_eq!(member["value"]["data"]["clientTags"][0]["key"], "zone");

    let out = kcp(&["group", "history", "--log-dir", dir, "--group", "hist-streams"]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let types: Vec<i64> = doc["groups"][0]["other_record_types"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["type"].as_i64().unwrap())
        .collect();
    assert_eq!(types, [17, 19, 20, 21, 22, 23]);
}

/// The text story for a person: ISO-8601 UTC times on the header, the generation lines and the
/// commits; each member's partitions sorted, as describe shows them.
#[test]
fn the_text_story_has_utc_times_and_sorted_partitions() {
    let out = kcp(&["group", "history", "--log-dir", DIR, "--group", "hist-coop", "--format", "text"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let is_iso = |w: &str| w.len() == 24 && w.ends_with('Z') && w.as_bytes()[10] == b'T' && w.as_bytes()[19] == b'.';
    let generation_lines: Vec<&str> = text.lines().filter(|l| l.contains(" generation ")).collect();
    assert!(!generation_lines.is_empty(), "{text}");
    for line in &generation_lines {
        let words: Vec<&str> = line.split_whitespace().collect();
        assert!(words[0].starts_with('@') && is_iso(words[1]), "{line}");
    }
    assert!(text.lines().next().unwrap().split_whitespace().any(|w| is_iso(w.trim_end_matches(')'))), "{text}");
    for line in text.lines().filter(|l| l.contains("hist-t[")) {
        let list = line.split("hist-t[").nth(1).unwrap().split(']').next().unwrap();
        let partitions: Vec<i32> = list.split(", ").map(|p| p.parse().unwrap()).collect();
        assert!(partitions.windows(2).all(|w| w[0] < w[1]), "{line}");
    }
    assert!(!text.contains("timestamps"), "{text}");
}

/// One rule for every `kcp group` command: a group nobody knows is `not_found`, exit 1
/// (history: no record of it in what was read), in JSON on stdout or as a line on stderr.
#[test]
fn an_unknown_group_is_not_found() {
    for extra in [&[][..], &["--records"][..], &["--format", "text"][..]] {
        let mut args = vec!["group", "history", "--log-dir", DIR, "--group", "no-such-group"];
        args.extend(extra);
        let out = kcp(&args);
        assert_eq!(out.status.code(), Some(1), "{extra:?}: {}", String::from_utf8_lossy(&out.stderr));
        let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(said.contains("not_found") && said.contains("no-such-group"), "{extra:?}: {said}");
    }
}

/// `--log-dir` given the broker's data directory (the parent of the partition directories)
/// names one of them; `--from` takes a date alone (its midnight, UTC).
#[test]
fn wording_a_newcomer_needs() {
    let parent = std::env::temp_dir().join(format!("kcp-history-parent-{}", std::process::id()));
    std::fs::create_dir_all(parent.join("__consumer_offsets-7")).unwrap();
    std::fs::create_dir_all(parent.join("__consumer_offsets-12")).unwrap();
    let out = kcp(&["group", "history", "--log-dir", parent.to_str().unwrap(), "--all-groups"]);
    std::fs::remove_dir_all(&parent).unwrap();
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("name one, e.g. --log-dir") && said.contains("__consumer_offsets-12"), "{said}");
    // A date alone is accepted (the connection then fails: nothing listens there).
    let out = kcp(&[
        "group",
        "history",
        "--bootstrap-server",
        "127.0.0.1:1",
        "--timeout-ms",
        "500",
        "--group",
        "g",
        "--from",
        "2026-12-07",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let out = kcp(&["group", "history", "--bootstrap-server", "127.0.0.1:1", "--group", "g", "--from", "2026-13-07"]);
    assert_eq!(out.status.code(), Some(2));
    // `kcp group --help` names every subcommand in its summary.
    let out = kcp(&["--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    let group_line = help.lines().find(|l| l.trim_start().starts_with("group")).unwrap();
    assert!(group_line.contains("history") && group_line.contains("upgrade-check"), "{help}");
}

/// A one-message segment (magic 1, uncompressed): `key` and `value` at offset 0.
fn message_set_v1(key: &[u8], value: &[u8]) -> Vec<u8> {
    let mut body = vec![1u8, 0]; // magic 1, attributes: no compression
    body.extend_from_slice(&1_765_000_000_000i64.to_be_bytes());
    body.extend_from_slice(&(key.len() as i32).to_be_bytes());
    body.extend_from_slice(key);
    body.extend_from_slice(&(value.len() as i32).to_be_bytes());
    body.extend_from_slice(value);
    let mut out = 0i64.to_be_bytes().to_vec();
    out.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
    out.extend_from_slice(&crc32fast::hash(&body).to_be_bytes());
    out.extend_from_slice(&body);
    out
}

/// Issue 39: the text story lists a member's topics and partitions sorted, as describe does,
/// whatever order the assignor wrote them in. The real captures' assignors wrote them sorted
/// already, so this record is crafted: topics `zeta` before `alpha`, partitions [0, 2, 4, 1, 3, 5].
#[test]
fn the_text_story_sorts_an_assignment_written_out_of_order() {
    use kafka_consumer_protocol::{Assignment, Subscription, TopicPartitions, Version};
    let str16 = |out: &mut Vec<u8>, s: &str| {
        out.extend_from_slice(&(s.len() as i16).to_be_bytes());
        out.extend_from_slice(s.as_bytes());
    };
    let bytes32 = |out: &mut Vec<u8>, b: &[u8]| {
        out.extend_from_slice(&(b.len() as i32).to_be_bytes());
        out.extend_from_slice(b);
    };
    let assignment =
        Assignment::new(vec![TopicPartitions::new("zeta", [0, 2, 4, 1, 3, 5]), TopicPartitions::new("alpha", [1, 0])])
            .encode(Version::V0)
            .unwrap();
    let subscription = Subscription::new(["zeta", "alpha"]).encode(Version::V0).unwrap();
    // GroupMetadataKey (type 2) and GroupMetadataValue v3 of one member.
    let mut key = 2i16.to_be_bytes().to_vec();
    str16(&mut key, "wire-order");
    let mut value = 3i16.to_be_bytes().to_vec();
    str16(&mut value, "consumer");
    value.extend_from_slice(&1i32.to_be_bytes()); // generation
    str16(&mut value, "range"); // protocol
    str16(&mut value, "m1"); // leader
    value.extend_from_slice(&1_765_000_000_000i64.to_be_bytes()); // current_state_timestamp
    value.extend_from_slice(&1i32.to_be_bytes()); // members
    str16(&mut value, "m1");
    value.extend_from_slice(&(-1i16).to_be_bytes()); // group_instance_id: null
    str16(&mut value, "client");
    str16(&mut value, "/127.0.0.1");
    value.extend_from_slice(&300_000i32.to_be_bytes()); // rebalance_timeout
    value.extend_from_slice(&45_000i32.to_be_bytes()); // session_timeout
    bytes32(&mut value, &subscription);
    bytes32(&mut value, &assignment);
    let dir = std::env::temp_dir().join(format!("kcp-history-wire-order-{}/__consumer_offsets-0", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("00000000000000000000.log"), message_set_v1(&key, &value)).unwrap();

    let out =
        kcp(&["group", "history", "--log-dir", dir.to_str().unwrap(), "--group", "wire-order", "--format", "text"]);
    let _ = std::fs::remove_dir_all(dir.parent().unwrap());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text.lines().find(|l| l.trim_start().starts_with("m1: ")).unwrap_or_else(|| panic!("{text}"));
    assert_eq!(line.trim(), "m1: alpha[0, 1] zeta[0, 1, 2, 3, 4, 5]", "{text}");
}
