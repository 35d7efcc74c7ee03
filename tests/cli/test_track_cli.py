from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from omweso_cam.cli import main
from omweso_cam.observation import Observation
from omweso_cam.reconcile.simulate import observe, script_game
from omweso_cam.resources import samples_dir
from omweso_cam.rules import Position, RuleSet
from omweso_cam.store import MatchRepository

SEED = RuleSet.preset("seed")
START = Position.standard()


class ScriptProcessor:
    """Stands in for the vision stages: frame i -> the scripted observation."""

    def __init__(self, script: list[Any]) -> None:
        self.script = script

    def process(self, frame: Any) -> tuple[Observation, None]:
        item = self.script[frame.index]
        return observe(item.board, item.status, frame_index=frame.index, timestamp_s=frame.timestamp_s), None


def test_track_a_frame_folder_into_a_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    script = script_game(START, ["d1", "f4"], SEED)
    frames = tmp_path / "frames"
    frames.mkdir()
    for i in range(len(script)):
        cv2.imwrite(str(frames / f"frame_{i:04d}.png"), np.full((40, 60, 3), i, np.uint8))
    (frames / "frame_0003.png").write_bytes(b"broken")  # a corrupt frame mid-sequence
    (frames / "notes.txt").write_text("stray")
    monkeypatch.setattr("omweso_cam.runner.make_processor", lambda *a, **k: ScriptProcessor(script))
    out = tmp_path / "record.json"
    assert main(["track", str(frames), "--fps", "10", "--out", str(out)]) == 0
    record = json.loads(out.read_text())
    assert set(record) >= {"rules", "initial", "plies", "events", "result"}
    assert record["initial"] == START.notation()
    assert [p["move"] for p in record["plies"]] == ["d1", "f4"]
    faults = {e["fault"] for e in record["events"] if e["kind"] == "source_fault"}
    assert faults == {"corrupt", "stray_file"}
    err = capsys.readouterr().err
    assert "2 plies" in err and "frame" in err  # summary and the progress bar
    assert "failed on" not in err


def test_track_counts_the_frames_the_reader_failed_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    script = script_game(START, ["d1"], SEED)
    frames = tmp_path / "frames"
    frames.mkdir()
    for i in range(len(script)):
        cv2.imwrite(str(frames / f"frame_{i:04d}.png"), np.full((40, 60, 3), i, np.uint8))

    class Failing(ScriptProcessor):
        def process(self, frame: Any) -> tuple[Observation, None]:
            if frame.index == 2:
                raise ValueError("a bug")
            return super().process(frame)

    monkeypatch.setattr("omweso_cam.runner.make_processor", lambda *a, **k: Failing(script))
    out = tmp_path / "record.json"
    assert main(["track", str(frames), "--fps", "10", "--out", str(out)]) == 0
    record = json.loads(out.read_text())
    assert [p["move"] for p in record["plies"]] == ["d1"]
    assert [e["frame"] for e in record["events"] if e["kind"] == "vision_error"] == [2]
    assert "1 frame(s) the reader failed on" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["track", "/no/such/video.mp4", "--out", "x.json"], "no camera, stream, video file or folder"),
        (["track", ".", "--start", "1,2,3 S", "--out", "x.json"], "bad position"),
        (["track", ".", "--rules", "chess", "--out", "x.json"], "unknown rules preset"),
        (["track", ".", "--option", "nonsense", "--out", "x.json"], "KEY=VALUE"),
        # a photo: OpenCV opened it as a film of one frame and track wrote a record of nothing
        (["track", str(samples_dir() / "stills" / "still_000.jpg"), "--out", "x.json"], "is one photo"),
    ],
)
def test_track_refuses_bad_input(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(args) == 2
    assert message in capsys.readouterr().err


def test_a_folder_of_unknown_rate_is_tracked_at_an_assumed_one_and_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    script = script_game(START, ["d1"], SEED)
    frames = tmp_path / "frames"
    frames.mkdir()
    for i in range(len(script)):
        cv2.imwrite(str(frames / f"frame_{i:04d}.png"), np.full((40, 60, 3), i, np.uint8))
    monkeypatch.setattr("omweso_cam.runner.make_processor", lambda *a, **k: ScriptProcessor(script))
    assert main(["track", str(frames), "--out", str(tmp_path / "a.json"), "--no-progress"]) == 0
    assert "frames taken as 10 a second (give --fps" in capsys.readouterr().err
    (frames / "truth.json").write_text('{"fps": 4}')  # a folder `omweso-cam render` wrote says its rate
    assert main(["track", str(frames), "--out", str(tmp_path / "b.json"), "--no-progress"]) == 0
    assert "give --fps" not in capsys.readouterr().err


def test_track_help_gives_the_folder_rate_the_source_assumes(capsys: pytest.CaptureFixture[str]) -> None:
    # The help spells the default out (importing the frame sources would slow every command's start).
    from omweso_cam.vision.frames import DEFAULT_FOLDER_FPS

    with pytest.raises(SystemExit):
        main(["track", "--help"])
    assert f"else {DEFAULT_FOLDER_FPS:g})" in " ".join(capsys.readouterr().out.split())


AFTER_H1 = "4,4,4,4,4,4,4,4/0,0,0,0,0,0,0,0/0,0,0,0,1,1,1,1/4,4,4,4,4,4,4,0 N 1 0:0"


def test_records_export_import_and_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "games.sqlite3"
    with MatchRepository(db) as repo:
        match_id = repo.create_match(south="Ann", north="Bo")
        game_id = repo.start_game(match_id, number=1, rules="seed", initial=START.notation())
        repo.add_ply(game_id, n=1, move="h1", side="S", after=AFTER_H1)
    text_file = tmp_path / "game.txt"
    assert main(["records", "export", str(game_id), "--db", str(db), "--out", str(text_file)]) == 0
    assert "1. h1 {" in text_file.read_text()
    assert main(["records", "export", str(game_id), "--db", str(db), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["plies"][0]["move"] == "h1"
    assert main(["records", "import", str(text_file), "--db", str(db)]) == 0
    new_id = int(capsys.readouterr().out)
    assert main(["records", "list", "--db", str(db)]) == 0
    listing = capsys.readouterr().out
    assert "Ann (S) v Bo (N)" in listing and f"game {new_id}: 1 plies" in listing
    bad = tmp_path / "bad.txt"
    bad.write_text(text_file.read_text().replace("1. h1", "1. h3"))
    assert main(["records", "import", str(bad), "--db", str(db)]) == 2
    assert "h3" in capsys.readouterr().err
    assert main(["records", "export", "999", "--db", str(db)]) == 2
    assert "no game with id 999" in capsys.readouterr().err
    assert main(["records", "list", "--db", str(tmp_path / "missing.sqlite3")]) == 2
    with MatchRepository(db) as repo:
        assert len(repo.list_games()) == 2
