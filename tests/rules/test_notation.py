"""Squares, circuits, position and move notation (RULES.md §1-2)."""

from __future__ import annotations

import pytest

from omweso_cam.rules import (
    CIRCUIT,
    Move,
    NotationError,
    Position,
    PositionError,
    Side,
    board_notation,
    circuit_index,
    mirror_square,
    owner,
    square_index,
    square_name,
)

STANDARD = "4,4,4,4,4,4,4,4/0,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0/4,4,4,4,4,4,4,4 S 0 0:0"


def test_square_index_is_image_order() -> None:
    assert square_index("a4") == 0
    assert square_index("h4") == 7
    assert square_index("a3") == 8
    assert square_index("a1") == 24
    assert square_index("h1") == 31
    assert [square_name(i) for i in range(32)][:9] == ["a4", "b4", "c4", "d4", "e4", "f4", "g4", "h4", "a3"]
    for i in range(32):
        assert square_index(square_name(i)) == i


@pytest.mark.parametrize("bad", ["i1", "a5", "a0", "A1", "a", "a11", "", "1a"])
def test_bad_square(bad: str) -> None:
    with pytest.raises(NotationError, match="bad square"):
        square_index(bad)


def test_circuits_follow_the_rule_book() -> None:
    # South 0..7 = a1..h1, 8..15 = h2..a2; North 0..7 = h4..a4, 8..15 = a3..h3.
    south = [square_name(i) for i in CIRCUIT[Side.SOUTH]]
    north = [square_name(i) for i in CIRCUIT[Side.NORTH]]
    assert south == ["a1", "b1", "c1", "d1", "e1", "f1", "g1", "h1",
                     "h2", "g2", "f2", "e2", "d2", "c2", "b2", "a2"]
    assert north == ["h4", "g4", "f4", "e4", "d4", "c4", "b4", "a4",
                     "a3", "b3", "c3", "d3", "e3", "f3", "g3", "h3"]
    # Reverse pits {0, 1, 14, 15}: South a1, b1, b2, a2; North h4, g4, g3, h3.
    assert {south[i] for i in (0, 1, 14, 15)} == {"a1", "b1", "a2", "b2"}
    assert {north[i] for i in (0, 1, 14, 15)} == {"h4", "g4", "h3", "g3"}
    assert owner("c2") is Side.SOUTH and owner("c3") is Side.NORTH
    assert circuit_index("h2") == 8 and circuit_index("a3") == 8
    assert mirror_square("f1") == "c4" and mirror_square("a2") == "h3"


def test_standard_position_round_trips() -> None:
    position = Position.standard()
    assert position.notation() == STANDARD
    assert Position.from_notation(STANDARD) == position
    assert position.notation(short=True) == STANDARD.rsplit(" ", 2)[0]
    assert repr(position) == f"Position.from_notation({STANDARD!r})"
    assert eval(repr(position)) == position  # repr pastes back into a test
    assert position["c1"] == 4 and position["c2"] == 0
    assert position.rows()[3] == (4,) * 8
    assert position.seeds(Side.SOUTH) == position.seeds(Side.NORTH) == 32
    assert position.ply == 0 and position.captures == (0, 0)


def test_short_form_means_mid_game() -> None:
    position = Position.from_notation(STANDARD.rsplit(" ", 2)[0])
    assert (position.ply, position.captures) == (2, (1, 1))
    assert position.side_to_move is Side.SOUTH


def test_mirror_turns_the_board() -> None:
    position = Position.from_notation(
        "2,2,2,2,4,4,4,2/1,1,1,1,1,1,1,3/2,2,4,4,4,0,0,2/2,2,2,2,2,3,1,0 S 7 3:1"
    )
    mirrored = position.mirror()
    assert mirrored.notation() == "0,1,3,2,2,2,2,2/2,0,0,4,4,4,2,2/3,1,1,1,1,1,1,1/2,4,4,4,2,2,2,2 N 7 1:3"
    assert mirrored.mirror() == position


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("4,4,4,4,4,4,4,4/0,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0 S", "expected 4 ranks"),
        ("4,4,4,4,4,4,4/0,0,0,0,0,0,0,0,4/0,0,0,0,0,0,0,0/4,4,4,4,4,4,4,4 S", "rank 4 has 7 pits"),
        ("4,4,4,4,4,4,4,4/0,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0/4,4,4,4,4,4,4,-4 S", "not a count"),
        ("4,4,4,4,4,4,4,4/0,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0/4,4,4,4,4,4,4,5 S", "64 seeds, got 65"),
        ("4,4,4,4,4,4,4,4/0,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0/4,4,4,4,4,4,4,4 E", "unknown side 'E'"),
        ("4,4,4,4,4,4,4,4/0,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0/4,4,4,4,4,4,4,4 S 0", "expected"),
        ("4,4,4,4,4,4,4,4/0,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0/4,4,4,4,4,4,4,4 S x 0:0", "ply 'x'"),
        ("4,4,4,4,4,4,4,4/0,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0/4,4,4,4,4,4,4,4 S 0 00", "captures '00'"),
        ("", "expected"),
    ],
)
def test_bad_positions_name_the_problem_and_quote_the_text(text: str, message: str) -> None:
    with pytest.raises(NotationError) as info:
        Position.from_notation(text)
    assert message in str(info.value)
    assert repr(text) in str(info.value)


def test_position_constructor_checks_invariants() -> None:
    with pytest.raises(PositionError, match="32 pits"):
        Position((2,) * 31, Side.SOUTH)
    with pytest.raises(PositionError, match="64 seeds"):
        Position((1,) * 32, Side.SOUTH)
    with pytest.raises(PositionError, match="negative"):
        Position((-1, 3) + (2,) * 30, Side.SOUTH)


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("h1", "h1"),
        ("a1(cw)", "a1(cw)"),
        ("a2(cw,cw)", "a2(cw,cw)"),
        ("f2(ccw,cw)", "f2(ccw,cw)"),
        ("e1(ccw)", "e1"),
        ("e1(ccw,ccw)", "e1"),
        ("a2(cw,ccw)", "a2(cw)"),
        ("c1(2-1)", "c1(2-1)"),
        (" d3 ", "d3"),
    ],
)
def test_move_notation_is_canonical(text: str, canonical: str) -> None:
    move = Move.parse(text)
    assert str(move) == canonical
    assert Move.parse(str(move)) == move
    assert eval(repr(move)) == move


def test_move_fields() -> None:
    move = Move.parse("f2(ccw,cw)")
    assert (move.start, move.choices, move.two_one) == ("f2", ("ccw", "cw"), False)
    assert Move.parse("c1(2-1)").two_one
    assert Move("a2", ("ccw",)) == Move("a2")
    assert Move.parse("f1").mirror() == Move.parse("c4")


@pytest.mark.parametrize("bad", ["", "z9", "a1(", "a1(left)", "a1(cw;cw)", "a1()", "a1(2-1,cw)", "11"])
def test_bad_moves(bad: str) -> None:
    with pytest.raises(NotationError):
        Move.parse(bad)


def test_move_from_the_wrong_side_with_a_position() -> None:
    position = Position.standard()
    assert Move.parse("a4") == Move("a4")  # syntax alone is fine
    with pytest.raises(NotationError, match="a4 is not a pit of South"):
        Move.parse("a4", position)


def test_position_accepts_any_integer_type_but_not_fractions() -> None:
    class Count(int):
        pass

    position = Position(tuple(Count(n) for n in Position.standard().board), Side.SOUTH, 0, (0, 0))
    assert position == Position.standard()
    assert all(type(n) is int for n in position.board)
    with pytest.raises(PositionError, match="whole numbers"):
        Position((2.0,) * 32, Side.SOUTH)


def test_board_notation_is_the_board_part_of_a_position() -> None:
    position = Position.standard()
    assert board_notation(position.board) == position.notation(short=True).split()[0]
    misread = (1,) * 31 + (9,)  # 40 seeds: not a position, still written the same way
    assert board_notation(misread) == "1,1,1,1,1,1,1,1/1,1,1,1,1,1,1,1/1,1,1,1,1,1,1,1/1,1,1,1,1,1,1,9"
    with pytest.raises(ValueError, match="32 pits"):
        board_notation((4,) * 16)
