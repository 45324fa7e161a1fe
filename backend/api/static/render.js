// DOM building for one turn. Every piece of document or user text goes in through
// textContent (never innerHTML), so a document holding <script> shows as text.

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "text") node.textContent = value;
    else if (name === "className") node.className = value;
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const MODE_TEXT = {
  rag: "Answered from the knowledge base",
  hybrid: "Partly answered from the knowledge base",
  fallback: "Not answered from the knowledge base",
};

export function modeBadge(mode) {
  return el("span", { className: `badge mode-${mode}`, "data-mode": mode, title: MODE_TEXT[mode] || "" },
    `Mode: ${mode}`);
}

// The answer text with each [n] as a button that opens source n.
export function renderAnswer(container, text, openSource) {
  container.replaceChildren();
  const parts = text.split(/(\[\d+\])/);
  for (const part of parts) {
    const m = /^\[(\d+)\]$/.exec(part);
    if (m) {
      const marker = part;
      container.append(el("button", {
        type: "button", className: "cite", "data-marker": marker, "aria-label": `Open source ${m[1]}`,
      }, marker));
    } else if (part) {
      container.append(document.createTextNode(part));
    }
  }
  for (const button of container.querySelectorAll("button.cite")) {
    button.addEventListener("click", () => openSource(button.dataset.marker));
  }
}

function fmt(value) {
  return typeof value === "number" ? value.toFixed(3) : "n/a";
}

function where(source) {
  const bits = [source.source];
  if (source.section) bits.push(`section: ${source.section}`);
  if (source.page !== null && source.page !== undefined) bits.push(`page ${source.page}`);
  return bits.join(" · ");
}

// One <details> per cited source (document, section or page, chunk text) and figure thumbnails.
export function renderSources(container, figures, sources) {
  container.replaceChildren();
  figures.replaceChildren();
  const byMarker = new Map();
  let figureCount = 0;
  for (const source of sources) {
    const label = source.marker ? `Source ${source.marker}` : "Figure";
    const details = el("details", { className: "source", "data-chunk": source.chunk_id },
      el("summary", {}, el("strong", { text: label }), " ", el("span", { className: "doc", text: where(source) })),
      el("p", { className: "chunk-text", text: source.text }));
    if (source.image_url) {
      figureCount += 1;
      const alt = `Figure from ${source.source}: ${source.text.slice(0, 120)}`;
      const img = el("img", { src: source.image_url, alt, loading: "lazy", className: "thumb" });
      details.append(el("img", { src: source.image_url, alt, className: "figure-large" }));
      const button = el("button", { type: "button", className: "thumb-button", "aria-label": `Open ${label.toLowerCase()} ${figureCount}` }, img);
      button.addEventListener("click", () => { details.open = true; details.querySelector("summary").focus(); });
      figures.append(button);
    }
    if (source.marker) byMarker.set(source.marker, details);
    container.append(details);
  }
  figures.hidden = figureCount === 0;
  return byMarker;
}

// decision_explain for people: the similarity scale, each gate, the short-query rule, what served it.
export function renderWhy(container, explain, question) {
  container.replaceChildren();
  const th = explain.thresholds;
  // with decision_score "evidence" the thresholds compare sentence evidence; without any, show similarity
  const evidence = explain.decision_score === "evidence" && typeof explain.max_evidence === "number";
  const score = evidence ? explain.max_evidence : explain.max_similarity;
  const scoreName = evidence ? "Best evidence" : "Best similarity";
  const values = [th.low, th.high, score ?? th.low].filter((v) => typeof v === "number");
  const lo = Math.min(0, ...values);
  const hi = Math.max(1, ...values);
  const pos = (v) => `${(((v - lo) / (hi - lo)) * 100).toFixed(1)}%`;

  const scale = el("div", { className: "scale", role: "img",
    "aria-label": `${scoreName} ${fmt(score)}; fallback below ${fmt(th.low)}, hybrid from ${fmt(th.low)}, rag from ${fmt(th.high)}` });
  const zoneFallback = el("span", { className: "zone zone-fallback", text: "fallback" });
  const zoneHybrid = el("span", { className: "zone zone-hybrid", text: "hybrid" });
  const zoneRag = el("span", { className: "zone zone-rag", text: "rag" });
  zoneFallback.style.left = "0%"; zoneFallback.style.width = pos(th.low);
  zoneHybrid.style.left = pos(th.low); zoneHybrid.style.width = `calc(${pos(th.high)} - ${pos(th.low)})`;
  zoneRag.style.left = pos(th.high); zoneRag.style.right = "0%";
  scale.append(zoneFallback, zoneHybrid, zoneRag);
  for (const [name, value] of [["low", th.low], ["high", th.high]]) {
    const tick = el("span", { className: `tick tick-${name}` }, el("span", { className: "tick-label", text: `${name} ${fmt(value)}` }));
    tick.style.left = pos(value);
    scale.append(tick);
  }
  if (typeof score === "number") {
    const marker = el("span", { className: "score-marker" }, el("span", { className: "score-label", text: fmt(score) }));
    marker.style.left = pos(score);
    scale.append(marker);
  }
  container.append(
    el("p", {}, `${scoreName}: `, el("strong", { text: fmt(score) }),
      ` — rag needs ≥ ${fmt(th.high)}, hybrid ≥ ${fmt(th.low)} (${th.kind} scores).`),
    scale);
  if (explain.decision_score === "evidence" && !evidence) {
    container.append(el("p", { className: "note" },
      "No retrieved passage was similar enough to weigh its sentences, so the best similarity is shown."));
  }

  if (explain.short_query_active) {
    container.append(el("p", { className: "note" },
      `Short query (${explain.query_tokens} words): thresholds tightened from low ${fmt(th.base_low)} / high ${fmt(th.base_high)} to ${fmt(th.low)} / ${fmt(th.high)}.`));
  } else {
    container.append(el("p", { className: "note" }, `Not a short query (${explain.query_tokens} words): thresholds as configured.`));
  }

  const gates = explain.gates;
  const gateRows = [
    ["min_similarity_for_hybrid", `similarity ≥ ${fmt(gates.min_similarity_for_hybrid)}`, fmt(explain.max_eligible_similarity)],
    ["min_chunks_for_hybrid", `at least ${gates.min_chunks_for_hybrid} usable passages`, String(gates.usable_chunks)],
    ["min_total_context_chars", `at least ${gates.min_total_context_chars} characters of context`, String(gates.usable_context_chars)],
  ];
  const list = el("ul", { className: "gates", "aria-label": "Hybrid gates" });
  for (const [key, need, got] of gateRows) {
    const passed = gates.passed ? gates.passed[key] : undefined;
    const state = passed === true ? "passed" : passed === false ? "failed" : "not checked";
    list.append(el("li", { className: `gate gate-${state.replace(" ", "-")}`, "data-gate": key },
      el("span", { className: "gate-state", text: passed === true ? "✓ passed" : passed === false ? "✗ failed" : "– not checked" }),
      ` ${need} (got ${got})`));
  }
  container.append(el("h4", { text: "Hybrid gates" }),
    el("p", { className: "note", text: "They decide between hybrid and fallback when the score lies between the low and high thresholds." }),
    list);

  const judged = explain.answerability;
  if (judged) {
    const best = judged.best_sentence === null || judged.best_sentence === undefined ? "none" : judged.best_sentence.toFixed(2);
    const lines = el("ul", { className: "answerability" },
      el("li", { text: `Best sentence: ${best} chance of answering the question (relevant from ${judged.relevance_bar.toFixed(2)})` }));
    if (judged.unknown_words && judged.unknown_words.length) {
      lines.append(el("li", { text: `Words the knowledge base never uses: ${judged.unknown_words.join(", ")}` }));
    }
    container.append(el("h4", { text: "Does any sentence answer it?" }), lines);
  }

  if (explain.reasons && explain.reasons.length) {
    const reasons = el("ul", { className: "reasons" });
    for (const reason of explain.reasons) reasons.append(el("li", { text: reason }));
    container.append(el("h4", { text: "Reasons" }), reasons);
  }

  const facts = el("dl", { className: "facts" });
  const add = (term, value) => facts.append(el("dt", { text: term }), el("dd", { text: value }));
  if (explain.effective_query !== question.trim().replace(/\s+/g, " ")) {
    const how = explain.condensed_by === "llm" ? "rewritten by the LLM" : explain.condensed_by === "rule" ? `rewritten by the offline ${explain.condensed_rule || ""} rule` : "normalized";
    add("Searched as", `${explain.effective_query} (${how})`);
  }
  add("Served by", `${explain.retrieval_target} → version ${explain.version}${explain.domain ? ` (domain ${explain.domain})` : ""}`);
  add("Search", `${explain.strategy}, top ${explain.top_k}, ${explain.candidates} candidates`);
  add("Answered by", `${explain.answered_by} (${explain.used_llm} model)`);
  container.append(el("h4", { text: "Where the answer came from" }), facts);
}
