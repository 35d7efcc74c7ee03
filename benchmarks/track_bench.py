"""Tracking benchmark: moves recovered, illegal sowings flagged, robustness to noise, speed.

Run: ``.venv/bin/python benchmarks/track_bench.py [--fresh 6] [--games 40] [--positions 1000]``

Sections (each prints a table):

1. Simulated games (readings straight from the rules, optional noise): every move
   recovered? false alarms? moves committed on hand frames? pauses mid-move?
2. Robustness curve: per-pit count errors (``off_by_one_rate`` of pits off by one,
   heaps over 10 off by up to ``heap_max_error``), the simulated reader reporting
   likelihoods calibrated to that noise. One reading per move (reconcile alone) and
   whole games through the Tracker (which averages the stable frames of a scene).
   "unique" = the true successor beats every other legal board by the ambiguity margin
   under the noisy reading; recovery among those must be 100 %.
3. Rendered game sequences (``sample_images/sequences/*`` plus ``--fresh`` new ones, each
   with new random seeds; the styles take turns: the held-out ``unseen`` style, then
   ``default`` and ``randomised`` scenes the code has never seen): the full pipeline (stability +
   reader + tracker) and, to separate vision from tracking, the tracker fed with the
   renderer's true counts ("oracle" readings).
4. Speed: `track` frames/s on a 1280x720 sequence on one core; cost of the sowing states
   of all legal moves for 1,000 mid-game positions.

Tracker experiments without the reader: ``--save-readings DIR`` keeps every film's readings
(one folder per film: its truth and an .npz per kind of reading, about 0.5 MB a film), and
``--replay DIR [DIR ...]`` runs only the tracker on them, through ``track_source`` as ``track``
does, and prints the films' table: a tracker setting is checked on all films in seconds instead
of the tens of minutes the reader takes. The replay gives the run's own rows back exactly.
Totals are printed for all fresh films, and apart for those whose counts the reader distrusted
at some frame (a warning: pits under 36 px, a smear, out of focus, poor light) and the others.

A camera on a fixed rig: ``--calibrate`` reads each film through a calibration made the way
a user makes one, ``omweso-cam calibrate corners`` on the film's first frame (the board found
automatically; a film whose first frame gives none is read without, and the table says so),
and ``--views N`` sets ``RunnerConfig.fixed_views`` for those reads (8, the default, or 1: one
view a frame, the next view each frame). ``--lock-board`` instead lets the session calibrate
itself (``RunnerConfig.lock_board``: the board's corners held once three reads agree).
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from omweso_cam.observation import HAND, MAX_COUNT, PIT_COUNT, STABLE, Observation
from omweso_cam.reconcile import ACCEPTED, ILLEGAL, ReconcileConfig, reconcile
from omweso_cam.reconcile.scoring import score_board
from omweso_cam.reconcile.simulate import (
    NoiseModel,
    noisy_counts,
    observations,
    observe,
    random_game,
    script_game,
)
from omweso_cam.reconcile.tracker import Tracker, TrackerConfig
from omweso_cam.rules import CIRCUIT, Position, RuleSet, apply_move, sowing_states_all, successors
from omweso_cam.vision.synth.sequence import ILLEGAL_KINDS

REPO = Path(__file__).resolve().parents[1]
SEED_RULES = RuleSet.preset("seed")
#: Scene styles of the fresh sequences, in turn: the held-out style first, then new random
#: scenes of the styles the counter was trained on (new seeds: boards, light and seeds never seen).
FRESH_STYLES = ("unseen", "default", "randomised")


def table(title: str, header: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    print(f"\n### {title}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for row in rows:
        print("| " + " | ".join(str(c) for c in row) + " |")
    sys.stdout.flush()


def pct(a: int, b: int) -> str:
    return "-" if b == 0 else f"{100.0 * a / b:.1f} %"


# ---------------------------------------------------------------------- 1. simulated games


def simulated_games(games: int, seed: int) -> None:
    rows = []
    for label, noise, pauses in [
        ("exact readings", NoiseModel(), False),
        ("exact, pauses mid-move", NoiseModel(), True),
        ("10 % off by one, heaps +-3", NoiseModel(off_by_one_rate=0.1, heap_max_error=3, calibrated=True), True),
        ("5 % off by one, heaps +-2", NoiseModel(off_by_one_rate=0.05, heap_max_error=2, calibrated=True), True),
    ]:
        rng = random.Random(seed)
        moves_total = recovered = alarms = on_hand = exact_games = 0
        for _ in range(games):
            moves = random_game(Position.standard(), SEED_RULES, rng, max_plies=40)
            pause_map = {k: [2, 5, 9] for k in range(len(moves)) if pauses and rng.random() < 0.4}
            script = script_game(Position.standard(), moves, SEED_RULES, stable_frames=5, pauses=pause_map)
            tracker = Tracker(SEED_RULES)  # set-up read from the frames, confirmed by the first move
            got: list[str] = []
            for i, obs in enumerate(observations(script, noise=noise, rng=rng)):
                for event in tracker.update(obs):
                    if event.kind == "ply":
                        got.append(event.data["move"])
                        on_hand += script[i].status == HAND
                    elif event.kind == "alarm":
                        alarms += 1
            moves_total += len(moves)
            recovered += sum(a == str(b) for a, b in zip(got, moves, strict=False))
            exact_games += got == [str(m) for m in moves]
        rows.append([label, games, moves_total, pct(recovered, moves_total), pct(exact_games, games), alarms, on_hand])
    table("Simulated games through the Tracker (set-up read from the frames)",
          ["readings", "games", "moves", "moves recovered", "games exact", "false alarms", "moves on hand frames"],
          rows)


# ---------------------------------------------------------------------- 2. robustness curve


def mid_game_positions(count: int, seed: int) -> list[Position]:
    rng = random.Random(seed)
    out: list[Position] = []
    while len(out) < count:
        position = Position.standard()
        for move in random_game(position, SEED_RULES, rng, max_plies=rng.randint(4, 50)):
            outcome = apply_move(position, move, SEED_RULES)
            if outcome.result is not None:
                break
            position = outcome.position
        if position.ply >= 2 and successors(position, SEED_RULES):
            out.append(position)
    return out


def displaced(board: tuple[int, ...], rng: random.Random, legal: set[tuple[int, ...]],
              pits: Sequence[int] = range(32)) -> tuple[int, ...] | None:
    """``board`` with one seed moved to another of ``pits``, not a legal board. Within the mover's
    half it is an illegal sowing's smallest trace (a sowing puts seeds only into its own side's
    pits); between any two pits it may also be a misread of the opponent's half, which
    ``ReconcileConfig.max_opponent_misfit_nats`` does not call illegal."""
    for _ in range(50):
        sources = [i for i in pits if board[i] > 0]
        if not sources:
            return None
        source = rng.choice(sources)
        target = rng.choice(list(pits))
        if target == source:
            continue
        out = list(board)
        out[source] -= 1
        out[target] += 1
        if tuple(out) not in legal:
            return tuple(out)
    return None


def robustness(positions: int, games: int, seed: int) -> None:
    levels = [(0.0, 0), (0.05, 1), (0.1, 2), (0.1, 3), (0.2, 3), (0.3, 3)]
    default = ReconcileConfig()
    configs = {"default": default,
               "old bar 4.5": ReconcileConfig(illegal_min_excess_nats=4.5)}
    pool = mid_game_positions(positions, seed)
    rows = []
    for rate, heap in levels:
        noise = NoiseModel(off_by_one_rate=rate, heap_max_error=heap, calibrated=True)
        rng = random.Random(seed + 1)
        n = unique = 0
        ok = dict.fromkeys(configs, 0)
        unique_ok = dict.fromkeys(configs, 0)
        wrong = dict.fromkeys(configs, 0)
        flagged = dict.fromkeys(configs, 0)
        flagged_own = dict.fromkeys(configs, 0)
        illegal_n = own_n = 0
        orng = random.Random(seed + 3)  # its own draws: the other columns' readings stay as they were
        for position in pool:
            options = [(m, o) for m, o in successors(position, SEED_RULES) if not o.never_ending]
            move, outcome = options[rng.randrange(len(options))]
            read = noisy_counts(outcome.position.board, noise, rng)
            ll = noise.log_likelihoods(read)
            obs = Observation(0, 0.0, STABLE, ll)
            truth_score = score_board(ll, outcome.position.board)
            others = [score_board(ll, o.position.board) for _, o in options if o.position.board != outcome.position.board]
            others.append(score_board(ll, position.board))
            is_unique = truth_score - max(others) >= ReconcileConfig().ambiguous_margin_nats
            n += 1
            unique += is_unique
            legal = {o.position.board for _, o in options} | {position.board}
            bad = displaced(outcome.position.board, rng, legal)
            bad_obs = None if bad is None else observe(bad, noise=noise, rng=rng)
            illegal_n += bad is not None
            own = displaced(outcome.position.board, orng, legal, sorted(CIRCUIT[position.side_to_move]))
            own_obs = None if own is None else observe(own, noise=noise, rng=orng)
            own_n += own is not None
            for threshold, config in configs.items():
                result = reconcile(position, obs, SEED_RULES, config=config)
                good = result.status == ACCEPTED and result.best is not None and str(move) in result.best.moves
                ok[threshold] += good
                unique_ok[threshold] += is_unique and good
                wrong[threshold] += result.status == ACCEPTED and not good
                for seen, tally in ((bad_obs, flagged), (own_obs, flagged_own)):
                    if seen is not None:
                        tally[threshold] += reconcile(position, seen, SEED_RULES, config=config).status == ILLEGAL
        # whole games through the tracker (independent noise per frame, 5 stable frames per scene)
        grng = random.Random(seed + 2)
        total = got_ok = alarms = 0
        for _ in range(games):
            moves = random_game(Position.standard(), SEED_RULES, grng, max_plies=40)
            script = script_game(Position.standard(), moves, SEED_RULES, stable_frames=5)
            tracker = Tracker(SEED_RULES, initial=Position.standard())
            got = []
            for obs in observations(script, noise=noise, rng=grng):
                for event in tracker.update(obs):
                    if event.kind == "ply":
                        got.append(event.data["move"])
                    alarms += event.kind == "alarm"
            total += len(moves)
            got_ok += sum(a == str(b) for a, b in zip(got, moves, strict=False))
        row: list[object] = [f"{rate:.0%}", f"+-{heap}", n, pct(unique, n)]
        for threshold in configs:
            row += [pct(unique_ok[threshold], unique), wrong[threshold], pct(flagged_own[threshold], own_n),
                    pct(flagged[threshold], illegal_n)]
        row += [pct(got_ok, total), alarms]
        rows.append(row)
    header = ["pits off by one", "heaps >10", "readings", "true move unique"]
    for name in configs:
        header += [f"recovered where unique ({name})", f"wrong move ({name})",
                   f"1 seed moved in the mover's half flagged ({name})", f"1 seed moved anywhere flagged ({name})"]
    header += ["tracker, 5 noisy frames/scene: moves recovered", "tracker: false alarms"]
    table("Robustness to per-pit count errors (calibrated likelihoods; one reading per move, then whole games)",
          header, rows)


# ---------------------------------------------------------------------- 3. rendered sequences


def _scratch(prefix: str) -> Path:
    """A temporary folder for rendered frames, removed when the benchmark exits."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def oracle_observations(truth: dict[str, Any]) -> list[Observation]:
    """The renderer's true counts as confident readings (sigma 0.2 seeds); hand-ish phases as hand frames."""
    out = []
    for frame in truth["frames"]:
        phase = frame["phase"]
        if phase in ("hand", "illegal_hand", "restore"):
            out.append(Observation(frame["index"], frame["timestamp_s"], HAND))
        else:
            out.append(Observation.from_counts(frame["counts"], frame_index=frame["index"],
                                               timestamp_s=frame["timestamp_s"], sigma=0.2))
    return out


def judge(truth: dict[str, Any], plies: list[dict[str, Any]], events: list[dict[str, Any]]) -> dict[str, Any]:
    moves = truth["moves"]
    got = [p["move"] for p in plies]
    phases = {f["index"]: f["phase"] for f in truth["frames"]}
    on_hand = sum(phases.get(p["frame"], "") in ("hand", "illegal_hand", "restore") for p in plies)
    flagged = [e for e in events if e["kind"] == "illegal_sowing"]
    expected = truth.get("events", [])
    right = 0
    for event in expected:
        lo, hi = event["frames"]
        right += any(lo <= f["frame"] <= hi for f in flagged)
    false_alarms = sum(not any(ev["frames"][0] <= f["frame"] <= ev["frames"][1] for ev in expected) for f in flagged)
    return {"moves": len(moves), "recovered": sum(a == b for a, b in zip(got, moves, strict=False)),
            "extra": max(0, len(got) - len(moves)), "illegal": len(expected), "flagged_right": right,
            "false_alarms": false_alarms, "on_hand": on_hand, "exact": got == moves,
            "warned": any(e["kind"] == "unreliable" for e in events)}


class Totals:
    """Moves recovered, illegal sowings flagged and false alarms summed per kind of reading, and
    apart for the films whose counts the reader distrusted at some frame (it warned: pits under
    36 px, a smear, out of focus, poor light) and the films it read without a warning: what a
    user who places the camera as the README says can expect, and what the others get."""

    KEYS = ("moves", "recovered", "flagged_right", "illegal", "false_alarms")

    def __init__(self) -> None:
        self.sums: dict[tuple[str, str], list[int]] = {}

    def add(self, readings: str, result: dict[str, Any]) -> None:
        group = "warned" if result.get("warned") else "no warning"
        for key in ((readings, "all films"), (readings, group)):
            t = self.sums.setdefault(key, [0] * (len(self.KEYS) + 1))
            t[0] += 1
            for i, name in enumerate(self.KEYS):
                t[i + 1] += result[name]

    def print(self, title: str) -> None:
        if self.sums:
            table(title, ["readings", "films", "moves recovered", "illegal flagged", "false alarms"],
                  [[f"{kind}, {group}", t[0], f"{t[2]}/{t[1]}", f"{t[3]}/{t[4]}", t[5]]
                   for (kind, group), t in sorted(self.sums.items(), key=lambda item: item[0][0])])


def run_oracle(truth: dict[str, Any]) -> dict[str, Any]:
    rules = RuleSet.preset(truth["rules"])
    tracker = Tracker(rules, initial=Position.from_notation(truth["initial"]),
                      config=TrackerConfig(confirm_frames=1))
    events = []
    for obs in oracle_observations(truth):
        for event in tracker.update(obs):
            if event.kind == "alarm":
                events.append({"kind": "illegal_sowing", "frame": event.data["frame"]})
    plies = [{"move": p.move, "frame": p.frame} for p in tracker.plies]
    return judge(truth, plies, events)


def _recording(processor: Any) -> list[Observation]:
    """Every observation ``processor`` makes from now on, in a list that grows as it runs."""
    seen: list[Observation] = []
    original = processor.process

    def process(frame: Any) -> Any:
        out = original(frame)
        seen.append(out[0])
        return out

    processor.process = process
    return seen


def _write_observations(path: Path, seen: list[Observation]) -> None:
    import numpy as np

    ll = np.full((len(seen), PIT_COUNT, MAX_COUNT + 1), np.nan)
    for i, o in enumerate(seen):
        if o.log_likelihoods is not None:
            ll[i] = o.log_likelihoods
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, frame=[o.frame_index for o in seen], timestamp=[o.timestamp_s for o in seen],
                        status=[o.status for o in seen], unreliable=[o.unreliable for o in seen], ll=ll)


def _read_observations(path: Path) -> list[Observation]:
    import numpy as np

    data = np.load(path)
    return [Observation(int(f), float(t), str(st), None if np.isnan(ll[0, 0]) else tuple(map(tuple, ll.tolist())),
                        unreliable=str(u))
            for f, t, st, u, ll in zip(data["frame"], data["timestamp"], data["status"], data["unreliable"], data["ll"],
                                       strict=True)]


def film_calibration(folder: Path, truth: dict[str, Any], out: Path) -> Any:
    """The film's calibration as a user makes it: ``omweso-cam calibrate corners`` on its first
    frame, the board found automatically. None when that finds no board."""
    import contextlib
    import io

    from omweso_cam.cli import main as cli
    from omweso_cam.runner import load_calibration

    first = folder / truth["frames"][0]["file"]
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = cli(["calibrate", "corners", str(first), "--out", str(out)])
    return load_calibration(out) if code == 0 else None


def run_pipeline(folder: Path, truth: dict[str, Any], *, start: bool, save: Path | None = None,
                 calibration: Any = None, views: int = 8, lock: bool = False) -> tuple[dict[str, Any], float, int]:
    from omweso_cam.runner import RunnerConfig, make_processor, track_source
    from omweso_cam.vision.frames import SourceConfig, open_source

    rules = RuleSet.preset(truth["rules"])
    source = open_source(folder, config=SourceConfig(folder_fps=float(truth["fps"])))
    config = RunnerConfig(fixed_views=views, lock_board=lock).for_fps(source.fps)
    processor = make_processor(calibration, config=config, fps=source.fps)
    seen = _recording(processor) if save is not None else []
    t0 = time.perf_counter()
    record = track_source(source, rules, start=Position.from_notation(truth["initial"]) if start else None,
                          processor=processor, config=config)
    elapsed = time.perf_counter() - t0
    if save is not None:
        _write_observations(save, seen)
    return judge(truth, record["plies"], record["events"]), elapsed, record["frames"]


def run_reader_only(folder: Path, truth: dict[str, Any], *, save: Path | None = None, calibration: Any = None,
                    views: int = 8, lock: bool = False) -> dict[str, Any]:
    """The real BoardReader on every stable frame, stability taken from the truth."""
    from omweso_cam.runner import FrameProcessor, RunnerConfig, live_reader, track_source
    from omweso_cam.vision.frames import SourceConfig, open_source

    phases = {f["index"]: f["phase"] for f in truth["frames"]}

    class Phased:
        def update(self, image: Any) -> str:
            phase = phases.get(self.index, "hand")
            return HAND if phase in ("hand", "illegal_hand", "restore") else STABLE

        def set_region(self, corners: Any, size: Any) -> None:
            pass

    stability = Phased()
    processor = FrameProcessor(live_reader(calibration), stability, max_reads_per_stable_run=3,  # type: ignore[arg-type]
                               fixed_views=views, lock_board=lock)
    original = processor.process

    def process(frame: Any) -> Any:
        stability.index = frame.index  # type: ignore[attr-defined]
        return original(frame)

    processor.process = process  # type: ignore[method-assign]
    seen = _recording(processor) if save is not None else []
    source = open_source(folder, config=SourceConfig(folder_fps=float(truth["fps"])))
    config = RunnerConfig(fixed_views=views).for_fps(source.fps)
    record = track_source(source, RuleSet.preset(truth["rules"]), start=Position.from_notation(truth["initial"]),
                          processor=processor, config=config)
    if save is not None:
        _write_observations(save, seen)
    return judge(truth, record["plies"], record["events"])


#: The readings ``rendered`` runs a film with, and the file each is saved under (``--save-readings``).
READINGS = {"real reader, true stability": "reader_only", "full pipeline (--start)": "start",
            "full pipeline (set-up read)": "setup_read"}


def _saved_as(film: Path | None, readings: str) -> Path | None:
    """Where ``--save-readings`` keeps one kind of a film's readings (None when not saving)."""
    return None if film is None else film / f"{READINGS[readings]}.npz"


class _Replayed:
    """Saved observations as both the frame source and the processor ``track_source`` takes."""

    def __init__(self, observations: list[Observation], fps: float) -> None:
        self.observations = {o.frame_index: o for o in observations}
        self.fps = fps

    def __iter__(self) -> Any:
        import numpy as np

        from omweso_cam.vision.frames import Frame

        for index in sorted(self.observations):
            yield Frame(index, self.observations[index].timestamp_s, np.zeros((1, 1, 3), np.uint8))

    def process(self, frame: Any) -> tuple[Observation, None]:
        return self.observations[frame.index], None


def replay(folders: Sequence[Path]) -> None:
    """The tracker (through ``track_source``, as ``track`` runs it) on readings saved by ``--save-readings``
    (one folder per run, each film in its own folder): a tracker setting is checked on every saved film
    in seconds, the reader not run again. The fresh films of all ``folders`` are summed at the end."""
    from omweso_cam.runner import RunnerConfig, track_source

    rows = []
    totals = Totals()
    films = [p for folder in folders for p in sorted(folder.iterdir()) if (p / "truth.json").is_file()]
    for film in films:
        truth = json.loads((film / "truth.json").read_text())
        for readings, stem in READINGS.items():
            path = _saved_as(film, readings)
            if path is None or not path.is_file():
                continue
            replayed = _Replayed(_read_observations(path), float(truth["fps"]))
            start = None if stem == "setup_read" else Position.from_notation(truth["initial"])
            record = track_source(replayed, RuleSet.preset(truth["rules"]), start=start,  # type: ignore[arg-type]
                                  processor=replayed, config=RunnerConfig().for_fps(replayed.fps))  # type: ignore[arg-type]
            result = judge(truth, record["plies"], record["events"])
            if film.name.startswith("fresh"):
                totals.add(readings, result)
            name = film.name if len(folders) == 1 else f"{film.parent.name}/{film.name}"
            rows.append([name, readings, f"{result['recovered']}/{result['moves']}", result["extra"],
                         f"{result['flagged_right']}/{result['illegal']}", result["false_alarms"], result["on_hand"]])
    table(f"Replayed readings ({', '.join(map(str, folders))})",
          ["film", "readings", "moves recovered", "moves invented", "illegal flagged in its frames", "false alarms",
           "moves on hand frames"], rows)
    totals.print("Fresh films together")


def sequences(fresh: int, seed: int, skip_vision: bool,
              illegal: str = "wrong_lap") -> list[tuple[str, Path, dict[str, Any]]]:
    found = []
    root = REPO / "sample_images" / "sequences"
    if root.is_dir():
        for folder in sorted(p for p in root.iterdir() if (p / "truth.json").is_file()):
            found.append((f"sample/{folder.name}", folder, json.loads((folder / "truth.json").read_text())))
    if fresh:
        import numpy as np

        from omweso_cam.vision.synth.scene import Scene
        from omweso_cam.vision.synth.sequence import render_sequence

        out = _scratch("omweso-track-bench-")
        for k in range(fresh):
            rng = np.random.default_rng(10_000 + seed * 100 + k)
            style = FRESH_STYLES[k % len(FRESH_STYLES)]
            scene = Scene.random(rng, style=style, image_size_px=(800, 450))
            folder = out / f"fresh{k}"
            print(f"rendering fresh sequence {k + 1}/{fresh} (style {style}) ...", file=sys.stderr)
            truth = render_sequence(folder, rules=SEED_RULES, initial=Position.standard(), scene=scene, rng=rng,
                                    plies=8, illegal_at_ply=3 + k % 3, illegal_kind=illegal,
                                    pause_plies=[2, 5])
            found.append((f"fresh/{k} {style}", folder, truth))
    return found


def rendered(fresh: int, seed: int, skip_vision: bool, save_readings: Path | None = None,
             illegal: str = "wrong_lap", calibrate: bool = False, views: int = 8, lock: bool = False) -> None:
    found = sequences(fresh, seed, skip_vision, illegal)
    if not found:
        print("\n(no rendered sequences: sample_images/sequences is empty and --fresh 0)")
        return
    rows = []
    totals = Totals()  # the fresh sequences

    def tally(name: str, readings: str, result: dict[str, Any]) -> None:
        if name.startswith("fresh/"):
            totals.add(readings, result)

    for name, folder, truth in found:
        radius = next((f["pit_radius_px"] for f in truth["frames"] if f.get("pit_radius_px")), None)
        if radius is not None:  # the pit size in the picture (see "Camera placement" in the README)
            name += f" (pits {2 * statistics.median(radius if isinstance(radius, list) else [radius]):.0f} px)"
        oracle = run_oracle(truth)
        tally(name, "oracle counts", oracle)
        rows.append([name, "oracle counts", truth["frame_count"], f"{oracle['recovered']}/{oracle['moves']}",
                     oracle["extra"], f"{oracle['flagged_right']}/{oracle['illegal']}", oracle["false_alarms"],
                     oracle["on_hand"], "-"])
        if skip_vision:
            continue
        film = None
        if save_readings is not None:
            film = save_readings / re.sub(r"[^A-Za-z0-9]+", "_", name.split(" (pits")[0]).strip("_")
            film.mkdir(parents=True, exist_ok=True)
            (film / "truth.json").write_text(json.dumps(truth))

        calibration = None
        if calibrate:
            calibration = film_calibration(folder, truth, _scratch("omweso-track-bench-cal-") / "calibration.json")
            name += " calibrated" if calibration is not None else " (no calibration: no board in frame 0)"
        readings = "real reader, true stability"
        reader = run_reader_only(folder, truth, save=_saved_as(film, readings), calibration=calibration, views=views,
                                 lock=lock)
        tally(name, readings, reader)
        rows.append([name, readings, truth["frame_count"],
                     f"{reader['recovered']}/{reader['moves']}", reader["extra"],
                     f"{reader['flagged_right']}/{reader['illegal']}", reader["false_alarms"], reader["on_hand"], "-"])
        for start in (True, False):
            readings = "full pipeline" + (" (--start)" if start else " (set-up read)")
            result, elapsed, frames = run_pipeline(folder, truth, start=start, save=_saved_as(film, readings),
                                                   calibration=calibration, views=views, lock=lock)
            tally(name, readings, result)
            rows.append([name, readings, frames,
                         f"{result['recovered']}/{result['moves']}", result["extra"],
                         f"{result['flagged_right']}/{result['illegal']}", result["false_alarms"], result["on_hand"],
                         f"{frames / elapsed:.1f}"])
    how = " (read through a calibration" if calibrate else " (the board locked once found" if lock else ""
    table("Rendered game sequences" + (f"{how}, {views} view(s) a read)" if how else ""),
          ["sequence", "readings", "frames", "moves recovered", "moves invented", "illegal flagged in its frames",
           "false alarms", "moves on hand frames", "frames/s"],
          rows)
    totals.print("Fresh sequences together (a game stops being followed at its first lost move)")


# ---------------------------------------------------------------------- 4. speed


def speed_720p(seed: int) -> None:
    import cv2
    import numpy as np

    from omweso_cam.runner import RunnerConfig, make_processor, track_source
    from omweso_cam.vision.frames import SourceConfig, open_source
    from omweso_cam.vision.synth.scene import Scene
    from omweso_cam.vision.synth.sequence import render_sequence

    cv2.setNumThreads(1)
    folder = _scratch("omweso-track-720p-")
    rng = np.random.default_rng(seed + 7)
    print("rendering a 1280x720 sequence for the speed test ...", file=sys.stderr)
    truth = render_sequence(folder, rules=SEED_RULES, initial=Position.standard(),
                            scene=Scene.random(rng, image_size_px=(1280, 720)), rng=rng, plies=3, pause_plies=[])
    source = open_source(folder, config=SourceConfig(folder_fps=float(truth["fps"])))
    config = RunnerConfig().for_fps(source.fps)
    processor = make_processor(config=config, fps=source.fps)
    t0 = time.process_time()
    w0 = time.perf_counter()
    record = track_source(source, SEED_RULES, start=Position.standard(), processor=processor, config=config)
    cpu = time.process_time() - t0
    wall = time.perf_counter() - w0
    frames = record["frames"]
    table("`track` speed on a 1280x720 frame folder (one OpenCV thread)",
          ["frames", "plies found / filmed", "CPU s", "frames/s (CPU)", "wall s", "frames/s (wall)"],
          [[frames, f"{len(record['plies'])}/{len(truth['moves'])}", f"{cpu:.1f}", f"{frames / cpu:.1f}",
            f"{wall:.1f}", f"{frames / wall:.1f}"]])


def states_cost(positions: int, seed: int) -> None:
    pool = mid_game_positions(positions, seed + 3)
    moves = states = 0
    times = []
    for position in pool:
        t0 = time.perf_counter()
        traces = sowing_states_all(position, SEED_RULES)
        times.append(time.perf_counter() - t0)
        moves += len(traces)
        states += sum(len(s) for _, _, s in traces)
    total = sum(times)
    times.sort()
    table(f"Intermediate sowing states of every legal move, {len(pool)} mid-game positions",
          ["positions", "legal moves", "states", "total s", "mean ms/position", "p95 ms", "max ms"],
          [[len(pool), moves, states, f"{total:.2f}", f"{1000 * total / len(pool):.2f}",
            f"{1000 * times[int(0.95 * len(times))]:.2f}", f"{1000 * times[-1]:.2f}"]])
    rtimes = []
    for position in pool[:200]:
        options = successors(position, SEED_RULES)
        board = options[0][1].position.board
        obs = Observation.from_counts(board)
        t0 = time.perf_counter()
        reconcile(position, obs, SEED_RULES)
        rtimes.append(time.perf_counter() - t0)
    print(f"\nreconcile() of one reading, cold cache: mean {1000 * statistics.mean(rtimes):.2f} ms, "
          f"max {1000 * max(rtimes):.2f} ms over {len(rtimes)} positions")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=30, help="simulated games per setting")
    parser.add_argument("--positions", type=int, default=1000, help="positions for the noise curve and state cost")
    parser.add_argument("--fresh", type=int, default=6,
                        help="fresh sequences to render (styles in turn: " + ", ".join(FRESH_STYLES) + ")")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--illegal", choices=ILLEGAL_KINDS, default="wrong_lap",
                        help="the illegal sowing each fresh film stages: a wrong lap (many seeds out of place, "
                        "the default) or a slip (one seed dropped one pit too far)")
    parser.add_argument("--skip-vision", action="store_true", help="no full-pipeline runs (tracker only)")
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--save-readings", type=Path, metavar="DIR",
                        help="also save every film's readings (one folder per film) for --replay")
    parser.add_argument("--calibrate", action="store_true",
                        help="read each film through a calibration of its first frame (`calibrate corners`)")
    parser.add_argument("--lock-board", action="store_true",
                        help="RunnerConfig.lock_board: the session holds the corners once three reads agree")
    parser.add_argument("--views", type=int, choices=range(1, 9), default=8, metavar="N",
                        help="RunnerConfig.fixed_views for reads at fixed corners (default 8)")
    parser.add_argument("--replay", type=Path, nargs="+", metavar="DIR",
                        help="only run the tracker on readings saved with --save-readings (seconds, not minutes); "
                        "several runs' folders are summed")
    args = parser.parse_args(argv)
    if args.views != 8 and not (args.calibrate or args.lock_board):
        parser.error("--views applies to reads at fixed corners: give --calibrate or --lock-board too")
    if args.calibrate and args.lock_board:
        parser.error("--calibrate and --lock-board are two ways to fix the corners: give one")
    if args.replay is not None:
        missing = [str(folder) for folder in args.replay if not folder.is_dir()]
        if missing:
            parser.error(f"--replay: no folder {', '.join(missing)}")
        replay(args.replay)
        return 0
    simulated_games(args.games, args.seed)
    robustness(args.positions, max(5, args.games // 3), args.seed)
    states_cost(args.positions, args.seed)
    rendered(args.fresh, args.seed, args.skip_vision, args.save_readings, args.illegal, args.calibrate, args.views,
             args.lock_board)
    if not args.skip_speed and not args.skip_vision:
        speed_720p(args.seed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
