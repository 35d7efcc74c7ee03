// Shared by every dashboard page: referee token, JSON API calls, live events, the SVG board.
// Plain ES module, no build step, nothing loaded from other origins.

const TOKEN_KEY = "omweso-referee-token";
const FILES = "abcdefgh";
const SVG_NS = "http://www.w3.org/2000/svg";

// ---------------------------------------------------------------- referee token

/** Take ?token= from the address bar once, keep it in sessionStorage, and hide it from the URL. */
export function adoptToken() {
  const url = new URL(window.location.href);
  const fromUrl = url.searchParams.get("token");
  if (fromUrl) {
    sessionStorage.setItem(TOKEN_KEY, fromUrl);
    url.searchParams.delete("token");
    history.replaceState(null, "", url.pathname + url.search + url.hash);
  }
  return sessionStorage.getItem(TOKEN_KEY);
}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

/** Ask the server whether our token is the referee's; marks <body> .referee or .viewer. */
export async function checkRole() {
  const headers = {};
  const t = token();
  if (t) headers["X-Referee-Token"] = t;
  let referee = false;
  try {
    const response = await fetch("/api/referee", { headers, cache: "no-store" });
    referee = response.ok && (await response.json()).referee === true;
  } catch (_) {
    referee = false;
  }
  if (t && !referee) {
    // A token from an earlier run (the server makes a new one at each start) or a typo.
    sessionStorage.removeItem(TOKEN_KEY);
    toast("The referee token was not accepted (the server may have restarted): open the new referee URL.", true);
  }
  document.body.classList.toggle("referee", referee);
  document.body.classList.toggle("viewer", !referee);
  const role = document.getElementById("role");
  if (role) {
    role.textContent = referee ? "referee" : "viewer (read-only)";
    role.classList.toggle("is-referee", referee);
  }
  return referee;
}

// ---------------------------------------------------------------- API

export async function getJSON(path) {
  const response = await fetch(path, { cache: "no-store" });
  if (!response.ok) throw new Error(await errorText(response));
  return response.json();
}

/** POST a JSON body with the referee token; returns the parsed reply or throws Error(message). */
export async function post(path, body = {}) {
  const response = await fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Referee-Token": token() || "" },
    body: JSON.stringify(body),
    cache: "no-store",
  });
  if (!response.ok) throw new Error(await errorText(response));
  return response.json();
}

async function errorText(response) {
  try {
    const data = await response.json();
    return data.error || `${response.status} ${response.statusText}`;
  } catch (_) {
    return `${response.status} ${response.statusText}`;
  }
}

export function toast(message, isError = false) {
  const box = document.getElementById("toast");
  if (!box) return;
  box.textContent = message;
  box.classList.toggle("error", isError);
  box.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { box.hidden = true; }, isError ? 8000 : 3000);
}

/** Run a referee action: POST, show the outcome, hand the new state to onState. */
export async function action(path, body, onState, doneMessage) {
  try {
    const reply = await post(path, body);
    if (doneMessage) toast(doneMessage);
    if (onState && reply.state) onState(reply.state);
    return reply;
  } catch (error) {
    toast(error.message, true);
    return null;
  }
}

// ---------------------------------------------------------------- live state

/** Fetch /api/state, then follow /events; calls onState(state) on every snapshot. */
export function followState(onState) {
  const status = document.getElementById("connection");
  const setStatus = (text, ok) => {
    if (!status) return;
    status.textContent = text;
    status.classList.toggle("ok", ok);
  };
  const source = new EventSource("/events");
  source.addEventListener("open", () => setStatus("live", true));
  source.addEventListener("error", () => setStatus("reconnecting…", false));
  source.addEventListener("state", (event) => onState(JSON.parse(event.data)));
  return source;
}

// ---------------------------------------------------------------- board

export function squareName(row, col) {
  return FILES[col] + String(4 - row);
}

export function rowsFromCounts(counts) {
  const rows = [];
  for (let r = 0; r < 4; r++) rows.push(counts.slice(r * 8, r * 8 + 8));
  return rows;
}

function el(name, attrs = {}, text) {
  const node = document.createElementNS(SVG_NS, name);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = String(text);
  return node;
}

/**
 * Draw a board (4 ranks 4..1 of 8 counts) as SVG into container.
 * opts: marks {square: class} (e.g. "differs", "current", "next", "origin", "landing", "misread"),
 *       notes {square: text} (added to the pit's tooltip), toMove "S"|"N",
 *       labels (file/rank letters, default true), compact.
 */
export function drawBoard(container, rows, opts = {}) {
  const marks = opts.marks || {};
  const labels = opts.labels !== false;
  const cell = 100;
  const pad = labels ? 34 : 8;
  const gap = 18;
  const width = pad + 8 * cell + 8;
  const height = 8 + 4 * cell + gap + (labels ? 34 : 8);
  const svg = el("svg", {
    viewBox: `0 0 ${width} ${height}`,
    class: "board-svg" + (opts.compact ? " compact" : ""),
    role: "img",
    "aria-label": "Omweso board",
  });
  svg.appendChild(el("rect", { x: 0, y: 0, width, height, rx: 18, class: "board-wood" }));
  for (let r = 0; r < 4; r++) {
    const y0 = 8 + r * cell + (r >= 2 ? gap : 0);
    const side = r < 2 ? "N" : "S";
    svg.appendChild(el("rect", {
      x: pad - 4, y: y0 + 2, width: 8 * cell + 8, height: cell - 4, rx: 12,
      class: `row-band band-${side}` + (opts.toMove === side ? " to-move" : ""),
    }));
    if (labels) svg.appendChild(el("text", { x: pad / 2, y: y0 + cell / 2 + 8, class: "coord" }, 4 - r));
    for (let c = 0; c < 8; c++) {
      const square = squareName(r, c);
      const count = rows && rows[r] ? rows[r][c] : null;
      const cx = pad + c * cell + cell / 2;
      const cy = y0 + cell / 2;
      const group = el("g", { class: "pit " + (marks[square] || ""), "data-square": square });
      const note = opts.notes && opts.notes[square] ? ` (${opts.notes[square]})` : "";
      group.appendChild(el("title", {}, `${square}: ${count ?? "?"}${note}`));
      group.appendChild(el("circle", { cx, cy, r: cell * 0.4, class: "pit-hole" }));
      const shown = Math.min(count || 0, 12);
      for (let i = 0; i < shown; i++) {
        const angle = (i / shown) * 2 * Math.PI + r + c;
        const radius = shown === 1 ? 0 : cell * 0.24;
        group.appendChild(el("circle", {
          cx: (cx + radius * Math.cos(angle)).toFixed(1),
          cy: (cy + radius * Math.sin(angle)).toFixed(1),
          r: 7, class: "seed",
        }));
      }
      group.appendChild(el("text", { x: cx, y: cy + 14, class: "count" }, count ?? "?"));
      svg.appendChild(group);
    }
  }
  if (labels) {
    for (let c = 0; c < 8; c++) {
      svg.appendChild(el("text", { x: pad + c * cell + cell / 2, y: height - 10, class: "coord" }, FILES[c]));
    }
  }
  container.replaceChildren(svg);
  return svg;
}

/** Marks for a move in progress: the pit being sown and the expected continuation. */
export function progressMarks(progress) {
  const marks = {};
  if (!progress) return marks;
  for (const square of progress.continuation || []) marks[square] = "next";
  if (progress.pit) marks[progress.pit] = "current";
  return marks;
}

export function sideName(state, side) {
  if (state && state.match) return side === "S" ? state.match.south : state.match.north;
  return side === "S" ? "South" : "North";
}

export function describeProgress(state) {
  const p = state.in_progress;
  if (!p) return "";
  const parts = [`Move in progress: lap ${p.lap}`];
  if (p.pit) parts.push(`sowing ${p.pit}`);
  parts.push(`${p.in_hand} in hand`);
  let text = parts.join(", ");
  if (p.continuation && p.continuation.length) text += ` · next: ${p.continuation.join(" ")}`;
  if (p.moves && p.moves.length) text += ` · possible: ${p.moves.join(", ")}`;
  return text;
}

export function describeResult(result, state) {
  if (!result) return "";
  const how = (result.how || "").replaceAll("_", " ");
  return `${sideName(state, result.winner)} wins (${how}, ${result.points} point${result.points === 1 ? "" : "s"})`;
}

export function setText(id, text) {
  const node = document.getElementById(id);
  if (node) node.textContent = text;
  return node;
}
