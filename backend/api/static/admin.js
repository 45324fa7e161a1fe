// The admin console ("Knowledge bases" view): each knowledge base's documents, versions,
// evaluations, golden set and feedback; for admins also upload, promote and roll back.
// Shown only when GET /admin/me says can_view; the server authorises every call again.
import { ApiError, getJson, headers, postForm, sendJson } from "./api.js";
import { el } from "./render.js";
import { fmt, renderEvaluation, roleBadge, table, verdict, gateList, when } from "./admin-render.js";

const $ = (id) => document.getElementById(id);
const KB_KEY = "rag-admin-kb";
// what the page says before the server has said more (the server checks again, per file)
const DEFAULT_LIMITS = { max_upload_bytes: 20_000_000, max_files_per_upload: 20,
  suffixes: [".md", ".markdown", ".txt", ".html", ".htm", ".docx", ".pdf", ".doc", ".docm", ".dot", ".dotm", ".dotx"] };
const STAGE_TEXT = { queued: "Waiting to start", starting: "Starting", ingest: "Reading, cleaning and indexing the files",
  evaluate: "Evaluating the candidate on the golden set", sync: "Syncing from the source", done: "Done" };

const admin = { me: null, kbs: [], key: sessionStorage.getItem(KB_KEY), evaluated: null, wired: false };

function announce(text) {
  $("status").textContent = text;
}

// the name the server records a change under: the principal, or "local" (no access control, this computer)
function who() {
  return `“${admin.me && admin.me.principal ? admin.me.principal : "local"}”`;
}

function limits() {
  const me = admin.me || {};
  return { ...DEFAULT_LIMITS, ...(me.limits || {}) }; // a server that states its limits is believed
}

function sizeText(bytes) {
  if (bytes < 1000) return `${bytes} bytes`;
  if (bytes < 1_000_000) return `${Math.round(bytes / 1000)} kB`;
  return `${(bytes / 1_000_000).toFixed(1).replace(/\.0$/, "")} MB`;
}

function errorText(err) {
  return err instanceof ApiError ? `${err.message} (HTTP ${err.status})` : String(err.message || err);
}

// GET /admin/me; true when this caller may see the console (the Views nav appears)
export async function initAdmin() {
  let me;
  try {
    me = await getJson("/admin/me");
  } catch {
    return false; // no console on this server (disabled), or not for this caller
  }
  admin.me = me;
  $("admin-sign-in").textContent = me.sign_in || ""; // on the server's machine, before the admin link is opened
  $("admin-sign-in").hidden = !me.sign_in;
  $("views").hidden = !me.can_view; // another key may see less than the one before
  if (!me.can_view) return false;
  if (!admin.wired) window.addEventListener("hashchange", () => showView(true));
  admin.wired = true;
  if (location.hash === "#admin") await showView(true);
  return true;
}

async function showView(focus) {
  if (!["#admin", "#chat", ""].includes(location.hash)) return; // an in-page link, not another view
  const wantAdmin = location.hash === "#admin" && admin.me && admin.me.can_view;
  $("chat-view").hidden = wantAdmin;
  $("chat-controls").hidden = wantAdmin;
  $("admin-view").hidden = !wantAdmin;
  document.body.classList.toggle("admin-mode", Boolean(wantAdmin));
  $("view-chat").toggleAttribute("aria-current", false);
  $("view-admin").toggleAttribute("aria-current", false);
  (wantAdmin ? $("view-admin") : $("view-chat")).setAttribute("aria-current", "page");
  document.title = wantAdmin ? "Knowledge bases — admin console" : "Knowledge base chat";
  const skip = document.querySelector(".skip-link");
  if (skip) { // the skip link leads to the view's main content
    skip.setAttribute("href", wantAdmin ? "#admin-title" : "#question");
    skip.textContent = wantAdmin ? "Skip to the knowledge bases" : "Skip to the question";
  }
  if (wantAdmin) {
    // the console opens on the knowledge base picked in the chat ("" is the default one)
    const picked = $("domain") ? $("domain").value : null;
    if (picked !== null) admin.key = picked === "" ? "default" : picked;
    if (focus) $("admin-title").focus();
    await loadKnowledgeBases(true); // fresh each time: a knowledge base or version may have come meanwhile
  } else {
    // back in the chat: its picker learns knowledge bases created meanwhile (rag kb create)
    window.dispatchEvent(new Event("rag:refresh-domains"));
    if (focus) $("question").focus();
  }
}

async function loadKnowledgeBases(keep = true) {
  $("admin-who").textContent = admin.me.admin
    ? `You are an admin: you can upload documents, promote and roll back. Every change is recorded under your name, ${who()}.`
    : "You can look, not change: uploading, promoting and rolling back need the admin role.";
  let body;
  try {
    body = await getJson("/admin/knowledge-bases");
  } catch (err) {
    $("admin-error").textContent = `The knowledge bases could not be loaded: ${errorText(err)}`;
    return;
  }
  $("admin-error").textContent = "";
  admin.kbs = body.knowledge_bases;
  if (!admin.kbs.some((kb) => kb.key === admin.key)) admin.key = admin.kbs.length ? admin.kbs[0].key : null;
  renderKbList();
  if (admin.key !== null) await openKb(admin.key, { focus: false, keepEvaluation: keep });
  await loadConnectors();
  await loadAudit();
}

// the connectors (GET /admin/connectors): their last sync; an admin may start one
function syncText(last) {
  if (!last) return "never synced";
  const c = last.counts || {};
  const counts = ["new", "changed", "deleted", "permission_only", "unchanged", "failed"]
    .map((k) => `${c[k] || 0} ${k.replace("_", "-")}`).join(", ");
  const gate = last.gate_passed === null || last.gate_passed === undefined ? "" : (last.gate_passed ? "; gate passed" : "; gate REFUSED");
  return `${last.status} ${when(last.recorded_at)}: ${counts}${last.version ? ` -> ${last.version}${gate}` : ""}`;
}

async function loadConnectors() {
  const box = $("connectors");
  let body;
  try {
    body = await getJson("/admin/connectors");
  } catch {
    box.hidden = true;
    return;
  }
  box.hidden = !body.connectors.length;
  const rows = body.connectors.map((c) => {
    const errors = c.last && c.last.errors && c.last.errors.length
      ? el("ul", {}, ...c.last.errors.map((e) => el("li", { text: `${e.item}: ${e.reason}` }))) : "";
    const notes = c.last && c.last.unknown_permissions ? `${c.last.unknown_permissions} item(s) with unknown permissions: admins only` : "";
    const cells = [c.name, c.kind, c.knowledge_base, el("span", {}, syncText(c.last), notes ? el("br") : "", notes, errors)];
    if (admin.me.admin) {
      const button = el("button", { type: "button", className: "sync", "data-connector": c.name }, `Sync ${c.name} now`);
      const stop = el("button", { type: "button", className: "cancel-sync", "data-connector": c.name, hidden: true },
        `Cancel the sync of ${c.name}`);
      button.addEventListener("click", () => syncConnector(c, button, stop));
      stop.addEventListener("click", () => cancelSync(c, stop));
      cells.push(el("span", {}, button, " ", stop));
    }
    return { attrs: { "data-connector": c.name }, cells };
  });
  const columns = ["Connector", "Kind", "Knowledge base", "Last sync", ...(admin.me.admin ? [""] : [])];
  $("connectors-table").replaceChildren(table("Connectors and their last sync", columns, rows, "connectors"));
}

async function syncConnector(c, button, stop) {
  const status = $("connectors-status");
  button.disabled = true;
  try {
    const started = await sendJson("POST", `/admin/connectors/${encodeURIComponent(c.name)}/sync`, {});
    stop.hidden = false;
    stop.disabled = false;
    const job = await followJob(started.job, (j) => { status.textContent = `${c.name}: ${stageLine(j)}`; });
    stop.hidden = true;
    status.textContent = job.state === "succeeded" ? `${c.name}: ${syncText({ ...job.result, recorded_at: job.updated_at })}`
      : job.state === "cancelled" ? `${c.name}: the sync was ${job.message}; the served version is unchanged`
        : `${c.name}: the sync failed: ${job.message}`;
    await loadKnowledgeBases(true);
  } catch (err) {
    status.textContent = `${c.name}: the sync could not start: ${errorText(err)}`;
  } finally {
    button.disabled = false;
    stop.hidden = true;
  }
}

// asks the running sync to stop after the group in flight (POST /admin/connectors/{name}/cancel)
async function cancelSync(c, stop) {
  stop.disabled = true;
  try {
    await sendJson("POST", `/admin/connectors/${encodeURIComponent(c.name)}/cancel`, {});
    announce(`Cancelling the sync of ${c.name}: it stops after the documents in flight are written`);
  } catch (err) {
    stop.disabled = false;
    announce(`The sync of ${c.name} could not be cancelled: ${errorText(err)}`);
  }
}

// the audit trail (admins only): the newest 50 lines, and the whole trail as a JSONL download
async function loadAudit() {
  const box = $("audit");
  box.hidden = !admin.me.admin;
  if (!admin.me.admin) return;
  if (!box.dataset.wired) {
    box.dataset.wired = "1";
    $("audit-export").addEventListener("click", exportAudit);
  }
  try {
    const body = await getJson("/admin/audit?limit=50");
    const rows = body.events.map((e) => ({ attrs: { "data-action": e.action, "data-outcome": e.outcome },
      cells: [when(e.at), e.principal || "—", e.action, e.knowledge_base, e.version, e.outcome, e.request_id] }));
    $("audit-table").replaceChildren(rows.length
      ? table("The newest lines of the audit trail", ["When", "Who", "What", "Knowledge base", "Version", "Outcome",
        "Request id"], rows, "audit")
      : el("p", { text: "Nothing recorded yet." }));
  } catch (err) {
    $("audit-table").replaceChildren(el("p", { className: "error", text: `Could not load: ${errorText(err)}` }));
  }
}

async function exportAudit() {
  const response = await fetch("/admin/audit/export", { headers: headers() }); // with the tab's key, if any
  if (!response.ok) {
    announce(`The audit trail could not be exported (HTTP ${response.status})`);
    return;
  }
  const link = el("a", { href: URL.createObjectURL(await response.blob()), download: "audit.jsonl" });
  document.body.append(link);
  link.click();
  link.remove();
  announce("The audit trail was downloaded as audit.jsonl");
}

function kbFacts(kb) {
  const bits = [`live: ${kb.live || "nothing yet"}`, `${kb.documents} documents`];
  if (kb.candidates && kb.candidates.length) bits.push(`${kb.candidates.length} candidate${kb.candidates.length === 1 ? "" : "s"}`);
  if (kb.golden) bits.push(kb.golden.generated ? "generated starter golden set" : `golden set of ${kb.golden.queries} questions`);
  return bits.join(" · ");
}

function renderKbList() {
  const list = $("kb-list");
  list.replaceChildren();
  for (const kb of admin.kbs) {
    const button = el("button", { type: "button", className: "kb-open", "data-kb": kb.key,
      "aria-pressed": String(kb.key === admin.key) }, kb.title);
    button.addEventListener("click", () => openKb(kb.key, { focus: true }));
    list.append(el("li", { className: "kb-card", "data-kb": kb.key }, button, el("p", { className: "kb-facts", text: kbFacts(kb) })));
  }
}

function section(id, title, ...children) {
  return el("section", { id, className: "admin-section", "aria-labelledby": `${id}-title` },
    el("h4", { id: `${id}-title`, text: title }), ...children);
}

// everything about one knowledge base; the sections fill in as their calls answer
async function openKb(key, { focus = false, keepEvaluation = false } = {}) {
  admin.key = key;
  sessionStorage.setItem(KB_KEY, key);
  for (const b of document.querySelectorAll(".kb-open")) b.setAttribute("aria-pressed", String(b.dataset.kb === key));
  const kb = admin.kbs.find((k) => k.key === key);
  const detail = $("kb-detail");
  const message = el("p", { id: "admin-message", className: "admin-message", role: "status", tabindex: "-1" });
  if (keepEvaluation && $("admin-message")) message.textContent = $("admin-message").textContent;
  const facts = el("dl", { className: "facts kb-summary" });
  const add = (term, value) => facts.append(el("dt", { text: term }), el("dd", { text: value }));
  add("Serves questions as", kb.alias);
  add("Live version", kb.live || "none yet");
  add("Rollback version", kb.rollback || "none");
  add("Candidates", kb.candidates && kb.candidates.length ? kb.candidates.join(", ") : "none");
  const actions = el("div", { className: "row kb-actions" });
  if (admin.me.admin) {
    const rollback = el("button", { type: "button", id: "rollback-button", disabled: !kb.rollback },
      kb.rollback ? `Roll back to ${kb.rollback}` : "Roll back (no earlier version)");
    rollback.addEventListener("click", () => confirmRollback(kb));
    actions.append(rollback);
  }
  // this rendering's sections: a slower answer for a knowledge base opened before fills its own
  // (detached) section, never this one
  const loading = () => el("p", { className: "note", text: "Loading…" });
  const sec = { versions: section("versions", "Versions", loading()), evaluation: section("evaluation", "Evaluation", loading()),
    documents: section("documents", "Documents", loading()), golden: section("golden", "Golden set", loading()),
    feedback: section("feedback", "Feedback received", loading()) };
  detail.replaceChildren(
    el("h3", { id: "kb-title", tabindex: "-1", text: kb.title }),
    facts, actions, message,
    !admin.me.admin ? "" : kb.managed ? uploadSection(kb)
        : section("upload", "Upload documents", el("p", { className: "note" }, ...withCode(
          "Uploads go into knowledge bases made from a folder (`rag kb create NAME --from DIR`) or on this page; " +
          `"${kb.title}" is defined in the configuration: add its files with \`rag ingest\`.`))),
    ...Object.values(sec),
  );
  detail.hidden = false;
  if (focus) $("kb-title").focus();
  const base = `/admin/knowledge-bases/${encodeURIComponent(key)}`;
  const versions = loadInto(sec.versions, `${base}/versions`, (body) => renderVersions(kb, body));
  await Promise.all([
    versions.then((body) => {
      const names = body ? body.versions.map((v) => v.name) : [];
      const wanted = keepEvaluation && names.includes(admin.evaluated) ? admin.evaluated
        : body ? (body.versions.find((v) => v.role === "candidate") || body.versions.find((v) => v.role === "live") || {}).name : null;
      return wanted ? showEvaluation(kb, wanted, false, sec.evaluation)
        : fillSection(sec.evaluation, el("p", { className: "note", text: "No version yet." }));
    }),
    loadInto(sec.documents, `${base}/documents`, renderDocuments),
    loadInto(sec.golden, `${base}/golden`, renderGolden),
    loadInto(sec.feedback, `${base}/feedback`, renderFeedback),
  ]);
  if (detail.contains(sec.versions)) detail.dataset.loaded = key; // still the page shown
}

function fillSection(target, ...nodes) {
  target.replaceChildren(target.querySelector("h4"), ...nodes);
}

async function loadInto(target, path, render) {
  try {
    const body = await getJson(path);
    fillSection(target, ...[render(body)].flat());
    return body;
  } catch (err) {
    fillSection(target, el("p", { className: "error", text: `Could not load: ${errorText(err)}` }));
    return null;
  }
}

function renderVersions(kb, body) {
  const latest = body.history && body.history.length ? body.history[0] : null; // newest first
  const rows = body.versions.map((v) => {
    const ev = v.evaluation;
    let gate = !ev ? "not evaluated" : ev.gates_passed === true ? "✓ passed" : ev.gates_passed === false ? "✗ failed"
      : "evaluated, no gate";
    // what serves now got there by force (past a failed gate), or past a floor with a warning: say so in its row
    if (latest && v.role === "live" && latest.version === v.name) {
      if (latest.forced) gate = el("span", { className: "forced", "data-forced": "true" }, `${gate} — promoted by force`);
      else if ((latest.reason || "").includes("warning:")) gate = `${gate} — with a warning (a floor missed)`;
    }
    const actions = el("div", { className: "row cell-actions" });
    const show = el("button", { type: "button", className: "show-evaluation", "data-version": v.name }, "Evaluation");
    show.setAttribute("aria-label", `Show the evaluation of ${v.name}`);
    show.addEventListener("click", () => showEvaluation(kb, v.name, true));
    actions.append(show);
    if (admin.me.admin && v.role === "candidate") {
      const promote = el("button", { type: "button", className: "primary promote", "data-version": v.name }, "Promote");
      promote.setAttribute("aria-label", `Promote ${v.name}`);
      promote.addEventListener("click", () => confirmPromote(kb, v.name));
      actions.append(promote);
    }
    return { header: true, attrs: { "data-version": v.name, "data-role": v.role },
      cells: [v.name, roleBadge(v.role), when(v.created_at), `${v.documents} documents, ${v.chunks} passages` + (v.parent ? `, built from ${v.parent}` : ""), gate, actions] };
  });
  const out = [table(`Versions of ${kb.title}`, ["Version", "Role", "Created", "Size", "Gates", "Actions"], rows, "versions")];
  if (body.history && body.history.length) {
    const list = el("ul", { className: "history" });
    for (const h of body.history.slice(0, 10)) { // newest first
      list.append(el("li", {}, el("strong", { text: h.version }), ` (was ${h.previous || "nothing"}), ${when(h.changed_at)}`,
        h.forced ? " — forced past a failed gate" : "", el("br"), el("span", { className: "note", text: h.reason || "" })));
    }
    out.push(el("details", { className: "history-panel" }, el("summary", { text: "Who changed the live version, and when" }), list));
  }
  return out;
}

async function showEvaluation(kb, version, focus = false, target = $("evaluation")) {
  if (!target) return;
  admin.evaluated = version;
  const path = `/admin/knowledge-bases/${encodeURIComponent(kb.key)}/versions/${encodeURIComponent(version)}/evaluation`;
  const title = target.querySelector("h4");
  title.textContent = `Evaluation of ${version}`;
  const box = el("div", { className: "evaluation", "data-version": version });
  try {
    renderEvaluation(box, await getJson(path), { candidate: Boolean(kb.candidates && kb.candidates.includes(version)) });
    if (admin.me.admin && kb.candidates && kb.candidates.includes(version)) box.append(promoteButton(kb, version));
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) {
      box.append(el("p", { className: "note", text: `${version} has not been evaluated yet.` }));
      if (admin.me.admin) box.append(evaluateButton(kb, version));
    } else {
      box.append(el("p", { className: "error", text: `Could not load the evaluation: ${errorText(err)}` }));
    }
  }
  fillSection(target, box);
  if (focus) {
    title.setAttribute("tabindex", "-1");
    title.focus();
  }
}

function promoteButton(kb, version) {
  const button = el("button", { type: "button", className: "primary promote", "data-version": version }, `Promote ${version}`);
  button.addEventListener("click", () => confirmPromote(kb, version));
  return el("div", { className: "row" }, button);
}

function evaluateButton(kb, version) {
  const button = el("button", { type: "button", className: "evaluate" }, `Evaluate ${version} now`);
  const status = el("p", { className: "note", role: "status" });
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      const started = await sendJson("POST", `/admin/knowledge-bases/${encodeURIComponent(kb.key)}/versions/${encodeURIComponent(version)}/evaluate`, {});
      const job = await followJob(started.job, (j) => { status.textContent = stageLine(j); });
      if (job.state === "succeeded") await showEvaluation(kb, version, true);
      else status.textContent = `The evaluation failed: ${job.message}`;
    } catch (err) {
      status.textContent = `The evaluation could not start: ${errorText(err)}`;
    } finally {
      button.disabled = false;
    }
  });
  return el("div", {}, button, status);
}

function renderDocuments(body) {
  if (body.hidden) return el("p", { className: "note", text: `${body.hidden} documents in the live version ${body.version || "—"}; their names and sources are shown to admins only.` });
  if (!body.documents.length) return el("p", { className: "note", text: "No documents yet." });
  const rows = body.documents.map((d) => ({ header: true, attrs: { "data-doc": d.doc_id },
    cells: [d.doc_id, d.source, d.chunks, d.changed_in, piiText(d.pii)] }));
  const flagged = body.documents.filter((d) => Object.keys(d.pii || {}).length).length;
  return [el("p", { className: "note", text: `In the live version ${body.version || "—"}; "Changed in" is the version that last added or changed it.` +
      (flagged ? ` PII found in ${flagged} document(s): kinds and counts only, the values stay in the documents.` : "") }),
    table(`${body.documents.length} documents`, ["Document", "Source", "Passages", "Changed in", "PII found"], rows, "documents")];
}

// "PERSON 2, EMAIL_ADDRESS 1": what the sanitizer flagged in a document, never the value
function piiText(pii) {
  const kinds = Object.entries(pii || {}).sort((a, b) => b[1] - a[1]);
  return kinds.length ? kinds.map(([kind, n]) => `${kind} ${n}`).join(", ") : "—";
}

function renderGolden(body) {
  if (!body.path) {
    return el("p", { className: "note" }, ...withCode("No golden set yet: a starter set is generated from the documents " +
      `at the first gate. ${body.how_to_replace || ""}`));
  }
  const out = [];
  if (body.generated) {
    out.push(el("div", { className: "callout", role: "note" },
      el("p", {}, el("strong", { text: "Generated starter set — replace it with real questions." }),
        " These questions were made from the documents' own sentences, plus off-topic questions that must not be answered, so the gate tests the new files. They are not what your users ask."),
      el("p", { className: "how-to" }, ...withCode(body.how_to_replace || ""))));
  } else {
    out.push(el("p", { className: "note" }, `${body.hidden || body.queries.length} questions from `, el("code", { text: body.path }), "."),
      body.how_to_replace ? el("p", { className: "note how-to" }, ...withCode(body.how_to_replace)) : "");
  }
  if (body.hidden) {
    out.push(el("p", { className: "note", text: `${body.hidden} questions; they are shown to admins only.` }));
    return out;
  }
  const rows = body.queries.map((q) => ({ attrs: { "data-query": q.id },
    cells: [q.query, q.expected_mode, (q.expected_sources || []).join(", ") || "—"] }));
  out.push(el("details", { className: "golden-queries" }, el("summary", { text: body.queries.length === 1 ? "The question" : `The ${body.queries.length} questions` }),
    table("Golden questions", ["Question", "Expected mode", "Expected documents"], rows, "golden")));
  return out;
}

// `command` spans of a server's text as <code> (still text nodes: nothing is parsed as HTML)
function withCode(text) {
  return String(text).split(/(`[^`]+`)/).filter(Boolean)
    .map((part) => (part.startsWith("`") && part.endsWith("`") ? el("code", { text: part.slice(1, -1) }) : part));
}

function renderFeedback(body) {
  if (!body.feedback.length) {
    return el("p", { className: "note" }, ...withCode("No feedback yet. Votes from the chat page show here; `rag feedback export` turns them into candidate golden questions."));
  }
  const rows = body.feedback.map((f) => ({ attrs: { "data-interaction": f.interaction_id },
    cells: [when(f.created_at), f.vote === "up" ? "Helpful" : f.vote === "down" ? "Not helpful" : f.vote, f.question || "—", f.comment || "—"] }));
  return [el("p", { className: "note" }, ...withCode("`rag feedback export` turns these into candidate golden questions, to review and add to the golden set.")),
    table(`${body.feedback.length} votes, newest first`, ["When", "Vote", "Question", "Comment"], rows, "feedback")];
}

// ---- confirmation dialog (a real <dialog>: modal, Escape cancels, focus returns) ----
function confirmDialog({ title, text, ok }) {
  const dialog = $("confirm-admin");
  $("confirm-admin-title").textContent = title;
  $("confirm-admin-text").textContent = text;
  $("confirm-admin-ok").textContent = ok;
  const opener = document.activeElement;
  return new Promise((resolve) => {
    let answer = false;
    const yes = () => { answer = true; dialog.close(); };
    const no = () => dialog.close();
    const closed = () => {
      $("confirm-admin-ok").removeEventListener("click", yes);
      $("confirm-admin-cancel").removeEventListener("click", no);
      dialog.removeEventListener("close", closed);
      if (opener && opener.isConnected) opener.focus();
      resolve(answer);
    };
    $("confirm-admin-ok").addEventListener("click", yes);
    $("confirm-admin-cancel").addEventListener("click", no);
    dialog.addEventListener("close", closed);
    dialog.showModal();
  });
}

async function afterChange(text) {
  await loadKnowledgeBases(true);
  const message = $("admin-message");
  if (message) {
    message.textContent = text;
    message.focus();
  }
  announce(text);
}

async function confirmPromote(kb, version) {
  const ok = await confirmDialog({
    title: `Promote ${version}?`,
    text: `${version} will answer every question asked of "${kb.title}" (${kb.alias}). ` +
      `${kb.live ? `${kb.live}, live now, becomes the rollback version. ` : ""}` +
      `The server checks the gates again and refuses if one fails. The change is recorded as done by ${who()}.`,
    ok: `Promote ${version}`,
  });
  if (!ok) return;
  try {
    const done = await sendJson("POST", `/admin/knowledge-bases/${encodeURIComponent(kb.key)}/promote`, { version, confirm: true });
    await afterChange(`${done.version} is live for ${kb.title} (was ${done.previous || "nothing"}); recorded as promoted by ${who()}.`);
  } catch (err) {
    const gates = (err.body && (err.body.gates || (err.body.error && err.body.error.details && err.body.error.details.gates))) || [];
    const failed = gates.filter((g) => !g.passed).map((g) => `${g.metric || g.name} ${fmt(g.value)} (bar ${fmt(g.threshold)})`);
    const text = `Not promoted: ${errorText(err)}${failed.length ? `. Failed gates: ${failed.join("; ")}` : ""}`;
    $("admin-message").textContent = text;
    $("admin-message").focus();
    announce(text);
  }
}

async function confirmRollback(kb) {
  const ok = await confirmDialog({
    title: `Roll back ${kb.title}?`,
    text: `${kb.rollback} will answer questions asked of "${kb.title}" again, instead of ${kb.live}. ` +
      `No gate is checked: it served before. The change is recorded as done by ${who()}.`,
    ok: `Roll back to ${kb.rollback}`,
  });
  if (!ok) return;
  try {
    const done = await sendJson("POST", `/admin/knowledge-bases/${encodeURIComponent(kb.key)}/rollback`, { confirm: true });
    await afterChange(`Rolled back: ${done.version} is live for ${kb.title} again (was ${done.previous}); recorded as done by ${who()}.`);
  } catch (err) {
    $("admin-message").textContent = `Not rolled back: ${errorText(err)}`;
    $("admin-message").focus();
  }
}

// ---- upload ----
function uploadSection(kb) {
  const lim = limits();
  const input = el("input", { type: "file", id: "upload-files", name: "files", multiple: true,
    accept: lim.suffixes.join(","), "aria-describedby": "upload-hint" });
  const chosen = el("ul", { id: "upload-chosen", className: "upload-chosen", "aria-label": "Chosen files" });
  const drop = el("div", { id: "drop-zone", className: "drop-zone" },
    el("label", { for: "upload-files", text: "Files to add or replace" }),
    el("p", { className: "drop-text", "aria-hidden": "true", text: "Drop files here, or choose them:" }), input);
  const submit = el("button", { type: "submit", id: "upload-submit", disabled: true }, "Upload and evaluate");
  const form = el("form", { id: "upload-form", className: "upload-form" }, drop,
    el("p", { id: "upload-hint", className: "hint",
      text: `Up to ${lim.max_files_per_upload} files of at most ${sizeText(lim.max_upload_bytes)} each; ` +
        `types ${lim.suffixes.join(" ")}. A file with the name of one already indexed replaces it.` }),
    chosen, el("div", { className: "row" }, submit));
  const progress = el("progress", { id: "upload-progress", max: "1", value: "0", hidden: true, "aria-labelledby": "upload-stage" });
  const stage = el("p", { id: "upload-stage", className: "upload-stage", "aria-hidden": "true" });
  const live = el("p", { id: "upload-live", className: "visually-hidden", role: "status", "aria-live": "polite" });
  const refused = el("div", { id: "upload-refused", className: "upload-refused" });
  const result = el("div", { id: "upload-result", className: "upload-result", tabindex: "-1" });

  const refresh = () => {
    chosen.replaceChildren();
    const files = [...input.files];
    for (const f of files) {
      const problems = fileProblems(f, lim);
      chosen.append(el("li", { className: problems.length ? "will-refuse" : "" }, `${f.name} (${sizeText(f.size)})`,
        problems.length ? el("span", { className: "bad", text: ` — ${problems.join("; ")}` }) : ""));
    }
    if (files.length > lim.max_files_per_upload) {
      chosen.append(el("li", { className: "will-refuse bad", text: `Too many files: at most ${lim.max_files_per_upload} per upload.` }));
    }
    submit.disabled = files.length === 0 || files.length > lim.max_files_per_upload;
  };
  input.addEventListener("change", refresh);
  for (const name of ["dragenter", "dragover"]) {
    drop.addEventListener(name, (e) => { e.preventDefault(); drop.classList.add("dragging"); });
  }
  drop.addEventListener("dragleave", () => drop.classList.remove("dragging"));
  drop.addEventListener("drop", (e) => {
    e.preventDefault();
    drop.classList.remove("dragging");
    if (e.dataTransfer && e.dataTransfer.files.length) { input.files = e.dataTransfer.files; refresh(); }
  });
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    upload(kb, [...input.files], { submit, progress, stage, live, refused, result, lim }).then(() => {
      input.value = "";
      refresh();
    });
  });
  return section("upload", `Upload documents to ${kb.title}`,
    el("p", {}, "The files go into a new ", el("strong", { text: "candidate" }),
      " version, which is evaluated on the golden set. ", el("strong", { text: "Nothing is served until you promote it." })),
    form, stage, progress, live, refused, result);
}

export function fileProblems(file, lim) {
  const problems = [];
  const dot = file.name.lastIndexOf(".");
  const suffix = dot >= 0 ? file.name.slice(dot).toLowerCase() : "";
  if (!lim.suffixes.includes(suffix)) problems.push(`type ${suffix || "(none)"} is not accepted`);
  if (file.size > lim.max_upload_bytes) problems.push(`larger than ${sizeText(lim.max_upload_bytes)}: not sent`);
  if (file.size === 0) problems.push("empty");
  return problems;
}

function refusalList(refused, title) {
  if (!refused || !refused.length) return null;
  const list = el("ul", {});
  for (const r of refused) list.append(el("li", {}, el("strong", { text: r.file }), `: ${r.reason}`));
  return el("div", { className: "refusals", role: "alert" }, el("p", {}, el("strong", { text: title })), list);
}

function stageLine(job) {
  const words = STAGE_TEXT[job.stage] || STAGE_TEXT[job.state] || job.stage || job.state;
  const count = job.total ? ` (${job.done} of ${job.total})` : "";
  return `${words}${count}${job.message && job.state === "running" ? ` — ${job.message}` : ""}`;
}

// polls GET /admin/jobs/<id> until the job ends; onTick sees each state
async function followJob(id, onTick) {
  for (;;) {
    const job = await getJson(`/admin/jobs/${encodeURIComponent(id)}`);
    onTick(job);
    if (job.state === "succeeded" || job.state === "failed" || job.state === "cancelled") return job;
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function upload(kb, files, ui) {
  const { submit, progress, stage, live, refused, result, lim } = ui;
  const sendable = files.filter((f) => f.size <= lim.max_upload_bytes);
  const skipped = files.filter((f) => f.size > lim.max_upload_bytes)
    .map((f) => ({ file: f.name, reason: `larger than the ${sizeText(lim.max_upload_bytes)} limit (not sent)` }));
  refused.replaceChildren();
  result.replaceChildren();
  if (!sendable.length) {
    refused.append(refusalList(skipped, "Nothing was uploaded:"));
    return;
  }
  const form = new FormData();
  for (const f of sendable) form.append("files", f, f.name);
  submit.disabled = true;
  stage.textContent = "Sending the files…";
  live.textContent = `Uploading ${sendable.length} file${sendable.length === 1 ? "" : "s"} to ${kb.title}.`;
  progress.hidden = false;
  progress.removeAttribute("value");
  let started;
  try {
    started = await postForm(`/admin/knowledge-bases/${encodeURIComponent(kb.key)}/uploads`, form);
  } catch (err) {
    const body = err.body || {};
    const serverRefused = body.refused || (body.error && body.error.details && body.error.details.refused) || [];
    refused.append(refusalList([...skipped, ...serverRefused], "Refused:") || el("p", { className: "error", role: "alert" }, `Upload refused: ${errorText(err)}`));
    if (serverRefused.length) refused.prepend(el("p", { className: "error", text: `Upload refused: ${errorText(err)}` }));
    stage.textContent = "";
    progress.hidden = true;
    submit.disabled = false;
    live.textContent = "The upload was refused.";
    return;
  }
  const allRefused = [...skipped, ...(started.refused || [])];
  const r = refusalList(allRefused, `${allRefused.length} file${allRefused.length === 1 ? " was" : "s were"} refused (the others go on):`);
  if (r) refused.append(r);
  let lastStage = null;
  const job = await followJob(started.job, (j) => {
    stage.textContent = stageLine(j);
    if (j.total) { progress.max = j.total; progress.value = j.done; } else progress.removeAttribute("value");
    if (j.stage !== lastStage) { lastStage = j.stage; live.textContent = stageLine(j); }
  }).catch((err) => ({ state: "failed", message: errorText(err) }));
  progress.hidden = true;
  submit.disabled = false;
  if (job.state !== "succeeded") {
    stage.textContent = "";
    result.append(el("p", { className: "error", role: "alert", text: `The upload failed: ${job.message}` }));
    live.textContent = "The upload failed.";
    return;
  }
  stage.textContent = "Done.";
  const res = job.result || {};
  if (!res.version) {
    result.append(el("p", { className: "not-served", text: `Nothing changed: ${kb.title} already holds these files as they are, so no candidate was made.` }));
    live.textContent = "Nothing changed: no candidate was made.";
    announce(live.textContent);
    return;
  }
  const ev = res.evaluation || {};
  if (res.refused && res.refused.length) {
    const more = refusalList(res.refused.filter((x) => !allRefused.some((y) => y.file === x.file)), "Refused while reading:");
    if (more) refused.append(more);
  }
  const outcome = [
    el("h5", { text: `Candidate ${res.version} is ready` }),
    verdict(ev.gates_passed), gateList(ev.gates),
    el("p", { className: "not-served" }, el("strong", { text: "Nothing is served until you promote. " }),
      `${kb.live || "The live version"} keeps answering; the question-by-question changes are under "Evaluation" below.`),
  ];
  live.textContent = `Candidate ${res.version} is ready; ${ev.gates_passed ? "every gate passed" : "a gate failed"}. Nothing is served until you promote.`;
  admin.evaluated = res.version;
  // the knowledge base's page is rebuilt with the candidate (versions, its evaluation), then the
  // outcome goes into the new upload section, so what is shown is complete once it appears
  const refusals = [...refused.childNodes];
  await loadKnowledgeBases(true);
  if (admin.key !== kb.key) { // the person opened another knowledge base meanwhile: say it, show nothing there
    announce(`${kb.title}: ${live.textContent}`);
    return;
  }
  const fresh = $("upload-result") || result;
  ($("upload-refused") || refused).replaceChildren(...refusals);
  ($("upload-stage") || stage).textContent = "Done.";
  fresh.replaceChildren(...outcome);
  fresh.focus();
  announce(live.textContent);
}
