from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from omweso_cam.store import MIGRATIONS, SCHEMA_VERSION, MatchRepository, Migration, StoreError

START = "4,4,4,4,4,4,4,4/0,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0/4,4,4,4,4,4,4,4 S 0 0:0"
# E01 of RULES.md examples (traditional): h1 from the standard position.
AFTER_H1 = "4,4,4,4,4,4,4,4/0,0,0,0,0,0,0,0/0,0,0,0,1,1,1,1/4,4,4,4,4,4,4,0 N 1 0:0"


@pytest.fixture
def repo(tmp_path: Path) -> MatchRepository:
    return MatchRepository(tmp_path / "games.sqlite")


def test_new_file_is_migrated_to_the_current_schema(repo: MatchRepository) -> None:
    assert repo.schema_version() == SCHEMA_VERSION
    assert [m["version"] for m in repo.migrations()] == [1]
    journal = repo._query("PRAGMA journal_mode")[0][0]
    assert journal == "wal"


def test_a_later_migration_is_applied_once_on_reopen(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite"
    MatchRepository(path).close()
    calls = []

    def add_column(conn: sqlite3.Connection) -> None:
        calls.append(1)
        conn.execute("ALTER TABLE matches ADD COLUMN venue TEXT")

    newer = (*MIGRATIONS, Migration(2, "match venue", add_column))
    with MatchRepository(path, migrations=newer) as repo:
        assert repo.schema_version() == 2
    with MatchRepository(path, migrations=newer) as repo:
        assert [m["version"] for m in repo.migrations()] == [1, 2]
    assert calls == [1]
    with pytest.raises(StoreError, match="newer than this omweso-cam knows"):
        MatchRepository(path)


def test_a_failing_migration_leaves_the_file_at_the_old_version(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite"
    MatchRepository(path).close()

    def broken(conn: sqlite3.Connection) -> None:
        conn.execute("ALTER TABLE matches ADD COLUMN venue TEXT")
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError):
        MatchRepository(path, migrations=(*MIGRATIONS, Migration(2, "broken", broken)))
    with MatchRepository(path) as repo:
        assert repo.schema_version() == 1
        cols = [r["name"] for r in repo._query("PRAGMA table_info(matches)")]
        assert "venue" not in cols


def test_a_file_that_is_no_database_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite3"
    path.write_bytes(b"a spreadsheet, saved under the wrong name\n" * 40)
    before = path.read_bytes()
    with pytest.raises(StoreError, match="not an omweso-cam database"):
        MatchRepository(path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["games.sqlite3"]


def test_another_programs_database_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
        conn.execute("INSERT INTO invoices (total) VALUES (12.5)")
    conn.close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match=r"another program.*invoices"):
        MatchRepository(path)
    assert path.read_bytes() == before  # no omweso-cam tables, no WAL switched on
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    conn.close()


def test_a_place_no_database_can_be_made_is_a_clear_error(tmp_path: Path) -> None:
    # SQLite's own "unable to open database file" came as a traceback (serve --db /proc/x.db).
    (tmp_path / "notes.txt").write_text("a file, not a folder")
    with pytest.raises(StoreError, match="cannot open the database"):
        MatchRepository(tmp_path)  # a folder
    with pytest.raises(StoreError, match="cannot make the database's folder"):
        MatchRepository(tmp_path / "notes.txt" / "games.sqlite3")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_match_game_plies_and_events_round_trip(repo: MatchRepository) -> None:
    match_id = repo.create_match(south="Ann", north="Bo", rules="seed", mode="blitz")
    game_id = repo.start_game(match_id, number=1, rules="seed")
    assert repo.get_game(game_id)["status"] == "setup"  # type: ignore[index]
    repo.set_initial(game_id, START)
    repo.add_ply(game_id, n=1, move="h1", side="S", after=AFTER_H1, frame=40, time_s=4.0)
    repo.add_event("illegal_sowing", match_id=match_id, game_id=game_id, frame=77,
                   data={"differs": ["c2"]})
    match = repo.get_match(match_id)
    assert match is not None
    assert match["south"] == "Ann" and match["mode"] == "blitz" and match["points"] == {"S": 0, "N": 0}
    assert [g["id"] for g in match["games"]] == [game_id]
    game = repo.get_game(game_id)
    assert game is not None
    assert game["plies"] == [{"n": 1, "move": "h1", "side": "S", "after": AFTER_H1, "frame": 40, "time_s": 4.0}]
    assert game["events"][0]["kind"] == "illegal_sowing" and game["events"][0]["differs"] == ["c2"]
    assert [m["id"] for m in repo.list_matches()] == [match_id]
    repo.finish_game(game_id, result={"winner": "S", "how": "both_ends", "points": 2})
    repo.set_match_points(match_id, south=2, north=0)
    assert repo.get_game(game_id)["result"]["how"] == "both_ends"  # type: ignore[index]
    assert repo.get_match(match_id)["points"] == {"S": 2, "N": 0}  # type: ignore[index]


def test_games_are_listed_with_their_ply_counts_in_one_statement(repo: MatchRepository) -> None:
    match_id = repo.create_match(south="Ann", north="Bo")
    for number in (1, 2, 3, 4):
        game_id = repo.start_game(match_id, number=number, rules="seed", initial=START)
        if number % 2:
            repo.add_ply(game_id, n=1, move="h1", side="S", after=AFTER_H1)
    statements: list[str] = []
    repo._conn.set_trace_callback(statements.append)
    games = repo.list_games(match_id)
    everything = repo.list_games()
    repo._conn.set_trace_callback(None)
    assert [g["ply_count"] for g in games] == [1, 0, 1, 0]
    assert [g["ply_count"] for g in everything] == [0, 1, 0, 1]  # newest first
    assert len(statements) == 2  # one per call, not one per game
    assert repo.get_game(games[0]["id"])["ply_count"] == 1  # type: ignore[index]


def test_games_version_changes_with_every_game_or_ply_write(repo: MatchRepository, tmp_path: Path) -> None:
    before = repo.games_version
    match_id = repo.create_match(south="Ann", north="Bo")
    repo.add_event("note", match_id=match_id)
    repo.set_match_points(match_id, south=0, north=0)
    assert repo.games_version == before  # no game or ply written
    seen = {before}
    game_id = repo.start_game(match_id, number=1, rules="seed")
    seen.add(repo.games_version)
    repo.set_initial(game_id, START)
    seen.add(repo.games_version)
    repo.add_ply(game_id, n=1, move="h1", side="S", after=AFTER_H1)
    seen.add(repo.games_version)
    repo.finish_game(game_id, result=None, annulled=True)
    seen.add(repo.games_version)
    assert len(seen) == 5
    with MatchRepository(repo.path) as other:  # another connection (another process, say) writes
        other.start_game(match_id, number=2, rules="seed")
    assert repo.games_version not in seen


def test_unknown_ids_and_bad_plies_are_refused_without_writing(repo: MatchRepository) -> None:
    assert repo.get_match(99) is None and repo.get_game(99) is None
    huge = 10**25  # beyond SQLite's integers: binding it raised OverflowError
    assert repo.get_match(huge) is None and repo.get_game(huge) is None and repo.get_match(-huge) is None
    with pytest.raises(StoreError, match=f"no game with id {huge}"):
        repo.export_game(huge)
    with pytest.raises(StoreError, match=f"no game with id {huge}"):
        repo.add_ply(huge, n=1, move="h1", side="S", after=AFTER_H1)
    with pytest.raises(StoreError, match="no game with id 99"):
        repo.add_ply(99, n=1, move="h1", side="S", after=AFTER_H1)
    with pytest.raises(StoreError, match="no match with id 5"):
        repo.start_game(5, number=1, rules="seed")
    match_id = repo.create_match(south="A", north="B")
    game_id = repo.start_game(match_id, number=1, rules="seed", initial=START)
    with pytest.raises(StoreError, match="ply 2 does not follow ply 0"):
        repo.add_ply(game_id, n=2, move="h1", side="S", after=AFTER_H1)
    with pytest.raises(StoreError, match="both players need a name"):
        repo.create_match(south=" ", north="B")
    repo.finish_game(game_id, result=None, annulled=True)
    with pytest.raises(StoreError, match="annulled"):
        repo.add_ply(game_id, n=1, move="h1", side="S", after=AFTER_H1)
    assert repo.get_game(game_id)["plies"] == []  # type: ignore[index]
    assert len(repo.list_matches()) == 1


def test_writers_racing_for_the_same_ply_get_one_success_and_store_errors(repo: MatchRepository) -> None:
    import threading

    for _ in range(5):  # a race: before the check moved into the transaction, most rounds failed
        game_id = repo.start_game(None, number=1, rules="seed", initial=START)
        barrier = threading.Barrier(6)
        outcomes: list[str] = []

        def write(game_id: int = game_id, barrier: threading.Barrier = barrier,
                  outcomes: list[str] = outcomes) -> None:
            barrier.wait()
            try:
                repo.add_ply(game_id, n=1, move="h1", side="S", after=AFTER_H1)
                outcomes.append("stored")
            except StoreError:
                outcomes.append("refused")
            except Exception as exc:  # e.g. sqlite3.IntegrityError: not a clear refusal
                outcomes.append(type(exc).__name__)

        threads = [threading.Thread(target=write) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(outcomes) == ["refused"] * 5 + ["stored"]
        assert repo.get_game(game_id)["ply_count"] == 1  # type: ignore[index]


def test_resume_finds_the_unfinished_match_and_its_game(repo: MatchRepository) -> None:
    assert repo.resume() is None
    done = repo.create_match(south="A", north="B")
    repo.set_match_points(done, south=12, north=0, winner="S")
    live = repo.create_match(south="C", north="D")
    game_id = repo.start_game(live, number=1, rules="seed", initial=START)
    repo.add_ply(game_id, n=1, move="h1", side="S", after=AFTER_H1)
    resumed = repo.resume()
    assert resumed is not None and resumed["id"] == live
    assert resumed["current_game"]["plies"][-1]["after"] == AFTER_H1


WRITER = textwrap.dedent(
    """
    import sys, time
    from omweso_cam.store import MatchRepository
    repo = MatchRepository(sys.argv[1])
    match_id = repo.create_match(south="A", north="B")
    game_id = repo.start_game(match_id, number=1, rules="seed", initial="x")
    n = 0
    while True:
        n += 1
        repo.add_ply(game_id, n=n, move="a1", side="S", after=f"after {n}")
        print(n, flush=True)
    """
)


def test_a_killed_process_loses_no_confirmed_ply(tmp_path: Path) -> None:
    path = tmp_path / "games.sqlite"
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    confirmed = 0
    deadline = time.monotonic() + 20
    while confirmed < 25 and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line:
            confirmed = int(line)
    proc.kill()  # SIGKILL mid-run: no clean-up, no final commit
    proc.wait()
    assert confirmed >= 25
    with MatchRepository(path) as repo:
        resumed = repo.resume()
        assert resumed is not None
        plies = resumed["current_game"]["plies"]
        # Every ply the writer reported as confirmed is there, in order, with nothing torn.
        assert len(plies) >= confirmed
        assert [p["n"] for p in plies] == list(range(1, len(plies) + 1))
        assert plies[confirmed - 1]["after"] == f"after {confirmed}"
        assert repo._query("PRAGMA integrity_check")[0][0] == "ok"


def test_export_json_and_refuse_bad_formats(repo: MatchRepository) -> None:
    match_id = repo.create_match(south="Ann", north="Bo")
    game_id = repo.start_game(match_id, number=1, rules="seed", initial=START)
    repo.add_ply(game_id, n=1, move="h1", side="S", after=AFTER_H1, frame=3)
    record = json.loads(repo.export_game(game_id, fmt="json"))
    assert record["initial"] == START
    assert record["plies"] == [{"move": "h1", "after": AFTER_H1, "frame": 3}]
    assert record["tags"]["South"] == "Ann"
    with pytest.raises(StoreError, match="unknown export format"):
        repo.export_game(game_id, fmt="xml")
    with pytest.raises(StoreError, match="no game"):
        repo.export_game(1234)


def _played_game(repo: MatchRepository) -> int:
    match_id = repo.create_match(south="Ann", north="Bo", rules="traditional")
    game_id = repo.start_game(match_id, number=1, rules="traditional", initial=START)
    repo.add_ply(game_id, n=1, move="h1", side="S", after=AFTER_H1, frame=12)
    return game_id


def test_text_export_imports_back_to_the_same_game(repo: MatchRepository) -> None:
    text = repo.export_game(_played_game(repo), fmt="text")
    assert '[South "Ann"]' in text and f'[Setup "{START}"]' in text and f"1. h1 {{{AFTER_H1}}}" in text
    copy = repo.get_game(repo.import_game(text))
    assert copy is not None
    assert copy["initial"] == START and copy["rules"] == "traditional"
    assert [(p["move"], p["after"]) for p in copy["plies"]] == [("h1", AFTER_H1)]
    assert copy["tags"]["South"] == "Ann"


def test_json_export_imports_back_with_frames(repo: MatchRepository) -> None:
    text = repo.export_game(_played_game(repo), fmt="json")
    copy = repo.get_game(repo.import_game(text))
    assert copy is not None and copy["plies"][0]["frame"] == 12 and copy["plies"][0]["side"] == "S"


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_record_saved_by_a_windows_editor_imports(repo: MatchRepository, fmt: str) -> None:
    # Notepad saves UTF-8 with a byte-order mark and CRLF lines: the mark was 'line 1: cannot read'.
    text = "\ufeff" + repo.export_game(_played_game(repo), fmt=fmt).replace("\n", "\r\n")
    copy = repo.get_game(repo.import_game(text))
    assert copy is not None and [p["move"] for p in copy["plies"]] == ["h1"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not a record", "cannot read"),
        (json.dumps({"rules": "seed", "initial": "4,4/bad S", "plies": []}), "bad record"),
        (json.dumps({"rules": "seed", "initial": START, "plies": [{"move": "h9"}]}), "h9"),
        (json.dumps({"rules": "seed", "initial": START, "plies": [{"move": "a4"}]}), "ply 1"),
        (json.dumps({"rules": "traditional", "initial": START,
                     "plies": [{"move": "h1", "after": START}]}), "the rules give"),
        (json.dumps({"rules": "no-such-rules", "initial": START}), "bad record"),
        ("{broken json", "JSON"),
    ],
)
def test_bad_records_are_refused_and_nothing_is_stored(repo: MatchRepository, text: str, message: str) -> None:
    _played_game(repo)
    before = (repo.list_games(), repo.list_events())
    with pytest.raises(StoreError, match=message):
        repo.import_game(text)
    assert (repo.list_games(), repo.list_events()) == before


def test_a_corrected_set_up_rewrites_the_game_positions_in_one_step(repo: MatchRepository) -> None:
    match_id = repo.create_match(south="Ann", north="Bo", rules="seed")
    game_id = repo.start_game(match_id, number=1, rules="seed")
    read = "4,4,4,4,4,4,4,4/0,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0/4,4,4,4,4,4,5,3 S 0 0:0"
    read_after = "4,4,4,4,4,4,4,4/0,0,0,0,0,0,0,0/0,0,0,0,1,1,1,0/4,4,4,4,4,4,5,0 N 1 0:0"
    repo.set_initial(game_id, read)
    repo.add_ply(game_id, n=1, move="h1", side="S", after=read_after, frame=40, time_s=4.0)
    before = repo.get_game(game_id)
    with pytest.raises(StoreError, match="has 1 plies, the correction gives 2"):
        repo.correct_setup(game_id, START, [AFTER_H1, AFTER_H1])
    assert repo.get_game(game_id) == before  # nothing half-written
    repo.correct_setup(game_id, START, [AFTER_H1])
    game = repo.get_game(game_id)
    assert game is not None and game["initial"] == START
    assert [(p["move"], p["after"]) for p in game["plies"]] == [("h1", AFTER_H1)]


def test_a_ply_taken_back_leaves_the_game_and_stays_in_an_event(repo: MatchRepository) -> None:
    match_id = repo.create_match(south="Ann", north="Bo", rules="seed")
    game_id = repo.start_game(match_id, number=1, rules="seed")
    repo.set_initial(game_id, START)
    repo.add_ply(game_id, n=1, move="h1", side="S", after=AFTER_H1, frame=40, time_s=4.0)
    before = repo.get_game(game_id)
    with pytest.raises(StoreError, match="ply 2 is not its last ply"):
        repo.take_back_ply(game_id, 2)
    assert repo.get_game(game_id) == before and not repo.list_events(game_id=game_id)
    repo.take_back_ply(game_id, 1, match_id=match_id, frame=55, data={"position": START})
    game = repo.get_game(game_id)
    assert game is not None and game["plies"] == []
    [event] = repo.list_events(game_id=game_id)
    assert event["kind"] == "take_back" and event["frame"] == 55
    assert event["data"] == {"position": START, "n": 1, "move": "h1", "side": "S", "after": AFTER_H1,
                             "ply_frame": 40, "ply_time_s": 4.0}
    # The same ply number is free again.
    repo.add_ply(game_id, n=1, move="h1", side="S", after=AFTER_H1, frame=60, time_s=6.0)
    assert [p["frame"] for p in repo.get_game(game_id)["plies"]] == [60]  # type: ignore[index]


def test_taking_back_the_ply_that_ended_a_game_reopens_the_game_and_its_match(repo: MatchRepository) -> None:
    match_id = repo.create_match(south="Ann", north="Bo", rules="seed")
    game_id = repo.start_game(match_id, number=1, rules="seed")
    repo.set_initial(game_id, START)
    repo.add_ply(game_id, n=1, move="h1", side="S", after=AFTER_H1)
    result = {"winner": "S", "how": "both_ends", "points": 2}
    repo.finish_game(game_id, result=result)
    repo.set_match_points(match_id, south=2, north=0)
    with pytest.raises(StoreError, match="is finished; no ply can be taken back"):
        repo.take_back_ply(game_id, 1)  # without reopening: refused, nothing written
    assert repo.get_game(game_id)["plies"] and not repo.list_events(game_id=game_id)  # type: ignore[index]
    repo.take_back_ply(game_id, 1, match_id=match_id, reopen_points=(0, 0))
    game, match = repo.get_game(game_id), repo.get_match(match_id)
    assert game is not None and game["status"] == "playing" and game["result"] is None and game["plies"] == []
    assert match is not None and match["points"] == {"S": 0, "N": 0} and match["status"] == "playing"
    [event] = repo.list_events(game_id=game_id)
    assert event["data"]["result"] == result and event["data"]["move"] == "h1"
    with pytest.raises(StoreError, match="is playing; no ply can be taken back that ended it"):
        repo.take_back_ply(game_id, 1, reopen_points=(0, 0))
