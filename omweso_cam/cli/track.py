"""Sub-commands of `omweso-cam` owned by the track feature: `track` (offline) and `records` (export/import).

OpenCV is imported inside the command functions, so `omweso-cam records` starts fast.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from omweso_cam.cli.args import add_db_option, check_writable, positive_number
from omweso_cam.cli.rules import add_rules_arguments, rules_from_cli


def register(subparsers: Any) -> None:
    track = subparsers.add_parser("track", help="follow a recorded game (video or frame folder) into a record")
    track.add_argument("source", metavar="SOURCE", help="video file, folder of frames, camera index or stream URL")
    add_rules_arguments(track)
    track.add_argument("--start", metavar="POSITION",
                       help="the set-up position (notation); default: read it from the first stable frames")
    track.add_argument("--calibration", metavar="FILE", help="calibration JSON (from `omweso-cam calibrate`)")
    track.add_argument("--fps", type=positive_number,
                       help="frame rate of a frame folder (default: the fps of its truth.json, as `omweso-cam "
                            "render` writes it, else 10)")  # 10: vision.frames.DEFAULT_FOLDER_FPS
    track.add_argument("--out", required=True, metavar="RECORD.json", help="where to write the game record")
    track.add_argument("--no-progress", action="store_true", help="no progress bar")
    track.set_defaults(func=cmd_track)

    records = subparsers.add_parser("records", help="list, export and import recorded games")
    sub = records.add_subparsers(dest="action", metavar="ACTION")
    listing = sub.add_parser("list", help="matches and games in the database")
    add_db_option(listing)
    listing.set_defaults(func=cmd_records_list)
    export = sub.add_parser("export", help="one game as text (RULES.md record) or JSON")
    export.add_argument("game_id", type=int, metavar="GAME_ID", help="the game's id, as `records list` shows it (#N)")
    add_db_option(export)
    export.add_argument("--format", choices=("text", "json"), default="text",
                        help="text: the RULES.md record (tags, moves, positions); json: the same with the "
                             "game's events (illegal sowings, corrections, referee decisions)")
    export.add_argument("--out", metavar="FILE", help="default: standard output")
    export.set_defaults(func=cmd_records_export)
    imp = sub.add_parser("import", help="check a game record with the rules and store it")
    imp.add_argument("file", metavar="FILE", help="record file (text or JSON; '-' for standard input)")
    add_db_option(imp)
    imp.add_argument("--match", type=int, metavar="MATCH_ID", help="add the game to this match")
    imp.set_defaults(func=cmd_records_import)
    records.set_defaults(func=lambda args: (records.print_help(sys.stderr), 2)[1])


def cmd_track(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from omweso_cam.rules import Position
    from omweso_cam.runner import (
        RunnerConfig,
        load_calibration,
        make_processor,
        record_json,
        track_source,
    )
    from omweso_cam.vision.frames import SourceConfig, SourceError, is_image_file, open_source

    if Path(args.source).is_file() and is_image_file(Path(args.source)):
        # OpenCV opens a photo as a film of one frame: a record of no moves, said to be done.
        print(f"omweso-cam track: {args.source} is one photo; track follows a game through a video or a folder "
              "of frames (read a photo's counts with `omweso-cam read`)", file=sys.stderr)
        return 2
    try:
        rules = rules_from_cli(args.rules, args.option)
        start = Position.from_notation(args.start) if args.start else None
        if start is not None:
            from omweso_cam.rules import validate_setup

            start = validate_setup(Position(start.board, start.side_to_move, 0, (0, 0)), rules)
        calibration = load_calibration(args.calibration)
        source = open_source(args.source, config=SourceConfig(folder_fps=args.fps))
    except (ValueError, SourceError, OSError) as exc:
        print(f"omweso-cam track: {exc}", file=sys.stderr)
        return 2
    try:
        check_writable(args.out)  # before the film is read, not after
    except OSError:
        source.close()
        raise
    if source.rate_note:
        print(f"omweso-cam track: {source.rate_note}", file=sys.stderr)
    config = RunnerConfig().for_fps(source.fps)
    processor = make_processor(calibration, config=config, fps=source.fps)
    with tqdm(total=source.len_hint, unit="frame", disable=args.no_progress, file=sys.stderr) as bar:
        try:
            record = track_source(source, rules, start=start, processor=processor, config=config,
                                  on_frame=lambda frame: bar.update(1) if frame.image is not None else None)
        finally:
            source.close()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(record_json(record), encoding="utf-8")
    alarms = sum(e["kind"] == "illegal_sowing" for e in record["events"])
    faults = sum(e["kind"] == "source_fault" for e in record["events"])
    failed = sum(e["kind"] == "vision_error" for e in record["events"])
    result = record["result"]
    print(f"{len(record['plies'])} plies, {alarms} illegal sowing(s), {faults} source fault(s)"
          f"{f', {failed} frame(s) the reader failed on (vision_error events: please report them)' if failed else ''}"
          f"{'' if result is None else ', result ' + result['how'] + ' for ' + str(result['winner'])}"
          f" -> {out}", file=sys.stderr)
    return 0


def _repository(path: str, *, must_exist: bool) -> Any:
    from omweso_cam.store import MatchRepository

    if must_exist and path != ":memory:" and not Path(path).exists():
        raise FileNotFoundError(f"no database at {path}")
    return MatchRepository(path)


def cmd_records_list(args: argparse.Namespace) -> int:
    try:
        repo = _repository(args.db, must_exist=True)
    except (OSError, ValueError) as exc:
        print(f"omweso-cam records: {exc}", file=sys.stderr)
        return 2
    with repo:
        for match in repo.list_matches():
            print(f"match {match['id']}: {match['south']} (S) v {match['north']} (N), {match['rules']}, "
                  f"{match['points']['S']}-{match['points']['N']}, {match['status']}")
            for game in repo.list_games(match["id"]):
                print(f"  game {game['id']} (#{game['number']}): {game['ply_count']} plies, {game['status']}")
        loose = [g for g in repo.list_games() if g["match_id"] is None]
        for game in loose:
            print(f"game {game['id']}: {game['ply_count']} plies, {game['status']} (imported)")
    return 0


def cmd_records_export(args: argparse.Namespace) -> int:
    try:
        with _repository(args.db, must_exist=True) as repo:
            text = repo.export_game(args.game_id, fmt=args.format)
    except (OSError, ValueError) as exc:
        print(f"omweso-cam records export: {exc}", file=sys.stderr)
        return 2
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


def cmd_records_import(args: argparse.Namespace) -> int:
    try:
        text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text(encoding="utf-8")
        with _repository(args.db, must_exist=False) as repo:
            game_id = repo.import_game(text, match_id=args.match)
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        print(f"omweso-cam records import: {exc}", file=sys.stderr)
        return 2
    print(game_id)
    return 0
