"""The sample corpus: stills with JSON truth, filmed games and a demo video, from one seed.

`render_corpus(out, seed=...)` regenerates ``sample_images/`` exactly (same seed, same
code, same OpenCV/numpy); ``style="unseen"`` makes a held-out corpus with seed colours,
woods, tables and light the reader was never tuned on.
"""

from __future__ import annotations

import json
import random
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from omweso_cam.rules import Position, RuleSet, Side
from omweso_cam.rules.sample import random_setup
from omweso_cam.vision.synth.render import BoardRenderer, render_board
from omweso_cam.vision.synth.scene import Scene
from omweso_cam.vision.synth.sequence import (
    SequenceConfig,
    quick_options,
    render_sequence,
    write_video,
)

#: Still sizes (width, height) drawn from, largest most often.
STILL_SIZES = ((1280, 720), (1280, 720), (1280, 720), (1024, 576), (960, 720), (960, 540))


@dataclass(frozen=True)
class CorpusPlan:
    """How many images of each kind a corpus holds."""

    standard: int = 12
    free_setup: int = 14
    mid_game: int = 22
    no_board: int = 6
    occluded: int = 8
    sequences: bool = True
    demo: bool = True
    sequence_size_px: tuple[int, int] = (800, 450)
    demo_size_px: tuple[int, int] = (960, 540)
    jpeg_quality: int = 85

    @property
    def stills(self) -> int:
        return self.standard + self.free_setup + self.mid_game + self.no_board + self.occluded


def random_game_position(rnd: random.Random, rules: RuleSet, *, plies: int) -> Position | None:
    """The position after ``plies`` random moves (`quick_options`) from a random set-up.

    None if the game ended first.
    """
    position = random_setup(rnd, max_per_pit=rules.setup_max_per_pit, first=rnd.choice(list(Side)))
    for _ in range(plies):
        options = quick_options(position, rules)
        if not options:
            return None
        _, outcome = options[rnd.randrange(len(options))]
        if outcome.result is not None:
            return None
        position = outcome.position
    return position


def heavy_position(rnd: random.Random, rules: RuleSet) -> Position:
    """A mid-game position, preferring ones with a big heap (a pit of 12 or more)."""
    best: Position | None = None
    for _ in range(40):
        p = random_game_position(rnd, rules, plies=rnd.randint(6, 60))
        if p is None:
            continue
        if best is None or max(p.board) > max(best.board):
            best = p
        if max(best.board) >= 12 and rnd.random() < 0.7:
            break
    if best is None:
        raise RuntimeError("no random game lasted long enough")
    return best


def still_jobs(rng: np.random.Generator, plan: CorpusPlan, rules: RuleSet) -> list[tuple[str, Position | None, dict[str, Any]]]:
    """(category, position or None, scene overrides) of every still, in order."""
    rnd = random.Random(int(rng.integers(2**31)))
    jobs: list[tuple[str, Position | None, dict[str, Any]]] = []
    for _ in range(plan.standard):
        jobs.append(("standard", Position.standard(), {"hand": rnd.random() < 0.15}))
    for _ in range(plan.free_setup):
        jobs.append(("free_setup", random_setup(rnd, max_per_pit=10), {"hand": rnd.random() < 0.15}))
    for _ in range(plan.mid_game):
        jobs.append(("mid_game", heavy_position(rnd, rules), {"hand": rnd.random() < 0.2}))
    for _ in range(plan.no_board):
        jobs.append(("no_board", None, {"has_board": False, "clutter_count": rnd.randint(2, 7), "hand": rnd.random() < 0.3}))
    for _ in range(plan.occluded):
        target = (rnd.uniform(-0.6, 0.6), rnd.uniform(-0.6, 0.6))
        jobs.append(
            (
                "occluded",
                heavy_position(rnd, rules),
                {"hand": True, "hand_target": target, "hand_height_mm": rnd.uniform(25, 70), "hand_scale": rnd.uniform(1.1, 1.4)},
            )
        )
    return jobs


def render_stills(
    out_dir: Path | str,
    *,
    seed: int,
    style: str = "default",
    plan: CorpusPlan | None = None,
    size_px: tuple[int, int] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[dict[str, Any]]:
    """Render the stills of ``plan`` into ``out_dir`` (``still_NNN.jpg`` + ``.json``); returns the index.

    ``size_px`` fixes the image size (default: drawn from `STILL_SIZES`).
    """
    plan = plan or CorpusPlan()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    rules = RuleSet.preset("seed")
    index = []
    jobs = still_jobs(rng, plan, rules)
    for k, (category, position, overrides) in enumerate(jobs):
        size = STILL_SIZES[int(rng.integers(len(STILL_SIZES)))]
        size = size_px or size
        scene = Scene.random(rng, style=style, image_size_px=size, **overrides)
        image, truth = render_board(position, scene=scene, rng=rng)
        name = f"still_{k:03d}"
        cv2.imwrite(str(out / f"{name}.jpg"), image, [cv2.IMWRITE_JPEG_QUALITY, plan.jpeg_quality])
        data = {"image": f"{name}.jpg", "category": category, **truth.to_json()}
        (out / f"{name}.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        index.append({"image": f"{name}.jpg", "category": category, "status": truth.status, "board": data["board"]})
        if progress:
            progress(k + 1, len(jobs))
    (out / "index.json").write_text(json.dumps(index, indent=1) + "\n", encoding="utf-8")
    return index


def render_corpus(
    out_dir: Path | str,
    *,
    seed: int,
    style: str = "default",
    plan: CorpusPlan | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Stills in ``stills/``, three filmed games in ``sequences/``, a demo game in ``demo/``."""
    plan = plan or CorpusPlan()
    out = Path(out_dir)
    say = progress or (lambda _msg: None)
    summary: dict[str, Any] = {"seed": seed, "style": style}
    say(f"stills ({plan.stills})")
    summary["stills"] = len(render_stills(out / "stills", seed=seed, style=style, plan=plan))
    rng = np.random.default_rng(seed + 1)
    seq_cfg = SequenceConfig(fps=4.0, setup_frames=5, stable_frames=4, hand_frames_per_move=3, pause_frames=3)
    if plan.sequences:
        specs: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
            ("illegal_sowing", {"plies": 7, "illegal_at_ply": 3, "pause_plies": []}, {"tilt_deg": float(rng.uniform(5, 20))}),
            ("mid_move_pauses", {"plies": 8, "pause_plies": [1, 3, 5, 7]}, {"tilt_deg": float(rng.uniform(0, 8))}),
            ("oblique_free_setup", {"plies": 8}, {"tilt_deg": float(rng.uniform(25, 35))}),
        ]
        summary["sequences"] = {}
        for name, kwargs, scene_over in specs:
            say(f"sequence {name}")
            scene = Scene.random(
                rng, style=style, image_size_px=plan.sequence_size_px, jpeg_quality=0, focus_blur_px=0.0,
                motion_blur_px=0.0, noise_sigma=float(rng.uniform(1.0, 3.5)), board_fill=float(rng.uniform(0.7, 0.92)),
                **scene_over,
            )
            initial = (
                random_setup(random.Random(int(rng.integers(2**31))), max_per_pit=10)
                if name == "oblique_free_setup"
                else Position.standard()
            )
            truth = render_sequence(
                out / "sequences" / name, rules=RuleSet.preset("seed"), initial=initial, scene=scene, rng=rng,
                config=seq_cfg, **kwargs,
            )
            summary["sequences"][name] = truth["frame_count"]
    if plan.demo:
        say("demo video")
        demo_cfg = SequenceConfig(fps=4.0, setup_frames=12, stable_frames=8, hand_frames_per_move=5, pause_probability=0.2)
        scene = Scene.random(
            rng, style=style, image_size_px=plan.demo_size_px, jpeg_quality=0, tilt_deg=float(rng.uniform(10, 25)),
            focus_blur_px=0.0, motion_blur_px=0.0, noise_sigma=1.5, board_fill=0.85, roll_deg=float(rng.uniform(-4, 4)),
        )
        with tempfile.TemporaryDirectory() as tmp:
            truth = render_sequence(
                tmp, rules=RuleSet.preset("seed"), initial=Position.standard(), scene=scene, rng=rng, plies=16,
                illegal_at_ply=9, config=demo_cfg,
            )
            demo = out / "demo"
            demo.mkdir(parents=True, exist_ok=True)
            write_video(tmp, demo / "game.mp4", fps=demo_cfg.fps)
            truth["video"] = "game.mp4"
            for frame in truth["frames"]:
                frame.pop("file", None)
            (demo / "truth.json").write_text(json.dumps(truth, indent=1) + "\n", encoding="utf-8")
            summary["demo_frames"] = truth["frame_count"]
            summary["demo_plies"] = len(truth["moves"])
    return summary


def measure_speed(*, count: int = 10, seed: int = 0, size_px: tuple[int, int] = (1280, 720)) -> dict[str, float]:
    """Milliseconds to render one still (a fresh scene each: median wall and CPU time, max)
    and one frame of a film (median; board texture and table already cached)."""
    rng = np.random.default_rng(seed)
    rules = RuleSet.preset("seed")
    rnd = random.Random(seed)
    stills = []
    cpu = []
    for _ in range(count):
        position = heavy_position(rnd, rules)
        scene = Scene.random(rng, image_size_px=size_px, hand=bool(rng.random() < 0.3))
        start, start_cpu = time.perf_counter(), time.process_time()
        render_board(position, scene=scene, rng=rng)
        stills.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
    renderer = BoardRenderer(Scene.random(rng, image_size_px=size_px))
    frames = []
    position = heavy_position(rnd, rules)
    for k in range(count):
        start = time.perf_counter()
        renderer.render(position.board, rng, hand=k % 2 == 1, jitter=np.full(6, 0.01))
        frames.append((time.perf_counter() - start) * 1000)
    return {
        "still_median_ms": statistics.median(stills),
        "still_median_cpu_ms": statistics.median(cpu),
        "still_max_ms": max(stills),
        "film_frame_median_ms": statistics.median(frames[1:]) if count > 1 else frames[0],
    }


def clear(out_dir: Path | str) -> None:
    """Remove a previous corpus's generated folders (leaves README.md)."""
    out = Path(out_dir)
    for sub in ("stills", "sequences", "demo"):
        if (out / sub).exists():
            shutil.rmtree(out / sub)
