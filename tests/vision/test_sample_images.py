"""The reader on the committed sample stills (sample_images/stills, with truth JSON): the benchmark's first row as a test.

Thresholds sit just under what ``benchmarks/vision_bench.py`` measured with the shipped
model, unsure pits read in eight views, each board's counts brought to its 64 seeds (boards
found 56/56, no-board 6/6, 22 of 38 clear boards read without a pit wrong, pits of 0-6 seeds
95.6% exact and 98.2% within one, 7-12 46.9% and 87.5% of 32 pits); they guard against
regressions, the README quotes the measured numbers.
"""

from __future__ import annotations

import pytest

from omweso_cam.resources import samples_dir
from omweso_cam.vision.evaluate import find_examples, score_reading, summarise
from omweso_cam.vision.pipeline import BoardReader, load_image


def _summary(folder: str, images: int) -> dict:
    """The benchmark's summary of the reader on ``sample_images/<folder>`` (which must hold ``images`` images)."""
    examples = find_examples(samples_dir() / folder)
    assert len(examples) == images, f"sample_images/{folder} is incomplete"
    reader = BoardReader()
    rows = []
    for example in examples:
        image, problem = load_image(str(example.image))
        assert image is not None, problem
        rows.append(score_reading(reader.read(image), example.truth))
    return summarise(rows)


@pytest.fixture(scope="module")
def summary() -> dict:
    return _summary("stills", 62)


def test_every_board_is_found_and_every_empty_table_said(summary: dict) -> None:
    assert summary["boards_found"] == summary["boards"] == 56
    assert summary["no_board_said"] == summary["no_board_images"] == 6


def test_small_counts_are_read(summary: dict) -> None:
    assert summary["exact_0_6"] >= 0.94
    assert summary["within1_0_6"] >= 0.975


def test_heaps_are_mostly_within_one(summary: dict) -> None:
    assert summary["within1_7_12"] >= 0.8
    assert summary["exact_7_12"] >= 0.4


def test_most_clear_boards_are_read_without_a_pit_wrong(summary: dict) -> None:
    # 12 of 38 before the counts were brought to the board's 64 seeds (ReaderConfig.board_seeds).
    assert summary["boards_exact"] >= 20


@pytest.fixture(scope="module")
def traced() -> dict:
    return _summary("traced", 32)


# The path-traced boards (sample_images/traced, benchmarks/traced_boards.py): a renderer the reader
# was never built, trained or tuned on. Measured on 2026-12-04 with the shipped reader: boards found
# 30/30, tables 2/2, every pit within a quarter radius on 28 of 30; counts far short of the stills
# (0-6 exact 70.5%, within one 91.8%): empty varnished bowls mirror the lamp and read as one seed.
# These bounds guard what works; the README quotes the counts.


def test_every_path_traced_board_is_found_and_its_pits_placed(traced: dict) -> None:
    assert traced["boards_found"] == traced["boards"] == 30
    assert traced["no_board_said"] == traced["no_board_images"] == 2
    assert traced["pits_all_within_quarter_radius"] >= 27


def test_path_traced_counts_stay_at_least_where_they_were_measured(traced: dict) -> None:
    assert traced["exact_0_6"] >= 0.69
    assert traced["within1_0_6"] >= 0.90
