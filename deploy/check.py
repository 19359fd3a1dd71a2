#!/usr/bin/env python3
"""Checks deploy/'s Grafana dashboard and Prometheus rules against kcp serve's metrics contract.

usage: python3 deploy/check.py [--promtool]   (from the repository root; python3 stdlib only)

The contract is deploy/metrics.txt: each metric kcp serve exports, with its labels. Checked:
- the dashboard is well-formed JSON in Grafana's classic model (schemaVersion 42): unique panel
  ids, panels inside the 24-column grid and not overlapping, every panel and query on the
  `datasource` variable (no data source uid of ours baked in), the variables it uses defined;
- every status panel maps the codes 0-6 to Burrow's words (NOTFOUND OK WARN ERR STOP STALL
  REWIND), each with a colour;
- every PromQL expression (dashboard queries, variables and annotations; alerting rules; the
  series of the rules' unit tests) names only contract metrics (and Prometheus's own `up` and
  `ALERTS`), and only labels those metrics have (plus the target labels instance and job) in its
  matchers, `by`/`on`/... lists, legends and alert templates; the unit tests' series carry every
  label of their metric;
- docs/cli.md, once it documents the metrics, names every metric of deploy/metrics.txt.
With --promtool (needs promtool on PATH): every dashboard query, with the variables set to one
cluster and one group, returns data from series shaped as the contract says (promtool test
rules over generated series), so a query that joins on a missing label shows up as empty.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
METRICS = os.path.join(ROOT, "deploy", "metrics.txt")
DASHBOARD = os.path.join(ROOT, "deploy", "grafana", "kcp-consumer-groups.json")
RULES = os.path.join(ROOT, "deploy", "prometheus", "kcp-alerts.yml")
RULE_TESTS = os.path.join(ROOT, "deploy", "prometheus", "kcp-alerts.test.yml")
CLI_DOC = os.path.join(ROOT, "docs", "cli.md")

SCHEMA_VERSION = 42  # Grafana's last classic (v1) dashboard schema version
TARGET_LABELS = {"instance", "job"}
BURROW_WORDS = ["NOTFOUND", "OK", "WARN", "ERR", "STOP", "STALL", "REWIND"]
GRAFANA_BUILTINS = {"__rate_interval", "__interval", "__interval_ms", "__range", "__range_s",
                    "__range_ms", "__from", "__to", "__all", "__dashboard", "__org", "__user"}
# Values the --promtool check gives the dashboard's variables (the generated series' labels).
SUBSTITUTIONS = {"cluster_name": "c1", "group": "g1", "__rate_interval": "4m", "__interval": "1m",
                 "__range": "1h"}
SAMPLE_LABELS = {"cluster_name": "c1", "group": "g1", "topic": "t1", "partition": "0",
                 "method": "fetch", "kind": "timeout", "member_id": "m1", "client_id": "client-1",
                 "state": "Stable", "protocol_type": "consumer", "protocol": "range",
                 "group_protocol": "classic", "instance": "kcp-1:8080", "job": "kcp"}
PROMQL_KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and",
                   "or", "unless", "offset", "atan2"}
LABEL_LIST_KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right"}
# Aggregations may be followed by `by (...)` or `without (...)` before their parenthesis.
AGGREGATIONS = {"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values",
                "bottomk", "topk", "quantile", "limitk", "limit_ratio"}

errors = []


def error(where, message):
    errors.append(f"{where}: {message}")


def load_contract():
    """{metric: labels}, every metric with cluster_name; Prometheus's own series beside them."""
    contract = {}
    with open(METRICS, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split()
            if len(parts) != 2 or not re.fullmatch(r"kcp_[a-z0-9_]+", parts[0]):
                sys.exit(f"deploy/metrics.txt:{number}: expected 'kcp_name label,label' or 'kcp_name -'")
            labels = set() if parts[1] == "-" else set(parts[1].split(","))
            contract[parts[0]] = labels | {"cluster_name"}
    return contract


def prometheus_series(contract):
    every_label = set().union(*contract.values())
    # `up` is the scrape's; ALERTS carries the labels of the alerts (the contract's).
    return {"up": set(), "ALERTS": every_label | {"alertname", "alertstate", "severity"}}


def analyse_promql(expr):
    """The metric selectors (name, matcher labels) and the labels named in by/on/... lists."""
    selectors, listed = [], []
    i, n = 0, len(expr)
    while i < n:
        c = expr[i]
        if c in "\"'`":
            end = expr.find(c, i + 1)
            while end > 0 and expr[end - 1] == "\\":
                end = expr.find(c, end + 1)
            i = (end if end > 0 else n) + 1
        elif c == "[":
            i = expr.index("]", i) + 1
        elif c == "{":
            end = expr.index("}", i)
            selectors.append((None, re.findall(r'([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)\s*"', expr[i:end])))
            i = end + 1
        elif c.isdigit() or (c == "." and i + 1 < n and expr[i + 1].isdigit()):
            m = re.match(r"[0-9.]+(?:e[+-]?[0-9]+)?[smhdwy]*", expr[i:])
            i += max(1, len(m.group(0)))
        elif c.isalpha() or c in "_:":
            m = re.match(r"[A-Za-z_:][A-Za-z0-9_:]*", expr[i:])
            word = m.group(0)
            i += len(word)
            j = i
            while j < n and expr[j].isspace():
                j += 1
            if word in LABEL_LIST_KEYWORDS and j < n and expr[j] == "(":
                end = expr.index(")", j)
                listed += [x.strip() for x in expr[j + 1:end].split(",") if x.strip()]
                i = end + 1
            elif word in PROMQL_KEYWORDS or word in AGGREGATIONS or (j < n and expr[j] == "("):
                continue  # a keyword, or a function or aggregation
            elif j < n and expr[j] == "{":
                end = expr.index("}", j)
                matchers = re.findall(r'([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)\s*"', expr[j:end])
                selectors.append((word, matchers))
                i = end + 1
            else:
                selectors.append((word, []))
        else:
            i += 1
    return selectors, listed


def check_promql(where, expr, contract, known, template_labels=()):
    """Checks names and labels of one expression; returns the labels its metrics have."""
    selectors, listed = analyse_promql(expr)
    available = set(TARGET_LABELS)
    for name, matchers in selectors:
        if name is None:
            error(where, f"a selector without a metric name in {expr!r}")
            continue
        if name not in known:
            error(where, f"metric {name} is not in deploy/metrics.txt (the kcp serve contract)")
            continue
        allowed = known[name] | TARGET_LABELS
        available |= allowed
        for label in matchers:
            if label not in allowed:
                error(where, f"{name} has no label {label!r} (contract labels: {sorted(known[name])})")
    if not selectors:
        error(where, f"no metric in {expr!r}")
    for label in list(listed) + list(template_labels):
        if label not in available:
            error(where, f"label {label!r} is on none of the metrics of {expr!r}")
    return available


def grafana_variables(text):
    return set(re.findall(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)", text)) | set(re.findall(r"\[\[([A-Za-z0-9_]+)", text))


def substitute(where, expr):
    def value(m):
        name = m.group(1) or m.group(2)
        if name not in SUBSTITUTIONS:
            error(where, f"${name}: add a value for it to SUBSTITUTIONS in deploy/check.py")
            return ".*"
        return SUBSTITUTIONS[name]
    return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)", value, expr)


def has_status_mappings(mappings):
    for mapping in mappings:
        options = mapping.get("options", {}) if mapping.get("type") == "value" else {}
        if [options.get(str(code), {}).get("text") for code in range(7)] == BURROW_WORDS:
            if all(options[str(code)].get("color") for code in range(7)):
                return True
    return False


def check_dashboard(contract, known):
    """Returns the dashboard's queries, (where, expr), for the --promtool check."""
    try:
        with open(DASHBOARD, encoding="utf-8") as f:
            dash = json.load(f)
    except (OSError, ValueError) as e:
        error("deploy/grafana/kcp-consumer-groups.json", f"not well-formed JSON: {e}")
        return []
    where = "dashboard"
    for key in ("uid", "title", "panels", "templating", "schemaVersion"):
        if key not in dash:
            error(where, f"no {key!r}")
    if dash.get("schemaVersion") != SCHEMA_VERSION:
        error(where, f"schemaVersion {dash.get('schemaVersion')}, expected {SCHEMA_VERSION}")
    if "__inputs" in dash or "__requires" in dash:
        error(where, "__inputs/__requires: use the datasource variable (provisioning cannot fill inputs)")

    variables = {v.get("name"): v for v in dash.get("templating", {}).get("list", [])}
    ds = variables.get("datasource", {})
    if ds.get("type") != "datasource" or ds.get("query") != "prometheus":
        error(where, "no variable 'datasource' of type datasource for prometheus")
    queries = []
    for name in ("cluster_name", "group"):
        var = variables.get(name)
        if not var or var.get("type") != "query":
            error(where, f"no query variable {name!r}")
            continue
        query = var.get("query")
        query = query.get("query") if isinstance(query, dict) else query
        m = re.fullmatch(r"\s*label_values\((.*),\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)\s*", query or "")
        if not m or m.group(2) != name:
            error(where, f"variable {name}: expected label_values(..., {name}), got {query!r}")
            continue
        check_promql(f"variable {name}", m.group(1), contract, known, [name])
        queries.append((f"variable {name}", f"count by ({name}) ({m.group(1)})"))
        if var.get("datasource", {}).get("uid") != "${datasource}":
            error(where, f"variable {name} does not use ${{datasource}}")
    defined = set(variables) | GRAFANA_BUILTINS

    for ann in dash.get("annotations", {}).get("list", []):
        if "expr" in ann:
            name = f"annotation {ann.get('name')!r}"
            if ann.get("datasource", {}).get("uid") != "${datasource}":
                error(name, "the annotation's datasource is not ${datasource}")
            labels = re.findall(r"\{\{\s*\.?([A-Za-z_][A-Za-z0-9_]*)\s*\}\}", ann.get("titleFormat", "") + ann.get("textFormat", ""))
            check_promql(name, ann["expr"], contract, known, labels)
            queries.append((name, ann["expr"]))
            for var in grafana_variables(ann["expr"]) - defined:
                error(name, f"variable ${var} is not defined")

    ids, cells = set(), {}
    for panel in dash.get("panels", []):
        pid, title = panel.get("id"), panel.get("title")
        name = f"panel {pid} {title!r}"
        if pid in ids:
            error(name, "duplicate panel id")
        ids.add(pid)
        grid = panel.get("gridPos", {})
        x, y, w, h = (grid.get(k) for k in ("x", "y", "w", "h"))
        if None in (x, y, w, h) or x < 0 or w < 1 or h < 1 or x + w > 24:
            error(name, f"gridPos {grid} is outside the 24-column grid")
        else:
            for cx in range(x, x + w):
                for cy in range(y, y + h):
                    if (cx, cy) in cells:
                        error(name, f"overlaps panel {cells[(cx, cy)]}")
                        break
                    cells[(cx, cy)] = pid
                else:
                    continue
                break
        if panel.get("type") == "row":
            if panel.get("panels"):
                error(name, "collapsed rows hide their panels from this check: keep rows open")
            continue
        if panel.get("datasource", {}).get("uid") != "${datasource}":
            error(name, "the panel's datasource is not ${datasource}")
        targets = panel.get("targets") or []
        if not targets:
            error(name, "no queries")
        refs = [t.get("refId") for t in targets]
        if len(set(refs)) != len(refs):
            error(name, f"duplicate refIds {refs}")
        reads_status = False
        for t in targets:
            tname = f"{name} query {t.get('refId')}"
            if t.get("datasource", {}).get("uid") != "${datasource}":
                error(tname, "the query's datasource is not ${datasource}")
            expr = t.get("expr", "")
            legend = re.findall(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}", t.get("legendFormat", ""))
            check_promql(tname, expr, contract, known, legend)
            for var in grafana_variables(expr) - defined:
                error(tname, f"variable ${var} is not defined")
            queries.append((tname, expr))
            # A query comparing the status (count of groups in ERR) shows a count, not codes.
            if "kcp_consumergroup_status" in expr and not re.search(r"[<>]|==|!=", expr):
                reads_status = True
        if reads_status:
            config = panel.get("fieldConfig", {})
            mapped = has_status_mappings(config.get("defaults", {}).get("mappings", []))
            for o in config.get("overrides", []):
                for prop in o.get("properties", []):
                    if prop.get("id") == "mappings" and has_status_mappings(prop.get("value", [])):
                        mapped = True
            if not mapped:
                error(name, "shows kcp_consumergroup_status without mapping 0-6 to "
                      + "/".join(BURROW_WORDS) + " with colours")
    return queries


def yaml_blocks(path):
    """(line number, key, value) for `key: value` lines, folding block scalars (| and >)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    out, i = [], 0
    while i < len(lines):
        m = re.match(r"^(\s*)(?:- )?([A-Za-z_]+):\s*(.*)$", lines[i])
        if not m:
            i += 1
            continue
        indent, key, value = len(m.group(1)), m.group(2), m.group(3)
        start = i + 1
        i += 1
        if value in ("|", ">-", ">", "|-"):
            block = []
            while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent):
                block.append(lines[i].strip())
                i += 1
            value = " ".join(block).strip()
        elif len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        out.append((start, key, value))
    return out


def check_rules(contract, known):
    current, available = None, set()
    count = 0
    for line, key, value in yaml_blocks(RULES):
        where = f"deploy/prometheus/kcp-alerts.yml:{line}"
        if key == "alert":
            current = value
        elif key == "expr":
            count += 1
            available = check_promql(f"{where} ({current})", value, contract, known)
        elif key in ("summary", "description", "runbook"):
            for label in re.findall(r"\$labels\.([A-Za-z_][A-Za-z0-9_]*)", value):
                if label not in available:
                    error(f"{where} ({current})", f"$labels.{label}: the expression's metrics have no such label")
    if count == 0:
        error("deploy/prometheus/kcp-alerts.yml", "no rule found")
    for line, key, value in yaml_blocks(RULE_TESTS):
        if key != "series":
            continue
        where = f"deploy/prometheus/kcp-alerts.test.yml:{line}"
        m = re.fullmatch(r"([A-Za-z_:][A-Za-z0-9_:]*)\{(.*)\}", value)
        if not m:
            error(where, f"cannot read series {value!r}")
            continue
        name, labels = m.group(1), set(re.findall(r'([A-Za-z_][A-Za-z0-9_]*)="', m.group(2)))
        if name not in known:
            error(where, f"metric {name} is not in deploy/metrics.txt")
            continue
        if name == "up":
            expected = TARGET_LABELS
        else:
            expected = known[name] | TARGET_LABELS
        if name != "ALERTS" and labels != expected:
            error(where, f"{name} has labels {sorted(labels)}; kcp serve's series (scraped) have {sorted(expected)}")


def check_cli_doc(contract):
    if not os.path.exists(CLI_DOC):
        return
    with open(CLI_DOC, encoding="utf-8") as f:
        doc = f.read()
    if "kcp_consumergroup_lag_seconds" not in doc:
        return  # the metrics are not documented there yet
    documented = set(re.findall(r"kcp_[a-z0-9_]+", doc))
    for name in sorted(contract):
        if name not in documented and name.removesuffix("_total") not in documented:
            error("docs/cli.md", f"{name} (deploy/metrics.txt) is not in the metrics contract")


def run_promtool(contract, queries):
    """Every query returns data from generated contract-shaped series (promtool test rules)."""
    with tempfile.TemporaryDirectory(prefix="kcp-deploy-check.") as tmp:
        series = []
        for name, labels in sorted(contract.items()):
            selector = ",".join(f'{l}="{SAMPLE_LABELS[l]}"' for l in sorted(labels | TARGET_LABELS))
            values = "3x120" if name == "kcp_consumergroup_status" else "1+1x120"
            series.append((f"{name}{{{selector}}}", values))
        series.append(('up{instance="kcp-1:8080",job="kcp"}', "1x120"))
        series.append(('ALERTS{alertname="KcpConsumerGroupLagging",alertstate="firing",cluster_name="c1",group="g1",severity="warning"}', "1x120"))
        rules = ["groups:", "  - name: dashboard-queries", "    rules:"]
        tests = ["rule_files: [rules.yml]", "evaluation_interval: 1m", "tests:", "  - interval: 1m",
                 "    input_series:"]
        for selector, values in series:
            tests += [f"      - series: {json.dumps(selector)}", f"        values: {json.dumps(values)}"]
        tests.append("    alert_rule_test:")
        for number, (where, expr) in enumerate(queries):
            alert = f"Query{number}"
            rules += [f"      - alert: {alert}", f"        expr: {json.dumps('count(' + substitute(where, expr) + ') > 0')}"]
            tests += ["      - eval_time: 60m", f"        alertname: {alert}",
                      f"        exp_alerts: [{{exp_labels: {{}}}}]"]
        with open(os.path.join(tmp, "rules.yml"), "w", encoding="utf-8") as f:
            f.write("\n".join(rules) + "\n")
        with open(os.path.join(tmp, "test.yml"), "w", encoding="utf-8") as f:
            f.write("\n".join(tests) + "\n")
        r = subprocess.run(["promtool", "test", "rules", os.path.join(tmp, "test.yml")],
                           capture_output=True, text=True)
        if r.returncode != 0:
            for number, (where, expr) in enumerate(queries):
                if re.search(rf"alertname: Query{number},", r.stdout + r.stderr):
                    error(where, f"returns no data from contract-shaped series: {expr}")
            if not errors:
                error("promtool", (r.stdout + r.stderr).strip())


def main():
    use_promtool = "--promtool" in sys.argv[1:]
    contract = load_contract()
    known = dict(contract)
    known.update(prometheus_series(contract))
    queries = check_dashboard(contract, known)
    check_rules(contract, known)
    check_cli_doc(contract)
    if use_promtool and not errors:
        run_promtool(contract, queries)
    for e in errors:
        print(e, file=sys.stderr)
    if errors:
        sys.exit(f"deploy/check.py: {len(errors)} problem(s)")
    print(f"deploy/check.py: dashboard and rules use only the {len(contract)} contract metrics "
          f"and their labels; {len(queries)} dashboard queries"
          + (" return data from contract-shaped series (promtool)" if use_promtool else ""))


if __name__ == "__main__":
    main()
