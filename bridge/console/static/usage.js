// Draws the usage plots from /usage.json with the vendored uPlot. No inline script: the CSP
// allows scripts from this console only.
"use strict";

(function () {
  const palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"];

  function dayTimes(days) {
    return days.map((day) => Date.parse(day + "T00:00:00Z") / 1000);
  }

  function draw(target, title, times, series) {
    const element = document.getElementById(target);
    if (!element) {
      return;
    }
    const options = {
      title: title,
      width: Math.max(element.clientWidth - 20, 320),
      height: 240,
      series: [{}].concat(
        series.map((entry, i) => ({
          label: entry.label,
          stroke: entry.stroke || palette[i % palette.length],
          dash: entry.dash,
          width: 2,
        }))
      ),
      axes: [{}, { size: 70 }],
    };
    const data = [times].concat(series.map((entry) => entry.values));
    new uPlot(options, data, element);
    element.dataset.drawn = "true";
  }

  async function main() {
    const answer = await fetch("/usage.json", { credentials: "same-origin" });
    if (!answer.ok) {
      return;
    }
    const usage = await answer.json();
    const times = dayTimes(usage.days);
    const server = [{ label: "tokens", values: usage.server }];
    if (usage.budget_day) {
      server.push({
        label: "daily budget",
        values: usage.days.map(() => usage.budget_day),
        stroke: "#888",
        dash: [6, 4],
      });
    }
    draw("plot-server", "Server tokens per day", times, server);
    draw(
      "plot-purposes",
      "Tokens per purpose",
      times,
      Object.entries(usage.purposes).map(([purpose, values]) => ({ label: purpose, values }))
    );
    const byName = (entries) =>
      Object.entries(entries).map(([label, values]) => ({ label: label, values: values }));
    draw("plot-models", "Tokens per model", times, byName(usage.models || {}));
    draw("plot-tiers", "Tokens per tier", times, byName(usage.tiers || {}));
    draw("plot-cost", "Estimated cost per model", times, byName(usage.cost || {}));
    draw(
      "plot-players",
      "Top players",
      times,
      usage.players.map((player) => ({ label: player.name, values: player.tokens }))
    );
  }

  document.addEventListener("DOMContentLoaded", main);
})();
