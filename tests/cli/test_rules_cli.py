"""`omweso-cam rules moves` / `rules play` through omweso_cam.cli.main."""

from __future__ import annotations

import io
import json

import pytest

from omweso_cam.cli import main
from omweso_cam.rules import Position, RuleSet, successors

STANDARD = "4,4,4,4,4,4,4,4/0,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0/4,4,4,4,4,4,4,4 S 0 0:0"
E10 = "0,0,0,0,1,1,1,3/0,0,0,0,0,0,1,1/4,4,4,4,4,0,4,2/4,4,4,4,4,4,2,4 S"
E13 = "5,5,6,6,6,6,6,6/0,0,0,0,0,0,0,0/2,1,0,2,1,0,2,1/3,0,1,2,0,1,2,0 S"


def test_moves_lists_every_move(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "moves", "--rules", "traditional", STANDARD]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split("\t")[0] for line in lines] == ["a1", "b1", "c1", "d1", "e1", "f1", "g1", "h1"]
    assert lines[0].split("\t")[1] == (
        "4,4,4,4,4,4,4,4/0,0,0,0,0,0,0,0/0,0,0,0,0,0,1,1/0,5,5,5,0,5,5,5 N 1 0:0"
    )


def test_moves_jsonl(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # The first line as a file saved with a byte-order mark begins (it was "not a count").
    monkeypatch.setattr("sys.stdin", io.StringIO(f"\ufeff{E10}\nnot a position\n\n{E13}\n"))
    assert main(["rules", "moves", "--jsonl", "--rules", "traditional"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(records) == 3
    first, bad, endless = records
    assert first["position"] == E10
    expected = successors(Position.from_notation(E10), RuleSet.preset("traditional"))
    assert [m["move"] for m in first["moves"]] == [str(m) for m, _ in expected]
    g1 = next(m for m in first["moves"] if m["move"] == "g1")
    assert g1["result"] == {"winner": "S", "how": "opponent_cannot_move", "points": 1}
    assert g1["after"] == "0,0,0,0,1,1,1,0/0,0,0,0,0,0,1,0/4,4,4,4,4,1,5,4/4,4,4,4,4,4,0,6 N 3 2:1"
    assert any(m["result"] is None for m in first["moves"])
    assert bad["position"] == "not a position" and "bad position" in bad["error"]
    a1 = next(m for m in endless["moves"] if m["move"] == "a1")
    assert a1 == {"move": "a1", "after": None, "result": {"never_ending": True}}


def test_option_override(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "moves", "--rules", "traditional", "--option", "never_ending_policy=forbid_move", E13]) == 0
    moves = [line.split("\t")[0] for line in capsys.readouterr().out.splitlines()]
    assert "a1" not in moves and moves
    assert main(["rules", "moves", "--option", "bogus=1", STANDARD]) == 2
    assert "unknown rules option" in capsys.readouterr().err


def test_play(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "play", "--rules", "traditional", STANDARD, "a1"]) == 0
    captured = capsys.readouterr()
    assert captured.out.strip() == "4,4,4,4,4,4,4,4/0,0,0,0,0,0,0,0/0,0,0,0,0,0,1,1/0,5,5,5,0,5,5,5 N 1 0:0"
    assert "lap 1: initial from a1 ccw with 4, last seed in e1: relay" in captured.err
    assert main(["rules", "play", "--rules", "traditional", "--verbose", E10, "g1"]) == 0
    out = capsys.readouterr().out
    assert "lap 1: initial from g1 ccw with 2, last seed in h2: capture (4 seeds)" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["rules", "play", STANDARD, "a4"], "a4 is not a pit of South"),
        (["rules", "play", STANDARD, "a2"], "holds 0 seeds"),
        (["rules", "play", STANDARD, "x9"], "bad move"),
        (["rules", "play", "1,2,3 S", "a1"], "bad position"),
        (["rules", "play", "--rules", "chess", STANDARD, "a1"], "unknown rules preset"),
        (["rules", "moves", "1,2,3 S"], "bad position"),
    ],
)
def test_errors_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert message in captured.err and captured.out == ""


def test_states(capsys: pytest.CaptureFixture[str]) -> None:
    e05 = "2,2,1,4,4,4,4,3/2,0,1,1,1,1,1,1/2,2,1,2,2,2,3,3/3,2,0,2,2,2,2,2 S"
    assert main(["rules", "states", "--rules", "traditional", "--json", e05, "a1(cw)"]) == 0
    states = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(s["event"], s["pit"], s["in_hand"]) for s in states] == [
        ("lift", "a1", 3), ("drop", "a2", 2), ("drop", "b2", 1), ("drop", "c2", 0),
        ("lift", "c4", 1), ("lift", "c3", 2), ("drop", "b1", 1), ("drop", "c1", 0),
    ]
    assert states[-1]["board"] == "2,2,0,4,4,4,4,3/2,0,0,1,1,1,1,1/3,3,2,2,2,2,3,3/0,3,1,2,2,2,2,2"
    assert main(["rules", "states", e05, "c2"]) == 2
    assert "holds 1 seed" in capsys.readouterr().err


def test_play_shows_a_long_lap_trace_as_head_and_tail_and_names_the_lap_limit(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # c1 here relays for millions of laps before it repeats; a small lap limit cuts it,
    # and the trace must not list every lap.
    position = "1,1,0,1,1,0,0,0/0,0,1,0,0,0,0,0/12,0,3,0,11,0,1,2/2,3,7,5,1,5,6,1 S 9 2:0"
    code = main(["rules", "play", "--rules", "seed", "--option", "max_move_laps=200", position, "c1"])
    out, err = capsys.readouterr()
    assert code == 0 and out.strip() == "never_ending"
    assert "lap 40:" in err and "lap 41:" not in err and "lap 200:" in err
    assert "150 laps not shown" in err
    assert "max_move_laps" in err


def test_building_the_command_line_imports_no_opencv_or_numpy() -> None:
    # Heavy imports belong inside the commands, so `omweso-cam rules ...` starts fast.
    import subprocess
    import sys

    code = ("import sys; from omweso_cam.cli import build_parser; build_parser(); "
            "print(sorted(m for m in ('cv2', 'numpy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
