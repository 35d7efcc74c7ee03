// Records page: matches and games; replay a game ply by ply; export text / JSON.
import { adoptToken, checkRole, describeResult, drawBoard, getJSON, setText, toast } from "./omweso.js";

let game = null;
let ply = 0;

function gameLink(g, match) {
  const a = document.createElement("a");
  a.href = `#game-${g.id}`;
  a.dataset.gameId = String(g.id);
  const result = g.result ? ` — ${describeResult(g.result, { match })}` : ` — ${g.status}`;
  a.textContent = `Game ${g.number} (${g.ply_count} plies)${result}`;
  a.addEventListener("click", (event) => { event.preventDefault(); openGame(g.id); });
  return a;
}

async function loadMatches() {
  const box = document.getElementById("matches");
  try {
    const data = await getJSON("/api/matches");
    const nodes = [];
    for (const match of data.matches) {
      const section = document.createElement("div");
      section.className = "match";
      const h = document.createElement("h3");
      h.textContent = `#${match.id} ${match.south} (S) ${match.points.S} – ${match.points.N} ${match.north} (N) · ${match.rules} · ${match.mode}`;
      const list = document.createElement("ul");
      for (const g of match.games) {
        const li = document.createElement("li");
        li.appendChild(gameLink(g, match));
        list.appendChild(li);
      }
      section.append(h, list);
      nodes.push(section);
    }
    if (data.games.length) {
      const h = document.createElement("h3");
      h.textContent = "Games outside a match";
      const list = document.createElement("ul");
      for (const g of data.games) {
        const li = document.createElement("li");
        li.appendChild(gameLink(g, null));
        list.appendChild(li);
      }
      nodes.push(h, list);
    }
    if (!nodes.length) {
      const p = document.createElement("p");
      p.textContent = "No recorded games yet.";
      nodes.push(p);
    }
    box.replaceChildren(...nodes);
  } catch (error) {
    box.textContent = `Could not load records: ${error.message}`;
  }
}

async function openGame(id) {
  try {
    game = await getJSON(`/api/games/${id}`);
  } catch (error) {
    toast(error.message, true);
    return;
  }
  document.getElementById("replay").hidden = false;
  setText("replay-title", `Game ${game.number} · ${game.rules}`);
  document.getElementById("export-text").href = `/api/games/${id}/export?fmt=text`;
  document.getElementById("export-json").href = `/api/games/${id}/export?fmt=json`;
  setText("replay-result", game.result ? describeResult(game.result, null) : game.status);
  const slider = document.getElementById("ply-slider");
  slider.max = String(game.plies.length);
  const list = document.getElementById("replay-moves");
  list.replaceChildren(...game.plies.map((p) => {
    const li = document.createElement("li");
    li.value = p.n;
    li.textContent = `${p.side} ${p.move}`;
    li.addEventListener("click", () => show(p.n));
    return li;
  }));
  const events = document.getElementById("replay-events");
  events.replaceChildren(...(game.events || []).map((e) => {
    const li = document.createElement("li");
    const where = e.where ? ` (${e.where})` : "";
    li.textContent = `${e.kind.replaceAll("_", " ")}${e.frame === null || e.frame === undefined ? "" : ` at frame ${e.frame}`}${where}`;
    return li;
  }));
  if (!events.children.length) events.textContent = "none";
  show(game.plies.length);
  history.replaceState(null, "", `#game-${id}`);
  loadMatches(); // games go on while the page is open: the list agrees with the game just opened
}

function show(n) {
  if (!game) return;
  ply = Math.max(0, Math.min(n, game.plies.length));
  const entry = ply === 0 ? null : game.plies[ply - 1];
  const rows = entry ? entry.board : game.board;
  const side = entry ? (entry.side === "S" ? "N" : "S") : null;
  drawBoard(document.getElementById("replay-board"), rows, { toMove: side });
  document.getElementById("ply-slider").value = String(ply);
  setText("ply-label", entry ? `ply ${ply}: ${entry.side} ${entry.move}` : "set-up");
  document.querySelectorAll("#replay-moves li").forEach((li, i) => li.classList.toggle("active", i === ply - 1));
}

function wire() {
  document.getElementById("btn-first").addEventListener("click", () => show(0));
  document.getElementById("btn-prev").addEventListener("click", () => show(ply - 1));
  document.getElementById("btn-next").addEventListener("click", () => show(ply + 1));
  document.getElementById("btn-last").addEventListener("click", () => show(game ? game.plies.length : 0));
  document.getElementById("ply-slider").addEventListener("input", (e) => show(Number(e.target.value)));
  document.addEventListener("keydown", (e) => {
    if (e.key === "ArrowLeft") show(ply - 1);
    if (e.key === "ArrowRight") show(ply + 1);
  });
}

adoptToken();
checkRole();
document.getElementById("connection").hidden = true;
wire();
loadMatches().then(() => {
  const match = /^#game-(\d+)$/.exec(window.location.hash);
  if (match) openGame(Number(match[1]));
});
