"""The path-traced boards (``benchmarks/traced_boards.py``): the scene geometry its truth rests on.

Rendering needs Blender (``scripts/setup-traced``), which the suite does not install; what is
tested here is the part that decides the truth without it: where the pits are, in the reader's
order, and where the dropped seeds come to rest. The seeds are from the renderer's own
development set (9,000,001+), not the committed benchmark's (9,100,001+).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.vision.benchmark_scripts import load_script


@pytest.fixture(scope="module")
def traced():
    return load_script("traced_boards")


def test_a_plan_is_drawn_from_its_seed_alone(traced):
    assert traced.plan(9_000_003) == traced.plan(9_000_003)
    assert traced.plan(9_000_003) != traced.plan(9_000_004)
    p = traced.plan(9_000_003)
    assert len(p["counts"]) == 32 and sum(p["counts"]) == 64


def test_pits_are_in_the_readers_order(traced):
    centres = traced.pit_centres_mm(traced.plan(9_000_005)).reshape(4, 8, 2)
    assert np.all(np.diff(centres[:, :, 0], axis=1) > 0), "a to h runs left to right in every row"
    assert np.all(np.diff(centres[:, :, 1], axis=0) < 0), "row 4 (far from South) first, row 1 last"
    w, h = traced.board_size_mm(traced.plan(9_000_005))
    assert np.all(np.abs(centres[..., 0]) < w / 2) and np.all(np.abs(centres[..., 1]) < h / 2)


def test_a_gap_between_the_halves_parts_rows_two_and_three(traced):
    seed = next(s for s in range(9_000_001, 9_000_100) if traced.plan(s)["gap_mm"] > 0)
    p = traced.plan(seed)
    ys = traced.pit_centres_mm(p).reshape(4, 8, 2)[:, 0, 1]
    steps = -np.diff(ys)  # row 4 -> 3, 3 -> 2, 2 -> 1
    assert steps[1] == pytest.approx(p["pitch_y_mm"] + p["gap_mm"])
    assert steps[0] == pytest.approx(p["pitch_y_mm"]) and steps[2] == pytest.approx(p["pitch_y_mm"])


def test_dropped_seeds_rest_in_their_pits_without_passing_through_each_other(traced):
    p = dict(traced.plan(9_000_011), counts=[0, 1, 2, 4, 7, 12, 20, 18] + [0] * 24)
    rest = np.array(traced.seed_positions(p, np.random.default_rng(1)))
    assert len(rest) == 64
    centres = traced.pit_centres_mm(p)
    radius = p["seed_radius_of_pit"] * p["pit_radius_mm"] * (1 + math.sqrt(p["seed_elongation"])) / 2
    height = p["seed_radius_of_pit"] * p["pit_radius_mm"] * p["seed_flatness"]
    start = 0
    for pit, n in enumerate(p["counts"]):
        seeds = rest[start:start + n]
        start += n
        if not n:
            continue
        assert np.all(np.linalg.norm(seeds[:, :2] - centres[pit], axis=1) < p["pit_radius_mm"])
        # every seed's underside is at or above the bowl under its centre
        below = traced._bowl(np.linalg.norm(seeds[:, :2] - centres[pit], axis=1), p)
        assert np.all(seeds[:, 2] - height >= below - 1e-9)
        # seeds as the drop rule sees them (spheres, heights scaled) never overlap
        scaled = seeds * np.array([1.0, 1.0, radius / height])
        gaps = np.linalg.norm(scaled[:, None] - scaled[None], axis=2) + np.eye(n) * 1e9
        assert gaps.min() >= 2 * radius - 1e-6
    assert rest[:, 2].max() > height, "a heap of 20 stands above the board's top"
