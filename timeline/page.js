(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("tl-data").textContent);
  var title = document.getElementById("detail-title");
  var body = document.getElementById("detail-body");
  function clear() { while (body.firstChild) body.removeChild(body.firstChild); }
  function showEvent(i) {
    var e = data.events[i];
    if (!e) return;
    title.textContent = e.l;
    clear();
    if (!e.d) return; // a phase, listed by its bucket: its label says it all
    var pre = document.createElement("pre");
    pre.id = "detail-diff";
    pre.textContent = e.d;
    body.appendChild(pre);
  }
  function showBucket(b, label) {
    var ids = data.buckets[b] || [];
    title.textContent = label;
    clear();
    var ul = document.createElement("ul");
    ids.forEach(function (i) {
      var li = document.createElement("li");
      var btn = document.createElement("button");
      btn.type = "button";
      btn.textContent = data.events[i].l;
      btn.addEventListener("click", function () { showEvent(i); });
      li.appendChild(btn);
      ul.appendChild(li);
    });
    body.appendChild(ul);
  }
  function activate(el) {
    if (el.hasAttribute("data-event")) showEvent(+el.getAttribute("data-event"));
    else if (el.hasAttribute("data-bucket")) showBucket(+el.getAttribute("data-bucket"), el.getAttribute("aria-label"));
    else if (el.hasAttribute("data-span")) { title.textContent = el.getAttribute("data-span"); clear(); }
  }
  var lanes = Array.prototype.slice.call(document.querySelectorAll(".lane .track"));
  function markers(track) { return Array.prototype.slice.call(track.querySelectorAll(".m")); }
  document.querySelector("main").addEventListener("click", function (ev) {
    var el = ev.target.closest(".m");
    if (el) activate(el);
  });
  document.querySelector("main").addEventListener("keydown", function (ev) {
    var el = ev.target.closest ? ev.target.closest(".m") : null;
    if (!el) return;
    var track = el.parentNode, ms = markers(track), i = ms.indexOf(el);
    var k = ev.key, to = null;
    if (k === "ArrowRight") to = ms[i + 1];
    else if (k === "ArrowLeft") to = ms[i - 1];
    else if (k === "Home") to = ms[0];
    else if (k === "End") to = ms[ms.length - 1];
    else if (k === "ArrowDown" || k === "ArrowUp") {
      var li = lanes.indexOf(track), step = k === "ArrowDown" ? 1 : -1, x = el.getBoundingClientRect().left;
      for (var j = li + step; j >= 0 && j < lanes.length && !to; j += step) {
        var best = null, bd = Infinity;
        markers(lanes[j]).forEach(function (m) {
          var d = Math.abs(m.getBoundingClientRect().left - x);
          if (d < bd) { bd = d; best = m; }
        });
        to = best;
      }
    } else return;
    ev.preventDefault();
    if (to) { markers(to.parentNode).forEach(function (m) { m.tabIndex = -1; }); el.tabIndex = track === to.parentNode ? -1 : el.tabIndex; to.tabIndex = 0; to.focus(); }
  });
  var m = /^#ev-(\d+)$/.exec(location.hash);
  if (m) showEvent(+m[1]);
  document.body.setAttribute("data-ready", "true");
}());
