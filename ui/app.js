// The flagserve dashboard: plain DOM, no framework, no build step, nothing fetched but this server.
// Data comes from the admin API with the token as a bearer header; live changes arrive on the
// admin event stream, read with fetch() so the token never appears in a URL.

const TOKEN_KEY = "flagserve-admin-token";
const API = "/api/v1/admin";
const $ = (id) => document.getElementById(id);

const state = {
  token: null,
  environments: [],
  problems: [],
  current: null,
  search: "",
  /** env -> Set of flag keys changed recently (highlighted). */
  changed: new Map(),
  /** The session whose evaluations the feed shows (null: none), and its entries shown so far. */
  session: null,
  sessionShown: 0,
  sessionSkipped: 0,
  /** Aborts the current event stream, to reconnect at once (with another session). */
  streamAbort: null,
  /** "cards" or "list"; null: chosen by the number of flags until the user picks one. */
  view: sessionStorage.getItem("flagserve-view"),
  /** Flags whose detail is open in the list view ("env/key"). */
  expanded: new Set(),
};

/** From this many flags on, the compact list is the default view. */
const LIST_FROM = 13;

// ---- token: from the fragment once, then sessionStorage; the fragment is cleared at once ----

function takeToken() {
  const match = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (match) {
    sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(match[1]));
    history.replaceState(null, "", location.pathname + location.search);
  }
  return sessionStorage.getItem(TOKEN_KEY);
}

function showLogin(message) {
  sessionStorage.removeItem(TOKEN_KEY);
  state.token = null;
  $("app").hidden = true;
  $("login").hidden = false;
  if (message) $("login-message").textContent = message;
  $("connection").textContent = "not signed in";
  $("token-input").focus();
}

// ---- API ----

class ApiError extends Error {
  constructor(status, body) {
    super(body?.errorDetails ?? `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

async function api(method, path, body) {
  const headers = { authorization: `Bearer ${state.token}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(API + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await response.json().catch(() => null);
  if (response.status === 401) {
    showLogin("The admin token was not accepted. Paste the current one.");
    throw new ApiError(401, data);
  }
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

const enc = encodeURIComponent;

function notice(text, isError = false) {
  const el = $("notice");
  el.textContent = text;
  el.classList.toggle("error", isError);
}

async function act(label, fn) {
  try {
    await fn();
    notice(label);
  } catch (error) {
    if (error.status !== 401) {
      const problems = error.body?.problems?.map((p) => ` ${p.file}:${p.line}:${p.col} ${p.message}`).join(";") ?? "";
      notice(`${error.message}${problems}`, true);
    }
  }
}

// ---- rendering helpers ----

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat(Infinity)) if (child !== null && child !== undefined && child !== false) node.append(child);
  return node;
}

const json = (value) => JSON.stringify(value);

/** A value as JSON with spaces between its parts, so that a long one wraps between them. */
const valueText = (value) =>
  value !== null && typeof value === "object" ? JSON.stringify(value, null, 1).replace(/\n\s*/g, " ") : json(value);

/** JsonLogic as a readable expression (the raw JSON stays one click away). */
function rule(logic) {
  if (logic === null || typeof logic !== "object") return json(logic);
  if (Array.isArray(logic)) return `[${logic.map(rule).join(", ")}]`;
  const [op] = Object.keys(logic);
  const args = Array.isArray(logic[op]) ? logic[op] : [logic[op]];
  const infix = { "==": "=", "===": "=", "!=": "≠", "!==": "≠", "<": "<", ">": ">", "<=": "≤", ">=": "≥", in: "in" };
  if (op === "var") return String(args[0] ?? "");
  if (op === "$ref") return `segment ${args[0]}`;
  if (op in infix && args.length === 2) return `${rule(args[0])} ${infix[op]} ${rule(args[1])}`;
  if (op === "and" || op === "or") return args.map((a) => `(${rule(a)})`).join(` ${op} `);
  if (op === "!") return `not (${rule(args[0])})`;
  if (op === "starts_with" || op === "ends_with") return `${rule(args[0])} ${op.replace("_", " ")} ${rule(args[1])}`;
  if (op === "sem_ver") return `version ${rule(args[0])} ${args[1]} ${rule(args[2])}`;
  if (op === "fractional") {
    const buckets = args.filter(Array.isArray);
    const total = buckets.reduce((sum, b) => sum + (typeof b[1] === "number" ? b[1] : 1), 0) || 1;
    return `split ${buckets.map((b) => `${rule(b[0])} ${Math.round(((typeof b[1] === "number" ? b[1] : 1) / total) * 100)}%`).join(", ")}`;
  }
  return `${op}(${args.map(rule).join(", ")})`;
}

/** What a rule's result means: a variant, or (null) the flag's default variant. */
const outcome = (logic, flag) =>
  logic === null ? (flag.defaultVariant === null ? "the caller's default" : `the default variant (${flag.defaultVariant})`) : rule(logic);

/** `if` chains as lines: "if C → V", "else if …", "else → E". */
function ruleLines(logic, flag) {
  if (logic && typeof logic === "object" && Array.isArray(logic.if)) {
    const args = logic.if;
    const lines = [];
    for (let i = 0; i + 1 < args.length; i += 2)
      lines.push(`${i === 0 ? "if" : "else if"} ${rule(args[i])} → ${outcome(args[i + 1], flag)}`);
    if (args.length % 2 === 1) lines.push(`else → ${outcome(args[args.length - 1], flag)}`);
    return lines;
  }
  return [`→ ${outcome(logic, flag)}`];
}

/**
 * What the flag serves now and why: the override if there is one, else the file's definition
 * (its default variant, which targeting may replace for some contexts).
 */
function served(flag) {
  const o = flag.override;
  const from = o ? "override" : "file";
  if (o ? !("variant" in o) : flag.state !== "ENABLED") return { text: "Disabled: callers get their own default", from, variant: null };
  const variant = o ? o.variant : flag.defaultVariant;
  const targeted = !o && flag.hasTargeting;
  if (variant === null)
    return { text: targeted ? "The caller's default, unless targeting matches" : "The caller's default", from, variant: null };
  // `targeted`: a variant for everyone unless targeting matches (a switch cannot say on or off).
  return { variant, value: flag.variants[variant], from, targeted, text: targeted ? "unless targeting matches" : "to everyone" };
}

function servedLine(flag) {
  const s = served(flag);
  const why = el("span", { class: `why ${s.from}`, text: s.from === "override" ? "override" : "file" });
  if (s.variant === null) return el("p", { class: "served" }, el("strong", { text: s.text }), " ", why);
  return el(
    "p",
    { class: "served" },
    "Serves ",
    el("strong", { text: s.variant }),
    " ",
    el("code", { class: "value", text: valueText(s.value) }),
    ` ${s.text} `,
    why,
  );
}

/** A flag whose variants are exactly one true and one false: switched on and off in the list. */
function booleanVariants(flag) {
  const entries = Object.entries(flag.variants);
  const on = entries.find(([, v]) => v === true)?.[0];
  const off = entries.find(([, v]) => v === false)?.[0];
  return entries.length === 2 && on !== undefined && off !== undefined ? { on, off } : null;
}

// ---- the page ----

function currentEnv() {
  return state.environments.find((e) => e.name === state.current) ?? state.environments[0];
}

function renderProblems() {
  const section = $("problems");
  const lines = [...state.problems];
  section.replaceChildren();
  if (lines.length === 0) {
    section.hidden = true;
    return;
  }
  section.hidden = false;
  section.append(
    el("h2", { text: "A reload failed: the last good configuration is still served" }),
    el(
      "ul",
      {},
      lines.map((line) => el("li", {}, el("code", { text: line }))),
    ),
  );
}

function renderTabs() {
  const tabs = $("tabs");
  // A refresh re-creates the tabs: the keyboard focus on one stays on the current one.
  const focused = tabs.contains(document.activeElement);
  tabs.replaceChildren(
    ...state.environments.map((env) =>
      el(
        "button",
        {
          type: "button",
          role: "tab",
          id: `tab-${env.name}`,
          "aria-selected": String(env.name === state.current),
          "aria-controls": "panel",
          tabindex: env.name === state.current ? "0" : "-1",
          onclick: () => selectEnv(env.name, true),
        },
        env.name,
        env.problems.length > 0 ? el("span", { class: "dot", title: "has problems", "aria-label": "(has problems)" }) : null,
      ),
    ),
  );
  if (focused) $(`tab-${state.current}`)?.focus();
  $("panel").setAttribute("aria-labelledby", `tab-${state.current}`);
  const select = $("pg-env");
  const chosen = select.value || state.current;
  select.replaceChildren(...state.environments.map((env) => el("option", { value: env.name, text: env.name })));
  select.value = state.environments.some((e) => e.name === chosen) ? chosen : state.current;
}

function selectEnv(name, focus) {
  state.current = name;
  renderTabs();
  renderFlags();
  if (focus) $(`tab-${name}`)?.focus();
}

function matches(flag, query) {
  if (!query) return true;
  const haystack = [flag.key, flag.state, flag.defaultVariant ?? "", ...Object.keys(flag.variants), ...flag.segments]
    .join(" ")
    .toLowerCase();
  return query
    .toLowerCase()
    .split(/\s+/)
    .every((word) => haystack.includes(word));
}

function overrideText(override) {
  if (!override) return null;
  return "variant" in override ? `overridden: variant ${override.variant}` : `overridden: ${override.state.toLowerCase()}`;
}

function flagCard(env, flag) {
  const id = `flag-${env.name}-${flag.key}`.replace(/[^A-Za-z0-9_-]/g, "_");
  const changed = state.changed.get(env.name)?.has(flag.key);
  const overrideValue = !flag.override
    ? ""
    : "variant" in flag.override
      ? `variant:${flag.override.variant}`
      : `state:${flag.override.state}`;
  const select = el(
    "select",
    { id: `${id}-override`, onchange: (e) => setOverride(env.name, flag.key, e.target.value) },
    el("option", { value: "", text: "none (file)" }),
    Object.keys(flag.variants).map((v) => el("option", { value: `variant:${v}`, text: `variant ${v}` })),
    el("option", { value: "state:DISABLED", text: "disabled" }),
  );
  select.value = overrideValue;
  const variants = el(
    "table",
    { class: "variants" },
    el("caption", { class: "sr-only", text: `Variants of ${flag.key}` }),
    el("thead", {}, el("tr", {}, el("th", { scope: "col", text: "Variant" }), el("th", { scope: "col", text: "Value" }))),
    el(
      "tbody",
      {},
      Object.entries(flag.variants).map(([name, value]) =>
        el(
          "tr",
          { class: name === flag.defaultVariant ? "default" : null },
          el("th", { scope: "row", text: name + (name === flag.defaultVariant ? " (default)" : "") }),
          el("td", {}, el("code", { text: valueText(value) })),
        ),
      ),
    ),
  );
  return el(
    "article",
    {
      class: `flag${changed ? " changed" : ""}${flag.override ? " overridden" : ""}`,
      "aria-labelledby": `${id}-title`,
      "data-flag": flag.key,
    },
    el(
      "header",
      {},
      el("h3", { id: `${id}-title`, text: flag.key }),
      el("span", { class: `badge ${flag.state === "ENABLED" ? "on" : "off"}`, text: flag.state.toLowerCase() }),
      flag.override ? el("span", { class: "badge override", text: overrideText(flag.override) }) : null,
      changed ? el("span", { class: "badge changed", text: "changed" }) : null,
    ),
    flag.problem ? el("p", { class: "error", role: "note" }, "Not served as written: ", flag.problem) : null,
    servedLine(flag),
    variants,
    flag.hasTargeting
      ? el(
          "div",
          { class: "targeting" },
          el("h4", { text: "Targeting" }),
          el(
            "ul",
            {},
            ruleLines(flag.targeting, flag).map((line) => el("li", {}, el("code", { text: line }))),
          ),
          flag.segments.length > 0
            ? [
                el("h4", { text: "Segments" }),
                el(
                  "ul",
                  {},
                  flag.segments.map((s) =>
                    el(
                      "li",
                      {},
                      el("code", { text: s }),
                      ": ",
                      el("code", { text: s in env.segments ? rule(env.segments[s]) : "(not defined)" }),
                    ),
                  ),
                ),
              ]
            : null,
          el("details", {}, el("summary", { text: "JSON" }), el("pre", { text: JSON.stringify(flag.targeting, null, 2) })),
        )
      : el("p", { class: "muted", text: "No targeting." }),
    el(
      "div",
      { class: "controls" },
      el("label", { for: `${id}-override`, text: "Override" }),
      select,
      el(
        "button",
        { type: "button", disabled: !flag.override, onclick: () => resetOverride(env.name, flag.key) },
        "Reset",
        el("span", { class: "sr-only", text: ` ${flag.key}` }),
      ),
      el(
        "button",
        { type: "button", disabled: !flag.override, onclick: () => saveToFile(env.name, flag) },
        "Save to file",
        el("span", { class: "sr-only", text: ` ${flag.key}` }),
      ),
    ),
  );
}

function renderFlags() {
  const env = currentEnv();
  const container = $("flags");
  if (!env) {
    $("flag-count").textContent = "";
    $("reset-all").disabled = true;
    container.replaceChildren(
      el(
        "p",
        { class: "empty" },
        el("strong", { text: "No environment is being served." }),
        " ",
        state.problems.length > 0
          ? "The problems above say why."
          : "The sources hold no flag files: add one (for example flags/development.yaml) and it shows here as soon as it is saved.",
      ),
    );
    return;
  }
  const shown = env.flags.filter((f) => matches(f, state.search));
  const overridden = env.flags.filter((f) => f.override).length;
  const redirected = Object.entries(env.redirects ?? {})
    .map(([from, to]) => `; ${from} is read from ${to} (redirected)`)
    .join("");
  $("flag-count").textContent =
    `${env.name}: ${shown.length} of ${env.flags.length} flags shown${overridden ? `, ${overridden} overridden` : ""}${redirected}`;
  $("reset-all").disabled = overridden === 0;
  const view = state.view ?? (env.flags.length >= LIST_FROM ? "list" : "cards");
  for (const button of document.querySelectorAll("[data-view]")) button.setAttribute("aria-pressed", String(button.dataset.view === view));
  const focused = document.activeElement?.id;
  container.className = view === "list" ? "flag-list" : "flags";
  container.replaceChildren(...(view === "list" ? [flagTable(env, shown)] : shown.map((flag) => flagCard(env, flag))));
  if (focused && $(focused) && container.contains($(focused))) $(focused).focus();
}

/** The compact view: a row per flag (key, state, what it serves, a switch for on/off flags), the card on demand. */
function flagTable(env, flags) {
  const rows = flags.flatMap((flag) => {
    const id = `row-${env.name}-${flag.key}`.replace(/[^A-Za-z0-9_-]/g, "_");
    const open = state.expanded.has(`${env.name}/${flag.key}`);
    const s = served(flag);
    const row = el(
      "tr",
      {
        class: `${flag.override ? "overridden" : ""}${state.changed.get(env.name)?.has(flag.key) ? " changed" : ""}`,
        "data-flag": flag.key,
      },
      el(
        "th",
        { scope: "row" },
        el(
          "button",
          {
            type: "button",
            id: `${id}-toggle`,
            class: "link",
            "aria-expanded": String(open),
            "aria-controls": `${id}-detail`,
            onclick: () => toggleDetail(env.name, flag.key),
          },
          el("span", { class: "arrow", "aria-hidden": "true", text: open ? "▾ " : "▸ " }),
          flag.key,
        ),
      ),
      el("td", {}, el("span", { class: `badge ${flag.state === "ENABLED" ? "on" : "off"}`, text: flag.state.toLowerCase() })),
      el(
        "td",
        { class: "served" },
        s.variant === null ? s.text : [el("strong", { text: s.variant }), " ", el("code", { class: "value", text: valueText(s.value) })],
        s.targeted ? el("span", { class: "muted", text: " or by targeting" }) : null,
        " ",
        el("span", { class: `why ${s.from}`, text: s.from }),
      ),
      el("td", {}, quickSwitch(env, flag, id, s)),
    );
    return open ? [row, el("tr", { id: `${id}-detail`, class: "detail" }, el("td", { colspan: "4" }, flagCard(env, flag)))] : [row];
  });
  return el(
    "table",
    { class: "list" },
    el("caption", { class: "sr-only", text: `Flags of ${env.name}` }),
    el(
      "thead",
      {},
      el(
        "tr",
        {},
        ["Flag", "State", "Serves", "Switch"].map((name) => el("th", { scope: "col", text: name })),
      ),
    ),
    el("tbody", {}, rows),
  );
}

/**
 * On/off for a flag with one true and one false variant: an override serving that variant to
 * everyone. A flag whose targeting decides per context is neither on nor off for everyone: no
 * switch then (a switch is on or off), but a word saying why; its card overrides it.
 */
function quickSwitch(env, flag, id, s) {
  const variants = booleanVariants(flag);
  if (!variants) return null;
  if (s.targeted) return el("span", { class: "muted", text: "by targeting" });
  return el("input", {
    type: "checkbox",
    role: "switch",
    id: `${id}-switch`,
    "aria-label": `${flag.key} on for everyone`,
    checked: s.variant === variants.on,
    onchange: (e) => setOverride(env.name, flag.key, `variant:${e.target.checked ? variants.on : variants.off}`),
  });
}

function toggleDetail(env, key) {
  const id = `${env}/${key}`;
  if (!state.expanded.delete(id)) state.expanded.add(id);
  renderFlags();
}

function chooseView(view) {
  state.view = view;
  sessionStorage.setItem("flagserve-view", view);
  renderFlags();
}

function renderAll() {
  if (!state.environments.some((e) => e.name === state.current)) state.current = state.environments[0]?.name ?? null;
  renderProblems();
  renderTabs();
  renderFlags();
}

async function refresh() {
  const data = await api("GET", "/environments");
  state.environments = data.environments;
  state.problems = [...data.problems, ...data.environments.flatMap((e) => e.problems)];
  renderAll();
}

// ---- actions ----

function setOverride(env, key, value) {
  if (value === "") return resetOverride(env, key);
  const [kind, name] = [value.slice(0, value.indexOf(":")), value.slice(value.indexOf(":") + 1)];
  const body = kind === "variant" ? { variant: name } : { state: name };
  return act(`${env}: ${key} overridden`, () => api("PUT", `/environments/${enc(env)}/overrides/${enc(key)}`, body));
}

function resetOverride(env, key) {
  return act(`${env}: ${key} back to its file definition`, () => api("DELETE", `/environments/${enc(env)}/overrides/${enc(key)}`));
}

/** Writes the override into the file (one line), then drops the override: the file now says it. */
function saveToFile(env, flag) {
  const o = flag.override;
  if (!o) return;
  const patch = "variant" in o ? { defaultVariant: o.variant, ...(flag.state !== "ENABLED" && { state: "ENABLED" }) } : { state: o.state };
  return act(`${env}: ${flag.key} saved to its file`, async () => {
    const saved = await api("PATCH", `/environments/${enc(env)}/flags/${enc(flag.key)}`, patch);
    // Dropped only once the server serves the saved file, so the flag never flips back meanwhile.
    await fileServes(env, flag.key, patch);
    await api("DELETE", `/environments/${enc(env)}/overrides/${enc(flag.key)}`);
    notice(`${env}: ${flag.key} saved to ${saved.file}`);
  });
}

/** Waits (up to 10 s) until the server has reloaded the file and its definition says `patch`. */
async function fileServes(env, key, patch) {
  for (const until = Date.now() + 10_000; Date.now() < until;) {
    const data = await api("GET", "/environments");
    const flag = data.environments.find((e) => e.name === env)?.flags.find((f) => f.key === key);
    if (flag && Object.entries(patch).every(([field, value]) => flag[field] === value)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("the file was saved, but the server has not reloaded it yet");
}

// ---- live: the admin event stream, read with fetch() (EventSource cannot send the token) ----

function addFeed(change) {
  const what = [
    ...change.flags.map((f) => `flag ${f.key} ${f.change}`),
    ...change.segments.map((s) => `segment ${s.key} ${s.change}`),
    ...(change.keyRotated ? ["API key rotated"] : []),
  ];
  const text =
    change.change === "updated" ? `${change.environment}: ${what.join(", ")}` : `environment ${change.environment} ${change.change}`;
  const time = new Date(change.timestamp);
  $("feed").prepend(el("li", {}, el("time", { datetime: change.timestamp, text: time.toLocaleTimeString() }), " ", text));
  while ($("feed").children.length > 50) $("feed").lastElementChild.remove();
  $("feed-empty").hidden = true;
}

/** Highlights the changed flags, and the flags using a changed segment, for a few seconds. */
function markChanged(change) {
  let set = state.changed.get(change.environment);
  if (!set) state.changed.set(change.environment, (set = new Set()));
  const segments = new Set(change.segments.map((s) => s.key));
  const env = state.environments.find((e) => e.name === change.environment);
  const users = env ? env.flags.filter((f) => f.segments.some((s) => segments.has(s))).map((f) => f.key) : [];
  const keys = [...change.flags.map((f) => f.key), ...users];
  for (const key of keys) set.add(key);
  setTimeout(() => {
    for (const key of keys) set.delete(key);
    renderFlags();
  }, 4000);
}

// Events close together share one refresh; an event during a refresh asks for one more, since
// the answer in flight may predate it.
let refreshing = null;
let refreshAgain = false;
function refreshSoon() {
  if (refreshing) {
    refreshAgain = true;
    return refreshing;
  }
  refreshing = (async () => {
    do {
      refreshAgain = false;
      await new Promise((resolve) => setTimeout(resolve, 30));
      await refresh().catch(() => {});
    } while (refreshAgain);
  })().finally(() => (refreshing = null));
  return refreshing;
}

function onEvent(name, data) {
  if (name === "change") {
    addFeed(data);
    markChanged(data);
    refreshSoon();
  } else if (name === "status") {
    refreshSoon();
  } else if ((name === "session" || name === "evaluations") && data.id === state.session) {
    showEvaluations(data, name === "session");
  }
}

async function stream() {
  for (;;) {
    const abort = new AbortController();
    state.streamAbort = abort;
    try {
      // One stream for everything the page follows: changes, problems, and the watched session.
      const query = state.session === null ? "" : `?session=${enc(state.session)}`;
      const headers = { authorization: `Bearer ${state.token}`, accept: "text/event-stream" };
      const response = await fetch(`${API}/events${query}`, { headers, signal: abort.signal });
      if (response.status === 401) return showLogin("The admin token was not accepted. Paste the current one.");
      if (response.status === 400 && state.session !== null) {
        // A session id no request could carry: say why, and follow the rest without it.
        const body = await response.json().catch(() => null);
        watchSession(null);
        $("session-status").textContent = body?.errorDetails ?? "That session id is not valid.";
        continue;
      }
      if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
      $("connection").textContent = "live";
      $("connection").className = "connection live";
      await refresh();
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let name = "message";
          let data = "";
          for (const line of block.split("\n")) {
            if (line.startsWith("event:")) name = line.slice(6).trim();
            else if (line.startsWith("data:")) data += line.slice(5).trim();
          }
          if (data) onEvent(name, JSON.parse(data));
        }
      }
    } catch {
      // fall through to reconnect
    }
    if (!state.token) return;
    if (abort.signal.aborted) continue; // another session chosen: reconnect now
    $("connection").textContent = "reconnecting…";
    $("connection").className = "connection down";
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

// ---- session feed: what requests with X-Flagserve-Session: ID were answered, live ----

const SESSION_ROWS = 100;

/** `contexts`: the event's contexts by id, each written once for the entries of one request. */
function evaluationItem(e, contexts) {
  const failed = e.reason === "ERROR";
  // A disabled flag has neither value nor variant: the caller's default applies.
  const answered = e.value === undefined ? `no value (${e.reason})` : `${json(e.value)} (variant ${e.variant}, ${e.reason})`;
  const outcome = failed ? `error ${e.errorCode}` : answered;
  return el(
    "li",
    { class: failed ? "error" : null },
    el("time", { datetime: e.at, text: new Date(e.at).toLocaleTimeString() }),
    " ",
    el("strong", { text: e.flagKey }),
    " → ",
    el("span", { class: "outcome", text: outcome }),
    el("code", { class: "context", text: `context ${json(contexts[e.contextId])}` }),
  );
}

/** `session`: what the session held when the stream opened; `evaluations`: recorded since. */
function showEvaluations(data, replace) {
  const list = $("session-feed");
  if (replace) {
    list.replaceChildren();
    state.sessionShown = 0;
    state.sessionSkipped = 0;
  }
  list.prepend(...data.evaluations.map((e) => evaluationItem(e, data.contexts ?? {})).reverse());
  while (list.children.length > SESSION_ROWS) list.lastElementChild.remove();
  state.sessionShown += data.evaluations.length;
  state.sessionSkipped += data.skipped;
  const total = state.sessionShown + state.sessionSkipped;
  const older = total > list.children.length ? `; the newest ${list.children.length} shown` : "";
  const evicted = data.evicted ? ` It was evicted (${data.evicted}): what it recorded before is gone.` : "";
  $("session-status").textContent = `Watching session ${state.session}: ${total} evaluation${total === 1 ? "" : "s"}${older}.${evicted}`;
}

function watchSession(id) {
  state.session = id;
  $("session-feed").replaceChildren();
  $("session-stop").disabled = id === null;
  $("session-status").textContent = id === null ? "Not watching a session." : `Watching session ${id}…`;
  state.streamAbort?.abort();
}

/** The ids the server holds, offered as the input's suggestions. */
async function suggestSessions() {
  const data = await api("GET", "/sessions").catch(() => null);
  if (data)
    $("session-ids").replaceChildren(...data.sessions.map((s) => el("option", { value: s.id, text: `${s.evaluations} evaluations` })));
}

// ---- playground ----

/** The node at `path` in a flag's definition (undefined when the path does not lead anywhere). */
function at(flag, path) {
  let node = flag;
  for (const step of path) node = node !== null && typeof node === "object" ? node[step] : undefined;
  return node;
}

/**
 * The targeting branches an evaluation took (the server traces them), as one line: the outer
 * ones by their condition, the last one with what it answered.
 * "else › if country in ["de", "fr"] › split → "on" (50%)"
 */
function matchedText(steps, flag) {
  return steps
    .map((step, i) => {
      const last = i === steps.length - 1;
      const args = at(flag, step.path.slice(0, -1));
      const index = step.path[step.path.length - 1];
      if (step.kind === "no-else") return `no condition matched → ${outcome(null, flag)}`;
      if (!Array.isArray(args) || typeof index !== "number") return step.label; // the definition changed meanwhile
      if (step.kind === "bucket") {
        const entries = args.filter(Array.isArray);
        const weight = (e) => (typeof e[1] === "number" ? Math.max(0, e[1]) : 1);
        const total = entries.reduce((sum, e) => sum + weight(e), 0) || 1;
        const variant = args[index]?.[0];
        const share = entries.filter((e) => e[0] === variant).reduce((sum, e) => sum + weight(e), 0);
        return `split → ${rule(variant)} (${Math.round((share / total) * 100)}%)`;
      }
      const head = step.kind === "if" ? `if ${rule(args[index - 1])}` : "else";
      return last ? `${head} → ${outcome(args[index], flag)}` : head;
    })
    .join(" › ");
}

/** One flag's answer: value, variant and reason (or the error), and which rule matched. */
function resultItem(f, flag, overridden) {
  const failed = Boolean(f.errorCode);
  const answer = failed
    ? [el("span", { class: "outcome", text: `error ${f.errorCode}` }), el("span", { class: "details", text: f.errorDetails ?? "" })]
    : f.value === undefined
      ? el("span", { class: "outcome", text: `no value (${f.reason})` })
      : [el("code", { text: json(f.value) }), " ", el("span", { class: "reason", text: `(variant ${f.variant}, ${f.reason})` })];
  const why = overridden
    ? "the override"
    : f.matched && flag
      ? matchedText(f.matched, flag)
      : !failed && f.reason === "STATIC"
        ? "no targeting"
        : null;
  return el(
    "li",
    { class: failed ? "error" : null, "data-flag": f.key },
    el("strong", { text: f.key }),
    " → ",
    answer,
    overridden ? [" ", el("span", { class: "why override", text: "override" })] : null,
    why ? el("span", { class: "matched" }, "Matched: ", el("code", { text: why })) : null,
  );
}

async function evaluate(event) {
  event.preventDefault();
  const error = $("pg-error");
  const list = $("pg-results");
  error.textContent = "";
  let context;
  try {
    context = JSON.parse($("pg-context").value || "{}");
  } catch (e) {
    error.textContent = `The context is not valid JSON: ${e.message}`;
    list.hidden = true; // results of another context must not look like this one's
    return;
  }
  try {
    const envName = $("pg-env").value;
    const result = await api("POST", `/environments/${enc(envName)}/evaluate`, context);
    const flags = new Map((state.environments.find((e) => e.name === envName)?.flags ?? []).map((f) => [f.key, f]));
    list.replaceChildren(...result.flags.map((f) => resultItem(f, flags.get(f.key), Boolean(flags.get(f.key)?.override))));
    list.hidden = false;
  } catch (e) {
    list.hidden = true;
    if (e.status !== 401) error.textContent = e.message;
  }
}

// ---- start ----

function onTabKey(event) {
  const names = state.environments.map((e) => e.name);
  const i = names.indexOf(state.current);
  const next = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: names.length - 1 }[event.key];
  if (next === undefined || names.length === 0) return;
  event.preventDefault();
  selectEnv(names[(next + names.length) % names.length], true);
}

function start() {
  state.token = takeToken();
  if (!state.token) return showLogin();
  $("login").hidden = true;
  $("app").hidden = false;
  stream();
}

$("login").addEventListener("submit", (event) => {
  event.preventDefault();
  sessionStorage.setItem(TOKEN_KEY, $("token-input").value.trim());
  $("token-input").value = "";
  start();
});
$("tabs").addEventListener("keydown", onTabKey);
$("search").addEventListener("input", (e) => {
  state.search = e.target.value.trim();
  renderFlags();
});
$("reset-all").addEventListener("click", () => {
  const env = state.current;
  act(`${env}: all overrides reset`, () => api("DELETE", `/environments/${enc(env)}/overrides`));
});
$("playground").addEventListener("submit", evaluate);
for (const button of document.querySelectorAll("[data-view]")) button.addEventListener("click", () => chooseView(button.dataset.view));
$("session-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const id = $("session-id").value.trim();
  if (id) watchSession(id);
});
$("session-stop").addEventListener("click", () => watchSession(null));
$("session-id").addEventListener("focus", suggestSessions);
start();
