// memrepo palace: keeps an open page current as main moves, without a reload and without a
// framework. It asks the palace for main's commit every few seconds (the page says where and how
// often on <body>); when main moved, it fetches this same page again and puts its <main> in place
// of the old one, so what is shown is always what the server renders for the new commit. Where
// the server streams the memory's head events (`data-events-url`, memrepo serve), the page
// listens to them instead and asks only when one arrives; if the stream cannot be kept, it
// goes back to asking every few seconds.
(function () {
  "use strict";
  var body = document.body;
  var url = body.getAttribute("data-head-url");
  if (!url || !window.fetch || !window.DOMParser) {
    return;
  }
  var head = body.getAttribute("data-head");
  var every = parseInt(body.getAttribute("data-poll-ms"), 10) || 3000;
  var delay = every;
  var updates = 0;
  var streaming = false;

  function say(text) {
    var live = document.getElementById("live");
    if (live) {
      live.textContent = text;
    }
  }

  function busy() {
    // Someone typing into a form of the page keeps what they typed: try again later.
    var active = document.activeElement;
    return active && /^(INPUT|SELECT|TEXTAREA)$/.test(active.tagName) && active.value !== active.defaultValue;
  }

  function swap(html) {
    var fresh = new DOMParser().parseFromString(html, "text/html");
    var main = fresh.querySelector("main");
    var old = document.querySelector("main");
    if (!main || !old) {
      return false;
    }
    old.innerHTML = main.innerHTML;
    document.title = fresh.title;
    var next = fresh.body.getAttribute("data-head") || head;
    var sha = document.getElementById("head-sha");
    if (sha) {
      sha.textContent = next.slice(0, 10);
    }
    head = next;
    body.setAttribute("data-head", head);
    updates += 1;
    body.setAttribute("data-updates", String(updates));
    old.classList.remove("flash");
    void old.offsetWidth;
    old.classList.add("flash");
    say("Memory changed: main is now at " + head.slice(0, 10) + ".");
    return true;
  }

  function get(address, kind) {
    return fetch(address, {credentials: "same-origin", cache: "no-store", headers: {"Accept": kind}})
      .then(function (response) {
        if (!response.ok) {
          throw new Error("HTTP " + response.status);
        }
        return kind === "application/json" ? response.json() : response.text();
      });
  }

  function check(again) {
    get(url, "application/json")
      .then(function (data) {
        delay = every;
        if (!data || !data.head || data.head === head || busy()) {
          return null;
        }
        return get(window.location.href, "text/html").then(swap);
      })
      .catch(function () {
        delay = Math.min(delay * 2, 60000); // the palace is away: ask less often until it answers
      })
      .then(function () {
        if (again && !streaming) {
          window.setTimeout(function () { check(true); }, delay);
        }
      });
  }

  function listen(address) {
    var source = new window.EventSource(address);
    source.addEventListener("open", function () {
      streaming = true;
      body.setAttribute("data-following", "events");
      check(false); // main may have moved between this page and its stream
    });
    source.addEventListener("head", function () {
      check(false);
    });
    source.addEventListener("error", function () {
      if (source.readyState === window.EventSource.CLOSED && streaming !== null) {
        streaming = null; // refused or gone for good: ask every few seconds again
        body.setAttribute("data-following", "polling");
        window.setTimeout(function () { check(true); }, delay);
      }
    });
  }

  var events = body.getAttribute("data-events-url");
  if (events && window.EventSource) {
    listen(events);
  } else {
    window.setTimeout(function () { check(true); }, delay);
  }
}());
