// Live updates: the element with data-live names a websocket (/ws/ui/…); each notification
// (a new message, run or fact version) re-fetches this page's fragment through htmx and swaps in
// only that element, so what the operator is typing elsewhere on the page is left alone. The
// fragment is parsed by DOMParser (scripts in it never run) and then handed to htmx.
(function () {
  var socket, timer, delay = 1000;
  function region() { return document.querySelector("[data-live]"); }
  function status(on) {
    var dot = document.getElementById("live-status");
    if (dot) { dot.classList.toggle("on", on); dot.title = on ? "live: updates appear as they happen" : "live updates: reconnecting"; }
  }
  var busy = false, again = false;
  function refresh() {  // one request at a time; a notification during one asks for another after it
    var el = region();
    if (!el) return;
    if (busy) { again = true; return; }
    busy = true;
    fetch(window.location.pathname + window.location.search,
          { credentials: "same-origin", headers: { "HX-Request": "true" } })  // the page's fragment
      .then(function (r) { if (!r.ok) throw new Error(r.status); return r.text(); })
      .then(function (html) {
        var fresh = new DOMParser().parseFromString(html, "text/html").getElementById(el.id);
        var current = document.getElementById(el.id);
        if (fresh && current) {
          current.replaceWith(fresh);
          if (window.htmx) window.htmx.process(fresh);
          document.body.dataset.liveRefreshed = String(+(document.body.dataset.liveRefreshed || 0) + 1);
        }
      })
      .catch(function () {})
      .finally(function () { busy = false; if (again) { again = false; refresh(); } });
  }
  function connect() {
    var el = region();
    if (!el || !window.WebSocket) return;
    socket = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + el.dataset.live);
    socket.onopen = function () { delay = 1000; status(true); document.body.dataset.liveState = "open"; };
    socket.onmessage = function () {  // a burst of notifications → one fetch
      document.body.dataset.liveSeen = String(+(document.body.dataset.liveSeen || 0) + 1);
      clearTimeout(timer); timer = setTimeout(refresh, 250);
    };
    socket.onclose = function () {
      status(false); document.body.dataset.liveState = "closed";
      setTimeout(connect, delay); delay = Math.min(delay * 2, 30000);
    };
  }
  document.addEventListener("DOMContentLoaded", connect);
})();
