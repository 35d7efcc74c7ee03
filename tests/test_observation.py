from __future__ import annotations

import pytest

from omweso_cam.observation import MAX_COUNT, STABLE, Observation


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
