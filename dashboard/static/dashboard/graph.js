// The entity graph explorer. Elements come as JSON (a json_script block, then fetch() for each
// expansion); every label is cytoscape data drawn on a canvas, never inserted as HTML.
(function () {
  "use strict";
  var cy, container, colours, panelUrl, dataUrl, asOf, validAt;

  function elementsOf(graph) {
    var nodes = graph.nodes.map(function (n) {
      return { group: "nodes", data: { id: "n" + n.id, entity: n.id, label: n.label, type: n.type,
        importance: typeof n.importance === "number" ? n.importance : 0.5, colour: colours[n.type] || "#5c6677" } };
    });
    var edges = graph.edges.map(function (e) {
      return { group: "edges", data: { id: "e" + e.id, source: "n" + e.source, target: "n" + e.target,
        label: e.rel_type, strength: e.strength } };
    });
    return nodes.concat(edges);
  }

  function css(name) { return getComputedStyle(document.documentElement).getPropertyValue(name).trim(); }

  function countDrawn() {
    var nodes = cy.nodes().filter(function (n) { return n.style("display") !== "none"; });
    var edges = cy.edges().filter(function (e) { return e.style("display") !== "none" && e.source().style("display") !== "none" && e.target().style("display") !== "none"; });
    container.dataset.nodes = String(nodes.length);
    container.dataset.edges = String(edges.length);
    var status = document.getElementById("graph-status");
    if (status) status.textContent = nodes.length + " entities and " + edges.length + " relationships drawn.";
  }

  function layout() {
    var big = cy.nodes().length > 300;
    cy.layout({ name: big ? "grid" : "cose", animate: false, fit: true, padding: 40, randomize: true,
      nodeRepulsion: function () { return 200000; }, idealEdgeLength: function () { return 120; },
      nodeOverlap: 40, componentSpacing: 120, gravity: 0.5, numIter: 2000 }).run();
    if (cy.zoom() > 1.3) { cy.zoom(1.3); cy.center(); }  // a handful of nodes should not fill the screen
    countDrawn();
  }

  function applyTypeFilters() {
    var hidden = {};
    document.querySelectorAll("#type-filters input[type=checkbox]").forEach(function (box) {
      if (!box.checked) hidden[box.value] = true;
    });
    cy.batch(function () {
      cy.nodes().forEach(function (n) { n.style("display", hidden[n.data("type")] ? "none" : "element"); });
    });
    countDrawn();
  }

  function openPanel(entityId) {
    var params = new URLSearchParams();
    if (asOf) params.set("as_of", asOf);
    if (validAt) params.set("valid_at", validAt);
    var query = params.toString();
    var url = panelUrl.replace(/\/0\/$/, "/" + entityId + "/") + (query ? "?" + query : "");
    if (window.htmx) window.htmx.ajax("GET", url, { target: "#panel", swap: "innerHTML" });
  }

  function expand(node) {
    var params = new URLSearchParams({ entity: String(node.data("entity")), depth: "1" });
    if (asOf) params.set("as_of", asOf);
    if (validAt) params.set("valid_at", validAt);
    document.querySelectorAll("input[name=rel_type]:checked").forEach(function (b) { params.append("rel_type", b.value); });
    fetch(dataUrl + "?" + params.toString(), { credentials: "same-origin", headers: { "Accept": "application/json" } })
      .then(function (r) { if (!r.ok) throw new Error(r.status); return r.json(); })
      .then(function (graph) {
        var fresh = elementsOf(graph).filter(function (el) { return cy.getElementById(el.data.id).empty(); });
        if (fresh.length) {
          cy.batch(function () { cy.add(fresh); });
          layout();
          applyTypeFilters();
        }
        node.addClass("expanded");
        container.dataset.expanded = String(node.data("entity"));
      })
      .catch(function () { countDrawn(); });
  }

  function init() {
    container = document.getElementById("cy");
    if (!container || !window.cytoscape) return;
    colours = JSON.parse(document.getElementById("graph-colours").textContent);
    var graph = JSON.parse(document.getElementById("graph-data").textContent);
    panelUrl = container.dataset.panelUrl;
    dataUrl = container.dataset.url;
    asOf = container.dataset.asOf;
    validAt = container.dataset.validAt;
    var text = css("--text") || "#1d2430", muted = css("--muted") || "#5c6677", bg = css("--panel") || "#fff";
    var many = graph.nodes.length > 150;
    cy = window.cytoscape({
      container: container,
      elements: elementsOf(graph),
      minZoom: 0.1, maxZoom: 4, wheelSensitivity: 0.3,
      style: [
        { selector: "node", style: {
          "background-color": "data(colour)", "label": "data(label)", "color": text, "font-size": 12,
          "text-valign": "bottom", "text-margin-y": 4, "text-outline-color": bg, "text-outline-width": 2,
          "width": "mapData(importance, 0, 1, 18, 58)", "height": "mapData(importance, 0, 1, 18, 58)",
          "min-zoomed-font-size": many ? 9 : 0 } },
        { selector: "node.focus", style: { "border-width": 4, "border-color": text } },
        { selector: "node.expanded", style: { "border-width": 3, "border-color": muted } },
        { selector: "node:selected", style: { "border-width": 4, "border-color": css("--accent") || "#2f6fdf" } },
        { selector: "edge", style: {
          "width": "mapData(strength, 0, 1, 1, 4)", "line-color": muted, "target-arrow-color": muted,
          "target-arrow-shape": "triangle", "curve-style": "bezier", "label": many ? "" : "data(label)",
          "font-size": 10, "color": muted, "text-background-color": bg,
          "text-background-opacity": 1, "text-background-padding": 2 } },
        { selector: "edge:selected, edge.hover", style: { "label": "data(label)" } }
      ]
    });
    if (container.dataset.focus) cy.getElementById("n" + container.dataset.focus).addClass("focus");
    cy.on("tap", "node", function (evt) { openPanel(evt.target.data("entity")); expand(evt.target); });
    cy.on("mouseover", "edge", function (evt) { evt.target.addClass("hover"); });
    cy.on("mouseout", "edge", function (evt) { evt.target.removeClass("hover"); });
    document.querySelectorAll("#type-filters input[type=checkbox]").forEach(function (box) {
      box.addEventListener("change", applyTypeFilters);
    });
    layout();
    window.anamnesisGraph = cy;  // for tests and the console
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init); else init();
})();
