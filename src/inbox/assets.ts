/**
 * The inbox's only script and stylesheet, served as files (`/static/…`): the Content-Security-Policy
 * allows these and nothing inline. The script counts down expiries and follows the approval feed
 * (server-sent events) to refresh what it shows; the pages work without it.
 */
export const INBOX_SCRIPT = `"use strict";
(function () {
  function left(expires) {
    var s = Math.floor(expires - Date.now() / 1000);
    if (s <= 0) return "expired";
    var m = Math.floor(s / 60), h = Math.floor(m / 60);
    if (h > 0) return "in " + h + " h " + (m % 60) + " min";
    if (m > 0) return "in " + m + " min " + (s % 60) + " s";
    return "in " + s + " s";
  }
  function tick() {
    document.querySelectorAll(".countdown[data-expires]").forEach(function (el) {
      el.textContent = left(Number(el.getAttribute("data-expires")));
    });
  }
  tick();
  setInterval(tick, 1000);

  // Only pages of a signed-in approver follow the feed (a link's page has no session to follow it with).
  if (!document.querySelector("[data-events]") || typeof EventSource === "undefined") return;
  var list = document.getElementById("pending");
  var state = document.getElementById("state");
  var source = new EventSource("/events");
  function refresh(url, apply) {
    fetch(url, { credentials: "same-origin", headers: { accept: "application/json" } })
      .then(function (r) { return r.ok ? r.json() : undefined; })
      .then(function (body) { if (body) apply(body); });
  }
  source.addEventListener("approval", function (e) {
    var event = JSON.parse(e.data);
    if (list) {
      refresh("/partials/list", function (body) {
        list.innerHTML = body.html;
        var live = document.getElementById("live");
        if (live) live.textContent = body.count === 0 ? "Nothing waits for you now." : body.count + " waiting";
        tick();
      });
    }
    if (state && event.id === state.getAttribute("data-id")) {
      refresh("/partials/approval/" + encodeURIComponent(event.id), function (body) {
        state.innerHTML = body.state;
        var count = document.querySelector(".count");
        if (count) count.textContent = body.count;
        if (!body.pending) {
          var form = document.querySelector("form.decide");
          if (form) form.remove();
        }
      });
    }
  });
})();
`;

export const INBOX_STYLES = `:root { color-scheme: light dark; --fg: #1b1b1f; --bg: #fbfbfd; --muted: #5b5b66; --line: #d9d9e0; --ok: #0b6e3a; --no: #a4161a; --focus: #1d4ed8; }
@media (prefers-color-scheme: dark) { :root { --fg: #ececf1; --bg: #16161a; --muted: #a9a9b5; --line: #33333b; --ok: #4ade80; --no: #f87171; --focus: #93c5fd; } }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; flex-wrap: wrap; justify-content: space-between; gap: .5rem; padding: .75rem 1rem; border-bottom: 1px solid var(--line); }
.brand { font-weight: 600; color: inherit; text-decoration: none; }
.who { margin: 0; color: var(--muted); }
main { max-width: 48rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.4rem; margin: .5rem 0 1rem; overflow-wrap: anywhere; }
h2 { font-size: 1.1rem; margin-top: 1.5rem; }
code, pre { font-family: ui-monospace, monospace; font-size: .9em; overflow-wrap: anywhere; white-space: pre-wrap; }
.approvals { list-style: none; padding: 0; margin: 0; }
.approval { display: grid; gap: .15rem; padding: .75rem; border: 1px solid var(--line); border-radius: .5rem; margin-bottom: .5rem; }
.approval a { font-weight: 600; }
.meta, .expiry, .action { color: var(--muted); font-size: .9rem; }
.state { font-weight: 600; }
.status-approved .state, .status-consumed .state { color: var(--ok); }
.status-rejected .state, .status-expired .state, .status-superseded .state { color: var(--no); }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; overflow-wrap: anywhere; }
@media (max-width: 30rem) { .facts { grid-template-columns: 1fr; } .facts dd { margin-bottom: .5rem; } }
.summary { border-collapse: collapse; width: 100%; }
.summary th, .summary td { text-align: left; vertical-align: top; padding: .35rem .5rem; border-bottom: 1px solid var(--line); }
.summary th { width: 25%; }
.summary th code { word-break: break-all; }
details { margin-top: 1.5rem; }
summary { cursor: pointer; font-weight: 600; }
.digest, .hidden { color: var(--muted); word-break: break-all; }
.summary td, .facts dd code { word-break: break-all; }
.summary { table-layout: fixed; }
@media (max-width: 30rem) { .summary th { width: 35%; } }
.decide { display: grid; gap: .5rem; margin-top: 1.5rem; }
textarea { width: 100%; font: inherit; padding: .5rem; }
.buttons { display: flex; flex-wrap: wrap; gap: .75rem; }
button, .button { font: inherit; padding: .6rem 1.4rem; border-radius: .4rem; border: 1px solid var(--line); background: transparent; color: inherit; cursor: pointer; }
button.approve { background: var(--ok); color: #fff; border-color: var(--ok); }
button.reject { border-color: var(--no); color: var(--no); }
a:focus-visible, button:focus-visible, textarea:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.notice { padding: .75rem; border-left: 4px solid var(--focus); background: color-mix(in srgb, var(--focus) 10%, transparent); }
`;
