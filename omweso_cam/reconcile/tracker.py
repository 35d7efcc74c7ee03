"""The Tracker: follows a match from a stream of observations (vision -> **Tracker** -> store/events).

It holds the confirmed position and commits a move only when a stable reading has
agreed for ``confirm_frames`` frames. Seeds do not move by themselves: while no frame
since the position was confirmed showed motion or a hand, a reading that differs from
it is a misread, never a sowing (legal or not). When it differs in a few pits by a seed
or two, the tracker learns those pits' persistent misreads (a ``misreads`` event) and
expects them for as long as a hypothesis leaves the pit's seeds in place
(``scoring.board_scorer``), also across plies that leave the pit alone; a bigger
difference is reported once (``mismatch``: a wrongly confirmed position, or a camera
that cannot read this board) and judged again after the next hand. It raises an alarm
for an illegal sowing and then keeps the last legal position until the board is
restored (or a legal successor appears, or the referee decides). It also reads the
set-up, detects the first move, corrects a set-up it misread once a later move shows the
misread (``setup_corrected``), ends games, keeps the match score with the rules engine's
``Match`` and times moves.

Every change is returned from :meth:`Tracker.update` (and the referee methods) as
:class:`TrackerEvent` values, which the runner writes to the store and the event bus.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from omweso_cam.observation import HAND, MOVING, UNREADABLE, Observation, most_likely_counts
from omweso_cam.reconcile.scoring import (
    ACCEPTED,
    AMBIGUOUS,
    ILLEGAL,
    IN_PROGRESS,
    KIND_UNCHANGED,
    PART_WAY_KINDS,
    UNCHANGED,
    Progress,
    ReconcileConfig,
    Reconciliation,
    TraceCache,
    board_scorer,
    corrected_reading,
    differing_squares,
    fit_setup,
    misfit_nats,
    reconcile,
    score_board,
)
from omweso_cam.rules import (
    TOTAL_SEEDS,
    GameResult,
    IllegalMoveError,
    Lap,
    Move,
    Outcome,
    Position,
    RuleSet,
    Side,
    apply_move,
    square_index,
    square_name,
)
from omweso_cam.rules.match import MODES, SEEDS_PER_SIDE, Match, setup_problems
from omweso_cam.rules.record import REFEREE_MOVE

#: Tracker phases (the dashboard's ``phase``).
SETUP = "setup"
PLAYING = "playing"
ILLEGAL_PHASE = "illegal"
GAME_OVER = "game_over"
MATCH_OVER = "match_over"


class RefereeError(ValueError):
    """A referee action that does not apply now or has bad input; nothing was changed."""


@dataclass(frozen=True)
class TrackerConfig:
    """How cautious the tracker is. Times in seconds of the frame timestamps."""

    confirm_frames: int = 3
    # An illegal sowing is called only after this many still frames in a row read the board
    # illegal (None: ``confirm_frames``), whatever misreads change between them; the board's
    # own reading need not repeat, as a heap misread differently on each frame is still one
    # illegal board. The runner sets it from ``RunnerConfig.alarm_confirm_s`` (see there).
    alarm_confirm_frames: int | None = None
    # Readings of one still scene whose likelihoods are averaged. A reading that repeats the one
    # before (the runner reads a still board a few times, then repeats its last reading) adds no
    # evidence and takes no place: at 30 frames/s the last of three reads would otherwise
    # outweigh the others six to one, and push them out of the average.
    average_frames: int = 8
    reconcile: ReconcileConfig = field(default_factory=ReconcileConfig)
    mode: str = "classical"
    blitz_start_limit_s: float = 3.0
    move_limit_s: float = 180.0
    auto_setup: bool = True  # confirm a stable, valid set-up by itself when the first move follows it
    # Misfit (nats) above which a changed board after a read set-up is a new arrangement
    # rather than the first move: lenient, as the set-up itself was read without the rules' help
    # (scaled by ``distrusted_misfit_scale`` on counts the reader distrusts).
    first_move_min_excess_nats: float = 15.0
    # A set-up is taken from a still board when the best-fitting arrangement (32 seeds a side,
    # the preset's cap) is within this many nats of the reading: looser than the illegal-sowing
    # test, as a few seeds misread in a board of 64 must not hide the set-up the players laid
    # out, and the first move still has to confirm it. On films read through a calibration
    # (track_bench's fresh six and the bundled three) one view a frame (RunnerConfig.fixed_views=1)
    # followed 56 of 71 moves instead of 47; eight views 57 either way.
    setup_max_excess_nats: float = 10.0
    # Misreads of an untouched board are learnt in at most this many pits, each off by at
    # most this many seeds; a bigger difference is a ``mismatch`` (nothing learnt).
    misread_max_pits: int = 4
    misread_max_shift: int = 2
    # ... in up to this many pits when the position itself explains the reading better than
    # any legal move (so no move was made unseen) and the reading has seeds too few or too
    # many (so it is misread: a board at rest holds 64). A blurred board (2026-11-30, seed 2028's
    # 45 px film) read six or seven heaps of 4 as 3 from its first frame; unlearnt, the
    # first move's reading carried those misreads too and was an illegal sowing.
    misread_max_pits_explained: int = 8
    # Counts the reader distrusts (pits too small in the picture) rarely fit a set-up within
    # ``illegal_min_excess_nats``; their best-fitting set-up is taken anyway when each side's
    # read total is within this many seeds of the set-up's (not a half-made arrangement).
    unreliable_setup_max_missing: int = 4
    # A set-up the camera read (not confirmed by the referee) may be wrong in a pit it
    # misreads steadily (a heap of 4 read as 3: the fit then puts the missing seed in some
    # other pit). That shows only once a move changes the misread heap, as an "illegal"
    # board a few plies later. Before raising that alarm, set-ups a few seeds away are
    # tried (:meth:`Tracker._setup_correction`); this many plies into the game at most.
    setup_correction_plies: int = 16
    # RULES.md §3: "The standard arrangement is 4 in each outer pit"; players may arrange
    # freely instead. A side is taken as standard when that fits the reading within this many
    # nats of the side's best-fitting arrangement (a prior of about 400:1 for the standard
    # over any one free arrangement). Read standard set-ups of the fresh films (track_bench,
    # seed 2026) fit a misread arrangement 0-4 nats better than the standard, and two of six
    # games went wrong from there; the bundled free set-up fits 108-122 nats better than it.
    standard_setup_prior_nats: float = 6.0
    # Counts the reader distrusts (pits too small in the picture) have overconfident
    # likelihoods (a temperature of 1.6-2.2 fitted them under 30 px, docs/vision.md "A head
    # for small pits"), so a reading's misfit says about half as much: in the set-up phase the
    # standard's prior and the first-move test (``first_move_min_excess_nats``) are multiplied
    # by this. Read on the 28-30 px films of track_bench's seeds 2027 and 2028, standard set-ups
    # fit a misread arrangement 7-12 nats better on a side, and their first moves missed every
    # move by more than 15 nats.
    distrusted_misfit_scale: float = 2.0
    # Counts the reader distrusts do call an illegal sowing once they have earned it on this
    # board: this many plies committed in a row with every still reading between them
    # explained by a legal board within ``illegal_min_excess_nats`` (the test trusted counts
    # pass). Pit size alone says little: on the films of track_bench's seeds 2026-2035, pits of
    # 25-36 px read within 0-6 nats of the game on some boards, 8-30 on others. None: never.
    # A set-up given (by the caller or the referee) whose still readings fit it before the first
    # move counts as one of these plies (since 2026-12-02: docs/tracking.md, "A set-up given counts
    # towards trust"); a set-up the camera read was fitted to its readings and does not, unless it
    # is the standard arrangement (no more the camera's choice than a set-up given) and its still
    # readings fit it as well (since 2026-12-03, docs/tracking.md "The set-up read by the camera").
    trust_after_plies: int | None = 3
    # A reader's distrust that flickers (a pit size or a smear near the reader's limit: seed
    # 2038's 48 px smeared film was distrusted on 25 of its 40 still frames, in 17 runs) is
    # announced once: a new ``unreliable`` event only after this many still frames in a row
    # on counts the reader trusted. The counts of each frame are still treated as it says.
    # The runner sets it from ``RunnerConfig.distrust_quiet_s``.
    distrust_quiet_frames: int = 12

    def __post_init__(self) -> None:
        if self.confirm_frames < 1:
            raise ValueError(f"confirm_frames must be >= 1, got {self.confirm_frames}")
        if self.alarm_confirm_frames is not None and self.alarm_confirm_frames < 1:
            raise ValueError(f"alarm_confirm_frames must be >= 1, got {self.alarm_confirm_frames}")
        if self.mode not in MODES:
            raise ValueError(f"unknown mode {self.mode!r}; expected one of {MODES}")


@dataclass(frozen=True)
class TrackerEvent:
    """Something the tracker decided: ``kind`` plus JSON-able ``data``."""

    kind: str
    frame: int
    time_s: float
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PlyRecord:
    """One committed ply of the current game."""

    n: int
    move: str
    side: Side
    before: Position
    after: Position
    frame: int
    time_s: float
    laps: tuple[Lap, ...] = ()
    alternatives: tuple[str, ...] = ()  # other moves giving the same board
    result: GameResult | None = None

    def as_dict(self) -> dict[str, Any]:
        """The ply as the dashboard lists it: n, move, side, position after, frame."""
        return {"n": self.n, "move": self.move, "side": self.side.value, "after": self.after.notation(),
                "frame": self.frame}


@dataclass(frozen=True)
class SetupReading:
    """The free set-up arrangement as read (with referee corrections)."""

    board: tuple[int, ...]
    problems: tuple[str, ...]
    suggested: tuple[int, ...] | None = None  # the most likely valid set-up, when it differs

    @property
    def valid(self) -> bool:
        return not self.problems


def board_rows(board: Sequence[int]) -> list[list[int]]:
    """A 32-pit board (image order) as 4 lists of 8 (ranks 4..1)."""
    return [list(board[r * 8 : r * 8 + 8]) for r in range(4)]


def lap_dict(lap: Lap) -> dict[str, Any]:
    """A lap as JSON: its fields by name (kind, origin, direction, hand, landing, then, captured)."""
    return lap._asdict()


#: The set-up correction's search (see Tracker._setup_correction): seeds moved at most, and
#: set-ups tried per seed (the set-up reading's likeliest; the correct one ranks near the top
#: as the set-up fit was a near tie there).
_CORRECTION_SEEDS = 3
_CORRECTION_CANDIDATES = 24


def _one_seed_moved(board: Sequence[int], cap: int, doubtful: set[int]) -> list[tuple[int, ...]]:
    """Every board with one seed moved between two pits of the same side, one of them in
    ``doubtful`` (none above ``cap``)."""
    out = []
    for side in (range(0, 16), range(16, 32)):
        for a in side:
            if board[a] == 0:
                continue
            for b in side:
                if b != a and board[b] < cap and (a in doubtful or b in doubtful):
                    moved = list(board)
                    moved[a] -= 1
                    moved[b] += 1
                    out.append(tuple(moved))
    return out


def setup_position(board: Sequence[int], first: Side) -> Position | None:
    """The ply-0 position of a board, or None when it does not hold 64 seeds."""
    if len(board) != 32 or sum(board) != 64 or min(board) < 0:
        return None
    return Position(tuple(board), first, 0, (0, 0))


def read_setup(board: Sequence[int], rules: RuleSet, first: Side) -> SetupReading:
    """Check a read set-up arrangement against the rules (32 per side, pit cap)."""
    position = setup_position(board, first)
    if position is None:
        south, north = sum(board[16:]), sum(board[:16])
        return SetupReading(tuple(board), (
            f"the board holds {sum(board)} seeds, not 64 (South {south}, North {north}; 32 each)",
        ))
    return SetupReading(tuple(board), tuple(setup_problems(position, rules)))


class Tracker:
    """Follows one match: set-up, moves, alarms, game ends, match score, move clocks."""

    def __init__(
        self,
        rules: RuleSet,
        *,
        initial: Position | None = None,
        first: Side = Side.SOUTH,
        config: TrackerConfig = TrackerConfig(),
        cache: TraceCache | None = None,
        match: Match | None = None,
    ) -> None:
        self.rules = rules
        self.config = config
        self.cache = cache or TraceCache(config.reconcile.cache_positions)
        self.match = match or Match(rules, first)
        self.game_number = len(self.match.results) + 1
        self.phase = SETUP
        self.camera = "no_board"
        self.frame = -1
        self.time_s = 0.0
        self.initial: Position | None = None
        self.position: Position | None = None
        self.plies: list[PlyRecord] = []
        self.observed: tuple[int, ...] | None = None
        self.setup: SetupReading | None = None
        self.alarm: dict[str, Any] | None = None
        self.in_progress: tuple[Progress, ...] = ()
        self.result: GameResult | None = None
        self.last_reconciliation: Reconciliation | None = None
        self.setup_corrected: dict[str, Any] | None = None  # this game's set-up correction (the event's data)
        self._corrections: dict[int, int] = {}
        # The last reading taken for a misread of the opponent's half (ReconcileConfig.max_opponent_misfit_nats):
        # {"squares": the opponent's pits it reads as no sowing leaves them, "frame": ...}; None once a reading is explained.
        self.unexplained: dict[str, Any] | None = None
        self._streak: deque[Observation] = deque(maxlen=max(config.average_frames, 1))  # distinct readings
        self._still_frames = 0  # still frames in the current run (the streak holds only distinct readings)
        self._pending: tuple[object, ...] | None = None
        self._pending_count = 0
        self._pending_since_s = 0.0
        self._first_frame_of_pending = -1
        self._confirm_now = False  # a referee correction is judged without waiting for frames
        self._memo: tuple[tuple[object, ...], Reconciliation] | None = None
        self._acted_on: tuple[object, ...] | None = None
        self._setup_candidate: Position | None = None
        self._setup_rows: Sequence[Sequence[float]] | None = None  # the reading the set-up candidate was fitted to
        self._setup_prior = self.config.standard_setup_prior_nats  # the standard's prior it was fitted with
        self._setup_fits = False  # the candidate is the standard and its readings fit it (trust_after_plies)
        # While the game's set-up is the camera's reading: (plies played, reading) of the
        # set-up and of each reading that committed a ply (see _setup_correction).
        self._evidence: list[tuple[int, Sequence[Sequence[float]]]] | None = None
        self._clock_start_s: float | None = None
        self._move_started = False
        self.late_start = False
        self.overtime = False
        # Persistent misreads of the confirmed position (reading - count per pit), and
        # whether anything (motion, a hand, a lost view) happened since it was confirmed.
        self._bias: tuple[int, ...] | None = None
        self._unreliable = False  # whether the reader distrusted its counts on the last still frame
        # Still frames in a row on counts the reader trusted (before any it distrusted: enough to
        # announce the first distrust; see distrust_quiet_frames).
        self._trusted_run = self.config.distrust_quiet_frames
        self._trust_announced = False  # a "counts_trusted" event stands while trust is earned
        self._fitting_since = 0  # plies before this one do not count towards trust (trust_after_plies)
        self._setup_to_check = False  # a set-up given whose still readings may yet count as a ply fitting
        self._disturbed = True
        self._seen_still = False
        self._mismatch: tuple[str, ...] | None = None  # the pits last reported in a mismatch
        if initial is not None:
            self._start_playing(initial)

    # ------------------------------------------------------------------ properties

    @property
    def first(self) -> Side:
        """The side that starts the current game (the next one once a game is over)."""
        return self.match.next_first_player

    @property
    def since_last_move_s(self) -> float | None:
        return None if self._clock_start_s is None else max(0.0, self.time_s - self._clock_start_s)

    @property
    def calls_illegal(self) -> bool:
        """Whether a sowing can be called illegal on the counts of the last still frame: counts the
        reader trusts, or distrusted ones that have fitted this game long enough (``trust_after_plies``)."""
        return not self._unreliable or self._trust_earned()

    @property
    def last_ply(self) -> PlyRecord | None:
        return self.plies[-1] if self.plies else None

    # ------------------------------------------------------------------ the loop

    def update(self, observation: Observation) -> list[TrackerEvent]:
        """Take one observation (any status); the events it caused."""
        self.frame, self.time_s = observation.frame_index, observation.timestamp_s
        self.camera = observation.status
        events: list[TrackerEvent] = []
        self._check_clocks(observation, events)
        if not observation.is_stable:
            # A corrupt frame moves no seeds; nor does what the camera says before the tracker's
            # first still frame: the stability check's warm-up ("moving" until it has seen a few
            # frames) or the reader's verdict on its first frames ("occluded", "no_board": a
            # blurred board read as occluded on its first still frame made the set-up, a few
            # heaps misread, an illegal sowing on the next frame).
            if observation.status != UNREADABLE and (observation.status == HAND or self._seen_still):
                self._disturbed = True
            self._streak.clear()
            self._still_frames = 0
            self._pending, self._pending_count = None, 0
            return events
        self._seen_still = True
        quiet = self._trusted_run >= self.config.distrust_quiet_frames
        self._trusted_run = 0 if observation.unreliable else self._trusted_run + 1
        if bool(observation.unreliable) != self._unreliable:
            # The reader starts (or stops) saying it cannot count this board well: an event when it
            # starts, unless it said so moments ago (distrust_quiet_frames).
            self._unreliable = bool(observation.unreliable)
            if observation.unreliable and quiet:
                events.append(self._event("unreliable", reason=observation.unreliable))
            if observation.unreliable and self.phase in (PLAYING, ILLEGAL_PHASE) and self._trust_earned():
                # The plies before fitted already (on counts trusted then, or distrusted a frame
                # before: a pit size near the limit flickers). Starting afresh here lost a flag.
                self._announce_trust(events)
        if self._streak and observation.log_likelihoods == self._streak[-1].log_likelihoods:
            self._streak[-1] = observation  # the same reading again: the newer frame, no new evidence
        else:
            self._streak.append(observation)
        self._still_frames += 1
        self._judge(self._merged(), events)
        return events

    def _judge(self, observation: Observation, events: list[TrackerEvent]) -> None:
        """Take a (merged) stable reading as the set-up or as play, by the phase."""
        if self.phase in (SETUP, GAME_OVER):
            self._update_setup(observation, events)
        elif self.phase in (PLAYING, ILLEGAL_PHASE):
            self._update_playing(observation, events)

    def _merged(self) -> Observation:
        """Mean likelihoods over the current run of stable frames, with referee corrections."""
        frames = list(self._streak)
        last = frames[-1]
        assert last.log_likelihoods is not None
        if len(frames) == 1:
            rows = [list(r) for r in last.log_likelihoods]
        else:
            k = len(frames)
            tables = [f.log_likelihoods for f in frames if f.log_likelihoods is not None]
            rows = [[sum(t[i][n] for t in tables) / k for n in range(len(last.log_likelihoods[i]))]
                    for i in range(32)]
        for index, count in self._corrections.items():
            rows[index] = [0.0 if n == count else -1e6 for n in range(len(rows[index]))]
        unreliable = next((f.unreliable for f in reversed(frames) if f.unreliable), "")
        return Observation(last.frame_index, last.timestamp_s, last.status, tuple(tuple(r) for r in rows),
                           unreliable=unreliable)

    def _agreed(self, key: tuple[object, ...], *, once: bool = True) -> bool:
        """Whether ``key`` has now been seen on ``confirm_frames`` stable frames in a row
        (``alarm_confirm_frames`` for an illegal verdict before the alarm); with ``once``, the
        first time only."""
        if key == self._pending:
            self._pending_count += 1
        else:
            self._pending, self._pending_count, self._pending_since_s = key, 1, self.time_s
            self._first_frame_of_pending = self.frame
        needed = self.config.confirm_frames
        if key[0] == ILLEGAL and self.phase != ILLEGAL_PHASE and self.config.alarm_confirm_frames is not None:
            needed = max(needed, self.config.alarm_confirm_frames)
        enough = self._confirm_now or self._pending_count >= needed
        if not enough or (once and key == self._acted_on):
            return False
        if once:
            self._acted_on = key
        return True

    def _clear_in_progress(self, events: list[TrackerEvent]) -> None:
        """No move is in progress any more; say so if one was."""
        if self.in_progress:
            self.in_progress = ()
            events.append(self._event("in_progress", moves=[], progress=None))

    def _event(self, event_kind: str, /, **data: Any) -> TrackerEvent:
        return TrackerEvent(event_kind, self.frame, self.time_s, data)

    # ------------------------------------------------------------------ set-up

    def _update_setup(self, observation: Observation, events: list[TrackerEvent]) -> None:
        counts = observation.counts()
        assert counts is not None
        self.observed = counts
        if self.phase == GAME_OVER:
            # The final board stays until the players clear it for the next game's set-up.
            assert self.position is not None and observation.log_likelihoods is not None
            ll = observation.log_likelihoods
            if misfit_nats(ll, self.position.board) <= self.config.reconcile.illegal_min_excess_nats:
                return
            if not self._agreed(("board_cleared", counts)):
                return
            self._begin_next_game(events)
        candidate = self._setup_candidate
        if candidate is not None and counts != candidate.board:
            # After a stable set-up, a changed board is first taken as the first move; only a
            # board no move explains, even allowing for misreads, is a new arrangement.
            # Before the first move the players may still rearrange either side, so a changed
            # opponent's half is a new arrangement, not a misread (max_opponent_misfit_nats).
            lenient = replace(self.config.reconcile, max_opponent_misfit_nats=None,
                              illegal_min_excess_nats=self.config.first_move_min_excess_nats)
            if observation.unreliable:
                # Distrusted counts (see distrusted_misfit_scale): held to 15 nats, the first
                # move's reading on two small-pit films (28 and 30 px) was taken as a new
                # arrangement, and the game was read from there. Unlike a move in play, a board
                # far from every move still is a new arrangement: the players may be setting up again.
                lenient = replace(lenient, illegal_min_excess_nats=(self.config.first_move_min_excess_nats
                                                                    * self.config.distrusted_misfit_scale))
            hint = self._hint()
            if hint:
                # The first move read part-way: searched on as in play (its bar for a board
                # explained; on distrusted counts two moves only after the move in progress), so
                # the board after it and the reply under way finds both. Held to the lenient
                # bar, a first move read in progress on every frame was never committed.
                lenient = replace(lenient, explained_max_excess_nats=self.config.reconcile.explained_nats,
                                  depth2_hinted_only=(self.config.reconcile.depth2_hinted_only
                                                      or bool(observation.unreliable)))
            result = reconcile(candidate, observation, self.rules, config=lenient, cache=self.cache,
                               hint=hint or None)
            if result.status == AMBIGUOUS:
                return
            completed = result.status == ACCEPTED or (result.status == IN_PROGRESS and bool(result.plies))
            if completed and self.config.auto_setup:
                # The first move played (or played, and the next begun: as in play, a move read
                # in progress is committed once the board shows the next one under way).
                assert result.best is not None
                if self._agreed(("first_move", result.best.board)):
                    events.append(self._event("setup_confirmed", position=candidate.notation(), by="first_move"))
                    setup_rows = self._setup_rows
                    self._start_playing(candidate, read=True, fitted=self._setup_fits)
                    if setup_rows is not None and self.config.setup_correction_plies > 0:
                        self._evidence = [(0, setup_rows)]
                    self.last_reconciliation = result
                    self._act(result, observation, events)
                return
            if result.status == IN_PROGRESS and result.best is not None:
                if self._agreed(("first_move_in_progress", result.best.board)):
                    self.in_progress = result.best.progress
                    events.append(self._event("in_progress", **(self.in_progress_dict() or {})))
                return
            if result.status == ILLEGAL and not self._agreed((ILLEGAL, None, candidate.board), once=False):
                # A stable set-up is given up for a new arrangement only once the board has read
                # unlike every first move for as long as an alarm in play waits
                # (``alarm_confirm_frames``): one view's misreads are no rearrangement.
                return
        rows = observation.log_likelihoods
        assert rows is not None
        fit, fit_score = fit_setup(rows, max_per_pit=self.rules.setup_max_per_pit)
        plausible = sum(max(row) for row in rows) - fit_score <= self.config.setup_max_excess_nats
        prior = self.config.standard_setup_prior_nats * (
            self.config.distrusted_misfit_scale if observation.unreliable else 1.0)
        fit = self._standard_where_close(rows, fit, prior)
        if observation.unreliable and not plausible:
            # As in play (see _reconcile): the most likely set-up is followed on distrusted
            # counts once both sides fit the standard arrangement within its prior, however many
            # seeds the heaps seem to hold (a smeared board reads heaps of 4 as 3-7), or once the
            # board holds about all the seeds (hands no longer arranging).
            plausible = fit == self._standard_setup() or all(
                abs(sum(half) - SEEDS_PER_SIDE) <= self.config.unreliable_setup_max_missing
                for half in (counts[:16], counts[16:]))
        reading = read_setup(counts, self.rules, self.first)
        if plausible and fit != counts:
            reading = SetupReading(reading.board, reading.problems, fit)
        changed = reading != self.setup
        self.setup = reading
        if changed:
            events.append(self._event("setup_reading", observed=board_rows(counts), valid=reading.valid,
                                      problems=list(reading.problems),
                                      suggested=None if reading.suggested is None else board_rows(reading.suggested)))
        # Enough still frames with a plausible set-up: the candidate is the fit of all of them
        # (it may still improve while the frames of this view are averaged).
        if plausible and self._still_frames >= self.config.confirm_frames:
            candidate = setup_position(fit, self.first)
            # Kept only when the reading was not itself a valid set-up: a set-up read cleanly is
            # never revisited (see _setup_correction), so no later board is explained by it.
            self._setup_rows = rows if fit != counts else None
            self._setup_prior = prior
            self._setup_fits = (candidate is not None and candidate.board == self._standard_setup()
                                and misfit_nats(rows, candidate.board) <= self.config.reconcile.illegal_min_excess_nats)
            if candidate != self._setup_candidate:
                self._setup_candidate = candidate
                events.append(self._event("setup_stable", position=candidate.notation() if candidate else None))
                self._clear_in_progress(events)  # a first move read part-way from the set-up given up

    def _standard_setup(self) -> tuple[int, ...] | None:
        """The standard arrangement's board, or None where a club's cap forbids it."""
        standard = Position.standard().board
        cap = self.rules.setup_max_per_pit
        return None if cap is not None and cap < max(standard) else standard

    def _standard_where_close(self, rows: Sequence[Sequence[float]], fit: tuple[int, ...],
                              prior: float) -> tuple[int, ...]:
        """``fit`` with each side that fits the standard arrangement within ``prior`` nats made
        standard (``standard_setup_prior_nats``, scaled on distrusted counts)."""
        standard = self._standard_setup()
        if standard is None:
            return fit
        board = list(fit)
        for side in (range(0, 16), range(16, 32)):
            loss = sum(rows[i][fit[i]] - rows[i][standard[i]] for i in side)
            if loss <= prior:
                for i in side:
                    board[i] = standard[i]
        return tuple(board)

    def _standard_prior_lost(self, taken: Sequence[int], other: Sequence[int]) -> float:
        """The prior (nats) a set-up ``other`` forgoes against the set-up ``taken``: for each side
        ``taken`` holds in the standard arrangement and ``other`` does not (as the set-up fit
        weighed them, :meth:`_standard_where_close`, with the prior the set-up was taken on)."""
        standard = self._standard_setup()
        if standard is None:
            return 0.0
        return self._setup_prior * sum(
            1 for side in (range(0, 16), range(16, 32))
            if all(taken[i] == standard[i] for i in side) and any(other[i] != standard[i] for i in side))

    def _begin_next_game(self, events: list[TrackerEvent]) -> None:
        self.game_number = len(self.match.results) + 1
        self.phase = SETUP
        self.initial = self.position = None
        self.plies = []
        self.result = None
        self.alarm = None
        self.in_progress = ()
        self._setup_candidate = None
        self._setup_rows = None
        self.setup_corrected = None
        self._corrections.clear()
        self._clock_start_s = None
        events.append(self._event("game_start", number=self.game_number, first=self.first.value))

    def _start_playing(self, initial: Position, *, read: bool = False, fitted: bool = False) -> None:
        """Play from ``initial``; ``read``: the set-up is the camera's own reading, not given (by the
        caller or the referee); ``fitted``: a set-up read as the standard arrangement, its readings
        fitting it, which counts as a ply fitting (``trust_after_plies``) as a set-up given does."""
        self.initial = self.position = initial
        self.phase = PLAYING
        self.setup = None
        self._setup_candidate = self._setup_rows = None
        self._evidence = None
        self._corrections.clear()
        self._fitting_since = len(self.plies) - (1 if fitted else 0)
        self._setup_to_check = not read  # see _update_playing
        self._confirmed(initial)
        self._restart_clock(self.time_s)

    # ------------------------------------------------------------------ playing

    def _hint(self) -> list[tuple[str, int]]:
        return [(p.move, p.step) for p in self.in_progress]

    def _reconcile(self, observation: Observation) -> Reconciliation:
        assert self.position is not None
        hint = tuple(self._hint())
        unreliable = bool(observation.unreliable)
        trusted = self._trust_earned()
        memo_key = (self.position, hint, self._bias, observation.log_likelihoods, unreliable, trusted)
        if self._memo is not None and self._memo[0] == memo_key:
            # A still board read again gives the same answer: skip the search.
            return replace(self._memo[1], frame_index=observation.frame_index)
        config = self.config.reconcile
        if self._corrections:
            # Pits the referee counted are no misreads: a changed opponent's half they confirm is
            # the players' doing, so it may be an illegal sowing the referee can then accept.
            config = replace(config, max_opponent_misfit_nats=None)
        if unreliable:
            # Counts the reader itself distrusts (pits too few pixels across) cannot call a sowing
            # illegal until they have earned it on this board (``trust_after_plies``): no alarm
            # on their word. The legal explanations are still ranked against each other and
            # must still beat each other clearly, so the most likely legal move is followed (an
            # illegal sowing is then not seen: the event "unreliable" and the camera's warning
            # say so). A board no hinted part-way board explains still sends the search to every
            # hypothesis; two moves are searched only after the move in progress (searched
            # after any move, a board read 15-25 pits wrong invented moves: docs/tracking.md).
            config = replace(config, call_illegal=trusted, depth2_hinted_only=True)
        result = reconcile(self.position, observation, self.rules, config=config,
                           cache=self.cache, hint=hint or None, bias=self._bias)
        self._memo = (memo_key, result)
        return result

    def _misread_shifts(self, observed: Sequence[int], board: Sequence[int],
                        max_pits: int | None = None) -> tuple[int, ...] | None:
        """``observed`` - ``board`` per pit, taken as misreads of an untouched board; None when more
        pits differ than ``max_pits`` (default ``misread_max_pits``), or any by more seeds than
        misreads do (``misread_max_shift``)."""
        limit = self.config.misread_max_pits if max_pits is None else max_pits
        shifts = tuple(o - p for o, p in zip(observed, board, strict=True))
        off = [r for r in shifts if r]
        if len(off) > limit or any(abs(r) > self.config.misread_max_shift for r in off):
            return None
        return shifts

    def _learn_misreads(self, observed: Sequence[int] | None, events: list[TrackerEvent], *,
                        explained: bool = False) -> bool:
        """Take ``observed`` as a reading of the untouched position; whether the misreads changed.

        Refused (False, nothing learnt) when it differs in more pits, or by more seeds,
        than a misread does (``misread_max_pits``, ``misread_max_shift``). In up to
        ``misread_max_pits_explained`` pits when ``explained`` (no legal move explains the
        reading better than the position itself) and the reading does not hold the
        board's seeds: a board at rest holds all 64, so such a reading is misread, where
        one that moves seeds between pits may show a board set up otherwise than confirmed.
        """
        assert self.position is not None
        if observed is None:
            return False
        lost = sum(observed) != sum(self.position.board)
        max_pits = self.config.misread_max_pits_explained if explained and lost else None
        shifts = self._misread_shifts(observed, self.position.board, max_pits)
        if shifts is None:
            return False
        bias = shifts if any(shifts) else None
        if bias == self._bias:
            return False
        self._bias = bias
        events.append(self._event("misreads", pits={
            square_name(i): {"reads": observed[i], "count": self.position.board[i]} for i, r in enumerate(shifts) if r}))
        return True

    def _announce_trust(self, events: list[TrackerEvent]) -> None:
        """The event that distrusted counts now call illegal sowings: once while trust stays earned."""
        if not self._trust_announced:
            self._trust_announced = True
            events.append(self._event("counts_trusted", plies=self.config.trust_after_plies))

    def _trust_earned(self) -> bool:
        """Whether this game's last ``trust_after_plies`` plies were read fitting a legal board
        throughout, so distrusted counts may call a sowing illegal."""
        needed = self.config.trust_after_plies
        return needed is not None and len(self.plies) - self._fitting_since >= needed

    def _update_playing(self, observation: Observation, events: list[TrackerEvent]) -> None:
        assert self.position is not None
        result = self._reconcile(observation)
        misfit = result.excess_nats > self.config.reconcile.illegal_min_excess_nats
        if not self._trust_earned() and misfit:
            # Not explained, or only once misreads are learnt: the ply this reading belongs to does not count.
            self._fitting_since = len(self.plies) + 1
        if self._setup_to_check and (misfit or self.plies):
            self._setup_to_check = False
        elif self._setup_to_check and result.best is not None and result.best.kind == KIND_UNCHANGED:
            # A set-up given (by the caller or the referee) is a position the camera did not choose: a
            # still reading that fits it, before the first move and with no reading that did not,
            # counts as a ply fitting (trust_after_plies). A set-up the camera read was fitted to its
            # readings, which then say nothing of how well the counts fit.
            self._setup_to_check = False
            self._fitting_since -= 1
        untouched = self.phase == PLAYING and not self._disturbed
        explained = bool(result.candidates) and result.candidates[0].kind == KIND_UNCHANGED
        if untouched and self._learn_misreads(result.observed, events, explained=explained):
            result = self._reconcile(observation)
        self.last_reconciliation = result
        self.observed = result.observed
        if result.status != AMBIGUOUS:
            self.unexplained = None
        if untouched:
            # Nothing touched the board since the position was confirmed: whatever the
            # reading says, the position stands.
            assert result.observed is not None
            differs = differing_squares(corrected_reading(result.observed, self.position.board, self._bias),
                                        self.position.board)
            if differs and differs != self._mismatch:  # once per set of disagreeing pits, not per flicker
                self._mismatch = differs
                events.append(self._event("mismatch", observed=board_rows(result.observed), differs=list(differs)))
            return
        if self._agreed(self._key(result)):
            self._act(result, observation, events)

    def _key(self, result: Reconciliation) -> tuple[object, ...]:
        """What a reading in play says, for agreeing frames: the verdict, the board it sees, the position.

        Readings that call the board illegal agree whatever they read, until the alarm is
        raised (``alarm_confirm_frames``); then each new reading refreshes the alarm's.
        """
        if result.status == ILLEGAL and self.phase != ILLEGAL_PHASE:
            return self._key_of(result.status, None)
        return self._key_of(result.status, result.best.board if result.best is not None else result.observed)

    def _key_of(self, status: str, board: object) -> tuple[object, ...]:
        assert self.position is not None
        return (status, board, self.position.board)

    def _act(self, result: Reconciliation, observation: Observation, events: list[TrackerEvent]) -> None:
        """Do what an agreed reading of the board in play says."""
        if result.status == ACCEPTED:
            self._commit(result, observation, events)
        elif result.status == UNCHANGED:
            if self.phase == ILLEGAL_PHASE:
                self._clear_alarm(events, by="board_restored")
            self._clear_in_progress(events)
        elif result.status == IN_PROGRESS:
            assert result.best is not None
            if result.plies:  # a move completed unseen before this one started
                self._commit(result, observation, events)
                if self.phase != PLAYING:
                    return
            if self.phase == ILLEGAL_PHASE:
                self._clear_alarm(events, by="legal_sowing_resumed")
            self.in_progress = result.best.progress
            events.append(self._event("in_progress", **(self.in_progress_dict() or {})))
        elif result.status == ILLEGAL:
            if self.phase == ILLEGAL_PHASE and self.alarm is not None:
                # Already alarmed: the referee sees the latest reading, no new alarm.
                self.alarm.update(self._alarm_reading(result))
                return
            corrected = self._setup_correction(observation)
            if corrected is None:
                self._raise_alarm(result, events)
                return
            self._correct_setup(*corrected, events)
            self.last_reconciliation = corrected[2]
            self._act(corrected[2], observation, events)
        elif result.status == AMBIGUOUS:
            assert result.best is not None
            if result.unexplained:
                self.unexplained = {"squares": list(result.unexplained), "frame": result.frame_index}
            elif result.seeds_missing:
                self.unexplained = {"squares": [], "seeds_seen": TOTAL_SEEDS - result.seeds_missing,
                                    "frame": result.frame_index}
            events.append(self._event(
                "ambiguous", observed=board_rows(result.observed or ()),
                candidates=[c.move or c.kind for c in result.candidates[:3]], margin_nats=round(result.margin_nats, 2),
                opponent_misfit_nats=round(result.opponent_misfit_nats, 2),
            ))

    def _commit(self, result: Reconciliation, observation: Observation, events: list[TrackerEvent]) -> None:
        assert result.best is not None and self.position is not None
        if self.phase == ILLEGAL_PHASE:
            self._clear_alarm(events, by="legal_successor")
        alternatives = result.best.moves[1:] if result.best.kind == "successor" else ()
        trusted = self._trust_earned()
        if not trusted:
            self._trust_announced = False  # earned afresh (a new game, a move taken back): said afresh
        for move, outcome in result.plies:
            self._add_ply(move, outcome, alternatives, events)
            if self.phase != PLAYING:
                break
        if observation.unreliable and not trusted and self._trust_earned():
            self._announce_trust(events)
        self.in_progress = ()
        self._restart_clock(self._pending_since_s)
        if self._evidence is not None and observation.log_likelihoods is not None:
            if len(self.plies) <= self.config.setup_correction_plies:
                self._evidence.append((len(self.plies), observation.log_likelihoods))
            else:
                self._evidence = None
        if self.phase == PLAYING:
            self._learn_misreads(result.observed, events)

    def _setup_correction(self, observation: Observation) -> tuple[Position, list[Outcome], Reconciliation] | None:
        """A set-up a few seeds from the one read that explains the game so far, this reading legally.

        Only for a set-up read by the camera whose reading was not itself the set-up taken
        (the fit had to add or move seeds, so some pit was misread). The game is re-played
        from set-ups one seed moved (within a side, by the preset's cap, from or to a pit
        where the fit overruled the reading) at a time, greedily, up to
        ``_CORRECTION_SEEDS`` seeds, trying the ``_CORRECTION_CANDIDATES`` the set-up
        reading finds likeliest at each step. A set-up is scored as the tracker
        would have judged its game: by the set-up reading, by each reading that committed a
        ply (allowing the misreads the reading before showed, :func:`board_scorer`), and by
        the best legal board for this reading. It is taken when that beats the read set-up
        with this board an illegal sowing (which pays ``illegal_min_excess_nats``) and this
        reading is then legal. Returns (set-up, outcomes of the plies, reconciliation of
        this reading) or None.
        """
        evidence, initial = self._evidence, self.initial
        if evidence is None or initial is None or observation.log_likelihoods is None:
            return None
        moves = [Move.parse(ply.move) for ply in self.plies]
        config = self.config.reconcile
        cache = TraceCache(config.cache_positions)  # the search's positions stay out of the tracker's cache

        seen = [most_likely_counts(rows) for _, rows in evidence]  # each reading's own counts

        def replay(start: Position) -> tuple[float, list[Outcome], list[tuple[int, ...]]] | None:
            """The game from ``start``: the score of the readings so far, the plies' outcomes, the boards."""
            outcomes: list[Outcome] = []
            for move in moves:
                try:
                    outcome = apply_move(outcomes[-1].position if outcomes else start, move, self.rules)
                except IllegalMoveError:
                    return None
                if outcome.never_ending or outcome.result is not None:  # the game would have ended
                    return None
                outcomes.append(outcome)
            boards = [start.board] + [o.position.board for o in outcomes]
            total = score_board(evidence[0][1], boards[0]) - self._standard_prior_lost(initial.board, start.board)
            for (n_before, _), counts_before, (n, rows) in zip(evidence, seen, evidence[1:], strict=False):
                bias = self._misread_shifts(counts_before, boards[n_before])
                total += board_scorer(rows, boards[n_before], bias)(boards[n])
            return total, outcomes, boards

        def judge(start: Position, outcomes: list[Outcome], boards: list[tuple[int, ...]]) -> Reconciliation:
            """This reading from the game's position, with the misreads the last reading showed."""
            return reconcile(outcomes[-1].position if outcomes else start, observation, self.rules, config=config,
                             cache=cache, bias=self._misread_shifts(seen[-1], boards[evidence[-1][0]]))

        played = replay(initial)
        if played is None:
            return None
        judged = judge(initial, played[1], played[2])
        if not judged.candidates:
            return None
        best = judged.candidates[0]
        # The read set-up with this board an illegal sowing.
        to_beat = played[0] + best.fit + judged.excess_nats - config.illegal_min_excess_nats
        # No board fits this reading better than its most likely counts: a bound on the last term.
        free_fit = sum(max(row) for row in observation.log_likelihoods)
        cap = min(self.rules.setup_max_per_pit or SEEDS_PER_SIDE, SEEDS_PER_SIDE)
        # The pits where the set-up fit overruled its reading: every seed the search moves
        # comes from or goes to one of them (it moves the fit's guesses, not what was read).
        doubtful = {i for i, (a, b) in enumerate(zip(seen[0], initial.board, strict=True)) if a != b}
        board, score = initial.board, played[0] + best.score
        found: tuple[Position, list[Outcome], Reconciliation] | None = None
        for _ in range(_CORRECTION_SEEDS):
            neighbours = sorted(set(_one_seed_moved(board, cap, doubtful)),
                                key=lambda b: -score_board(evidence[0][1], b))[:_CORRECTION_CANDIDATES]
            games = [(start, game) for start in (Position(b, initial.side_to_move, 0, (0, 0)) for b in neighbours)
                     if (game := replay(start)) is not None]
            step: tuple[float, Position, list[Outcome], Reconciliation] | None = None
            for start, (history, outcomes, boards) in sorted(games, key=lambda g: -g[1][0]):
                if history + free_fit <= max(score, step[0] if step else -math.inf):
                    break  # sorted: no later set-up can do better (reconciling is the costly part)
                result = judge(start, outcomes, boards)
                if result.best is None:
                    continue
                total = history + result.best.score
                if step is None or total > step[0]:
                    step = (total, start, outcomes, result)
            if step is None or step[0] <= score:
                break
            score, board = step[0], step[1].board
            if step[3].status in (ACCEPTED, UNCHANGED, IN_PROGRESS) and score > to_beat:
                found = step[1], step[2], step[3]
        return found

    def _correct_setup(self, initial: Position, outcomes: list[Outcome], result: Reconciliation,
                       events: list[TrackerEvent]) -> None:
        """Replace the read set-up and re-play the game's plies from it (a ``setup_corrected`` event)."""
        was = self.initial
        assert was is not None
        self.initial = initial
        before = initial
        for i, (ply, outcome) in enumerate(zip(self.plies, outcomes, strict=True)):
            self.plies[i] = replace(ply, before=before, after=outcome.position, laps=outcome.laps)
            before = outcome.position
        self.position = before
        self._bias, self._mismatch, self._memo = None, None, None  # misreads were learnt against the old positions
        self.setup_corrected = {"was": was.notation(), "position": initial.notation(), "frame": self._first_frame_of_pending,
                                "plies": [{"n": p.n, "move": p.move, "after": p.after.notation()} for p in self.plies]}
        events.append(self._event("setup_corrected", **self.setup_corrected))

    def _append_ply(self, move: str, after: Position, *, frame: int, time_s: float, laps: tuple[Lap, ...] = (),
                    alternatives: Sequence[str] = (), result: GameResult | None = None) -> PlyRecord:
        """The one way a ply joins the game: recorded, and ``after`` becomes the position."""
        assert self.position is not None
        before = self.position
        ply = PlyRecord(len(self.plies) + 1, move, before.side_to_move, before, after, frame, time_s, laps,
                        tuple(alternatives), result)
        self.plies.append(ply)
        self.position = after
        self._confirmed(after, misreads=self._unmoved_misreads(before.board, after.board))
        return ply

    def _unmoved_misreads(self, before: Sequence[int], after: Sequence[int]) -> tuple[int, ...] | None:
        """The learnt misreads of the pits a ply left as they were (same count before and after).

        The reader misreads a pit's heap the same way until a move changes it: on a blurred
        board (seed 2028's purple film, 2026-11-30) the same pits of 4 read as 3 frame after frame.
        Forgotten at each ply, they had to be learnt again from a reading of the new position
        that also misread the pits the move had changed, which one reading in up to
        ``misread_max_pits`` pits cannot be; the next reading after a hand was then an illegal
        sowing. Kept, only the pits the move changed remain to be misread. A reading at the
        commit that differs in few enough pits replaces them as before (:meth:`_learn_misreads`).
        """
        if self._bias is None:
            return None
        kept = tuple(r if b == a else 0 for r, b, a in zip(self._bias, before, after, strict=True))
        return kept if any(kept) else None

    def _confirmed(self, position: Position, *, misreads: tuple[int, ...] | None = None) -> None:
        """``position`` is now the confirmed one: nothing has touched it yet, and its only misreads
        are ``misreads`` (those a ply carried over, see :meth:`_unmoved_misreads`)."""
        self._acted_on = ("position", position.board)
        self._bias, self._disturbed, self._mismatch = misreads, False, None

    def _ply_event(self, ply: PlyRecord, **extra: Any) -> TrackerEvent:
        return self._event("ply", n=ply.n, move=ply.move, side=ply.side.value, after=ply.after.notation(),
                           frame=ply.frame, time_s=ply.time_s, alternatives=list(ply.alternatives),
                           laps=[lap_dict(lap) for lap in ply.laps], **extra)

    def _add_ply(self, move: Move, outcome: Outcome, alternatives: Sequence[str],
                 events: list[TrackerEvent]) -> None:
        ply = self._append_ply(str(move), outcome.position, frame=self._first_frame_of_pending,
                               time_s=self._pending_since_s, laps=outcome.laps, alternatives=alternatives,
                               result=outcome.result)
        events.append(self._ply_event(ply))
        if outcome.result is not None:
            self._end_game(outcome.result, events)

    def _end_game(self, result: GameResult, events: list[TrackerEvent]) -> None:
        self.result = result
        self.match = self.match.with_result(result)
        south, north = self.match.points()
        events.append(self._event("game_over", number=self.game_number, result=result.to_dict(),
                                  points={"S": south, "N": north}))
        if self.match.is_over:
            self.phase = MATCH_OVER
            winner = self.match.winner
            events.append(self._event("match_over", winner=winner.value if winner else None,
                                      points={"S": south, "N": north}))
        else:
            self.phase = GAME_OVER

    def _raise_alarm(self, result: Reconciliation, events: list[TrackerEvent]) -> None:
        assert self.position is not None
        self.phase = ILLEGAL_PHASE
        self.alarm = {
            "kind": "illegal_sowing",
            "frame": self._first_frame_of_pending,
            "expected": board_rows(self.position.board),
            "position": self.position.notation(),
            # Raised on counts the reader distrusts, trusted for fitting the game (trust_after_plies):
            # the referee is told to look at the differing pits themselves.
            "counts_distrusted": self._unreliable,
            **self._alarm_reading(result),
        }
        self.in_progress = ()
        events.append(self._event("alarm", **self.alarm))

    def _alarm_reading(self, result: Reconciliation) -> dict[str, Any]:
        """The alarm's fields that describe one illegal reading, all from ``result`` together.

        A standing alarm takes them afresh from each new illegal reading, so the live page
        never marks one reading's differing pits on another reading's board.
        """
        assert self.position is not None
        observed = result.observed or ()
        return {
            "observed": board_rows(observed),
            "differs": list(result.differs),
            # The legal board the differing pits are counted against (a part-way one: seeds still in hand).
            "nearest": None if result.nearest is None else {
                "board": board_rows(result.nearest.board), "moves": list(result.nearest.moves),
                "part_way": result.nearest.kind in PART_WAY_KINDS},
            "closest": [
                {"move": c.move, "after": Position(c.board, self.position.side_to_move.other).notation(short=True),
                 "distance": round(sum(abs(a - b) for a, b in zip(observed, c.board, strict=True)) / 2, 1)}
                for c in result.closest
            ],
            "where": result.where,
        }

    def _clear_alarm(self, events: list[TrackerEvent], *, by: str) -> None:
        if self.alarm is None:
            return
        events.append(self._event("alarm_cleared", by=by, frame_raised=self.alarm["frame"]))
        self.alarm = None
        self.phase = PLAYING

    # ------------------------------------------------------------------ clocks

    def _restart_clock(self, time_s: float) -> None:
        self._clock_start_s = time_s
        self._move_started = False
        self.late_start = False
        self.overtime = False

    def _check_clocks(self, observation: Observation, events: list[TrackerEvent]) -> None:
        if self.phase != PLAYING or self._clock_start_s is None:
            return
        elapsed = observation.timestamp_s - self._clock_start_s
        if not self._move_started and observation.status in (HAND, MOVING):
            self._move_started = True
            if self.config.mode == "blitz" and elapsed > self.config.blitz_start_limit_s:
                self.late_start = True
                events.append(self._event("late_start", side=self._mover(), after_s=round(elapsed, 2),
                                          limit_s=self.config.blitz_start_limit_s))
        if (self.config.mode != "classical" and not self.overtime
                and elapsed > self.config.move_limit_s):
            self.overtime = True
            events.append(self._event("overtime", side=self._mover(), after_s=round(elapsed, 2),
                                      limit_s=self.config.move_limit_s))

    def _mover(self) -> str | None:
        return None if self.position is None else self.position.side_to_move.value

    # ------------------------------------------------------------------ referee

    def confirm_setup(self, position: Position) -> list[TrackerEvent]:
        """The referee confirms (or types) the set-up; the game starts from it."""
        if self.phase not in (SETUP, GAME_OVER):
            raise RefereeError(f"the set-up can only be confirmed before the first move (phase is {self.phase})")
        position = Position(position.board, position.side_to_move, 0, (0, 0))
        problems = setup_problems(position, self.rules)
        if problems:
            raise RefereeError("bad set-up: " + "; ".join(problems))
        events: list[TrackerEvent] = []
        if self.phase == GAME_OVER:
            self._begin_next_game(events)
        self._start_playing(position)
        events.append(self._event("setup_confirmed", position=position.notation(), by="referee"))
        return events

    def board_restored(self) -> list[TrackerEvent]:
        """The referee says the board is back to the last legal position: clear the alarm."""
        if self.phase != ILLEGAL_PHASE:
            raise RefereeError("there is no illegal-sowing alarm to clear")
        events: list[TrackerEvent] = []
        self._clear_alarm(events, by="referee_restored")
        self._acted_on = None
        return events

    def accept_observed(self) -> list[TrackerEvent]:
        """The referee accepts the observed board as the position after the mover's turn."""
        if self.phase != ILLEGAL_PHASE or self.position is None:
            raise RefereeError("accept_observed applies to an illegal-sowing alarm; there is none")
        if self.observed is None:
            raise RefereeError("no stable reading of the board to accept yet")
        board = list(self.observed)
        for index, count in self._corrections.items():
            board[index] = count
        if sum(board) != 64:
            raise RefereeError(f"the observed board holds {sum(board)} seeds, not 64: correct the misread pits first")
        before = self.position
        after = Position(tuple(board), before.side_to_move.other, before.ply + 1, before.captures)
        events: list[TrackerEvent] = []
        self._evidence = None  # the referee has decided a board: the set-up is no longer re-read
        self._clear_alarm(events, by="referee_accept")
        ply = self._append_ply(REFEREE_MOVE, after, frame=self.frame, time_s=self.time_s)
        self._corrections.clear()
        self._restart_clock(self.time_s)
        events.append(self._ply_event(ply, referee=True))
        return events

    def take_back(self) -> list[TrackerEvent]:
        """The referee takes back the game's last ply (a move the camera followed wrongly, or one
        the players agree to play again): the position before it is the position again.

        The board the move left is not taken as that move again until the tracker has acted on
        another reading (the board put back, another move): a take-back while the board still
        shows the move would otherwise commit it again. A move followed wrongly is put right by
        correcting its misread pits, which re-judges the reading at once. Taking back the move
        that ended the game (or the match) takes its result out of the match: the game is in
        play again. That is possible until the next game begins (its set-up read or confirmed).
        """
        if self.phase not in (PLAYING, ILLEGAL_PHASE, GAME_OVER, MATCH_OVER) or self.position is None:
            raise RefereeError(f"there is no move of a game to take back (phase is {self.phase})")
        if not self.plies:
            raise RefereeError("no move has been played in this game yet")
        events: list[TrackerEvent] = []
        self._clear_alarm(events, by="referee_take_back")
        ply = self.plies.pop()
        reopened = self.phase in (GAME_OVER, MATCH_OVER)
        if reopened:  # the game's result (the last in the match) goes with the move that ended it
            self.match = replace(self.match, results=self.match.results[:-1])
            self.result = None
            self.phase = PLAYING
            self.setup, self._setup_candidate, self._setup_rows = None, None, None
        self.position = ply.before
        self.in_progress = ()
        self._corrections.clear()
        if self._evidence is not None:  # the readings of plies still played stay evidence for the set-up
            self._evidence = [(n, rows) for n, rows in self._evidence if n <= len(self.plies)]
        self._bias, self._mismatch, self._memo = None, None, None
        self._disturbed = True  # the board in view may still show the move: it is not the position
        self._pending, self._pending_count = None, 0
        self._acted_on = self._key_of(ACCEPTED, ply.after.board)  # the move's board, against the position before it
        self._restart_clock(self.time_s)
        south, north = self.match.points()
        events.append(self._event("take_back", n=ply.n, move=ply.move, side=ply.side.value,
                                  after=ply.after.notation(), position=ply.before.notation(), reopened=reopened,
                                  points={"S": south, "N": north}))
        return events

    def correct_pit(self, square: str, count: int) -> list[TrackerEvent]:
        """Fix a misread pit of the current reading (or set-up); the reading is re-judged at once."""
        try:
            index = square_index(square)
        except ValueError as exc:
            raise RefereeError(f"bad square {square!r}: {exc}") from None
        if not isinstance(count, int) or not 0 <= count <= 64:
            raise RefereeError(f"a pit holds 0..64 seeds, got {count!r}")
        if self.phase in (MATCH_OVER,):
            raise RefereeError("the match is over")
        events = [self._event("correction", square=square_name(index), count=count,
                              was=None if self.observed is None else self.observed[index])]
        self._corrections[index] = count
        self._evidence = None  # a referee's count is not second-guessed by re-reading the set-up
        if self._streak:
            # Re-judge now: the referee's word needs no confirmation frames.
            self._acted_on = None
            merged = self._merged()
            self._pending = None
            self._confirm_now = True
            try:
                self._judge(merged, events)
            finally:
                self._confirm_now = False
        elif self.phase == SETUP and self.setup is not None:
            board = list(self.setup.board)
            board[index] = count
            self.setup = read_setup(board, self.rules, self.first)
        return events

    def restore_ply(self, move: str, after: Position, *, frame: int, time_s: float,
                    laps: tuple[Lap, ...] = ()) -> None:
        """Re-add a ply already recorded (resuming a stored game); no events, no checks beyond the phase."""
        if self.phase != PLAYING or self.position is None:
            raise RefereeError("plies can only be restored into a game being played")
        self._append_ply(move, after, frame=frame, time_s=time_s, laps=laps)

    # ------------------------------------------------------------------ views

    @property
    def misreads(self) -> dict[str, int]:
        """Pits the camera reads off the confirmed position, learnt while nothing touched the
        board (square -> the count it reads); the position stands, the reading is wrong."""
        if self._bias is None or self.position is None:
            return {}
        return {square_name(i): self.position.board[i] + r for i, r in enumerate(self._bias) if r}

    def in_progress_dict(self) -> dict[str, Any] | None:
        """The move in progress for the dashboard, or None."""
        if not self.in_progress:
            return None
        head = self.in_progress[0]
        return {"moves": list(dict.fromkeys(p.move for p in self.in_progress)), "lap": head.lap,
                "pit": head.pit, "in_hand": head.in_hand, "continuation": list(head.continuation)}
