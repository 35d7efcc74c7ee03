"""The runner wires the data flow: FrameSource -> StabilityMonitor -> BoardReader -> Tracker -> store/events.

Two front ends share it:

* :func:`track_source` - offline: a whole video or frame folder to a game record
  (the `omweso-cam track` command);
* :class:`LiveSession` - live: a background thread reads the source while the
  dashboard reads :meth:`LiveSession.state`, the event bus and the JPEG frames, and
  the referee acts through its methods (contract: ``docs/live_session.md``).
"""

from __future__ import annotations

import json
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omweso_cam.events import EventBus
from omweso_cam.observation import (
    MOVING,
    NO_BOARD,
    STABLE,
    UNREADABLE,
    Observation,
    fit_board,
)
from omweso_cam.reconcile.tracker import (
    GAME_OVER,
    ILLEGAL_PHASE,
    MATCH_OVER,
    PLAYING,
    SETUP,
    RefereeError,
    Tracker,
    TrackerConfig,
    TrackerEvent,
    board_rows,
    lap_dict,
    read_setup,
)
from omweso_cam.rules import (
    MODES,
    TOTAL_SEEDS,
    GameResult,
    Match,
    Move,
    Position,
    RuleSet,
    Side,
    apply_move,
    board_notation,
)
from omweso_cam.rules.record import REFEREE_MOVE
from omweso_cam.store import MatchRepository

if TYPE_CHECKING:
    import numpy as np

    from omweso_cam.vision.frames import Frame, FrameSource
    from omweso_cam.vision.pipeline import BoardReader, Reading
    from omweso_cam.vision.stability import StabilityMonitor

#: How the note on counts that cannot be the game's 64 seeds begins (FrameProcessor._seed_total_noted).
SEEDS_NOTE = "counts far from the board's 64 seeds"

#: Camera states beyond the observation statuses.
DISCONNECTED = "disconnected"
ENDED = "ended"
WAITING = "waiting"  # a recording held on its first frame until a match is started


@dataclass(frozen=True)
class RunnerConfig:
    """How frames are turned into observations and pictures.

    ``confirm_s`` / ``settle_s`` give the tracker's agreement and the stability
    monitor's quiet period in seconds; they become frame counts from the source's frame
    rate (at least one frame), so a 4 fps frame folder and a 30 fps camera behave alike.
    ``alarm_confirm_s``: how long the board must read illegal before the alarm (at least
    ``confirm_s``). An illegal board stays until someone restores it, so waiting costs the
    referee little; one view that read the board illegal between legal ones (a misread heap,
    the pause before a hand comes back to finish a sowing) raised most false alarms on
    track_bench's films, where at 4 frames a second ``confirm_s`` is one frame. Chosen on the
    saved readings of its 108 films of seeds 2026-2043: 0.5 s (two frames there) took false
    alarms 20 -> 14 with the set-up given, 10 -> 8 with it read, 25 -> 13 with the films' true
    stability; staged illegal sowings flagged 69 -> 68, 70 -> 70, 70 -> 69. Checked on the 24
    films of seeds 2044-2047, rendered afterwards: false alarms 23 -> 14, 21 -> 11, 21 -> 14;
    flagged 15 -> 15, 14 -> 14, 17 -> 16; moves unchanged. 0.75 s, or the same reading twice
    as moves are confirmed, removed more false alarms and lost more flags (docs/tracking.md).
    ``distrust_quiet_s``: how long the reader must trust its counts before it says again that it
    distrusts them (``TrackerConfig.distrust_quiet_frames``: 12 frames at the films' 4 frames/s).
    ``max_reads_per_stable_run``: a still board read more often gives no new information
    (a board at fixed corners, read in fewer views a frame, is read until every view was seen);
    a still scene in which as many reads in a row found no board is not read again until
    something moves (each ran every board search, about a second; the whole frame is watched
    from then on).
    ``fixed_views``: how many of the counter's eight views of each pit a read of a board at
    fixed corners (a calibration, or the session's lock) averages. Fewer are faster (one
    view: a 1280x720 read in 17-19 ms, eight: about 30-50 ms, as only pits the first view
    is unsure of are read in the others; vision_bench) and each frame then turns to the
    next views, so the still frames the tracker averages still see them all; but on films
    read through a calibration eight views a read follow more moves: with the counting
    network of 2026-12-03, on the 36 fresh films of track_bench's seeds 2100-2105 (each
    calibrated on its first frame, set-up given and read summed) 546 of 576 moves, 60 of 72
    illegal sowings flagged and no false alarm, against 536, 57 and one for one view a frame
    (before that day's drift-check fix; docs/tracking.md, "Films read through a calibration").
    Without fixed corners finding the board costs about 250 ms a read, and every read
    averages all eight views.
    """

    tracker: TrackerConfig = field(default_factory=TrackerConfig)
    confirm_s: float | None = 0.25
    alarm_confirm_s: float | None = 0.5
    distrust_quiet_s: float | None = 3.0
    settle_s: float | None = 0.1
    max_reads_per_stable_run: int = 3
    lock_board: bool = False  # per-session calibration: locate the board once (see FrameProcessor)
    fixed_views: int = 8
    jpeg_quality: int = 80
    stream_max_width_px: int = 1280
    state_every_frames: int = 10  # publish "state" at least this often (clocks tick)

    def for_fps(self, fps: float | None) -> RunnerConfig:
        """The config with its tracker's frame counts derived at ``fps`` (:meth:`timed`)."""
        return replace(self, tracker=self.timed(self.tracker, fps))

    def timed(self, tracker: TrackerConfig, fps: float | None) -> TrackerConfig:
        """``tracker`` with ``confirm_frames``, ``alarm_confirm_frames`` and ``distrust_quiet_frames``
        derived from ``confirm_s``, ``alarm_confirm_s`` and ``distrust_quiet_s`` at ``fps`` (each
        left as it is where None)."""
        if fps is None or fps <= 0:
            return tracker
        if self.confirm_s is not None:
            tracker = replace(tracker, confirm_frames=max(1, round(self.confirm_s * fps)))
        if self.alarm_confirm_s is not None:
            tracker = replace(tracker, alarm_confirm_frames=max(1, round(self.alarm_confirm_s * fps)))
        if self.distrust_quiet_s is not None:
            tracker = replace(tracker, distrust_quiet_frames=max(1, round(self.distrust_quiet_s * fps)))
        return tracker

    def settle_frames(self, fps: float | None) -> int | None:
        if fps is None or fps <= 0 or self.settle_s is None:
            return None
        return max(1, round(self.settle_s * fps))


class FrameProcessor:
    """The vision half of the loop: one frame -> (Observation, Reading | None)."""

    def __init__(self, reader: BoardReader, stability: StabilityMonitor, *, max_reads_per_stable_run: int = 3,
                 lock_board: bool = False, lock_reads: int = 3, lock_tolerance: float = 0.01,
                 jump_tolerance: float = 0.05, fixed_views: int | None = None) -> None:
        self.fixed_views = fixed_views
        self.reader = reader
        self.stability = stability
        self.max_reads = max_reads_per_stable_run
        self.lock_board = lock_board
        self.lock_reads = max(1, lock_reads)
        self.lock_tolerance = lock_tolerance
        self.locked_corners_px: np.ndarray | None = None
        self._reads_this_run = 0
        self._last_observation: Observation | None = None
        self._empty_reads = 0  # reads in a row, this still run, that found no board
        self._empty_detail = ""
        self._located: list[np.ndarray] = []
        self.last_reading: Reading | None = None
        # A board found far (``jump_tolerance`` of its diagonal, any corner) from where the last
        # read found it counts only once a second read agrees: boards are rarely moved, and
        # one wild localisation would otherwise feed 32 confident misreads to the tracker.
        # Relative to the board, not the frame: a lattice found one column off moves the
        # corners by about a tenth of the board's diagonal, however small the board is in the
        # picture (a 30 px-pit board's column is 2-3% of a 1280x720 frame's diagonal).
        self.jump_tolerance = jump_tolerance
        self._anchor: np.ndarray | None = None
        self._jump: np.ndarray | None = None

    @property
    def reader(self) -> BoardReader:
        return self._reader

    @reader.setter
    def reader(self, reader: BoardReader) -> None:
        """A reader at fixed corners reads ``fixed_views`` views a frame (RunnerConfig.fixed_views)."""
        if self.fixed_views is not None and reader.calibration is not None:
            reader = reader.with_views(self.fixed_views)
        self._reader = reader

    def _max_reads(self) -> int:
        """Reads per still run: more when each read sees only some of the counter's views."""
        if self.fixed_views is None or self._reader.calibration is None:
            return self.max_reads
        from omweso_cam.vision.count import VIEWS

        return max(self.max_reads, -(-VIEWS // max(1, self.fixed_views)))

    def _jumped(self, reading: Reading, size: tuple[int, int]) -> bool:
        """Whether ``reading`` found the board somewhere new that no second read has confirmed yet."""
        import numpy as np

        from omweso_cam.vision.localise import corners_within

        if reading.status != "ok" or reading.corners_px is None or self.jump_tolerance <= 0:
            return False
        corners = np.asarray(reading.corners_px, dtype=np.float64)

        def far(other: np.ndarray | None) -> bool:
            return other is not None and not corners_within(corners, other, self.jump_tolerance)

        if far(self._anchor) and (self._jump is None or far(self._jump)):
            self._jump = corners
            return True
        self._anchor, self._jump = corners, None
        return False

    def _maybe_lock(self, reading: Reading, size: tuple[int, int]) -> None:
        """Per-session calibration: once ``lock_reads`` reads in a row find the board at the same
        place (every corner within ``lock_tolerance`` of the frame diagonal of their median), use
        the median corners as the calibration. Localisation is then done once (the reader still
        checks the locked board for drift); one-off localisation failures no longer reach the counts."""
        import numpy as np

        if not self.lock_board or self.reader.calibration is not None:
            return
        if reading.status != "ok" or reading.corners_px is None:
            self._located.clear()
            return
        self._located.append(np.asarray(reading.corners_px, dtype=np.float64))
        del self._located[:-self.lock_reads]
        if len(self._located) < self.lock_reads:
            return
        stack = np.stack(self._located)
        median = np.median(stack, axis=0)
        if float(np.abs(stack - median).max()) > self.lock_tolerance * float(np.hypot(*size)):
            return
        # The same reader (config, seed model) held at the median corners, checking for drift.
        self.reader = self.reader.at_corners(median, size, method="session", check_drift=True)
        self.locked_corners_px = median

    def process(self, frame: Frame) -> tuple[Observation, Reading | None]:
        """Classify the frame, and read the board when it is still."""
        if frame.image is None:
            self._reads_this_run = 0
            return Observation(frame.index, frame.timestamp_s, UNREADABLE, detail=frame.error or ""), None
        motion = self.stability.update(frame.image)
        if motion != STABLE:
            self._reads_this_run = self._empty_reads = 0
            return Observation(frame.index, frame.timestamp_s, motion), None
        last = self._last_observation
        if last is not None and self._reads_this_run >= self._max_reads():
            return replace(last, frame_index=frame.index, timestamp_s=frame.timestamp_s), None
        if self._empty_reads >= self.max_reads:
            # Nothing moved since as many reads found no board: more would repeat it (each runs every
            # search, about a second). Not after one: a small board is found on some frames only.
            return Observation(frame.index, frame.timestamp_s, NO_BOARD, detail=self._empty_detail), None
        reading = self.reader.read(frame.image, frame_index=frame.index, timestamp_s=frame.timestamp_s)
        self.last_reading = reading
        h, w = frame.image.shape[:2]
        if self._jumped(reading, (w, h)):
            return Observation(frame.index, frame.timestamp_s, MOVING,
                               detail="board found far from the last read; waiting for a second read to agree"), reading
        if reading.corners_px is not None and reading.status == "ok":
            self.stability.set_region(reading.corners_px, (w, h))
            self._maybe_lock(reading, (w, h))
        elif reading.status == NO_BOARD:
            self.stability.set_region(None, (w, h))  # a board may come into view anywhere: watch the whole frame
        self._reads_this_run += 1
        observation = self._seed_total_noted(reading.observation)
        self._last_observation = observation if observation.is_stable else None
        if reading.status == NO_BOARD:
            self._empty_reads += 1
            self._empty_detail = reading.detail
        else:
            self._empty_reads = 0
        return observation, reading

    def _seed_total_noted(self, observation: Observation) -> Observation:
        """``observation`` with a note in its detail (the live page shows it under the video) when its
        counts cannot be a board of the game's 64 seeds misread in a few pits (the reader's own fit:
        ``ReaderConfig.board_fit_window``, ``board_total_max_nats``; the live reader reports counts as
        seen, unfitted): seeds are in a hand or off the board (a pause mid-move, a set-up being laid),
        or the counter misses or invents them (a dark board, seeds of the pits' colour).

        A note, not a warning that the counts are unreliable: the tracker goes on trusting them.
        Distrusted (the tracker then follows the most likely legal move and calls no illegal
        sowing until the counts have fitted the game for a few plies), 6 more of 1920 moves were
        followed on 120 fresh films, not the 0.5% asked of it before they were read
        (docs/tracking.md, "Twenty fresh seeds, and counts that cannot be the board's 64 seeds").
        """
        if observation.log_likelihoods is None:
            return observation
        config = self.reader.config
        if fit_board(observation.log_likelihoods, TOTAL_SEEDS, window=config.board_fit_window,
                     max_cost=config.board_total_max_nats) is not None:
            return observation
        read = sum(observation.counts() or ())
        note = (f"{SEEDS_NOTE}: {read} read, more than a few pits misread (seeds in a hand or off the board; "
                "else light the board well and keep the camera steady and close enough)")
        return replace(observation, detail="; ".join(filter(None, (observation.detail, note))))


#: Under the video when no board is found (see LiveSession._handle_frame).
NO_BOARD_HINT = "if a board is in view, click its corners on the Calibration page"

#: How an observation begins whose frame the vision stage failed on (see :func:`observe_frame`).
VISION_ERROR = "vision failed on this frame"


def observe_frame(processor: FrameProcessor, frame: Frame) -> tuple[Observation, Reading | None, dict[str, str] | None]:
    """``processor.process(frame)``, and what went wrong if it raised.

    A frame that makes the vision stage raise (a bug, or an image no test foresaw) is an
    unreadable frame, not the end of the match: the tracker treats it as any unreadable
    frame and the next frames are read as usual. The third value, for the record, names the
    error and where it was raised (None when nothing went wrong). Errors of the tracker or
    the store are not caught here: after those the game's state itself is in doubt.
    """
    try:
        observation, reading = processor.process(frame)
    except Exception as exc:
        where = traceback.extract_tb(exc.__traceback__)[-1]
        error = {"error": f"{type(exc).__name__}: {exc}",
                 "where": f"{Path(where.filename).name}:{where.lineno} in {where.name}"}
        return (Observation(frame.index, frame.timestamp_s, UNREADABLE, detail=f"{VISION_ERROR} ({error['error']})"),
                None, error)
    return observation, reading, None


def live_reader(calibration: Any = None) -> BoardReader:
    """The reader of live sessions and ``track``.

    Its counts are as the camera sees them, not fitted to 64 seeds (``ReaderConfig.board_seeds``):
    the tracker weighs the likelihoods against boards of 64 itself, and in a mid-move pause
    (seeds in a hand off the board) the video's counts should not show seeds that are not there.
    """
    from omweso_cam.vision.pipeline import BoardReader, ReaderConfig

    return BoardReader(calibration, config=ReaderConfig(board_seeds=None))


def make_processor(calibration: Any = None, *, config: RunnerConfig = RunnerConfig(),
                   fps: float | None = None) -> FrameProcessor:
    """A :class:`FrameProcessor` with the live reader and the standard stability monitor."""
    from omweso_cam.vision.stability import StabilityConfig, StabilityMonitor

    settle = config.settle_frames(fps)
    stability = StabilityMonitor(StabilityConfig(stable_frames=settle) if settle else StabilityConfig())
    return FrameProcessor(live_reader(calibration), stability, max_reads_per_stable_run=config.max_reads_per_stable_run,
                          lock_board=config.lock_board, fixed_views=config.fixed_views)


def load_calibration(path: str | Path | None) -> Any:
    """A vision Calibration from a file, or None."""
    if path is None:
        return None
    from omweso_cam.vision.calibration import Calibration

    return Calibration.load(path)


# ---------------------------------------------------------------------- offline tracking


def track_source(
    source: FrameSource,
    rules: RuleSet,
    *,
    start: Position | None = None,
    processor: FrameProcessor | None = None,
    config: RunnerConfig = RunnerConfig(),
    on_frame: Callable[[Frame], None] | None = None,
) -> dict[str, Any]:
    """Track a whole source; the game record of ARCHITECTURE.md (first game of the source).

    Without ``start`` the set-up is read from the first stable frames and confirmed when
    the first move follows it. Faults of the source are recorded as events.
    """
    config = config.for_fps(source.fps)
    processor = processor or make_processor(config=config, fps=source.fps)
    tracker = Tracker(rules, initial=start, config=config.tracker)
    events: list[dict[str, Any]] = []
    initial = start
    frames = 0
    for frame in source:
        if on_frame is not None:
            on_frame(frame)
        if frame.image is None:
            events.append({"kind": "source_fault", "frame": frame.index, "fault": frame.kind,
                           "detail": frame.error, "file": frame.name})
            if frame.kind == "corrupt":
                tracker.update(Observation(frame.index, frame.timestamp_s, UNREADABLE))
            continue
        frames += 1
        observation, _, error = observe_frame(processor, frame)
        if error is not None:
            events.append({"kind": "vision_error", "frame": frame.index, **error})
        for event in tracker.update(observation):
            if event.kind == "setup_confirmed":
                initial = Position.from_notation(event.data["position"])
            elif event.kind == "setup_corrected":
                initial = Position.from_notation(event.data["position"])
                events.append({"kind": "setup_corrected", "frame": event.frame, "was": event.data["was"],
                               "position": event.data["position"]})
            elif event.kind == "alarm":
                data = event.data
                events.append({
                    "kind": "illegal_sowing", "frame": data["frame"],
                    "observed": board_notation([c for row in data["observed"] for c in row]),
                    "position": data["position"], "closest": data["closest"], "differs": data["differs"],
                    "where": data["where"],
                })
            elif event.kind == "alarm_cleared":
                events.append({"kind": "alarm_cleared", "frame": event.frame, "by": event.data["by"]})
            elif event.kind == "unreliable":  # the reader started distrusting its counts (see Tracker)
                events.append({"kind": "unreliable", "frame": event.frame, "reason": event.data["reason"]})
            elif event.kind == "counts_trusted":  # ... and they have fitted the game since (see Tracker)
                events.append({"kind": "counts_trusted", "frame": event.frame, "plies": event.data["plies"]})
        if tracker.phase in (GAME_OVER, MATCH_OVER):
            break
    return {
        "rules": rules.name,
        "options": rules.overrides(),
        "initial": None if initial is None else initial.notation(),
        "plies": [{"move": p.move, "after": p.after.notation(), "frame": p.frame} for p in tracker.plies],
        "events": events,
        "result": None if tracker.result is None else tracker.result.to_dict(),
        "frames": frames,
    }


# ---------------------------------------------------------------------- live session


class LiveSession:
    """The live loop and the referee's controls, for the dashboard (``serve`` / ``demo``).

    Publishes on :attr:`bus`: ``"state"`` (the :meth:`state` dict) on every change,
    ``"alarm"`` when an illegal sowing is flagged or cleared, ``"ply"`` per committed
    move and ``"frame"`` ``{"index"}`` per processed frame. Every confirmed ply is in
    :attr:`repository` before it is published. A session opened on a database with an
    unfinished match resumes it.
    """

    def __init__(
        self,
        source: str | int | Path | None,
        *,
        repository: MatchRepository | str | Path,
        rules: str = "seed",
        calibration: str | Path | None = None,
        config: RunnerConfig = RunnerConfig(),
        bus: EventBus | None = None,
        realtime: bool = False,
        speed: float = 1.0,
        fps: float | None = None,
        open_source: Callable[..., FrameSource] | None = None,
        processor: FrameProcessor | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if speed <= 0 or (fps is not None and fps <= 0):
            raise ValueError("speed and fps must be > 0")
        self.bus = bus or EventBus()
        self.repository = repository if isinstance(repository, MatchRepository) else MatchRepository(repository)
        self.source_spec = source
        self.default_rules = rules
        RuleSet.preset(rules)  # a bad preset name fails here, before any thread starts
        self.calibration_path = Path(calibration) if calibration is not None else None
        self.config = config
        self.realtime = realtime
        self.speed = speed
        self.fps = fps
        self._open_source = open_source
        self._processor = processor
        self._clock = clock
        self._lock = threading.RLock()
        self._image_lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._source: FrameSource | None = None
        self.tracker: Tracker | None = None
        self.match_id: int | None = None
        self.game_id: int | None = None
        self.mode = "classical"
        self.players = ("", "")
        self.camera = NO_BOARD
        self.camera_detail = ""  # why the camera reads as it does (a warning on a good reading)
        self.frame_index = -1
        self.time_s = 0.0
        self.observed: tuple[int, ...] | None = None
        self.error: str | None = None
        self._vision_error: dict[str, str] | None = None  # the last frame's, when vision failed on it
        self._image: np.ndarray | None = None
        self._reading: Reading | None = None
        self._jpeg_cache: dict[str, tuple[int, bytes]] = {}
        self._games_cache: tuple[tuple[object, ...], list[dict[str, Any]]] | None = None
        self._resume()

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Open the source and run the frame loop in a background thread."""
        if self._thread is not None and self._thread.is_alive():
            return
        if self.source_spec is None:
            raise ValueError("this session has no frame source")
        from omweso_cam.vision.frames import SourceConfig
        from omweso_cam.vision.frames import open_source as default_open

        opener = self._open_source or default_open
        self._source = opener(self.source_spec, config=SourceConfig(
            realtime=self.realtime, speed=self.speed, folder_fps=self.fps))
        fps = self._source.fps
        self.config = self.config.for_fps(fps)
        if self._processor is None:
            self._processor = make_processor(load_calibration(self._existing_calibration()), config=self.config, fps=fps)
        if self.tracker is not None:  # made (or resumed) before the frame rate was known
            self.tracker.config = self.config.timed(self.tracker.config, fps)
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="omweso-live", daemon=True)
        self._thread.start()

    @property
    def rate_note(self) -> str | None:
        """What to tell the user about the source's frame rate, once started (a guessed folder rate)."""
        return None if self._source is None else self._source.rate_note

    def stop(self) -> None:
        """Stop the loop and release the source (the database stays open for reading)."""
        self._stop.set()
        if self._source is not None:
            self._source.close()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._thread = None

    def wait(self, timeout_s: float | None = None) -> bool:
        """Block until the source is exhausted (or ``timeout_s``); whether the loop has ended."""
        thread = self._thread
        if thread is None:
            return True
        thread.join(timeout_s)
        return not thread.is_alive()

    def _run(self) -> None:
        assert self._source is not None and self._processor is not None
        count = 0
        try:
            for frame in self._source:
                if self._stop.is_set():
                    break
                self._handle_frame(frame)
                count += 1
                if count % self.config.state_every_frames == 0:
                    self._publish_state()
                if self._source.recorded and frame.image is not None:
                    self._hold_until_a_match()
        except Exception as exc:  # the loop must never die silently: record and show it
            with self._lock:
                self.error = f"{type(exc).__name__}: {exc}"
                self._store_event("runner_error", {"error": self.error})
        with self._lock:
            self.camera = ENDED
        self._publish_state()

    def _hold_until_a_match(self) -> None:
        """A recording (a video file, a frame folder) served before anyone started a match waits
        on the frame it shows (for the Calibration page too): played on, its set-up and first
        moves would pass unwatched. Its clock restarts when the match begins."""
        if self.tracker is not None:
            return
        with self._lock:
            self.camera, self.camera_detail = WAITING, "the recording waits here until a match is started (Set-up page)"
        self._publish_state()
        while self.tracker is None and not self._stop.wait(0.05):
            pass
        assert self._source is not None
        self._source.restart_clock()

    def _handle_frame(self, frame: Frame) -> None:
        assert self._processor is not None
        if frame.image is None:
            with self._lock:
                if frame.kind in ("disconnected", "ended", "ended_early"):
                    self.camera = DISCONNECTED if frame.kind == "disconnected" else ENDED
                elif frame.kind == "reconnected":
                    self.camera = MOVING
                elif frame.kind == "corrupt":
                    self.camera = UNREADABLE
                self.camera_detail = frame.error or ""
                self._store_event("source_" + frame.kind, {"detail": frame.error, "file": frame.name},
                                  frame=frame.index)
            self._publish_state()
            return
        observation, reading, error = observe_frame(self._processor, frame)
        if error is not None and error != self._vision_error:  # once for a run of frames failing alike
            with self._lock:
                self._store_event("vision_error", error, frame=frame.index)
        self._vision_error = error
        with self._image_lock:
            self._image = frame.image
            if reading is not None:
                self._reading = reading
        changed = False
        with self._lock:
            self.frame_index, self.time_s = frame.index, frame.timestamp_s
            if self.camera != observation.status:
                self.camera, changed = observation.status, True
            # Published with the next change (a detail such as "40% hidden" varies every frame).
            self.camera_detail = observation.detail
            if observation.status == NO_BOARD:
                # A board in view is not always found (pits cut in the wood's own colour, a dotted
                # cloth, a steep camera; README "Camera placement"): say how to go on.
                self.camera_detail = "; ".join(filter(None, (observation.detail, NO_BOARD_HINT)))
            if observation.is_stable:
                counts = observation.counts()
                if counts != self.observed:
                    self.observed, changed = counts, True
            if self.tracker is not None:
                events = self.tracker.update(observation)
                if events:
                    self._apply(events)
                    changed = True
                if observation.unreliable and self.tracker.phase in (PLAYING, ILLEGAL_PHASE):
                    # Under the reader's warning, whether the referee can count on an alarm.
                    self.camera_detail = "; ".join(filter(None, (observation.detail, self._illegal_calls_note())))
        self.bus.publish("frame", {"index": frame.index})
        if changed:
            self._publish_state()

    def _illegal_calls_note(self) -> str:
        """What the camera's warning adds while the reader distrusts its counts (see Tracker.calls_illegal)."""
        assert self.tracker is not None
        plies = self.tracker.config.trust_after_plies
        if self.tracker.calls_illegal:
            return (f"the counts have fitted the game for {plies} plies (a set-up given and read fitting counts as one), "
                    "so illegal sowings are called")
        if plies is None:
            return "illegal sowings are not called on these counts"
        return f"illegal sowings are not called until the counts fit the game for {plies} plies in a row"

    # ------------------------------------------------------------------ tracker events -> store/bus

    def _store_event(self, kind: str, data: dict[str, Any], *, frame: int | None = None) -> None:
        frame = self.frame_index if frame is None else frame
        # Before the first frame (a set-up the referee confirms before the camera runs) there is
        # no frame to name: the record says none rather than frame -1.
        self.repository.add_event(kind, match_id=self.match_id, game_id=self.game_id,
                                  frame=frame if frame >= 0 else None, time_s=self.time_s, data=data)

    def _apply(self, events: list[TrackerEvent]) -> None:
        """Write the tracker's decisions to the store (committed) and then announce them."""
        tracker = self.tracker
        assert tracker is not None
        for event in events:
            kind, data = event.kind, event.data
            if kind == "setup_confirmed" and self.game_id is not None:
                self.repository.set_initial(self.game_id, data["position"])
                self._store_event("setup_confirmed", data, frame=event.frame)
            elif kind == "setup_corrected" and self.game_id is not None:
                self.repository.correct_setup(self.game_id, data["position"], [p["after"] for p in data["plies"]])
                self._store_event("setup_corrected", data, frame=event.frame)
            elif kind == "ply" and self.game_id is not None:
                self.repository.add_ply(self.game_id, n=data["n"], move=data["move"], side=data["side"],
                                        after=data["after"], frame=data["frame"], time_s=data["time_s"])
                if data.get("referee"):
                    self._store_event("referee_accept", {"after": data["after"]}, frame=event.frame)
                self.bus.publish("ply", dict(data))
            elif kind == "take_back" and self.game_id is not None:
                points = data["points"]
                self.repository.take_back_ply(self.game_id, data["n"], match_id=self.match_id, frame=event.frame,
                                              time_s=event.time_s, data={"position": data["position"]},
                                              reopen_points=(points["S"], points["N"]) if data["reopened"] else None)
            elif kind == "alarm":
                self._store_event("illegal_sowing", data, frame=data["frame"])
                self.bus.publish("alarm", {"active": True, "alarm": data})
            elif kind == "alarm_cleared":
                self._store_event("alarm_cleared", data, frame=event.frame)
                self.bus.publish("alarm", {"active": False, "alarm": None, "by": data["by"]})
            elif kind == "game_over" and self.game_id is not None and self.match_id is not None:
                result = data["result"]
                self.repository.finish_game(self.game_id, result=result,
                                            annulled=result is not None and result["winner"] is None)
                points = data["points"]
                self.repository.set_match_points(self.match_id, south=points["S"], north=points["N"])
            elif kind == "match_over" and self.match_id is not None:
                points = data["points"]
                self.repository.set_match_points(self.match_id, south=points["S"], north=points["N"],
                                                 winner=data["winner"])
            elif kind == "game_start" and self.match_id is not None:
                self.game_id = self.repository.start_game(
                    self.match_id, number=data["number"], rules=tracker.rules.name,
                    options=tracker.rules.overrides(),
                )
            elif kind in ("correction", "late_start", "overtime", "misreads", "mismatch", "unreliable", "counts_trusted"):
                self._store_event(kind, data, frame=event.frame)

    def _publish_state(self) -> None:
        self.bus.publish("state", self.state())

    # ------------------------------------------------------------------ resume

    def _resume(self) -> None:
        """Pick up the most recent unfinished match of the database, if any."""
        match = self.repository.resume()
        if match is None:
            return
        rules = RuleSet.from_name_and_options(match["rules"], match["options"])
        first = Side(match["first"])
        results = []
        for game in match["games"]:
            if game["status"] in ("finished", "annulled") and game["result"] is not None:
                results.append(GameResult.from_dict(game["result"]))
        config = replace(self.config.tracker, mode=match["mode"] if match["mode"] in MODES else "classical")
        tracker = Tracker(rules, config=config, match=Match(rules, first, tuple(results)))
        current = match.get("current_game")
        self.match_id, self.mode = match["id"], config.mode
        self.players = (match["south"], match["north"])
        if current is not None and current["status"] in ("setup", "playing"):
            self.game_id = current["id"]
            if current["initial"] is not None:
                _replay(tracker, Position.from_notation(current["initial"]), current["plies"])
        elif match["games"]:
            self.game_id = self.repository.start_game(
                self.match_id, number=len(match["games"]) + 1, rules=rules.name, options=rules.overrides())
        self.tracker = tracker

    # ------------------------------------------------------------------ snapshots

    def state(self) -> dict[str, Any]:
        """JSON-able snapshot of everything the dashboard shows (schema: ``docs/live_session.md``)."""
        with self._lock:
            tracker = self.tracker
            phase = "no_match" if tracker is None else tracker.phase
            position = None if tracker is None else tracker.position
            observed = board_rows(self.observed) if self.observed is not None else None
            state: dict[str, Any] = {
                "phase": phase,
                "camera": self.camera,
                "camera_detail": self.camera_detail,
                "frame": self.frame_index,
                "time_s": round(self.time_s, 3),
                "rules": tracker.rules.name if tracker else self.default_rules,
                "options": tracker.rules.overrides() if tracker else {},
                "mode": self.mode,
                "position": position.notation() if position else None,
                "board": [list(r) for r in position.rows()] if position else None,
                "side_to_move": position.side_to_move.value if position else (
                    tracker.first.value if tracker else None),
                "observed": observed,
                "misreads": {},
                "setup": None,
                "setup_corrected": None,
                "last_move": None,
                "plies": [],
                "alarm": None,
                "unexplained": None,
                "in_progress": None,
                "match": None,
                "result": None,
                "clocks": {"mode": self.mode, "since_last_move_s": None, "late_start": False, "overtime": False},
                "error": self.error,
                "corners_px": self._corners(),
            }
            if tracker is None:
                return state
            if phase == SETUP:
                setup = tracker.setup or (read_setup(self.observed, tracker.rules, tracker.first)
                                          if self.observed is not None else None)
                if setup is not None:
                    state["setup"] = {"observed": board_rows(setup.board), "valid": setup.valid,
                                      "problems": list(setup.problems),
                                      "suggested": None if setup.suggested is None else board_rows(setup.suggested)}
                else:
                    state["setup"] = {"observed": None, "valid": False, "problems": ["no stable reading yet"]}
            state["misreads"] = tracker.misreads
            if tracker.setup_corrected is not None:
                state["setup_corrected"] = {k: tracker.setup_corrected[k] for k in ("was", "position", "frame")}
            state["plies"] = [ply.as_dict() for ply in tracker.plies]
            last = tracker.last_ply
            if last is not None:
                state["last_move"] = {"move": last.move, "side": last.side.value,
                                      "laps": [lap_dict(lap) for lap in last.laps]}
            if tracker.alarm is not None:
                alarm = tracker.alarm
                state["alarm"] = {k: alarm[k] for k in ("kind", "frame", "observed", "expected", "differs",
                                                        "nearest", "closest", "where")}
            state["in_progress"] = tracker.in_progress_dict()
            if tracker.phase == PLAYING and tracker.unexplained is not None:
                state["unexplained"] = dict(tracker.unexplained)
            south, north = tracker.match.points()
            state["match"] = {
                "id": self.match_id, "south": self.players[0], "north": self.players[1],
                "points": {"S": south, "N": north}, "target": tracker.rules.match_target,
                "game_number": tracker.game_number,
                "games": self._match_games(),
            }
            state["result"] = None if tracker.result is None else tracker.result.to_dict()
            since = tracker.since_last_move_s
            state["clocks"] = {"mode": self.mode, "since_last_move_s": None if since is None else round(since, 1),
                               "late_start": tracker.late_start, "overtime": tracker.overtime}
            return state

    def _match_games(self) -> list[dict[str, Any]]:
        """The current match's games (id, number, result), read again only after a game or ply was written.

        ``state()`` runs on every publish; the games list changes a few times per game.
        """
        key = (self.match_id, self.repository.games_version)
        if self._games_cache is None or self._games_cache[0] != key:
            games = self.repository.list_games(self.match_id) if self.match_id is not None else []
            self._games_cache = (key, [{"id": g["id"], "number": g["number"], "result": g["result"]}
                                       for g in games])
        return [dict(game) for game in self._games_cache[1]]

    def _corners(self) -> list[list[float]] | None:
        """Board corners (TL, TR, BR, BL, raw-frame pixels) of the last reading that found the board."""
        reading = self._reading
        if reading is None or reading.corners_px is None:
            return None
        return [[round(float(x), 1), round(float(y), 1)] for x, y in reading.corners_px]

    def latest_raw_jpeg(self) -> bytes | None:
        """The last frame as JPEG (for the calibration page), or None before the first frame."""
        return self._jpeg("raw", annotate=False)

    def latest_jpeg(self) -> bytes | None:
        """The last frame with the board quad and every pit's read count drawn, as JPEG."""
        return self._jpeg("annotated", annotate=True)

    def _jpeg(self, key: str, *, annotate: bool) -> bytes | None:
        import cv2

        with self._image_lock:
            image, reading, index = self._image, self._reading, self.frame_index
            cached = self._jpeg_cache.get(key)
            if image is None:
                return None
            if cached is not None and cached[0] == index:
                return cached[1]
            if annotate and reading is not None:
                from omweso_cam.vision.draw import annotate as draw

                image = draw(image, reading)
            h, w = image.shape[:2]
            # The raw frame stays full size: calibration corners are clicked in its pixels.
            if annotate and w > self.config.stream_max_width_px:
                scale = self.config.stream_max_width_px / w
                image = cv2.resize(image, (self.config.stream_max_width_px, round(h * scale)),
                                   interpolation=cv2.INTER_AREA)
            ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, self.config.jpeg_quality])
            if not ok:
                return None
            blob = data.tobytes()
            self._jpeg_cache[key] = (index, blob)
            return blob

    # ------------------------------------------------------------------ referee actions

    def new_match(self, *, south: str, north: str, rules: str = "seed", options: dict[str, Any] | None = None,
                  mode: str = "classical", first: str = "S") -> int:
        """Start a match (its first game begins with the set-up); returns the match id."""
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; expected one of {', '.join(MODES)}")
        if first not in ("S", "N"):
            raise ValueError(f"first must be 'S' or 'N', got {first!r}")
        if not south.strip() or not north.strip():
            raise ValueError("both players need a name")
        ruleset = RuleSet.from_name_and_options(rules, options)  # RuleSetError is a ValueError
        with self._lock:
            self.match_id = self.repository.create_match(
                south=south, north=north, rules=ruleset.name, options=ruleset.overrides(), mode=mode, first=first,
                target=ruleset.match_target,
            )
            self.game_id = self.repository.start_game(self.match_id, number=1, rules=ruleset.name,
                                                      options=ruleset.overrides())
            self.mode = mode
            self.players = (south.strip(), north.strip())
            self.tracker = Tracker(ruleset, first=Side(first), config=replace(self.config.tracker, mode=mode))
        self._publish_state()
        return self.match_id

    def _need_tracker(self) -> Tracker:
        if self.tracker is None:
            raise ValueError("no match: start one first")
        return self.tracker

    def confirm_setup(self, position: str) -> None:
        """Confirm the set-up (full or short notation; the game starts at ply 0 from it)."""
        with self._lock:
            tracker = self._need_tracker()
            parsed = Position.from_notation(position)  # NotationError is a ValueError
            events = tracker.confirm_setup(parsed)
            self._apply(events)
        self._publish_state()

    def board_restored(self) -> None:
        """The referee says the board is back to the last legal position."""
        with self._lock:
            events = self._need_tracker().board_restored()
            self._store_event("referee_restored", {})
            self._apply(events)
        self._publish_state()

    def accept_observed(self) -> None:
        """Accept the observed board as the position after the mover's turn (recorded as an event)."""
        with self._lock:
            self._apply(self._need_tracker().accept_observed())
        self._publish_state()

    def take_back(self) -> None:
        """Take back the game's last ply (removed from the record, kept in a ``take_back`` event)."""
        with self._lock:
            self._apply(self._need_tracker().take_back())
        self._publish_state()

    def correct_pit(self, square: str, count: int) -> None:
        """Fix a misread pit of the current reading (or of the set-up)."""
        with self._lock:
            self._apply(self._need_tracker().correct_pit(square, count))
            if self.observed is not None and self.tracker is not None and self.tracker.observed is not None:
                self.observed = self.tracker.observed
        self._publish_state()

    def set_calibration(self, corners_px: list[tuple[float, float]]) -> None:
        """Set the board corners (TL, TR, BR, BL, pixels of the current frame) and save them."""
        import numpy as np

        from omweso_cam.vision.calibration import Calibration, reference_score

        corners = np.asarray(corners_px, dtype=np.float64)
        if corners.shape != (4, 2) or not np.all(np.isfinite(corners)):
            raise ValueError(f"expected 4 corners (x, y) as TL, TR, BR, BL, got {corners_px!r}")
        with self._image_lock:
            image = self._image
        if image is None:
            raise ValueError("no frame yet: the corners must refer to a camera frame")
        h, w = image.shape[:2]
        if np.any(corners < 0) or np.any(corners[:, 0] > w) or np.any(corners[:, 1] > h):
            raise ValueError(f"corners must lie inside the {w}x{h} frame")
        area = 0.5 * sum(corners[i, 0] * corners[(i + 1) % 4, 1] - corners[(i + 1) % 4, 0] * corners[i, 1]
                         for i in range(4))
        if area <= 0.01 * w * h:
            raise ValueError("corners must go clockwise TL, TR, BR, BL around a board of visible size")
        # New corners; the rig's camera intrinsics and seed model (if it had them) are kept.
        reader = self._processor.reader if self._processor is not None else None
        previous = reader.calibration if reader is not None else None
        # The board's pit-pattern score on this frame, for the drift check to compare with. Without
        # it a board of weak contrast (below the absolute bar of DriftConfig.min_score), the kind
        # whose corners people click because it is not found, was called moved on every frame
        # and, not found again, read as no board at all.
        calibration = Calibration(corners_px=corners, image_size=(w, h), method="manual",
                                  seed_model=previous.seed_model if previous else None,
                                  intrinsics=previous.intrinsics if previous else None,
                                  reference_score=reference_score(image, corners))
        path = self.calibration_path or Path(self.repository.path).with_name("calibration.json")
        calibration.save(path)
        self.calibration_path = path
        if self._processor is not None and reader is not None:
            from omweso_cam.vision.pipeline import BoardReader

            self._processor.reader = BoardReader(calibration, config=reader.config, seed_model=reader.seed_model)
            self._processor.stability.set_region(corners, (w, h))
        with self._lock:
            self._store_event("calibration", {"corners_px": corners.tolist(), "path": str(path)})
        self._publish_state()

    def _existing_calibration(self) -> Path | None:
        if self.calibration_path is not None and self.calibration_path.exists():
            return self.calibration_path
        return None


def _replay(tracker: Tracker, initial: Position, plies: list[dict[str, Any]]) -> None:
    """Bring a fresh tracker to the stored position of a game (resume after a restart)."""
    tracker.confirm_setup(initial)
    for ply in plies:
        after = Position.from_notation(ply["after"])
        if ply["move"] == REFEREE_MOVE:
            tracker.restore_ply(REFEREE_MOVE, after, frame=ply["frame"] or 0, time_s=ply["time_s"] or 0.0)
            continue
        assert tracker.position is not None
        outcome = apply_move(tracker.position, Move.parse(ply["move"]), tracker.rules)
        tracker.restore_ply(ply["move"], outcome.position, frame=ply["frame"] or 0, time_s=ply["time_s"] or 0.0,
                            laps=outcome.laps)


def record_json(record: dict[str, Any]) -> str:
    """The `track` record as JSON text."""
    return json.dumps(record, indent=2) + "\n"


__all__ = [
    "DISCONNECTED",
    "ENDED",
    "GAME_OVER",
    "ILLEGAL_PHASE",
    "PLAYING",
    "FrameProcessor",
    "LiveSession",
    "RefereeError",
    "RunnerConfig",
    "live_reader",
    "make_processor",
    "track_source",
]
