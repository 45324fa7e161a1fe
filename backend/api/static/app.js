// The chat page: ask, stream the answer, show why, take feedback. Plain ES modules, no build step.
import { ApiError, getJson, sendJson, setApiKey, streamChat } from "./api.js";
import { el, modeBadge, renderAnswer, renderSources, renderWhy } from "./render.js";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const state = { conversationId: newConversationId(), busy: false, ready: false, pending: null,
  wantedDomain: params.get("domain") };

function newConversationId() {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return "c-" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function announce(text) {
  $("status").textContent = text;
}

function showKeyPanel(message) {
  $("key-panel").hidden = false;
  $("key-error").textContent = message || "";
  $("api-key").focus();
}

async function loadDomains() {
  let body;
  try {
    body = await getJson("/domains");
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) {
      showKeyPanel(sessionStorage.getItem("rag-api-key") ? "That key was not accepted; enter another." : "");
      return false;
    }
    throw err;
  }
  const select = $("domain");
  select.replaceChildren();
  for (const domain of body.domains) {
    const label = domain.key === null ? `Default (${domain.alias})` : `${domain.key} (${domain.alias})`;
    select.append(el("option", { value: domain.key ?? "" }, label));
  }
  if (state.wantedDomain !== null && [...select.options].some((o) => o.value === state.wantedDomain)) {
    select.value = state.wantedDomain;
  }
  state.wantedDomain = null;
  $("key-panel").hidden = true;
  state.ready = true;
  return true;
}

function feedbackForm(interactionId) {
  const wrap = el("div", { className: "feedback" });
  const legendId = `fb-${interactionId}`;
  const group = el("div", { role: "group", "aria-labelledby": legendId, className: "row" },
    el("span", { id: legendId, text: "Was this answer helpful?" }));
  const up = el("button", { type: "button", "aria-pressed": "false", "data-rating": "up" }, "Yes, helpful");
  const down = el("button", { type: "button", "aria-pressed": "false", "data-rating": "down" }, "No, not helpful");
  group.append(up, down);
  const form = el("form", { className: "feedback-form", hidden: true });
  const commentId = `comment-${interactionId}`;
  const expectedId = `expected-${interactionId}`;
  form.append(
    el("label", { for: commentId, text: "Comment (optional)" }),
    el("textarea", { id: commentId, name: "comment", rows: "2", maxlength: "2000" }),
    el("label", { for: expectedId, text: "Expected answer (optional)" }),
    el("textarea", { id: expectedId, name: "expected_answer", rows: "2", maxlength: "4000" }),
    el("button", { type: "submit" }, "Send feedback"));
  const result = el("p", { className: "feedback-result", role: "status" });
  let rating = null;
  for (const button of [up, down]) {
    button.addEventListener("click", () => {
      rating = button.dataset.rating;
      up.setAttribute("aria-pressed", String(rating === "up"));
      down.setAttribute("aria-pressed", String(rating === "down"));
      form.hidden = false;
      form.querySelector("textarea").focus();
    });
  }
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    try {
      const saved = await sendJson("POST", "/feedback", {
        interaction_id: interactionId, rating,
        comment: String(data.get("comment") || "") || null,
        expected_answer: String(data.get("expected_answer") || "") || null,
      });
      result.textContent = `Thank you: feedback #${saved.feedback_id} recorded (${saved.rating}).`;
      form.hidden = true;
    } catch (err) {
      result.textContent = `Feedback not recorded: ${err.message}`;
    }
  });
  wrap.append(group, form, result);
  return wrap;
}

function newTurn(question) {
  const answerText = el("div", { className: "answer-text", "aria-live": "off" });
  const badge = el("span", { className: "badge-slot" });
  const figures = el("div", { className: "figures", hidden: true, "aria-label": "Figures" });
  const sources = el("div", { className: "sources" });
  const why = el("div", { className: "why-body" });
  const whyDetails = el("details", { className: "why", hidden: true },
    el("summary", { text: "Why this mode?" }), why);
  const sourcesDetails = el("details", { className: "sources-panel", hidden: true },
    el("summary", { text: "Sources" }), sources);
  const error = el("p", { className: "error", role: "alert" });
  const footer = el("div", { className: "turn-footer" });
  const article = el("article", { className: "answer", "aria-busy": "true" },
    el("div", { className: "answer-head" }, el("h3", { className: "visually-hidden", text: "Answer" }), badge),
    answerText, figures, sourcesDetails, whyDetails, error, footer);
  const li = el("li", { className: "turn" }, el("p", { className: "question" }, el("span", { className: "visually-hidden", text: "You asked: " }), question), article);
  $("conversation").append(li);
  return { li, article, answerText, badge, figures, sources, sourcesDetails, why, whyDetails, error, footer };
}

async function ask(question, domain) {
  if (state.busy || !question.trim()) return;
  state.busy = true;
  $("ask").disabled = true;
  const turn = newTurn(question);
  let markers = new Map();
  let text = "";
  const openSource = (marker) => {
    const details = markers.get(marker);
    if (!details) return;
    turn.sourcesDetails.open = true;
    details.open = true;
    details.querySelector("summary").focus();
  };
  const showMeta = (meta) => {
    turn.badge.replaceChildren(modeBadge(meta.mode));
    turn.li.dataset.mode = meta.mode;
    markers = renderSources(turn.sources, turn.figures, meta.sources);
    turn.sourcesDetails.hidden = meta.sources.length === 0;
    renderWhy(turn.why, meta.decision_explain, question);
    turn.whyDetails.hidden = false;
  };
  announce("Answering…");
  try {
    await streamChat({ question, conversation_id: state.conversationId }, domain, (name, data) => {
      if (name === "meta") showMeta(data);
      else if (name === "delta") {
        text += data.text;
        turn.li.dataset.deltas = String(Number(turn.li.dataset.deltas || 0) + 1);
        renderAnswer(turn.answerText, text, openSource);
      }
      else if (name === "done") {
        // done carries the final citations: only the passages the answer cites, numbered in answer order
        // (meta's were sent before an LLM had written its answer)
        if (Array.isArray(data.sources)) {
          markers = renderSources(turn.sources, turn.figures, data.sources);
          turn.sourcesDetails.hidden = data.sources.length === 0;
        }
        renderAnswer(turn.answerText, data.answer, openSource);
        turn.badge.replaceChildren(modeBadge(data.mode));
        turn.li.dataset.mode = data.mode;
        renderWhy(turn.why, data.decision_explain, question);
        turn.footer.append(feedbackForm(data.interaction_id));
        turn.li.dataset.done = "true";
        announce(`Answer ready, mode ${data.mode}.`);
      } else if (name === "error") {
        turn.error.textContent = `The answer failed: ${data.error.message}`;
        turn.li.dataset.done = "error";
      }
    });
  } catch (err) {
    turn.error.textContent = err.message;
    turn.li.dataset.done = "error";
    if (err instanceof ApiError && err.status === 401) showKeyPanel("The server needs a valid API key.");
  } finally {
    turn.article.setAttribute("aria-busy", "false");
    state.busy = false;
    $("ask").disabled = false;
  }
}

function submitQuestion() {
  const box = $("question");
  const question = box.value;
  if (!question.trim()) return;
  if (!state.ready) { state.pending = question; return; }
  box.value = "";
  ask(question, $("domain").value);
  box.focus();
}

function wire() {
  $("ask-form").addEventListener("submit", (event) => { event.preventDefault(); submitQuestion(); });
  $("question").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) { event.preventDefault(); submitQuestion(); }
  });
  $("key-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    setApiKey($("api-key").value.trim());
    $("api-key").value = "";
    if (await loadDomains()) {
      announce("Key accepted.");
      if (state.pending) { $("question").value = state.pending; state.pending = null; submitQuestion(); }
      else $("question").focus();
    }
  });
  $("new-conversation").addEventListener("click", () => {
    state.conversationId = newConversationId();
    $("conversation").replaceChildren();
    announce("New conversation started.");
    $("question").focus();
  });
  $("delete-conversation").addEventListener("click", async () => {
    try {
      const gone = await sendJson("DELETE", `/conversations/${encodeURIComponent(state.conversationId)}`);
      $("conversation").replaceChildren();
      state.conversationId = newConversationId();
      announce(`History deleted (${gone.deleted_turns} turns).`);
    } catch (err) {
      announce(`History not deleted: ${err.message}`);
    }
  });
}

async function start() {
  wire();
  const q = params.get("q");
  const ok = await loadDomains();
  if (q) {
    $("question").value = q;
    if (ok) submitQuestion(); else state.pending = q;
  } else if (ok) {
    $("question").focus();
  }
}

start().catch((err) => announce(`The page failed to start: ${err.message}`));
