// Sortable tables and the stack/workload filter. No request leaves the page.
(function () {
  "use strict";
  var FACTORS = {"µs": 1, "ms": 1e3, "s": 1e6, "%": 1, "×": 1};

  // A cell's sort key: the leading number (thousands separators and units understood:
  // 900 µs < 3.0 ms), or its text. Missing figures ('–') sort last either way.
  function key(cell) {
    var text = cell.textContent.trim();
    if (text === "" || text === "–") { return null; }
    var m = /^(-?[\d,]*\.?\d+(?:e[+-]?\d+)?)\s*(µs|ms|s|%|×)?/i.exec(text);
    if (!m) { return text.toLowerCase(); }
    return parseFloat(m[1].replace(/,/g, "")) * (FACTORS[m[2]] || 1);
  }

  function compare(a, b) {
    if (a === b) { return 0; }
    if (a === null) { return 1; }
    if (b === null) { return -1; }
    if (typeof a === typeof b) { return a < b ? -1 : 1; }
    return typeof a === "number" ? -1 : 1;  // numbers before words
  }

  function sortBy(table, th, index) {
    var ascending = th.getAttribute("aria-sort") !== "ascending";
    table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows).map(function (row, i) {
      return {row: row, key: key(row.cells[index]), i: i};
    });
    rows.sort(function (x, y) {
      var c = compare(x.key, y.key);
      if (c !== 0 && x.key !== null && y.key !== null && !ascending) { c = -c; }
      return c || x.i - y.i;
    });
    rows.forEach(function (r) { body.appendChild(r.row); });
  }

  document.querySelectorAll("table.sortable").forEach(function (table) {
    table.querySelectorAll("thead th").forEach(function (th, index) {
      th.classList.add("sortable");
      th.setAttribute("tabindex", "0");
      th.addEventListener("click", function () { sortBy(table, th, index); });
      th.addEventListener("keydown", function (e) {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sortBy(table, th, index); }
      });
    });
  });

  var stackSelect = document.getElementById("filter-stack");
  var workloadSelect = document.getElementById("filter-workload");
  function applyFilter() {
    var stack = stackSelect.value, workload = workloadSelect.value;
    document.querySelectorAll("[data-workload]").forEach(function (el) {
      el.hidden = workload !== "" && el.getAttribute("data-workload") !== workload;
    });
    document.querySelectorAll("[data-stack]").forEach(function (el) {
      el.hidden = stack !== "" && el.getAttribute("data-stack") !== stack;
    });
    var count = document.getElementById("filter-count");
    var shown = document.querySelectorAll("section.workload:not([hidden])").length;
    count.textContent = shown + " of " +
      document.querySelectorAll("section.workload").length + " workloads shown";
  }
  if (stackSelect && workloadSelect) {
    stackSelect.addEventListener("change", applyFilter);
    workloadSelect.addEventListener("change", applyFilter);
    applyFilter();
  }
})();
