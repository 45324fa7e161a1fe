// Calls to the API of this same origin, with the tab's API key when one is set.
const KEY_STORAGE = "rag-api-key";

export function apiKey() {
  return sessionStorage.getItem(KEY_STORAGE) || "";
}

export function setApiKey(key) {
  sessionStorage.setItem(KEY_STORAGE, key);
}

export class ApiError extends Error {
  constructor(status, body) {
    const err = (body && body.error) || {};
    super(err.message || `HTTP ${status}`);
    this.status = status;
    this.code = err.code || "http_error";
    this.body = body || {};
  }
}

export function headers(extra = {}) {
  const out = { ...extra };
  const key = apiKey();
  if (key) out["X-API-Key"] = key;
  return out;
}

async function errorOf(response) {
  let body = null;
  try { body = await response.json(); } catch { body = null; }
  return new ApiError(response.status, body);
}

export async function getJson(path, extra = {}) {
  const response = await fetch(path, { headers: headers(extra) });
  if (!response.ok) throw await errorOf(response);
  return response.json();
}

export async function sendJson(method, path, body, extra = {}) {
  const response = await fetch(path, {
    method,
    headers: headers({ "Content-Type": "application/json", ...extra }),
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw await errorOf(response);
  return response.json();
}

// a multipart POST (file uploads): the browser sets the Content-Type with its boundary
export async function postForm(path, formData) {
  const response = await fetch(path, { method: "POST", headers: headers(), body: formData });
  if (!response.ok) throw await errorOf(response);
  return response.json();
}

// POST /chat/stream; calls onEvent(name, data) for each server-sent event.
export async function streamChat(body, domain, onEvent) {
  const extra = { "Content-Type": "application/json", Accept: "text/event-stream" };
  if (domain) extra["X-RAG-Domain"] = domain;
  const response = await fetch("/chat/stream", { method: "POST", headers: headers(extra), body: JSON.stringify(body) });
  if (!response.ok) throw await errorOf(response);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let name = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
      }
      if (data.length) onEvent(name, JSON.parse(data.join("\n")));
    }
  }
}
