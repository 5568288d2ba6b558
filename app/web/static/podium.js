/* Podium: small enhancements of pages that work without JavaScript.
   - local time beside every UTC time, and live countdowns to deadlines;
   - an upload progress bar for the submission form (the form still posts normally without this);
   - live status: pages with queued or running submissions poll their status and reload on change. */
(function () {
  "use strict";

  function localTimes() {
    var fmt;
    try {
      fmt = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
    } catch (e) {
      return;
    }
    document.querySelectorAll("time[data-local]").forEach(function (el) {
      var when = new Date(el.getAttribute("datetime"));
      if (isNaN(when)) return;
      var span = document.createElement("span");
      span.className = "local-time";
      span.textContent = " (your time: " + fmt.format(when) + ")";
      el.after(span);
    });
  }

  function pad(n) {
    return (n < 10 ? "0" : "") + n;
  }

  function countdowns() {
    var els = document.querySelectorAll("[data-countdown]");
    if (!els.length) return;
    function tick() {
      var now = Date.now();
      els.forEach(function (el) {
        var left = Math.floor((new Date(el.getAttribute("data-countdown")) - now) / 1000);
        if (isNaN(left)) return;
        if (left <= 0) {
          el.textContent = "now";
          return;
        }
        var d = Math.floor(left / 86400), h = Math.floor(left / 3600) % 24;
        var m = Math.floor(left / 60) % 60, s = left % 60;
        el.textContent = (d ? d + " d " : "") + pad(h) + ":" + pad(m) + ":" + pad(s);
      });
    }
    tick();
    setInterval(tick, 1000);
  }

  function describeError(body, status) {
    if (!body || !body.detail) return "The upload failed (HTTP " + status + ").";
    var text = body.detail;
    (body.problems || []).forEach(function (p) {
      text += "\n• " + (p.where || p.key ? (p.where || p.key) + ": " : "") + p.message;
    });
    if (body.total && body.problems && body.total > body.problems.length) {
      text += "\n… and " + (body.total - body.problems.length) + " more.";
    }
    return text;
  }

  function uploads() {
    document.querySelectorAll("form[data-upload]").forEach(function (form) {
      var bar = form.querySelector("progress");
      var status = form.querySelector(".upload-status");
      var button = form.querySelector("button[type=submit]");
      form.addEventListener("submit", function (event) {
        if (!window.FormData || !window.XMLHttpRequest) return; // plain form post
        event.preventDefault();
        var xhr = new XMLHttpRequest();
        xhr.open("POST", form.action);
        xhr.setRequestHeader("Accept", "application/json");
        xhr.upload.onprogress = function (e) {
          if (!e.lengthComputable) return;
          var percent = Math.round((e.loaded / e.total) * 100);
          bar.value = percent;
          status.textContent = percent < 100 ? "Uploading… " + percent + " %" : "Checking the file…";
        };
        xhr.onload = function () {
          var body = null;
          try {
            body = JSON.parse(xhr.responseText);
          } catch (e) {
            body = null;
          }
          if (xhr.status >= 200 && xhr.status < 300 && body && body.redirect) {
            status.textContent = "Accepted; queued for scoring.";
            window.location.assign(body.redirect);
            return;
          }
          bar.hidden = true;
          button.disabled = false;
          status.className = "upload-status error-text pre";
          status.textContent = describeError(body, xhr.status);
        };
        xhr.onerror = function () {
          bar.hidden = true;
          button.disabled = false;
          status.className = "upload-status error-text";
          status.textContent = "The upload did not reach the server; check your connection and try again.";
        };
        bar.hidden = false;
        bar.value = 0;
        button.disabled = true;
        status.className = "upload-status";
        status.textContent = "Uploading…";
        xhr.send(new FormData(form));
      });
    });
  }

  function liveStatus() {
    var pending = Array.prototype.filter.call(document.querySelectorAll("[data-poll]"), function (el) {
      var s = el.getAttribute("data-status");
      return s === "queued" || s === "running" || s === "awaiting_run";
    });
    if (!pending.length) return;
    var delay = 1000;
    function poll() {
      Promise.all(
        pending.map(function (el) {
          return fetch(el.getAttribute("data-poll"), {
            headers: { Accept: "application/json" },
            credentials: "same-origin",
          })
            .then(function (r) {
              return r.ok ? r.json() : null;
            })
            .then(function (body) {
              return body !== null && body.status !== el.getAttribute("data-status");
            });
        })
      ).then(
        function (changed) {
          if (changed.some(Boolean)) {
            window.location.reload();
            return;
          }
          delay = Math.min(delay * 1.5, 10000);
          setTimeout(poll, delay);
        },
        function () {
          setTimeout(poll, 10000);
        }
      );
    }
    setTimeout(poll, delay);
  }

  // A table wider than its box scrolls inside it; a line above the box says so, shown only while
  // something is out of sight (the CSS edge shadow says it too where scripts do not run).
  function scrollHints() {
    var boxes = document.querySelectorAll(".table-scroll");
    if (!boxes.length) return;
    var hints = [];
    boxes.forEach(function (box) {
      var hint = document.createElement("p");
      hint.className = "scroll-hint";
      hint.setAttribute("aria-hidden", "true");
      hint.textContent = "More columns: scroll the table sideways →";
      box.before(hint);
      hints.push([box, hint]);
    });
    function update() {
      hints.forEach(function (pair) {
        pair[1].hidden = pair[0].scrollWidth <= pair[0].clientWidth + 1;
      });
    }
    update();
    window.addEventListener("resize", update);
  }

  document.addEventListener("DOMContentLoaded", function () {
    scrollHints();
    localTimes();
    countdowns();
    uploads();
    liveStatus();
  });
})();
