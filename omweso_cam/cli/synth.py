"""`omweso-cam render ...`: synthetic stills, filmed games and the sample corpus."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from omweso_cam.cli.args import positive_number, whole_number

#: Scene styles (``vision.synth.scene.STYLES``, spelt out: importing the renderer here would
#: slow every command's start-up; a test keeps the two equal).
STYLES = ("default", "unseen", "randomised")
#: The illegal sowings a filmed game can stage (``vision.synth.sequence.ILLEGAL_KINDS``, likewise).
ILLEGAL_KINDS = ("wrong_lap", "slip")

#: The largest side a render may have: an 8K frame.
MAX_SIDE_PX = 7680


def _size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT like 1280x720, got {text!r}") from exc
    if w < 64 or h < 64:
        raise argparse.ArgumentTypeError(f"image size {text!r} is too small (min 64x64)")
    if w > MAX_SIDE_PX or h > MAX_SIDE_PX:  # 100000x100000 ran out of memory in OpenCV
        raise argparse.ArgumentTypeError(f"image size {text!r} is too large (max {MAX_SIDE_PX} a side, 8K)")
    return w, h


def _plies(text: str) -> list[int]:
    try:
        return [int(v) for v in text.split(",") if v.strip()]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"expected ply numbers like 2,4, got {text!r}") from exc


def register(subparsers: Any) -> None:
    render = subparsers.add_parser("render", help="render synthetic board images with ground truth")
    sub = render.add_subparsers(dest="render_command", metavar="WHAT", required=True)

    stills = sub.add_parser("stills", help="random stills (JPEG + JSON truth per image)")
    stills.add_argument("--out", type=Path, required=True, help="output folder")
    stills.add_argument("--count", type=whole_number(1), default=20, help="number of images (default 20)")
    stills.add_argument("--seed", type=int, default=0, help="random seed: the same seed renders the same images")
    stills.add_argument("--style", choices=STYLES, default="default",
                        help="'unseen': held-out seed colours, woods, tables and light; "
                        "'randomised': default scenes in random colours (training)")
    stills.add_argument("--size", type=_size, default=None, help="image size WxH (default: varied, up to 1280x720)")
    stills.set_defaults(func=_stills)

    seq = sub.add_parser("sequence", help="film a random game: frames + truth.json")
    seq.add_argument("--out", type=Path, required=True, help="output folder")
    seq.add_argument("--seed", type=int, default=0, help="random seed: the same seed films the same game")
    seq.add_argument("--plies", type=whole_number(0), default=8, help="moves to play (default 8; fewer if the game ends)")
    seq.add_argument("--rules", default="seed", help="rules preset (seed | traditional)")
    seq.add_argument("--start", default=None, help="initial position (default: the standard set-up)")
    seq.add_argument("--illegal-at", type=int, default=None, metavar="PLY",
                     help="stage an illegal sowing (then restore the board) before this ply")
    seq.add_argument("--illegal-kind", choices=ILLEGAL_KINDS, default="wrong_lap",
                     help="the illegal sowing: a pit skipped from lap 2 on (default) or one seed dropped one pit too far")
    seq.add_argument("--pause-plies", type=_plies, default=None, metavar="2,4",
                     help="plies with a mid-move pause (default: random)")
    seq.add_argument("--size", type=_size, default=(960, 540), help="frame size WxH (default 960x540)")
    seq.add_argument("--fps", type=positive_number, default=4.0, help="frames a second (default 4)")
    seq.add_argument("--style", choices=STYLES, default="default", help="scene style, as for stills")
    seq.add_argument("--video", type=Path, default=None, help="also write the frames as an MP4 here")
    seq.set_defaults(func=_sequence)

    corpus = sub.add_parser("corpus", help="regenerate the sample corpus (sample_images/)")
    corpus.add_argument("--out", type=Path, required=True, help="output folder")
    corpus.add_argument("--seed", type=int, default=2026, help="random seed (default 2026: sample_images/ as shipped)")
    corpus.add_argument("--style", choices=STYLES, default="default", help="scene style, as for stills")
    corpus.add_argument("--stills-only", action="store_true", help="skip the filmed games and the demo video")
    corpus.set_defaults(func=_corpus)

    speed = sub.add_parser("speed", help="measure render time per frame")
    speed.add_argument("--count", type=whole_number(1), default=10, help="frames to render (default 10)")
    speed.add_argument("--size", type=_size, default=(1280, 720), help="frame size WxH (default 1280x720)")
    speed.set_defaults(func=_speed)


def _stills(args: argparse.Namespace) -> int:
    from omweso_cam.vision.synth.corpus import CorpusPlan, render_stills

    if args.count < 1:
        print("--count must be at least 1", file=sys.stderr)
        return 2
    # the same mix as the corpus, scaled to --count
    n = args.count
    parts = [round(n * f) for f in (0.18, 0.2, 0.34, 0.1)]
    plan = CorpusPlan(
        standard=parts[0], free_setup=parts[1], mid_game=parts[2], no_board=parts[3],
        occluded=max(0, n - sum(parts)), sequences=False, demo=False,
    )
    index = render_stills(args.out, seed=args.seed, style=args.style, plan=plan, size_px=args.size,
                          progress=lambda k, total: print(f"\r{k}/{total}", end="", file=sys.stderr))
    print(file=sys.stderr)
    print(json.dumps({"out": str(args.out), "images": len(index)}))
    return 0


def _sequence(args: argparse.Namespace) -> int:
    import numpy as np

    from omweso_cam.rules import NotationError, Position, RuleSet, RuleSetError
    from omweso_cam.vision.synth.scene import Scene
    from omweso_cam.vision.synth.sequence import (
        SequenceConfig,
        SequenceError,
        render_sequence,
        write_video,
    )

    try:
        rules = RuleSet.preset(args.rules)
        initial = Position.standard() if args.start is None else Position.from_notation(args.start)
    except (NotationError, RuleSetError, ValueError) as exc:
        print(f"omweso-cam render: error: {exc}", file=sys.stderr)
        return 2
    rng = np.random.default_rng(args.seed)
    scene = Scene.random(rng, style=args.style, image_size_px=args.size, jpeg_quality=0,
                         focus_blur_px=0.0, motion_blur_px=0.0)
    try:
        truth = render_sequence(
            args.out, rules=rules, initial=initial, scene=scene, rng=rng, plies=args.plies,
            illegal_at_ply=args.illegal_at, illegal_kind=args.illegal_kind, pause_plies=args.pause_plies,
            config=SequenceConfig(fps=args.fps),
        )
        if args.video is not None:
            write_video(args.out, args.video, fps=args.fps)
    except SequenceError as exc:
        print(f"omweso-cam render: error: {exc}", file=sys.stderr)
        return 1
    print(json.dumps({"out": str(args.out), "frames": truth["frame_count"], "moves": truth["moves"]}))
    return 0


def _corpus(args: argparse.Namespace) -> int:
    from omweso_cam.vision.synth.corpus import CorpusPlan, clear, render_corpus

    clear(args.out)
    plan = CorpusPlan(sequences=not args.stills_only, demo=not args.stills_only)
    summary = render_corpus(args.out, seed=args.seed, style=args.style, plan=plan,
                            progress=lambda msg: print(f"== {msg}", file=sys.stderr))
    print(json.dumps(summary))
    return 0


def _speed(args: argparse.Namespace) -> int:
    from omweso_cam.vision.synth.corpus import measure_speed

    result = measure_speed(count=args.count, size_px=args.size)
    print(json.dumps({k: round(v, 1) for k, v in result.items()}))
    return 0
