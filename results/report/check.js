// The report's only script: it proves the page rendered. It records any
// script error, then checks that every chart drew a line, a point or a bar, and
// writes the verdict into <html data-*> attributes for tests to read. A chart
// in a closed <details> (a sweep's steps over time) has no size until it is
// opened: there, what it holds is checked, not how it shows.
(function () {
  var root = document.documentElement;
  window.addEventListener("error", function (e) {
    root.setAttribute("data-js-errors", (root.getAttribute("data-js-errors") || "") + (e.message || "error") + "; ");
  });
  document.addEventListener("DOMContentLoaded", function () {
    var charts = document.querySelectorAll("svg.chart"), bad = [];
    for (var i = 0; i < charts.length; i++) {
      var svg = charts[i], drawn = svg.querySelectorAll("circle.mark").length;
      var hidden = svg.closest && svg.closest("details:not([open])");
      var bars = svg.querySelectorAll("rect.bar");
      for (var k = 0; k < bars.length; k++) {
        var bb = bars[k].getBoundingClientRect();
        if (bb.width > 0 && bb.height > 0 || hidden && +bars[k].getAttribute("width") > 0) drawn++;
      }
      var lines = svg.querySelectorAll("path.series");
      for (var j = 0; j < lines.length; j++) {
        if (lines[j].getAttribute("d") && (hidden || lines[j].getTotalLength() > 0)) drawn++;
      }
      var box = svg.getBoundingClientRect();
      if (!drawn || !hidden && (box.width < 100 || box.height < 50)) bad.push(svg.id || "chart" + i);
    }
    root.setAttribute("data-charts", String(charts.length));
    root.setAttribute("data-charts-bad", bad.join(" "));
    root.setAttribute("data-height", String(document.documentElement.scrollHeight));
    // A step table's flags column is seen without scrolling: each of its
    // cells lies inside its table's box.
    var flags = document.querySelectorAll(".tablewrap .flags"), outside = 0;
    for (var f = 0; f < flags.length; f++) {
      var wb = flags[f].closest(".tablewrap").getBoundingClientRect(), fb = flags[f].getBoundingClientRect();
      if (fb.right > wb.right + 1 || fb.left < wb.left - 1) outside++;
    }
    root.setAttribute("data-flags-cells", String(flags.length));
    root.setAttribute("data-flags-hidden", String(outside));
    root.setAttribute("data-checked", "yes");
  });
})();
