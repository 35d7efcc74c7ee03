// Calibration page: click the four board corners (TL, TR, BR, BL) on a still frame, then save.
import { action, adoptToken, checkRole, followState, setText } from "./omweso.js";

const NAMES = ["top-left", "top-right", "bottom-right", "bottom-left"];
const SVG_NS = "http://www.w3.org/2000/svg";
const image = document.getElementById("calib-image");
const overlay = document.getElementById("calib-overlay");
let points = [];
let detected = null;

function loadStill() {
  image.src = `/video/raw.jpg?t=${Date.now()}`;
}

function draw() {
  const w = image.naturalWidth || 1;
  const h = image.naturalHeight || 1;
  overlay.setAttribute("viewBox", `0 0 ${w} ${h}`);
  const nodes = [];
  const radius = Math.max(w, h) / 120;
  if (points.length > 1) {
    const poly = document.createElementNS(SVG_NS, points.length === 4 ? "polygon" : "polyline");
    poly.setAttribute("points", points.map((p) => p.join(",")).join(" "));
    poly.setAttribute("class", "calib-quad");
    poly.setAttribute("stroke-width", String(radius / 2));
    nodes.push(poly);
  }
  points.forEach(([x, y], i) => {
    const dot = document.createElementNS(SVG_NS, "circle");
    dot.setAttribute("cx", String(x));
    dot.setAttribute("cy", String(y));
    dot.setAttribute("r", String(radius));
    dot.setAttribute("class", "calib-dot");
    dot.setAttribute("stroke-width", String(radius / 4));
    const label = document.createElementNS(SVG_NS, "text");
    label.setAttribute("x", String(x + radius * 1.5));
    label.setAttribute("y", String(y - radius * 1.5));
    label.setAttribute("font-size", String(radius * 3));
    label.setAttribute("class", "calib-label");
    label.setAttribute("stroke-width", String(radius / 3));
    label.textContent = ["TL", "TR", "BR", "BL"][i];
    nodes.push(dot, label);
  });
  overlay.replaceChildren(...nodes);
  setText("calib-next", points.length < 4 ? `Next: ${NAMES[points.length]}.` : "All four corners set.");
  setText("calib-points", points.map((p, i) => `${["TL", "TR", "BR", "BL"][i]} (${p[0].toFixed(1)}, ${p[1].toFixed(1)})`).join("  "));
  document.getElementById("btn-save").disabled = points.length !== 4;
}

function onClick(event) {
  if (points.length >= 4 || !image.naturalWidth) return;
  const box = image.getBoundingClientRect();
  const x = ((event.clientX - box.left) / box.width) * image.naturalWidth;
  const y = ((event.clientY - box.top) / box.height) * image.naturalHeight;
  points.push([Math.round(x * 10) / 10, Math.round(y * 10) / 10]);
  draw();
}

function render(state) {
  // Auto-detected corners, when the session reports them (optional state key "corners_px").
  detected = Array.isArray(state.corners_px) && state.corners_px.length === 4 ? state.corners_px : null;
  document.getElementById("btn-detected").hidden = !detected;
}

function wire() {
  image.addEventListener("load", () => {
    document.getElementById("calib-missing").hidden = true;
    document.getElementById("calib-wrap").hidden = false;
    draw();
  });
  image.addEventListener("error", () => {
    document.getElementById("calib-missing").hidden = false;
    document.getElementById("calib-wrap").hidden = true;
  });
  overlay.addEventListener("click", onClick);
  document.getElementById("btn-refresh").addEventListener("click", loadStill);
  document.getElementById("btn-undo").addEventListener("click", () => { points.pop(); draw(); });
  document.getElementById("btn-clear").addEventListener("click", () => { points = []; draw(); });
  document.getElementById("btn-detected").addEventListener("click", () => {
    if (detected) points = detected.map((p) => [Number(p[0]), Number(p[1])]);
    draw();
  });
  document.getElementById("btn-save").addEventListener("click", () =>
    action("/api/calibration", { corners_px: points }, null, "Calibration saved"));
}

adoptToken();
checkRole();
wire();
loadStill();
followState(render);
