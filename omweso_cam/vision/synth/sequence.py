"""Film a whole synthetic game: frame folders (JPEG) plus a ``truth.json`` of what happened.

A game as a camera sees it: stable frames of the set-up; per move, frames with a hand
over the board while the seeds are part-way sown (boards from the rules engine's
`sowing_states`), sometimes a pause mid-move with the hand away, then stable frames of
the new position. Optionally an illegal sowing (correct start, wrong from lap 2 on; or a
single seed dropped one pit too far) that stays on the board for a while and is then put back.
"""

from __future__ import annotations

import json
import signal
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from omweso_cam.rules import (
    CIRCUIT,
    IllegalMoveError,
    Move,
    Outcome,
    Position,
    RuleSet,
    Side,
    SowingState,
    apply_move,
    board_notation,
    sowing_states,
    square_index,
    square_name,
)
from omweso_cam.vision.synth.render import BoardRenderer, Truth
from omweso_cam.vision.synth.scene import Scene

#: Format tag of a sequence ``truth.json``.
FORMAT = "omweso-cam-sequence"
VERSION = 1


class SequenceError(ValueError):
    """A sequence cannot be made as asked (bad moves, a game that ends too soon...)."""


@dataclass(frozen=True)
class SequenceConfig:
    """How a game is filmed (frame counts per phase, camera shake, output)."""

    fps: float = 4.0
    setup_frames: int = 6
    stable_frames: int = 4
    hand_frames_per_move: int = 4  # frames during the sowing, spread over the move
    pause_probability: float = 0.3  # chance a move has a mid-move pause with the hand away
    pause_frames: int = 3
    illegal_stable_frames: int = 5
    jitter_px: float = 0.6  # camera shake between frames (std. dev.)
    jitter_deg: float = 0.08
    jpeg_quality: int = 85
    frame_noise: bool = True


@dataclass
class _Film:
    """Frames written so far and what they show."""

    out_dir: Path
    renderer: BoardRenderer
    rng: np.random.Generator
    config: SequenceConfig
    frames: list[dict[str, Any]] = field(default_factory=list)
    phases: list[dict[str, Any]] = field(default_factory=list)

    def shoot(
        self,
        board: Sequence[int],
        phase: str,
        ply: int,
        *,
        hand_pit: int | None = None,
        hand_from: str = "south",
        in_hand: int = 0,
    ) -> Truth:
        cfg = self.config
        jitter = np.array(
            [
                self.rng.normal(0, cfg.jitter_deg),
                self.rng.normal(0, cfg.jitter_deg),
                self.rng.normal(0, cfg.jitter_deg),
                self.rng.normal(0, cfg.jitter_px),
                self.rng.normal(0, cfg.jitter_px),
                self.rng.normal(0, 0.002),
            ]
        )
        target = None
        motion = None
        if hand_pit is not None:
            motion = float(self.rng.uniform(2.0, 14.0)) if self.rng.random() < 0.6 else 0.0
            centre = self.renderer.board.pit_centres_mm[hand_pit]
            target = (float(centre[0] + self.rng.normal(0, 8)), float(centre[1] + self.rng.normal(0, 8)))
        image, truth = self.renderer.render(
            tuple(board),
            self.rng,
            hand=hand_pit is not None,
            hand_target_mm=target,
            hand_from=hand_from,
            hand_motion_blur_px=motion,
            in_hand=in_hand,
            jitter=jitter,
        )
        index = len(self.frames)
        name = f"frame_{index:05d}.jpg"
        cv2.imwrite(str(self.out_dir / name), image, [cv2.IMWRITE_JPEG_QUALITY, cfg.jpeg_quality])
        record = truth.to_json()
        record.pop("scene")
        record.pop("image_size")
        self.frames.append(
            {"index": index, "file": name, "timestamp_s": round(index / cfg.fps, 3), "phase": phase, "ply": ply, **record}
        )
        if self.phases and self.phases[-1]["phase"] == phase and self.phases[-1]["ply"] == ply:
            self.phases[-1]["end"] = index
        else:
            self.phases.append({"phase": phase, "ply": ply, "start": index, "end": index})
        return truth


class _TooSlow(Exception):
    """A rules-engine call ran past its time budget."""


def _within(seconds: float, fn: Callable[[], Outcome]) -> Outcome | None:
    """``fn()``, or None if it has not returned after ``seconds`` (main thread, Unix only).

    Some moves of the rules engine run for minutes before their never-ending loop is
    detected; random play skips those moves. Elsewhere (other threads, no SIGALRM) the
    call simply runs to the end.
    """
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        return fn()

    def expire(signum: int, frame: object) -> None:
        raise _TooSlow

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return fn()
    except _TooSlow:
        return None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


#: Time budget of one move in random play. Finite moves take well under 0.1 s; only
#: never-ending moves run longer (their loop can take minutes to detect), and those are
#: left out whether or not the budget runs out, so the budget keeps play deterministic.
MOVE_BUDGET_S = 5.0


def quick_options(position: Position, rules: RuleSet) -> list[tuple[Move, Outcome]]:
    """Every start pit's all-counter-clockwise move with its outcome (never-ending ones left out).

    A subset of the legal moves (no clockwise choices, no two-one sowing) that costs one
    sowing per pit: random play for films does not need the full move tree, whose
    enumeration can be very slow in positions with many reverse-lap decision points.
    Moves the engine cannot settle within `MOVE_BUDGET_S` are left out too.
    """
    found = []
    for i in CIRCUIT[position.side_to_move]:
        if position.board[i] < 2:
            continue
        move = Move.parse(square_name(i))
        try:
            outcome = _within(MOVE_BUDGET_S, lambda m=move: apply_move(position, m, rules))  # type: ignore[misc]
        except IllegalMoveError:
            continue
        if outcome is not None and not outcome.never_ending:
            found.append((move, outcome))
    return found


def _spread(states: Sequence[SowingState], count: int, rng: np.random.Generator) -> list[int]:
    """``count`` state indices spread over the move (never the last, final state)."""
    n = len(states) - 1
    if n <= 0:
        return []
    picks = np.linspace(0, n - 1, min(count, n)) + rng.uniform(-0.4, 0.4, min(count, n))
    return sorted({int(np.clip(round(p), 0, n - 1)) for p in picks})


def _side_name(side: Side) -> str:
    return "south" if side is Side.SOUTH else "north"


def wrong_sowing(
    position: Position, move: Move, rules: RuleSet, *, lap: int = 1
) -> tuple[list[SowingState], tuple[int, ...]] | None:
    """A plausible illegal sowing of ``move``: correct up to lap ``lap`` (0-based), then one pit skipped.

    Returns (the states a camera sees, the final illegal board), or None when the move
    has no such lap or the mistake happens to give the result of a (counter-clockwise)
    legal move.
    """
    states = list(sowing_states(position, move, rules))
    circuit = CIRCUIT[position.side_to_move]
    # the lift that starts the lap (a capture lifts the opponent's pits instead: not those)
    start = next(
        (k for k, s in enumerate(states) if s.lap == lap and s.event == "lift" and square_index(s.pit) in circuit),
        None,
    )
    if start is None:
        return None
    lift = states[start]
    board = list(lift.board)
    hand = lift.in_hand
    pos = circuit.index(square_index(lift.pit))
    wrong = states[: start + 1]
    pos = (pos + 1) % 16  # the skipped pit
    while hand > 0:
        pos = (pos + 1) % 16
        board[circuit[pos]] += 1
        hand -= 1
        wrong.append(SowingState(tuple(board), hand, lap, square_name(circuit[pos]), "drop"))
    final = tuple(board)
    return None if _legal_result(position, rules, final) else (wrong, final)


#: The mistakes ``render_sequence`` can stage (``illegal_kind``).
ILLEGAL_KINDS = ("wrong_lap", "slip")


def slipped_sowing(
    position: Position, move: Move, rules: RuleSet, rng: np.random.Generator
) -> tuple[list[SowingState], tuple[int, ...]] | None:
    """``move`` sown right but for one seed of its last lap dropped one pit further on.

    Perhaps the commonest slip over a real board: the sowing is right, one seed lands in
    the next pit (of the mover's circuit). Only drops after the move's last lift can slip,
    so no later lift moves the misplaced seed. Returns (the states a camera sees, the final
    illegal board), or None when the move has no such drop or the slip happens to give a
    legal board.
    """
    states = list(sowing_states(position, move, rules))
    circuit = CIRCUIT[position.side_to_move]
    last_lift = max(k for k, s in enumerate(states) if s.event == "lift")
    drops = [k for k in range(last_lift + 1, len(states)) if square_index(states[k].pit) in circuit]
    if not drops:
        return None
    at = drops[int(rng.integers(len(drops)))]
    source = square_index(states[at].pit)
    target = circuit[(circuit.index(source) + 1) % 16]
    slipped = states[:at]
    for s in states[at:]:
        board = list(s.board)
        board[source] -= 1
        board[target] += 1
        slipped.append(s._replace(board=tuple(board), pit=square_name(target) if s is states[at] else s.pit))
    final = slipped[-1].board
    return None if _legal_result(position, rules, final) else (slipped, final)


def _legal_result(position: Position, rules: RuleSet, board: tuple[int, ...]) -> bool:
    """Whether ``board`` is what a legal (counter-clockwise) move, or none, leaves: no mistake to stage."""
    return board == position.board or any(o.position.board == board for _, o in quick_options(position, rules))


def render_sequence(
    out_dir: Path | str,
    *,
    rules: RuleSet,
    initial: Position,
    scene: Scene,
    rng: np.random.Generator,
    plies: int = 8,
    moves: Sequence[Move | str] | None = None,
    illegal_at_ply: int | None = None,
    illegal_kind: str = "wrong_lap",
    pause_plies: Sequence[int] | None = None,
    config: SequenceConfig | None = None,
) -> dict[str, Any]:
    """Film a game into ``out_dir`` (JPEG frames + ``truth.json``); returns the truth dict.

    ``moves`` fixes the moves (else random legal all-counter-clockwise moves are played,
    ``plies`` of them, fewer if the game ends). ``illegal_at_ply`` (1-based) stages an illegal sowing
    before that ply's real move: ``illegal_kind`` "wrong_lap" (a pit skipped from lap 2 on, many
    seeds out of place) or "slip" (one seed one pit too far); ``pause_plies`` forces mid-move pauses (else they
    happen with ``config.pause_probability``).
    """
    cfg = config or SequenceConfig()
    if illegal_kind not in ILLEGAL_KINDS:
        raise ValueError(f"illegal_kind must be one of {', '.join(ILLEGAL_KINDS)}, not {illegal_kind!r}")
    total = len(moves) if moves is not None else plies
    if total < 0:
        raise SequenceError(f"plies must be 0 or more, got {plies}")
    # A ply asked for that the film does not have would be left out without a word.
    if illegal_at_ply is not None and not 1 <= illegal_at_ply <= total:
        raise SequenceError(f"the illegal sowing must come before one of the film's plies 1-{total}, "
                            f"not {illegal_at_ply}")
    outside = sorted(p for p in pause_plies or () if not 1 <= p <= total)
    if outside:
        raise SequenceError(f"pauses must be in the film's plies 1-{total}, not {', '.join(map(str, outside))}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("frame_*.jpg"):
        old.unlink()
    film = _Film(out, BoardRenderer(scene), rng, cfg)
    if not cfg.frame_noise:
        film.renderer.scene = scene.with_(noise_sigma=0.0)
    position = initial
    for _ in range(cfg.setup_frames):
        film.shoot(position.board, "setup", 0)
    played: list[dict[str, Any]] = []
    illegal_events: list[dict[str, Any]] = []
    pauses: list[dict[str, Any]] = []
    result: dict[str, Any] | None = None
    fixed = [Move.parse(m) if isinstance(m, str) else m for m in moves] if moves is not None else None
    for ply in range(1, total + 1):
        options = quick_options(position, rules)
        if fixed is not None:
            move = fixed[ply - 1]
            outcome = apply_move(position, move, rules)  # raises IllegalMoveError
        else:
            if not options:
                break
            move, outcome = options[int(rng.integers(len(options)))]
        hand_from = _side_name(position.side_to_move)
        if illegal_at_ply == ply:
            _film_illegal(film, position, move, options, rules, ply, hand_from, illegal_events, illegal_kind)
        states = sowing_states(position, move, rules)
        picks = _spread(states, cfg.hand_frames_per_move, rng)
        pause_at = None
        forced = pause_plies is not None and ply in pause_plies
        if forced or (pause_plies is None and rng.random() < cfg.pause_probability):
            mids = [k for k in range(1, len(states) - 1) if states[k].in_hand > 0]
            if mids:
                pause_at = mids[len(mids) // 2]
                picks = sorted(set(picks) | {pause_at})
        hand_start = len(film.frames)
        for k in picks:
            state = states[k]
            film.shoot(state.board, "hand", ply, hand_pit=square_index(state.pit), hand_from=hand_from, in_hand=state.in_hand)
            if k == pause_at:
                first = len(film.frames)
                for _ in range(cfg.pause_frames):
                    film.shoot(state.board, "pause", ply, in_hand=state.in_hand)
                pauses.append(
                    {
                        "ply": ply,
                        "frames": [first, len(film.frames) - 1],
                        "board": board_notation(state.board),
                        "in_hand": state.in_hand,
                        "lap": state.lap,
                    }
                )
        # the last seed drops with the hand still there, then the hand leaves
        film.shoot(states[-1].board, "hand", ply, hand_pit=square_index(states[-1].pit), hand_from=hand_from)
        hand_end = len(film.frames) - 1
        stable_start = len(film.frames)
        position = outcome.position
        for _ in range(cfg.stable_frames):
            film.shoot(position.board, "stable", ply)
        played.append(
            {
                "ply": ply,
                "move": str(move),
                "after": position.notation(),
                "frame": stable_start,
                "frames": {"move": [hand_start, hand_end], "stable": [stable_start, len(film.frames) - 1]},
            }
        )
        if outcome.result is not None:
            result = outcome.result.to_dict()
            break
    h, w = scene.image_size_px[1], scene.image_size_px[0]
    truth = {
        "format": FORMAT,
        "version": VERSION,
        "rules": rules.name,
        "initial": initial.notation(),
        "fps": cfg.fps,
        "frame_size": [w, h],
        "frame_count": len(film.frames),
        "moves": [p["move"] for p in played],
        "positions": [p["after"] for p in played],
        "plies": played,
        "events": illegal_events,
        "pauses": pauses,
        "phases": film.phases,
        "result": result,
        "scene": scene.to_json(),
        "config": {k: getattr(cfg, k) for k in cfg.__dataclass_fields__},
        "frames": film.frames,
    }
    (out / "truth.json").write_text(json.dumps(truth, indent=1) + "\n", encoding="utf-8")
    return truth


def _film_illegal(
    film: _Film,
    position: Position,
    move: Move,
    options: list[tuple[Move, Any]],
    rules: RuleSet,
    ply: int,
    hand_from: str,
    events: list[dict[str, Any]],
    kind: str = "wrong_lap",
) -> None:
    """A wrong sowing of ``move`` (else of another move), left on the board, then undone.

    ``kind`` "wrong_lap": a pit skipped from lap 2 (else from the start); "slip": one seed
    of the last lap one pit further on (`slipped_sowing`).
    """
    candidates = [move] + [m for m, _ in options if m != move]
    if kind == "slip":
        attempts = ((m, slipped_sowing(position, m, rules, film.rng)) for m in candidates)
    else:  # lap 2 of any move first, then from the start
        attempts = ((m, wrong_sowing(position, m, rules, lap=lap)) for lap in (1, 0) for m in candidates)
    attempted, wrong = next(((m, w) for m, w in attempts if w is not None), (move, None))
    if wrong is None:
        raise SequenceError(f"found no illegal sowing to stage in {position.notation()}")
    states, final = wrong
    for k in _spread(states, film.config.hand_frames_per_move + 1, film.rng):
        s = states[k]
        film.shoot(s.board, "illegal_hand", ply, hand_pit=square_index(s.pit), hand_from=hand_from, in_hand=s.in_hand)
    first = len(film.frames)
    for _ in range(film.config.illegal_stable_frames):
        film.shoot(final, "illegal_stable", ply)
    # the referee calls it: the players put the board back as it was before the move
    diff = [i for i in range(32) if final[i] != position.board[i]]
    half = list(final)
    for i in diff[: len(diff) // 2]:
        half[i] = position.board[i]
    in_hand = 64 - sum(min(a, b) for a, b in zip(half, position.board, strict=True))
    partial = [min(a, b) for a, b in zip(half, position.board, strict=True)]
    restore_start = len(film.frames)
    film.shoot(partial, "restore", ply, hand_pit=diff[len(diff) // 2], hand_from=hand_from, in_hand=in_hand)
    film.shoot(position.board, "restore", ply, hand_pit=diff[-1], hand_from=hand_from)
    restored = len(film.frames)
    for _ in range(film.config.stable_frames):
        film.shoot(position.board, "restored", ply)
    events.append(
        {
            "kind": "illegal_sowing",
            "mistake": kind,
            "ply": ply,
            "frame": first,
            "frames": [first, first + film.config.illegal_stable_frames - 1],
            "observed": board_notation(final),
            "position": position.notation(),
            "attempted": str(attempted),
            "restore_frames": [restore_start, restored - 1],
            "restored_frame": restored,
        }
    )


def write_video(frames_dir: Path | str, out_path: Path | str, *, fps: float) -> Path:
    """Encode the ``frame_*.jpg`` of ``frames_dir`` as an MP4 (``mp4v``) video."""
    files = sorted(Path(frames_dir).glob("frame_*.jpg"))
    if not files:
        raise SequenceError(f"no frame_*.jpg in {frames_dir}")
    first = cv2.imread(str(files[0]))
    if first is None:
        raise SequenceError(f"cannot read {files[0]}")
    h, w = first.shape[:2]
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    writer = cv2.VideoWriter(str(out), cv2.VideoWriter.fourcc(*"mp4v"), fps, (w, h))
    if not writer.isOpened():
        raise SequenceError(f"OpenCV cannot write mp4v video to {out}")
    try:
        for f in files:
            frame = cv2.imread(str(f))
            if frame is None:
                raise SequenceError(f"cannot read {f}")
            writer.write(frame)
    finally:
        writer.release()
    return out
