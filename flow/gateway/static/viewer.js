// TraceGraph live trace viewer. One WebSocket to the gateway (upstream TrustGraph's protocol):
// auth frame first, then requests multiplexed by id. Every string shown comes from the server,
// so text goes in through textContent / setAttribute only, never innerHTML.
"use strict";

const NS = {
  tg: "https://trustgraph.ai/ns/",
  prov: "http://www.w3.org/ns/prov#",
  rdf: "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
  rdfs: "http://www.w3.org/2000/01/rdf-schema#",
  xsd: "http://www.w3.org/2001/XMLSchema#",
  dc: "http://purl.org/dc/elements/1.1/",
};
const RDF_TYPE = NS.rdf + "type";
const LABEL = NS.rdfs + "label";
const PARENT_LINKS = [NS.prov + "wasDerivedFrom", NS.prov + "wasGeneratedBy"];
// A step has several tg: classes (Question + GraphRagQuestion, Synthesis + Answer): the first
// of these that it has names it; anything else falls back to its first tg: class.
const STEP_TYPES = ["Question", "Grounding", "Exploration", "Focus", "Synthesis", "Analysis", "Conclusion",
  "Decomposition", "Finding", "Plan", "StepResult", "Reflection", "Thought", "Observation", "ToolUse",
  "PatternDecision", "Answer"];

const SVG_NS = "http://www.w3.org/2000/svg";
const SAFE_IRI = /^[^<>"{}|^`\\\s]+$/;  // safe to write inside <…> in a query
const $ = (id) => document.getElementById(id);

// ---------------------------------------------------------------- socket

const socket = { ws: null, token: null, ready: null, seq: 0 };

// One socket per token: reused across questions and detail look-ups, reopened if the token changes.
function connect(token) {
  if (socket.ws && socket.token === token && socket.ws.readyState <= WebSocket.OPEN) return socket.ready;
  if (socket.ws) socket.ws.close();
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const ws = new WebSocket(`${scheme}//${location.host}/api/v1/socket`);
  const handlers = new Map();  // per socket: closing an old one must not fail the new one's requests
  Object.assign(socket, { ws, token });
  socket.ready = new Promise((resolve, reject) => {
    ws.onopen = () => ws.send(JSON.stringify({ type: "auth", token }));
    ws.onmessage = (msg) => {
      let frame;
      try { frame = JSON.parse(msg.data); } catch { return; }
      if (frame.type === "auth-ok") return resolve({ ws, handlers });
      if (frame.type === "auth-failed") {
        ws.close();  // a fresh socket (and auth) on the next try
        return reject(new Error(`Authentication failed: ${frame.error || "auth failure"}`));
      }
      const handler = handlers.get(frame.id);
      if (handler) handler(frame);
      else if (frame.error) setStatus(describe(frame.error), "error");
    };
    ws.onclose = () => {
      if (socket.ws === ws) socket.ws = null;
      reject(new Error("could not connect to the gateway"));  // no-op once authenticated
      const closed = { error: { type: "closed", message: "connection to the gateway closed" }, complete: true };
      for (const handler of [...handlers.values()]) handler(closed);
      handlers.clear();
    };
  });
  return socket.ready;
}

// Sends one request; onFrame sees every response frame for its id until `complete`.
async function send(service, flow, request, onFrame) {
  const { ws, handlers } = await connect($("token").value);
  const id = `req-${++socket.seq}-${Date.now().toString(36)}`;
  handlers.set(id, (frame) => {
    if (frame.complete) handlers.delete(id);
    onFrame(frame);
  });
  ws.send(JSON.stringify({ id, service, flow, request }));
}

// Gateway errors sit on the frame, service errors inside its response.
function errorOf(frame) {
  return frame.error || (frame.response && frame.response.error) || null;
}

function describe(error) {
  if (typeof error === "string") return error;
  return [error.type, error.message].filter(Boolean).join(": ") || "error";
}

// ---------------------------------------------------------------- terms

function shortIri(iri) {
  for (const [prefix, base] of Object.entries(NS)) {
    if (iri.startsWith(base) && iri.length > base.length) return `${prefix}:${iri.slice(base.length)}`;
  }
  return iri;
}

function lastSegment(iri) {
  const parts = iri.replace(/[/#:]+$/, "").split(/[/#:]/);
  try { return decodeURIComponent(parts[parts.length - 1]); } catch { return parts[parts.length - 1]; }
}

// Short, human label of a term: rdfs:label when we have one, else the IRI's last segment.
function labelOf(term) {
  if (!term) return "";
  switch (term.t) {
    case "i": return view.labels.get(term.i) || lastSegment(term.i);
    case "l": return term.v;
    case "b": return `_:${term.d}`;
    case "t": return edgeText(term.tr);
    default: return JSON.stringify(term);
  }
}

function edgeText(tr) {
  return `(${labelOf(tr.s)}) --[${labelOf(tr.p)}]--> (${labelOf(tr.o)})`;
}

const isIri = (term, iri) => term && term.t === "i" && (iri === undefined || term.i === iri);

// ---------------------------------------------------------------- state

const view = {
  events: [],           // one per explain_id, in arrival order: {uri, type, error}
  triples: [],          // every explain triple received this session
  labels: new Map(),    // IRI -> rdfs:label
  selected: null,       // URI shown in the details panel
  finished: false,
};

function objectsOf(subject, predicate) {
  return view.triples.filter((t) => isIri(t.s, subject) && isIri(t.p, predicate)).map((t) => t.o);
}

function valuesOf(subject, predicate) {
  return objectsOf(subject, predicate).map(labelOf);
}

function tgTypes(uri) {
  return objectsOf(uri, RDF_TYPE).filter((o) => isIri(o) && o.i.startsWith(NS.tg)).map((o) => o.i.slice(NS.tg.length));
}

// The Focus step's chosen edges: EdgeSelection nodes quoting the edge (RDF-star) with a reason.
function selectedEdges(focus) {
  return objectsOf(focus, NS.tg + "selectedEdge").filter((o) => isIri(o)).map((sel) => {
    const edge = objectsOf(sel.i, NS.tg + "edge").find((o) => o.t === "t");
    return { uri: sel.i, edge: edge && edge.tr, reasoning: valuesOf(sel.i, NS.tg + "reasoning")[0] || "" };
  });
}

// What a Focus kept, in rank order: edges (GraphRAG, search), community reports (global) or tree
// summaries and passages (RAPTOR), each with the text its card shows and its reason.
function keptItems(focus) {
  const ranked = (p) => objectsOf(focus, NS.tg + p).filter((o) => isIri(o)).map((o) => o.i)
    .sort((a, b) => Number(valuesOf(a, NS.tg + "rank")[0] || 0) - Number(valuesOf(b, NS.tg + "rank")[0] || 0));
  const reason = (uri) => valuesOf(uri, NS.tg + "reasoning")[0] || "";
  const reports = ranked("selectedReport").map((sel) => {
    const report = objectsOf(sel, NS.tg + "report")[0];
    // The title rides on the map step's score of the same report (Exploration).
    const score = report && view.triples.find((t) => isIri(t.p, NS.tg + "report") && isIri(t.o, report.i)
                                                  && valuesOf(t.s.i, LABEL).length);
    return { uri: sel, text: score ? valuesOf(score.s.i, LABEL)[0] : lastSegment(report ? report.i : sel),
             reasoning: reason(sel) };
  });
  const nodes = ranked("selectedNode").map((sel) => ({
    uri: sel, text: `level ${valuesOf(sel, NS.tg + "level")[0] || "?"} summary`, reasoning: reason(sel) }));
  const chunks = chunkItems(focus);
  const edges = selectedEdges(focus).map((sel) => ({ uri: sel.uri, text: sel.edge ? edgeText(sel.edge) : lastSegment(sel.uri),
                                                     reasoning: sel.reasoning }));
  return [...edges, ...reports, ...nodes, ...chunks];
}

// The passages a step kept (tg:ChunkSelection), in rank order: a Document RAG Exploration's chunks or a
// RAPTOR Focus's passages, each read by its chunk's label once fetchChunkLabels has it.
function chunkItems(step) {
  return objectsOf(step, NS.tg + "chunkSelection").filter((o) => isIri(o)).map((o) => o.i)
    .sort((a, b) => Number(valuesOf(a, NS.tg + "rank")[0] || 0) - Number(valuesOf(b, NS.tg + "rank")[0] || 0))
    .map((sel) => {
      const chunk = objectsOf(sel, NS.tg + "chunk")[0];
      const label = chunk && view.labels.get(chunk.i);
      return { uri: sel, text: label || `passage ${lastSegment(chunk ? chunk.i : sel)}`,
               reasoning: valuesOf(sel, NS.tg + "reasoning")[0] || "" };
    });
}

// What hangs beside a step as a column of cards: a Focus's kept items, a Document RAG Exploration's chunks.
function childItems(event) {
  if (event.type === "Focus") return keptItems(event.uri);
  if (event.type === "Exploration") return chunkItems(event.uri);
  return [];
}

// A Question after the session's first is the run a tool of the agent made (a sub-trace): its box
// names that run ("GraphRAG run"), so an agent session shows one Question.
const SUB_RUN_TITLES = { GraphRagQuestion: "GraphRAG run", DocRagQuestion: "Document RAG run",
                         SearchQuestion: "Search run" };

function boxTitle(event) {
  if (event.type !== "Question" || view.events[0] === event) return event.type;
  const types = tgTypes(event.uri);
  const kind = ["SearchQuestion", "GraphRagQuestion", "DocRagQuestion"].find((t) => types.includes(t));
  return SUB_RUN_TITLES[kind] || "Tool run";
}

// One line under the step's name, so the trace reads without opening every node.
function detailOf(event) {
  const uri = event.uri;
  const one = (p) => valuesOf(uri, NS.tg + p)[0];
  if (event.error) return valuesOf(uri, NS.rdfs + "comment").find((c) => c.startsWith("failed")) || "failed";
  switch (event.type) {
    case "Question": return one("query") ? `“${one("query")}”` : "";
    case "Grounding": {
      const concepts = valuesOf(uri, NS.tg + "concept");
      return `${concepts.length} concept${concepts.length === 1 ? "" : "s"}: ${concepts.join(", ")}`;
    }
    case "Exploration": {
      if (one("chunkCount") !== undefined) return `${one("chunkCount")} chunks retrieved`;  // Document RAG
      const scored = objectsOf(uri, NS.tg + "reportScore").length;
      if (scored) return `${scored} community report${scored === 1 ? "" : "s"} scored (map)`;  // global
      const visited = objectsOf(uri, NS.tg + "treeVisit").length;
      if (visited) return `${visited} tree node${visited === 1 ? "" : "s"} visited`;  // RAPTOR
      const entities = objectsOf(uri, NS.tg + "entity").length;
      return `${one("edgeCount") || "?"} edges from ${entities} entit${entities === 1 ? "y" : "ies"}`;
    }
    case "Analysis": return `${one("action") || "?"}: ${one("thought") || ""}`;
    case "Conclusion": return one("answer") || "";
    case "Focus": {
      const reports = objectsOf(uri, NS.tg + "selectedReport").length;
      if (reports) return `${reports} report${reports === 1 ? "" : "s"} kept (reduce)`;
      const n = selectedEdges(uri).length;
      const tree = objectsOf(uri, NS.tg + "selectedNode").length + objectsOf(uri, NS.tg + "chunkSelection").length;
      return tree ? `${tree} summaries and passages kept` : `${n} selected edge${n === 1 ? "" : "s"}`;
    }
    case "Synthesis": {
      const tokens = one("outToken") ? `${one("inToken") || 0} in / ${one("outToken")} out tokens` : "";
      return tokens || valuesOf(uri, NS.rdfs + "comment")[0] || "";
    }
    default: return valuesOf(uri, NS.rdfs + "comment")[0] || valuesOf(uri, LABEL)[0] || "";
  }
}

function addEvent(response) {
  const uri = response.explain_id;
  const triples = response.explain_triples || [];
  view.triples.push(...triples);
  for (const t of triples) {
    if (isIri(t.p, LABEL) && t.o.t === "l" && isIri(t.s)) view.labels.set(t.s.i, t.o.v);
  }
  // A failed session re-announces its Question (now also a tg:Error): update that node in place.
  let event = view.events.find((e) => e.uri === uri);
  if (!event) view.events.push(event = { uri });
  const types = tgTypes(uri);
  event.type = STEP_TYPES.find((t) => types.includes(t)) || types[0] || "Event";
  event.error = types.includes("Error");
  nameSelections(uri);
  renderGraph();
  if (view.selected === uri) showDetails(uri);
  if (event.type === "Focus") fetchLabels(edgeIris(uri));
  if (event.type === "Exploration") fetchChunkLabels(uri);
}

// Each kept chunk's label and document title ("Chunk 2 → helios-grid"), as the CLI's trace shows them,
// in one read-only SPARQL query over the extraction provenance.
function fetchChunkLabels(exploration) {
  const iris = chunkItems(exploration).map((item) => objectsOf(item.uri, NS.tg + "chunk")[0])
    .filter((c) => c && isIri(c) && SAFE_IRI.test(c.i) && !view.labels.has(c.i)).map((c) => `<${c.i}>`);
  if (!iris.length) return;
  const query = `PREFIX tg: <${NS.tg}> PREFIX prov: <${NS.prov}> PREFIX dc: <${NS.dc}> PREFIX rdfs: <${NS.rdfs}>
SELECT ?chunk ?label ?title WHERE {
  VALUES ?chunk { ${iris.join(" ")} }
  GRAPH <urn:graph:source> { ?chunk rdfs:label ?label ; prov:wasDerivedFrom+ ?doc }
  ?doc a tg:Document ; dc:title ?title
}`;
  const request = { query, collection: $("collection").value || "default", limit: 1000 };
  send("sparql", $("flow").value || "default", request, (frame) => {
    const rows = (frame.response && frame.response.bindings) || [];
    for (const row of rows) {
      if (row.chunk && row.label && row.title) view.labels.set(row.chunk.i, `${row.label.v} → ${row.title.v}`);
    }
    if (rows.length) renderGraph();
  }).catch(() => {});  // labels are a nicety: the chunks' IRIs still read
}

// Name each selected edge by the edge it quotes, for the details panel's links and headings.
function nameSelections(focus) {
  for (const sel of selectedEdges(focus)) if (sel.edge) view.labels.set(sel.uri, edgeText(sel.edge));
}

// The IRIs the selected edges quote that have no label yet (only IRIs safe to write inside <…>).
function edgeIris(focus) {
  const iris = new Set();
  for (const sel of selectedEdges(focus)) {
    for (const term of sel.edge ? [sel.edge.s, sel.edge.p, sel.edge.o] : []) {
      if (term.t === "i" && !view.labels.has(term.i) && SAFE_IRI.test(term.i)) iris.add(term.i);
    }
  }
  return [...iris];
}

// Entities' rdfs:label from the collection, in one read-only SPARQL query over the same socket, so
// edges read "(Helios Grid) --[depends on]-->" rather than by their IRIs.
function fetchLabels(iris) {
  if (!iris.length) return;
  const query = `SELECT ?s ?label WHERE { VALUES ?s { ${iris.map((i) => `<${i}>`).join(" ")} } ` +
                `?s <${LABEL}> ?label }`;
  const request = { query, collection: $("collection").value || "default", limit: 1000 };
  send("sparql", $("flow").value || "default", request, (frame) => {
    const rows = (frame.response && frame.response.bindings) || [];
    for (const row of rows) if (row.s && row.label) view.labels.set(row.s.i, row.label.v);
    if (!rows.length) return;
    for (const event of view.events) if (event.type === "Focus") nameSelections(event.uri);
    renderGraph();
    if (view.events.some((e) => e.uri === view.selected)) showDetails(view.selected);
  }).catch(() => {});  // labels are a nicety: the IRIs' last segments still read
}

// A term as SPARQL writes it; null for one that cannot be written safely (or is a blank node).
function sparqlTerm(term) {
  if (term.t === "i") return SAFE_IRI.test(term.i) ? `<${term.i}>` : null;
  if (term.t !== "l") return null;
  const escapes = { "\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r" };
  const text = `"${term.v.replace(/[\\"\n\r]/g, (c) => escapes[c])}"`;
  if (term.ln) return /^[A-Za-z]+(-[A-Za-z0-9]+)*$/.test(term.ln) ? `${text}@${term.ln}` : null;
  if (term.dt) return SAFE_IRI.test(term.dt) ? `${text}^^<${term.dt}>` : null;
  return text;
}

// An agent's answer names no sources of its own: the GraphRAG and Document RAG runs its tools made
// (sub-runs, whose steps are in this session's trace) rest on documents. One read-only SPARQL query
// over the extraction provenance finds the documents their selected edges and chunks came from.
function fetchSubRunSources() {
  const events = view.events;
  const edges = [];
  const chunks = [];
  for (const event of events) {
    for (const sel of event.type === "Focus" ? selectedEdges(event.uri) : []) {
      const terms = sel.edge ? [sel.edge.s, sel.edge.p, sel.edge.o].map(sparqlTerm) : [null];
      if (!terms.includes(null)) edges.push(`(${terms.join(" ")})`);
    }
    for (const chunk of event.type === "Exploration" ? objectsOf(event.uri, NS.tg + "selectedChunk") : []) {
      if (isIri(chunk) && SAFE_IRI.test(chunk.i)) chunks.push(`<${chunk.i}>`);
    }
  }
  if (!edges.length && !chunks.length) return showSources([]);
  const query = `PREFIX tg: <${NS.tg}> PREFIX prov: <${NS.prov}> PREFIX dc: <${NS.dc}>
SELECT DISTINCT ?doc ?title WHERE {
  { VALUES (?s ?p ?o) { ${edges.join(" ")} }
    GRAPH <urn:graph:source> { ?subgraph tg:contains <<( ?s ?p ?o )>> ; prov:wasDerivedFrom+ ?doc } }
  UNION { VALUES ?chunk { ${chunks.join(" ")} } GRAPH <urn:graph:source> { ?chunk prov:wasDerivedFrom+ ?doc } }
  ?doc a tg:Document ; dc:title ?title
} ORDER BY ?title`;
  $("sources").replaceChildren(el("li", { class: "empty" }, "looking up the sources of the agent's tool runs…"));
  $("sources").dataset.state = "loading";
  const request = { query, collection: $("collection").value || "default", limit: 100 };
  send("sparql", $("flow").value || "default", request, (frame) => {
    if (view.events !== events || !frame.complete) return;  // a new question has been asked meanwhile
    const rows = (!errorOf(frame) && frame.response && frame.response.bindings) || [];
    showSources(rows.filter((row) => row.doc && row.title).map((row) => ({ uri: row.doc.i, title: row.title.v })));
  }).catch(() => { if (view.events === events) showSources([]); });
}

// ---------------------------------------------------------------- graph (SVG)

const NODE = { w: 240, h: 58, gap: 30, x: 28, y: 12 };   // event column, top to bottom
const EDGE = { minW: 280, h: 40, gap: 8, dx: 40 };       // selected edges, branching right of Focus

function svg(name, attrs = {}, parent) {
  const el = document.createElementNS(SVG_NS, name);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  if (parent) parent.appendChild(el);
  return el;
}

// SVG text does not wrap: cut it (binary search on its measured width) to fit the box, with "…".
function svgText(parent, x, y, text, cls, maxWidth) {
  const node = svg("text", { x, y, class: cls }, parent);
  node.textContent = text;
  if (node.getComputedTextLength() <= maxWidth) return;
  let lo = 0, hi = text.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    node.textContent = text.slice(0, mid) + "…";
    if (node.getComputedTextLength() <= maxWidth) lo = mid; else hi = mid - 1;
  }
  node.textContent = text.slice(0, lo) + "…";
}

// Redrawn whole on every event: a trace has a handful of steps, so this stays cheap and simple.
function renderGraph() {
  const graph = $("graph");
  graph.replaceChildren();
  const defs = svg("defs", {}, graph);
  const marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7,
    markerHeight: 7, orient: "auto-start-reverse" }, defs);
  svg("path", { d: "M0,0 L10,5 L0,10 z", class: "arrowhead" }, marker);

  const links = svg("g", { class: "links" }, graph);
  const pos = new Map();
  view.events.forEach((e, i) => pos.set(e.uri, { x: NODE.x, y: NODE.y + i * (NODE.h + NODE.gap) }));
  let width = NODE.x + NODE.w + 16;
  // Selected edges take what is left of the card's width, so the trace needs no sideways scroll.
  const edgeW = Math.max(EDGE.minW, graph.parentElement.clientWidth - (NODE.x + NODE.w + EDGE.dx) - 4);
  let height = NODE.y + view.events.length * (NODE.h + NODE.gap);

  for (const event of view.events) {
    const from = pos.get(event.uri);
    // Arrows run from the later step up to the one it derives from, as prov reads.
    for (const t of view.triples) {
      if (!isIri(t.s, event.uri) || !PARENT_LINKS.some((p) => isIri(t.p, p)) || !isIri(t.o)) continue;
      const to = pos.get(t.o.i);
      if (!to) continue;
      const adjacent = from.y - to.y === NODE.h + NODE.gap;
      const d = adjacent
        ? `M${from.x + NODE.w / 2},${from.y} V${to.y + NODE.h + 1}`
        : `M${from.x},${from.y + NODE.h / 2} C${from.x - 36},${from.y + NODE.h / 2} ${to.x - 36},${to.y + NODE.h / 2} ${to.x - 1},${to.y + NODE.h / 2}`;
      svg("path", { d, class: "link", "marker-end": "url(#arrow)" }, links);
    }
  }

  for (const event of view.events) {
    const { x, y } = pos.get(event.uri);
    const g = svg("g", { class: "node" + (event.error ? " failed" : ""), "data-uri": event.uri,
      "data-type": event.type, transform: `translate(${x},${y})`, tabindex: 0, role: "button" }, graph);
    const detail = detailOf(event);
    const title = boxTitle(event);
    if (title !== event.type) g.setAttribute("data-sub-run", "true");
    svg("title", {}, g).textContent = `${title}\n${event.uri}\n${detail}`;
    svg("rect", { width: NODE.w, height: NODE.h, rx: 8, class: "box" }, g);
    svg("rect", { width: 6, height: NODE.h, rx: 3, class: "accent" }, g);
    svgText(g, 16, 23, title, "title", NODE.w - 24);
    svgText(g, 16, 43, detail, "sub", NODE.w - 24);

    // Selected edges (Focus) and retrieved chunks (Document RAG Exploration) hang off their step as a
    // small tree of child nodes.
    const ex = x + NODE.w + EDGE.dx;
    const trunk = x + NODE.w + EDGE.dx / 2;
    childItems(event).forEach((sel, k) => {
      const ey = y + k * (EDGE.h + EDGE.gap);
      svg("path", { d: `M${x + NODE.w},${y + NODE.h / 2} H${trunk} V${ey + EDGE.h / 2} H${ex}`, class: "branch" }, links);
      const c = svg("g", { class: "edge-node", "data-uri": sel.uri, "data-focus": event.uri,
        transform: `translate(${ex},${ey})`, tabindex: 0, role: "button" }, graph);
      const text = sel.text;
      svg("title", {}, c).textContent = sel.reasoning ? `${text}\n${sel.reasoning}` : text;
      svg("rect", { width: edgeW, height: EDGE.h, rx: 6, class: "box" }, c);
      svgText(c, 10, 16, text, "edge", edgeW - 20);
      svgText(c, 10, 32, sel.reasoning, "reason", edgeW - 20);
      width = Math.max(width, ex + edgeW + 2);
      height = Math.max(height, ey + EDGE.h + 16);
    });
  }
  if (view.selected) markSelected(view.selected);
  graph.setAttribute("width", width);
  graph.setAttribute("height", height);
  graph.setAttribute("viewBox", `0 0 ${width} ${height}`);
}

function markSelected(uri) {
  for (const el of document.querySelectorAll("#graph .selected")) el.classList.remove("selected");
  for (const el of document.querySelectorAll("#graph [data-uri]")) {
    if (el.getAttribute("data-uri") === uri) el.classList.add("selected");
  }
}

// ---------------------------------------------------------------- details panel

function el(name, attrs = {}, text) {
  const e = document.createElement(name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

// An IRI in the panel is a link to its own triples (local if we have them, else the store's).
function termNode(term) {
  if (isIri(term)) {
    return el("a", { href: "#", class: "iri", "data-uri": term.i, title: term.i },
      view.labels.get(term.i) || shortIri(term.i));
  }
  if (term.t === "l") {
    const span = el("span", { class: "literal" }, term.v);
    if (term.dt || term.ln) span.appendChild(el("small", {}, term.ln ? ` @${term.ln}` : ` ^^${shortIri(term.dt)}`));
    return span;
  }
  if (term.t === "t") {
    // A quoted triple (RDF-star): the edge itself, readable, with each part still clickable.
    const span = el("span", { class: "quoted" });
    const part = (t) => isIri(t) ? el("a", { href: "#", class: "iri", "data-uri": t.i, title: t.i }, labelOf(t)) : termNode(t);
    span.append("<< ", part(term.tr.s), " ", part(term.tr.p), " ", part(term.tr.o), " >>");
    return span;
  }
  return el("span", {}, labelOf(term));
}

function renderDetails(uri, triples, note, origin) {
  const panel = $("details");
  panel.replaceChildren();
  panel.dataset.uri = uri;
  panel.dataset.state = note === "loading" ? "loading" : "ready";
  panel.appendChild(el("h3", {}, view.labels.get(uri) || lastSegment(uri)));
  panel.appendChild(el("code", { class: "uri" }, uri));
  if (origin) panel.appendChild(el("p", { class: "origin" }, origin));
  if (note) panel.appendChild(el("p", { class: "empty" }, note === "loading" ? "Loading triples…" : note));

  // Grouped by subject: a Focus step lists its own triples, then each selected edge's.
  const groups = new Map();
  for (const t of triples) {
    const key = isIri(t.s) ? t.s.i : labelOf(t.s);
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(t);
  }
  for (const [subject, rows] of groups) {
    if (subject !== uri) {
      panel.appendChild(el("h4", { title: subject }, view.labels.get(subject) || shortIri(subject)));
    }
    const table = el("table");
    for (const t of rows) {
      const tr = el("tr");
      tr.appendChild(el("th", { title: isIri(t.p) ? t.p.i : "" }, isIri(t.p) ? shortIri(t.p.i) : labelOf(t.p)));
      const td = el("td");
      td.appendChild(termNode(t.o));
      if (t.g && t.g !== "urn:graph:retrieval") td.appendChild(el("small", { class: "graph" }, ` in ${t.g}`));
      tr.appendChild(td);
      table.appendChild(tr);
    }
    panel.appendChild(table);
  }
}

function showDetails(uri) {
  view.selected = uri;
  markSelected(uri);
  const mine = view.triples.filter((t) => isIri(t.s, uri));
  if (mine.length) {
    const edges = keptItems(uri).map((item) => item.uri);
    const extra = view.triples.filter((t) => isIri(t.s) && edges.includes(t.s.i));
    renderDetails(uri, [...mine, ...extra], "", "from this session's explain events");
    return;
  }
  queryTriples(uri);
}

// Not in the trace (a source document, an entity): ask the triples service over the same socket.
function queryTriples(uri) {
  renderDetails(uri, [], "loading");
  const found = [];
  const request = { s: { t: "i", i: uri }, g: "*", collection: $("collection").value || "default", limit: 200 };
  send("triples", $("flow").value || "default", request, (frame) => {
    if (view.selected !== uri) return;  // the user has moved on
    const error = errorOf(frame);
    if (error) {
      renderDetails(uri, found, `Triples query failed: ${describe(error)}`);
      setStatus(`Triples query failed: ${describe(error)}`, "error");
      return;
    }
    const response = frame.response || {};
    // Upstream answers {"response": [triples]}; accept a bare {"triples": [...]} too.
    found.push(...(response.response || response.triples || []));
    for (const t of found) if (isIri(t.s) && isIri(t.p, LABEL) && t.o.t === "l") view.labels.set(t.s.i, t.o.v);
    if (frame.complete) {
      renderDetails(uri, found, found.length ? "" : "The triples service has nothing about this IRI.",
        "from the triples service");
    }
  }).catch((err) => renderDetails(uri, [], err.message));
}

// ---------------------------------------------------------------- session

function setStatus(text, kind = "") {
  const status = $("status");
  status.textContent = text;
  status.className = kind;
}

function setState(state) {
  document.body.dataset.state = state;
  $("ask").disabled = state === "running";
}

function resetView(service) {
  Object.assign(view, { service, events: [], triples: [], labels: new Map(), selected: null, finished: false });
  $("answer").textContent = "";
  $("meta").textContent = "";
  $("sources").replaceChildren();
  $("sources").dataset.state = "empty";
  $("details").replaceChildren(el("p", { class: "empty" }, "Click a step, a selected edge or a source."));
  $("details").dataset.state = "empty";
  renderGraph();
}

function fail(error) {
  if (view.finished) return;
  view.finished = true;
  setStatus(error instanceof Error ? error.message : describe(error), "error");
  setState("error");
}

function showSources(sources) {
  const list = $("sources");
  list.replaceChildren(...sources.map((source) => {
    const li = el("li");
    li.appendChild(el("a", { href: "#", "data-uri": source.uri, title: source.uri }, source.title || source.uri));
    return li;
  }));
  if (!sources.length) list.appendChild(el("li", { class: "empty" }, "none"));
  list.dataset.state = "ready";
}

function finish(response) {
  if (view.finished) return;
  view.finished = true;
  if (!response.sources && view.service === "agent") fetchSubRunSources();
  else showSources(response.sources || []);
  const usage = [response.model, response.in_token != null && `${response.in_token} in / ${response.out_token} out tokens`];
  $("meta").textContent = usage.filter(Boolean).join(" · ");
  setStatus(`Done: ${view.events.length} explain events.`, "ok");
  setState("done");
}

function onAnswerFrame(frame) {
  if (view.finished) return;
  const error = errorOf(frame);
  if (error) return fail(error);
  const response = frame.response || {};
  if (response.message_type === "explain" && response.explain_id) {
    addEvent(response);
    setStatus(`Running: ${view.events[view.events.length - 1].type}…`, "busy");
  } else if (response.response) {
    $("answer").append(response.response);  // a text node: the answer is never parsed as HTML
  } else if (response.message_type === "answer" && response.content) {
    $("answer").append(response.content);  // the agent's answer; its thoughts show in the graph's steps
  }
  if (response.end_of_session || response.end_of_dialog || frame.complete) finish(response);
}

function ask(submit) {
  submit.preventDefault();
  const query = $("question").value.trim();
  if (!query) return;
  const choice = $("service").value;  // a service, or "search-global" / "search-raptor": a search strategy
  const [service, mode] = choice.startsWith("search-") ? ["search", choice.slice("search-".length)] : [choice, null];
  resetView(service);
  setState("running");
  setStatus("Connecting…", "busy");
  // The agent takes a `question`; the RAG services a `query`. Global and RAPTOR answers are the search service's.
  const request = { [service === "agent" ? "question" : "query"]: query,
                    collection: $("collection").value || "default", streaming: true, explain: true };
  if (mode) request.strategies = [mode];
  send(service, $("flow").value || "default", request, onAnswerFrame).catch(fail);
}

function init() {
  const params = new URLSearchParams(location.search);
  if (params.has("token")) {
    $("token").value = params.get("token");
    // Keep the secret out of the address bar and history once it is in the form.
    params.delete("token");
    history.replaceState(null, "", location.pathname + (params.size ? `?${params}` : "") + location.hash);
  }
  $("ask-form").addEventListener("submit", ask);
  window.addEventListener("resize", () => renderGraph());

  // One listener each for the graph, the sources and the panel's IRI links.
  const open = (target, selector) => {
    const node = target.closest(selector);
    if (node) showDetails(node.getAttribute("data-uri"));
    return Boolean(node);
  };
  const inGraph = ".node, .edge-node";
  $("graph").addEventListener("click", (e) => open(e.target, inGraph));
  $("graph").addEventListener("keydown", (e) => {
    if ((e.key === "Enter" || e.key === " ") && open(e.target, inGraph)) e.preventDefault();
  });
  for (const id of ["sources", "details"]) {
    $(id).addEventListener("click", (e) => { if (open(e.target, "a[data-uri]")) e.preventDefault(); });
  }
}

init();
