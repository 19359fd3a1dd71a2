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

  function applyFilters(table) {
    var inputs = document.querySelectorAll('input[data-filter="' + table.id + '"]');
    var body = table.tBodies[0];
    var shown = 0;
    for (var r = 0; r < body.rows.length; r++) {
      var row = body.rows[r];
      var keep = true;
      for (var i = 0; i < inputs.length; i++) {
        var needle = inputs[i].value.trim().toLowerCase();
        if (!needle) continue;
        var spec = inputs[i].getAttribute("data-col");
        var hay;
        if (spec === "*") hay = row.textContent;
        else hay = spec.split(",").map(function (c) { var cell = row.cells[+c]; return cell ? cell.textContent : ""; }).join(" ");
        if (hay.toLowerCase().indexOf(needle) < 0) keep = false;
      }
      row.hidden = !keep;
      if (keep) shown++;
    }
    table.setAttribute("data-shown", String(shown));
  }

  function refreshTable(table) {
    applySort(table);
    applyFilters(table);
  }

  function setup() {
    var tables = document.querySelectorAll("table.sortable");
    Array.prototype.forEach.call(tables, function (table) {
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
        if (table) applyFilters(table);
      });
    });
    live();
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
