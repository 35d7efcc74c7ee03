"""Field checks of referee requests use the rules' own squares, sides and play modes."""

from __future__ import annotations

import pytest

from omweso_cam.dashboard import validate
from omweso_cam.dashboard.security import BadRequestBody
from omweso_cam.rules import MODES, Side, square_name


def test_every_square_of_the_board_is_accepted() -> None:
    assert [validate.square(square_name(i)) for i in range(32)] == [square_name(i) for i in range(32)]


@pytest.mark.parametrize("value", ["a5", "i1", "A1", "a1\n", "a10", "", 11, None, ["a1"]])
def test_anything_else_is_not_a_square(value: object) -> None:
    with pytest.raises(BadRequestBody, match=r"square must be a1\.\.h4"):
        validate.square(value)


def test_modes_and_sides_are_the_rules() -> None:
    assert validate.MODES is MODES
    assert validate.SIDES == tuple(side.value for side in Side) == ("S", "N")
    with pytest.raises(BadRequestBody, match="mode must be one of classical, contract, blitz"):
        validate.choice("rapid", validate.MODES, "mode")
