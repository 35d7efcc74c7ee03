"""Evaluate: compare readings with ground truth (per image and in summary), for `omweso-cam evaluate` and benchmarks.

Ground truth is a JSON file beside each image (``NAME.json`` for ``NAME.png``)
holding at least ``status`` (``ok``/``occluded``/``no_board``) and, for boards,
``counts`` (32, image order) and ``corners_px`` (TL, TR, BR, BL).
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from omweso_cam.vision.frames import is_image_file
from omweso_cam.vision.localise import corner_error
from omweso_cam.vision.pipeline import BLUR_WARNING, FOCUS_WARNING, LIGHT_WARNING, Reading

STAGES = ("prepare", "localise", "rectify", "grid", "count", "total")


@dataclass(frozen=True)
class Example:
    image: Path
    truth: dict[str, Any]


def find_examples(folder: Path) -> list[Example]:
    """Every image in ``folder`` (recursively) that has a truth JSON beside it, sorted."""
    examples = []
    for path in sorted(folder.rglob("*")):
        if not is_image_file(path):
            continue
        truth_path = path.with_suffix(".json")
        if not truth_path.exists():
            continue
        try:
            truth = json.loads(truth_path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        if isinstance(truth, dict) and "status" in truth:
            examples.append(Example(path, truth))
    return examples


def score_reading(reading: Reading, truth: dict[str, Any]) -> dict[str, Any]:
    """One CSV row: status, corner error, largest pit-centre error (pit radii), count errors by heap size
    (exact, within one, read too high, too low: a board whose misreads all go one way is seen by its
    seeds' look, not by chance), the reader's warning about its counts (``unreliable``: a small,
    blurred or poorly lit board), stage timings."""
    row: dict[str, Any] = {"truth_status": truth.get("status"), "status": reading.status,
                           "unreliable": reading.observation.unreliable}
    has_board = truth.get("status") != "no_board" and truth.get("corners_px") is not None
    row["board_expected"] = has_board
    row["board_found"] = reading.corners_px is not None
    row["corner_error_frac"] = ""
    if has_board and reading.corners_px is not None:
        row["corner_error_frac"] = round(corner_error(reading.corners_px, truth["corners_px"]), 5)
    row["pit_error_max_radii"] = ""
    centres = reading.pit_centers_px
    if has_board and centres is not None and truth.get("pit_centers_px") and truth.get("pit_radius_px"):
        true_p = np.asarray(truth["pit_centers_px"], np.float64)
        radius = np.broadcast_to(np.asarray(truth["pit_radius_px"], np.float64), (len(true_p),))
        row["pit_error_max_radii"] = round(float(np.max(np.linalg.norm(centres - true_p, axis=1) / radius)), 4)
    counts = truth.get("counts")
    row.update(pits_scored=0, pits_wrong=0, pits_off_by_more_than_1=0, abs_error_sum=0)
    for lo, hi in ((0, 6), (7, 12), (13, 64)):
        row[f"pits_{lo}_{hi}"] = 0
        row[f"exact_{lo}_{hi}"] = 0
        row[f"within1_{lo}_{hi}"] = 0
        row[f"high_{lo}_{hi}"] = 0  # read too many seeds (a reflection or shadow taken for a seed)
        row[f"low_{lo}_{hi}"] = 0  # too few (seeds hidden or not told from the pit)
    if counts is not None and reading.counts is not None and truth.get("status") == "ok":
        for true_n, read_n in zip(counts, reading.counts, strict=True):
            signed = int(read_n) - int(true_n)
            diff = abs(signed)
            row["pits_scored"] += 1
            row["pits_wrong"] += diff > 0
            row["pits_off_by_more_than_1"] += diff > 1
            row["abs_error_sum"] += diff
            for lo, hi in ((0, 6), (7, 12), (13, 64)):
                if lo <= true_n <= hi:
                    row[f"pits_{lo}_{hi}"] += 1
                    row[f"exact_{lo}_{hi}"] += diff == 0
                    row[f"within1_{lo}_{hi}"] += diff <= 1
                    row[f"high_{lo}_{hi}"] += signed > 0
                    row[f"low_{lo}_{hi}"] += signed < 0
    for stage in STAGES:
        row[f"ms_{stage}"] = reading.timings_ms.get(stage, "")
    return row


def _pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def summarise(rows: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Totals over per-image rows (see :func:`score_reading`)."""
    rows = list(rows)
    out: dict[str, Any] = {"images": len(rows)}
    boards = [r for r in rows if r["board_expected"]]
    out["boards"] = len(boards)
    out["boards_found"] = sum(1 for r in boards if r["board_found"])
    errors = [float(r["corner_error_frac"]) for r in boards if r["corner_error_frac"] != ""]
    out["corner_error_median"] = statistics.median(errors) if errors else float("nan")
    out["corner_error_max"] = max(errors) if errors else float("nan")
    out["corners_within_1pct"] = sum(1 for e in errors if e <= 0.01)
    out["corners_within_half_pct"] = sum(1 for e in errors if e <= 0.005)
    pit_errors = [float(r["pit_error_max_radii"]) for r in boards if r.get("pit_error_max_radii", "") != ""]
    out["pit_error_max_median"] = statistics.median(pit_errors) if pit_errors else float("nan")
    out["pits_all_within_quarter_radius"] = sum(1 for e in pit_errors if e <= 0.25)
    out["pit_error_boards"] = len(pit_errors)
    empty = [r for r in rows if not r["board_expected"]]
    out["no_board_images"] = len(empty)
    out["no_board_said"] = sum(1 for r in empty if r["status"] == "no_board")
    occluded = [r for r in rows if r["truth_status"] == "occluded"]
    out["occluded_images"] = len(occluded)
    out["occluded_said"] = sum(1 for r in occluded if r["status"] == "occluded")
    clear = [r for r in rows if r["truth_status"] == "ok"]
    out["clear_images"] = len(clear)
    out["clear_read_ok"] = sum(1 for r in clear if r["status"] == "ok")
    for lo, hi in ((0, 6), (7, 12), (13, 64)):
        n = sum(r[f"pits_{lo}_{hi}"] for r in rows)
        out[f"pits_{lo}_{hi}"] = n
        out[f"exact_{lo}_{hi}"] = sum(r[f"exact_{lo}_{hi}"] for r in rows) / n if n else float("nan")
        out[f"within1_{lo}_{hi}"] = sum(r[f"within1_{lo}_{hi}"] for r in rows) / n if n else float("nan")
        out[f"high_{lo}_{hi}"] = sum(r[f"high_{lo}_{hi}"] for r in rows)
        out[f"low_{lo}_{hi}"] = sum(r[f"low_{lo}_{hi}"] for r in rows)
    # The reader's warnings should fall on the boards it reads worst: 0-6 exact on each side.
    read = [r for r in clear if r["status"] == "ok"]
    for name, part in (("warned", [r for r in read if r.get("unreliable")]),
                       ("unwarned", [r for r in read if not r.get("unreliable")])):
        n = sum(r["pits_0_6"] for r in part)
        out[f"{name}_boards"] = len(part)
        out[f"{name}_exact_0_6"] = sum(r["exact_0_6"] for r in part) / n if n else float("nan")
    for key, warning in (("warned_blurred", BLUR_WARNING), ("warned_out_of_focus", FOCUS_WARNING),
                         ("warned_poor_light", LIGHT_WARNING)):
        out[key] = sum(1 for r in read if warning in str(r.get("unreliable", "")))
    scored = sum(r["pits_scored"] for r in rows)
    out["pits_scored"] = scored
    out["boards_scored"] = sum(1 for r in rows if r["pits_scored"])
    out["boards_exact"] = sum(1 for r in rows if r["pits_scored"] and not r["pits_wrong"])
    out["pits_exact"] = (scored - sum(r["pits_wrong"] for r in rows)) / scored if scored else float("nan")
    for stage in STAGES:
        values = [float(r[f"ms_{stage}"]) for r in rows if r[f"ms_{stage}"] != ""]
        out[f"ms_{stage}_median"] = _pct(values, 50)
        out[f"ms_{stage}_p95"] = _pct(values, 95)
    return out


def shown(value: float, spec: str = ".1%") -> str:
    """A summary's number as printed (a share as a percentage by default); "n/a" where there was
    nothing to count (NaN)."""
    return "n/a" if math.isnan(value) else format(value, spec)


def format_summary(summary: dict[str, Any]) -> str:
    """Human-readable lines of a summary."""
    s = summary
    lines = [
        f"images {s['images']}: boards found {s['boards_found']}/{s['boards']}, "
        f"corners within 1% of diagonal {s['corners_within_1pct']}/{s['boards_found']} "
        f"(median {shown(s['corner_error_median'], '.4f')}, max {shown(s['corner_error_max'], '.4f')}), within 0.5% "
        f"{s['corners_within_half_pct']}/{s['boards_found']}",
        f"pit centres: largest error per board median {shown(s['pit_error_max_median'], '.3f')} pit radii; every pit within "
        f"0.25 radius on {s['pits_all_within_quarter_radius']}/{s['pit_error_boards']} boards",
        f"no-board images said no_board {s['no_board_said']}/{s['no_board_images']}; "
        f"occluded said occluded {s['occluded_said']}/{s['occluded_images']}; "
        f"clear boards read ok {s['clear_read_ok']}/{s['clear_images']}",
    ]
    lines.append(f"counts the reader warned about (small, blurred, out-of-focus or poorly lit board): {s['warned_boards']}/"
                 f"{s['clear_read_ok']} boards read ({s['warned_blurred']} blurred by motion, {s['warned_out_of_focus']} "
                 f"out of focus, {s['warned_poor_light']} in poor light), 0-6 exact {shown(s['warned_exact_0_6'])} on them, "
                 f"{shown(s['unwarned_exact_0_6'])} on the others")
    lines.append(f"boards read without a pit wrong: {s['boards_exact']}/{s['boards_scored']}")
    for lo, hi in ((0, 6), (7, 12), (13, 64)):
        lines.append(f"pits holding {lo}-{hi}: {s[f'pits_{lo}_{hi}']}, exact {shown(s[f'exact_{lo}_{hi}'])}, "
                     f"within 1 {shown(s[f'within1_{lo}_{hi}'])}; read too high {s[f'high_{lo}_{hi}']}, "
                     f"too low {s[f'low_{lo}_{hi}']}")
    lines.append("ms median/p95: " + ", ".join(
        f"{stage} {shown(s[f'ms_{stage}_median'], '.1f')}/{shown(s[f'ms_{stage}_p95'], '.1f')}" for stage in STAGES))
    return "\n".join(lines)
