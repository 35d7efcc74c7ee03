"""The whole camera pipeline on a bundled film: frames -> stability -> reader -> tracker.

This is the product's real job, so it is tested on the committed film itself, not on
simulated readings. The set-up is given (as the referee confirms it on the dashboard);
every move must then be recovered from the camera alone.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from omweso_cam.rules import Position, RuleSet
from omweso_cam.runner import track_source
from omweso_cam.vision.frames import open_source

FILM = Path(__file__).resolve().parents[1] / "sample_images" / "sequences" / "illegal_sowing"


@pytest.fixture(scope="module")
def tracked() -> tuple[dict, dict]:
    truth = json.loads((FILM / "truth.json").read_text(encoding="utf-8"))
    source = open_source(str(FILM))  # its rate from its truth.json, as `omweso-cam track FOLDER` reads it
    assert source.fps == truth["fps"] and not source.fps_assumed
    record = track_source(source, RuleSet.preset(truth["rules"]), start=Position.from_notation(truth["initial"]))
    return truth, record


def test_every_move_of_the_film_is_recovered_from_the_camera(tracked: tuple[dict, dict]) -> None:
    truth, record = tracked
    assert [ply["move"] for ply in record["plies"]] == truth["moves"]
    assert record["plies"][-1]["after"] == truth["positions"][-1]


def test_the_staged_illegal_sowing_is_the_only_alarm(tracked: tuple[dict, dict]) -> None:
    truth, record = tracked
    alarms = [event["frame"] for event in record["events"] if event["kind"] == "illegal_sowing"]
    staged = [event["frame"] for event in truth["events"] if event["kind"] == "illegal_sowing"]
    assert len(alarms) == len(staged) == 1
    assert abs(alarms[0] - staged[0]) <= 3


def test_the_demo_films_still_frames_are_read_not_called_occluded() -> None:
    # Dark wood in H.264 video: its colours are noisy, and an occlusion test that trusted them
    # once called every still frame of the demo occluded (the demo then followed no move).
    from omweso_cam.vision.pipeline import BoardReader

    film = FILM.parents[1] / "demo"
    truth = json.loads((film / "truth.json").read_text(encoding="utf-8"))
    still = {f["index"] for f in truth["frames"] if f["status"] == "ok" and not f["hand_visible"]}
    reader = BoardReader()
    statuses = []
    for frame in open_source(str(film / "game.mp4")):
        if frame.index in still and frame.image is not None:
            statuses.append(reader.read(frame.image).status)
        if len(statuses) == 10:
            break
    assert statuses == ["ok"] * 10
