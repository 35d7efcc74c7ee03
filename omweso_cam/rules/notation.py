"""Values of the game and their text forms: squares, sides, positions, moves (RULES.md §1-2).

Everything here is immutable and round-trips through text:
``Position.from_notation(p.notation()) == p`` and ``Move.parse(str(m)) == m``.
The board is always held in *image order*: index i (0..31) is file "abcdefgh"[i % 8],
rank 4 - i // 8, i.e. the notation ``R4/R3/R2/R1`` read left to right, top to bottom.
"""

from __future__ import annotations

import enum
import operator
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

FILES = "abcdefgh"
PITS = 32
PITS_PER_SIDE = 16
TOTAL_SEEDS = 64
CW = "cw"
CCW = "ccw"

#: Short-form positions (board and side only) are mid-game positions: RULES.md §2.
SHORT_FORM_PLY = 2
SHORT_FORM_CAPTURES = (1, 1)


_new = object.__new__
_set = object.__setattr__


class NotationError(ValueError):
    """Text that is not valid position or move notation; the message quotes the text."""


class PositionError(ValueError):
    """A board that cannot be an Omweso position (wrong size, negative counts, not 64 seeds)."""


class Side(enum.Enum):
    """A player's side of the board; South owns ranks 1-2, North ranks 3-4."""

    SOUTH = "S"
    NORTH = "N"

    @property
    def other(self) -> Side:
        """The opponent's side."""
        return Side.NORTH if self is Side.SOUTH else Side.SOUTH

    @property
    def index(self) -> int:
        """0 for South, 1 for North: the index into ``Position.captures``."""
        return 0 if self is Side.SOUTH else 1

    @classmethod
    def parse(cls, text: str) -> Side:
        """``"S"`` or ``"N"`` (case-sensitive, as in the notation)."""
        for side in cls:
            if side.value == text:
                return side
        raise NotationError(f"unknown side {text!r}: expected 'S' or 'N'")


def square_index(name: str) -> int:
    """Image-order index (0..31) of a square name such as ``"c2"``."""
    if (
        not isinstance(name, str)
        or len(name) != 2
        or name[0] not in FILES
        or name[1] not in "1234"
    ):
        raise NotationError(f"bad square {name!r}: expected a file a-h and a rank 1-4, e.g. 'c2'")
    return (4 - int(name[1])) * 8 + FILES.index(name[0])


def square_name(index: int) -> str:
    """Square name of an image-order index (0..31)."""
    if not 0 <= index < PITS:
        raise NotationError(f"bad pit index {index!r}: expected 0..31")
    return f"{FILES[index % 8]}{4 - index // 8}"


def parse_board(text: str, *, context: str | None = None) -> tuple[int, ...]:
    """The 32 counts (image order) of ``R4/R3/R2/R1`` text as :func:`board_notation` writes it.

    Any counts are accepted, not only a valid position's. Raises NotationError, its message
    led by ``context`` (default: "bad board 'TEXT'").
    """
    where = context or f"bad board {text!r}"
    ranks = text.split("/")
    if len(ranks) != 4:
        raise NotationError(f"{where}: expected 4 ranks separated by '/', got {len(ranks)}")
    board: list[int] = []
    for number, rank in zip((4, 3, 2, 1), ranks, strict=True):
        cells = rank.split(",")
        if len(cells) != 8:
            raise NotationError(f"{where}: rank {number} has {len(cells)} pits, expected 8")
        for cell in cells:
            if not re.fullmatch(r"\d+", cell):
                raise NotationError(f"{where}: {cell!r} in rank {number} is not a count >= 0")
            board.append(int(cell))
    return tuple(board)


def board_notation(board: Sequence[int]) -> str:
    """The ``R4/R3/R2/R1`` text of 32 counts in image order (the board part of a position).

    Any counts are accepted (a misread board, the board during a move), not only a valid
    position's; raises PositionError unless there are 32.
    """
    if len(board) != PITS:
        raise PositionError(f"a board has 32 pits, got {len(board)}")
    return "/".join(",".join(map(str, board[r * 8 : r * 8 + 8])) for r in range(4))


def _circuit_to_image(side: Side, circuit: int) -> int:
    """Image index of a side's circuit pit (RULES.md §1, circuit index)."""
    if side is Side.SOUTH:
        file, rank = (circuit, 1) if circuit < 8 else (15 - circuit, 2)
    else:
        file, rank = (7 - circuit, 4) if circuit < 8 else (circuit - 8, 3)
    return (4 - rank) * 8 + file


#: ``CIRCUIT[side][c]`` is the image index of ``side``'s circuit pit c (0..15).
CIRCUIT: dict[Side, tuple[int, ...]] = {
    side: tuple(_circuit_to_image(side, c) for c in range(PITS_PER_SIDE)) for side in Side
}
#: ``CIRCUIT_OF[i]`` is the (owner, circuit index) of image index i.
CIRCUIT_OF: tuple[tuple[Side, int], ...] = tuple(
    next((side, c) for side in Side for c in range(PITS_PER_SIDE) if CIRCUIT[side][c] == i)
    for i in range(PITS)
)


def owner(square: str) -> Side:
    """The side owning a square (ranks 1-2 South, 3-4 North)."""
    return CIRCUIT_OF[square_index(square)][0]


def circuit_index(square: str) -> int:
    """A square's index on its owner's counter-clockwise circuit (0..15)."""
    return CIRCUIT_OF[square_index(square)][1]


def mirror_square(square: str) -> str:
    """The square seen from the other side of the board (the board turned 180 degrees)."""
    return square_name(PITS - 1 - square_index(square))


@dataclass(frozen=True)
class Position:
    """A game position: 32 pit counts in image order, side to move, ply and capture counts.

    ``captures`` counts, for South and North, how many of their moves so far contained a
    capture (it drives the two-one opening and the ``two_captures_first`` result).
    The defaults for ``ply`` and ``captures`` are those of the short notation form: a
    mid-game position (ply 2, captures 1:1).
    """

    board: tuple[int, ...]
    side_to_move: Side
    ply: int = SHORT_FORM_PLY
    captures: tuple[int, int] = SHORT_FORM_CAPTURES

    def __post_init__(self) -> None:
        board = self.board
        if not isinstance(board, tuple) or any(type(n) is not int for n in board):
            try:  # accept any integer type (e.g. numpy counts), never fractions
                board = tuple(operator.index(n) for n in board)
            except TypeError:
                raise PositionError(f"pit counts must be whole numbers, got {board!r}") from None
            object.__setattr__(self, "board", board)
        if len(board) != PITS:
            raise PositionError(f"a board has 32 pits, got {len(board)}")
        if min(board) < 0:
            raise PositionError(f"negative seed count in {list(board)}")
        if sum(board) != TOTAL_SEEDS:
            raise PositionError(f"a board holds 64 seeds, got {sum(board)}")
        if not isinstance(self.side_to_move, Side):
            raise PositionError(f"side_to_move must be a Side, got {self.side_to_move!r}")
        if self.ply < 0:
            raise PositionError(f"ply must be >= 0, got {self.ply}")
        if len(self.captures) != 2 or min(self.captures) < 0:
            raise PositionError(f"captures must be two counts >= 0, got {self.captures!r}")
        if not isinstance(self.captures, tuple):
            object.__setattr__(self, "captures", tuple(self.captures))

    @classmethod
    def _trusted(cls, board: tuple[int, ...], side: Side, ply: int, captures: tuple[int, int]) -> Position:
        """Build without validation: only for the engine, whose moves keep every invariant."""
        position = _new(cls)
        _set(position, "board", board)
        _set(position, "side_to_move", side)
        _set(position, "ply", ply)
        _set(position, "captures", captures)
        return position

    # -- text -------------------------------------------------------------------------
    @classmethod
    def from_notation(cls, text: str) -> Position:
        """Parse ``R4/R3/R2/R1 SIDE [PLY CAPS]`` (RULES.md §2); raises NotationError."""
        if not isinstance(text, str):
            raise NotationError(f"position notation must be text, got {text!r}")
        parts = text.split()
        if len(parts) not in (2, 4):
            raise NotationError(
                f"bad position {text!r}: expected 'R4/R3/R2/R1 SIDE' or 'R4/R3/R2/R1 SIDE PLY S:N'"
            )
        board = parse_board(parts[0], context=f"bad position {text!r}")
        try:
            side = Side.parse(parts[1])
        except NotationError as exc:
            raise NotationError(f"bad position {text!r}: {exc}") from None
        ply, captures = SHORT_FORM_PLY, SHORT_FORM_CAPTURES
        if len(parts) == 4:
            if not re.fullmatch(r"\d+", parts[2]):
                raise NotationError(f"bad position {text!r}: ply {parts[2]!r} is not a number")
            match = re.fullmatch(r"(\d+):(\d+)", parts[3])
            if not match:
                raise NotationError(f"bad position {text!r}: captures {parts[3]!r} must look like '1:0'")
            ply, captures = int(parts[2]), (int(match[1]), int(match[2]))
        try:
            return cls(tuple(board), side, ply, captures)
        except PositionError as exc:
            raise NotationError(f"bad position {text!r}: {exc}") from None

    def notation(self, short: bool = False) -> str:
        """The position as text; ``short=True`` gives board and side only."""
        ranks = board_notation(self.board)
        if short:
            return f"{ranks} {self.side_to_move.value}"
        return f"{ranks} {self.side_to_move.value} {self.ply} {self.captures[0]}:{self.captures[1]}"

    def __str__(self) -> str:
        return self.notation()

    def __repr__(self) -> str:
        return f"Position.from_notation({self.notation()!r})"

    # -- construction helpers -----------------------------------------------------------
    @classmethod
    def standard(cls) -> Position:
        """The standard starting position: 4 seeds in every outer pit, South to move."""
        return cls((4,) * 8 + (0,) * 16 + (4,) * 8, Side.SOUTH, 0, (0, 0))

    # -- queries ---------------------------------------------------------------------------
    def rows(self) -> tuple[tuple[int, ...], ...]:
        """The four ranks 4, 3, 2, 1 (top to bottom), each 8 counts for files a..h."""
        b = self.board
        return (b[0:8], b[8:16], b[16:24], b[24:32])

    def seeds(self, side: Side) -> int:
        """Seeds on ``side``'s 16 pits."""
        return sum(self.board[16:]) if side is Side.SOUTH else sum(self.board[:16])

    def pits(self, side: Side) -> tuple[int, ...]:
        """``side``'s 16 counts in its circuit order (0..7 outer row, 8..15 inner row)."""
        return tuple(self.board[i] for i in CIRCUIT[side])

    def __getitem__(self, square: str) -> int:
        return self.board[square_index(square)]

    def mirror(self) -> Position:
        """The same position with the sides swapped: the board turned 180 degrees."""
        return Position(
            self.board[::-1], self.side_to_move.other, self.ply, (self.captures[1], self.captures[0])
        )


_MOVE_RE = re.compile(r"([a-h][1-4])(?:\((.*)\))?")


@dataclass(frozen=True)
class Move:
    """A move: the start pit, the direction chosen at each decision point, or a two-one sowing.

    ``choices`` holds the first lap's direction, then the direction taken at each later
    decision point (RULES.md §4.5). Trailing ``"ccw"`` are dropped on construction, so
    equal moves compare equal: ``Move("a2", ("ccw",)) == Move("a2")``.
    """

    start: str
    choices: tuple[str, ...] = field(default=())
    two_one: bool = False

    def __post_init__(self) -> None:
        square_index(self.start)  # raises NotationError on a bad square
        choices = tuple(self.choices)
        for choice in choices:
            if choice not in (CW, CCW):
                raise NotationError(f"bad direction {choice!r} in move from {self.start}: expected cw or ccw")
        while choices and choices[-1] == CCW:
            choices = choices[:-1]
        object.__setattr__(self, "choices", choices)
        if self.two_one and choices:
            raise NotationError(f"a two-one sowing from {self.start} takes no direction choices")

    @classmethod
    def _trusted(cls, start: str, choices: tuple[str, ...], two_one: bool = False) -> Move:
        """Build without validation: only for the engine (valid square, canonical choices)."""
        move = _new(cls)
        _set(move, "start", start)
        _set(move, "choices", choices)
        _set(move, "two_one", two_one)
        return move

    @classmethod
    def parse(cls, text: str, position: Position | None = None) -> Move:
        """Parse ``SQUARE``, ``SQUARE(cw,ccw,...)`` or ``SQUARE(2-1)``.

        With ``position``, also check that the square belongs to the side to move (the
        move may still be illegal for other reasons: that is ``apply_move``'s business).
        """
        if not isinstance(text, str):
            raise NotationError(f"move notation must be text, got {text!r}")
        match = _MOVE_RE.fullmatch(text.strip())
        if not match:
            raise NotationError(f"bad move {text!r}: expected e.g. 'e1', 'a1(cw)', 'c1(2-1)'")
        start, inner = match[1], match[2]
        if inner is None:
            move = cls(start)
        elif inner.replace(" ", "") == "2-1":
            move = cls(start, (), True)
        else:
            choices = tuple(c.strip() for c in inner.split(","))
            if any(c not in (CW, CCW) for c in choices):
                raise NotationError(f"bad move {text!r}: choices must be 'cw' or 'ccw', comma-separated")
            move = cls(start, choices)
        if position is not None and owner(start) is not position.side_to_move:
            side = "South" if position.side_to_move is Side.SOUTH else "North"
            raise NotationError(f"bad move {text!r}: {start} is not a pit of {side}, the side to move")
        return move

    def __str__(self) -> str:
        if self.two_one:
            return f"{self.start}(2-1)"
        if self.choices:
            return f"{self.start}({','.join(self.choices)})"
        return self.start

    def __repr__(self) -> str:
        return f"Move.parse({str(self)!r})"

    def mirror(self) -> Move:
        """The same move played from the mirrored square (see ``Position.mirror``)."""
        return Move(mirror_square(self.start), self.choices, self.two_one)
