// The deepsift page: ask a question, watch the run's steps, read the report and its cited
// excerpts, download it, ask the finished run follow-up questions, reopen past runs, upload
// documents. No framework, no build step.
"use strict";

// With a token, the server keeps it in a cookie (set by the link it printed): no request here
// names it, no URL carries it.
const $ = (id) => document.getElementById(id);
let current = null; // {threadId, excerpts, versions (each report version's HTML), version}
const CONTROLS = ["length", "language", "agent"]; // kept across reloads, with the sources
const FORMATS = { md: "Markdown", html: "HTML", pdf: "PDF", docx: "Word" };

async function api(path, options = {}) {
  const response = await fetch(path, options);
  const body = response.headers.get("content-type")?.includes("json") ? await response.json() : null;
  if (!response.ok) throw new Error((body && body.error) || response.statusText);
  return body;
}

function say(text, isError = false) {
  $("status").textContent = text;
  $("status").classList.toggle("error", isError);
}

function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}

async function loadCollections() {
  const sources = $("sources");
  try {
    const found = await api("/api/collections");
    sources.replaceChildren(element("legend", "Sources"));
    if (!found.length) sources.append(element("span", "no collections yet: add documents", "dim"));
    for (const source of found) {
      const label = element("label");
      const box = element("input");
      box.type = "checkbox";
      box.name = "source";
      box.value = source.name;
      const unchecked = JSON.parse(localStorage.getItem("deepsift.unchecked") || "[]");
      box.checked = !unchecked.includes(source.name);
      box.addEventListener("change", keepControls);
      label.title = source.description || "";
      label.append(box, " " + source.name);
      sources.append(label);
    }
  } catch (e) {
    sources.replaceChildren(element("legend", "Sources"), element("span", e.message, "dim"));
  }
}

function keepControls() {
  for (const id of CONTROLS) localStorage.setItem("deepsift." + id, $(id).value);
  const boxes = [...document.querySelectorAll("input[name=source]")];
  const unchecked = boxes.filter((box) => !box.checked).map((box) => box.value);
  localStorage.setItem("deepsift.unchecked", JSON.stringify(unchecked));
}

function restoreControls() {
  for (const id of CONTROLS) {
    const kept = localStorage.getItem("deepsift." + id);
    const offered = !$(id).options || [...$(id).options].some((o) => o.value === kept);
    if (kept !== null && offered) $(id).value = kept; // an agent no longer offered: the default
    $(id).addEventListener("change", keepControls);
  }
}

function runControls(threadId, status) {
  $("cancel").hidden = !(status === "queued" || status === "running");
  $("resume").hidden = !(status === "stopped" || status === "failed");
  $("cancel").dataset.thread = threadId;
  $("resume").dataset.thread = threadId;
}

async function cancelRun() {
  try {
    await api(`/api/runs/${$("cancel").dataset.thread}/cancel`, { method: "POST" });
    say("cancelling: the run stops before its next step or model call…");
  } catch (e) {
    say(e.message, true);
  }
}

async function resumeRun() {
  const threadId = $("resume").dataset.thread;
  try {
    await api("/api/runs", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ thread_id: threadId }),
    });
    follow(threadId);
    loadRuns();
  } catch (e) {
    say(e.message, true);
  }
}

function chosenSources() {
  const boxes = [...document.querySelectorAll("input[name=source]")];
  const checked = boxes.filter((box) => box.checked).map((box) => box.value);
  return checked.length === boxes.length ? [] : checked; // all: the default sources
}

function showStep(data) {
  for (const line of data.lines) {
    const item = element("li");
    item.dataset.node = data.node;
    for (const [text, style] of line) item.append(element("span", text, style || undefined));
    $("steps").append(item);
  }
  if (data.next && data.next !== "done") say(data.next + "…");
}

// Each run has its own address in the page (#run=ID): a link that opens it, kept across a
// reload, and one to share with whoever holds the token.
function linkTo(threadId) {
  history.replaceState(null, "", `#run=${encodeURIComponent(threadId)}`);
}

async function openLinked() {
  const linked = location.hash.match(/^#run=([A-Za-z0-9_-]{1,64})$/);
  if (!linked) return;
  try {
    const saved = await api(`/api/runs/${linked[1]}`);
    const made = saved.result ? { question: saved.result.question, status: saved.result.status } : {};
    openRun({ question: "", status: "done", error: "", ...made, ...saved.run });
  } catch (e) {
    say(e.message, true);
  }
}

function follow(threadId) {
  linkTo(threadId);
  current = { threadId, excerpts: null };
  $("steps").replaceChildren();
  $("result").hidden = true;
  say("starting…");
  runControls(threadId, "queued");
  const source = new EventSource(`/api/runs/${threadId}/events`);
  source.addEventListener("queued", (e) => {
    const place = JSON.parse(e.data).position;
    say(`waiting for the model: place ${place} in the queue`);
  });
  source.addEventListener("started", () => say("running…"));
  source.addEventListener("step", (e) => showStep(JSON.parse(e.data)));
  source.addEventListener("stopped", (e) => {
    source.close();
    say("stopped: " + JSON.parse(e.data).message);
    runControls(threadId, "stopped");
    $("run").disabled = false;
    loadRuns();
  });
  source.addEventListener("result", (e) => {
    source.close();
    runControls(threadId, "done");
    const result = JSON.parse(e.data);
    say(summary(result));
    showResult(threadId, result);
    loadRuns();
    $("run").disabled = false;
  });
  source.addEventListener("error", (e) => {
    source.close();
    runControls(threadId, e.data ? "failed" : "done");
    $("run").disabled = false;
    if (e.data) say("error: " + JSON.parse(e.data).message, true);
    else say("lost the connection to the server", true);
    loadRuns();
  });
}

function summary(result) {
  if (result.status === "paused") return `paused for review (thread ${result.thread_id})`;
  const usage = result.usage;
  return `done: ${usage.llm_calls} LLM calls, ${usage.prompt_tokens + usage.completion_tokens} tokens` +
    `, thread ${result.thread_id}`;
}

function showResult(threadId, result) {
  current = { threadId, excerpts: result.excerpts || null, versions: [result.html], version: 1 };
  // A run that stopped or paused has no report to download, nor to ask about, yet.
  const finished = result.status === "done" && Boolean(result.report);
  $("exports").hidden = !finished;
  $("followups").hidden = !finished;
  $("followup-list").replaceChildren();
  for (const followup of result.followups || []) showFollowUp(followup);
  $("followup").value = result.asking || ""; // a follow-up stopped part way: ask it again
  $("followup-status").textContent = "";
  showVersion(1);
  $("result").hidden = false;
}

function reportLink(version, format) {
  return `/api/runs/${current.threadId}/report.${format}?version=${version}`;
}

function showVersion(version) {
  current.version = version;
  // Rendered by the server from Markdown, raw HTML off.
  $("report").innerHTML = current.versions[version - 1];
  for (const link of document.querySelectorAll("#exports a")) {
    link.href = reportLink(version, link.dataset.format);
  }
  $("version").replaceChildren(
    ...current.versions.map((_, n) => element("option", String(n + 1))),
  );
  $("version").value = String(version);
  $("versions").hidden = current.versions.length < 2;
}

function showFollowUp(followup) {
  const item = element("li");
  item.append(element("h3", followup.question));
  if (followup.kind === "report") {
    current.versions[followup.version - 1] = followup.html;
    const line = element("p", `Version ${followup.version} of the report: `);
    const show = element("button", "Show");
    show.type = "button";
    show.addEventListener("click", () => {
      showVersion(followup.version);
      $("report").scrollIntoView();
    });
    line.append(show, " download:");
    for (const [format, name] of Object.entries(FORMATS)) {
      const link = element("a", name);
      link.href = reportLink(followup.version, format);
      link.download = "";
      line.append(" ", link);
    }
    item.append(line);
  } else {
    const answer = element("div", undefined, "answer");
    answer.innerHTML = followup.html; // rendered by the server from Markdown, raw HTML off
    item.append(answer);
  }
  if (followup.searched.length) {
    item.append(element("small", "searched again: " + followup.searched.join("; "), "dim"));
  }
  $("followup-list").append(item);
}

async function askFollowUp(event) {
  event.preventDefault();
  const threadId = current.threadId;
  const status = $("followup-status");
  $("ask-followup").disabled = true;
  status.classList.remove("error");
  status.textContent = "answering… (it waits for the model while a run has it)";
  try {
    const followup = await api(`/api/runs/${threadId}/ask`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ question: $("followup").value }),
    });
    if (current.threadId !== threadId) return; // another run opened meanwhile; it is kept
    current.excerpts = null; // the answer may cite excerpts the page has not fetched
    showFollowUp(followup);
    if (followup.kind === "report") showVersion(followup.version);
    $("followup").value = "";
    status.textContent = "";
  } catch (e) {
    status.textContent = e.message;
    status.classList.add("error");
  } finally {
    $("ask-followup").disabled = false;
  }
}

async function excerptsOf(threadId) {
  if (current && current.threadId === threadId && current.excerpts) return current.excerpts;
  const saved = await api(`/api/runs/${threadId}`);
  const excerpts = (saved.result && saved.result.excerpts) || [];
  if (current && current.threadId === threadId) current.excerpts = excerpts;
  return excerpts;
}

async function openCitation(link) {
  const n = Number(link.textContent.replace(/[^0-9]/g, ""));
  const block = link.closest("p, li, td") || link;
  const open = block.nextElementSibling;
  if (open && open.classList.contains("excerpt") && open.dataset.n === String(n)) {
    open.remove();
    return;
  }
  const box = element("div", undefined, "excerpt");
  box.dataset.n = String(n);
  const cited = (await excerptsOf(current.threadId)).filter((e) => e.n === n);
  if (!cited.length) box.append(element("p", `[${n}]: no excerpt kept for this citation`));
  for (const excerpt of cited) {
    box.append(element("strong", `[${n}] ${excerpt.title}`));
    box.append(element("div", `${excerpt.source} · passage ${excerpt.position + 1}`, "dim"));
    box.append(element("blockquote", excerpt.text));
  }
  block.after(box);
}

async function loadRuns() {
  let runs = [];
  try {
    runs = await api("/api/runs");
  } catch (e) {
    return;
  }
  $("runs").replaceChildren(
    ...runs.map((run) => {
      const item = element("li");
      const link = element("a", run.question);
      link.href = `#run=${encodeURIComponent(run.thread_id)}`;
      item.append(link);
      item.dataset.thread = run.thread_id;
      const when = new Date(run.created * 1000).toLocaleString();
      item.append(element("small", `${run.status} · ${when} · ${run.thread_id}`));
      if (run.error) item.append(element("small", run.error));
      item.addEventListener("click", (event) => {
        event.preventDefault();
        openRun(run);
      });
      return item;
    }),
  );
}

async function openRun(run) {
  $("question").value = run.question;
  linkTo(run.thread_id);
  if (run.status === "queued" || run.status === "running") return follow(run.thread_id);
  $("steps").replaceChildren();
  $("result").hidden = true;
  runControls(run.thread_id, run.status);
  try {
    const saved = await api(`/api/runs/${run.thread_id}`);
    if (!saved.result) return say(`run ${run.thread_id}: ${run.status} ${run.error || ""}`);
    say(`${run.status}: thread ${run.thread_id}`);
    showResult(run.thread_id, saved.result);
  } catch (e) {
    say(e.message, true);
  }
}

async function ask(event) {
  event.preventDefault();
  keepControls();
  const request = {
    question: $("question").value,
    collections: chosenSources(),
    length: $("length").value,
    language: $("language").value.trim() || null,
    agent: $("agent").value,
  };
  $("run").disabled = true;
  try {
    const started = await api("/api/runs", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(request),
    });
    follow(started.thread_id);
    loadRuns();
  } catch (e) {
    $("run").disabled = false;
    say(e.message, true);
  }
}

function* serverEvents(text) {
  for (const block of text.split("\n\n")) {
    const fields = {};
    for (const line of block.split("\n")) {
      const at = line.indexOf(": ");
      if (at > 0) fields[line.slice(0, at)] = line.slice(at + 2);
    }
    if (fields.event) yield [fields.event, JSON.parse(fields.data)];
  }
}

async function upload(event) {
  event.preventDefault();
  const log = $("upload-log");
  const form = new FormData();
  // A folder's files keep their paths in it: two README.md stay two documents.
  const chosen = [...$("files").files, ...$("folder").files];
  for (const file of chosen) form.append("files", file, file.webkitRelativePath || file.name);
  if (!chosen.length) {
    log.textContent = "choose files or a folder first\n";
    return;
  }
  const collection = encodeURIComponent($("collection").value);
  const description = encodeURIComponent($("description").value);
  const replace =
    ($("replace").checked ? "&replace=true" : "") +
    ($("replace-description").checked ? "&replace_description=true" : "");
  log.textContent = "uploading…\n";
  const response = await fetch(`/api/collections/${collection}/files?description=${description}${replace}`, {
    method: "POST",
    body: form,
  });
  if (!response.ok) {
    const body = await response.json().catch(() => ({ error: response.statusText }));
    log.textContent = "refused: " + body.error + "\n";
    return;
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let pending = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    pending += decoder.decode(value, { stream: true });
    const cut = pending.lastIndexOf("\n\n");
    if (cut < 0) continue;
    for (const [name, data] of serverEvents(pending.slice(0, cut))) log.textContent += describe(name, data);
    pending = pending.slice(cut + 2);
  }
  loadCollections();
}

function describe(name, data) {
  if (name === "start") return `ingesting ${data.files} file(s)\n`;
  if (name === "kept") return `kept its description "${data.description}" (tick "replace its description" to change it)\n`;
  if (name === "chunks") return `  ${data.source}: ${data.done}/${data.total} chunks embedded\n`;
  if (name === "file") return `${data.source}: ${data.status}${data.error ? " (" + data.error + ")" : ""}\n`;
  if (name === "done") return `done: ${data.added} added, ${data.updated} updated, ${data.unchanged} unchanged, ${data.failed} failed\n`;
  return `error: ${data.message}\n`;
}

$("question-form").addEventListener("submit", ask);
$("cancel").addEventListener("click", cancelRun);
$("resume").addEventListener("click", resumeRun);
restoreControls();
$("upload-form").addEventListener("submit", upload);
$("followup-form").addEventListener("submit", askFollowUp);
$("version").addEventListener("change", () => showVersion(Number($("version").value)));
$("result").addEventListener("click", (event) => {
  const link = event.target.closest("a.cite");
  // A rewritten version numbers its sources its own way: its marks go to its Sources list.
  if (!link || (link.closest("#report") && current.version > 1)) return;
  event.preventDefault();
  openCitation(link);
});
loadCollections();
loadRuns();
openLinked();
