"""Vision -> reconcile contract: one reading of the board as plain data (no numpy types).

Pits are in *image order* everywhere in omweso-cam: index ``i`` is file ``i % 8``
(a..h) of rank ``4 - i // 8``, i.e. the notation's ``R4/R3/R2/R1`` read left to
right, top to bottom - what a camera above the board sees with South at the bottom.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

#: Largest count a pit can hold (all 64 seeds in one pit).
MAX_COUNT = 64
#: Number of pits on the board.
PIT_COUNT = 32

#: Frame statuses. Only ``STABLE`` observations carry likelihoods.
STABLE = "stable"
MOVING = "moving"
HAND = "hand"
NO_BOARD = "no_board"
OCCLUDED = "occluded"
UNREADABLE = "unreadable_image"
STATUSES = (STABLE, MOVING, HAND, NO_BOARD, OCCLUDED, UNREADABLE)


@dataclass(frozen=True)
class Observation:
    """One frame's reading of the board.

    ``log_likelihoods[i][n]`` is ``log P(image of pit i | pit i holds n seeds)``
    for ``n`` in ``0..MAX_COUNT`` (natural log, unnormalised is fine: only
    differences between counts of the same pit matter). ``None`` unless
    ``status == STABLE``. ``unreliable``: why the reader itself distrusts these counts
    (e.g. pits too few pixels across), empty when it knows no reason.
    """

    frame_index: int
    timestamp_s: float
    status: str
    log_likelihoods: tuple[tuple[float, ...], ...] | None = None
    detail: str = ""
    unreliable: str = ""
    meta: dict[str, object] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown observation status {self.status!r}; expected one of {STATUSES}")
        if self.log_likelihoods is not None:
            if len(self.log_likelihoods) != PIT_COUNT:
                raise ValueError(
                    f"expected {PIT_COUNT} pits of likelihoods, got {len(self.log_likelihoods)}"
                )
            for i, row in enumerate(self.log_likelihoods):
                if len(row) != MAX_COUNT + 1:
                    raise ValueError(f"pit {i}: expected {MAX_COUNT + 1} likelihoods, got {len(row)}")
        elif self.status == STABLE:
            raise ValueError("a stable observation needs log_likelihoods")

    @property
    def is_stable(self) -> bool:
        return self.status == STABLE

    def counts(self) -> tuple[int, ...] | None:
        """Most likely count of every pit (image order), or None when not stable."""
        if self.log_likelihoods is None:
            return None
        return most_likely_counts(self.log_likelihoods)

    @classmethod
    def from_counts(
        cls,
        counts: tuple[int, ...] | list[int],
        *,
        frame_index: int = 0,
        timestamp_s: float = 0.0,
        sigma: float = 0.35,
    ) -> Observation:
        """A stable observation peaked at ``counts`` (for tests and simulations).

        The likelihood of reading ``n`` for a true ``c`` falls off as a Gaussian
        of width ``sigma * sqrt(max(c, 1))`` seeds: big heaps are less certain.
        """
        if len(counts) != PIT_COUNT:
            raise ValueError(f"expected {PIT_COUNT} counts, got {len(counts)}")
        rows = []
        for c in counts:
            if not 0 <= c <= MAX_COUNT:
                raise ValueError(f"count {c} out of range 0..{MAX_COUNT}")
            width = sigma * math.sqrt(max(c, 1))
            rows.append(tuple(-0.5 * ((n - c) / width) ** 2 for n in range(MAX_COUNT + 1)))
        return cls(frame_index, timestamp_s, STABLE, tuple(rows))


def most_likely_counts(log_likelihoods: Sequence[Sequence[float]]) -> tuple[int, ...]:
    """The most likely count of every pit under per-pit log-likelihoods (the first of ties)."""
    return tuple(max(range(len(row)), key=row.__getitem__) for row in log_likelihoods)


def fit_board(log_likelihoods: Sequence[Sequence[float]], total: int, *, window: int,
              max_cost: float) -> tuple[int, ...] | None:
    """The most likely counts holding exactly ``total`` seeds, every pit within ``window`` seeds of its
    own most likely count, when they cost at most ``max_cost`` nats against the pits' own most likely
    counts; None when no such board does (the reading cannot be a board of ``total`` seeds, misread
    by a little)."""
    # Boards dearer than the limit are not looked at (a hair over it: the check below decides).
    fit = fit_total(log_likelihoods, total, window=window, max_cost=max_cost + 1e-3)
    if fit is None or math.fsum(max(row) for row in log_likelihoods) - fit[1] > max_cost:
        return None
    return fit[0]


def fit_total(
    log_likelihoods: Sequence[Sequence[float]], total: int, *, max_per_pit: int | None = None,
    window: int | None = None, max_cost: float | None = None,
) -> tuple[tuple[int, ...], float] | None:
    """The most likely counts of the given pits holding exactly ``total`` seeds, and their score.

    Each pit holds at most ``max_per_pit`` seeds and, with ``window``, stays within that many
    seeds of its own most likely count. With ``max_cost``, only boards scoring within that many
    nats of the pits' own most likely counts (the sum of each row's best) are looked at: the
    answer is the same whenever it costs no more, and ``None`` otherwise; a caller that rejects
    dearer fits anyway (the reader, :attr:`ReaderConfig.board_total_max_nats`) is spared the
    boards it would reject, most of the work on a well-read board. ``None`` when no such board
    exists. A dynamic programme over the pits (``best[s]``: the best score of the pits so far
    holding ``s`` seeds); of boards scoring alike, the one whose earlier pits hold fewer seeds.
    """
    neg = -math.inf
    best = [neg] * (total + 1)
    best[0] = 0.0
    came_from: list[list[int]] = []
    peaks = 0.0  # the sum of the rows' best so far: a board's cost is peaks minus its score
    live = [0]  # the seeds the pits so far may hold, in order
    for row in log_likelihoods:
        best_here = max(row)
        low, high = 0, min(len(row) - 1, total if max_per_pit is None else max_per_pit)
        if window is not None:
            peak = row.index(best_here)  # the first of ties
            low, high = max(low, peak - window), min(high, peak + window)
        options = [(n, row[n]) for n in range(low, high + 1)]
        floor = neg
        if max_cost is not None:
            # Costs only grow pit by pit, so a board already dearer than max_cost stays so.
            peaks += best_here
            floor = peaks - max_cost
            options = [(n, v) for n, v in options if v >= best_here - max_cost]
        nxt = [neg] * (total + 1)
        came = [0] * (total + 1)
        reached = []
        for held in live:
            score = best[held]
            for n, v in options:
                if held + n > total:
                    break
                value = score + v
                if value > nxt[held + n] and value >= floor:
                    if nxt[held + n] == neg:
                        reached.append(held + n)
                    nxt[held + n] = value
                    came[held + n] = held
        best = nxt
        came_from.append(came)
        live = sorted(reached)
    if best[total] == neg:
        return None
    counts = []
    held = total
    for came in reversed(came_from):
        counts.append(held - came[held])
        held = came[held]
    return tuple(reversed(counts)), best[total]
