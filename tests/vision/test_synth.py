"""The renderer of synthetic boards: deterministic, and its ground truth is where it drew."""

from __future__ import annotations

import dataclasses
import itertools
import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from omweso_cam.vision.synth import BoardRenderer, Scene, Truth, board_notation, render_board

SMALL = (480, 270)
STANDARD = (4,) * 8 + (0,) * 16 + (4,) * 8
MID_GAME = (0, 3, 1, 20, 0, 2, 5, 1, 0, 0, 4, 1, 0, 0, 2, 0, 1, 1, 0, 7, 2, 0, 0, 3, 2, 0, 1, 1, 0, 3, 2, 2)


def _scene(seed: int, **overrides: object) -> Scene:
    return Scene.random(np.random.default_rng(seed), **{"image_size_px": SMALL, **overrides})


def _gray(image: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(image, cv2.COLOR_BGR2GRAY).astype(np.float32)


def _disc_mean(gray: np.ndarray, x: float, y: float, r: float) -> float:
    h, w = gray.shape
    yy, xx = np.mgrid[0:h, 0:w]
    disc = (xx - x) ** 2 + (yy - y) ** 2 <= r * r
    assert disc.any(), f"disc at ({x:.1f}, {y:.1f}) r={r:.1f} is outside the image"
    return float(gray[disc].mean())


def test_mid_game_fixture_has_64_seeds() -> None:
    assert sum(MID_GAME) == 64


def test_same_scene_and_seed_give_the_same_image() -> None:
    scene = _scene(3, hand=True)
    a, ta = render_board(MID_GAME, scene=scene, rng=np.random.default_rng(11))
    b, tb = render_board(MID_GAME, scene=scene, rng=np.random.default_rng(11))
    c, _ = render_board(MID_GAME, scene=scene, rng=np.random.default_rng(12))
    assert a.shape == (SMALL[1], SMALL[0], 3) and a.dtype == np.uint8
    assert np.array_equal(a, b)
    assert ta == tb
    assert not np.array_equal(a, c), "a different rng must change seeds/noise"


def test_scene_random_is_deterministic_and_wide() -> None:
    s1 = Scene.random(np.random.default_rng(5))
    s2 = Scene.random(np.random.default_rng(5))
    assert s1 == s2
    scenes = [Scene.random(np.random.default_rng(i)) for i in range(60)]
    assert len({s.seed_palette for s in scenes}) >= 3
    assert len({s.background for s in scenes}) >= 3
    assert max(s.tilt_deg for s in scenes) > 25 and min(s.tilt_deg for s in scenes) < 5
    fills = [s.board_fill for s in scenes]
    assert min(fills) < 0.5 and max(fills) > 0.85
    unseen = {Scene.random(np.random.default_rng(i), style="unseen").seed_palette for i in range(30)}
    assert unseen.isdisjoint({s.seed_palette for s in scenes})


def test_randomised_style_draws_seed_and_wood_colours_from_everywhere_but_keeps_default_scenes() -> None:
    scenes = [Scene.random(np.random.default_rng(i), style="randomised") for i in range(40)]
    assert all(s.seed_palette == "custom" and 1 <= len(s.seed_rgbs) <= 3 for s in scenes)
    hues = {int(np.argmax(rgb)) for s in scenes for rgb in s.seed_rgbs}
    assert hues == {0, 1, 2}, "seeds of red-, green- and blue-dominant colours"
    assert len({s.wood_rgb for s in scenes}) == 40
    default_tables = {Scene.random(np.random.default_rng(i)).background for i in range(200)}
    assert {s.background for s in scenes} <= default_tables  # held-out tables stay held out
    with pytest.raises(ValueError, match="seed_rgbs"):
        Scene(seed_palette="custom")
    with pytest.raises(ValueError, match="seed_rgbs"):
        Scene(seed_rgbs=((1, 2, 3),))
    image, truth = render_board(MID_GAME, scene=scenes[0].with_(image_size_px=SMALL), rng=np.random.default_rng(0))
    assert image.shape == (SMALL[1], SMALL[0], 3) and truth.counts == MID_GAME


def test_dark_colours_put_dark_seeds_on_dark_wood_of_any_hue() -> None:
    from omweso_cam.vision.synth.scene import dark_colours

    scenes = [Scene.random(np.random.default_rng(i), **dark_colours(np.random.default_rng(100 + i))) for i in range(40)]
    woods = np.array([s.wood_rgb for s in scenes])
    seeds = np.array([rgb for s in scenes for rgb in s.seed_rgbs])
    assert woods.max() <= 0.45 * 255 + 1 and seeds.max() <= 0.45 * 255 + 1  # HSV value = max channel
    assert {int(np.argmax(rgb)) for rgb in woods} == {0, 1, 2}
    randomised = np.array([Scene.random(np.random.default_rng(i), style="randomised").wood_rgb for i in range(40)])
    assert randomised.max(axis=1).mean() > woods.max(axis=1).mean() + 60


def test_truth_counts_match_the_position() -> None:
    _image, truth = render_board(MID_GAME, scene=_scene(4), rng=np.random.default_rng(0))
    assert truth.counts == MID_GAME
    assert truth.position == board_notation(MID_GAME)
    assert truth.position.split("/")[0] == "0,3,1,20,0,2,5,1"
    assert len(truth.pit_centers_px or ()) == 32 and len(truth.corners_px or ()) == 4
    assert truth.status == "ok"


def test_truth_carries_the_rules_notation_of_a_position() -> None:
    rules = pytest.importorskip("omweso_cam.rules")
    position = rules.Position.standard()
    _, truth = render_board(position, scene=_scene(6), rng=np.random.default_rng(0))
    assert truth.position == position.notation()
    assert truth.counts == tuple(position.board)


@pytest.mark.parametrize("seed, tilt, jitter", [(21, 0.0, 0.0), (22, 18.0, 0.0), (23, 33.0, 0.0), (24, 12.0, 3.0)])
def test_pit_centres_are_darker_bowls_than_the_board_between_them(seed: int, tilt: float, jitter: float) -> None:
    # Empty pits: the bowl at every truth centre must be darker than the flat board halfway
    # to the next pit. Truth shifted by half a pit pitch would land on the board and fail.
    scene = _scene(
        seed, tilt_deg=tilt, cast_shadow=0.0, light_gradient=0.0, vignetting=0.0, hand=False,
        light_elevation_deg=60.0, board_gloss=0.0, pit_tint=0.8, distortion_k1=-0.15, pit_jitter_mm=jitter,
        board_fill=0.9,
    )
    image, truth = render_board((0,) * 32, scene=scene, rng=np.random.default_rng(1))
    gray = _gray(image)
    centres = np.array(truth.pit_centers_px)
    radii = np.array(truth.pit_radius_px)
    for i in range(32):
        j = i + 1 if i % 8 < 7 else i - 1
        mid = (centres[i] + centres[j]) / 2
        r = 0.25 * radii[i]
        inside = _disc_mean(gray, *centres[i], r)
        between = _disc_mean(gray, *mid, max(1.0, 0.12 * radii[i]))
        assert inside < between - 3, f"pit {i}: centre {inside:.1f} vs board {between:.1f}"


def test_a_varnished_bowl_mirrors_the_light_inside_the_pit_only() -> None:
    # Scene.bowl_gloss adds the light's reflection in each bowl (what the path-traced boards
    # showed being read as a seed); at 0, the default, nothing changes.
    base = _scene(31, tilt_deg=10.0, hand=False, noise_sigma=0.0, jpeg_quality=0, light_elevation_deg=60.0,
                  focus_blur_px=0.0, motion_blur_px=0.0)
    plain, truth = render_board((0,) * 32, scene=base, rng=np.random.default_rng(1))
    again, _ = render_board((0,) * 32, scene=dataclasses.replace(base, bowl_gloss=0.0, bowl_shininess=10.0),
                            rng=np.random.default_rng(1))
    assert np.array_equal(plain, again)
    glossy, _ = render_board((0,) * 32, scene=dataclasses.replace(base, bowl_gloss=0.8, bowl_shininess=30.0),
                             rng=np.random.default_rng(1))
    gain = _gray(glossy) - _gray(plain)
    h, w = gain.shape
    yy, xx = np.mgrid[0:h, 0:w]
    in_pits = np.zeros((h, w), bool)
    for (x, y), r in zip(truth.pit_centers_px or (), truth.pit_radius_px or (), strict=True):
        in_pits |= (xx - x) ** 2 + (yy - y) ** 2 <= (1.1 * r) ** 2
    assert np.abs(gain[~in_pits]).max() <= 1
    brightest = [gain[(xx - x) ** 2 + (yy - y) ** 2 <= r * r].max()
                 for (x, y), r in zip(truth.pit_centers_px or (), truth.pit_radius_px or (), strict=True)]
    assert min(brightest) > 20, "every empty bowl shows a highlight"
    # truth files: the varnish is written only when there is some (sample_images stay byte for byte)
    assert "bowl_gloss" not in base.to_json()
    assert dataclasses.replace(base, bowl_gloss=0.8).to_json()["bowl_gloss"] == 0.8


def test_pit_centres_follow_the_grid_order() -> None:
    scene = _scene(8, roll_deg=0.0, tilt_deg=10.0, pit_jitter_mm=0.0)
    _, truth = render_board(STANDARD, scene=scene, rng=np.random.default_rng(0))
    c = np.array(truth.pit_centers_px).reshape(4, 8, 2)
    assert (np.diff(c[:, :, 0], axis=1) > 0).all(), "files a..h run left to right"
    assert (np.diff(c[:, :, 1], axis=0) > 0).all(), "ranks 4..1 run top to bottom"
    corners = np.array(truth.corners_px)
    assert corners[0, 0] < c[0, 0, 0] and corners[0, 1] < c[0, 0, 1]  # TL beyond a4
    assert corners[2, 0] > c[3, 7, 0] and corners[2, 1] > c[3, 7, 1]  # BR beyond h1


@pytest.mark.parametrize("tilt", [0.0, 25.0])
def test_corners_land_on_the_board_edge(tilt: float) -> None:
    scene = _scene(
        31, tilt_deg=tilt, wood_rgb=(225, 195, 150), background="plain", background_rgb=(25, 45, 30),
        corner_radius_mm=0.0, cast_shadow=0.0, light_gradient=0.0, vignetting=0.0, clutter_count=0,
        hand=False, exposure=1.0,
    )
    image, truth = render_board(STANDARD, scene=scene, rng=np.random.default_rng(2))
    gray = _gray(image)
    corners = np.array(truth.corners_px)
    centre = corners.mean(axis=0)
    for k, corner in enumerate(corners):
        towards = (centre - corner) / np.linalg.norm(centre - corner)
        inside = _disc_mean(gray, *(corner + towards * 7), 2.0)
        assert inside > 90, f"corner {k}: {inside:.0f} just inside should be pale board"
        if tilt == 0.0 or k in (0, 1):  # from the South, the near corners show the side face
            outside = _disc_mean(gray, *(corner - towards * 7), 2.0)
            assert outside < 60, f"corner {k}: {outside:.0f} just outside should be dark table"


def test_no_board_image_has_no_board() -> None:
    scene = _scene(41, hand=False, cast_shadow=0.0)
    with_board, truth_b = render_board(STANDARD, scene=scene, rng=np.random.default_rng(3))
    empty, truth = render_board(None, scene=scene, rng=np.random.default_rng(3))
    assert truth.status == "no_board"
    assert truth.counts is None and truth.corners_px is None and truth.pit_centers_px is None
    quad = np.array(truth_b.corners_px, dtype=np.float32)
    inside = np.zeros(empty.shape[:2], np.uint8)
    cv2.fillConvexPoly(inside, quad.astype(np.int32), 1)
    near = cv2.dilate(inside, np.ones((61, 61), np.uint8))  # board shadow and side faces
    diff = np.abs(_gray(empty) - _gray(with_board))
    assert diff[near == 0].mean() < 6, "the table away from the board is the same table"
    assert diff[inside == 1].mean() > 15, "where the board was drawn, the empty table shows"
    assert render_board(STANDARD, scene=scene.with_(has_board=False), rng=np.random.default_rng(3))[1].status == "no_board"


def test_hand_occludes_and_is_reported() -> None:
    scene = _scene(51, hand=True, hand_target=(0.0, 0.0), hand_height_mm=40.0, hand_from="south")
    image, truth = render_board(MID_GAME, scene=scene, rng=np.random.default_rng(4))
    assert truth.hand_visible
    occ = np.array(truth.pit_occlusion)
    assert occ.max() > 0.5
    assert truth.status == "occluded"
    clear, truth_clear = render_board(MID_GAME, scene=scene.with_(hand=False), rng=np.random.default_rng(4))
    assert truth_clear.status == "ok" and max(truth_clear.pit_occlusion or (1,)) == 0.0
    # the covered pit really looks different with the hand there
    i = int(np.argmax(occ))
    x, y = truth.pit_centers_px[i]
    r = truth.pit_radius_px[i] * 0.5
    assert abs(_disc_mean(_gray(image), x, y, r) - _disc_mean(_gray(clear), x, y, r)) > 5


def test_truth_json_round_trips(tmp_path: Path) -> None:
    _, truth = render_board(MID_GAME, scene=_scene(61, hand=True), rng=np.random.default_rng(0))
    path = tmp_path / "t.json"
    path.write_text(json.dumps(truth.to_json()))
    again = Truth.from_json(json.loads(path.read_text()))
    assert again.counts == truth.counts and again.status == truth.status
    assert np.allclose(np.array(again.pit_centers_px), np.array(truth.pit_centers_px), atol=0.01)


def test_kept_layout_moves_only_changed_pits() -> None:
    scene = _scene(
        71, hand=False, noise_sigma=0.0, jpeg_quality=0, focus_blur_px=0.0, motion_blur_px=0.0,
        seed_palette="empiki_dark", wood_rgb=(220, 190, 150), pit_tint=1.0,
    )
    renderer = BoardRenderer(scene)
    a, truth = renderer.render(STANDARD, np.random.default_rng(0))
    after = list(STANDARD)
    after[24], after[25] = 0, 5  # a1 lifted, b1 gets one more
    b, _ = renderer.render(after, np.random.default_rng(1))
    diff = np.abs(_gray(a) - _gray(b))  # no noise, no JPEG: unchanged pixels are equal
    radii = truth.pit_radius_px or ()
    h, w = diff.shape
    yy, xx = np.mgrid[0:h, 0:w]
    for i, (x, y) in enumerate(truth.pit_centers_px or ()):
        disc = (xx - x) ** 2 + (yy - y) ** 2 <= (radii[i] * 0.9) ** 2
        change = float(diff[disc].max())
        if i in (24, 25):
            assert change > 20, f"pit {i} changed count but looks the same"
        else:
            assert change < 1.5, f"pit {i} kept its count but its seeds moved ({change:.2f})"


@pytest.mark.parametrize(
    "bad",
    [
        dict(pit_pitch_x_mm=10.0),
        dict(tilt_deg=85.0),
        dict(style="cartoon"),
        dict(seed_palette="gold"),
        dict(image_size_px=(10, 10)),
        dict(background="lava"),
        dict(hand_from="above"),
        dict(pit_depth_mm=0.0),
        dict(pit_jitter_mm=-1.0),
    ],
)
def test_bad_scenes_are_refused(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        Scene(**bad)  # type: ignore[arg-type]


def test_bad_positions_are_refused() -> None:
    scene = _scene(1)
    with pytest.raises(ValueError, match="32"):
        render_board((1,) * 31, scene=scene, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="negative"):
        render_board((-1,) + (0,) * 31, scene=scene, rng=np.random.default_rng(0))
    with pytest.raises(TypeError):
        Scene.random(np.random.default_rng(0), colour="red")


# ---- filmed games -------------------------------------------------------------------


@pytest.fixture(scope="module")
def filmed_game(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    rules = pytest.importorskip("omweso_cam.rules")
    from omweso_cam.vision.synth.sequence import SequenceConfig, render_sequence

    out = tmp_path_factory.mktemp("game")
    scene = Scene.random(np.random.default_rng(90), image_size_px=(320, 180), jpeg_quality=0)
    config = SequenceConfig(setup_frames=2, stable_frames=2, hand_frames_per_move=2, pause_frames=2)
    truth = render_sequence(
        out, rules=rules.RuleSet.preset("seed"), initial=rules.Position.standard(), scene=scene,
        rng=np.random.default_rng(91), plies=4, illegal_at_ply=3, pause_plies=[2], config=config,
    )
    return out, truth


def test_sequence_moves_are_legal_and_positions_chain(filmed_game: tuple[Path, dict]) -> None:
    from omweso_cam.rules import Position, RuleSet, apply_move

    out, truth = filmed_game
    on_disk = json.loads((out / "truth.json").read_text())
    assert on_disk["moves"] == truth["moves"] and len(truth["moves"]) == 4
    rules = RuleSet.preset(on_disk["rules"])
    position = Position.from_notation(on_disk["initial"])
    for ply in on_disk["plies"]:
        position = apply_move(position, ply["move"], rules).position
        assert position.notation() == ply["after"]
        frame = on_disk["frames"][ply["frame"]]
        assert frame["phase"] == "stable" and frame["board"] == position.notation(short=True).split()[0]
    assert on_disk["positions"][-1] == position.notation()


def test_sequence_frames_exist_and_match_their_truth(filmed_game: tuple[Path, dict]) -> None:
    out, truth = filmed_game
    frames = truth["frames"]
    assert len(frames) == truth["frame_count"] == len(list(out.glob("frame_*.jpg")))
    for f in frames:
        image = cv2.imread(str(out / f["file"]))
        assert image is not None and image.shape == (180, 320, 3)
        assert sum(f["counts"]) + f["in_hand"] == 64, f"frame {f['index']}: seeds lost"
        if f["phase"] in ("setup", "stable", "restored", "illegal_stable", "pause"):
            assert not f["hand_visible"]
    phases = [p["phase"] for p in truth["phases"]]
    assert phases[0] == "setup" and phases[-1] == "stable"
    # phase ranges tile the frames in order
    ends = [(p["start"], p["end"]) for p in truth["phases"]]
    assert ends[0][0] == 0 and ends[-1][1] == len(frames) - 1
    assert all(b[0] == a[1] + 1 for a, b in itertools.pairwise(ends))


def test_sequence_pause_shows_a_part_sown_board(filmed_game: tuple[Path, dict]) -> None:
    _, truth = filmed_game
    assert [p["ply"] for p in truth["pauses"]] == [2]
    pause = truth["pauses"][0]
    assert pause["in_hand"] > 0
    for k in range(pause["frames"][0], pause["frames"][1] + 1):
        frame = truth["frames"][k]
        assert frame["phase"] == "pause" and sum(frame["counts"]) == 64 - pause["in_hand"] < 64


def test_sequence_illegal_sowing_is_illegal_then_restored(filmed_game: tuple[Path, dict]) -> None:
    from omweso_cam.rules import Position, RuleSet, successors

    _, truth = filmed_game
    [event] = truth["events"]
    assert event["kind"] == "illegal_sowing" and event["ply"] == 3
    before = Position.from_notation(event["position"])
    legal_boards = {o.position.board for _, o in successors(before, RuleSet.preset("seed"))}
    observed = tuple(int(c) for row in event["observed"].split("/") for c in row.split(","))
    assert sum(observed) == 64 and observed not in legal_boards and observed != before.board
    frames = truth["frames"]
    assert frames[event["frame"]]["board"] == event["observed"]
    assert frames[event["restored_frame"]]["board"] == before.notation(short=True).split()[0]
    assert truth["plies"][2]["frame"] > event["restored_frame"]


# ---- command line -------------------------------------------------------------------


def test_cli_render_stills_writes_images_with_truth(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from omweso_cam.cli import main

    args = ["render", "stills", "--out", str(tmp_path), "--count", "2", "--seed", "5", "--size", "320x180"]
    assert main(args) == 0
    index = json.loads((tmp_path / "index.json").read_text())
    assert len(index) == 2
    for entry in index:
        truth = json.loads((tmp_path / entry["image"]).with_suffix(".json").read_text())
        image = cv2.imread(str(tmp_path / entry["image"]))
        assert image is not None and list(image.shape[1::-1]) == truth["image_size"]
        assert truth["status"] in ("ok", "occluded", "no_board")
    assert json.loads(capsys.readouterr().out)["images"] == 2


def test_cli_refuses_bad_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from omweso_cam.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["render", "sequence", "--out", str(tmp_path), "--size", "big"])
    assert exc.value.code == 2
    assert "WIDTHxHEIGHT" in capsys.readouterr().err
    assert main(["render", "sequence", "--out", str(tmp_path), "--start", "1,2,3 S"]) == 2
    assert not list(tmp_path.glob("frame_*.jpg"))


def test_jittered_pits_leave_the_lattice_in_the_truth() -> None:
    base = _scene(9, roll_deg=0.0, tilt_deg=0.0, distortion_k1=0.0, distortion_k2=0.0, pit_jitter_mm=0.0)
    _, straight = render_board(STANDARD, scene=base, rng=np.random.default_rng(0))
    _, carved = render_board(STANDARD, scene=base.with_(pit_jitter_mm=3.0), rng=np.random.default_rng(0))
    shift = np.linalg.norm(np.array(carved.pit_centers_px) - np.array(straight.pit_centers_px), axis=1)
    assert shift.max() > 1.0, "3 mm jitter should move some pit centre by more than a pixel"
    assert np.allclose(carved.corners_px, straight.corners_px), "the board itself stays put"


def test_wrong_sowings_are_never_legal_and_keep_all_seeds() -> None:
    import random

    from omweso_cam.rules import Move, RuleSet, is_legal
    from omweso_cam.vision.synth.corpus import random_game_position
    from omweso_cam.vision.synth.sequence import quick_options, wrong_sowing

    rules = RuleSet.preset("traditional")  # captures from the first move: capture lifts in lap 2
    rnd = random.Random(4)
    made = 0
    for _ in range(25):
        position = random_game_position(rnd, rules, plies=rnd.randint(2, 30))
        if position is None:
            continue
        for (move, outcome), lap in itertools.product(quick_options(position, rules), (0, 1)):
            wrong = wrong_sowing(position, move, rules, lap=lap)
            if wrong is None:
                continue
            states, final = wrong
            made += 1
            assert sum(final) == 64 and final != outcome.position.board
            assert all(sum(s.board) + s.in_hand == 64 for s in states)
            assert not any(
                o.position.board == final for m, o in quick_options(position, rules) if is_legal(position, m, rules)
            )
            assert isinstance(move, Move)
    assert made > 20


def test_slipped_sowings_move_one_seed_one_pit_on_from_the_legal_board() -> None:
    import random

    from omweso_cam.rules import CIRCUIT, RuleSet
    from omweso_cam.vision.synth.corpus import random_game_position
    from omweso_cam.vision.synth.sequence import quick_options, slipped_sowing

    rules = RuleSet.preset("traditional")
    rnd = random.Random(5)
    rng = np.random.default_rng(5)
    made = 0
    for _ in range(25):
        position = random_game_position(rnd, rules, plies=rnd.randint(2, 30))
        if position is None:
            continue
        options = quick_options(position, rules)
        legal = {o.position.board for _, o in options}
        circuit = CIRCUIT[position.side_to_move]
        for move, outcome in options:
            slipped = slipped_sowing(position, move, rules, rng)
            if slipped is None:
                continue
            states, final = slipped
            made += 1
            assert final not in legal and sum(final) == 64
            assert all(sum(st.board) + st.in_hand == 64 and min(st.board) >= 0 for st in states)
            diff = {i: final[i] - outcome.position.board[i] for i in range(32) if final[i] != outcome.position.board[i]}
            [source] = [i for i, d in diff.items() if d == -1]
            [target] = [i for i, d in diff.items() if d == 1]
            assert len(diff) == 2 and circuit[(circuit.index(source) + 1) % 16] == target
    assert made > 20


def test_a_sequence_can_stage_a_slip_and_refuses_unknown_mistakes(tmp_path: Path) -> None:
    rules = pytest.importorskip("omweso_cam.rules")
    from omweso_cam.vision.synth.sequence import SequenceConfig, render_sequence

    scene = Scene.random(np.random.default_rng(92), image_size_px=(160, 90), jpeg_quality=0)
    config = SequenceConfig(setup_frames=1, stable_frames=1, hand_frames_per_move=1, illegal_stable_frames=1)
    kwargs = dict(rules=rules.RuleSet.preset("seed"), initial=rules.Position.standard(), scene=scene, plies=2,
                  illegal_at_ply=2, pause_plies=[], config=config)
    truth = render_sequence(tmp_path / "slip", rng=np.random.default_rng(93), illegal_kind="slip", **kwargs)
    [event] = truth["events"]
    assert event["mistake"] == "slip"
    observed = [int(c) for row in event["observed"].split("/") for c in row.split(",")]
    after = rules.apply_move(rules.Position.from_notation(event["position"]), event["attempted"], kwargs["rules"])
    assert sum(abs(a - b) for a, b in zip(observed, after.position.board, strict=True)) == 2
    with pytest.raises(ValueError, match="illegal_kind"):
        render_sequence(tmp_path / "bad", rng=np.random.default_rng(93), illegal_kind="slipped", **kwargs)
    assert not list((tmp_path / "bad").glob("frame_*.jpg"))


@pytest.mark.parametrize(("changes", "message"), [
    ({"illegal_at_ply": 3}, "plies 1-2, not 3"),  # the film has two plies: nothing would be staged
    ({"illegal_at_ply": 0}, "plies 1-2, not 0"),
    ({"pause_plies": [0, 5]}, "plies 1-2, not 0, 5"),
    ({"plies": -1, "illegal_at_ply": None}, "0 or more"),
])
def test_a_sequence_refuses_plies_it_will_not_film(tmp_path: Path, changes: dict[str, object], message: str) -> None:
    rules = pytest.importorskip("omweso_cam.rules")
    from omweso_cam.vision.synth.sequence import SequenceConfig, SequenceError, render_sequence

    kwargs: dict[str, object] = dict(rules=rules.RuleSet.preset("seed"), initial=rules.Position.standard(),
                                     scene=Scene.random(np.random.default_rng(92), image_size_px=(160, 90)),
                                     plies=2, illegal_at_ply=2, pause_plies=[],
                                     config=SequenceConfig(setup_frames=1, stable_frames=1, hand_frames_per_move=1))
    with pytest.raises(SequenceError, match=message):
        render_sequence(tmp_path / "film", rng=np.random.default_rng(93), **{**kwargs, **changes})  # type: ignore[arg-type]
    assert not (tmp_path / "film").exists()


def test_the_render_command_offers_exactly_the_scene_styles_and_mistakes() -> None:
    from omweso_cam.cli.synth import ILLEGAL_KINDS as CLI_KINDS
    from omweso_cam.cli.synth import STYLES as CLI_STYLES
    from omweso_cam.vision.synth.scene import STYLES
    from omweso_cam.vision.synth.sequence import ILLEGAL_KINDS

    assert CLI_STYLES == STYLES
    assert CLI_KINDS == ILLEGAL_KINDS
