// Set-up page: start a match, and correct + confirm the set-up read from the camera.
import { action, adoptToken, checkRole, drawBoard, followState, getJSON, setText, squareName, toast } from "./omweso.js";

let current = null;
let edited = false; // the referee changed the grid: do not overwrite it with new readings

const STANDARD = [
  [4, 4, 4, 4, 4, 4, 4, 4], [0, 0, 0, 0, 0, 0, 0, 0],
  [0, 0, 0, 0, 0, 0, 0, 0], [4, 4, 4, 4, 4, 4, 4, 4],
];

// Phases in which there is no set-up to confirm (the server refuses one then), and why.
const UNDER_WAY = "This game is under way: its set-up was confirmed. The next game's set-up is confirmed here when it ends.";
const CLOSED = {
  no_match: "Start a match first (New match).",
  playing: UNDER_WAY,
  illegal: UNDER_WAY,
  match_over: "The match is over: start a new one (New match).",
};

function buildTable() {
  const table = document.getElementById("setup-table");
  const head = document.createElement("tr");
  head.appendChild(document.createElement("th"));
  for (const file of "abcdefgh") {
    const th = document.createElement("th");
    th.textContent = file;
    head.appendChild(th);
  }
  table.appendChild(head);
  for (let r = 0; r < 4; r++) {
    const tr = document.createElement("tr");
    tr.className = r < 2 ? "north" : "south";
    const th = document.createElement("th");
    th.textContent = String(4 - r);
    tr.appendChild(th);
    for (let c = 0; c < 8; c++) {
      const td = document.createElement("td");
      const input = document.createElement("input");
      input.type = "number";
      input.min = "0";
      input.max = "64";
      input.value = "0";
      input.name = squareName(r, c);
      input.setAttribute("aria-label", squareName(r, c));
      input.addEventListener("input", () => { edited = true; updateTotals(); });
      td.appendChild(input);
      tr.appendChild(td);
    }
    table.appendChild(tr);
  }
}

function gridRows() {
  const rows = [];
  for (let r = 0; r < 4; r++) {
    const row = [];
    for (let c = 0; c < 8; c++) {
      const value = Number.parseInt(document.querySelector(`input[name="${squareName(r, c)}"]`).value, 10);
      row.push(Number.isFinite(value) ? value : 0);
    }
    rows.push(row);
  }
  return rows;
}

function fillGrid(rows) {
  for (let r = 0; r < 4; r++) {
    for (let c = 0; c < 8; c++) {
      document.querySelector(`input[name="${squareName(r, c)}"]`).value = String(rows[r][c]);
    }
  }
  edited = false;
  updateTotals();
}

function updateTotals() {
  const rows = gridRows();
  const sum = (a) => a.reduce((x, y) => x + y, 0);
  const north = sum(rows[0]) + sum(rows[1]);
  const south = sum(rows[2]) + sum(rows[3]);
  const totals = document.getElementById("setup-totals");
  totals.textContent = `South ${south} / 32 · North ${north} / 32`;
  // Mid-game the camera's board is no set-up: its totals are not wrong, only shown.
  const closed = current && CLOSED[current.phase];
  totals.classList.toggle("bad", !closed && (north !== 32 || south !== 32));
  drawBoard(document.getElementById("setup-board"), rows, { toMove: current ? current.side_to_move : null });
}

function render(state) {
  current = state;
  setText("setup-phase", state.phase.replaceAll("_", " "));
  const closed = CLOSED[state.phase];
  document.getElementById("btn-confirm").disabled = Boolean(closed);
  const note = document.getElementById("setup-closed");
  note.hidden = !closed;
  note.textContent = closed || "";
  const setup = state.setup;
  const problems = document.getElementById("setup-problems");
  problems.replaceChildren(...((setup && setup.problems) || []).map((p) => {
    const li = document.createElement("li");
    li.textContent = p;
    return li;
  }));
  if (!edited) {
    const rows = setup && setup.observed ? setup.observed : state.observed;
    if (rows) fillGrid(rows);
    else updateTotals();
  }
}

function positionText() {
  const side = current && current.side_to_move ? current.side_to_move : "S";
  return gridRows().map((row) => row.join(",")).join("/") + ` ${side} 0 0:0`;
}

function wire() {
  document.getElementById("form-match").addEventListener("submit", (event) => {
    event.preventDefault();
    const form = new FormData(event.target);
    let options;
    try {
      options = JSON.parse(String(form.get("options") || "{}"));
    } catch (error) {
      toast(`Options are not valid JSON: ${error.message}`, true);
      return;
    }
    const body = {
      south: form.get("south"), north: form.get("north"), rules: form.get("rules"),
      options, mode: form.get("mode"), first: form.get("first"),
    };
    action("/api/match", body, (state) => { edited = false; render(state); }, "Match started");
  });
  document.getElementById("form-setup").addEventListener("submit", (event) => {
    event.preventDefault();
    action("/api/setup/confirm", { position: positionText() }, (state) => { edited = false; render(state); }, "Set-up confirmed");
  });
  document.getElementById("btn-reload").addEventListener("click", () => {
    edited = false;
    if (current) render(current);
  });
  document.getElementById("btn-standard").addEventListener("click", () => {
    fillGrid(STANDARD);
    edited = true;
  });
  const select = document.getElementById("rules-select");
  const showPreset = (presets) => {
    const preset = presets.find((p) => p.name === select.value);
    setText("preset-options", preset ? JSON.stringify(preset.options, null, 1) : "");
  };
  getJSON("/api/rules").then((data) => {
    showPreset(data.presets);
    select.addEventListener("change", () => showPreset(data.presets));
  }).catch(() => setText("preset-options", "(rules engine not available)"));
}

adoptToken();
checkRole();
buildTable();
wire();
followState(render);
