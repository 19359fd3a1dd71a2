//! `kcp serve`'s page in a real browser (issue 36): headless Chromium driven through chromedriver
//! (WebDriver, the `fantoccini` client) against a `kcp serve` that watches the live 4.1.1 cluster.
//!
//! The test makes its own ground truth on the broker: a topic of 3 partitions with 30 records,
//! an empty group with known commits (lagging), a group whose id holds markup, quotes and a control
//! character, a classic `kcp group join` member whose client id holds markup, and a KIP-848 Java
//! member. It then reads what a person sees on the list and on group pages, compares it with that
//! ground truth and with `/api/v1`, sorts and filters, watches a commit appear without a reload,
//! and finds no JavaScript error or policy violation.
//!
//! Needs Debian's `chromium` and `chromium-driver` (or `KCP_CHROMEDRIVER` / `KCP_CHROMIUM`);
//! without them it prints SKIP, or fails with `KCP_LIVE_REQUIRED=1`, as the live tests do without
//! their cluster (`.ci/run` sets `KCP_BROWSER_SKIP=1` when it cannot install them: a SKIP then
//! too). `KCP_PAGE_SCREENSHOTS=DIR` saves `serve-list.png` and `serve-group.png` there.

mod live;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use futures_util::FutureExt as _;
use live::{unique_name, Cluster, MemberOptions};
use serde_json::{json, Value};
use std::panic::AssertUnwindSafe;

/// The whole browser part, bounded.
const BROWSER_LIMIT: Duration = Duration::from_secs(300);
/// How long a value may take to show (a few collections at 1 s).
const SHOW: Duration = Duration::from_secs(60);

/// A child process in its own process group, killed with its group when dropped.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = Command::new("kill").args(["-KILL", &format!("-{}", self.0.id())]).status();
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn(mut cmd: Command) -> Guard {
    use std::os::unix::process::CommandExt as _;
    cmd.stdin(Stdio::null()).process_group(0);
    Guard(cmd.spawn().unwrap_or_else(|e| panic!("{cmd:?}: {e}")))
}

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?.to_str()?.split(':').map(|d| Path::new(d).join(name)).find(|p| p.is_file())
}

/// chromedriver and the browser, or `None` after a SKIP line (a failure when required, unless
/// `.ci/run` could not install them and said so with `KCP_BROWSER_SKIP=1`).
fn browser() -> Option<(PathBuf, PathBuf)> {
    if std::env::var_os("KCP_BROWSER_SKIP").is_some() {
        println!("SKIP: KCP_BROWSER_SKIP is set (no chromium and chromedriver on this machine)");
        return None;
    }
    let driver = std::env::var_os("KCP_CHROMEDRIVER").map(PathBuf::from).or_else(|| on_path("chromedriver"));
    let chromium = std::env::var_os("KCP_CHROMIUM")
        .map(PathBuf::from)
        .or_else(|| on_path("chromium"))
        .or_else(|| on_path("chromium-browser"));
    match (driver, chromium) {
        (Some(d), Some(c)) => Some((d, c)),
        _ => {
            let why = "the browser test needs chromium and chromedriver (Debian: apt-get install chromium \
                       chromium-driver; or KCP_CHROMEDRIVER and KCP_CHROMIUM)";
            assert!(!live::required(), "KCP_LIVE_REQUIRED=1 but {why}");
            println!("SKIP: {why}");
            None
        }
    }
}

/// Chromium's arguments: headless, and silent on the network. The background-networking flags
/// alone still leave it looking up Google's update and account hosts at start (seen with tcpdump
/// on eth0); the resolver rule answers every name but loopback with NOTFOUND, so the browser
/// sends nothing off this machine.
fn chromium_args(profile: &Path) -> Vec<String> {
    let flags = [
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--disable-default-apps",
        "--disable-domain-reliability",
        "--disable-client-side-phishing-detection",
        "--disable-breakpad",
        "--dns-prefetch-disable",
        "--no-pings",
        "--no-first-run",
        "--no-default-browser-check",
        "--metrics-recording-only",
        "--disable-features=OptimizationHints,MediaRouter,Translate,AutofillServerCommunication,\
         CertificateTransparencyComponentUpdater",
        "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
        "--window-size=1280,1000",
    ];
    let mut args: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
    args.push(format!("--user-data-dir={}", profile.display()));
    args
}

/// A WebDriver session of headless Chromium (`chromium_args`) through the chromedriver on
/// `driver_port`.
async fn browser_session(driver_port: u16, chromium: &Path, profile: &Path) -> Client {
    let mut caps = serde_json::Map::new();
    caps.insert("goog:chromeOptions".into(), json!({"binary": chromium, "args": chromium_args(profile)}));
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    ClientBuilder::new(connector)
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{driver_port}"))
        .await
        .expect("a chromedriver session")
}

/// A loopback port free at the time of asking.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("a free port")
}

fn wait_listening(port: u16, limit: Duration, what: &str) {
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(started.elapsed() < limit, "{what} not listening on {port} within {limit:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `kafka.sh tool NAME ARGS...`: Kafka's own tool of the cluster's version.
fn tool(cluster: &Cluster, args: &[&str]) -> String {
    let mut cmd = Command::new("bash");
    cmd.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/live/kafka.sh"));
    if let Some(run) = cluster.run_dir.parent() {
        cmd.env("KCP_LIVE_RUN", run);
    }
    cmd.args(["tool", cluster.name.as_str()]).args(args);
    live::member::run_bounded(cmd, Duration::from_secs(120))
        .unwrap_or_else(|e| panic!("{}: kafka.sh tool {}: {e}", cluster.name, args.join(" ")))
}

/// `records` records over the topic's partitions, with Kafka's producer benchmark.
fn produce(cluster: &Cluster, topic: &str, records: u32) {
    let props = format!("bootstrap.servers={}", cluster.bootstrap);
    let n = records.to_string();
    let p = "org.apache.kafka.tools.ProducerPerformance";
    let args = ["--topic", topic, "--num-records", &n, "--record-size", "20", "--throughput", "-1"];
    let props = ["--producer-props", &props, "batch.size=100", "linger.ms=0"];
    tool(cluster, &[&[p][..], &args[..], &props[..]].concat());
}

/// Commits `offset` on every partition of `topic` for the (empty) group, with Kafka's own tool.
fn commit(cluster: &Cluster, group: &str, topic: &str, offset: i64) {
    let offset = offset.to_string();
    let b = cluster.bootstrap.as_str();
    let args = ["consumer-groups", "--bootstrap-server", b, "--group", group, "--topic", topic];
    tool(cluster, &[&args[..], &["--reset-offsets", "--to-offset", &offset, "--execute"][..]].concat());
}

/// How the page shows a name: control characters as their escapes (`\u{1}`).
fn shown(name: &str) -> String {
    name.chars().map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() }).collect()
}

/// `GET path` from the page's own origin, as its script would fetch it.
async fn api(c: &Client, path: &str) -> Value {
    let script = "var done = arguments[arguments.length - 1];\
                  fetch(arguments[0]).then(function (r) { return r.json(); }).then(done, function (e) { done({fetch_error: String(e)}); });";
    let v = c.execute_async(script, vec![json!(path)]).await.expect("fetch from the page");
    assert!(v.get("fetch_error").is_none(), "{path}: {v}");
    v
}

fn segment(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// The visible rows' cell texts of a table body, as rendered (`innerText`; in a closed `<details>`,
/// which renders no text, `textContent`). Read in one script:
/// the live updates replace the body every collection, so element handles would go stale.
async fn rows(c: &Client, body: &str) -> Vec<Vec<String>> {
    let script = "return Array.from(document.querySelectorAll('#' + arguments[0] + ' > tr:not([hidden])'))\
                  .map(function (r) { return Array.from(r.cells).map(function (c) { return c.innerText || c.textContent; }); });";
    let v = c.execute(script, vec![json!(body)]).await.expect("rows");
    serde_json::from_value(v).expect("rows of strings")
}

/// Waits until `check` holds on the visible rows of `body`, or fails with the last rows seen.
async fn until_rows(c: &Client, body: &str, what: &str, check: impl Fn(&[Vec<String>]) -> bool) -> Vec<Vec<String>> {
    let started = Instant::now();
    loop {
        let seen = rows(c, body).await;
        if check(&seen) {
            return seen;
        }
        assert!(started.elapsed() < SHOW, "{what}: not shown within {SHOW:?}; rows: {seen:?}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Clicks the element that `find` (a script given `arg`) returns, found and clicked in one
/// script, retried until it exists. The live updates replace the table bodies every collection,
/// so an element handle found by one WebDriver call can be stale at the next (seen in a run:
/// StaleElementReference on a row's Chart box).
async fn click(c: &Client, find: &str, arg: Value, what: &str) {
    let script = format!("var e = (function () {{ {find} }}).apply(null, arguments); if (!e) {{ return false; }} e.click(); return true;");
    let started = Instant::now();
    loop {
        let clicked = c.execute(&script, vec![arg.clone()]).await.unwrap_or_else(|e| panic!("{what}: {e}"));
        if clicked == json!(true) {
            return;
        }
        assert!(started.elapsed() < SHOW, "{what}: not found within {SHOW:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Waits until the page's script has run (sorted, filtered, paged: `html[data-ready='1']`).
async fn until_ready(c: &Client, what: &str) {
    c.wait()
        .at_most(SHOW)
        .for_element(Locator::Css("html[data-ready='1']"))
        .await
        .unwrap_or_else(|e| panic!("{what}: the page's script did not run within {SHOW:?}: {e}"));
}

/// Opens `url` and waits until the page's script has run.
async fn open(c: &Client, url: &str, what: &str) {
    c.goto(url).await.unwrap_or_else(|e| panic!("{what}: open {url}: {e}"));
    until_ready(c, what).await;
}

/// No JavaScript error, no policy violation, and the script ran.
async fn no_script_errors(c: &Client, page: &str) {
    let v = c
        .execute(
            "return {ready: document.documentElement.getAttribute('data-ready'), errors: window.kcpErrors || null,\
             injected: window.kcpInjected === undefined ? null : window.kcpInjected,\
             scripts: document.scripts.length};",
            vec![],
        )
        .await
        .expect("page state");
    assert_eq!(v["ready"], "1", "{page}: the page's script did not run: {v}");
    assert_eq!(v["errors"], json!([]), "{page}: JavaScript errors: {v}");
    assert_eq!(v["injected"], Value::Null, "{page}: a group name ran as script: {v}");
    assert_eq!(v["scripts"], 1, "{page}: only the page's own script element: {v}");
}

/// The lag column: a number, or `None` for the dash of a group without commits.
fn lag_of(row: &[String]) -> Option<i64> {
    if row[5] == "-" {
        return None;
    }
    Some(row[5].parse().unwrap_or_else(|_| panic!("lag cell {row:?}")))
}

fn number(s: &str) -> Option<f64> {
    s.parse().ok()
}

/// The list row of `id` in the API's list.
fn api_row<'a>(list: &'a Value, id: &str) -> &'a Value {
    list["groups"]
        .as_array()
        .and_then(|g| g.iter().find(|r| r["group_id"] == id))
        .unwrap_or_else(|| panic!("{id} in {list}"))
}

/// A list row as the page shows it, from the API's values.
fn expected_row(v: &Value) -> Vec<String> {
    let s = |v: &Value| v.as_str().map(shown).unwrap_or_default();
    let n = |v: &Value| if v.is_null() { "-".to_owned() } else { v.to_string() };
    vec![
        s(&v["group_id"]),
        s(&v["state"]),
        s(&v["group_protocol"]),
        s(&v["assignor"]),
        n(&v["members"]),
        n(&v["lag"]),
        v["lag_seconds"].as_f64().map_or("-".into(), |x| format!("{x:.1}")),
        s(&v["status"]),
        n(&v["pending_partitions"]),
        n(&v["rebalances_last_hour"]),
    ]
}

#[test]
fn the_page_shows_what_a_4_1_1_cluster_holds() {
    the_page_shows_what_the_cluster_holds("k41");
}

#[test]
fn the_page_shows_what_a_3_9_1_cluster_holds() {
    the_page_shows_what_the_cluster_holds("k39");
}

fn the_page_shows_what_the_cluster_holds(name: &str) {
    let Some((driver, chromium)) = browser() else { return };
    let Some(cluster) = Cluster::shared(name) else { return };
    let started = Instant::now();

    // Ground truth.
    let token = unique_name("page");
    let topic = format!("{token}-t");
    cluster.create_topic(&topic, 3);
    let produced_from = live::now_ms();
    produce(&cluster, &topic, 30);
    let produced_to = live::now_ms();
    let lagging = format!("{token}-lagging");
    let hostile = format!("<script>window.kcpInjected=1</script>\"q' \u{1}{token}");
    commit(&cluster, &lagging, &topic, 2);
    commit(&cluster, &hostile, &topic, 1);
    let live_group = format!("{token}-live");
    let client_id = "page<b>\"c'</b>";
    // `kcp group join --client-id` (the helper's options predate the flag).
    let options = MemberOptions::new(&live_group, [&topic]).rack("r1").duration_s(280);
    let mut join = Command::new(env!("CARGO_BIN_EXE_kcp"));
    join.args(["group", "join", "--client-id", client_id]).args(options.kcp_args(&cluster.bootstrap));
    let mut members = vec![cluster.spawn("kcp:page-classic".into(), join)];
    // A KIP-848 member where the broker serves the protocol (3.9.1 does not by default).
    let kip848 = cluster.is_4x().then(|| format!("{token}-848"));
    if let Some(kip848) = &kip848 {
        members.push(cluster.java(&MemberOptions::new(kip848, [&topic]).group_protocol("consumer").duration_s(280)));
    }
    // A group of 1,000 partitions, committed at 0: its page pages the offsets table.
    let big_topic = format!("{token}-big");
    cluster.create_topic(&big_topic, 1000);
    let big = format!("{token}-big");
    // Kafka's tool may commit nothing (and exit 0) while a topic this new is still getting its
    // leaders: committed again until the group exists, bounded.
    for attempt in 0.. {
        commit(&cluster, &big, &big_topic, 0);
        let described = Command::new(env!("CARGO_BIN_EXE_kcp"))
            .args(["group", "describe", "--bootstrap-server", &cluster.bootstrap, "--group", &big])
            .output()
            .expect("kcp group describe");
        let text =
            String::from_utf8_lossy(&described.stdout).into_owned() + &String::from_utf8_lossy(&described.stderr);
        if !text.contains("not_found") {
            break;
        }
        assert!(attempt < 10, "the 1,000-partition group was not committed: {text}");
        std::thread::sleep(Duration::from_secs(2));
    }

    // The server and the browser.
    let serve_port = free_port();
    let mut serve = Command::new(env!("CARGO_BIN_EXE_kcp"));
    serve.args(["serve", "--bootstrap-server", &cluster.bootstrap, "--interval-ms", "1000", "--duration-s", "330"]);
    serve.args(["--listen", &format!("127.0.0.1:{serve_port}")]).stdout(Stdio::null());
    let _serve = spawn(serve);
    let driver_port = free_port();
    let mut chromedriver = Command::new(&driver);
    chromedriver.arg(format!("--port={driver_port}")).stdout(Stdio::null()).stderr(Stdio::null());
    let _driver = spawn(chromedriver);
    wait_listening(serve_port, Duration::from_secs(30), "kcp serve");
    wait_listening(driver_port, Duration::from_secs(30), "chromedriver");
    let profile = std::env::temp_dir().join(format!("{token}-chromium"));
    let base = format!("http://127.0.0.1:{serve_port}");

    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let browse = async {
        let c = browser_session(driver_port, &chromium, &profile).await;
        // A failed check or the time limit still ends the session (the browser with it).
        let checks = check_pages(
            &c,
            &base,
            &cluster,
            &token,
            &topic,
            &lagging,
            &hostile,
            &live_group,
            client_id,
            kip848.as_deref(),
            &big,
            (produced_from, produced_to),
            &mut members,
        );
        let result = AssertUnwindSafe(tokio::time::timeout(BROWSER_LIMIT, checks)).catch_unwind().await;
        let _ = tokio::time::timeout(Duration::from_secs(20), c.close()).await;
        result
    };
    let outcome = runtime.block_on(browse);
    let _ = std::fs::remove_dir_all(&profile);
    for m in &mut members {
        m.kill();
    }
    match outcome {
        Err(panic) => std::panic::resume_unwind(panic),
        Ok(Err(_)) => panic!("the browser part took longer than {BROWSER_LIMIT:?}"),
        Ok(Ok(())) => println!("serve_page: passed in {:.1} s", started.elapsed().as_secs_f64()),
    }
}

#[allow(clippy::too_many_arguments)]
async fn check_pages(
    c: &Client,
    base: &str,
    cluster: &Cluster,
    token: &str,
    topic: &str,
    lagging: &str,
    hostile: &str,
    live_group: &str,
    client_id: &str,
    kip848: Option<&str>,
    big: &str,
    (produced_from, produced_to): (u64, u64),
    processes: &mut Vec<live::Member>,
) {
    // Screenshots of the 4.1.1 run only (the same pages).
    let screenshots = std::env::var_os("KCP_PAGE_SCREENSHOTS").filter(|_| cluster.is_4x());
    // The list, filtered to this test's groups (the shared cluster holds other tests' groups).
    c.goto(&format!("{base}/")).await.expect("open the list");
    let render = c
        .execute("var n = performance.getEntriesByType('navigation')[0]; return [n.responseEnd - n.requestStart, n.domComplete];", vec![])
        .await
        .expect("navigation timing");
    println!("serve_page: list served in {} ms, DOM complete at {} ms", render[0], render[1]);
    until_ready(c, "the list").await;
    c.execute("window.kcpMarker = 42;", vec![]).await.expect("mark the page");
    let filter = c.find(Locator::Id("filter-groups")).await.expect("the groups filter");
    filter.send_keys(token).await.expect("type a filter");
    let groups = 4 + usize::from(kip848.is_some());
    let seen = until_rows(c, "groups-body", "this test's groups, the members joined, the lag measured", |r| {
        r.len() == groups
            && r.iter().any(|row| row[0] == *live_group && row[4] == "1")
            && kip848.is_none_or(|kip848| r.iter().any(|row| row[0] == *kip848 && row[4] == "1" && row[1] == "Stable"))
            && r.iter().any(|row| row[0] == *lagging && row[5] == "24" && row[6] != "-")
    })
    .await;

    // Ground truth: 30 records produced, 2 and 1 committed on each of 3 partitions.
    let lag = |id: &str| seen.iter().find(|r| r[0] == shown(id)).and_then(|r| lag_of(r));
    assert_eq!(lag(lagging), Some(30 - 3 * 2), "{seen:?}");
    assert_eq!(lag(hostile), Some(30 - 3), "the group named with markup is a row, as text: {seen:?}");
    let row = |id: &str| seen.iter().find(|r| r[0] == shown(id)).cloned().unwrap_or_default();
    if let Some(kip848) = kip848 {
        assert_eq!(row(kip848)[2], "consumer", "{seen:?}");
    }
    assert_eq!(row(live_group)[2], "classic", "{seen:?}");
    assert_eq!(row(lagging)[1], "Empty", "{seen:?}");
    let page_seconds = number(&row(lagging)[6]).expect("lag in seconds shown");
    // The record at the committed offset was written between produced_from and produced_to; the
    // figure shown is from a collection at most a few seconds old.
    let oldest_possible = (live::now_ms() - produced_from) as f64 / 1000.0;
    let newest_possible = (live::now_ms().saturating_sub(produced_to)) as f64 / 1000.0;
    assert!(
        page_seconds <= oldest_possible + 0.1 && page_seconds >= newest_possible - 10.0,
        "lag in seconds {page_seconds} against the records' age ({newest_possible}..{oldest_possible} s)"
    );

    // The same numbers as /api/v1. The page's rows follow the collections a moment after the API
    // does (a status such as OK turning STOP can sit between two reads): both are read again, a
    // collection later, until they agree, bounded.
    let started = Instant::now();
    loop {
        let api_list = api(c, "/api/v1/clusters/default/groups").await;
        let now_rows = rows(c, "groups-body").await;
        let mut differences = Vec::new();
        for id in [lagging, hostile, live_group].into_iter().chain(kip848) {
            let expected = expected_row(api_row(&api_list, id));
            let page = now_rows.iter().find(|r| r[0] == shown(id)).cloned().unwrap_or_default();
            if page.len() != expected.len() || page[..6] != expected[..6] || page[7..] != expected[7..] {
                differences.push(format!("{id}: page {page:?}, /api/v1 {expected:?}"));
            } else if let (Some(p), Some(a)) = (number(&page[6]), api_row(&api_list, id)["lag_seconds"].as_f64()) {
                if (p - a).abs() > 3.0 {
                    differences.push(format!("{id}: lag seconds {p} on the page, {a} from the API"));
                }
            }
        }
        if differences.is_empty() {
            break;
        }
        assert!(started.elapsed() < SHOW, "page against /api/v1 within {SHOW:?}: {differences:?}");
        tokio::time::sleep(Duration::from_millis(1000)).await;
    }

    // Sorting: by lag, largest first, then smallest first.
    c.find(Locator::Css("#groups thead th:nth-child(6) button"))
        .await
        .expect("lag header")
        .click()
        .await
        .expect("sort");
    let sorted: Vec<Option<i64>> = rows(c, "groups-body").await.iter().map(|r| lag_of(r)).collect();
    assert_eq!(sorted, {
        let mut s = sorted.clone();
        s.sort_by(|a, b| b.cmp(a));
        s
    });
    assert_eq!(sorted.first(), Some(&Some(27)), "{sorted:?}");
    c.find(Locator::Css("#groups thead th:nth-child(6) button"))
        .await
        .expect("lag header")
        .click()
        .await
        .expect("sort");
    let sorted: Vec<Option<i64>> = rows(c, "groups-body").await.iter().map(|r| lag_of(r)).collect();
    assert_eq!(sorted.last(), Some(&Some(27)), "{sorted:?}");
    let aria = c.find(Locator::Css("#groups thead th:nth-child(6)")).await.unwrap().attr("aria-sort").await.unwrap();
    assert_eq!(aria.as_deref(), Some("ascending"));
    // Filtering narrows to one group.
    filter.send_keys("-lagging").await.expect("type");
    until_rows(c, "groups-body", "the filter", |r| r.len() == 1 && r[0][0] == lagging).await;
    filter.clear().await.expect("clear");
    filter.send_keys(token).await.expect("type");

    // Live: a commit shows without a reload.
    commit(cluster, lagging, topic, 5);
    // Kafka's tool commits a partition of fewer than 5 records at its end (the producer's sticky
    // batches do not spread 30 records evenly): the lag expected from the log ends.
    let ends: Vec<i64> = api(c, &format!("/api/v1/clusters/default/groups/{}", segment(lagging))).await["offsets"]
        .as_array()
        .expect("offsets")
        .iter()
        .map(|o| o["log_end_offset"].as_i64().expect("a log end"))
        .collect();
    let after_commit: i64 = ends.iter().map(|end| end - end.min(&5)).sum();
    let committed_0 = ends[0].min(5).to_string();
    until_rows(c, "groups-body", "the new commit, live", |r| {
        r.iter().any(|row| row[0] == lagging && row[5] == after_commit.to_string())
    })
    .await;
    let marker = c.execute("return window.kcpMarker;", vec![]).await.expect("marker");
    assert_eq!(marker, 42, "the page was not reloaded");
    no_script_errors(c, "the list").await;
    if let Some(dir) = &screenshots {
        std::fs::write(Path::new(dir).join("serve-list.png"), c.screenshot().await.expect("screenshot")).expect("save");
    }

    // The group named with markup: followed from its link, its name text everywhere.
    let link = "var name = arguments[0]; return Array.from(document.querySelectorAll('#groups-body a')).find(function (a) { return a.textContent === name; });";
    click(c, link, json!(shown(hostile)), "the group's link").await;
    until_ready(c, "the group named with markup").await;
    let h1 = c.find(Locator::Css("h1 .group-id")).await.expect("heading").text().await.unwrap();
    assert_eq!(h1, shown(hostile));
    let title = c.title().await.expect("title");
    assert!(title.starts_with(&shown(hostile)), "{title}");
    let api_group = api(c, &format!("/api/v1/clusters/default/groups/{}", segment(hostile))).await;
    let offsets = rows(c, "offsets-body").await;
    assert_eq!(offsets.len(), 3, "{offsets:?}");
    let mut total = 0;
    for (row, o) in offsets.iter().zip(api_group["offsets"].as_array().unwrap()) {
        assert_eq!(row[0], topic);
        assert_eq!(row[1], o["partition"].to_string());
        assert_eq!(row[2], "1", "committed 1: {row:?}");
        assert_eq!(row[3], o["log_end_offset"].to_string());
        assert_eq!(row[4], o["lag"].to_string());
        total += row[3].parse::<i64>().unwrap();
    }
    assert_eq!(total, 30, "the log ends shown add up to the records produced");
    assert_eq!(c.find(Locator::Id("total-lag")).await.unwrap().text().await.unwrap(), "27");
    no_script_errors(c, "the group named with markup").await;

    // A group with a classic member: members and offsets, sort and filter.
    open(c, &format!("{base}/groups/default/{}", segment(live_group)), "open the group").await;
    let api_group = api(c, &format!("/api/v1/clusters/default/groups/{}", segment(live_group))).await;
    let member_id = api_group["members"][0]["member_id"].as_str().expect("a member").to_owned();
    let members = rows(c, "members-body").await;
    assert_eq!(members.len(), 1, "{members:?}");
    assert_eq!(members[0][0], shown(&member_id));
    assert_eq!(members[0][1], client_id, "the client id with markup, as text");
    assert_eq!(members[0][3], "r1");
    assert_eq!(members[0][5], topic);
    assert_eq!(members[0][7], format!("{topic}: 0,1,2"));
    let offsets = rows(c, "offsets-body").await;
    assert!(offsets.iter().all(|r| r[6] == shown(&member_id) && r[8] == client_id), "{offsets:?}");
    c.find(Locator::Css("#offsets thead th:nth-child(2) button")).await.unwrap().click().await.unwrap();
    let partitions: Vec<String> = rows(c, "offsets-body").await.iter().map(|r| r[1].clone()).collect();
    assert_eq!(partitions, ["2", "1", "0"]);
    assert_eq!(c.find(Locator::Id("offsets-info")).await.unwrap().text().await.unwrap(), "rows 1-3 of 3");
    c.find(Locator::Id("filter-member")).await.unwrap().send_keys("nobody-has-this").await.unwrap();
    until_rows(c, "offsets-body", "the member filter", |r| r.is_empty()).await;
    c.find(Locator::Id("filter-member")).await.unwrap().clear().await.unwrap();
    c.find(Locator::Id("filter-topic")).await.unwrap().send_keys(topic).await.unwrap();
    until_rows(c, "offsets-body", "the topic filter", |r| r.len() == 3).await;
    let history = api(c, &format!("/api/v1/clusters/default/groups/{}/history", segment(live_group))).await;
    assert!(history["points"].as_array().is_some_and(|p| !p.is_empty()), "{history}");
    let chart = c.find_all(Locator::Css("#history svg polyline")).await.unwrap();
    assert_eq!(chart.len(), 2, "the lag chart");
    no_script_errors(c, "the group page").await;

    // The upgrade-check verdict: what `kcp group upgrade-check` says of the group.
    let cli = Command::new(env!("CARGO_BIN_EXE_kcp"))
        .args(["group", "upgrade-check", "--bootstrap-server", &cluster.bootstrap, "--group", live_group])
        .output()
        .expect("kcp group upgrade-check");
    let cli: Value = serde_json::from_slice(&cli.stdout).expect("upgrade-check JSON");
    let first_check = cli["checks"]
        .as_array()
        .and_then(|checks| {
            checks.iter().find(|c| c["ok"] == false).or_else(|| checks.iter().find(|c| c["ok"].is_null()))
        })
        .map_or(String::new(), |c| c["name"].as_str().unwrap_or_default().to_owned());
    // Read in one script: the live updates replace the summary every collection.
    let shown = c
        .execute(
            "var e = document.getElementById('upgrade-verdict');\
             return [e.textContent, e.getAttribute('data-check') || '', document.getElementById('summary').textContent];",
            vec![],
        )
        .await
        .expect("the verdict");
    assert_eq!(shown[0], cli["verdict"], "{cli}");
    assert_eq!(shown[1], first_check.as_str(), "{cli}");
    if !first_check.is_empty() {
        let summary = shown[2].as_str().unwrap_or_default();
        assert!(summary.contains(&first_check), "the first blocking check named: {summary}");
    }

    // A rebalance appears on the timeline: a second member joins.
    let timeline_state = |c: &Client| {
        let c = c.clone();
        async move {
            let v = c
                .execute(
                    "var s = document.getElementById('timeline-summary');\
                     return {rebalances: s ? +s.getAttribute('data-rebalances') : -1,\
                             svg: (document.querySelector('#timeline svg') || {textContent: ''}).textContent};",
                    vec![],
                )
                .await
                .expect("timeline");
            (v["rebalances"].as_i64().unwrap_or(-1), v["svg"].as_str().unwrap_or_default().to_owned())
        }
    };
    let (rebalances_before, _) = timeline_state(c).await;
    assert!(rebalances_before >= 0, "a timeline on the page");
    let generations_before = rows(c, "timeline-body").await.len();
    processes.push(cluster.kcp("page-classic-2", &MemberOptions::new(live_group, [topic]).duration_s(200)));
    let timeline = until_rows(c, "timeline-body", "the rebalance on the timeline", |r| {
        r.len() > generations_before
            && r.first().is_some_and(|newest| newest[2] == "Stable" && newest[4] == "2")
            && r.iter().any(|row| row[4] == "2" && !row[5].is_empty())
    })
    .await;
    let (rebalances_after, picture) = timeline_state(c).await;
    assert!(rebalances_after > rebalances_before, "rebalances {rebalances_before} -> {rebalances_after}");
    let generation = &timeline[0][1];
    if generation != "-" {
        assert!(picture.contains(&format!("generation {generation}:")), "generation {generation} drawn: {picture}");
    }
    assert!(picture.contains("joined"), "the join drawn as a step: {picture}");
    no_script_errors(c, "the group page after the rebalance").await;
    if let Some(dir) = &screenshots {
        // The whole page, timeline and tables included.
        let height = c.execute("return document.documentElement.scrollHeight;", vec![]).await.unwrap();
        c.set_window_size(1280, height.as_u64().unwrap_or(1000).clamp(1000, 4000) as u32).await.expect("resize");
        c.execute("window.scrollTo(0, 0);", vec![]).await.expect("scroll to the top");
        std::fs::write(Path::new(dir).join("serve-group.png"), c.screenshot().await.expect("screenshot"))
            .expect("save");
        c.set_window_size(1280, 1000).await.expect("resize");
    }

    // The lag chart moves: records produced to the lagging group's topic.
    open(c, &format!("{base}/groups/default/{}", segment(lagging)), "open the group").await;
    let chart_points = |c: &Client| {
        let c = c.clone();
        async move {
            c.execute("return document.querySelector('#history svg polyline.lag').getAttribute('points');", vec![])
                .await
                .expect("the chart's points")
                .as_str()
                .unwrap_or_default()
                .to_owned()
        }
    };
    let history = until_rows(c, "history-body", "the lag history", |r| {
        r.first().is_some_and(|p| p[1] == after_commit.to_string())
    })
    .await;
    let before = chart_points(c).await;
    // Partition 0 ticked for its own chart: drawn, its data in a table, kept in the page's address.
    let pick = format!("#offsets-body input.chart-pick[value='{topic}:0']");
    click(c, "return document.querySelector(arguments[0]);", json!(pick), "partition 0's Chart box").await;
    let samples = until_rows(c, "partition-body", "partition 0's chart", |r| {
        !r.is_empty() && r.iter().all(|row| row[0] == format!("{topic}-0") && row[2] == committed_0)
    })
    .await;
    let lag_before: i64 = samples[0][3].parse().expect("a lag");
    assert_eq!(c.find_all(Locator::Css("#partition-chart svg polyline.series")).await.unwrap().len(), 1);
    let url = c.current_url().await.expect("url");
    assert!(url.query().is_some_and(|q| q.contains("p=")), "{url}");
    produce(cluster, topic, 30);
    until_rows(c, "history-body", "the new lag in the chart's table", |r| {
        r.first().is_some_and(|p| p[1] == (after_commit + 30).to_string())
    })
    .await;
    let after = chart_points(c).await;
    assert_ne!(before, after, "the chart moved (history {history:?})");
    until_rows(c, "partition-body", "partition 0's new lag", |r| {
        r.first().and_then(|row| row[3].parse::<i64>().ok()).is_some_and(|lag| lag > lag_before)
    })
    .await;
    let ticked = c.find(Locator::Css(&pick)).await.unwrap().prop("checked").await.unwrap();
    assert_eq!(ticked.as_deref(), Some("true"), "the box stays ticked through the live updates");
    no_script_errors(c, "the lagging group's page").await;

    // The group of 1,000 partitions: one page of 100 rows, paged, sorted and filtered across all.
    open(c, &format!("{base}/groups/default/{}", segment(big)), "open the big group").await;
    let timing = c
        .execute(
            "var n = performance.getEntriesByType('navigation')[0]; return [n.responseEnd - n.requestStart, n.domComplete, n.transferSize, n.decodedBodySize];",
            vec![],
        )
        .await
        .expect("navigation timing");
    println!(
        "serve_page: {}: 1,000-partition group page served in {} ms, DOM complete at {} ms, {} bytes transferred, HTML {} bytes",
        cluster.name, timing[0], timing[1], timing[2], timing[3]
    );
    // Issue 36: the page weighs under 200 kB (its rows are most of it: no end tags, no class per
    // cell, no Chart box sent).
    let html_bytes = timing[3].as_f64().unwrap_or(f64::MAX);
    assert!(html_bytes < 200_000.0, "the 1,000-partition group's page is {html_bytes} bytes");
    let info = || async { c.find(Locator::Id("offsets-info")).await.unwrap().text().await.unwrap() };
    let first_rows = rows(c, "offsets-body").await;
    assert_eq!(first_rows.len(), 100, "one page");
    assert_eq!(info().await, "rows 1-100 of 1000");
    assert_eq!(first_rows[0][1], "0");
    c.find(Locator::Id("offsets-next")).await.unwrap().click().await.unwrap();
    let second = rows(c, "offsets-body").await;
    assert_eq!((second.len(), second[0][1].as_str(), second[99][1].as_str()), (100, "100", "199"));
    assert_eq!(info().await, "rows 101-200 of 1000");
    c.find(Locator::Css("#offsets-size option[value='500']")).await.unwrap().click().await.unwrap();
    assert_eq!(rows(c, "offsets-body").await.len(), 500, "500 a page");
    c.find(Locator::Css("#offsets thead th:nth-child(2) button")).await.unwrap().click().await.unwrap();
    let sorted = rows(c, "offsets-body").await;
    assert_eq!((sorted[0][1].as_str(), sorted[499][1].as_str()), ("999", "500"), "sorted over all 1,000 rows");
    c.find(Locator::Id("offsets-next")).await.unwrap().click().await.unwrap();
    assert_eq!(rows(c, "offsets-body").await.last().map(|r| r[1].clone()).as_deref(), Some("0"));
    c.find(Locator::Id("filter-topic")).await.unwrap().send_keys("nothing-like-it").await.unwrap();
    until_rows(c, "offsets-body", "the filter over all pages", |r| r.is_empty()).await;
    assert_eq!(info().await, "no rows");
    c.find(Locator::Id("filter-topic")).await.unwrap().clear().await.unwrap();
    c.find(Locator::Id("filter-topic")).await.unwrap().send_keys(big).await.unwrap();
    until_rows(c, "offsets-body", "the filter", |r| r.len() == 500).await;
    assert_eq!(info().await, "rows 1-500 of 1000", "a new filter starts at the first page");
    no_script_errors(c, "the 1,000-partition group's page").await;

    // The KIP-848 group: its protocol and epochs.
    if let Some(kip848) = kip848 {
        open(c, &format!("{base}/groups/default/{}", segment(kip848)), "open the group").await;
        let summary = c.find(Locator::Id("summary")).await.unwrap().text().await.unwrap();
        assert!(summary.contains("consumer") && summary.contains("Group epoch"), "{summary}");
        assert!(summary.contains("Downgrade check"), "{summary}");
        no_script_errors(c, "the KIP-848 group's page").await;
    }
}

/// The render benchmark of `tools/live/bench-page.sh`: opens `KCP_PAGE_BENCH_URL` 10 times in
/// headless Chromium and prints, per load, the response time, DOM complete, when the page's script
/// was done (sorted, filtered, paged) and the bytes sent (the page, its script and style sheet).
#[test]
#[ignore = "a benchmark: tools/live/bench-page.sh runs it against a kcp serve of its own"]
fn bench_page_render() {
    let Some(url) = std::env::var_os("KCP_PAGE_BENCH_URL").and_then(|u| u.into_string().ok()) else {
        println!("SKIP: KCP_PAGE_BENCH_URL is not set");
        return;
    };
    let Some((driver, chromium)) = browser() else { return };
    let driver_port = free_port();
    let mut chromedriver = Command::new(&driver);
    chromedriver.arg(format!("--port={driver_port}")).stdout(Stdio::null()).stderr(Stdio::null());
    let _driver = spawn(chromedriver);
    wait_listening(driver_port, Duration::from_secs(30), "chromedriver");
    let profile = std::env::temp_dir().join(format!("{}-chromium", unique_name("bench-page")));
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        let c = browser_session(driver_port, &chromium, &profile).await;
        let mut ready = Vec::new();
        for run in 0..10 {
            open(&c, &url, "the benchmarked page").await;
            // The load event has run when domComplete is set.
            let v = c
                .execute_async(
                    "var done = arguments[arguments.length - 1];\
                     function measure() {\
                       var n = performance.getEntriesByType('navigation')[0];\
                       if (!n || !n.loadEventEnd) { setTimeout(measure, 20); return; }\
                       var bytes = n.transferSize;\
                       performance.getEntriesByType('resource').forEach(function (r) { bytes += r.transferSize; });\
                       done({response: n.responseEnd - n.requestStart, dom_complete: n.domComplete,\
                             ready: +document.documentElement.getAttribute('data-ready-ms'),\
                             html_bytes: n.decodedBodySize, sent_bytes: bytes, rows: document.querySelectorAll('tbody tr').length});\
                     }\
                     measure();",
                    vec![],
                )
                .await
                .expect("navigation timing");
            println!(
                "bench_page run {run}: response {:.1} ms, DOM complete {:.1} ms, script ready {} ms, HTML {} bytes, sent {} bytes (page, script, style sheet), {} rows",
                v["response"].as_f64().unwrap_or(-1.0),
                v["dom_complete"].as_f64().unwrap_or(-1.0),
                v["ready"],
                v["html_bytes"],
                v["sent_bytes"],
                v["rows"]
            );
            ready.push(v["dom_complete"].as_f64().unwrap_or(f64::MAX).max(v["ready"].as_f64().unwrap_or(f64::MAX)));
        }
        ready.sort_by(f64::total_cmp);
        println!(
            "bench_page rendered (the later of DOM complete and script ready): min {:.1} ms, median {:.1} ms, max {:.1} ms",
            ready[0],
            ready[ready.len() / 2],
            ready[ready.len() - 1]
        );
        let _ = c.close().await;
    });
    let _ = std::fs::remove_dir_all(&profile);
}
