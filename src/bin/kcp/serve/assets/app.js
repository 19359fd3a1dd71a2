// kcp serve's page: sorting and filtering of the tables, and live updates. The server renders
// every page (names escaped there); on each event of the cluster's stream this script fetches the
// same page again and swaps the parts marked data-live, keeping the sort order and the filters.
// No eval, no inline handlers, no other origin (the Content-Security-Policy forbids them).
"use strict";
(function () {
  var errors = [];
  // Errors and policy violations are counted where a test (or a person) can read them.
  window.addEventListener("error", function (e) {
    errors.push(String(e.message || e.type));
    document.documentElement.setAttribute("data-js-errors", String(errors.length));
  });
  document.addEventListener("securitypolicyviolation", function (e) {
    errors.push("CSP: " + e.violatedDirective + " " + e.blockedURI);
    document.documentElement.setAttribute("data-js-errors", String(errors.length));
  });
  window.kcpErrors = errors;

  var sortState = {}; // table id -> {col, dir}
  var pageState = {}; // table id -> {page, size} (tables with data-paged: the offsets of a large group)

  function cellValue(row, col, kind) {
    var cell = row.cells[col];
    if (!cell) return kind === "num" ? -Infinity : "";
    if (kind === "num") {
      // data-v where the text is rounded; else the text itself ("-": unknown, the smallest).
      var v = parseFloat(cell.hasAttribute("data-v") ? cell.getAttribute("data-v") : cell.textContent);
      return isNaN(v) ? -Infinity : v;
    }
    return cell.textContent.toLowerCase();
  }

  function applySort(table) {
    var state = sortState[table.id];
    var headers = table.tHead ? table.tHead.rows[0].cells : [];
    for (var i = 0; i < headers.length; i++) {
      if (state && i === state.col) headers[i].setAttribute("aria-sort", state.dir > 0 ? "ascending" : "descending");
      else headers[i].removeAttribute("aria-sort");
    }
    if (!state) return;
    var kind = headers[state.col].getAttribute("data-sort");
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.forEach(function (r, i) { r.__index = i; });
    rows.sort(function (a, b) {
      var x = cellValue(a, state.col, kind), y = cellValue(b, state.col, kind);
      if (x < y) return -state.dir;
      if (x > y) return state.dir;
      return a.__index - b.__index;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }

  // Which rows the filters keep; then, in a paged table, one page of them. Each row's `hidden`
  // is written only where it changes: a list of 1,000 groups is restyled for the rows that
  // appear or go, not for every row twice.
  function applyFilters(table) {
    var inputs = document.querySelectorAll('input[data-filter="' + table.id + '"]');
    var needles = [];
    for (var i = 0; i < inputs.length; i++) {
      var needle = inputs[i].value.trim().toLowerCase();
      if (needle) needles.push({ needle: needle, spec: inputs[i].getAttribute("data-col") });
    }
    var body = table.tBodies[0];
    var kept = 0;
    var show = [];
    for (var r = 0; r < body.rows.length; r++) {
      var row = body.rows[r];
      var keep = true;
      for (var n = 0; n < needles.length && keep; n++) {
        var spec = needles[n].spec;
        var hay;
        if (spec === "*") hay = row.textContent;
        else hay = spec.split(",").map(function (c) { var cell = row.cells[+c]; return cell ? cell.textContent : ""; }).join(" ");
        if (hay.toLowerCase().indexOf(needles[n].needle) < 0) keep = false;
      }
      show.push(keep);
      if (keep) kept++;
    }
    table.setAttribute("data-shown", String(kept));
    var paging = table.hasAttribute("data-paged") ? pageState[table.id] : null;
    var range = paging ? applyPage(table, paging, kept) : { from: 0, to: kept };
    var k = 0;
    for (var j = 0; j < body.rows.length; j++) {
      var visible = false;
      if (show[j]) { visible = k >= range.from && k < range.to; k++; }
      if (body.rows[j].hidden === visible) body.rows[j].hidden = !visible;
    }
    if (table.hasAttribute("data-pick")) addChartPicks(table, +table.getAttribute("data-pick"));
  }

  // Which of the `count` kept rows the page shows ({from, to}), and says which.
  function applyPage(table, paging, count) {
    var size = paging.size;
    var pages = size > 0 ? Math.max(1, Math.ceil(count / size)) : 1;
    if (paging.page >= pages) paging.page = pages - 1;
    if (paging.page < 0) paging.page = 0;
    var from = size > 0 ? paging.page * size : 0;
    var to = size > 0 ? Math.min(count, from + size) : count;
    var info = document.getElementById(table.id + "-info");
    if (info) {
      info.textContent = count ? "rows " + (from + 1) + "-" + to + " of " + count : "no rows";
    }
    var prev = document.getElementById(table.id + "-prev"), next = document.getElementById(table.id + "-next");
    if (prev) prev.disabled = paging.page === 0;
    if (next) next.disabled = paging.page >= pages - 1;
    table.setAttribute("data-page", String(paging.page));
    return { from: from, to: to };
  }

  // The partitions on the chart: the page's ?p=topic:partition values.
  function charted() {
    return new URLSearchParams(window.location.search).getAll("p");
  }

  // The Chart box of each shown offsets row (column `col`), made here rather than sent: a box
  // does nothing without this script, and a 1,000-partition group shows 100 rows at first. Its
  // value is the row's topic and partition as shown; its label says which.
  function addChartPicks(table, col) {
    var picked = charted();
    var rows = table.tBodies[0].rows;
    for (var r = 0; r < rows.length; r++) {
      var row = rows[r];
      if (row.hidden || row.cells.length > col) continue;
      while (row.cells.length < col) row.insertCell(-1);
      var value = row.cells[0].textContent + ":" + row.cells[1].textContent;
      var box = document.createElement("input");
      box.type = "checkbox";
      box.className = "chart-pick";
      box.value = value;
      box.setAttribute("aria-label", "Chart " + value);
      box.checked = picked.indexOf(value) >= 0;
      row.insertCell(-1).appendChild(box);
    }
  }

  function setupPager(table) {
    var select = document.querySelector('select[data-page-size="' + table.id + '"]');
    pageState[table.id] = { page: 0, size: select ? +select.value : 100 };
    if (select) {
      select.addEventListener("change", function () {
        pageState[table.id] = { page: 0, size: +select.value };
        applyFilters(table);
      });
    }
    ["prev", "next"].forEach(function (which) {
      var button = document.getElementById(table.id + "-" + which);
      if (!button) return;
      button.addEventListener("click", function () {
        pageState[table.id].page += which === "next" ? 1 : -1;
        applyFilters(table);
      });
    });
  }

  function refreshTable(table) {
    applySort(table);
    applyFilters(table);
  }

  function setup() {
    var tables = document.querySelectorAll("table.sortable");
    Array.prototype.forEach.call(tables, function (table) {
      if (table.hasAttribute("data-paged")) setupPager(table);
      var headers = table.tHead.rows[0].cells;
      Array.prototype.forEach.call(headers, function (th, col) {
        var button = th.querySelector("button");
        if (!button) return;
        button.addEventListener("click", function () {
          var state = sortState[table.id];
          var dir = state && state.col === col ? -state.dir : (th.getAttribute("data-sort") === "num" ? -1 : 1);
          sortState[table.id] = { col: col, dir: dir };
          refreshTable(table);
        });
      });
      refreshTable(table);
    });
    Array.prototype.forEach.call(document.querySelectorAll("input[data-filter]"), function (input) {
      input.addEventListener("input", function () {
        var table = document.getElementById(input.getAttribute("data-filter"));
        if (pageState[input.getAttribute("data-filter")]) pageState[input.getAttribute("data-filter")].page = 0;
        if (table) applyFilters(table);
      });
    });
    // A partition ticked in the offsets table goes on the chart: the selection is the page's own
    // query (?p=topic:partition), so the server draws it and every live update keeps it.
    document.addEventListener("change", function (e) {
      var t = e.target;
      if (!t || !t.classList || !t.classList.contains("chart-pick")) return;
      // From the address, not from the boxes: a partition ticked on another page of the table
      // has no box now, and stays on the chart.
      var params = new URLSearchParams(window.location.search);
      var picked = params.getAll("p").filter(function (v) { return v !== t.value; });
      if (t.checked) picked.push(t.value);
      params.delete("p");
      picked.forEach(function (v) { params.append("p", v); });
      var query = params.toString();
      window.history.replaceState(null, "", window.location.pathname + (query ? "?" + query : ""));
      reload();
    });
    live();
    // When the page was ready to use (sorted, filtered, paged), for the browser benchmark.
    document.documentElement.setAttribute("data-ready-ms", String(Math.round(performance.now())));
    document.documentElement.setAttribute("data-ready", "1");
  }

  var pending = false, again = false, updates = 0;

  function reload() {
    if (pending) { again = true; return; }
    pending = true;
    fetch(window.location.href, { credentials: "same-origin", cache: "no-store" })
      .then(function (response) {
        if (!response.ok) throw new Error("HTTP " + response.status);
        return response.text();
      })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        Array.prototype.forEach.call(doc.querySelectorAll("[data-live]"), function (fresh) {
          var old = fresh.id && document.getElementById(fresh.id);
          if (old) old.replaceWith(document.importNode(fresh, true));
        });
        Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), refreshTable);
        updates++;
        document.documentElement.setAttribute("data-updates", String(updates));
      })
      .catch(function (e) {
        // The server may be restarting: shown, not thrown; the next event tries again.
        document.documentElement.setAttribute("data-update-error", String(e && e.message));
      })
      .then(function () {
        pending = false;
        if (again) { again = false; reload(); }
      });
  }

  function live() {
    var url = document.body.getAttribute("data-events");
    if (!url || !window.EventSource) return;
    var source = new EventSource(url);
    var names = ["collected", "state_change", "rebalance", "member_joined", "member_left", "lag_status", "message"];
    // Every event may change what is shown; the recent ones replayed on connect are skipped.
    var connectedAt = Date.now();
    names.forEach(function (name) {
      source.addEventListener(name, function () {
        if (name !== "collected" && Date.now() - connectedAt < 500) return;
        reload();
      });
    });
    source.onerror = function () { /* EventSource reconnects by itself */ };
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", setup);
  else setup();
})();
