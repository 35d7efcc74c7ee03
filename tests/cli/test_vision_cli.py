"""`omweso-cam read/evaluate/calibrate/count-crops`: the JSON contract and bad input per image."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from omweso_cam.cli import main
from omweso_cam.resources import samples_dir
from tests.vision.drawn import draw_board

CORNERS = np.array([[150.0, 120.0], [800.0, 90.0], [860.0, 470.0], [120.0, 430.0]])
KEYS = {"image", "status", "board", "counts", "confidence", "corners_px", "ms"}


@pytest.fixture(scope="module")
def images(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("images")
    rng = np.random.default_rng(4)
    counts = [int(c) for c in rng.integers(0, 5, 32)]
    drawn = draw_board(counts, rng=rng, corners_px=CORNERS)
    paths = {"board": folder / "board.png", "gray": folder / "gray.png", "empty": folder / "empty.jpg",
             "text": folder / "notes.png", "truncated": folder / "cut.jpg", "table": folder / "table.png"}
    cv2.imwrite(str(paths["board"]), drawn.image)
    cv2.imwrite(str(paths["gray"]), cv2.cvtColor(drawn.image, cv2.COLOR_BGR2GRAY))
    paths["empty"].write_bytes(b"")
    paths["text"].write_text("hello")
    _ok, jpg = cv2.imencode(".jpg", drawn.image)
    paths["truncated"].write_bytes(jpg.tobytes()[:500])
    cv2.imwrite(str(paths["table"]), np.full((360, 640, 3), 120, np.uint8))
    pitch = float(np.median(np.linalg.norm(np.diff(drawn.pit_centers_px.reshape(4, 8, 2), axis=1), axis=2)))
    truth = {"status": "ok", "counts": counts, "corners_px": CORNERS.tolist(),
             "pit_centers_px": drawn.pit_centers_px.tolist(), "pit_radius_px": 0.4 * pitch}  # drawn pits: 0.4 pitch
    (folder / "board.json").write_text(json.dumps(truth))
    (folder / "table.json").write_text(json.dumps({"status": "no_board", "counts": None, "corners_px": None}))
    paths["folder"] = folder
    return paths


def _lines(capsys: pytest.CaptureFixture[str]) -> list[dict]:
    out = capsys.readouterr().out
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def test_read_json_one_line_per_image_never_crashing(images: dict[str, Path],
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    names = ["board", "empty", "text", "truncated", "table", "gray"]
    args = ["read", *(str(images[n]) for n in names), str(images["folder"] / "missing.png"), "--json"]
    code = main(args)
    lines = _lines(capsys)
    assert len(lines) == len(names) + 1
    for line in lines:
        assert set(line) >= KEYS
    by_name = {Path(line["image"]).name: line for line in lines}
    board = by_name["board.png"]
    assert board["status"] == "ok"
    assert len(board["counts"]) == 4 and all(len(r) == 8 for r in board["counts"])
    # The board part of the position notation (RULES.md section 2): comma-separated counts.
    assert board["board"] == "/".join(",".join(str(c) for c in r) for r in board["counts"])
    assert len(board["corners_px"]) == 4
    for name in ("empty.jpg", "notes.png", "cut.jpg", "missing.png"):
        assert by_name[name]["status"] == "unreadable_image"
        assert by_name[name]["counts"] is None
    assert by_name["table.png"]["status"] == "no_board"
    assert code == 1  # not every image was read


def test_an_image_vision_fails_on_does_not_lose_the_batch(images: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    from omweso_cam.vision.pipeline import BoardReader

    real_read = BoardReader.read
    calls: list[int] = []

    def read(self: BoardReader, image: np.ndarray, **kw: object) -> object:
        calls.append(1)
        if len(calls) == 1:  # the first image fails, as a bug would
            raise IndexError("tuple index out of range")
        return real_read(self, image, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(BoardReader, "read", read)
    code = main(["read", str(images["gray"]), str(images["board"]), "--json"])
    failed, board = _lines(capsys)
    assert failed["status"] == "unreadable_image" and "IndexError: tuple index out of range" in failed["detail"]
    assert board["status"] == "ok" and code == 1


def test_read_says_how_to_go_on_when_no_board_is_found(images: dict[str, Path],
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    # A board in view may not be found (pits the wood's own colour, a dotted cloth): the user is
    # told, once and on stderr (the JSON lines stay clean), how to give its corners.
    assert main(["read", str(images["table"]), str(images["board"]), "--json"]) == 1
    captured = capsys.readouterr()
    assert [json.loads(line)["status"] for line in captured.out.splitlines()] == ["no_board", "ok"]
    assert captured.err.count("no board found in 1 image(s)") == 1 and "--corners x,y" in captured.err
    assert main(["read", str(images["board"]), "--json"]) == 0
    assert "no board found" not in capsys.readouterr().err


def test_read_takes_a_folder_as_its_images_in_name_order(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    frames = tmp_path / "frames"
    frames.mkdir()
    for name in ("frame_10.png", "frame_2.png", "frame_1.png"):
        cv2.imwrite(str(frames / name), np.full((120, 160, 3), 90, np.uint8))
    (frames / "notes.txt").write_text("not an image")
    (tmp_path / "nothing").mkdir()
    assert main(["read", str(frames), str(tmp_path / "nothing"), "--json"]) == 1
    lines = _lines(capsys)
    assert [Path(line["image"]).name for line in lines] == ["frame_1.png", "frame_2.png", "frame_10.png", "nothing"]
    assert [line["status"] for line in lines] == ["no_board"] * 3 + ["unreadable_image"]
    assert lines[-1]["detail"] == "a folder, not an image file"


def test_read_with_corners(images: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    corners = ",".join(str(v) for v in CORNERS.ravel())
    assert main(["read", str(images["board"]), "--corners", corners, "--json"]) == 0
    (line,) = _lines(capsys)
    assert line["status"] == "ok"
    np.testing.assert_allclose(line["corners_px"], CORNERS, atol=0.1)
    assert main(["read", str(images["board"]), "--corners", "1,2,3"]) == 2
    assert "expected 8 numbers" in capsys.readouterr().err


def test_evaluate_writes_csv_and_summary(images: dict[str, Path], tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "eval.csv"
    assert main(["evaluate", str(images["folder"]), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    printed = captured.out
    assert "2/2" in captured.err  # the progress bar, on stderr (--no-progress turns it off)
    assert "boards found 1/1" in printed and "no_board 1/1" in printed
    assert "nan" not in printed  # nothing to count (no heaps here) reads n/a
    settings = json.loads((tmp_path / "eval.summary.json").read_text())
    assert settings["summary"]["boards_found"] == 1 and settings["summary"]["exact_7_12"] is None
    assert settings["config"]["count"]["views"] >= 1
    rows = list(csv.DictReader(out.open()))
    assert {r["image"] for r in rows} == {"board.png", "table.png"}
    board = next(r for r in rows if r["image"] == "board.png")
    for column in ("pits_wrong", "pits_off_by_more_than_1", "corner_error_frac", "pit_error_max_radii", "ms_count",
                   "ms_total"):
        assert column in board
    assert float(board["corner_error_frac"]) < 0.01
    assert float(board["pit_error_max_radii"]) < 0.25 and "every pit within 0.25 radius on 1/1 boards" in printed
    # Each misread pit is counted as read too high or too low, in the CSV and the summary.
    for band in ("0_6", "7_12", "13_64"):
        wrong = int(board[f"pits_{band}"]) - int(board[f"exact_{band}"])
        assert int(board[f"high_{band}"]) + int(board[f"low_{band}"]) == wrong
        assert settings["summary"][f"high_{band}"] == int(board[f"high_{band}"])
    assert f"read too high {board['high_0_6']}, too low {board['low_0_6']}" in printed


def test_calibrate_corners_then_read_with_it(images: dict[str, Path], tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    cal = tmp_path / "rig.json"
    assert main(["calibrate", "corners", str(images["board"]), "--out", str(cal)]) == 0
    capsys.readouterr()
    data = json.loads(cal.read_text())
    assert data["format"] == "omweso-cam-calibration" and data["pit_grid"] is not None
    assert main(["read", str(images["board"]), "--calibration", str(cal), "--json"]) == 0
    (line,) = _lines(capsys)
    assert line["status"] == "ok"
    np.testing.assert_allclose(line["corners_px"], CORNERS, atol=0.01 * 740)
    cal.write_text("{broken")
    assert main(["read", str(images["board"]), "--calibration", str(cal)]) == 2


@pytest.mark.parametrize("style", ["commas", "dashes", "position"])
def test_calibrate_takes_the_known_board_as_read_prints_it(style: str, images: dict[str, Path], tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    # `read` prints the board with commas (the rules notation); the option once took only dashes.
    counts = json.loads((images["folder"] / "board.json").read_text())["counts"]
    sep = "-" if style == "dashes" else ","
    text = "/".join(sep.join(str(c) for c in counts[r * 8 : r * 8 + 8]) for r in range(4))
    if style == "position":
        text += " S 0 0:0"
    corners = ",".join(f"{v:g}" for v in CORNERS.ravel())
    out = tmp_path / "rig.json"
    assert main(["calibrate", "corners", str(images["board"]), "--corners", corners, "--known-board", text,
                 "--out", str(out)]) == 0
    check = json.loads(capsys.readouterr().out)["known_position_check"]
    assert check is not None and check["base_exact"] >= 0.9  # the counts were taken as the board's


def test_calibrate_refuses_a_known_board_it_cannot_read_or_two_of_them(images: dict[str, Path], tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rig.json"
    corners = ",".join(f"{v:g}" for v in CORNERS.ravel())
    base = ["calibrate", "corners", str(images["board"]), "--corners", corners, "--out", str(out)]
    assert main([*base, "--known-board", "1,2"]) == 2
    assert "4 ranks of 8 counts" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        main([*base, "--standard", "--known-board", "4,4,4,4,4,4,4,4/0,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0/4,4,4,4,4,4,4,4"])
    assert exit_.value.code == 2 and "not allowed with argument" in capsys.readouterr().err
    assert not out.exists()


def test_marker_sheet_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sheet = tmp_path / "markers.png"
    assert main(["calibrate", "markers", "--sheet", str(sheet)]) == 0
    assert cv2.imread(str(sheet)) is not None


def test_calibrate_seeds_and_count_crops(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from omweso_cam.vision.count import pit_crops
    from omweso_cam.vision.grid import fit_grid
    from omweso_cam.vision.rectify import rectify

    rows = []
    for seed in (31, 32):
        rng = np.random.default_rng(seed)
        counts = [int(c) for c in rng.integers(0, 6, 32)]
        drawn = draw_board(counts, rng=rng, corners_px=CORNERS)
        board = rectify(drawn.image, CORNERS)
        for i, crop in enumerate(pit_crops(board.image, fit_grid(board.image))):
            name = f"crops/b{seed}_{i:02d}.png"
            (tmp_path / "crops").mkdir(exist_ok=True)
            cv2.imwrite(str(tmp_path / name), crop)
            rows.append((name, counts[i]))
    labelled = tmp_path / "labelled.csv"
    labelled.write_text("path,count\n" + "".join(f"{p},{c}\n" for p, c in rows))
    model = tmp_path / "seeds.json"
    assert main(["calibrate", "seeds", "--examples", str(labelled), "--out", str(model)]) == 0
    capsys.readouterr()
    assert json.loads(model.read_text())["format"] == "omweso-cam-seed-model"
    predict = tmp_path / "predict.csv"
    predict.write_text("path\n" + "".join(f"{p}\n" for p, _ in rows[:8]) + "crops/missing.png\n")
    code = main(["count-crops", "--model", str(model), "--predict", str(predict), "--json"])
    captured = capsys.readouterr()
    lines = [json.loads(line) for line in captured.out.splitlines()]
    assert len(lines) == 8 and all({"path", "count", "confidence"} <= set(line) for line in lines)
    assert "missing.png" in captured.err and code == 1
    bad = tmp_path / "bad.csv"
    bad.write_text("file,count\nx.png,1\n")
    assert main(["calibrate", "seeds", "--examples", str(bad), "--out", str(model)]) == 2
    capsys.readouterr()
    # A spreadsheet's "CSV UTF-8" (a byte-order mark, CRLF lines) was refused as having no 'path' column.
    excel = tmp_path / "excel.csv"
    excel.write_bytes(b"\xef\xbb\xbfpath,count\r\n" + b"".join(f"{p},{c}\r\n".encode() for p, c in rows)
                      + b"crops/b31_00.png,99999999999999999999999\r\n")
    assert main(["calibrate", "seeds", "--examples", str(excel), "--out", str(model)]) == 0
    err = capsys.readouterr().err
    assert f"line {len(rows) + 2}: count '99999999999999999999999' is not a whole number 0..64" in err
    latin = tmp_path / "latin.csv"
    latin.write_bytes("path,count\ncrops/caf\u00e9.png,1\n".encode("latin-1"))
    assert main(["calibrate", "seeds", "--examples", str(latin), "--out", str(model)]) == 2
    assert "latin.csv: not a text CSV in UTF-8" in capsys.readouterr().err


def test_saved_crops_count_as_the_reader_counted(images: dict[str, Path], tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """`read --save-crops` writes the crops the reader counted: `count-crops` on them agrees."""
    out = tmp_path / "crops"
    corners = ",".join(f"{v:g}" for v in CORNERS.ravel())
    assert main(["read", str(images["board"]), "--corners", corners, "--json", "--save-crops", str(out)]) == 0
    board = _lines(capsys)[0]["counts"]
    listing = (out / "crops.csv").read_text().splitlines()
    assert listing[0] == "path,count" and len(listing) == 33
    predict = out / "predict.csv"
    predict.write_text("path\n" + "".join(line.split(",")[0] + "\n" for line in listing[1:]))
    model = tmp_path / "default.json"
    from omweso_cam.vision.count import default_seed_model, save_seed_model

    save_seed_model(default_seed_model(), str(model))
    assert main(["count-crops", "--model", str(model), "--predict", str(predict), "--json"]) == 0
    counted = [line["count"] for line in _lines(capsys)]
    assert counted == [c for row in board for c in row]


@pytest.mark.parametrize("option", ["--annotate", "--save-crops"])
def test_read_refuses_a_folder_it_cannot_write_before_reading(option: str, images: dict[str, Path], tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "a file"
    blocker.write_text("in the way")
    assert main(["read", str(images["board"]), option, str(blocker / "out")]) == 2
    out, err = capsys.readouterr()
    assert f"{option}: cannot write to {blocker / 'out'}" in err and "nothing was read" in err
    assert "Traceback" not in err
    assert out == ""  # nothing read, nothing half-written


def test_read_warns_when_the_board_is_small_in_the_picture(images: dict[str, Path], tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    image = cv2.imread(str(images["board"]))
    small = tmp_path / "far.png"
    cv2.imwrite(str(small), cv2.resize(image, None, fx=1 / 3, fy=1 / 3, interpolation=cv2.INTER_AREA))
    assert main(["read", str(images["board"]), str(small)]) == 0
    near, far = capsys.readouterr().out.splitlines()
    assert "camera closer" not in near
    assert ": ok  " in far and "board small in the image" in far and "move the camera closer" in far
    main(["read", str(small), "--json"])
    (line,) = _lines(capsys)
    assert line["status"] == "ok" and "board small in the image" in line["detail"]


def test_calibrate_warns_of_a_board_the_reader_would_distrust(images: dict[str, Path], tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    # Said while the camera can still be moved: a sharp board gets no warning, a smeared one does.
    assert main(["calibrate", "corners", str(images["board"]), "--out", str(tmp_path / "sharp.json")]) == 0
    assert json.loads(capsys.readouterr().out)["warnings"] == []
    kernel = np.zeros((15, 15), np.float32)
    kernel[7, :] = 1.0 / 15  # the camera moved 15 px sideways during the exposure
    smeared = tmp_path / "smeared.png"
    cv2.imwrite(str(smeared), cv2.filter2D(cv2.imread(str(images["board"])), -1, kernel))
    assert main(["calibrate", "corners", str(smeared), "--corners", ",".join(str(v) for v in CORNERS.ravel()),
                 "--out", str(tmp_path / "smeared.json")]) == 0
    captured = capsys.readouterr()
    (warning,) = json.loads(captured.out)["warnings"]
    assert warning.startswith("board blurred by motion") and "warning: board blurred by motion" in captured.err


def test_calibrate_refuses_a_picture_that_cuts_the_board(images: dict[str, Path], tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    # Every read through such a rig would say its pits are cut off: it is said now, and nothing is
    # written (an existing calibration stays as it was).
    board = cv2.imread(str(images["board"]))
    right = int(CORNERS[:, 0].max() - 0.25 * np.ptp(CORNERS[:, 0]))
    cut = tmp_path / "cut.png"
    cv2.imwrite(str(cut), board[:, :right])
    out = tmp_path / "rig.json"
    out.write_text("kept")
    for given in ([], ["--corners", ",".join(str(v) for v in CORNERS.ravel())]):
        assert main(["calibrate", "corners", str(cut), *given, "--out", str(out)]) == 2
        assert "cut off by the edge of the picture" in capsys.readouterr().err
        assert out.read_text() == "kept"


def test_calibrate_on_a_board_across_the_picture_warns_that_south_is_a_guess_unless_given(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    across = np.array([[560.0, 50.0], [562.0, 470.0], [372.0, 472.0], [370.0, 52.0]])  # long sides up the picture
    image = tmp_path / "across.png"
    cv2.imwrite(str(image), draw_board([2] * 32, rng=np.random.default_rng(5), corners_px=across).image)
    assert main(["calibrate", "corners", str(image), "--out", str(tmp_path / "found.json")]) == 0
    captured = capsys.readouterr()
    (warning,) = json.loads(captured.out)["warnings"]
    assert warning.startswith("board across the picture") and "South is a guess" in captured.err
    assert main(["calibrate", "corners", str(image), "--corners", ",".join(str(v) for v in across.ravel()),
                 "--out", str(tmp_path / "given.json")]) == 0
    assert json.loads(capsys.readouterr().out)["warnings"] == []


def test_read_brings_a_still_to_64_seeds_unless_asked_not_to(capsys: pytest.CaptureFixture[str]) -> None:
    still = str(samples_dir() / "stills" / "still_000.jpg")  # the standard set-up, a pit or two read a seed short
    assert main(["read", still, "--json"]) == 0
    fitted = _lines(capsys)[0]
    assert main(["read", still, "--json", "--no-fit"]) == 0
    as_read = _lines(capsys)[0]
    read_total = sum(map(sum, as_read["counts"]))
    assert 60 <= read_total < 64, "the test needs a still the counter reads a little short"
    assert sum(map(sum, fitted["counts"])) == 64
    assert fitted["detail"].startswith(f"{read_total} seeds read; brought to the board's 64 in ")
    assert "seeds read" not in as_read.get("detail", "")
