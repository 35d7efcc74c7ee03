"""Match records in SQLite: the end of the data flow, written by the runner, read by the dashboard.

One file holds matches, their games, every confirmed ply (move, position after it,
frame and time) and every event (illegal sowings, corrections, referee decisions).
The database runs in WAL mode and every write is its own committed transaction, so
killing the process at any moment loses no confirmed ply; :meth:`MatchRepository.resume`
finds the match that was being played.

Game records are exported and imported as JSON (the `track` record format plus tags)
or as the rules engine's text format (``GameRecord``); an import replays every move with
the rules engine and refuses a record that does not check out, leaving the database as it was.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

#: Version of the schema this code writes; older files are migrated on open.
SCHEMA_VERSION = 1
SCHEMA_FILE = Path(__file__).with_name("schema.sql")

#: The record format name written into JSON exports.
RECORD_FORMAT = "omweso-cam-game"


class StoreError(ValueError):
    """A record or request the store refuses (bad notation, unknown id, ...); nothing was written."""


class UnknownRecordError(StoreError, LookupError):
    """No match or game with that id."""


@dataclass(frozen=True)
class Migration:
    """One schema step: applied in a transaction, recorded in the ``migrations`` table."""

    version: int
    description: str
    apply: Callable[[sqlite3.Connection], None]


def _create_v1(conn: sqlite3.Connection) -> None:
    _execute_script(conn, SCHEMA_FILE.read_text(encoding="utf-8"))


def _execute_script(conn: sqlite3.Connection, script: str) -> None:
    """Run ``;``-separated statements inside the caller's transaction (``executescript`` would commit)."""
    lines = [line for line in script.splitlines() if not line.lstrip().startswith("--")]
    for statement in "\n".join(lines).split(";"):
        if statement.strip():
            conn.execute(statement)


#: Every schema version, oldest first. Add a new entry (never edit an old one) to change the schema.
MIGRATIONS: tuple[Migration, ...] = (Migration(1, "matches, games, plies, events", _create_v1),)


def _insert_event(conn: sqlite3.Connection, kind: str, *, match_id: int | None, game_id: int | None,
                  frame: int | None, time_s: float | None, data: Mapping[str, Any] | None) -> int:
    """Insert one event row inside the caller's transaction; its id."""
    cur = conn.execute(
        "INSERT INTO events (match_id, game_id, kind, frame, time_s, data, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (match_id, game_id, kind, frame, time_s, _dumps(data or {}), _now()),
    )
    return int(cur.lastrowid or 0)


def _set_game_status(conn: sqlite3.Connection, game_id: int, status: str, result: Mapping[str, Any] | None) -> None:
    """A game's status and result inside the caller's transaction; finished now unless it is being played."""
    conn.execute("UPDATE games SET status = ?, result = ?, finished_at = ? WHERE id = ?",
                 (status, None if result is None else _dumps(result), None if status == "playing" else _now(), game_id))


def _set_match_points(conn: sqlite3.Connection, match_id: int, south: int, north: int, winner: str | None) -> None:
    """A match's score inside the caller's transaction; with ``winner`` it is finished, else being played."""
    conn.execute("UPDATE matches SET points_s = ?, points_n = ?, winner = ?, status = ?, finished_at = ? WHERE id = ?",
                 (south, north, winner, "finished" if winner else "playing", _now() if winner else None, match_id))


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class MatchRepository:
    """SQLite store of matches, games, plies and events; safe to share between threads.

    ``path`` may be ``":memory:"`` for tests. Every public write commits before returning.
    """

    def __init__(self, path: str | Path, *, migrations: Sequence[Migration] = MIGRATIONS) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            try:
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:  # a file where a folder should be, no permission
                raise StoreError(f"{self.path}: cannot make the database's folder ({exc.strerror or exc})") from exc
        self._lock = threading.RLock()
        self._games_version = 0
        try:
            self._conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        except sqlite3.Error as exc:  # a place SQLite cannot create or open a file (/proc, a folder)
            raise StoreError(f"{self.path}: cannot open the database ({exc})") from exc
        try:
            self._conn.row_factory = sqlite3.Row
            self._conn.execute("PRAGMA foreign_keys = ON")
            version = self.schema_version()
            self._refuse_a_stranger(version)  # before WAL, which would stay switched on in its file
            if self.path != ":memory:":
                self._conn.execute("PRAGMA journal_mode = WAL")
            # FULL: a committed ply survives power loss too, not only a killed process.
            self._conn.execute("PRAGMA synchronous = FULL")
            self._migrate(migrations, version)
        except sqlite3.DatabaseError as exc:
            self._conn.close()
            raise StoreError(f"{self.path}: not an omweso-cam database ({exc})") from exc
        except BaseException:
            self._conn.close()
            raise

    # ------------------------------------------------------------------ plumbing

    def _refuse_a_stranger(self, version: int) -> None:
        """A database another program wrote (tables, no omweso-cam schema ``version``) is left as it is:
        the migrations would add omweso-cam's tables to it."""
        if version == 0:
            tables = [row[0] for row in self._conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
            if tables:
                raise StoreError(f"{self.path}: an SQLite database of another program (tables: "
                                 f"{', '.join(tables[:5])}{', ...' if len(tables) > 5 else ''}); omweso-cam "
                                 "keeps its games in a file of its own")

    def _migrate(self, migrations: Sequence[Migration], current: int) -> None:
        known = max((m.version for m in migrations), default=0)
        if current > known:
            raise StoreError(
                f"{self.path}: schema version {current} is newer than this omweso-cam knows ({known})"
            )
        for migration in sorted(migrations, key=lambda m: m.version):
            if migration.version <= current:
                continue
            with self._transaction() as conn:
                migration.apply(conn)
                conn.execute(
                    "INSERT INTO migrations (version, description, applied_at) VALUES (?, ?, ?)",
                    (migration.version, migration.description, _now()),
                )
                conn.execute(f"PRAGMA user_version = {int(migration.version)}")

    @contextmanager
    def _transaction(self, *, games: bool = False) -> Iterator[sqlite3.Connection]:
        """One committed write; ``games=True`` when it writes games or plies (bumps :attr:`games_version`)."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")
            if games:
                self._games_version += 1

    def _query(self, sql: str, params: Sequence[object] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return list(self._conn.execute(sql, params))

    def schema_version(self) -> int:
        """The schema version of the open file (0 for a new, empty file)."""
        with self._lock:
            return int(self._conn.execute("PRAGMA user_version").fetchone()[0])

    def migrations(self) -> list[dict[str, Any]]:
        """The applied migrations, oldest first."""
        return [dict(r) for r in self._query("SELECT * FROM migrations ORDER BY version")]

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> MatchRepository:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ writes

    def create_match(
        self,
        *,
        south: str,
        north: str,
        rules: str = "seed",
        options: Mapping[str, Any] | None = None,
        mode: str = "classical",
        first: str = "S",
        target: int | None = None,
    ) -> int:
        """A new match; returns its id."""
        if not south.strip() or not north.strip():
            raise StoreError("both players need a name")
        if first not in ("S", "N"):
            raise StoreError(f"first must be 'S' or 'N', got {first!r}")
        with self._transaction() as conn:
            cur = conn.execute(
                "INSERT INTO matches (south, north, rules, options, mode, first, target, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (south.strip(), north.strip(), rules, _dumps(options or {}), mode, first, target, _now()),
            )
            return int(cur.lastrowid or 0)

    def start_game(
        self,
        match_id: int | None,
        *,
        number: int,
        rules: str,
        options: Mapping[str, Any] | None = None,
        initial: str | None = None,
        tags: Mapping[str, Any] | None = None,
    ) -> int:
        """A new game (in set-up until :meth:`set_initial` is called, unless ``initial`` is given)."""
        if match_id is not None:
            self._match_row(match_id)
        status = "setup" if initial is None else "playing"
        with self._transaction(games=True) as conn:
            cur = conn.execute(
                "INSERT INTO games (match_id, number, rules, options, initial, tags, status, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (match_id, number, rules, _dumps(options or {}), initial, _dumps(tags or {}), status, _now()),
            )
            return int(cur.lastrowid or 0)

    def set_initial(self, game_id: int, initial: str) -> None:
        """The confirmed set-up position of a game; the game is then being played."""
        self._game_row(game_id)
        with self._transaction(games=True) as conn:
            conn.execute("UPDATE games SET initial = ?, status = 'playing' WHERE id = ?", (initial, game_id))

    def correct_setup(self, game_id: int, initial: str, afters: Sequence[str]) -> None:
        """Replace a game's set-up and the position after each of its plies, in one transaction.

        For a set-up the camera misread (``setup_corrected``): the moves stand, the positions
        they lead to change. ``afters`` must cover every recorded ply.
        """
        with self._transaction(games=True) as conn:
            game = self._game_row(game_id)
            if game["status"] != "playing":
                raise StoreError(f"game {game_id} is {game['status']}; its set-up cannot be corrected")
            plies = int(conn.execute("SELECT COUNT(*) FROM plies WHERE game_id = ?", (game_id,)).fetchone()[0])
            if plies != len(afters):
                raise StoreError(f"game {game_id} has {plies} plies, the correction gives {len(afters)} positions")
            conn.execute("UPDATE games SET initial = ? WHERE id = ?", (initial, game_id))
            conn.executemany("UPDATE plies SET after = ? WHERE game_id = ? AND n = ?",
                             [(after, game_id, n) for n, after in enumerate(afters, start=1)])

    def add_ply(
        self,
        game_id: int,
        *,
        n: int,
        move: str,
        side: str,
        after: str,
        frame: int | None = None,
        time_s: float | None = None,
    ) -> None:
        """Record ply ``n`` (1-based) of a game; committed before this returns.

        The game's state is checked inside the write transaction, so two writers (threads
        or processes) adding the same ply get one success and one StoreError.
        """
        with self._transaction(games=True) as conn:
            game = self._game_row(game_id)
            if game["status"] not in ("setup", "playing"):
                raise StoreError(f"game {game_id} is {game['status']}; no more plies can be added")
            last = int(conn.execute("SELECT COALESCE(MAX(n), 0) FROM plies WHERE game_id = ?", (game_id,))
                       .fetchone()[0])
            if n != last + 1:
                raise StoreError(f"game {game_id}: ply {n} does not follow ply {last}")
            conn.execute(
                "INSERT INTO plies (game_id, n, move, side, after, frame, time_s, recorded_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (game_id, n, move, side, after, frame, time_s, _now()),
            )
            conn.execute("UPDATE games SET status = 'playing' WHERE id = ?", (game_id,))

    def take_back_ply(self, game_id: int, n: int, *, match_id: int | None = None, frame: int | None = None,
                      time_s: float | None = None, data: Mapping[str, Any] | None = None,
                      reopen_points: tuple[int, int] | None = None) -> None:
        """Remove ply ``n``, the game's last, and record a ``take_back`` event holding it, in one transaction.

        The ply taken back stays in the event (move, side, position after, frame, and the
        game's result when it ended the game), so the record of what was played and undone is
        not lost. ``reopen_points`` (South, North) takes back the ply that ended the game: the
        game is being played again and its match, with those points, too.
        """
        with self._transaction(games=True) as conn:
            game = self._game_row(game_id)
            allowed = ("finished", "annulled") if reopen_points is not None else ("playing",)
            if game["status"] not in allowed:
                raise StoreError(f"game {game_id} is {game['status']}; no ply can be taken back"
                                 + (" that ended it" if reopen_points is not None else ""))
            row = conn.execute("SELECT n, move, side, after, frame, time_s FROM plies WHERE game_id = ?"
                               " ORDER BY n DESC LIMIT 1", (game_id,)).fetchone()
            if row is None or int(row["n"]) != n:
                raise StoreError(f"game {game_id}: ply {n} is not its last ply")
            conn.execute("DELETE FROM plies WHERE game_id = ? AND n = ?", (game_id, n))
            taken = {"n": n, "move": row["move"], "side": row["side"], "after": row["after"],
                     "ply_frame": row["frame"], "ply_time_s": row["time_s"]}
            if reopen_points is not None:
                taken["result"] = None if game["result"] is None else json.loads(game["result"])
                _set_game_status(conn, game_id, "playing", None)
                if game["match_id"] is not None:
                    _set_match_points(conn, game["match_id"], *reopen_points, None)
            _insert_event(conn, "take_back", match_id=match_id, game_id=game_id, frame=frame, time_s=time_s,
                          data={**(data or {}), **taken})

    def add_event(
        self,
        kind: str,
        *,
        match_id: int | None = None,
        game_id: int | None = None,
        frame: int | None = None,
        time_s: float | None = None,
        data: Mapping[str, Any] | None = None,
    ) -> int:
        """Record an event (illegal sowing, correction, referee decision, camera fault...)."""
        with self._transaction() as conn:
            return _insert_event(conn, kind, match_id=match_id, game_id=game_id, frame=frame, time_s=time_s,
                                 data=data)

    def finish_game(self, game_id: int, *, result: Mapping[str, Any] | None, annulled: bool = False) -> None:
        """Close a game with its result (``{"winner", "how", "points"}``) or as annulled."""
        self._game_row(game_id)
        status = "annulled" if annulled else "finished"
        with self._transaction(games=True) as conn:
            _set_game_status(conn, game_id, status, result)

    def set_match_points(self, match_id: int, *, south: int, north: int, winner: str | None = None) -> None:
        """Update a match's score; with ``winner`` the match is finished."""
        self._match_row(match_id)
        with self._transaction() as conn:
            _set_match_points(conn, match_id, south, north, winner)

    # ------------------------------------------------------------------ reads

    def _match_row(self, match_id: int) -> sqlite3.Row:
        rows = self._query("SELECT * FROM matches WHERE id = ?", (match_id,)) if _is_row_id(match_id) else []
        if not rows:
            raise UnknownRecordError(f"no match with id {match_id}")
        return rows[0]

    def _game_row(self, game_id: int) -> sqlite3.Row:
        rows = self._query("SELECT * FROM games WHERE id = ?", (game_id,)) if _is_row_id(game_id) else []
        if not rows:
            raise UnknownRecordError(f"no game with id {game_id}")
        return rows[0]

    def list_matches(self) -> list[dict[str, Any]]:
        """Every match, newest first (without games)."""
        return [_match_dict(r) for r in self._query("SELECT * FROM matches ORDER BY id DESC")]

    def get_match(self, match_id: int) -> dict[str, Any] | None:
        """One match with its games (without plies), or None."""
        try:
            row = self._match_row(match_id)
        except UnknownRecordError:
            return None
        match = _match_dict(row)
        match["games"] = self.list_games(match_id)
        return match

    def list_games(self, match_id: int | None = None) -> list[dict[str, Any]]:
        """The games of a match in order; with ``None``, every game (newest first).

        One query, ply counts included (``ply_count``), however many games there are.
        """
        if match_id is None:
            rows = self._query(f"{_GAMES_WITH_PLY_COUNT} ORDER BY g.id DESC")
        else:
            rows = self._query(f"{_GAMES_WITH_PLY_COUNT} WHERE g.match_id = ? ORDER BY g.number", (match_id,))
        return [self._game_dict(r, with_plies=False) for r in rows]

    def get_game(self, game_id: int) -> dict[str, Any] | None:
        """One game with its plies and events, or None."""
        if not _is_row_id(game_id):
            return None
        rows = self._query(f"{_GAMES_WITH_PLY_COUNT} WHERE g.id = ?", (game_id,))
        return self._game_dict(rows[0], with_plies=True) if rows else None

    @property
    def games_version(self) -> tuple[int, int]:
        """A value that changes whenever a game or a ply is written (for callers that cache game lists).

        Our own writes of games and plies are counted; SQLite's ``data_version`` changes
        when another connection (e.g. ``records import`` in another process) commits.
        """
        with self._lock:
            data_version = int(self._conn.execute("PRAGMA data_version").fetchone()[0])
            return self._games_version, data_version

    def _game_dict(self, row: sqlite3.Row, *, with_plies: bool) -> dict[str, Any]:
        game: dict[str, Any] = {
            "id": row["id"],
            "match_id": row["match_id"],
            "number": row["number"],
            "rules": row["rules"],
            "options": json.loads(row["options"]),
            "initial": row["initial"],
            "tags": json.loads(row["tags"]),
            "status": row["status"],
            "result": None if row["result"] is None else json.loads(row["result"]),
            "created_at": row["created_at"],
            "finished_at": row["finished_at"],
        }
        game["ply_count"] = int(row["ply_count"])
        if with_plies:
            game["plies"] = [
                {"n": p["n"], "move": p["move"], "side": p["side"], "after": p["after"],
                 "frame": p["frame"], "time_s": p["time_s"]}
                for p in self._query("SELECT * FROM plies WHERE game_id = ? ORDER BY n", (row["id"],))
            ]
            game["events"] = [
                {"id": e["id"], "kind": e["kind"], "frame": e["frame"], "time_s": e["time_s"],
                 **json.loads(e["data"])}
                for e in self._query("SELECT * FROM events WHERE game_id = ? ORDER BY id", (row["id"],))
            ]
        return game

    def list_events(self, *, match_id: int | None = None, game_id: int | None = None) -> list[dict[str, Any]]:
        """Events of a match or game (or all), oldest first."""
        sql, params = "SELECT * FROM events", []
        if game_id is not None:
            sql, params = sql + " WHERE game_id = ?", [game_id]
        elif match_id is not None:
            sql, params = sql + " WHERE match_id = ?", [match_id]
        return [
            {"id": e["id"], "match_id": e["match_id"], "game_id": e["game_id"], "kind": e["kind"],
             "frame": e["frame"], "time_s": e["time_s"], "data": json.loads(e["data"])}
            for e in self._query(sql + " ORDER BY id", params)
        ]

    def resume(self) -> dict[str, Any] | None:
        """The most recent unfinished match with its current game (and plies), or None."""
        rows = self._query("SELECT id FROM matches WHERE status = 'playing' ORDER BY id DESC LIMIT 1")
        if not rows:
            return None
        match = self.get_match(int(rows[0]["id"]))
        assert match is not None
        games = match["games"]
        match["current_game"] = self.get_game(games[-1]["id"]) if games else None
        return match

    # ------------------------------------------------------------------ records

    def export_game(self, game_id: int, fmt: str = "text") -> str:
        """A game record as text (the rules engine's ``GameRecord`` format) or JSON."""
        game = self.get_game(game_id)
        if game is None:
            raise UnknownRecordError(f"no game with id {game_id}")
        record = self._record_dict(game)
        if fmt == "json":
            return json.dumps(record, indent=2) + "\n"
        if fmt == "text":
            return _record_to_text(record)
        raise StoreError(f"unknown export format {fmt!r}; expected 'text' or 'json'")

    def _record_dict(self, game: dict[str, Any]) -> dict[str, Any]:
        tags = dict(game["tags"])
        if game["match_id"] is not None:
            match = self._match_row(game["match_id"])
            tags.setdefault("South", match["south"])
            tags.setdefault("North", match["north"])
            tags.setdefault("Mode", match["mode"])
        tags.setdefault("Game", str(game["number"]))
        return {
            "format": RECORD_FORMAT,
            "version": 1,
            "tags": tags,
            "rules": game["rules"],
            "options": game["options"],
            "initial": game["initial"],
            "plies": [{"move": p["move"], "after": p["after"], "frame": p["frame"]} for p in game["plies"]],
            "events": [e for e in game["events"] if e["kind"] == "illegal_sowing"],
            "result": game["result"],
        }

    def import_game(self, text: str, *, fmt: str | None = None, match_id: int | None = None) -> int:
        """Check a game record with the rules engine and store it; returns the new game's id.

        ``fmt`` is "json" or "text" (guessed from the first character when None).
        A record that does not check out raises :class:`StoreError` and stores nothing.
        """
        text = text.removeprefix("\ufeff")  # a byte-order mark, as Windows editors save UTF-8
        if fmt is None:
            fmt = "json" if text.lstrip().startswith("{") else "text"
        if fmt == "json":
            try:
                record = json.loads(text)
            except json.JSONDecodeError as exc:
                raise StoreError(f"not a JSON game record: {exc}") from exc
            checked = check_record(record)
        elif fmt == "text":
            checked = _record_from_text(text)
        else:
            raise StoreError(f"unknown import format {fmt!r}; expected 'text' or 'json'")
        if match_id is not None:
            self._match_row(match_id)
        with self._transaction(games=True) as conn:
            number = 1
            if match_id is not None:
                row = conn.execute(
                    "SELECT COALESCE(MAX(number), 0) + 1 FROM games WHERE match_id = ?", (match_id,)
                ).fetchone()
                number = int(row[0])
            status = "playing" if checked["result"] is None else "finished"
            cur = conn.execute(
                "INSERT INTO games (match_id, number, rules, options, initial, tags, status, result,"
                " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (match_id, number, checked["rules"], _dumps(checked["options"]), checked["initial"],
                 _dumps(checked["tags"]), status,
                 None if checked["result"] is None else _dumps(checked["result"]), _now()),
            )
            game_id = int(cur.lastrowid or 0)
            for n, ply in enumerate(checked["plies"], start=1):
                conn.execute(
                    "INSERT INTO plies (game_id, n, move, side, after, frame, time_s, recorded_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (game_id, n, ply["move"], ply["side"], ply["after"], ply.get("frame"), None, _now()),
                )
            conn.execute(
                "INSERT INTO events (match_id, game_id, kind, data, recorded_at) VALUES (?, ?, ?, ?, ?)",
                (match_id, game_id, "imported", _dumps({"plies": len(checked["plies"])}), _now()),
            )
        return game_id


# ---------------------------------------------------------------------- record checking


def check_record(record: object) -> dict[str, Any]:
    """Replay a JSON game record with the rules engine (``GameRecord.from_json``).

    Returns the record with canonical moves and positions; raises :class:`StoreError`
    naming the first thing that is wrong. Extra keys of our export (``frame``,
    ``events``, ``format``) are allowed.
    """
    from omweso_cam.rules import GameRecord, RecordError
    from omweso_cam.rules.record import REFEREE_MOVE

    if not isinstance(record, dict):
        raise StoreError("a game record must be a JSON object")
    plies = record.get("plies") or []
    if isinstance(plies, list) and any(isinstance(p, dict) and p.get("move") == REFEREE_MOVE for p in plies):
        raise StoreError("the record contains a referee-set position ('*' ply); it cannot be replayed")
    try:
        game = GameRecord.from_json({k: record.get(k) for k in ("rules", "options", "initial", "tags", "plies",
                                                                "result") if k in record})
    except RecordError as exc:
        raise StoreError(f"bad game record: {exc}") from None
    frames = [p.get("frame") if isinstance(p, dict) else None for p in plies] if isinstance(plies, list) else []
    return _checked(game, frames)


def _checked(game: Any, frames: list[Any]) -> dict[str, Any]:
    position = game.initial
    checked_plies = []
    for n, ply in enumerate(game.plies):
        checked_plies.append({
            "move": str(ply.move), "side": position.side_to_move.value,
            "after": ply.after.notation(), "frame": frames[n] if n < len(frames) else None,
        })
        position = ply.after
    return {
        "rules": game.rules.name,
        "options": game.rules.overrides(),
        "initial": game.initial.notation(),
        "tags": dict(game.tags),
        "plies": checked_plies,
        "result": None if game.result is None else game.result.to_dict(),
    }


def _record_to_text(record: dict[str, Any]) -> str:
    """Text form of a record via the rules engine's ``GameRecord`` (RULES.md section 2)."""
    from omweso_cam.rules import GameRecord, Move, Position, RecordError, RuleSet
    from omweso_cam.rules.record import REFEREE_MOVE

    if record["initial"] is None:
        raise StoreError("this game has no confirmed set-up position yet; nothing to export")
    for n, ply in enumerate(record["plies"], start=1):
        if ply["move"] == REFEREE_MOVE:
            raise StoreError(f"ply {n} is a referee-set position; export this game as JSON instead")
    tags = {k: v for k, v in record["tags"].items() if k not in ("Rules", "Options", "Setup", "Result")}
    try:
        rules = RuleSet.from_name_and_options(record["rules"], record["options"])
        game = GameRecord.from_moves(
            Position.from_notation(record["initial"]), [Move.parse(p["move"]) for p in record["plies"]],
            rules, tags=tags,
        )
    except (RecordError, ValueError) as exc:
        raise StoreError(f"stored game does not replay: {exc}") from None
    return str(game.to_text())


def _record_from_text(text: str) -> dict[str, Any]:
    from omweso_cam.rules import GameRecord, RecordError

    try:
        game = GameRecord.parse(text)
    except RecordError as exc:
        raise StoreError(f"bad game record: {exc}") from None
    return _checked(game, [])


#: SQLite's integers, row ids among them, are signed 64-bit.
_MAX_ROW_ID = 2**63 - 1


def _is_row_id(value: int) -> bool:
    """Whether ``value`` can name a row at all (an id beyond SQLite's integers names none; binding it
    would raise OverflowError, as a typed-in id of 25 digits did)."""
    return -_MAX_ROW_ID - 1 <= value <= _MAX_ROW_ID


#: Games with their number of plies, in one statement (add WHERE / ORDER BY on ``g``).
_GAMES_WITH_PLY_COUNT = (
    "SELECT g.*, (SELECT COUNT(*) FROM plies AS p WHERE p.game_id = g.id) AS ply_count FROM games AS g"
)


def _match_dict(row: sqlite3.Row) -> dict[str, Any]:
    return {
        "id": row["id"],
        "south": row["south"],
        "north": row["north"],
        "rules": row["rules"],
        "options": json.loads(row["options"]),
        "mode": row["mode"],
        "first": row["first"],
        "points": {"S": row["points_s"], "N": row["points_n"]},
        "target": row["target"],
        "status": row["status"],
        "winner": row["winner"],
        "created_at": row["created_at"],
        "finished_at": row["finished_at"],
    }


def _dumps(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))
