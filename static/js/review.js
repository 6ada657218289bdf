// Keyboard for the review dashboard: every shortcut clicks the element that
// carries data-key="<key>" (answer buttons y n b s, fact pickers 1–9,
// j/k links to the next/previous card, u the undo button). Elements keep
// their href/forms, so the page works the same without this script.
(function () {
  "use strict";
  var busy = false;

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
    var target = event.target;
    if (target && target.closest && target.closest("input, textarea, select, [contenteditable]")) {
      if (event.key === "Escape") target.blur();
      return;
    }
    var element = document.querySelector('[data-key="' + CSS.escape(event.key) + '"]');
    if (!element || element.disabled || busy) return;
    event.preventDefault();
    element.click();
  });

  // One request at a time: a double keystroke must not answer two cards.
  document.addEventListener("htmx:beforeRequest", function () { busy = true; });
  document.addEventListener("htmx:afterRequest", function () { busy = false; });
  document.addEventListener("htmx:afterSwap", function () {
    var active = document.activeElement;
    if (active && active !== document.body) active.blur();
  });
})();
