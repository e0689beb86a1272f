// Keyboard review for the queue (GitHub/Linear style). It only moves focus and clicks the
// row's own buttons and links, so everything still works without it.
// j/k next/previous row, r review and root, d decline, x tick, ? help.
(function () {
  "use strict";
  var rows = function () { return Array.prototype.slice.call(document.querySelectorAll("tr[data-row]")); };
  var current = function () {
    var active = document.activeElement;
    return active && active.closest ? active.closest("tr[data-row]") : null;
  };
  var focusRow = function (row) {
    if (!row) { return; }
    row.focus();
    row.scrollIntoView({ block: "nearest" });
  };
  var move = function (step) {
    var all = rows();
    if (!all.length) { return; }
    var at = all.indexOf(current());
    focusRow(all[Math.max(0, Math.min(all.length - 1, at < 0 ? 0 : at + step))]);
  };
  var press = function (key) {
    var row = current();
    var target = row && row.querySelector('[data-key="' + key + '"]');
    if (target) { target.click(); }
  };
  var pickAll = document.getElementById("pick-all");
  if (pickAll) {
    pickAll.hidden = false;
    pickAll.addEventListener("change", function () {
      document.querySelectorAll('input[name="ids"][form="bulk-form"]').forEach(function (box) {
        box.checked = pickAll.checked;
      });
    });
  }
  // After htmx swaps a decided row, go on to the next one.
  // outerHTML replaced the old row, so look the new one up by its stable id.
  document.body.addEventListener("htmx:afterSwap", function (event) {
    var swapped = event.detail.target && document.getElementById(event.detail.target.id);
    var all = rows();
    var at = all.indexOf(swapped);
    if (at >= 0) { focusRow(all[at + 1] || swapped); }
  });
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    var tag = (event.target.tagName || "").toLowerCase();
    if (tag === "input" || tag === "textarea" || tag === "select" || event.target.isContentEditable) { return; }
    var help = document.getElementById("keys-help");
    if (event.key === "j") { move(1); }
    else if (event.key === "k") { move(-1); }
    else if (event.key === "r" || event.key === "d" || event.key === "x") { press(event.key); }
    else if (event.key === "?" && help) { help.open = !help.open; if (help.open) { help.querySelector("summary").focus(); } }
    else { return; }
    event.preventDefault();
  });
})();
