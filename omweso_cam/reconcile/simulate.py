"""Simulated camera readings of a game, for tests and the tracking benchmark (pure, seeded).

A *script* is the sequence of (board, status) a camera would see while a game is played:
stable frames of each position, hand frames while a move is sown, and optional pauses
part-way through a move (hand away, some seeds still in the hand). :func:`observe` turns a
board into an :class:`Observation` with simulated reader noise.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from omweso_cam.observation import HAND, MAX_COUNT, STABLE, Observation
from omweso_cam.rules import Move, Position, RuleSet, apply_move, sowing_states
from omweso_cam.rules.sample import random_game

#: ``random_game`` (moves of a random legal game) is the rules engine's own; re-exported for scripts.
__all__ = [
    "NoiseModel",
    "ScriptFrame",
    "noisy_counts",
    "observations",
    "observe",
    "random_game",
    "script_game",
    "unsure_reading",
]


@dataclass(frozen=True)
class NoiseModel:
    """Per-pit count errors of a simulated reader.

    ``off_by_one_rate``: fraction of pits read one seed off (either way, never below 0).
    Pits holding more than ``heap_min_seeds`` are read off by up to ``heap_max_error``
    seeds (uniform). The simulated reader reports either a Gaussian of width ``sigma``
    around what it read (``Observation.from_counts``: a confident reader), or, with
    ``calibrated``, the true likelihood of its read under this very noise model (a reader
    that knows how often it errs), floored at ``floor_probability``.
    """

    off_by_one_rate: float = 0.0
    heap_min_seeds: int = 10
    heap_max_error: int = 0
    sigma: float = 0.35
    calibrated: bool = False
    floor_probability: float = 1e-4

    def log_likelihoods(self, read: Sequence[int]) -> tuple[tuple[float, ...], ...]:
        """``log P(read | n)`` for n in 0..64, per pit, under this noise model (plus the floor)."""
        return tuple(_likelihood_row(self, m) for m in read)


#: A simulated reader as sure of its counts as the counter is of a clear board (a heap of 4
#: at 99%): one seed off costs it 22 nats in a pit of one, 4.4 in a heap of five. The default
#: ``NoiseModel()`` (sigma 0.35: a heap of 4 at 57%) pays only 5-8 nats for one seed moved
#: between small pits, under the alarm's bar (``ReconcileConfig.illegal_min_excess_nats``):
#: to that reader it is a misread, not an illegal sowing.
SURE_READER = NoiseModel(sigma=0.15)


@functools.lru_cache(maxsize=4096)
def _likelihood_row(noise: NoiseModel, m: int) -> tuple[float, ...]:
    row = []
    for n in range(65):
        p = 0.0
        if n > noise.heap_min_seeds and noise.heap_max_error > 0:
            if abs(m - n) <= noise.heap_max_error:
                p = 1.0 / (2 * noise.heap_max_error + 1)
        elif m == n:
            p = 1.0 - noise.off_by_one_rate
        elif abs(m - n) == 1:
            p = noise.off_by_one_rate / (1 if n == 0 else 2)
        row.append(math.log(max(p, noise.floor_probability)))
    return tuple(row)


@dataclass(frozen=True)
class ScriptFrame:
    """What the camera sees on one frame: a board (or None while a hand hides it) and a status."""

    board: tuple[int, ...] | None
    status: str
    ply: int  # plies completed before this frame
    note: str = ""


def noisy_counts(board: Sequence[int], noise: NoiseModel, rng: random.Random) -> tuple[int, ...]:
    """``board`` as a noisy reader would count it."""
    out = []
    for count in board:
        read = count
        if count > noise.heap_min_seeds and noise.heap_max_error > 0:
            read += rng.randint(-noise.heap_max_error, noise.heap_max_error)
        elif noise.off_by_one_rate > 0 and rng.random() < noise.off_by_one_rate:
            read += rng.choice((-1, 1)) if count > 0 else 1
        out.append(max(0, min(64, read)))
    return tuple(out)


def observe(
    board: Sequence[int] | None,
    status: str = STABLE,
    *,
    frame_index: int = 0,
    timestamp_s: float = 0.0,
    noise: NoiseModel = NoiseModel(),
    rng: random.Random | None = None,
) -> Observation:
    """An observation of ``board`` (stable, with noise) or a non-stable frame."""
    if status != STABLE or board is None:
        return Observation(frame_index, timestamp_s, status if status != STABLE else HAND)
    counts = noisy_counts(board, noise, rng) if rng is not None else tuple(board)
    if noise.calibrated:
        return Observation(frame_index, timestamp_s, STABLE, noise.log_likelihoods(counts))
    return Observation.from_counts(counts, frame_index=frame_index, timestamp_s=timestamp_s, sigma=noise.sigma)


def unsure_reading(
    board: Sequence[int],
    costs: Mapping[int, float],
    *,
    sure: float = 12.0,
    frame_index: int = 0,
    timestamp_s: float = 0.0,
    unreliable: str = "",
) -> Observation:
    """A stable reading of ``board`` whose count of pit ``i`` off by ``n`` seeds costs ``costs[i] * n``
    nats (``sure`` * n for the other pits): a reader unsure of those pits, as the tests stage it."""
    rows = tuple(tuple(-costs.get(i, sure) * abs(n - seen) for n in range(MAX_COUNT + 1)) for i, seen in enumerate(board))
    return Observation(frame_index, timestamp_s, STABLE, rows, unreliable=unreliable)


def script_game(
    initial: Position,
    moves: Iterable[Move | str],
    rules: RuleSet,
    *,
    stable_frames: int = 4,
    hand_frames: int = 3,
    pauses: Mapping[int, Sequence[int]] | None = None,
) -> list[ScriptFrame]:
    """Frames of a game: ``stable_frames`` of each position, ``hand_frames`` for each move.

    ``pauses[ply]`` lists sowing-state indices of that ply's move (0-based ply) where the
    player stops with the hand away: ``stable_frames`` stable frames of that part-way board
    (indices that are not part-way through the move are skipped).
    """
    frames = [ScriptFrame(initial.board, STABLE, 0, "initial") for _ in range(stable_frames)]
    position = initial
    for ply, move in enumerate(moves):
        move = Move.parse(move) if isinstance(move, str) else move
        states = sowing_states(position, move, rules) if pauses and ply in pauses else ()
        for index in sorted((pauses or {}).get(ply, ())):
            if not 0 <= index < len(states) - 1:
                continue  # not part-way through this move (the last state is the final board)
            frames += [ScriptFrame(None, HAND, ply, f"sowing {move}") for _ in range(hand_frames)]
            frames += [ScriptFrame(states[index].board, STABLE, ply, f"pause {move} step {index}")
                       for _ in range(stable_frames)]
        frames += [ScriptFrame(None, HAND, ply, f"sowing {move}") for _ in range(hand_frames)]
        position = apply_move(position, move, rules).position
        frames += [ScriptFrame(position.board, STABLE, ply + 1, f"after {move}") for _ in range(stable_frames)]
    return frames


def observations(
    script: Sequence[ScriptFrame],
    *,
    noise: NoiseModel = NoiseModel(),
    rng: random.Random | None = None,
    fps: float = 10.0,
) -> list[Observation]:
    """The script as observations, frame ``i`` at ``i / fps`` seconds."""
    return [
        observe(f.board, f.status, frame_index=i, timestamp_s=i / fps, noise=noise, rng=rng)
        for i, f in enumerate(script)
    ]
