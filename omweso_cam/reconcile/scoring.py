"""Reconciliation: which legal event explains a stable reading of the board (pure, no numpy).

Given the confirmed position and an :class:`~omweso_cam.observation.Observation`, every
hypothesis the rules allow is scored by its log-likelihood under the reading:

* ``unchanged``: the board is still the confirmed position;
* ``successor``: a legal move was played (several moves may give the same board: all
  are kept, the first in the engine's order is canonical);
* ``in_progress``: the board is part-way through a legal move (some seeds in the hand,
  so the board holds fewer than 64), matching one of its sowing states;
* ``depth2``: two moves were played between stable readings (only searched when no
  single move explains the board).

A reading not explained by any of them (the unconstrained best reading fits much
better than the best legal board, and differs from a complete one in at least two pits)
is an ``illegal_sowing``. Because every hypothesis is
a full board that holds 64 seeds (or 64 minus the hand), the 64-seed invariant is part of
the scoring: a reading of 61 seeds cannot be a completed move.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from omweso_cam.observation import Observation, fit_total
from omweso_cam.rules import (
    CIRCUIT,
    TOTAL_SEEDS,
    Move,
    Outcome,
    Position,
    RuleSet,
    SowingState,
    sowing_states_all,
    square_name,
    successors,
)

#: Reconciliation statuses.
ACCEPTED = "accepted"
UNCHANGED = "unchanged"
AMBIGUOUS = "ambiguous"
IN_PROGRESS = "in_progress"
ILLEGAL = "illegal_sowing"
NOT_STABLE = "not_stable"

#: Candidate kinds.
KIND_UNCHANGED = "unchanged"
KIND_SUCCESSOR = "successor"
KIND_IN_PROGRESS = "in_progress"
KIND_DEPTH2 = "depth2"
KIND_DEPTH2_IN_PROGRESS = "depth2_in_progress"
#: Kinds of a part-way board (seeds still in the hand).
PART_WAY_KINDS = (KIND_IN_PROGRESS, KIND_DEPTH2_IN_PROGRESS)


class ReconcileError(ValueError):
    """Inputs reconcile cannot work with (e.g. an observation without likelihoods)."""


@dataclass(frozen=True)
class ReconcileConfig:
    """Decision thresholds, in nats (natural-log likelihood units).

    ``illegal_min_excess_nats``: how much better the unconstrained reading must fit
    than the best legal hypothesis before the board is called illegal; below it a reading
    off every legal board is a misread (the best legal board is taken when it beats the
    rest by ``ambiguous_margin_nats``, else the tracker waits). 8.5: one seed dropped in a
    wrong pit costs the counter up to about 17.5 nats (its 1% spread over all counts caps a
    pit near 8.8), over 8.5 when it is about 99% sure of both pits; a reader as unsure as
    ``Observation.from_counts``'s default (sigma 0.35: a heap of 4 at 57%) pays only 5-8,
    and to it two pits off by one are an everyday misread. Raised
    from 4.5 on 2026-12-01 (docs/tracking.md, "The alarm's bar"): on the saved readings of
    track_bench's 156 films with wrong laps false alarms 11 -> 3 with the set-up given and
    10 -> 0 read, moves 1074 -> 1095 and 1065 -> 1083 of 1244, flags 98 -> 100 and
    100 -> 101; on 48 films of one-seed slips flags 21 -> 20 and 22 -> 20 of 48.
    The "unconstrained reading" holds at most 64 seeds (a reading of more is brought back
    to 64 the most likely way); ``total_search_window`` bounds how far from its most
    likely count each pit is searched for that.
    ``illegal_min_pits``: an illegal sowing moves seeds, so its board differs from every
    complete legal board in at least two pits (where a seed went and where it should have
    gone); a reading off the best legal board in one pit only is a misread of that pit,
    however confident (a stable board does not gain or lose a seed by itself). Not for a
    part-way best board: the seeds in the hand may have gone into any one wrong pit.
    ``short_misread_max_seeds``: nor does it leave a pit short of seeds without another
    pit holding more, so a reading that differs from the best complete legal board only by
    pits read 1 to this many seeds short is a misread (heaps read low: seeds hide each
    other, the counter's commonest error), never an illegal sowing. A board with more seeds
    gone from a pit (taken off the board) is still one. On seed 2031's 55 px film the true
    third move, two of its heaps of 5 read as 4 at 97% and 91%, was an alarm that lost the game.
    The same slack goes on what a hand can hold (:func:`_most_in_hand`): a board read with more
    seeds gone than that is a misread too (ambiguous), however it is spread over the pits.
    ``ambiguous_margin_nats``: the best hypothesis must beat the best *different board*
    by this much to be accepted.
    ``in_progress_prior_nats``: prior cost of a part-way board: a stable board is far more
    often a completed move than a pause with seeds in the hand (so a reading between a
    completed move and "one seed still to drop" goes to the completed move).
    ``depth2_prior_nats``: prior cost of two moves between stable readings (a missed
    reading is rare, and hundreds of two-move boards would otherwise fit noise).
    ``call_illegal``: whether a reading no legal board explains is called an illegal
    sowing; when False (counts the reader distrusts) the best legal explanation is
    returned instead. Either way ``illegal_min_excess_nats`` (or ``explained_max_excess_nats``,
    below, when set) still says when a board is not explained: when the hinted part-way
    boards are given up for every hypothesis, and when two moves are searched.
    ``max_opponent_misfit_nats``: a sowing, legal or not, puts seeds only into the mover's
    own pits and takes from the opponent's only whole pits (a capture, right or wrong). A
    reading that would be an illegal sowing but whose opponent half no such board explains
    within this many nats (:func:`opponent_misfit`; pits the camera steadily misreads,
    ``bias``, count as read) is the camera's misread, not the players' mistake: it is
    ambiguous (no move, no alarm) and the tracker waits for a reading it can explain. None:
    any board may be called illegal (as the tracker does in the set-up phase, and once the
    referee has corrected a pit of the reading). The price: seeds put into the opponent's pits, or moved
    among them, are not called an illegal sowing. 4.5, the illegal test's own margin at the
    time, not tuned: on the saved readings of track_bench's 132 fresh films (seeds 2026-2047) false
    alarms 28 -> 9 with the set-up given, 19 -> 8 with it read; moves as before; flags 83 ->
    82 and 84 -> 84 (docs/tracking.md, "An opponent's half no sowing leaves").
    ``depth2_hinted_only``: two moves are searched only after a move the ``hint`` says
    is in progress (it was finished unseen, then the reply played), and not at all
    without a hint. For counts the reader distrusts: read 15-25 pits wrong a frame, a
    board finds some two-move explanation almost anywhere.
    ``explained_max_excess_nats``: the misfit up to which a board counts as explained for the
    search (the hinted part-way boards kept, no two-move search), where it is not the bar for
    calling it illegal (None: ``illegal_min_excess_nats``). The tracker's set-up phase calls a
    board unlike every first move a new arrangement only at a lenient bar, but searches as in play.
    """

    illegal_min_excess_nats: float = 8.5
    illegal_min_pits: int = 2
    short_misread_max_seeds: int = 2
    total_search_window: int = 8
    ambiguous_margin_nats: float = 1.5
    in_progress_prior_nats: float = 2.0
    depth2_prior_nats: float = 3.0
    search_depth2: bool = True
    call_illegal: bool = True
    depth2_hinted_only: bool = False
    search_in_progress: bool = True
    closest_count: int = 3
    cache_positions: int = 128
    max_opponent_misfit_nats: float | None = 4.5
    explained_max_excess_nats: float | None = None

    @property
    def explained_nats(self) -> float:
        """The misfit up to which a board counts as explained for the search (``explained_max_excess_nats``)."""
        if self.explained_max_excess_nats is None:
            return self.illegal_min_excess_nats
        return self.explained_max_excess_nats


@dataclass(frozen=True)
class Progress:
    """How far a legal move has got when the board matches one of its sowing states."""

    move: str
    step: int  # index into the move's sowing states
    steps: int  # number of sowing states of the move
    lap: int  # 1-based
    pit: str  # square just sown into or lifted
    event: str  # "drop" | "lift"
    in_hand: int
    continuation: tuple[str, ...]  # the next pits to be sown, in order


@dataclass(frozen=True)
class Candidate:
    """One hypothesis: a board the rules allow now, with its score under the reading."""

    kind: str
    board: tuple[int, ...]
    score: float
    moves: tuple[str, ...] = ()  # every move (or "m1 m2" pair for depth 2) leading to this board
    progress: tuple[Progress, ...] = ()
    plies: tuple[tuple[Move, Outcome], ...] = ()  # the canonical path (successor / depth2)
    prior_nats: float = 0.0  # prior cost included in ``score`` (rarer kinds of explanation)

    @property
    def fit(self) -> float:
        """Log-likelihood of the board alone (``score`` without the prior)."""
        return self.score + self.prior_nats

    @property
    def move(self) -> str | None:
        """The canonical move (first of ``moves``), if any."""
        return self.moves[0] if self.moves else None


@dataclass(frozen=True)
class Reconciliation:
    """What a stable reading means relative to the confirmed position."""

    status: str
    frame_index: int
    observed: tuple[int, ...] | None  # most likely count per pit (image order)
    best: Candidate | None = None
    candidates: tuple[Candidate, ...] = ()  # best first, one per distinct board
    margin_nats: float = 0.0  # best vs best different board
    excess_nats: float = 0.0  # unconstrained reading vs best legal hypothesis
    differs: tuple[str, ...] = ()  # illegal: squares where the reading differs from ``nearest``
    nearest: Candidate | None = None  # illegal: the best-fitting legal board (part-way ones included)
    where: str | None = None  # illegal: "lap 2, pit e2"
    where_step: tuple[str, int] | None = None  # illegal: (move, sowing-state index) of ``where``
    closest: tuple[Candidate, ...] = field(default=())
    opponent_misfit_nats: float = 0.0  # how far the reading's opponent half is from any the mover's sowing leaves
    unexplained: tuple[str, ...] = ()  # ambiguous as a misread: the opponent's pits read as no sowing leaves them
    seeds_missing: int = 0  # ambiguous as a misread: seeds read gone from the board, more than a hand can hold

    @property
    def plies(self) -> tuple[tuple[Move, Outcome], ...]:
        """The plies to commit: one or two for an accepted reading; for a part-way board one
        move after a missed reading, the completed move before it."""
        if self.status in (ACCEPTED, IN_PROGRESS) and self.best is not None:
            return self.best.plies
        return ()

    @property
    def observed_total(self) -> int | None:
        return None if self.observed is None else sum(self.observed)


@dataclass(frozen=True)
class MoveTrace:
    """A legal move with its outcome and every sowing state a camera could see."""

    move: Move
    outcome: Outcome
    states: tuple[SowingState, ...]


class TraceCache:
    """LRU cache of the legal moves and their sowing states, per (position, rules)."""

    def __init__(self, size: int = 128) -> None:
        self.size = size
        # Keyed by the frozen RuleSet itself: equal rule sets hash alike, and nothing is
        # recomputed per lookup (``rules.overrides()`` builds the preset to compare with).
        self._entries: OrderedDict[tuple[Position, RuleSet], tuple[MoveTrace, ...]] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def traces(self, position: Position, rules: RuleSet, *, with_states: bool = True) -> tuple[MoveTrace, ...]:
        key = (position, rules)
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
            self.hits += 1
            return entry
        self.misses += 1
        if with_states:
            entry = tuple(MoveTrace(m, o, s) for m, o, s in sowing_states_all(position, rules))
        else:
            entry = tuple(MoveTrace(m, o, ()) for m, o in successors(position, rules))
        if with_states:  # a states-free entry is never cached (it would hide the states)
            self._entries[key] = entry
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return entry


_DEFAULT_CACHE = TraceCache()


def _most_in_hand(position: Position, traces: Sequence[MoveTrace]) -> int:
    """The most seeds a player sowing from ``position`` can hold in the hand, legal or not.

    Seeds never leave the board but in the mover's hand: at most what any legal move holds at
    one of its sowing states, plus one wrong capture's worth (the opponent's two fullest pits:
    a capture takes two), so a board taken wrongly mid-move is still an illegal sowing.
    """
    legal = max((state.in_hand for trace in traces for state in trace.states), default=0)
    opponent = sorted((position.board[i] for i in CIRCUIT[position.side_to_move.other]), reverse=True)
    return legal + sum(opponent[:2])


def score_board(log_likelihoods: Sequence[Sequence[float]], board: Sequence[int]) -> float:
    """Log-likelihood of a full board (32 counts) under a reading."""
    return sum(row[n] for row, n in zip(log_likelihoods, board, strict=True))


def misfit_nats(log_likelihoods: Sequence[Sequence[float]], board: Sequence[int]) -> float:
    """How much better the reading's most likely counts fit it than ``board`` (nats)."""
    return sum(max(row) for row in log_likelihoods) - score_board(log_likelihoods, board)


Scorer = Callable[[Sequence[int]], float]


def steady_reads(position: Sequence[int], bias: Sequence[int] | None, top: int) -> dict[int, int]:
    """Pits the camera steadily misreads (``bias``, see :func:`board_scorer`): pit -> the count it
    reads while the pit holds its count in ``position`` (a count off the likelihoods' 0..``top`` is left out)."""
    if not bias:
        return {}
    return {i: position[i] + r for i, r in enumerate(bias) if r and 0 <= position[i] + r <= top}


def board_scorer(
    log_likelihoods: Sequence[Sequence[float]], position: Sequence[int], bias: Sequence[int] | None = None,
) -> Scorer:
    """Log-likelihood of a hypothesis board, allowing for pits the camera persistently misreads.

    ``bias[i]`` is how far pit ``i`` read from its count in ``position`` while nothing
    touched the board (the tracker learns it). A hypothesis that leaves the pit's count as
    it was most likely left its seeds where they were, so the reading may be off the same
    way: the pit is scored at ``count + bias`` or at ``count``, whichever fits better (a
    hand may have stirred the seeds). A hypothesis that changes the pit has new seeds
    there, scored at face value.
    """
    if not bias or not any(bias):
        return lambda board: score_board(log_likelihoods, board)
    shifted = [(i, position[i], reads) for i, reads in steady_reads(position, bias, len(log_likelihoods[0]) - 1).items()]

    def score(board: Sequence[int]) -> float:
        total = score_board(log_likelihoods, board)
        for i, count, reads in shifted:
            if board[i] == count:
                total += max(0.0, log_likelihoods[i][reads] - log_likelihoods[i][count])
        return total

    return score


def opponent_misfit(log_likelihoods: Sequence[Sequence[float]], position: Position,
                    bias: Sequence[int] | None = None) -> tuple[float, tuple[str, ...]]:
    """How much better the reading fits its opponent half freely than as a sowing by the side to
    move can leave it: each of the opponent's pits as it was (or as it steadily misreads, ``bias``)
    or emptied by a capture. Nats (0 when the opponent's half is read as such), and the pits
    that cost them (image order)."""
    steady = steady_reads(position.board, bias, len(log_likelihoods[0]) - 1)
    total = 0.0
    squares = []
    for i in sorted(CIRCUIT[position.side_to_move.other]):
        row = log_likelihoods[i]
        count = position.board[i]
        fits = [row[count], row[0]]
        if i in steady:
            fits.append(row[steady[i]])
        cost = max(row) - max(fits)
        if cost > 0:
            total += cost
            squares.append(square_name(i))
    return total, tuple(squares)


def differing_squares(a: Sequence[int], b: Sequence[int]) -> tuple[str, ...]:
    """Squares (image order) where two 32-pit boards hold different counts."""
    return tuple(square_name(i) for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y)


def corrected_reading(observed: Sequence[int], position: Sequence[int], bias: Sequence[int] | None) -> tuple[int, ...]:
    """The reading with each persistently misread pit (``bias``) that still reads as before put back to its count."""
    if not bias:
        return tuple(observed)
    return tuple(p if r and o == p + r else o for o, p, r in zip(observed, position, bias, strict=True))


def reconcile(
    position: Position,
    observation: Observation,
    rules: RuleSet,
    *,
    config: ReconcileConfig = ReconcileConfig(),
    cache: TraceCache | None = None,
    hint: Sequence[tuple[str, int]] | None = None,
    bias: Sequence[int] | None = None,
) -> Reconciliation:
    """Explain a stable reading relative to the confirmed ``position``.

    ``hint``: (move, sowing-state index) pairs still possible from earlier in-progress
    readings of the same move. Hypotheses consistent with it are tried first; the full
    set is used when they do not explain the board (an earlier reading may have been wrong).
    ``bias``: per-pit persistent misreads of the camera relative to ``position`` (see
    :func:`board_scorer`); ``None`` when every pit is taken at face value.
    """
    if not observation.is_stable or observation.log_likelihoods is None:
        return Reconciliation(NOT_STABLE, observation.frame_index, None)
    ll = observation.log_likelihoods
    observed = observation.counts()
    assert observed is not None
    free_score = sum(max(row) for row in ll)
    traces = (cache or _DEFAULT_CACHE).traces(position, rules)
    score = board_scorer(ll, position.board, bias)

    all_candidates = _depth1_candidates(position, traces, score, config)
    candidates = all_candidates
    if hint:
        allowed = _hinted(all_candidates, hint)
        if allowed and free_score - allowed[0].fit <= config.explained_nats:
            candidates = allowed
    best = candidates[0]
    if free_score - best.fit > config.explained_nats and config.search_depth2:
        firsts = traces
        if config.depth2_hinted_only:  # no hint: no first move, so no two-move board
            hinted = {move for move, _ in hint or ()}
            firsts = tuple(t for t in traces if str(t.move) in hinted)
        deeper = _depth2_candidates(firsts, score, cache or _DEFAULT_CACHE, rules, config)
        if deeper and deeper[0].score > best.score:
            candidates = tuple(sorted((*candidates, *deeper), key=lambda c: -c.score))
            best = candidates[0]
    # Priors rank legal explanations; the misfit alone decides "illegal". The illegal
    # alternative is any board of at most 64 seeds (some may be in the hand; a sowing,
    # legal or not, never creates seeds), so a reading of more than 64 is first brought
    # back to 64 the most likely way before it is held against the legal board.
    excess = free_score - best.fit
    if sum(observed) > 64 and excess > config.illegal_min_excess_nats:
        fit = fit_total(ll, 64, window=config.total_search_window)
        excess = (fit[1] if fit is not None else float("-inf")) - best.fit
    runner_up = next((c for c in candidates[1:] if c.board != best.board), None)
    margin = best.score - runner_up.score if runner_up is not None else float("inf")
    common = Reconciliation(
        ILLEGAL, observation.frame_index, observed, candidates=candidates[:8], margin_nats=margin,
        excess_nats=excess,
    )
    seen = corrected_reading(observed, position.board, bias)
    lacking = [b - o for o, b in zip(seen, best.board, strict=True) if o != b]  # per differing pit
    complete = best.kind in (KIND_UNCHANGED, KIND_SUCCESSOR, KIND_DEPTH2)
    short = complete and all(0 < n <= config.short_misread_max_seeds for n in lacking)
    if (config.call_illegal and excess > config.illegal_min_excess_nats and not short
            and (len(lacking) >= config.illegal_min_pits or not complete)):
        missing = TOTAL_SEEDS - sum(seen)
        if missing > _most_in_hand(position, traces) + config.short_misread_max_seeds:
            # More seeds gone than a hand can hold: the board is misread (a dark or blurred
            # board read 20-50 seeds short raised alarms on films whose moves were lost).
            return replace(common, status=AMBIGUOUS, best=best, seeds_missing=missing)
        opponent, unexplained = opponent_misfit(ll, position, bias)
        if config.max_opponent_misfit_nats is not None and opponent > config.max_opponent_misfit_nats:
            # No sowing leaves the opponent's half so: the board is misread, not sown wrongly.
            return replace(common, status=AMBIGUOUS, best=best, opponent_misfit_nats=opponent, unexplained=unexplained)
        closest = tuple(c for c in all_candidates if c.kind == KIND_SUCCESSOR)[: config.closest_count]
        anchor = min(
            (c for c in all_candidates if c.kind != KIND_UNCHANGED), key=lambda c: -c.score, default=best
        )
        differs = differing_squares(seen, anchor.board)
        where, where_step = _where(traces, anchor, seen, hint)
        return replace(common, differs=differs, nearest=anchor, where=where, where_step=where_step, closest=closest,
                       opponent_misfit_nats=opponent)
    if margin < config.ambiguous_margin_nats:
        close = [c for c in candidates if best.score - c.score < config.ambiguous_margin_nats]
        if not all(c.kind in PART_WAY_KINDS and c.kind == best.kind and c.plies == best.plies for c in close):
            return replace(common, status=AMBIGUOUS, best=best)
        # Part-way boards too close to tell apart (a seed more or less in a heap): still a
        # move in progress, and every move among them is still possible.
        progress = tuple(p for c in close for p in c.progress)
        best = Candidate(best.kind, best.board, best.score, tuple(dict.fromkeys(m for c in close for m in c.moves)),
                         progress, best.plies, best.prior_nats)
    status = {
        KIND_UNCHANGED: UNCHANGED,
        KIND_SUCCESSOR: ACCEPTED,
        KIND_DEPTH2: ACCEPTED,
        KIND_IN_PROGRESS: IN_PROGRESS,
        KIND_DEPTH2_IN_PROGRESS: IN_PROGRESS,
    }[best.kind]
    return replace(common, status=status, best=best)


def _depth1_candidates(
    position: Position,
    traces: tuple[MoveTrace, ...],
    score: Scorer,
    config: ReconcileConfig,
) -> tuple[Candidate, ...]:
    """One candidate per distinct board: unchanged, every successor, every sowing state."""
    finals: dict[tuple[int, ...], list[MoveTrace]] = {}
    for trace in traces:
        if not trace.outcome.never_ending:
            finals.setdefault(trace.outcome.position.board, []).append(trace)
    out = [Candidate(KIND_UNCHANGED, position.board, score(position.board))]
    for board, group in finals.items():
        out.append(Candidate(
            KIND_SUCCESSOR, board, score(board),
            moves=tuple(str(t.move) for t in group),
            plies=((group[0].move, group[0].outcome),),
        ))
    if config.search_in_progress:
        partial: dict[tuple[int, ...], list[Progress]] = {}
        for trace in traces:
            last = len(trace.states) - 1
            for step, state in enumerate(trace.states):
                if state.board in finals or state.board == position.board:
                    continue
                if step == last and not trace.outcome.never_ending:
                    continue
                partial.setdefault(state.board, []).append(_progress(trace, step))
        for board, progress in partial.items():
            out.append(Candidate(
                KIND_IN_PROGRESS, board, score(board) - config.in_progress_prior_nats,
                moves=tuple(dict.fromkeys(p.move for p in progress)),
                progress=tuple(progress), prior_nats=config.in_progress_prior_nats,
            ))
    out.sort(key=lambda c: -c.score)
    return tuple(out)


def _progress(trace: MoveTrace, step: int) -> Progress:
    state = trace.states[step]
    continuation = tuple(s.pit for s in trace.states[step + 1 : step + 9] if s.event == "drop")
    return Progress(
        move=str(trace.move), step=step, steps=len(trace.states), lap=state.lap + 1, pit=state.pit,
        event=state.event, in_hand=state.in_hand, continuation=continuation,
    )


def _hinted(candidates: tuple[Candidate, ...], hint: Sequence[tuple[str, int]]) -> tuple[Candidate, ...]:
    """Candidates still consistent with earlier in-progress readings: later states or the end of those moves."""
    reached: dict[str, int] = {}
    for move, step in hint:
        reached[move] = min(step, reached.get(move, step))
    out = []
    for c in candidates:
        if c.kind == KIND_SUCCESSOR and any(m in reached for m in c.moves):
            out.append(c)
        elif c.kind == KIND_IN_PROGRESS:
            kept = tuple(p for p in c.progress if p.move in reached and p.step >= reached[p.move])
            if kept:
                out.append(Candidate(c.kind, c.board, c.score, tuple(dict.fromkeys(p.move for p in kept)), kept,
                                     prior_nats=c.prior_nats))
    return tuple(out)


def _depth2_candidates(
    traces: tuple[MoveTrace, ...], score: Scorer, cache: TraceCache, rules: RuleSet,
    config: ReconcileConfig,
) -> tuple[Candidate, ...]:
    """Boards two plies away (a reading was missed), one candidate per distinct board.

    With ``search_in_progress`` also the part-way boards of the second move (a move
    completed unseen, then the next one paused).
    """
    boards: dict[tuple[int, ...], Candidate] = {}
    seen_first: set[tuple[int, ...]] = set()

    def add(kind: str, board: tuple[int, ...], cost: float, pair: str, plies: tuple[tuple[Move, Outcome], ...],
            progress: tuple[Progress, ...] = ()) -> None:
        known = boards.get(board)
        if known is None:
            boards[board] = Candidate(kind, board, score(board) - cost, (pair,), progress, plies, cost)
        elif pair not in known.moves and known.kind == kind:
            boards[board] = Candidate(kind, board, known.score, (*known.moves, pair), (*known.progress, *progress),
                                      known.plies, known.prior_nats)

    for first in traces:
        outcome = first.outcome
        if outcome.never_ending or outcome.result is not None or outcome.position.board in seen_first:
            continue
        seen_first.add(outcome.position.board)
        first_ply = ((first.move, outcome),)
        for second in cache.traces(outcome.position, rules, with_states=config.search_in_progress):
            pair = f"{first.move} {second.move}"
            if not second.outcome.never_ending:
                add(KIND_DEPTH2, second.outcome.position.board, config.depth2_prior_nats, pair,
                    (*first_ply, (second.move, second.outcome)))
            last = len(second.states) - 1
            for step, state in enumerate(second.states):
                if step == last and not second.outcome.never_ending:
                    continue
                add(KIND_DEPTH2_IN_PROGRESS, state.board, config.depth2_prior_nats + config.in_progress_prior_nats,
                    pair, first_ply, (_progress(second, step),))
    return tuple(sorted(boards.values(), key=lambda c: -c.score))


def _where(
    traces: tuple[MoveTrace, ...],
    anchor: Candidate,
    observed: tuple[int, ...],
    hint: Sequence[tuple[str, int]] | None,
) -> tuple[str | None, tuple[str, int] | None]:
    """Where the sowing left the closest legal move: "lap L, pit P".

    Everything up to the closest part-way state (or the last in-progress state the
    tracker saw) looked right, so the error came after it: the first later step whose
    pit holds a different count in the reading, else the next step (the seed that should
    have gone there went elsewhere). For a completed move, the first step that sets a
    pit's final count to something the reading disagrees with.
    """
    if anchor.kind == KIND_IN_PROGRESS and anchor.progress:
        name, until = anchor.progress[0].move, anchor.progress[0].step
        after = until
    elif anchor.kind == KIND_SUCCESSOR and anchor.moves:
        name, until, after = anchor.moves[0], -1, -1
    else:
        return None, None
    trace = next((t for t in traces if str(t.move) == name), None)
    if trace is None or not trace.states:
        return None, None
    if until < 0:
        until = len(trace.states) - 1
    hinted = [step for move, step in hint or () if move == name]
    if hinted:
        after = min(hinted)  # the furthest point the earlier readings surely reached
    reference = trace.states[until].board
    differing = set(differing_squares(observed, reference))
    # A pit's final count in the move is set by the last step that touches it.
    last_touch: dict[str, int] = {}
    for step, state in enumerate(trace.states):
        last_touch[state.pit] = step
    steps = sorted(last_touch[p] for p in differing if p in last_touch and last_touch[p] > after)
    step = after + 1 if anchor.kind == KIND_IN_PROGRESS or not steps else steps[0]
    if step >= len(trace.states):
        return None, None
    state = trace.states[step]
    return f"lap {state.lap + 1}, pit {state.pit}", (name, step)


def fit_setup(
    log_likelihoods: Sequence[Sequence[float]], *, seeds_per_side: int = 32, max_per_pit: int | None = None
) -> tuple[tuple[int, ...], float]:
    """The most likely set-up board under a reading, and its score.

    Each side's 16 pits hold exactly ``seeds_per_side`` seeds, none more than
    ``max_per_pit`` (the preset's set-up cap): :func:`fit_total` per side, so a
    few misread pits of a free arrangement are corrected by the 32-per-side rule.
    """
    cap = seeds_per_side if max_per_pit is None else min(max_per_pit, seeds_per_side)
    board: list[int] = []
    total = 0.0
    for half in (log_likelihoods[:16], log_likelihoods[16:]):
        fit = fit_total(half, seeds_per_side, max_per_pit=cap)
        if fit is None:
            raise ReconcileError(f"no set-up of {seeds_per_side} seeds per side with at most {cap} per pit")
        board.extend(fit[0])
        total += fit[1]
    return tuple(board), total
