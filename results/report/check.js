// The report's only script: it proves the page rendered. It records any
// script error, then checks that every chart drew a line, a point or a bar, and
// writes the verdict into <html data-*> attributes for tests to read.
(function () {
  var root = document.documentElement;
  window.addEventListener("error", function (e) {
    root.setAttribute("data-js-errors", (root.getAttribute("data-js-errors") || "") + (e.message || "error") + "; ");
  });
  document.addEventListener("DOMContentLoaded", function () {
    var charts = document.querySelectorAll("svg.chart"), bad = [];
    for (var i = 0; i < charts.length; i++) {
      var svg = charts[i], drawn = svg.querySelectorAll("circle.mark").length;
      var bars = svg.querySelectorAll("rect.bar");
      for (var k = 0; k < bars.length; k++) {
        var bb = bars[k].getBoundingClientRect();
        if (bb.width > 0 && bb.height > 0) drawn++;
      }
      var lines = svg.querySelectorAll("path.series");
      for (var j = 0; j < lines.length; j++) {
        if (lines[j].getAttribute("d") && lines[j].getTotalLength() > 0) drawn++;
      }
      var box = svg.getBoundingClientRect();
      if (!drawn || box.width < 100 || box.height < 50) bad.push(svg.id || "chart" + i);
    }
    root.setAttribute("data-charts", String(charts.length));
    root.setAttribute("data-charts-bad", bad.join(" "));
    root.setAttribute("data-height", String(document.documentElement.scrollHeight));
    root.setAttribute("data-checked", "yes");
  });
})();
