// The main navigation's groups are <details>, which open and close without JavaScript. This
// only tidies: opening one closes the others, and a click elsewhere or Escape closes them all.
(function () {
  "use strict";
  var groups = function () { return Array.prototype.slice.call(document.querySelectorAll("details.nav-group")); };
  var closeAll = function (except) {
    groups().forEach(function (g) { if (g !== except) { g.open = false; } });
  };
  document.addEventListener("toggle", function (event) {
    var group = event.target;
    if (group.matches && group.matches("details.nav-group") && group.open) { closeAll(group); }
  }, true);
  document.addEventListener("click", function (event) {
    if (!event.target.closest || !event.target.closest("details.nav-group")) { closeAll(null); }
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape") { closeAll(null); }
  });
})();
