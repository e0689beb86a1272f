// The node picker: shows the search box under a number box (htmx fills its suggestions) and a
// click on a suggestion writes its number into the box. Without JavaScript the box alone works.
(function () {
  "use strict";
  var show = function () {
    document.querySelectorAll("[data-picker][hidden]").forEach(function (el) { el.hidden = false; });
  };
  document.addEventListener("DOMContentLoaded", show);
  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest("button[data-pick]") : null;
    if (!button) { return; }
    var box = document.getElementById(button.getAttribute("data-for"));
    if (!box) { return; }
    var id = button.getAttribute("data-pick");
    if (box.hasAttribute("data-pick-append") && box.value.trim()) {
      box.value = box.value.replace(/[\s,]+$/, "") + ", " + id;
    } else {
      box.value = id;
    }
    box.focus();
  });
})();
