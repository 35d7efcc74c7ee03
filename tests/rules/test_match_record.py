"""Matches (points, target, who starts next), set-up validation, game records."""

from __future__ import annotations

import json
import random

import pytest

from omweso_cam.rules import (
    GameRecord,
    GameResult,
    Match,
    MatchError,
    Position,
    RecordError,
    RuleSet,
    RuleSetError,
    SetupError,
    Side,
    legal_moves,
    validate_setup,
)
from omweso_cam.rules.sample import random_game, random_position, random_setup

SEED = RuleSet.preset("seed")
TRADITIONAL = RuleSet.preset("traditional")
S, N = Side.SOUTH, Side.NORTH


def test_presets_and_options() -> None:
    assert SEED.name == "seed" and TRADITIONAL.name == "traditional"
    assert SEED.points_for("grand_slam") == 12 and SEED.points_for("both_ends") == 2
    assert SEED.points_for("opponent_cannot_move") == 1
    assert all(TRADITIONAL.points_for(how) == 1 for how in ("both_ends", "opponent_cannot_move"))
    assert SEED.points_for("never_ending") == 0
    custom = SEED.with_options(reverse_scope="none", points={"both_ends": 3})
    assert custom.name == "seed" and custom.points_for("both_ends") == 3
    assert custom.overrides() == {"reverse_scope": "none", "points": dict(custom.points)}
    assert RuleSet.from_name_and_options("seed", custom.overrides()) == custom
    parsed = TRADITIONAL.with_option_strings(
        {"no_capture_first_turn": "true", "setup_max_per_pit": "8", "reverse_pits": "0,15"}
    )
    assert parsed.no_capture_first_turn and parsed.setup_max_per_pit == 8
    assert parsed.reverse_pits == frozenset({0, 15})
    with pytest.raises(RuleSetError, match="unknown rules option"):
        SEED.with_options(capture_everything=True)
    with pytest.raises(RuleSetError, match="reverse_scope"):
        SEED.with_options(reverse_scope="sometimes")
    with pytest.raises(RuleSetError, match="true or false"):
        SEED.with_option_strings({"two_one_opening": "maybe"})
    with pytest.raises(RuleSetError, match="unknown rules preset"):
        RuleSet.preset("chess")


@pytest.mark.parametrize("options", [
    {"match_target": True},  # a JSON true is not a number of points
    {"match_target": 10**30},  # more than SQLite can store: the match was never written
    {"match_target": 1001},
    {"points": {"grand_slam": 10**30}},
    {"points": {"both_ends": False}},
    {"setup_max_per_pit": 33},  # a side has 32 seeds
    {"setup_max_per_pit": True},
    {"max_move_laps": True},
    {"reverse_pits": [True]},
])
def test_numbers_out_of_any_real_range_are_refused(options: dict[str, object]) -> None:
    with pytest.raises(RuleSetError, match=next(iter(options))):
        SEED.with_options(**options)


def test_the_largest_numbers_allowed_are_accepted() -> None:
    rules = SEED.with_options(match_target=1000, points={"grand_slam": 1000}, setup_max_per_pit=32)
    assert rules.match_target == 1000 and rules.points_for("grand_slam") == 1000


def test_setup_validation() -> None:
    assert validate_setup(Position.standard(), SEED) == Position.standard()
    for seed in range(5):
        validate_setup(random_setup(random.Random(seed), max_per_pit=10), SEED)
    heavy = Position.from_notation("4,4,4,4,4,4,4,4/0,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0/12,0,4,4,4,4,4,0 S 0 0:0")
    with pytest.raises(SetupError, match="a1"):
        validate_setup(heavy, SEED)
    validate_setup(heavy, TRADITIONAL)  # no cap
    uneven = Position.from_notation("4,4,4,4,4,4,4,2/0,0,0,0,0,0,0,0/0,0,0,0,0,0,0,2/4,4,4,4,4,4,4,4 S 0 0:0")
    with pytest.raises(SetupError, match="South has 34 seeds") as info:
        validate_setup(uneven, TRADITIONAL)
    assert "North has 30 seeds" in str(info.value)
    with pytest.raises(SetupError, match="ply 0"):
        validate_setup(Position.from_notation(Position.standard().notation(short=True)), SEED)


def test_match_points_target_and_winner() -> None:
    match = Match(SEED, first_player=S)
    assert match.points() == (0, 0) and match.winner is None and match.next_first_player is S
    for _ in range(5):
        match = match.with_result(GameResult(S, "both_ends", 2))
    match = match.with_result(GameResult(N, "opponent_cannot_move", 1))
    assert match.points() == (10, 1) and not match.is_over
    match = match.with_result(GameResult(None, "never_ending", 0))
    assert match.points() == (10, 1)
    match = match.with_result(GameResult(S, "front_row", 2))
    assert match.points() == (12, 1) and match.winner is S and match.is_over
    with pytest.raises(MatchError, match="over"):
        match.with_result(GameResult(N, "both_ends", 2))


def test_grand_slam_wins_the_match_at_once() -> None:
    rules = SEED.with_options(match_target=30)
    match = Match(rules, N).with_result(GameResult(N, "grand_slam", 12))
    assert match.winner is N


@pytest.mark.parametrize(
    ("policy", "starters"),
    [
        # games: S wins, N wins, annulled (replayed by the same starter), S wins
        ("alternate", (S, N, S, S, N)),
        ("loser", (S, N, S, S, N)),
        ("winner", (S, S, N, N, S)),
    ],
)
def test_who_starts_each_game(policy: str, starters: tuple[Side, ...]) -> None:
    match = Match(TRADITIONAL.with_options(next_game_first=policy), S)
    for result in (GameResult(S, "both_ends", 1), GameResult(N, "both_ends", 1),
                   GameResult(None, "never_ending", 0), GameResult(S, "opponent_cannot_move", 1)):
        match = match.with_result(result)
    assert match.first_players() == starters
    assert match.next_first_player is starters[-1]


def _random_game(rules: RuleSet, seed: int, plies: int = 200) -> GameRecord:
    rng = random.Random(seed)
    record = GameRecord.from_moves(
        random_setup(rng, max_per_pit=rules.setup_max_per_pit), [], rules,
        tags={"Event": 'Club "night"', "South": "Alice", "North": "Bob", "Date": "2026-11-29"},
    )
    while not record.is_over and len(record.plies) < plies:
        record = record.play(rng.choice(legal_moves(record.position, rules)))
    return record


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_record_round_trips_as_text_and_json(seed: int) -> None:
    rules = SEED.with_options(reverse_scope="wikipedia_literal") if seed == 3 else SEED
    record = _random_game(rules, seed)
    assert record.plies and record.is_over
    text = record.to_text()
    assert GameRecord.parse(text) == record
    assert GameRecord.from_json(json.dumps(record.to_json())) == record
    assert GameRecord.from_json(record.to_json()).tag("Event") == 'Club "night"'
    assert GameRecord.from_moves(record.initial, [str(m) for m in record.moves], rules,
                                 tags=dict(record.tags)) == record


def test_record_rejects_tampering() -> None:
    record = _random_game(SEED, 4, plies=6)
    text = record.to_text()
    first_after = record.plies[0].after.notation()
    board, rest = first_after.split(" ", 1)
    pits = board.replace("/", ",").split(",")
    i = next(k for k, v in enumerate(pits) if v != "0")
    j = next(k for k, v in enumerate(pits) if k != i)
    pits[i], pits[j] = str(int(pits[i]) - 1), str(int(pits[j]) + 1)
    tampered_board = "/".join(",".join(pits[r * 8:(r + 1) * 8]) for r in range(4))
    with pytest.raises(RecordError, match=r"line .*ply 1"):
        GameRecord.parse(text.replace(first_after, f"{tampered_board} {rest}", 1))
    with pytest.raises(RecordError, match="Setup"):
        GameRecord.parse(text.replace("[Setup", "[Start"))
    with pytest.raises(RecordError, match="cannot read"):
        GameRecord.parse(text + "\nnonsense here\n")
    with pytest.raises(RecordError, match="Result"):
        GameRecord.parse(text.replace('[Result "*"]', '[Result "S both_ends 2"]'))
    second = record.plies[1].move
    with pytest.raises(RecordError, match="ply 2"):
        GameRecord.from_moves(record.initial, [record.plies[0].move, record.plies[0].move, second], SEED)


def test_building_a_record_applies_each_move_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """play() checks only the new ply: n plies cost n apply_move calls, not n(n+1)/2."""
    import omweso_cam.rules.record as record_module

    record = _random_game(SEED, 5, plies=20)
    moves = [str(m) for m in record.moves]
    assert len(moves) >= 10
    calls = 0
    real_apply = record_module.apply_move

    def counting_apply(*args: object, **kwargs: object) -> object:
        nonlocal calls
        calls += 1
        return real_apply(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(record_module, "apply_move", counting_apply)
    for length in (len(moves) // 2, len(moves)):
        calls = 0
        rebuilt = GameRecord.from_moves(record.initial, moves[:length], SEED)
        assert calls == length
        calls = 0
        assert GameRecord.parse(rebuilt.to_text()) == rebuilt
        assert calls == length
    calls = 0
    GameRecord(SEED, record.initial, record.plies, record.tags, record.result)  # direct construction replays
    assert calls == len(moves)


def test_a_record_built_directly_is_still_checked() -> None:
    record = _random_game(SEED, 6, plies=6)
    swapped = (record.plies[1], record.plies[0], *record.plies[2:])
    with pytest.raises(RecordError, match="ply 1"):
        GameRecord(SEED, record.initial, swapped, record.tags, record.result)


@pytest.mark.parametrize("result", [GameResult(S, "both_ends", 2), GameResult(N, "grand_slam", 12),
                                    GameResult(None, "never_ending", 0)])
def test_game_result_round_trips_as_a_dict(result: GameResult) -> None:
    data = result.to_dict()
    assert data == {"winner": None if result.winner is None else result.winner.value, "how": result.how,
                    "points": result.points}
    assert json.loads(json.dumps(data)) == data
    assert GameResult.from_dict(data) == result


@pytest.mark.parametrize("data", [{"how": "both_ends", "points": 2}, {"winner": "X", "how": "both_ends", "points": 2},
                                  {"winner": "S", "how": "both_ends", "points": "2"}, None])
def test_a_bad_game_result_dict_is_refused(data: object) -> None:
    with pytest.raises(ValueError, match=r"result|side"):
        GameResult.from_dict(data)  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_random_games_are_legal_and_end_at_their_result(seed: int) -> None:
    from omweso_cam.rules import successors

    initial = random_setup(random.Random(seed), max_per_pit=SEED.setup_max_per_pit)
    moves = random_game(initial, SEED, random.Random(seed), max_plies=300)
    record = GameRecord.from_moves(initial, moves, SEED)  # raises at the first illegal move
    stuck = all(o.never_ending for _, o in successors(record.position, SEED))
    assert record.is_over or stuck or len(moves) == 300
    assert random_game(initial, SEED, random.Random(seed), max_plies=300) == moves  # seeded: reproducible
    position = random_position(random.Random(seed), SEED, plies=3)
    assert position is None or position.ply == 3
