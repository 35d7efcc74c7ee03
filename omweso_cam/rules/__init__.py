"""The Omweso rules engine (RULES.md): pure standard-library Python, no I/O at import.

Values (``Side``, ``Position``, ``Move``, ``RuleSet``) round-trip through text; the engine
functions take a position and a rule set and return new values.
"""

from __future__ import annotations

from omweso_cam.rules.engine import (
    LAP_KINDS,
    GameResult,
    IllegalMoveError,
    Lap,
    Outcome,
    SowingState,
    apply_move,
    is_legal,
    legal_moves,
    sowing_states,
    sowing_states_all,
    successors,
)
from omweso_cam.rules.match import (
    MODES,
    Match,
    MatchError,
    SetupError,
    setup_problems,
    validate_setup,
)
from omweso_cam.rules.notation import (
    CIRCUIT,
    TOTAL_SEEDS,
    Move,
    NotationError,
    Position,
    PositionError,
    Side,
    board_notation,
    circuit_index,
    mirror_square,
    owner,
    parse_board,
    square_index,
    square_name,
)
from omweso_cam.rules.record import GameRecord, RecordedPly, RecordError
from omweso_cam.rules.ruleset import NEVER_ENDING, PRESETS, RESULTS, TOO_LONG, RuleSet, RuleSetError

__all__ = [
    "CIRCUIT",
    "LAP_KINDS",
    "MODES",
    "NEVER_ENDING",
    "PRESETS",
    "RESULTS",
    "TOO_LONG",
    "TOTAL_SEEDS",
    "GameRecord",
    "GameResult",
    "IllegalMoveError",
    "Lap",
    "Match",
    "MatchError",
    "Move",
    "NotationError",
    "Outcome",
    "Position",
    "PositionError",
    "RecordError",
    "RecordedPly",
    "RuleSet",
    "RuleSetError",
    "SetupError",
    "Side",
    "SowingState",
    "apply_move",
    "board_notation",
    "circuit_index",
    "is_legal",
    "legal_moves",
    "mirror_square",
    "owner",
    "parse_board",
    "setup_problems",
    "sowing_states",
    "sowing_states_all",
    "square_index",
    "square_name",
    "successors",
    "validate_setup",
]
