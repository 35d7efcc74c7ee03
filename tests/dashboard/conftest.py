"""A stand-in for omweso_cam.runner.LiveSession: the same interface, state dicts per the schema, a real EventBus.

Tests drive it directly (publish_move, raise_alarm, set_frame) and
check what the dashboard asked of it in calls.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import re
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from omweso_cam.dashboard import create_app
from omweso_cam.events import EventBus
from omweso_cam.store import MatchRepository
from omweso_cam.vision.frames import FrameSource

#: Two tiny valid JPEGs (64x48), different content, so tests can tell frames apart.
TINY_JPEG = base64.b64decode("/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAA0JCgsKCA0LCgsODg0PEyAVExISEyccHhcgLikxMC4pLSwzOko+MzZGNywtQFdBRkxOUlNSMj5aYVpQYEpRUk//2wBDAQ4ODhMREyYVFSZPNS01T09PT09PT09PT09PT09PT09PT09PT09PT09PT09PT09PT09PT09PT09PT09PT09PT0//wAARCAAwAEADASIAAhEBAxEB/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/8QAHwEAAwEBAQEBAQEBAQAAAAAAAAECAwQFBgcICQoL/8QAtREAAgECBAQDBAcFBAQAAQJ3AAECAxEEBSExBhJBUQdhcRMiMoEIFEKRobHBCSMzUvAVYnLRChYkNOEl8RcYGRomJygpKjU2Nzg5OkNERUZHSElKU1RVVldYWVpjZGVmZ2hpanN0dXZ3eHl6goOEhYaHiImKkpOUlZaXmJmaoqOkpaanqKmqsrO0tba3uLm6wsPExcbHyMnK0tPU1dbX2Nna4uPk5ebn6Onq8vP09fb3+Pn6/9oADAMBAAIRAxEAPwChFG80qRRjLuwVR6k1tf8ACK3/APz2tv8Avpv8KzNM/wCQpaf9d0/9CFWfEn/Iduf+A/8AoIrzla12d7veyLX/AAit/wD89rb/AL6b/Cj/AIRW/wD+e1t/303+FYVFF49gs+5u/wDCK3//AD2tv++m/wAKP+EVv/8Antbf99N/hWFRRePYLPubv/CK3/8Az2tv++m/wrIu7aSzupLeYDehwcHIPcGpNM/5Clp/13T/ANCFWfEn/Iduf+A/+gim7WugV72ZW0z/AJClp/13T/0IVZ8Sf8h25/4D/wCgiq2mf8hS0/67p/6EKs+JP+Q7c/8AAf8A0EUvsh9ozKKKKkoKKKKALWmf8hS0/wCu6f8AoQqz4k/5Dtz/AMB/9BFVtM/5Clp/13T/ANCFWfEn/Iduf+A/+giq+yT9oraZ/wAhS0/67p/6EKs+JP8AkO3P/Af/AEEVQglaC4jmQAtGwYA9Mg5rbk8QWk0hkl0eB3PVmYEn8dtNWtZg73uYFFbv9uWH/QDtv/Hf/iaP7csP+gHbf+O//E0rLuF32MKit3+3LD/oB23/AI7/APE0f25Yf9AO2/8AHf8A4miy7hd9jM0z/kKWn/XdP/QhVnxJ/wAh25/4D/6CKtrr1kjh00W3VlOQQVBB/wC+aytQu2vr2W5ZAhc/dHYAYH8qbslYSve5/9k=")
TINY_JPEG_2 = base64.b64decode("/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAA0JCgsKCA0LCgsODg0PEyAVExISEyccHhcgLikxMC4pLSwzOko+MzZGNywtQFdBRkxOUlNSMj5aYVpQYEpRUk//2wBDAQ4ODhMREyYVFSZPNS01T09PT09PT09PT09PT09PT09PT09PT09PT09PT09PT09PT09PT09PT09PT09PT09PT0//wAARCAAwAEADASIAAhEBAxEB/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/8QAHwEAAwEBAQEBAQEBAQAAAAAAAAECAwQFBgcICQoL/8QAtREAAgECBAQDBAcFBAQAAQJ3AAECAxEEBSExBhJBUQdhcRMiMoEIFEKRobHBCSMzUvAVYnLRChYkNOEl8RcYGRomJygpKjU2Nzg5OkNERUZHSElKU1RVVldYWVpjZGVmZ2hpanN0dXZ3eHl6goOEhYaHiImKkpOUlZaXmJmaoqOkpaanqKmqsrO0tba3uLm6wsPExcbHyMnK0tPU1dbX2Nna4uPk5ebn6Onq8vP09fb3+Pn6/9oADAMBAAIRAxEAPwDCooor0zzgooooAKKKKACiiigAooooAKKKKACiiigAooooAKKKKACiiigAooooAKKKKAP/2Q==")

STANDARD_ROWS = [[4] * 8, [0] * 8, [0] * 8, [4] * 8]
STANDARD = "4,4,4,4,4,4,4,4/0,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0/4,4,4,4,4,4,4,4 S 0 0:0"
#: South played a1 (every lap counter-clockwise) from the standard position (RULES.md example E02).
AFTER_A1_ROWS = [[4] * 8, [0] * 8, [0, 0, 0, 0, 0, 0, 1, 1], [0, 5, 5, 5, 0, 5, 5, 5]]
AFTER_A1 = "4,4,4,4,4,4,4,4/0,0,0,0,0,0,0,0/0,0,0,0,0,0,1,1/0,5,5,5,0,5,5,5 N 1 0:0"

_NOTATION = re.compile(r"^(\d+(,\d+){7})(/\d+(,\d+){7}){3} [SN]( \d+ \d+:\d+)?$")


def rows_of(notation: str) -> list[list[int]]:
    """Board rows of a notation string (enough for the fake; the real one uses the rules engine)."""
    return [[int(x) for x in rank.split(",")] for rank in notation.split()[0].split("/")]


def base_state() -> dict[str, Any]:
    """A state snapshot with every key of the schema: a match in play, standard position."""
    return {
        "phase": "playing",
        "camera": "stable",
        "frame": 10,
        "time_s": 1.0,
        "rules": "seed",
        "options": {},
        "mode": "classical",
        "position": STANDARD,
        "board": copy.deepcopy(STANDARD_ROWS),
        "side_to_move": "S",
        "observed": copy.deepcopy(STANDARD_ROWS),
        "misreads": {},
        "camera_detail": "",
        "setup": None,
        "last_move": None,
        "plies": [],
        "alarm": None,
        "unexplained": None,
        "in_progress": None,
        "match": {"id": 1, "south": "Alice", "north": "Bongo", "points": {"S": 0, "N": 0},
                  "target": 12, "game_number": 1, "games": [{"id": 1, "number": 1, "result": None}]},
        "result": None,
        "clocks": {"mode": "classical", "since_last_move_s": 0.0, "late_start": False, "overtime": False},
    }


class FakeSession:
    """Implements the LiveSession interface with in-memory state."""

    def __init__(self, repository: Any = None) -> None:
        self.bus = EventBus()
        self.repository = repository
        self.calls: list[tuple[str, Any]] = []
        self.calibration: list[tuple[float, float]] | None = None
        self._lock = threading.Lock()
        self._state = base_state()
        self._jpeg: bytes | None = TINY_JPEG
        self._raw: bytes | None = TINY_JPEG
        self.lifecycle: list[str] = []
        self.rate_note: str | None = None  # LiveSession's note on a guessed frame rate

    # -------------------------------------------------------------- LiveSession interface
    def start(self) -> None:
        self.lifecycle.append("start")

    def stop(self) -> None:
        self.lifecycle.append("stop")

    def state(self) -> dict[str, Any]:
        with self._lock:
            return copy.deepcopy(self._state)

    def latest_jpeg(self) -> bytes | None:
        return self._jpeg

    def latest_raw_jpeg(self) -> bytes | None:
        return self._raw

    def new_match(self, *, south: str, north: str, rules: str = "seed",
                  options: dict[str, Any] | None = None, mode: str = "classical", first: str = "S") -> int:
        if rules not in ("seed", "traditional"):
            raise ValueError(f"unknown rules preset {rules!r}")
        if options and set(options) - {"match_target", "two_captures_first"}:
            raise ValueError(f"unknown rule option(s): {sorted(set(options) - {'match_target', 'two_captures_first'})}")
        self.calls.append(("new_match", dict(south=south, north=north, rules=rules, options=options,
                                             mode=mode, first=first)))
        match = {"id": 2, "south": south, "north": north, "points": {"S": 0, "N": 0}, "target": 12,
                 "game_number": 1, "games": [{"id": 2, "number": 1, "result": None}]}
        self.update(phase="setup", rules=rules, options=options or {}, mode=mode, side_to_move=first,
                    match=match, plies=[], last_move=None, alarm=None, result=None,
                    setup={"observed": copy.deepcopy(STANDARD_ROWS), "valid": True, "problems": []})
        return 2

    def confirm_setup(self, position: str) -> None:
        if not _NOTATION.match(position):
            raise ValueError(f"bad position notation {position!r}")
        rows = rows_of(position)
        if sum(map(sum, rows[:2])) != 32 or sum(map(sum, rows[2:])) != 32:
            raise ValueError(f"each side needs 32 seeds: {position!r}")
        self.calls.append(("confirm_setup", position))
        self.update(phase="playing", setup=None, position=position, board=rows)

    def board_restored(self) -> None:
        if self._state["alarm"] is None:
            raise ValueError("there is no illegal-sowing alarm to clear")
        self.calls.append(("board_restored", None))
        self.update(alarm=None, phase="playing")
        self.bus.publish("alarm", {"cleared": True})

    def accept_observed(self) -> None:
        alarm = self._state["alarm"]
        if alarm is None:
            raise ValueError("there is no observed board to accept")
        self.calls.append(("accept_observed", None))
        self.update(alarm=None, phase="playing", board=alarm["observed"])

    def take_back(self) -> None:
        if self._state["phase"] not in ("playing", "illegal", "game_over", "match_over"):
            raise ValueError("there is no move of a game to take back")
        self.calls.append(("take_back", None))
        self.update(plies=self._state["plies"][:-1], alarm=None, phase="playing")

    def correct_pit(self, square: str, count: int) -> None:
        self.calls.append(("correct_pit", (square, count)))
        rows = self._state["board"]
        rows[4 - int(square[1])]["abcdefgh".index(square[0])] = count
        self.update(board=rows)

    def set_calibration(self, corners_px: list[tuple[float, float]]) -> None:
        self.calls.append(("set_calibration", corners_px))
        self.calibration = list(corners_px)

    # -------------------------------------------------------------- test controls
    def update(self, **changes: Any) -> dict[str, Any]:
        """Change the state and publish it, as the runner does on every change."""
        with self._lock:
            self._state.update(copy.deepcopy(changes))
            snapshot = copy.deepcopy(self._state)
        self.bus.publish("state", snapshot)
        return snapshot

    def publish_move(self) -> dict[str, Any]:
        """South plays a1 from the standard position."""
        ply = {"n": 1, "move": "a1", "side": "S", "after": AFTER_A1, "frame": 40}
        laps = [
            {"kind": "initial", "origin": "a1", "direction": "ccw", "hand": 4, "landing": "e1",
             "then": "relay", "captured": 0},
            {"kind": "relay", "origin": "e1", "direction": "ccw", "hand": 5, "landing": "g2",
             "then": "end", "captured": 0},
        ]
        self.bus.publish("ply", ply)
        return self.update(position=AFTER_A1, board=AFTER_A1_ROWS, side_to_move="N", plies=[ply],
                           last_move={"move": "a1", "side": "S", "laps": laps}, frame=40)

    def raise_alarm(self, counts_distrusted: bool = False) -> dict[str, Any]:
        """An illegal sowing: c2 and d1 differ from the nearest legal board (a seed of a1 sown into b1)."""
        nearest = copy.deepcopy(self._state["board"])
        nearest[3][0] -= 1
        nearest[3][1] += 1
        observed = copy.deepcopy(nearest)
        observed[2][2] += 1
        observed[3][3] -= 1
        alarm = {"kind": "illegal_sowing", "frame": 77, "observed": observed,
                 "expected": copy.deepcopy(self._state["board"]), "differs": ["c2", "d1"],
                 "nearest": {"board": nearest, "moves": ["b1"], "part_way": True},
                 "closest": [{"move": "b1", "after": AFTER_A1, "distance": 3.0}], "where": "lap 2, pit e2",
                 "counts_distrusted": counts_distrusted}
        self.bus.publish("alarm", alarm)
        return self.update(alarm=alarm, phase="illegal", frame=77)

    def set_progress(self) -> dict[str, Any]:
        return self.update(in_progress={"moves": ["a1", "a1(cw)"], "lap": 2, "pit": "e2", "in_hand": 3,
                                        "continuation": ["f2", "g2", "h2"]})

    def set_frame(self, jpeg: bytes | None, raw: bytes | None = None) -> None:
        self._jpeg = jpeg
        self._raw = raw if raw is not None else jpeg


class ScriptedSource(FrameSource):
    """A frame source for the real LiveSession, fed by the test with boards (32 counts each).

    ``show(board)`` queues a few "hand" frames (an empty board tuple) and then the
    board held still; frames carry a small grey image so the JPEG stream works. A camera,
    not a recording: it never waits for a match.
    """

    name = "scripted"
    len_hint = None
    fps = 4.0

    def __init__(self) -> None:
        import queue

        self.boards: queue.Queue[tuple[int, ...] | None] = queue.Queue()
        self.board_of_frame: dict[int, tuple[int, ...]] = {}
        self.index = 0

    def show(self, board: tuple[int, ...], frames: int = 6) -> None:
        for _ in range(3):
            self.boards.put(())
        for _ in range(frames):
            self.boards.put(tuple(board))

    def __iter__(self) -> Iterator[Any]:
        import numpy as np

        from omweso_cam.vision.frames import Frame

        while True:
            board = self.boards.get()
            if board is None:
                return
            self.board_of_frame[self.index] = board
            image = np.full((48, 64, 3), 60 + self.index % 100, np.uint8)
            yield Frame(self.index, self.index / self.fps, image)
            self.index += 1

    def close(self) -> None:
        self.boards.put(None)


class ScriptedProcessor:
    """Stands in for vision in the real LiveSession: each frame reads as its scripted board.

    As surely as the counter reads a clear board (``reconcile.simulate.SURE_READER``): read
    less surely, one seed sown into a wrong small pit would be no illegal sowing.
    """

    def __init__(self, source: ScriptedSource) -> None:
        self.source = source

    def process(self, frame: Any) -> tuple[Any, None]:
        from omweso_cam.observation import Observation
        from omweso_cam.reconcile.simulate import SURE_READER

        board = self.source.board_of_frame[frame.index]
        if not board:  # a hand over the board between two scenes
            return Observation(frame.index, frame.timestamp_s, "hand"), None
        return Observation.from_counts(board, frame_index=frame.index, timestamp_s=frame.timestamp_s,
                                       sigma=SURE_READER.sigma), None


REFEREE_TOKEN = "test-referee-token"


@contextlib.contextmanager
def scripted_live_session(token: str = REFEREE_TOKEN) -> Iterator[tuple[Any, ScriptedSource, FlaskClient]]:
    """The real LiveSession (in-memory store, seed rules) on a ScriptedSource, its app's client, started."""
    from omweso_cam.runner import LiveSession

    source = ScriptedSource()
    session = LiveSession("scripted", repository=":memory:", rules="seed",
                          open_source=lambda *_args, **_kw: source, processor=ScriptedProcessor(source))
    app = create_app({"TESTING": True, "REFEREE_TOKEN": token, "STREAM_POLL_S": 0.05}, session=session)
    session.start()
    try:
        yield session, source, app.test_client()
    finally:
        session.stop()


@pytest.fixture
def repository() -> Iterator[MatchRepository]:
    repo = MatchRepository(":memory:")
    yield repo
    repo.close()


@pytest.fixture
def session(repository: MatchRepository) -> FakeSession:
    return FakeSession(repository)


@pytest.fixture
def app(session: FakeSession) -> Flask:
    return create_app(
        {"TESTING": True, "REFEREE_TOKEN": REFEREE_TOKEN, "SSE_KEEPALIVE_S": 0.2, "STREAM_POLL_S": 0.05,
         "VIDEO_MAX_FPS": 50.0},
        session=session,
    )


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


@pytest.fixture
def referee_headers() -> dict[str, str]:
    return {"X-Referee-Token": REFEREE_TOKEN}
