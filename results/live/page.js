// loadgen's live dashboard: polls state.json once a second and draws it.
// Every figure is written as text into an element with a stable id, its
// raw value in data-v; <html data-*> says how the page is doing (polls,
// the version drawn, whether the command still answers, script errors),
// for tests that read the rendered DOM. Nothing is fetched but state.json;
// nothing the command sends is written as HTML (textContent only).
(function () {
  "use strict";
  var root = document.documentElement;
  var NS = "http://www.w3.org/2000/svg";
  var W = 640, H = 230, M = { l: 54, r: 14, t: 24, b: 26 };
  var polls = 0, last = null, connected = false, legendDrawn = false;
  // The command's uptime as of the version drawn, and when it was read: an
  // unchanged state (a 304, the same body) still counts the time.
  var uptime = { version: -1, s: 0, at: 0 };

  window.addEventListener("error", function (e) {
    root.setAttribute("data-js-errors", (root.getAttribute("data-js-errors") || "") + (e.message || "error") + "; ");
  });

  function $(id) { return document.getElementById(id); }
  function clear(n) { while (n.firstChild) n.removeChild(n.firstChild); }
  function el(name, attrs, parent, text) {
    var n = document.createElementNS(NS, name);
    for (var k in attrs) if (Object.prototype.hasOwnProperty.call(attrs, k)) n.setAttribute(k, attrs[k]);
    if (text !== undefined) n.textContent = text;
    if (parent) parent.appendChild(n);
    return n;
  }
  function html(name, text, cls) {
    var n = document.createElement(name);
    if (text !== undefined && text !== null) n.textContent = text;
    if (cls) n.className = cls;
    return n;
  }
  function set(id, text, v) {
    var n = $(id);
    n.textContent = text;
    if (v === undefined || v === null) n.removeAttribute("data-v"); else n.setAttribute("data-v", String(v));
  }

  function fmtInt(n) { return String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ","); }
  function fmtRate(x) { return x >= 100 ? fmtInt(x) : x >= 10 ? x.toFixed(1) : x.toFixed(2); }
  function fmtPct(u) { return (100 * u).toFixed(u < 0.1 ? 1 : 0) + "%"; }
  function fmtSecs(s) {
    if (s < 0) return "-" + fmtSecs(-s);
    if (s < 60) return (s < 10 && s !== Math.round(s) ? s.toFixed(1) : String(Math.round(s))) + "s";
    var m = Math.floor(s / 60), r = Math.round(s - 60 * m);
    if (r === 60) { m++; r = 0; }
    if (m < 60) return m + "m" + (r < 10 ? "0" : "") + r + "s";
    var h = Math.floor(m / 60); m -= 60 * h;
    return h + "h" + (m < 10 ? "0" : "") + m + "m";
  }
  function fmtUs(us) {
    if (us >= 1e6) return trim(us / 1e6) + "s";
    if (us >= 1e3) return trim(us / 1e3) + "ms";
    return trim(us) + "us";
  }
  // fmtTick is a linear axis's tick at steps of step: as many decimals as
  // the step has.
  function fmtTick(v, step) {
    return step >= 1 ? fmtInt(v) : v.toFixed(Math.min(3, Math.max(0, -Math.floor(Math.log10(step)))));
  }
  function trim(v) { return v >= 100 ? String(Math.round(v)) : v >= 10 ? v.toFixed(1).replace(/\.0$/, "") : String(+v.toFixed(2)); }

  // niceStep is a round step (1, 2, 5 × 10^k) for about n ticks over span.
  function niceStep(span, n) {
    var raw = span / Math.max(1, n), p = Math.pow(10, Math.floor(Math.log10(raw))), f = raw / p;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
  }

  // chart draws o.series (lines: [{cls, name, pts: [[x, y]]}]), o.bars
  // ([{x, w, y}]) and o.shades ([{x, w, cls}]) over time into svg, with a
  // linear or a log y axis. It returns how many marks it drew.
  function chart(svg, o) {
    clear(svg);
    var x0 = o.x0, x1 = Math.max(o.x1, o.x0 + 1);
    var pw = W - M.l - M.r, ph = H - M.t - M.b, drawn = 0;
    var ys = [];
    (o.series || []).forEach(function (s) { s.pts.forEach(function (p) { if (p[1] > 0 || !o.log) ys.push(p[1]); }); });
    (o.bars || []).forEach(function (b) { ys.push(b.y); });
    var lo, hi;
    if (o.log) {
      var pos = ys.filter(function (y) { return y > 0; });
      lo = pos.length ? Math.min.apply(null, pos) : 100; hi = pos.length ? Math.max.apply(null, pos) : 1000;
      lo = Math.pow(10, Math.floor(Math.log10(lo))); hi = Math.pow(10, Math.ceil(Math.log10(hi * 1.05)));
      if (hi <= lo) hi = lo * 10;
    } else {
      lo = 0; hi = Math.max(o.ymin || 0, ys.length ? Math.max.apply(null, ys) : 0) * 1.1;
      if (!(hi > 0)) hi = 1;
    }
    function X(x) { return M.l + pw * (x - x0) / (x1 - x0); }
    function Y(y) {
      if (o.log) return M.t + ph * (1 - (Math.log10(Math.max(y, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo)));
      return M.t + ph * (1 - (y - lo) / (hi - lo));
    }
    (o.shades || []).forEach(function (s) {
      el("rect", { "class": s.cls, x: X(s.x).toFixed(1), y: M.t, width: Math.max(1, X(s.x + s.w) - X(s.x)).toFixed(1), height: ph }, svg);
      if (s.label) el("text", { x: (X(s.x) + 4).toFixed(1), y: M.t + 12 }, svg, s.label);
    });
    // The y axis: decades on a log scale, round steps otherwise.
    var ticks = [];
    if (o.log) {
      for (var d = lo; d <= hi * 1.0001; d *= 10) {
        ticks.push(d);
        if (Math.log10(hi / lo) <= 2) { if (d * 2 < hi) ticks.push(d * 2); if (d * 5 < hi) ticks.push(d * 5); }
      }
    } else {
      var st = niceStep(hi, 5);
      for (var t = 0; t <= hi * 1.0001; t += st) ticks.push(t);
    }
    ticks.forEach(function (t) {
      var y = Y(t).toFixed(1);
      el("line", { "class": "grid", x1: M.l, x2: W - M.r, y1: y, y2: y }, svg);
      el("text", { x: M.l - 6, y: +y + 4, "text-anchor": "end" }, svg, o.fmt(t, st));
    });
    var xs = niceStep(x1 - x0, 6), xt = Math.ceil(x0 / xs) * xs;
    for (; xt <= x1 + 1e-9; xt += xs) {
      el("text", { x: X(xt).toFixed(1), y: H - 8, "text-anchor": "middle" }, svg, fmtSecs(Math.round(xt * 1000) / 1000));
    }
    el("line", { "class": "axis", x1: M.l, x2: W - M.r, y1: M.t + ph, y2: M.t + ph }, svg);
    if (o.limit !== undefined) {
      var ly = Y(o.limit).toFixed(1);
      el("line", { "class": "limit", x1: M.l, x2: W - M.r, y1: ly, y2: ly }, svg);
    }
    (o.bars || []).forEach(function (b) {
      if (!(b.y > 0)) return;
      var bx = X(b.x), bw = Math.max(1.5, X(b.x + b.w) - bx - 1);
      el("rect", { "class": "bar", x: bx.toFixed(1), y: Y(b.y).toFixed(1), width: bw.toFixed(1), height: Math.max(1, Y(0) - Y(b.y)).toFixed(1) }, svg);
      drawn++;
    });
    var kx = M.l;
    (o.series || []).forEach(function (s) {
      var pts = s.pts.filter(function (p) { return p[1] !== null && p[1] !== undefined && (!o.log || p[1] > 0); });
      if (pts.length) {
        var dstr = pts.map(function (p, i) { return (i ? "L" : "M") + X(p[0]).toFixed(1) + " " + Y(p[1]).toFixed(1); }).join("");
        el("path", { "class": "series " + s.cls, d: dstr }, svg);
        var lp = pts[pts.length - 1];
        el("circle", { "class": "mark " + s.cls, cx: X(lp[0]).toFixed(1), cy: Y(lp[1]).toFixed(1), r: 2.5, fill: "none", "stroke-width": 2 }, svg);
        drawn++;
      }
      // A key above the plot.
      var g = el("g", { "class": "key" }, svg);
      el("line", { "class": "series " + s.cls, x1: kx, x2: kx + 16, y1: 10, y2: 10, "stroke-width": 2 }, g);
      el("text", { x: kx + 20, y: 14 }, g, s.name);
      kx += 34 + 7 * s.name.length;
    });
    if (!drawn && o.empty) el("text", { "class": "empty", x: M.l + pw / 2, y: M.t + ph / 2, "text-anchor": "middle" }, svg, o.empty);
    svg.setAttribute("data-drawn", String(drawn));
    return drawn;
  }

  function drawCharts(r) {
    var tl = r.timeline || [];
    var x0 = 0, x1 = Math.max(r.planned_s || 0, r.elapsed_s || 0, 1);
    tl.forEach(function (p) { x0 = Math.min(x0, p.t); x1 = Math.max(x1, p.t + p.d); });
    var mid = function (p) { return p.t + p.d / 2; };
    var shades = [], warm = null;
    tl.forEach(function (p) {
      if (p.warmup) {
        if (!warm) { warm = { x: p.t, w: 0, cls: "warm", label: "warm-up" }; shades.push(warm); }
        warm.w = p.t + p.d - warm.x;
      } else if (p.outage) shades.push({ x: p.t, w: p.d, cls: "outage" });
    });
    var measured = tl.filter(function (p) { return !p.warmup; });
    var n = 0;
    var rate = [{ cls: "s-rps", name: "achieved", pts: tl.map(function (p) { return [mid(p), p.rps]; }) }];
    if (r.open_loop) rate.push({ cls: "s-asked", name: "asked", pts: measured.map(function (p) { return [mid(p), p.asked || 0]; }) });
    n += chart($("chart-rate"), { x0: x0, x1: x1, series: rate, shades: shades, fmt: fmtTick, empty: "no second measured yet" }) ? 1 : 0;
    n += chart($("chart-latency"), { x0: x0, x1: x1, log: true, shades: shades, fmt: fmtUs, empty: "no latency yet", series: [
      { cls: "s-p50", name: "p50", pts: tl.map(function (p) { return [mid(p), p.p50_us]; }) },
      { cls: "s-p99", name: "p99", pts: tl.map(function (p) { return [mid(p), p.p99_us]; }) },
      { cls: "s-p999", name: "p99.9", pts: tl.map(function (p) { return [mid(p), p.p99_9_us]; }) }] }) ? 1 : 0;
    var errs = tl.map(function (p) { return { x: p.t, w: p.d, y: p.d > 0 ? p.errors / p.d : 0 }; });
    var anyErr = errs.some(function (b) { return b.y > 0; });
    n += chart($("chart-errors"), { x0: x0, x1: x1, bars: errs, shades: shades, ymin: 1, fmt: fmtTick,
      empty: tl.length ? "no errors" : "no second measured yet" }) || (tl.length && !anyErr) ? 1 : 0;
    var pct = function (v) { return v === undefined || v === null ? null : 100 * v; };
    n += chart($("chart-cpu"), { x0: x0, x1: x1, ymin: 100, limit: 90, shades: shades, fmt: function (v) { return Math.round(v) + "%"; },
      empty: "no CPU reading yet", series: [
        { cls: "s-gen", name: "generator", pts: measured.map(function (p) { return [mid(p), pct(p.gen_util)]; }) },
        { cls: "s-machine", name: "machine", pts: measured.map(function (p) { return [mid(p), pct(p.machine_util)]; }) }] }) ? 1 : 0;
    root.setAttribute("data-charts-drawn", String(n));
  }

  function flagWords(flags, legend) {
    var out = [];
    (flags || "").split("").forEach(function (f) {
      legend.forEach(function (l) { if (l.letter === f) out.push(f + " " + l.meaning.split(":")[0]); });
    });
    return out.join(", ");
  }

  function renderRun(snap, r) {
    $("runbox").hidden = false;
    $("run-label").textContent = r.step ? "step " + r.step : r.label;
    $("run-state").textContent = r.state;
    var when = fmtSecs(r.elapsed_s || 0) + (r.planned_s ? " of " + fmtSecs(r.planned_s) : "");
    if (r.state === "starting") when = r.warmup_s ? "connecting, then " + fmtSecs(r.warmup_s) + " of warm-up" : "connecting";
    else if (r.warmup_s) when += " (after " + fmtSecs(r.warmup_s) + " of warm-up)";
    $("elapsed").textContent = when + ".";
    var f = r.final || r.live;
    $("figures-what").textContent = r.final ? "The run's result, as its JSON has it." :
      "Live: requests and errors so far; rate, latency and CPU of the last " + (r.point_s > 1 ? r.point_s + " s" : "second") + ".";
    root.setAttribute("data-figures", r.final ? "final" : "live");
    set("requests", fmtInt(f.requests), f.requests);
    set("rps", fmtRate(f.rps), f.rps);
    $("asked-box").hidden = false;
    if (r.open_loop) {
      set("asked", f.asked_rps ? fmtRate(f.asked_rps) : "-", f.asked_rps || 0);
      $("sent").textContent = f.sent_rps ? "sent " + fmtRate(f.sent_rps) + "/s" : "open loop";
    } else {
      set("asked", "closed loop", 0);
      $("sent").textContent = "as fast as answered";
    }
    set("p50", f.p50.text, f.p50.us);
    set("p99", f.p99.text, f.p99.us);
    set("p999", f.p99_9.text, f.p99_9.us);
    set("errors", fmtInt(f.errors), f.errors);
    $("errors").className = "v" + (f.errors > 0 ? " sat" : "");
    set("gen-cpu", f.gen_cores >= 0 ? f.gen_cores.toFixed(2) + " cores" : "-", f.gen_cores >= 0 ? f.gen_cores : null);
    $("gen-util").textContent = f.gen_util >= 0 && r.cpus_allowed ? fmtPct(f.gen_util) + " of " + r.cpus_allowed + " CPU" + (r.cpus_allowed === 1 ? "" : "s") : "";
    set("machine-cpu", f.machine_util >= 0 ? fmtPct(f.machine_util) : "-", f.machine_util >= 0 ? f.machine_util : null);
    set("flags", f.flags || "none", f.flags || "");
    $("flags").className = "v" + (f.flags ? " sat" : "");
    $("flags-words").textContent = f.flags ? flagWords(f.flags, snap.legend) : "neither generator nor machine saturated";
    drawCharts(r);
    var notes = $("run-notes");
    clear(notes);
    (r.notes || []).forEach(function (t) { if (t) notes.appendChild(html("li", t)); });
  }

  function cell(tr, text, cls, v) {
    var td = html("td", text, cls);
    if (v !== undefined) td.setAttribute("data-v", String(v));
    tr.appendChild(td);
    return td;
  }

  function renderSteps(snap) {
    var box = $("stepsbox"), steps = snap.steps || [];
    var running = snap.run && snap.run.step && !snap.run.final && snap.run.state !== "failed" && !snap.done ? snap.run : null;
    box.hidden = snap.kind === "run";
    if (box.hidden) return;
    $("steps-count").textContent = steps.length + (snap.planned_steps ? " of " + snap.planned_steps : "") + " finished" +
      (snap.dropped_steps ? " (the first " + snap.dropped_steps + " are no longer shown)" : "");
    var body = $("steps-body");
    clear(body);
    steps.forEach(function (s) {
      var tr = html("tr", null, s.failed ? "failed" : "");
      tr.setAttribute("data-id", s.id);
      cell(tr, String(s.index + 1));
      cell(tr, s.id, "l id");
      cell(tr, s.path, "l path");
      cell(tr, s.rung, "l rung");
      cell(tr, s.payload, "payload");
      cell(tr, s.rate ? fmtRate(s.rate) : "closed", "rate", s.rate || 0);
      cell(tr, s.requests || s.rps ? fmtRate(s.rps) : "-", "rps", s.rps);
      cell(tr, s.p50.text, "p50", s.p50.us);
      cell(tr, s.p99.text, "p99", s.p99.us);
      cell(tr, fmtInt(s.errors), "errors", s.errors);
      var fl = cell(tr, s.flags || "", "flags", s.flags || "");
      if (s.flags) fl.title = flagWords(s.flags, snap.legend);
      cell(tr, s.proxy_cpu !== undefined && s.proxy_cpu !== null ? s.proxy_cpu.toFixed(2) : "-", "proxy", s.proxy_cpu === undefined ? "" : s.proxy_cpu);
      cell(tr, s.failed || s.proxy_note || (s.interrupted ? "interrupted" : ""), "note");
      body.appendChild(tr);
    });
    if (running) {
      var tr = html("tr", null, "running");
      tr.setAttribute("data-id", running.step);
      cell(tr, "▸");
      cell(tr, running.step, "l id");
      var td = cell(tr, running.state === "starting" ? "starting…" :
        "running: " + fmtSecs(running.elapsed_s) + (running.planned_s ? " of " + fmtSecs(running.planned_s) : "") +
        ", " + fmtRate(running.live.rps) + " req/s, p99 " + running.live.p99.text + ", " + fmtInt(running.live.errors) + " errors", "l");
      td.colSpan = 11;
      body.appendChild(tr);
    }
    root.setAttribute("data-steps", String(steps.length));
  }

  function render(snap) {
    root.setAttribute("data-version", String(snap.version));
    root.setAttribute("data-done", snap.done ? "yes" : "no");
    root.setAttribute("data-connected", connected ? "yes" : "no");
    $("kind").textContent = snap.kind;
    $("title").textContent = snap.title;
    document.title = "loadgen " + snap.kind + (snap.done ? " (" + (snap.outcome || "done") + ")" : " (live)");
    var badge = $("status"), words = $("status-words");
    if (!connected) {
      badge.className = "badge gone"; badge.textContent = "not answering";
      words.textContent = "the command has exited or cannot be reached: this is the last state it served";
    } else if (snap.done) {
      var bad = /interrupt|fail|stop|abort/.test(snap.outcome || "");
      badge.className = "badge " + (bad ? "interrupted" : "done"); badge.textContent = snap.outcome || "done";
      words.textContent = "the command's work is over; this page keeps its final state";
    } else {
      badge.className = "badge running"; badge.textContent = "running";
      if (uptime.version !== snap.version) uptime = { version: snap.version, s: snap.uptime_s, at: Date.now() };
      words.textContent = "for " + fmtSecs(Math.round(uptime.s + (Date.now() - uptime.at) / 1000)) + "; refreshed every second";
    }
    $("note").hidden = !snap.note;
    $("note").textContent = snap.note || "";
    if (snap.run) renderRun(snap, snap.run);
    else $("runbox").hidden = true;
    renderSteps(snap);
    var ev = snap.events || [];
    $("eventsbox").hidden = !ev.length;
    $("events").textContent = ev.join("\n");
    if (!legendDrawn && snap.legend) {
      var dl = $("legend");
      snap.legend.forEach(function (l) { dl.appendChild(html("dt", l.letter)); dl.appendChild(html("dd", l.meaning)); });
      legendDrawn = true;
    }
    root.setAttribute("data-height", String(document.documentElement.scrollHeight));
    root.setAttribute("data-rendered", "yes");
  }

  function poll() {
    fetch("state.json", { cache: "no-cache" }).then(function (resp) {
      if (!resp.ok) throw new Error("state.json: " + resp.status);
      return resp.json();
    }).then(function (snap) {
      polls++;
      connected = true;
      last = snap;
      root.setAttribute("data-polls", String(polls));
      render(snap);
    }).catch(function () {
      connected = false;
      if (last) render(last);
      else { $("status").className = "badge gone"; $("status").textContent = "not answering"; }
      root.setAttribute("data-connected", "no");
    }).then(function () {
      setTimeout(poll, !connected && last && last.done ? 5000 : 1000);
    });
  }
  poll();
})();
