"""Sub-commands of `omweso-cam` owned by the vision feature: read, evaluate, calibrate, count-crops.

OpenCV and numpy are imported inside the command functions, so `omweso-cam rules`
starts fast.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from omweso_cam.cli.args import check_writable, positive_number, whole_number

if TYPE_CHECKING:
    from omweso_cam.vision.count import SeedModel


def register(subparsers: Any) -> None:
    read = subparsers.add_parser("read", help="read the seed counts of board photos")
    read.add_argument("images", nargs="+", metavar="IMAGE",
                      help="board photos or frames (JPEG, PNG, ...), or folders of them (read in name order)")
    read.add_argument("--corners", help="board corners x,y,x,y,x,y,x,y (TL,TR,BR,BL; South at the bottom)")
    read.add_argument("--calibration", help="calibration JSON (from `omweso-cam calibrate`)")
    read.add_argument("--seeds", help="seed model JSON (from `omweso-cam calibrate seeds`)")
    read.add_argument("--json", action="store_true", help="one JSON line per image")
    read.add_argument("--annotate", metavar="DIR", help="write annotated images into DIR")
    read.add_argument("--save-crops", metavar="DIR", help="write every pit's canonical crop into DIR (+ crops.csv)")
    read.add_argument("--no-fit", action="store_true",
                      help="counts as read, not brought to the board's 64 seeds (a board not at rest, another game)")
    read.set_defaults(func=cmd_read)

    evaluate = subparsers.add_parser("evaluate", help="accuracy and timing over images with ground truth")
    evaluate.add_argument("folder", metavar="DIR",
                          help="images with a JSON truth beside each (as `omweso-cam render stills` writes them)")
    evaluate.add_argument("--out", default="evaluation.csv", help="per-image CSV (default evaluation.csv)")
    evaluate.add_argument("--calibration", help="calibration JSON for every image (default: find each board)")
    evaluate.add_argument("--seeds", help="seed model JSON")
    evaluate.add_argument("--use-truth-corners", action="store_true",
                          help="give the reader the true corners (measures counting alone)")
    evaluate.add_argument("--limit", type=whole_number(0), default=0, help="only the first N images (0: all)")
    evaluate.add_argument("--no-fit", action="store_true", help="score the counts as read, not brought to 64 seeds")
    evaluate.add_argument("--no-progress", action="store_true", help="no progress bar")
    evaluate.set_defaults(func=cmd_evaluate)

    calibrate = subparsers.add_parser("calibrate", help="write a calibration or seed model JSON")
    sub = calibrate.add_subparsers(dest="what", metavar="WHAT")
    corners = sub.add_parser("corners", help="board quad from given corners or found automatically")
    corners.add_argument("image", metavar="IMAGE", help="a still of the board from the camera to calibrate")
    corners.add_argument("--corners", help="x,y,x,y,x,y,x,y (TL,TR,BR,BL); default: find the board")
    _add_known_board(corners)
    corners.add_argument("--seeds", help="embed this seed model JSON")
    corners.add_argument("--out", required=True, help="calibration JSON to write")
    corners.set_defaults(func=cmd_calibrate_board, method="manual")
    markers = sub.add_parser("markers", help="board quad from the four printed ArUco markers, or print the sheet")
    markers.add_argument("image", nargs="?", metavar="IMAGE",
                         help="a still of the board with the four markers at its corners")
    markers.add_argument("--sheet", metavar="PNG", help="write the printable marker sheet and stop")
    _add_known_board(markers)
    markers.add_argument("--seeds", help="embed this seed model JSON")
    markers.add_argument("--out", help="calibration JSON to write (needed with IMAGE)")
    markers.set_defaults(func=cmd_calibrate_board, method="markers", corners=None)
    intr = sub.add_parser("intrinsics", help="camera matrix and distortion from chessboard photos")
    intr.add_argument("images", nargs="+", metavar="IMAGE",
                      help="photos of the printed chessboard, from the camera, in several poses")
    intr.add_argument("--pattern", default="9x6", help="inner corners COLSxROWS (default 9x6)")
    intr.add_argument("--square-mm", type=positive_number, default=25.0,
                      help="side of the printed squares in mm (default 25)")
    intr.add_argument("--calibration", help="add the intrinsics to this existing calibration file")
    intr.add_argument("--out", required=True, help="calibration JSON to write")
    intr.set_defaults(func=cmd_calibrate_intrinsics)
    seeds = sub.add_parser("seeds", help="seed appearance from labelled single-pit crops")
    seeds.add_argument("--examples", required=True, help="CSV with columns path,count (paths relative to it)")
    seeds.add_argument("--out", required=True, help="seed model JSON to write")
    seeds.set_defaults(func=cmd_calibrate_seeds)
    calibrate.set_defaults(func=lambda args: (calibrate.print_help(sys.stderr), 2)[1])

    crops = subparsers.add_parser("count-crops", help="count seeds in single-pit crops with a seed model")
    crops.add_argument("--model", required=True, help="seed model JSON (or a calibration with one)")
    crops.add_argument("--predict", required=True, help="CSV with a path column (count optional)")
    crops.add_argument("--json", action="store_true", help="one JSON line per crop")
    crops.set_defaults(func=cmd_count_crops)


def _error(message: str) -> int:
    print(f"omweso-cam: error: {message}", file=sys.stderr)
    return 2


def _reader(args: argparse.Namespace) -> Any:
    """A BoardReader from --calibration and --seeds (raises CalibrationError/SeedModelError)."""
    from omweso_cam.vision.calibration import Calibration
    from omweso_cam.vision.count import load_seed_model
    from omweso_cam.vision.pipeline import BoardReader, ReaderConfig

    calibration = Calibration.load(args.calibration) if getattr(args, "calibration", None) else None
    seeds = getattr(args, "seeds", None)
    model = load_seed_model(seeds) if seeds else None
    # Separate photos, not a stream: check every one of them for a moved board.
    config = ReaderConfig(drift_check_every_frames=1)
    if getattr(args, "no_fit", False):
        config = replace(config, board_seeds=None)
    return BoardReader(calibration, config=config, seed_model=model)


def cmd_read(args: argparse.Namespace) -> int:
    from omweso_cam.vision.calibration import CalibrationError
    from omweso_cam.vision.count import SeedModelError
    from omweso_cam.vision.localise import CornersError, parse_corners

    try:
        reader = _reader(args)
    except (CalibrationError, SeedModelError) as exc:
        return _error(str(exc))
    manual = None
    if args.corners:
        try:
            manual = parse_corners(args.corners)
        except CornersError as exc:
            return _error(str(exc))
    crops_file = None
    for option, folder in (("--annotate", args.annotate), ("--save-crops", args.save_crops)):
        if not folder:
            continue
        try:  # the folders asked for, before any image is read
            Path(folder).mkdir(parents=True, exist_ok=True)
            if option == "--save-crops":
                crops_file = open(Path(folder) / "crops.csv", "a", newline="", encoding="utf-8")  # noqa: SIM115
        except OSError as exc:
            where = exc.filename if exc.filename is not None else folder
            return _error(f"{option}: cannot write to {where} ({exc.strerror or exc}); nothing was read")
    try:
        return _read_images(args, reader, manual, crops_file)
    finally:
        if crops_file is not None:
            crops_file.close()


def _expand_folders(paths: list[str]) -> list[str]:
    """A folder among ``read``'s images stands for the images in it; one holding none stays, to be
    reported as unreadable like any other path that is no image."""
    from omweso_cam.vision.frames import image_files

    out: list[str] = []
    for path in paths:
        inside = image_files(Path(path)) if Path(path).is_dir() else []
        out += [str(p) for p in inside] or [path]
    return out


def _read_images(args: argparse.Namespace, reader: Any, manual: Any, crops_file: Any) -> int:
    """``read``'s loop over its images (the output folders made and the crops file opened by the caller)."""
    from omweso_cam.vision.pipeline import load_image

    crops_writer = None
    if crops_file is not None:
        crops_writer = csv.writer(crops_file)
        if crops_file.tell() == 0:
            crops_writer.writerow(["path", "count"])
    failures = 0
    not_found = 0
    for path in _expand_folders(args.images):
        t0 = time.perf_counter()
        image, problem = load_image(path)
        reading = None
        try:
            if image is not None and manual is not None:
                h, w = image.shape[:2]
                reading = reader.at_corners(manual.corners_px, (w, h), method="manual").read(image)
            elif image is not None:
                reading = reader.read(image)
        except Exception as exc:  # a bug met on one image must not lose the batch's other readings
            problem = f"vision failed on this image ({type(exc).__name__}: {exc}); please report it with the image"
        ms = round((time.perf_counter() - t0) * 1000.0, 1)
        record: dict[str, Any]
        if reading is None:
            record = {"image": path, "status": "unreadable_image", "board": None, "counts": None,
                      "confidence": 0.0, "corners_px": None, "ms": ms, "detail": problem}
        else:
            counts = reading.counts
            record = {
                "image": path,
                "status": reading.status,
                "board": reading.board_notation(),
                "counts": None if counts is None else [list(counts[r * 8 : r * 8 + 8]) for r in range(4)],
                "confidence": reading.confidence,
                "corners_px": None if reading.corners_px is None
                else [[round(float(x), 1), round(float(y), 1)] for x, y in reading.corners_px],
                "ms": ms,
            }
            if reading.detail:
                record["detail"] = reading.detail
        failures += record["status"] != "ok"
        not_found += record["status"] == "no_board"
        if args.json:
            print(json.dumps(record), flush=True)
        else:
            extra = f"  {record['board']}" if record["board"] else ""
            if record.get("detail") or not record["board"]:
                extra += f"  ({record.get('detail', '')})"
            print(f"{path}: {record['status']}{extra}  [{ms} ms]", flush=True)
        if reading is not None and image is not None and args.annotate:
            import cv2

            from omweso_cam.vision.draw import annotate

            cv2.imwrite(str(Path(args.annotate) / (Path(path).stem + ".annotated.jpg")), annotate(image, reading))
        if reading is not None and image is not None and crops_writer is not None and reading.grid is not None \
                and reading.counts:
            import cv2

            from omweso_cam.vision.count import pit_crops_from_image

            board_from_input = reading.board_from_input
            assert board_from_input is not None
            # Cut from the camera image, as the reader counts.
            crops = pit_crops_from_image(image, board_from_input, reading.grid, config=reader.config.count)
            for i, crop in enumerate(crops):
                name = f"{Path(path).stem}_pit{i:02d}.png"
                cv2.imwrite(str(Path(args.save_crops) / name), crop)
                crops_writer.writerow([name, reading.counts[i]])
    if not_found and manual is None:
        # Where a board is in view but not found (its pits cut in the wood's own colour, a cloth
        # printed with pit-sized dots, a steep camera: README "Camera placement"), say how to go on.
        print(f"omweso-cam: no board found in {not_found} image(s); if a board is in view, give its corners: "
              "--corners x,y,x,y,x,y,x,y (TL,TR,BR,BL of its top face, South at the bottom), or calibrate the rig "
              "(omweso-cam calibrate corners|markers)", file=sys.stderr)
    return 0 if failures == 0 else 1


def cmd_evaluate(args: argparse.Namespace) -> int:
    import numpy as np
    from tqdm import tqdm

    from omweso_cam.vision.calibration import CalibrationError
    from omweso_cam.vision.count import SeedModelError
    from omweso_cam.vision.evaluate import find_examples, format_summary, score_reading, summarise
    from omweso_cam.vision.pipeline import load_image

    folder = Path(args.folder)
    if not folder.is_dir():
        return _error(f"{folder} is not a folder")
    try:
        reader = _reader(args)
    except (CalibrationError, SeedModelError) as exc:
        return _error(str(exc))
    examples = find_examples(folder)
    if args.limit:
        examples = examples[: args.limit]
    if not examples:
        return _error(f"no images with ground truth (NAME.json beside NAME.png/.jpg) in {folder}")
    check_writable(args.out)
    config = reader.config
    rows = []
    for example in tqdm(examples, unit="image", disable=args.no_progress, file=sys.stderr):
        image, problem = load_image(str(example.image))
        if image is None:
            reading = reader.read(None)
        elif args.use_truth_corners and example.truth.get("corners_px"):
            h, w = image.shape[:2]
            corners = np.asarray(example.truth["corners_px"], float)
            reading = reader.at_corners(corners, (w, h), method="truth").read(image)
        else:
            reading = reader.read(image)
        row = {"image": str(example.image.relative_to(folder)), **score_reading(reading, example.truth)}
        if problem:
            row["detail"] = problem
        rows.append(row)
    fields = list(dict.fromkeys(k for row in rows for k in row))
    with open(args.out, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
    summary = summarise(rows)
    print(format_summary(summary))
    print(f"per-image results: {args.out}")
    # The summary and the reader's settings, for a machine or a later comparison (NaN: nothing to count).
    settings = Path(args.out).with_name(Path(args.out).stem + ".summary.json")
    settings.write_text(json.dumps({"summary": {k: (None if isinstance(v, float) and math.isnan(v) else v)
                                                for k, v in summary.items()},
                                    "config": config.to_dict()}, indent=1, default=str) + "\n", encoding="utf-8")
    print(f"summary and reader settings: {settings}")
    return 0


def _load_for_calibration(path: str) -> Any:
    from omweso_cam.vision.pipeline import ReaderConfig, load_image, prepare_image

    image, problem = load_image(path)
    if image is None:
        raise ValueError(f"{path}: {problem}")
    prepared, scale, problem = prepare_image(image, ReaderConfig())
    if prepared is None:
        raise ValueError(f"{path}: {problem}")
    return image, prepared, scale


def cmd_calibrate_board(args: argparse.Namespace) -> int:
    import cv2

    from omweso_cam.vision.calibration import Calibration, reference_score
    from omweso_cam.vision.count import (
        SeedModelError,
        fit_seed_model,
        load_seed_model,
        pit_crops_from_image,
    )
    from omweso_cam.vision.localise import (
        CornersError,
        find_board,
        find_markers,
        marker_sheet,
        parse_corners,
    )
    from omweso_cam.vision.pipeline import (
        BoardReader,
        count_warnings,
        cut_off_detail,
        orientation_warnings,
        pits_cut_off,
    )

    if args.method == "markers" and args.sheet:
        sheet = marker_sheet()
        Path(args.sheet).parent.mkdir(parents=True, exist_ok=True)
        if not cv2.imwrite(args.sheet, sheet):
            return _error(f"cannot write {args.sheet}")
        print(f"marker sheet written to {args.sheet} (ids 0..3 = TL, TR, BR, BL corners)")
        return 0
    if not args.image or not args.out:
        return _error("give IMAGE and --out (or --sheet PNG for the marker sheet)")
    check_writable(args.out)
    try:
        original, image, scale = _load_for_calibration(args.image)
    except ValueError as exc:
        return _error(str(exc))
    h, w = original.shape[:2]
    try:
        if args.method == "markers":
            found = find_markers(image)
            if found is None:
                return _error("four corner markers (ids 0..3) not found; print the sheet with --sheet")
        elif args.corners:
            found = parse_corners(args.corners, image_size=(w, h))
            found = type(found)(found.corners_px * scale, "manual", 1.0)
        else:
            found = find_board(image)
            if found is None:
                return _error("no board found; give --corners x,y,x,y,x,y,x,y")
    except CornersError as exc:
        return _error(str(exc))
    # The same top-down image and pit grid a live read of this frame uses.
    reader = BoardReader()
    config = reader.config
    board = reader.rectify_board(image, found)
    grid = reader.grid_for(board, found, image)
    # Every read through a rig whose picture cuts the board's pits would say so: not worth storing.
    cut = pits_cut_off(image.shape[1], image.shape[0], board, grid, config.frame_edge_of_radius)
    if cut:
        return _error(f"{cut_off_detail(cut)}; nothing written")
    model = None
    try:
        if args.seeds:
            model = load_seed_model(args.seeds)
        known = _known_counts(args)
        checked_notes: dict[str, object] | None = None
        if known is not None:
            crops = pit_crops_from_image(image, board.board_from_image, grid, config=config.count)
            checked = fit_seed_model(crops, known, config=config.count, source="known position", base=model)
            checked_notes = checked.notes
            # Only a refitted head is worth storing: an unchanged one would pin this rig to
            # today's network (the shipped one follows upgrades).
            model = checked if checked.notes.get("refitted") else model
    except (SeedModelError, ValueError) as exc:
        return _error(str(exc))
    corners = found.corners_px / scale
    calibration = Calibration(corners, (w, h), (board.image.shape[1], board.image.shape[0]), grid, model, None, found.method,
                              reference_score(image, found.corners_px))
    calibration.save(args.out)
    # Said now, while the camera can still be moved: every read through this rig would say it.
    warnings = count_warnings(image, board, grid, config) + orientation_warnings(found)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(json.dumps({"out": args.out, "method": found.method,
                      "corners_px": [[round(float(x), 1), round(float(y), 1)] for x, y in corners],
                      "pit_radius_px": round(grid.radius_px, 2), "reference_score": calibration.reference_score,
                      "seed_model": _model_summary(model) if model else None, "known_position_check": checked_notes,
                      "warnings": warnings}))
    return 0


def _add_known_board(parser: argparse.ArgumentParser) -> None:
    """``--known-board`` and ``--standard``: what the board holds now (either, not both)."""
    known = parser.add_mutually_exclusive_group()
    known.add_argument("--known-board", metavar="R4/R3/R2/R1",
                       help="the counts on the board now, as `read` prints them (4,4,4,4,4,4,4,4/0,...; a "
                            "whole position's notation will do): also calibrates seeds")
    known.add_argument("--standard", action="store_true", help="the board holds the standard set-up")


def _known_counts(args: argparse.Namespace) -> list[int] | None:
    if getattr(args, "standard", False):
        return [4] * 8 + [0] * 16 + [4] * 8
    text = getattr(args, "known_board", None)
    if not text:
        return None
    from omweso_cam.rules import NotationError, parse_board

    # The board as `read` and the rules notation write it (commas); dashes, as this option once
    # wanted, still do; a whole position ("... S 0 0:0") gives its board.
    words = text.split()
    try:
        return list(parse_board(words[0].replace("-", ",") if words else "", context=repr(text)))
    except NotationError as exc:
        raise ValueError(f"--known-board needs 4 ranks of 8 counts, like 4,4,4,4,4,4,4,4/0,...: {exc}") from exc


def cmd_calibrate_intrinsics(args: argparse.Namespace) -> int:
    from dataclasses import replace

    import numpy as np

    from omweso_cam.vision.calibration import Calibration, CalibrationError
    from omweso_cam.vision.intrinsics import IntrinsicsError, calibrate_chessboard
    from omweso_cam.vision.pipeline import load_image

    try:
        cols, rows = (int(v) for v in args.pattern.lower().split("x"))
    except ValueError:
        return _error(f"--pattern must be COLSxROWS like 9x6, got {args.pattern!r}")
    check_writable(args.out)
    images = []
    for path in args.images:
        image, problem = load_image(path)
        if image is None:
            print(f"{path}: skipped ({problem})", file=sys.stderr)
            continue
        images.append(image)
    try:
        intrinsics = calibrate_chessboard(images, (cols, rows), square_mm=args.square_mm)
    except IntrinsicsError as exc:
        return _error(str(exc))
    if args.calibration:
        try:
            calibration = replace(Calibration.load(args.calibration), intrinsics=intrinsics)
        except CalibrationError as exc:
            return _error(str(exc))
    else:
        w, h = intrinsics.image_size
        calibration = Calibration(np.array([[0, 0], [w, 0], [w, h], [0, h]], float), (w, h),
                                  intrinsics=intrinsics, method="intrinsics-only")
    calibration.save(args.out)
    print(json.dumps({"out": args.out, "rms_error_px": round(intrinsics.rms_error_px, 4)}))
    return 0


def _read_crops_csv(path: str, *, need_counts: bool) -> tuple[list[str], Any, list[int] | None, list[str]]:
    """(paths, canonical crops, counts or None, problems) of a crops CSV."""
    import numpy as np

    from omweso_cam.observation import MAX_COUNT
    from omweso_cam.vision.count import CountConfig, normalise_crop
    from omweso_cam.vision.pipeline import load_image

    base = Path(path).parent
    # utf-8-sig: a spreadsheet's "CSV UTF-8" begins with a byte-order mark, which would stick to 'path'.
    with open(path, newline="", encoding="utf-8-sig") as fh:
        try:
            reader = csv.DictReader(fh)
            if reader.fieldnames is None or "path" not in reader.fieldnames:
                raise ValueError(f"{path}: needs a header with a 'path' column (and 'count')")
            if need_counts and "count" not in reader.fieldnames:
                raise ValueError(f"{path}: needs a 'count' column")
            rows = list(reader)
        except UnicodeDecodeError:
            raise ValueError(f"{path}: not a text CSV in UTF-8 (save it as 'CSV UTF-8')") from None
    paths, crops, counts, problems = [], [], [], []
    has_counts = "count" in (rows[0] if rows else {})
    for line, row in enumerate(rows, start=2):
        image, problem = load_image(str(base / row["path"]))
        count: int | None = None
        if has_counts and (row.get("count") or "").strip():
            try:
                count = int(row["count"])
            except ValueError:
                count = -1
            if not 0 <= count <= MAX_COUNT:
                problems.append(f"line {line}: count {row['count']!r} is not a whole number 0..{MAX_COUNT}")
                continue
        if image is None:
            problems.append(f"line {line}: {row['path']}: {problem}")
            continue
        try:
            crops.append(normalise_crop(image, config=CountConfig()))
        except ValueError as exc:
            problems.append(f"line {line}: {row['path']}: {exc}")
            continue
        paths.append(row["path"])
        counts.append(count)
    all_counts = None if any(c is None for c in counts) or not counts else [int(c) for c in counts if c is not None]
    stack = np.stack(crops) if crops else np.zeros((0, CountConfig().crop_px, CountConfig().crop_px, 3), np.uint8)
    return paths, stack, all_counts, problems


def _model_summary(model: SeedModel) -> dict[str, object]:
    """What a user wants to know of a seed model (its weights stay in the file)."""
    return {"source": model.source, "examples": model.examples, "outlier_share": model.outlier_share,
            "notes": model.notes}


def cmd_calibrate_seeds(args: argparse.Namespace) -> int:
    from omweso_cam.vision.count import SeedModelError, fit_seed_model, save_seed_model

    try:
        paths, crops, counts, problems = _read_crops_csv(args.examples, need_counts=True)
    except (OSError, ValueError) as exc:
        return _error(str(exc))
    for problem in problems:
        print(f"{args.examples}: {problem}", file=sys.stderr)
    if counts is None or not paths:
        return _error("no usable labelled crops")
    check_writable(args.out)
    try:
        model = fit_seed_model(crops, counts)
    except SeedModelError as exc:
        return _error(str(exc))
    save_seed_model(model, args.out)
    print(json.dumps({"out": args.out, "examples": len(paths), "skipped": len(problems), **_model_summary(model)}))
    return 0


def cmd_count_crops(args: argparse.Namespace) -> int:
    import numpy as np

    from omweso_cam.vision.count import SeedModelError, count_crops, load_seed_model

    try:
        model = load_seed_model(args.model)
        paths, crops, counts, problems = _read_crops_csv(args.predict, need_counts=False)
    except (OSError, ValueError, SeedModelError) as exc:
        return _error(str(exc))
    for problem in problems:
        print(f"{args.predict}: {problem}", file=sys.stderr)
    if not paths:
        return _error("no readable crops")
    result = count_crops(crops, model=model)
    probs = result.probabilities
    for i, path in enumerate(paths):
        n = result.counts[i]
        record = {"path": path, "count": n, "confidence": round(float(probs[i, n]), 4),
                  "estimate": round(float(result.estimates[i]), 2)}
        if counts is not None:
            record["truth"] = counts[i]
        print(json.dumps(record) if args.json else f"{path}: {n} (p={record['confidence']})")
    if counts is not None:
        truth = np.array(counts)
        read = np.array(result.counts)
        print(f"exact {np.mean(truth == read):.1%}, within 1 {np.mean(np.abs(truth - read) <= 1):.1%} "
              f"of {len(truth)} crops", file=sys.stderr)
    return 0 if not problems else 1
