// Overlay for OBS browser sources: transparent page with board, score, move in progress, last move.
import { describeProgress, drawBoard, followState, progressMarks, setText, sideName } from "./omweso.js";

function render(state) {
  for (const side of ["S", "N"]) {
    setText(`name-${side}`, sideName(state, side));
    setText(`points-${side}`, state.match ? state.match.points[side] : "–");
  }
  setText("ov-turn", state.side_to_move && state.phase === "playing" ? `${state.side_to_move} to move` : state.phase.replaceAll("_", " "));
  drawBoard(document.getElementById("board"), state.board, {
    marks: progressMarks(state.in_progress), toMove: state.side_to_move, labels: false, compact: true,
  });
  const progress = document.getElementById("in-progress");
  progress.hidden = !state.in_progress;
  progress.textContent = describeProgress(state);
  setText("last-move", state.last_move ? `${state.last_move.side} ${state.last_move.move}` : "");
  document.getElementById("alarm").hidden = !state.alarm;
}

followState(render);
