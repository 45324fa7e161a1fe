// DOM building for the admin console (pure: data in, nodes out). Text goes in through
// textContent only, so a document name or a golden question holding markup shows as text.
import { el } from "./render.js";

// metric -> [words for people, higher is better]
const METRIC_TEXT = {
  hit_at_k: ["Questions whose document was found (hit@k)", true],
  recall_at_k: ["Expected documents found (recall@k)", true],
  mrr: ["Rank of the first right document (MRR)", true],
  ndcg_at_10: ["Ranking quality (nDCG@10)", true],
  mode_accuracy: ["Right mode: answered or declined as expected", true],
  must_contain_pass_rate: ["Answers holding the required words", true],
  abstention_accuracy: ["Answered exactly when it should", true],
  coverage: ["Questions answered from the knowledge base", true],
  accuracy_among_answered: ["Answers given that were expected", true],
  unanswerable_as_rag: ["Off-topic questions answered anyway", false],
};
const GATE_METRICS = ["recall_at_k", "ndcg_at_10", "mode_accuracy", "unanswerable_as_rag"];

export function metricName(metric) {
  return (METRIC_TEXT[metric] || [metric])[0];
}

export function fmt(value) {
  return typeof value === "number" ? value.toFixed(2) : "n/a";
}

export function when(iso) {
  if (!iso) return "—";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  return `${d.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

const ROLE_TEXT = { live: "Live", rollback: "Rollback", candidate: "Candidate", older: "Older" };

export function roleBadge(role) {
  return el("span", { className: `role role-${role}`, "data-role": role }, ROLE_TEXT[role] || role);
}

const CHANGE_TEXT = { win: "Better", loss: "Worse", same: "Same", new: "New question" };

export function changeBadge(change) {
  return el("span", { className: `change change-${change}`, "data-change": change }, CHANGE_TEXT[change] || change);
}

// A table that stays readable at 375 px: each cell carries its column's name (data-label),
// which the narrow layout shows in front of the value.
export function table(caption, columns, rows, className = "") {
  const head = el("tr", {}, ...columns.map((c) => el("th", { scope: "col", text: c })));
  const body = el("tbody");
  for (const row of rows) {
    const tr = el("tr", row.attrs || {});
    row.cells.forEach((cell, i) => {
      const td = el(i === 0 && row.header ? "th" : "td", { "data-label": columns[i], ...(i === 0 && row.header ? { scope: "row" } : {}) });
      if (cell instanceof Node) td.append(cell); else td.textContent = cell === null || cell === undefined ? "—" : String(cell);
      tr.append(td);
    });
    body.append(tr);
  }
  return el("div", { className: "table-wrap" },
    el("table", { className: `data ${className}`.trim() }, el("caption", { text: caption }), el("thead", {}, head), body));
}

// One gate in words: what was measured, the bar, passed or not.
export function gateLine(gate) {
  const passed = Boolean(gate.passed);
  const name = metricName(gate.metric).replace(/ \(.*\)$/, "");
  let what;
  if (gate.kind === "regression" || gate.name === "max_regression") {
    const base = typeof gate.baseline === "number" ? ` (live ${fmt(gate.baseline)}, this version ${fmt(gate.value)})` : ` (this version ${fmt(gate.value)})`;
    what = `${name}: may drop at most ${fmt(gate.threshold)} against live${base}`;
  } else if (gate.kind === "max" || String(gate.name).startsWith("max_")) {
    what = `${name}: ${fmt(gate.value)}, at most ${fmt(gate.threshold)}`;
  } else {
    what = `${name}: ${fmt(gate.value)}, at least ${fmt(gate.threshold)}`;
  }
  return el("li", { className: `gate ${passed ? "gate-passed" : "gate-failed"}`, "data-gate": gate.name, "data-metric": gate.metric || "" },
    el("span", { className: "gate-state", text: passed ? "✓ passed" : "✗ failed" }), ` ${what}`);
}

export function gateList(gates) {
  const list = el("ul", { className: "gates admin-gates", "aria-label": "Gates" });
  for (const gate of gates || []) list.append(gateLine(gate));
  return list;
}

export function verdict(gatesPassed, candidate = true) {
  if (gatesPassed === null || gatesPassed === undefined) {
    return el("p", { className: "verdict" }, el("strong", { text: "No gate was checked" }), " in this evaluation.");
  }
  return el("p", { className: `verdict ${gatesPassed ? "verdict-passed" : "verdict-failed"}` },
    el("strong", { text: gatesPassed ? "✓ Every gate passed" : "✗ A gate failed" }),
    !candidate ? "." : gatesPassed ? ": this version may be promoted." : ": promoting it is refused until the gates pass.");
}

function resultText(result, expectedMode) {
  if (!result) return "—";
  const right = typeof result.mode_correct === "boolean" ? result.mode_correct : result.mode === expectedMode;
  const bits = [`${result.mode}${right ? " ✓" : " ✗"}`];
  if (typeof result.rank === "number" && result.rank > 0) bits.push(`right document at rank ${result.rank}`);
  else if (result.hit === false) bits.push("right document not found");
  return bits.join(", ");
}

const CHANGE_ORDER = { loss: 0, win: 1, new: 2, same: 3 };

// The evaluation of one version: verdict, gates, figures against live, per-question changes.
export function renderEvaluation(container, ev, { candidate = true } = {}) {
  container.replaceChildren();
  const golden = ev.golden || {};
  const against = ev.baseline_version ? `compared with ${ev.baseline_version}, the version live when it was evaluated ("Live" below)`
    : "no live version to compare with";
  const set = golden.generated ? "generated starter set" : "golden set";
  const intro = el("p", {},
    `${typeof golden.queries === "number" ? `${golden.queries} questions of the ${set}` : `The ${set}`}, ${against}.`);
  if (golden.generated) {
    const link = el("a", { href: "#golden-title", className: "generated-note" },
      "Generated from the documents: replace it with real questions");
    link.addEventListener("click", (event) => { // in-page: the address keeps #admin
      event.preventDefault();
      const heading = document.getElementById("golden-title");
      if (heading) { heading.setAttribute("tabindex", "-1"); heading.focus(); }
    });
    intro.append(" ", link, ".");
  }
  container.append(intro);
  container.append(verdict(ev.gates_passed, candidate), gateList(ev.gates));

  const metrics = ev.metrics || {};
  const base = ev.baseline_metrics || {};
  const names = Object.keys(METRIC_TEXT).filter((m) => m in metrics && (metrics[m] !== null || base[m] !== null && base[m] !== undefined));
  names.sort((a, b) => Number(!GATE_METRICS.includes(a)) - Number(!GATE_METRICS.includes(b)));
  const rows = names.map((m) => {
    const a = metrics[m];
    const b = base[m];
    let change = "—";
    if (typeof a === "number" && typeof b === "number") {
      const d = a - b;
      const better = METRIC_TEXT[m][1] ? d > 0.0005 : d < -0.0005;
      const worse = METRIC_TEXT[m][1] ? d < -0.0005 : d > 0.0005;
      change = Math.abs(d) < 0.0005 ? "same" : `${d > 0 ? "+" : ""}${d.toFixed(2)} (${better ? "better" : worse ? "worse" : "same"})`;
    }
    const cells = ev.baseline_version ? [metricName(m), fmt(b), fmt(a), change] : [metricName(m), fmt(a)];
    return { header: true, attrs: { "data-metric": m }, cells };
  });
  container.append(table("Figures", ev.baseline_version ? ["Figure", "Live", "This version", "Change"] : ["Figure", "This version"],
    rows, "metrics"));

  const summary = ev.summary || {};
  if (ev.hidden) {
    container.append(el("p", { className: "summary" }, el("strong", { text: `${ev.hidden} questions` }),
      ev.baseline_version ? ` against ${ev.baseline_version}: ${summary.wins ?? 0} better, ${summary.losses ?? 0} worse, ${summary.same ?? 0} the same; the questions are shown to admins only.`
        : "; the questions are shown to admins only."));
    return;
  }
  const queries = [...(ev.queries || [])].sort((a, b) => (CHANGE_ORDER[a.change] ?? 9) - (CHANGE_ORDER[b.change] ?? 9));
  if (!ev.baseline_version) {
    // nothing live to compare with (a first version): each question's result only
    const right = queries.filter((q) => q.candidate && q.candidate.mode_correct && q.candidate.hit !== false).length;
    container.append(el("p", { className: "summary" }, el("strong", { text: `${right} of ${queries.length} questions right` }),
      " (the expected mode, and the expected document found); nothing was live to compare with."));
    const rows = queries.map((q) => ({ attrs: { "data-query": q.id, "data-change": q.change },
      cells: [q.query, q.expected_mode, resultText(q.candidate, q.expected_mode)] }));
    container.append(table("Question by question", ["Question", "Expected", "Result"], rows, "queries"));
    return;
  }
  container.append(el("p", { className: "summary", "data-wins": summary.wins ?? 0, "data-losses": summary.losses ?? 0 },
    el("strong", { text: `${summary.wins ?? 0} better, ${summary.losses ?? 0} worse, ${summary.same ?? 0} the same` +
      (summary.new ? `, ${summary.new} new` : "") }),
    ` against ${ev.baseline_version}, question by question (worse first).`));
  const qrows = queries.map((q) => ({
    attrs: { "data-query": q.id, "data-change": q.change },
    cells: [q.query, q.expected_mode, q.live ? resultText(q.live, q.expected_mode) : "—",
      resultText(q.candidate, q.expected_mode), changeBadge(q.change)],
  }));
  container.append(table("Question by question", ["Question", "Expected", "Live", "This version", "Change"], qrows, "queries"));
}
