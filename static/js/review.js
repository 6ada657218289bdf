// Keyboard and live updates for the review dashboard. Every shortcut is also a
// plain link, button or form, so the pages work the same without this script.
//
// - On a card: a key clicks the element whose data-key lists it (answers
//   y n b s and 1–9, j/k next/previous card, u undo, a assign to me).
// - In the inbox list ([data-inbox]): j/k move a visible selection
//   (aria-selected), Enter/o open it, y/n/b/s answer it in place, x marks it
//   for bulk dismiss (# dismisses the marked cards), a assigns it to me.
// - Everywhere: / focuses the search, ? shows every shortcut.
// - Live: every POLL_MS the page asks review:pulse (one small query) for the
//   open-card count; the header count and the tab title follow it, and the
//   inbox list re-renders when a card opened or closed elsewhere.
(function () {
  "use strict";
  var POLL_MS = 5000;
  var busy = false;
  var keepIndex = null; // after answering from the list: select the row now at this place
  var keepCard = null; // after a live refresh: select this card again
  var keepMarked = [];
  var keepFocus = false;

  function inboxRows() {
    return Array.prototype.slice.call(document.querySelectorAll("[data-inbox] tr.card-row"));
  }
  function selectedRow() {
    return document.querySelector('[data-inbox] tr.card-row[aria-selected="true"]');
  }
  function select(row, focus) {
    inboxRows().forEach(function (r) {
      r.setAttribute("aria-selected", r === row ? "true" : "false");
      r.tabIndex = r === row ? 0 : -1;
    });
    if (!row) return;
    row.scrollIntoView({ block: "nearest" });
    if (focus) row.focus({ preventScroll: true });
  }
  function move(step) {
    var rows = inboxRows();
    if (!rows.length) return;
    var at = rows.indexOf(selectedRow());
    var next = at < 0 ? 0 : Math.max(0, Math.min(rows.length - 1, at + step));
    select(rows[next], true);
  }
  function markedCount() {
    var n = document.querySelectorAll('[data-inbox] input[name="cards"]:checked').length;
    var label = document.querySelector("[data-selected-count]");
    if (label) label.textContent = n + " selected";
  }
  function announce(text) {
    var region = document.getElementById("announce");
    if (!region || !text) return;
    region.textContent = "";
    window.setTimeout(function () { region.textContent = text; }, 50);
  }
  function post(url, values) {
    busy = true;
    keepFocus = true;
    htmx.ajax("POST", url, { target: "#inbox-list", swap: "innerHTML", values: values });
  }

  function inboxKey(event) {
    var row = selectedRow();
    switch (event.key) {
      case "j": move(1); return true;
      case "k": move(-1); return true;
      case "Enter":
      case "o":
        if (row) window.location.assign(row.dataset.href);
        return !!row;
      case "y": case "n": case "b": case "s":
        if (!row || !row.dataset.answer) return false;
        keepIndex = inboxRows().indexOf(row);
        post(row.dataset.answer, { answer: { y: "yes", n: "no", b: "both", s: "skip" }[event.key] });
        return true;
      case "a":
        if (!row || !row.dataset.assign) return false;
        keepCard = row.dataset.card;
        post(row.dataset.assign, { to: "me" });
        return true;
      case "x":
        var box = row && row.querySelector('input[name="cards"]');
        if (!box) return false;
        box.checked = !box.checked;
        markedCount();
        return true;
    }
    return false;
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
    var target = event.target;
    var dialog = document.getElementById("shortcuts");
    if (dialog && dialog.open) return; // the dialog handles Esc itself
    if (target && target.closest && target.closest("input, textarea, select, [contenteditable]")) {
      if (event.key === "Escape") target.blur();
      return;
    }
    if (event.key === "?") {
      if (dialog) { event.preventDefault(); dialog.showModal(); }
      return;
    }
    if (busy) { event.preventDefault(); return; }
    // Links, buttons and checkboxes keep their own Enter and Space.
    var onControl = target && target.closest && target.closest("a, button, summary");
    if (document.querySelector("[data-inbox]") && !(onControl && event.key === "Enter")) {
      if (inboxKey(event)) { event.preventDefault(); return; }
    }
    if (event.key === "Enter" || event.key === " ") return;
    var element = document.querySelector('[data-key~="' + CSS.escape(event.key) + '"]');
    if (!element || element.disabled) return;
    event.preventDefault();
    if (element.matches("input")) { element.focus(); element.select(); return; }
    element.click();
  });

  document.addEventListener("click", function (event) {
    var opener = event.target.closest && event.target.closest("[data-shortcuts]");
    if (opener) { var dialog = document.getElementById("shortcuts"); if (dialog) dialog.showModal(); return; }
    var row = event.target.closest && event.target.closest("[data-inbox] tr.card-row");
    if (row) select(row, false);
  });
  document.addEventListener("change", function (event) {
    if (event.target.matches && event.target.matches('input[name="cards"]')) markedCount();
  });

  // One request at a time: a double keystroke must not answer two cards.
  document.addEventListener("htmx:beforeRequest", function () { busy = true; });
  document.addEventListener("htmx:afterRequest", function () { busy = false; });
  // htmx puts the focus back on the element that had it before a swap (by id) once the swap settles;
  // on a new card the question takes it, after that restore, so nothing else can keep it.
  // Any other swap that leaves the focus nowhere on a card page gives it back to the question too.
  document.addEventListener("htmx:afterSettle", function (event) {
    var target = event.detail && event.detail.target;
    var heading = document.getElementById("card-question");
    if (!heading || document.activeElement === heading) return;
    var lost = !document.activeElement || document.activeElement === document.body;
    var cardPage = !document.querySelector("[data-inbox]");
    if ((target && target.id === "review") || (lost && cardPage)) heading.focus({ preventScroll: true });
  });
  document.addEventListener("htmx:afterSwap", function (event) {
    var target = event.detail && event.detail.target;
    if (!target) return;
    var said = target.querySelector("[data-announce]");
    if (target.id === "review") {
      // Focus follows the new card; the live region and the announcement say what happened.
      var heading = document.getElementById("card-question");
      if (heading) heading.focus({ preventScroll: false });
      var question = heading ? heading.textContent : "";
      announce((said ? said.textContent + " " : "") + question);
    } else if (target.id === "inbox-list") {
      var rows = inboxRows();
      var row = null;
      if (keepCard) row = document.querySelector('[data-inbox] tr.card-row[data-card="' + keepCard + '"]');
      if (!row && keepIndex !== null && rows.length) row = rows[Math.min(keepIndex, rows.length - 1)];
      keepMarked.forEach(function (id) {
        var box = document.querySelector('[data-inbox] input[name="cards"][value="' + id + '"]');
        if (box) box.checked = true;
      });
      // After a key in the list the focus stays on the list; a live refresh moves no focus.
      select(row || rows[0] || null, keepFocus && !!row);
      keepIndex = null; keepCard = null; keepMarked = []; keepFocus = false;
      markedCount();
      if (said) announce(said.textContent);
    }
  });

  // --- Live counts -----------------------------------------------------------
  var pulse = document.body.dataset.pulse;
  var version = null;
  function showCount(open) {
    var badge = document.getElementById("nav-open-count");
    if (badge && badge.firstChild) badge.firstChild.nodeValue = String(open);
    var count = document.querySelector("#counts .count.open strong");
    if (count) count.textContent = String(open);
    var title = document.title.replace(/^\(\d+\) /, "");
    document.title = open > 0 ? "(" + open + ") " + title : title;
  }
  function refreshList() {
    var row = selectedRow();
    keepCard = row ? row.dataset.card : null;
    keepMarked = Array.prototype.map.call(
      document.querySelectorAll('[data-inbox] input[name="cards"]:checked'), function (box) { return box.value; });
    htmx.ajax("GET", window.location.pathname + window.location.search, { target: "#inbox-list", swap: "innerHTML" });
  }
  function poll() {
    if (!pulse || document.hidden || busy) return;
    fetch(pulse, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (data) {
        if (!data) return;
        showCount(data.open);
        if (version !== null && data.version !== version && document.querySelector("[data-inbox]") && !busy) refreshList();
        version = data.version;
      })
      .catch(function () { /* offline for a moment: the next poll tries again */ });
  }
  document.addEventListener("DOMContentLoaded", function () {
    // A card page loaded whole (a link, or an answer posted before htmx took the form over) gives the
    // question the focus, as a card swapped in does.
    var heading = document.querySelector(".review-card #card-question");
    if (heading && !document.querySelector("[data-inbox]")) heading.focus({ preventScroll: true });
    select(inboxRows()[0] || null, false);
    pulse = document.body.dataset.pulse;
    if (pulse) { poll(); window.setInterval(poll, POLL_MS); }
  });
})();
