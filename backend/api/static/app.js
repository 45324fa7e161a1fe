// The chat page: ask, stream the answer, show why, take feedback. Plain ES modules, no build step.
import { ApiError, getJson, sendJson, setApiKey, streamChat } from "./api.js";
import { el, modeBadge, renderAnswer, renderSources, renderWhy, revealSource } from "./render.js";
import { initAdmin } from "./admin.js";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
// the tab's conversation survives a reload: its id (and the answers shown, which the server
// does not keep) live in sessionStorage; the questions come back from GET /conversations/<id>
const CONVERSATION_KEY = "rag-conversation-id";
const ANSWERS_KEY = "rag-answers";
const DOMAIN_KEY = "rag-domain";
const state = { conversationId: sessionStorage.getItem(CONVERSATION_KEY) || newConversationId(), busy: false,
  ready: false, pending: null, domains: [],
  wantedDomain: params.has("domain") ? params.get("domain") : sessionStorage.getItem(DOMAIN_KEY) };

function newConversationId() {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  const id = "c-" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  sessionStorage.setItem(CONVERSATION_KEY, id);
  return id;
}

function savedAnswers() {
  try {
    const all = JSON.parse(sessionStorage.getItem(ANSWERS_KEY) || "{}");
    return all && all.conversation === state.conversationId ? all : { conversation: state.conversationId, turns: {} };
  } catch {
    return { conversation: state.conversationId, turns: {} };
  }
}

function saveAnswer(interactionId, record) {
  const all = savedAnswers();
  all.turns[interactionId] = { ...(all.turns[interactionId] || {}), ...record };
  const ids = Object.keys(all.turns);
  for (const old of ids.slice(0, Math.max(0, ids.length - 50))) delete all.turns[old];
  try { sessionStorage.setItem(ANSWERS_KEY, JSON.stringify(all)); } catch { /* full: the server still has the questions */ }
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
  state.domains = body.domains;
  for (const domain of body.domains) {
    select.append(el("option", { value: domain.key ?? "" },
      domain.not_served ? `${domain.title} (not served yet)` : domain.title));
  }
  if (state.wantedDomain !== null && [...select.options].some((o) => o.value === state.wantedDomain)) {
    select.value = state.wantedDomain;
  }
  state.wantedDomain = null;
  $("key-panel").hidden = true;
  state.ready = true;
  showExamples();
  return true;
}

// example questions of the chosen knowledge base, while the conversation is empty
function showExamples() {
  const box = $("examples");
  const list = $("example-list");
  const domain = state.domains.find((d) => (d.key ?? "") === $("domain").value);
  const questions = (domain && !domain.not_served && domain.example_questions) || [];
  // a knowledge base that serves nothing says why (and what serves it) instead of offering questions
  const notServed = $("not-served");
  const reason = (domain && domain.not_served) || "";
  notServed.hidden = !reason;
  // "...; serve it anyway: rag index promote ..." -> the sentence, then the command to copy
  const command = reason.match(/^(.*?:\s*)(rag [a-z].*)$/);
  const sentence = command ? command[1] : reason;
  $("not-served-reason").replaceChildren(sentence.charAt(0).toUpperCase() + sentence.slice(1),
    ...(command ? [el("code", { text: command[2] })] : []));
  list.replaceChildren();
  for (const question of questions) {
    const button = el("button", { type: "button", className: "example" }, question);
    button.addEventListener("click", () => { $("question").value = question; submitQuestion(); });
    list.append(el("li", {}, button));
  }
  box.hidden = questions.length === 0 || $("conversation").children.length > 0;
}

const RATING_TEXT = { up: "helpful", down: "not helpful" };

// One click records the vote (POST /feedback); another click changes it, and the server keeps
// only the newest verdict per answer. A comment and an expected answer can follow.
function feedbackForm(interactionId, savedRating) {
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
    el("button", { type: "submit" }, "Send comment"));
  const result = el("p", { className: "feedback-result", role: "status" });
  let rating = savedRating || null;
  const press = () => {
    up.setAttribute("aria-pressed", String(rating === "up"));
    down.setAttribute("aria-pressed", String(rating === "down"));
  };
  press();
  const send = async (body, what) => {
    try {
      const saved = await sendJson("POST", "/feedback", { interaction_id: interactionId, rating, ...body });
      saveAnswer(interactionId, { rating: saved.rating });
      result.textContent = `Thank you, ${what} (${RATING_TEXT[saved.rating]}).`;
      return true;
    } catch (err) {
      result.textContent = `Feedback not recorded: ${err.message}`;
      return false;
    }
  };
  for (const button of [up, down]) {
    button.addEventListener("click", async () => {
      rating = button.dataset.rating;
      press();
      form.hidden = false;
      await send({}, "your vote was recorded");
    });
  }
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const ok = await send({
      comment: String(data.get("comment") || "") || null,
      expected_answer: String(data.get("expected_answer") || "") || null,
    }, "your vote and comment were recorded");
    if (ok) form.hidden = true;
  });
  wrap.append(group, result, form);
  return wrap;
}

function newTurn(question) {
  const answerText = el("div", { className: "answer-text", "aria-live": "off" });
  const badge = el("span", { className: "badge-slot" });
  const figures = el("div", { className: "figures", hidden: true, role: "group", "aria-label": "Figures" });
  const sources = el("div", { className: "sources" });
  const why = el("div", { className: "why-body" });
  const whyDetails = el("details", { className: "why", hidden: true },
    el("summary", { text: "Why this mode?" }), why);
  const sourcesDetails = el("details", { className: "sources-panel", hidden: true },
    el("summary", { text: "Sources" }), sources);
  const error = el("p", { className: "error", role: "alert" });
  const footer = el("div", { className: "turn-footer" });
  const article = el("article", { className: "answer", "aria-busy": "true" },
    el("div", { className: "answer-head" }, el("h2", { className: "visually-hidden", text: "Answer" }), badge),
    answerText, figures, sourcesDetails, whyDetails, error, footer);
  const li = el("li", { className: "turn" }, el("p", { className: "question" }, el("span", { className: "visually-hidden", text: "You asked: " }), question), article);
  $("conversation").append(li);
  $("examples").hidden = true;
  return { li, article, answerText, badge, figures, sources, sourcesDetails, why, whyDetails, error, footer, markers: new Map() };
}

function openSourceOf(turn) {
  return (marker) => {
    const details = turn.markers.get(marker);
    if (details) revealSource(details);
  };
}

// the finished turn: final answer, sources, badge, why, feedback (also what a reload restores)
function showDone(turn, data, question, rating) {
  if (Array.isArray(data.sources)) {
    turn.markers = renderSources(turn.sources, turn.figures, data.sources);
    turn.sourcesDetails.hidden = data.sources.length === 0;
  }
  renderAnswer(turn.answerText, data.answer, openSourceOf(turn));
  turn.badge.replaceChildren(modeBadge(data.mode));
  turn.li.dataset.mode = data.mode;
  renderWhy(turn.why, data.decision_explain, question);
  turn.whyDetails.hidden = false;
  turn.footer.replaceChildren(feedbackForm(data.interaction_id, rating));
  turn.li.dataset.done = "true";
  turn.article.setAttribute("aria-busy", "false");
}

// the newest turn's question at the top of the view (the question box stays on screen: it is sticky)
function scrollToTurn(turn) {
  turn.li.scrollIntoView({ block: "start" });
}

async function ask(question, domain) {
  if (state.busy || !question.trim()) return;
  state.busy = true;
  $("ask").disabled = true;
  const turn = newTurn(question);
  scrollToTurn(turn);
  let text = "";
  const showMeta = (meta) => {
    turn.badge.replaceChildren(modeBadge(meta.mode));
    turn.li.dataset.mode = meta.mode;
    turn.markers = renderSources(turn.sources, turn.figures, meta.sources);
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
        renderAnswer(turn.answerText, text, openSourceOf(turn));
      }
      else if (name === "done") {
        // done carries the final citations: only the passages the answer cites, numbered in answer order
        // (meta's were sent before an LLM had written its answer)
        showDone(turn, data, question, null);
        saveAnswer(data.interaction_id, { question, answer: data.answer, mode: data.mode, sources: data.sources,
          decision_explain: data.decision_explain, interaction_id: data.interaction_id });
        if (turn.li.getBoundingClientRect().top < 0 || turn.li.getBoundingClientRect().top > innerHeight / 2) scrollToTurn(turn);
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

// after a reload: the conversation's questions from the server, each with the answer this tab showed
async function restoreConversation() {
  let body;
  try {
    body = await getJson(`/conversations/${encodeURIComponent(state.conversationId)}`);
  } catch {
    return;
  }
  if (!body.turns.length) return;
  const saved = savedAnswers().turns;
  let last = null;
  for (const stored of body.turns) {
    const turn = newTurn(stored.question);
    const record = saved[stored.interaction_id];
    if (record) {
      showDone(turn, record, record.question || stored.question, record.rating);
    } else {
      turn.badge.replaceChildren(modeBadge(stored.mode));
      turn.li.dataset.mode = stored.mode;
      turn.answerText.append(el("span", { className: "note", text: "This answer was given in another tab or session and is not shown again; ask the question again to see it." }));
      turn.footer.replaceChildren(feedbackForm(stored.interaction_id, null));
      turn.li.dataset.done = "true";
      turn.article.setAttribute("aria-busy", "false");
    }
    last = turn;
  }
  if (last) scrollToTurn(last);
  announce(`Conversation restored (${body.turns.length} questions).`);
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

function clearConversation(message) {
  state.conversationId = newConversationId();
  sessionStorage.removeItem(ANSWERS_KEY);
  $("conversation").replaceChildren();
  showExamples();
  announce(message);
}

function wire() {
  $("ask-form").addEventListener("submit", (event) => { event.preventDefault(); submitQuestion(); });
  $("question").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) { event.preventDefault(); submitQuestion(); }
  });
  $("domain").addEventListener("change", () => {
    sessionStorage.setItem(DOMAIN_KEY, $("domain").value);
    showExamples();
  });
  $("key-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    setApiKey($("api-key").value.trim());
    $("api-key").value = "";
    if (await loadDomains()) {
      announce("Key accepted.");
      if (state.pending) { $("question").value = state.pending; state.pending = null; submitQuestion(); }
      else { await restoreConversation(); showExamples(); $("question").focus(); }
      await initAdmin();
    }
  });
  // the admin console says when knowledge bases may have changed: the picker keeps its choice
  window.addEventListener("rag:refresh-domains", () => {
    if (!state.ready) return;
    state.wantedDomain = $("domain").value;
    loadDomains().catch((err) => announce(`The knowledge bases could not be loaded: ${err.message}`));
  });
  $("new-conversation").addEventListener("click", () => {
    clearConversation("New conversation started.");
    $("question").focus();
  });
  const dialog = $("confirm-delete");
  $("delete-conversation").addEventListener("click", () => dialog.showModal());
  $("confirm-delete-cancel").addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => $("delete-conversation").focus());
  $("confirm-delete-ok").addEventListener("click", async () => {
    dialog.close();
    try {
      const gone = await sendJson("DELETE", `/conversations/${encodeURIComponent(state.conversationId)}`);
      clearConversation(`History deleted (${gone.deleted_turns} questions).`);
    } catch (err) {
      announce(`History not deleted: ${err.message}`);
    }
  });
}

async function start() {
  wire();
  const q = params.get("q");
  if (q) {
    // a deep link asks once: without ?q= in the address a reload restores the conversation instead
    params.delete("q");
    const rest = params.toString();
    history.replaceState(null, "", `${location.pathname}${rest ? `?${rest}` : ""}${location.hash}`);
  }
  const ok = await loadDomains();
  if (ok) await restoreConversation();
  if (q) {
    $("question").value = q;
    if (ok) submitQuestion(); else state.pending = q;
  } else if (ok) {
    showExamples();
    $("question").focus();
  }
  // the "Knowledge bases" view, for callers GET /admin/me lets see it
  if (ok) await initAdmin();
}

start().catch((err) => announce(`The page failed to start: ${err.message}`));
