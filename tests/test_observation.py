from __future__ import annotations

import itertools
import random

import pytest

from omweso_cam.observation import MAX_COUNT, STABLE, Observation, fit_total


def test_from_counts_peaks_at_the_counts() -> None:
    counts = [4] * 8 + [0] * 16 + [4] * 8
    obs = Observation.from_counts(counts)
    assert obs.is_stable and obs.counts() == tuple(counts)


def test_stable_observation_needs_likelihoods() -> None:
    with pytest.raises(ValueError, match="needs log_likelihoods"):
        Observation(0, 0.0, STABLE)


def test_shape_is_checked_with_a_clear_message() -> None:
    with pytest.raises(ValueError, match="expected 32 pits"):
        Observation(0, 0.0, STABLE, ((0.0,) * (MAX_COUNT + 1),) * 31)
    with pytest.raises(ValueError, match="unknown observation status"):
        Observation(0, 0.0, "asleep")


def _brute_force(rows: list[list[float]], total: int, cap: int, window: int | None) -> tuple[float, tuple[int, ...]] | None:
    found = None
    for counts in itertools.product(range(len(rows[0])), repeat=len(rows)):
        if sum(counts) != total or max(counts) > cap:
            continue
        if window is not None and any(abs(n - row.index(max(row))) > window for n, row in zip(counts, rows, strict=True)):
            continue
        score = sum(row[n] for n, row in zip(counts, rows, strict=True))
        if found is None or score > found[0] + 1e-9:
            found = (score, counts)
    return found


@pytest.mark.parametrize("seed", range(40))
def test_fit_total_finds_the_most_likely_counts_holding_the_total(seed: int) -> None:
    rnd = random.Random(seed)
    rows = [[rnd.gauss(0.0, 2.0) for _ in range(7)] for _ in range(4)]
    total, cap = rnd.randint(0, 20), rnd.choice([6, 4, 3])
    window = rnd.choice([None, 1, 2])
    fit = fit_total(rows, total, max_per_pit=cap, window=window)
    best = _brute_force(rows, total, cap, window)
    if best is None:
        assert fit is None
    else:
        assert fit is not None
        assert fit[1] == pytest.approx(best[0])
        assert sum(fit[0]) == total and fit[1] == pytest.approx(sum(row[n] for n, row in zip(fit[0], rows, strict=True)))


def test_fit_total_moves_the_least_sure_pit() -> None:
    counts = [4] * 8 + [0] * 16 + [4] * 8
    rows = [list(row) for row in Observation.from_counts(counts, sigma=0.15).log_likelihoods]
    rows[5] = list(Observation.from_counts([3] * 32, sigma=0.6).log_likelihoods[0])  # a 4 read as an unsure 3
    assert sum(Observation(0, 0.0, STABLE, tuple(map(tuple, rows))).counts() or ()) == 63
    fit = fit_total(rows, 64)
    assert fit is not None and fit[0] == tuple(counts)


def test_fit_total_breaks_ties_towards_fewer_seeds_in_the_earlier_pits() -> None:
    flat = [[0.0] * 3 for _ in range(3)]
    assert fit_total(flat, 2) == ((0, 0, 2), 0.0)
    assert fit_total(flat, 7) is None


@pytest.mark.parametrize("seed", range(40))
def test_fit_total_within_a_cost_gives_the_same_board_or_none_when_dearer(seed: int) -> None:
    rnd = random.Random(1000 + seed)
    rows = [[rnd.gauss(0.0, 3.0) for _ in range(9)] for _ in range(12)]
    total, window = rnd.randint(10, 60), rnd.choice([None, 2, 3])
    max_cost = rnd.choice([0.5, 3.0, 8.0, 30.0])
    full = fit_total(rows, total, window=window)
    cut = fit_total(rows, total, window=window, max_cost=max_cost)
    cost = None if full is None else sum(max(row) for row in rows) - full[1]
    if cost is None or cost > max_cost + 1e-9:
        assert cut is None
    else:
        assert cut == full
