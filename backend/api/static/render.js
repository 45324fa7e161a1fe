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
  return typeof value === "number" ? value.toFixed(2) : "n/a";
}

function where(source) {
  const bits = [source.source];
  if (source.section) bits.push(`section: ${source.section}`);
  if (source.page !== null && source.page !== undefined) bits.push(`page ${source.page}`);
  return bits.join(" · ");
}

// Open a source: its turn's Sources section, the source itself, highlighted, scrolled to and focused.
export function revealSource(details) {
  const panel = details.closest("details.sources-panel");
  if (panel) { panel.hidden = false; panel.open = true; }
  details.open = true;
  const turn = details.closest(".answer") || document;
  for (const other of turn.querySelectorAll("details.source.highlight")) other.classList.remove("highlight");
  details.classList.add("highlight");
  const summary = details.querySelector("summary");
  summary.focus({ preventScroll: true });
  details.scrollIntoView({ block: "start" });
}

// One <details> per cited source (document, section or page, chunk text) and figure thumbnails.
// a passage as a reader sees it: the [FIGURE:<id>] marker where a picture stood says "(figure)"
export function readableChunk(text) {
  return text.replace(/\s*\[FIGURE:[^\]]*\]\s*/g, " (figure) ").replace(/ {2,}/g, " ").trim();
}

export function renderSources(container, figures, sources) {
  container.replaceChildren();
  figures.replaceChildren();
  const byMarker = new Map();
  let figureCount = 0;
  for (const source of sources) {
    const label = source.marker ? `Source ${source.marker}` : "Figure";
    const details = el("details", { className: "source", "data-chunk": source.chunk_id },
      el("summary", {}, el("strong", { text: label }), " ", el("span", { className: "doc", text: where(source) })),
      el("p", { className: "chunk-text", text: readableChunk(source.text) }));
    if (source.image_url) {
      figureCount += 1;
      const alt = `Figure from ${source.source}: ${source.text.slice(0, 120)}`;
      const img = el("img", { src: source.image_url, alt, loading: "lazy", className: "thumb" });
      details.append(el("img", { src: source.image_url, alt, className: "figure-large" }));
      const button = el("button", { type: "button", className: "thumb-button", "aria-label": `Open ${label.toLowerCase()} ${figureCount}` }, img);
      button.addEventListener("click", () => revealSource(details));
      figures.append(button);
    }
    if (source.marker) byMarker.set(source.marker, details);
    container.append(details);
  }
  figures.hidden = figureCount === 0;
  return byMarker;
}

// decision_explain for people: the score against the two thresholds, each check in plain
// words, the short-question rule, what served the answer.
const ZONES = [
  ["fallback", "Not answered"],
  ["hybrid", "Partly answered"],
  ["rag", "Answered"],
];

function plural(n, one, many) {
  return `${n} ${n === 1 ? one : many}`;
}

export function renderWhy(container, explain, question) {
  container.replaceChildren();
  const th = explain.thresholds;
  // with decision_score "evidence" or "answerability" the thresholds compare a sentence score; without any, show similarity
  const bySentence = explain.decision_score === "evidence" || explain.decision_score === "answerability";
  const evidence = bySentence && typeof explain.max_evidence === "number";
  const score = evidence ? explain.max_evidence : explain.max_similarity;
  const scoreName = !evidence ? "How close the best passage is to the question"
    : explain.decision_score === "answerability" ? "How likely the best sentence answers the question"
    : "How well the best sentences support an answer";
  const values = [th.low, th.high, score ?? th.low].filter((v) => typeof v === "number");
  const lo = Math.min(0, ...values);
  const hi = Math.max(1, ...values);
  const pos = (v) => `${(((v - lo) / (hi - lo)) * 100).toFixed(1)}%`;

  container.append(el("p", {}, `${scoreName}: `, el("strong", { text: fmt(score) }), ` (on a scale from ${fmt(lo)} to ${fmt(hi)}). `,
    `From ${fmt(th.high)} the answer comes from the knowledge base; from ${fmt(th.low)} it comes partly from it; `,
    `below ${fmt(th.low)} it does not.`));

  const scale = el("div", { className: "scale", role: "img",
    "aria-label": `Score ${fmt(score)}; not answered below ${fmt(th.low)}, partly answered from ${fmt(th.low)}, answered from ${fmt(th.high)}` });
  const bounds = [[lo, th.low], [th.low, th.high], [th.high, hi]];
  ZONES.forEach(([mode], i) => {
    const zone = el("span", { className: `zone zone-${mode}` });
    zone.style.left = pos(bounds[i][0]);
    zone.style.width = `calc(${pos(bounds[i][1])} - ${pos(bounds[i][0])})`;
    scale.append(zone);
  });
  if (typeof score === "number") {
    const marker = el("span", { className: "score-marker" });
    marker.style.left = pos(score);
    scale.append(marker);
  }
  for (const [name, value] of [["low", th.low], ["high", th.high]]) {
    const tick = el("span", { className: `tick tick-${name}` });
    tick.style.left = pos(value);
    scale.append(tick);
  }
  // the zones' names as a legend under the scale (a narrow zone would clip a label inside it)
  const legend = el("ul", { className: "legend", "aria-hidden": "true" });
  ZONES.forEach(([mode, words], i) => {
    const range = i === 0 ? `below ${fmt(th.low)}` : i === 1 ? `${fmt(th.low)} to ${fmt(th.high)}` : `${fmt(th.high)} and up`;
    legend.append(el("li", { className: `legend-item legend-${mode}` },
      el("span", { className: `swatch zone-${mode}` }), el("span", { className: "zone-label", text: `${words} (${range})` })));
  });
  if (typeof score === "number") {
    legend.append(el("li", { className: "legend-item" }, el("span", { className: "swatch swatch-score" }),
      el("span", { className: "zone-label", text: `This question: ${fmt(score)}` })));
  }
  container.append(scale, legend);
  if (bySentence && !evidence) {
    container.append(el("p", { className: "note" },
      "No passage was close enough to weigh its sentences, so the closeness of the best passage is shown."));
  }

  if (explain.short_query_active) {
    container.append(el("p", { className: "note" },
      `This is a short question (${plural(explain.query_tokens, "word", "words")}), so the bar was raised: ` +
      `from ${fmt(th.base_low)} to ${fmt(th.low)} for a partial answer and from ${fmt(th.base_high)} to ${fmt(th.high)} for a full one.`));
  }

  const gates = explain.gates;
  const need = (n, what) => (n > 0 ? `needs at least ${plural(n, what, what + "s")}` : "no minimum is set");
  const gateRows = [
    ["min_similarity_for_hybrid", "A passage is close enough to the question",
      `needs ${fmt(gates.min_similarity_for_hybrid)}, best ${fmt(explain.max_eligible_similarity)}`],
    ["min_chunks_for_hybrid", "There are enough passages to use",
      `${need(gates.min_chunks_for_hybrid, "passage")}; found ${gates.usable_chunks}`],
    ["min_total_context_chars", "There is enough text to answer from",
      `${need(gates.min_total_context_chars, "character")}; found ${gates.usable_context_chars}`],
  ];
  if (gates.min_best_similarity > 0) {
    gateRows.push(["min_best_similarity", "The best passage is about the question",
      `needs ${fmt(gates.min_best_similarity)}, best ${fmt(explain.max_similarity)}`]);
  }
  const list = el("ul", { className: "gates", "aria-label": "Checks for a partial answer" });
  // on a refusal a met check is not good news: it is shown as met, never green, and the note says
  // that something else refused the answer
  const refused = explain.mode === "fallback";
  for (const [key, what, detail] of gateRows) {
    const passed = gates.passed ? gates.passed[key] : undefined;
    const state = passed === true ? (refused ? "met" : "passed") : passed === false ? "failed" : "not checked";
    const text = { passed: "✓ passed", met: "– met", failed: "✗ failed", "not checked": "– not checked" }[state];
    list.append(el("li", { className: `gate gate-${state.replace(" ", "-")}`, "data-gate": key },
      el("span", { className: "gate-state", text }), ` ${what} (${detail}).`));
  }
  const allMet = gateRows.every(([key]) => gates.passed && gates.passed[key] === true);
  container.append(el("h3", { text: "Checks for a partial answer" }),
    el("p", { className: "note", text: refused && allMet
      ? "These were met, but the question was not answered: the reasons below say what refused it."
      : "When the score lies between the two bars, these decide between a partial answer and none." }),
    list);

  const judged = explain.answerability;
  if (judged) {
    const none = judged.best_sentence === null || judged.best_sentence === undefined;
    const bar = judged.relevance_bar.toFixed(2);
    const lines = el("ul", { className: "answerability" },
      el("li", { text: none ? `No sentence could be weighed (a sentence counts as an answer from ${bar}).`
        : `The best sentence has a ${judged.best_sentence.toFixed(2)} chance of answering the question (it counts as an answer from ${bar}).` }));
    if (judged.verdict) {
      lines.prepend(el("li", { className: "verdict", text: judged.verdict.charAt(0).toUpperCase() + judged.verdict.slice(1) + "." }));
    }
    if (judged.unknown_words && judged.unknown_words.length) {
      lines.append(el("li", { text: `Words the knowledge base never uses: ${judged.unknown_words.join(", ")}` }));
    }
    if (judged.judged_by) {
      lines.append(el("li", { className: "note", text: judged.judged_by === "reader"
        ? "Judged by the answer reader, a model trained to tell an answer from a look-alike."
        : "Judged by the answerability features (word and meaning overlap)." }));
    }
    container.append(el("h3", { text: "Does any sentence answer it?" }), lines);
  }

  if (explain.reasons && explain.reasons.length) {
    const reasons = el("ul", { className: "reasons" });
    for (const reason of explain.reasons) reasons.append(el("li", { text: reason }));
    container.append(el("h3", { text: "Reasons" }), reasons);
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
  container.append(el("h3", { text: "Where the answer came from" }), facts);
}
