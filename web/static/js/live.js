// Live page: camera stream, board, alarm with the referee's answers, move in progress, moves, score.
import {
  action, adoptToken, checkRole, describeProgress, describeResult, drawBoard, followState,
  progressMarks, setText, sideName,
} from "./omweso.js";

let current = null;
let clockBase = null; // {seconds, at} to count the clock up between snapshots
let animation = null;

function render(state) {
  current = state;
  renderAlarm(state);
  renderScore(state);
  renderBoard(state);
  renderLastMove(state);
  renderMoves(state);
  const since = state.clocks ? state.clocks.since_last_move_s : null;
  clockBase = since === null || since === undefined ? null : { seconds: since, at: performance.now() };
  renderClock();
}

function renderAlarm(state) {
  const box = document.getElementById("alarm");
  const alarm = state.alarm;
  box.hidden = !alarm;
  document.body.classList.toggle("alarmed", Boolean(alarm));
  if (!alarm) return;
  // The differing pits are counted against the nearest legal board (a move's result, or a
  // part-way board with seeds still in hand): marked there and on the observed board. The
  // last legal position, what "Board restored" means, is shown unmarked.
  const marks = {};
  for (const square of alarm.differs || []) marks[square] = "differs";
  drawBoard(document.getElementById("alarm-observed"), alarm.observed, { marks });
  const nearest = alarm.nearest;
  document.getElementById("alarm-nearest-figure").hidden = !nearest;
  if (nearest) {
    const moves = (nearest.moves || []).join(" or ");
    const what = nearest.part_way ? `${moves}, part-way (seeds still in hand)` : moves;
    setText("alarm-nearest-caption", `Nearest legal board${what ? `: ${what}` : ""}`);
    drawBoard(document.getElementById("alarm-nearest"), nearest.board, { marks });
  }
  drawBoard(document.getElementById("alarm-expected"), alarm.expected, {});
  const where = alarm.where ? ` Went wrong at ${alarm.where}.` : "";
  const differs = (alarm.differs || []).join(", ") || "none";
  const small = alarm.counts_distrusted
    ? " Read on a board small in the picture, whose counts have fitted the game so far: check those pits by eye."
    : "";
  setText("alarm-summary", `Frame ${alarm.frame}: the board matches no legal move.${where} Differing pits (from the nearest legal board): ${differs}.${small}`);
  const list = document.getElementById("alarm-closest");
  list.replaceChildren(...(alarm.closest || []).map((c) => {
    const item = document.createElement("li");
    item.textContent = `${c.move} (distance ${Number(c.distance).toFixed(1)})`;
    item.title = c.after;
    return item;
  }));
}

function renderScore(state) {
  for (const side of ["S", "N"]) {
    setText(`name-${side}`, sideName(state, side));
    setText(`points-${side}`, state.match ? state.match.points[side] : "–");
    document.querySelector(`.side-${side}`).classList.toggle("to-move", state.side_to_move === side && state.phase === "playing");
  }
  setText("phase", state.phase.replaceAll("_", " "));
  setText("game-number", state.match ? `game ${state.match.game_number} · to ${state.match.target}` : "");
  setText("mode", `${state.mode} · ${state.rules}`);
  setText("camera", state.camera);
  const cameraDetail = document.getElementById("camera-detail");
  cameraDetail.textContent = state.camera_detail || "";
  cameraDetail.hidden = !state.camera_detail;
  const notice = document.getElementById("notice");
  const hints = {
    no_match: "No match yet: the referee starts one on the Set-up page.",
    setup: "Set-up: the referee checks the board read by the camera and confirms it on the Set-up page.",
  };
  // "error" is an optional key: the camera loop stopped on an unexpected error.
  const corrected = state.setup_corrected
    ? `The camera misread the set-up; corrected at frame ${state.setup_corrected.frame} (the moves stand, ` +
      `their positions changed). Set-up now ${state.setup_corrected.position}, read as ${state.setup_corrected.was}.`
    : "";
  // "unexplained": the camera reads pits of the side not to move as no sowing leaves them, or fewer
  // seeds than the board holds by more than a hand can hold (a misread): the tracker waits for a
  // reading it can explain instead of raising an alarm.
  let unexplained = "";
  if (state.unexplained) {
    const why = state.unexplained.seeds_seen !== undefined
      ? `The camera sees only ${state.unexplained.seeds_seen} of the board's 64 seeds, more gone than a hand ` +
        "can hold: taken for a misread (check the light, the focus and that nothing covers the board)"
      : `The camera reads ${state.unexplained.squares.join(", ")} as no sowing leaves them: taken for a misread`;
    unexplained = `${why}, not an illegal sowing; the move is followed once the camera reads the board right.`;
  }
  const text = state.error ? `Camera loop stopped: ${state.error}` : hints[state.phase] || unexplained || corrected;
  notice.hidden = !text;
  notice.textContent = text;
  const banner = document.getElementById("result");
  banner.hidden = !state.result;
  banner.textContent = state.result
    ? describeResult(state.result, state) + (state.phase === "match_over" ? " — match over" : "")
    : "";
}

/** Pits the tracker knows the camera misreads (it learnt them while nothing touched the board): the
 * position stands, the pit is marked with what the camera reads. */
function misreadNotes(state) {
  if (!state.board || state.in_progress || state.alarm) return {};
  const notes = {};
  for (const [square, reads] of Object.entries(state.misreads || {})) notes[square] = `camera reads ${reads}`;
  return notes;
}

function renderBoard(state) {
  const marks = progressMarks(state.in_progress);
  const notes = misreadNotes(state);
  for (const square of Object.keys(notes)) marks[square] = ((marks[square] || "") + " misread").trim();
  // Before the set-up is confirmed there is no position: show what the camera reads instead.
  const reading = state.board ? null : (state.setup && state.setup.observed) || state.observed;
  drawBoard(document.getElementById("board"), state.board || reading, { marks, notes, toMove: state.side_to_move });
  const turn = state.side_to_move ? `${sideName(state, state.side_to_move)} (${state.side_to_move}) to move` : "";
  setText("turn", reading ? `camera reading, not confirmed · ${turn}` : turn);
  const panel = document.getElementById("in-progress");
  panel.hidden = !state.in_progress;
  panel.textContent = describeProgress(state);
}

function renderLastMove(state) {
  const box = document.getElementById("last-move");
  const move = state.last_move;
  if (!move) {
    box.textContent = "none yet";
    return;
  }
  const title = document.createElement("p");
  title.className = "last-title";
  title.textContent = `${sideName(state, move.side)} played ${move.move}`;
  const table = document.createElement("table");
  table.className = "laps";
  table.innerHTML = "<thead><tr><th>#</th><th>lap</th><th>from</th><th>dir</th><th>hand</th><th>landing</th><th>then</th><th>captured</th></tr></thead>";
  const body = document.createElement("tbody");
  move.laps.forEach((lap, i) => {
    const tr = document.createElement("tr");
    for (const value of [i + 1, lap.kind, lap.origin, lap.direction, lap.hand, lap.landing, lap.then, lap.captured ?? ""]) {
      const td = document.createElement("td");
      td.textContent = String(value ?? "");
      tr.appendChild(td);
    }
    body.appendChild(tr);
  });
  table.appendChild(body);
  box.replaceChildren(title, table);
  animateLaps(move);
}

// Step through the laps of a new last move: highlight each lap's origin and landing pit.
function animateLaps(move) {
  const key = JSON.stringify(move);
  if (animation && animation.key === key) return;
  if (animation) clearInterval(animation.timer);
  let i = 0;
  const step = () => {
    // The table is rebuilt on every state snapshot: look its rows up afresh.
    const rows = document.querySelectorAll("#last-move table.laps tbody tr");
    if (i >= move.laps.length || !current || current.in_progress || current.alarm) {
      clearInterval(animation.timer);
      rows.forEach((r) => r.classList.remove("active"));
      if (current) renderBoard(current);
      return;
    }
    const lap = move.laps[i];
    rows.forEach((r, j) => r.classList.toggle("active", j === i));
    const marks = { [lap.origin]: "origin", [lap.landing]: "landing" };
    drawBoard(document.getElementById("board"), current.board, { marks, toMove: current.side_to_move });
    i += 1;
  };
  animation = { key, timer: setInterval(step, 900) };
}

function renderMoves(state) {
  // The plies listed are the current game's, or the game just ended (until the next one begins).
  document.getElementById("btn-take-back").disabled = !state.plies.length;
  const list = document.getElementById("moves");
  list.replaceChildren(...state.plies.map((ply) => {
    const item = document.createElement("li");
    item.value = ply.n;
    item.textContent = `${ply.side} ${ply.move}`;
    item.title = ply.after;
    return item;
  }));
  list.scrollTop = list.scrollHeight;
}

function renderClock() {
  const clock = document.getElementById("clock");
  if (!current || !current.clocks || !clockBase) {
    clock.textContent = "";
    clock.classList.remove("warn");
    return;
  }
  const c = current.clocks;
  const running = current.phase === "playing" && !current.alarm;
  const seconds = clockBase.seconds + (running ? (performance.now() - clockBase.at) / 1000 : 0);
  const m = Math.floor(seconds / 60);
  const s = Math.floor(seconds % 60).toString().padStart(2, "0");
  let text = `${m}:${s} since last move`;
  if (c.late_start) text += " · LATE START";
  if (c.overtime) text += " · OVERTIME";
  clock.textContent = text;
  clock.classList.toggle("warn", Boolean(c.late_start || c.overtime));
}

function wire() {
  document.getElementById("btn-restored").addEventListener("click", () =>
    action("/api/alarm/board-restored", {}, render, "Board restored"));
  document.getElementById("btn-accept").addEventListener("click", () => {
    if (confirm("Accept the observed board as the new position?")) {
      action("/api/alarm/accept-observed", {}, render, "Observed board accepted");
    }
  });
  document.getElementById("btn-take-back").addEventListener("click", () => {
    const last = current && current.plies.length ? current.plies[current.plies.length - 1] : null;
    if (last && confirm(`Take back ${last.side} ${last.move}? The game goes back to the position before it ` +
                        "(the record keeps the move as a take-back event).")) {
      action("/api/take-back", {}, render, `${last.side} ${last.move} taken back`);
    }
  });
  document.getElementById("form-correct").addEventListener("submit", (event) => {
    event.preventDefault();
    const square = document.getElementById("correct-square").value.trim().toLowerCase();
    const count = Number.parseInt(document.getElementById("correct-count").value, 10);
    action("/api/correct-pit", { square, count }, render, `Pit ${square} corrected`);
  });
  // Reload the video if the stream drops (server restart, network).
  const video = document.getElementById("video");
  video.addEventListener("error", () => setTimeout(() => { video.src = `/video/stream.mjpg?r=${Date.now()}`; }, 3000));
  setInterval(renderClock, 1000);
}

adoptToken();
checkRole();
wire();
followState(render);
