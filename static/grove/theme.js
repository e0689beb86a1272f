// Theme: auto (follow the system), light or dark; the choice is remembered in localStorage and
// set on <html data-theme>, where the stylesheet's color-scheme picks the palette. Loaded in
// <head> so the remembered theme applies before the first paint; the button is wired later.
(function () {
  "use strict";
  var KEY = "grove-theme";
  var ORDER = ["auto", "light", "dark"];
  var root = document.documentElement;

  function stored() {
    try {
      var value = window.localStorage.getItem(KEY);
      return ORDER.indexOf(value) >= 0 ? value : "auto";
    } catch (e) {
      return "auto"; // storage blocked: follow the system
    }
  }

  function apply(theme) {
    if (theme === "auto") {
      root.removeAttribute("data-theme");
    } else {
      root.setAttribute("data-theme", theme);
    }
  }

  apply(stored());

  document.addEventListener("DOMContentLoaded", function () {
    var button = document.getElementById("theme-toggle");
    if (!button) return;
    function label(theme) {
      button.textContent = "Theme: " + theme;
      button.setAttribute("aria-label", "Colour theme: " + theme + " (click to change)");
    }
    label(stored());
    button.hidden = false;
    button.addEventListener("click", function () {
      var next = ORDER[(ORDER.indexOf(stored()) + 1) % ORDER.length];
      try {
        window.localStorage.setItem(KEY, next);
      } catch (e) {
        /* not remembered, still applied */
      }
      apply(next);
      label(next);
    });
  });
})();
