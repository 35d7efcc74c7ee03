"""benchmarks/counter_data.py --images: training crops cut from images that carry their own truth."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from tests.vision.benchmark_scripts import load_script

TRACED = Path(__file__).resolve().parents[2] / "sample_images" / "traced"


def test_images_with_truth_are_cut_at_their_true_pits(tmp_path: Path) -> None:
    counter_data = load_script("counter_data")
    folder = tmp_path / "boards"
    folder.mkdir()
    for name in ("traced_9100001", "traced_9100004", "traced_9100008"):  # the last shows no board
        for suffix in (".jpg", ".json"):
            shutil.copy(TRACED / f"{name}{suffix}", folder / f"{name}{suffix}")
    (folder / "notes.txt").write_text("not an image")
    shutil.copy(TRACED / "traced_9100002.jpg", folder / "broken.jpg")
    (folder / "broken.json").write_text("{ not json")
    out = tmp_path / "crops.npz"
    assert counter_data.main(["--images", str(folder), "--out", str(out), "--workers", "1"]) == 0

    data = np.load(out)
    truths = [json.loads((folder / f"{name}.json").read_text()) for name in ("traced_9100001", "traced_9100004")]
    assert data["crops"].shape == (64, counter_data.STORED_PX, counter_data.STORED_PX, 3)
    assert data["counts"].tolist() == truths[0]["counts"] + truths[1]["counts"]
    assert data["boards"].tolist() == [9100001] * 32 + [9100004] * 32
    assert np.isnan(data["points"]).all()

    # Each crop is centred on its pit: the middle of an empty pit's crop has the colour of the
    # camera image around the pit's centre (a third of the radius), and not a pit radius away.
    image = cv2.imread(str(folder / "traced_9100001.jpg")).astype(np.float64)
    middle = counter_data.STORED_PX / 2
    truth = truths[0]
    for crop, count, (x, y), r in zip(data["crops"][:32], truth["counts"], truth["pit_centers_px"],
                                      truth["pit_radius_px"], strict=True):
        if count:
            continue
        half = r / 3
        cut_half = half * counter_data.STORED_PX / (2 * counter_data.stored_crop_config().crop_of_radius * r)
        cut = crop[round(middle - cut_half):round(middle + cut_half), round(middle - cut_half):round(middle + cut_half)]
        near, off = (image[round(y - half):round(y + half), round(cx - half):round(cx + half)].mean(axis=(0, 1))
                     for cx in (x, x + r))
        colour = cut.reshape(-1, 3).mean(axis=0)
        assert np.abs(colour - near).max() < 8 < np.abs(colour - off).max()


def test_a_folder_without_boards_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    counter_data = load_script("counter_data")
    for suffix in (".jpg", ".json"):
        shutil.copy(TRACED / f"traced_9100008{suffix}", tmp_path / f"table{suffix}")  # a table, no board
    with pytest.raises(SystemExit):
        counter_data.main(["--images", str(tmp_path), "--out", str(tmp_path / "crops.npz"), "--workers", "1"])
    assert "no board to cut" in capsys.readouterr().err
    assert not (tmp_path / "crops.npz").exists()
