"""Sub-commands of `omweso-cam` owned by the web feature: `serve` (live dashboard) and `demo`.

Both build a ``omweso_cam.runner.LiveSession`` and hand it to
``omweso_cam.dashboard.server.serve_session`` (waitress, one process). Heavy
imports happen inside the command functions.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from omweso_cam.cli.args import add_db_option, port, positive_number, seconds, whole_number

#: Default waitress pool: every SSE or MJPEG viewer holds one thread while it watches.
DEFAULT_THREADS = 256
#: The most ``--threads`` allowed: 20 times the 100 viewers the dashboard is load-checked with
#: (README, Benchmarks); asked for 10^23, waitress tried to start them all and died.
MAX_THREADS = 2048
#: The fewest: one more than the threads the server keeps for page loads and the referee
#: (``ServerConfig.reserved_threads``; not imported here, which would load Flask for every command).
MIN_THREADS = 17


def _add_server_options(parser: argparse.ArgumentParser, *, default_port: int) -> None:
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to bind (default 127.0.0.1: this computer only; 0.0.0.0 for the LAN)")
    parser.add_argument("--port", type=port, default=default_port,
                        help=f"TCP port (default {default_port}; 0 picks a free one)")
    parser.add_argument("--threads", type=whole_number(MIN_THREADS, MAX_THREADS), default=DEFAULT_THREADS,
                        help=f"server threads, {MIN_THREADS} to {MAX_THREADS} (default {DEFAULT_THREADS}); each open "
                             f"viewer stream holds one, {MIN_THREADS - 1} are kept for page loads and the referee")
    parser.add_argument("--exit-after", type=seconds, default=None, metavar="SECONDS",
                        help="stop by itself after SECONDS (for scripts and tests)")


def register(subparsers: Any) -> None:
    serve = subparsers.add_parser("serve", help="live referee dashboard for a camera, video, folder or stream")
    serve.add_argument("--source", required=True,
                       help="camera index (0), video file, folder of frames, or stream URL (rtsp://, http://)")
    serve.add_argument("--rules", default="seed", help="rules preset for new matches (seed | traditional)")
    serve.add_argument("--calibration", metavar="FILE",
                       help="calibration JSON (from `omweso-cam calibrate` or the dashboard's calibration page)")
    serve.add_argument("--fps", type=positive_number,
                       help="frame rate of a frame folder (default: the fps of its truth.json, as `omweso-cam "
                            "render` writes it, else 10); a camera, video or stream gives its own")
    add_db_option(serve)
    _add_server_options(serve, default_port=8000)
    serve.set_defaults(func=cmd_serve)

    demo = subparsers.add_parser("demo", help="dashboard replaying the bundled sample game as a virtual camera")
    demo.add_argument("--db", default=":memory:", metavar="PATH",
                      help="SQLite file of match records (default: in memory, forgotten on exit)")
    demo.add_argument("--speed", type=positive_number, default=1.0, help="replay speed (default 1.0 = real time)")
    demo.add_argument("--game", metavar="DIR", default=None,
                      help="replay this filmed game instead (a folder with truth.json and game.mp4 or "
                           "frame_*.jpg, as written by `omweso-cam render sequence`)")
    demo.add_argument("--referee-setup", action=argparse.BooleanOptionalAction, default=True,
                      help="act as the referee who checks the set-up against the film's record: confirm "
                           "truth.json's initial position (like `track --start`); every move after it is "
                           "read by the camera (default). --no-referee-setup waits for the camera to read "
                           "a valid set-up instead (the bundled film's set-up is read right; a real board may need the "
                           "referee's correction on the Set-up page)")
    demo.add_argument("--lock-board", action="store_true",
                      help="locate the board once (median corners of the first 3 agreeing reads) and "
                           "read later frames there")
    _add_server_options(demo, default_port=8000)
    demo.set_defaults(func=cmd_demo)


def cmd_serve(args: argparse.Namespace) -> int:
    """`omweso-cam serve`: the live dashboard for one camera."""
    from omweso_cam.runner import LiveSession
    from omweso_cam.store import MatchRepository

    if args.calibration and not Path(args.calibration).exists():  # a typo would otherwise pass unseen
        print(f"omweso-cam serve: {args.calibration} does not exist yet: the board is found in every frame "
              "until corners clicked on the Calibration page are saved there", file=sys.stderr)
    try:
        session = LiveSession(args.source, repository=MatchRepository(args.db), rules=args.rules,
                              calibration=args.calibration, realtime=True, fps=args.fps)
        return _serve(session, args)
    except (ValueError, OSError) as error:
        print(f"omweso-cam serve: {error}", file=sys.stderr)
        return 2


def cmd_demo(args: argparse.Namespace) -> int:
    """`omweso-cam demo`: replay the bundled sample game through the real pipeline as a virtual camera."""
    import tempfile

    from omweso_cam.runner import LiveSession, RunnerConfig
    from omweso_cam.store import MatchRepository

    try:
        truth, video = load_demo(Path(args.game) if args.game else demo_folder())
        with tempfile.TemporaryDirectory(prefix="omweso-demo-") as scratch:
            # Corners clicked on the calibration page go to a scratch file, not the user's folder.
            session = LiveSession(str(video), repository=MatchRepository(args.db), rules=truth["rules"],
                                  calibration=Path(scratch) / "calibration.json", realtime=True,
                                  config=RunnerConfig(lock_board=args.lock_board),
                                  speed=args.speed, fps=truth.get("fps"))
            session.new_match(south="Demo South", north="Demo North", rules=truth["rules"],
                              first=truth["initial"].split()[1])
            print(f"omweso-cam demo: replaying {video} ({truth.get('frame_count', '?')} frames at "
                  f"{truth.get('fps', '?')} fps x{args.speed:g}) through the real pipeline.")
            if args.referee_setup:
                session.confirm_setup(truth["initial"])
                print(f"omweso-cam demo: set-up confirmed by the referee from the film's record: {truth['initial']}")
            else:
                print("The set-up is confirmed automatically once the camera reads a valid one "
                      "(a referee does it on the Set-up page).")
            helper = SetupConfirmer(session)
            helper.start()
            try:
                return _serve(session, args)
            finally:
                helper.stop()
    except (ValueError, OSError, KeyError) as error:
        print(f"omweso-cam demo: {error}", file=sys.stderr)
        return 2


def _serve(session: Any, args: argparse.Namespace) -> int:
    import errno

    from omweso_cam.dashboard.server import ServerConfig, serve_session

    config = ServerConfig(host=args.host, port=args.port, threads=args.threads)
    try:
        return serve_session(session, config=config, exit_after_s=args.exit_after)
    except OSError as error:
        if error.errno == errno.EADDRINUSE:
            raise OSError(error.errno, f"port {args.port} on {args.host} is already in use "
                                       "(choose another with --port, or --port 0 for a free one)") from error
        raise


def demo_folder() -> Path:
    """Where the bundled demo game lives (``game.mp4`` or similar plus ``truth.json``)."""
    from omweso_cam.resources import samples_dir

    return samples_dir() / "demo"


def load_demo(folder: Path) -> tuple[dict[str, Any], Path]:
    """A filmed game's truth.json (for its rules and who starts) and its video, or the folder itself
    when it holds frames instead; FileNotFoundError naming what is missing."""
    import json

    truth_path = folder / "truth.json"
    if not truth_path.is_file():
        raise FileNotFoundError(f"no filmed game here (truth.json missing): {truth_path}")
    truth = json.loads(truth_path.read_text(encoding="utf-8"))
    video = folder / str(truth.get("video", "game.mp4"))
    if video.exists():
        return truth, video
    if any(folder.glob("frame_*.jpg")):
        return truth, folder
    raise FileNotFoundError(f"no video ({video.name}) or frame_*.jpg in {folder}")


class SetupConfirmer:
    """Demo stand-in for the referee's set-up check: confirms a valid set-up read by the camera.

    Listens to the session's "state" events; when the phase is "setup" and the
    reading is a valid set-up, it confirms exactly that reading (never ground truth).
    """

    def __init__(self, session: Any, *, poll_s: float = 0.5) -> None:
        import threading

        self.session = session
        self.poll_s = poll_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="omweso-demo-setup", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        with self.session.bus.subscribe() as subscription:
            while not self._stop.is_set():
                event = subscription.get(self.poll_s)
                if event is None or event.kind != "state":
                    continue
                # Queued snapshots may be stale (already confirmed): decide on the current state.
                position = setup_to_confirm(self.session.state())
                if position is None:
                    continue
                try:
                    self.session.confirm_setup(position)
                    print(f"omweso-cam demo: set-up confirmed: {position}", flush=True)
                except ValueError as error:  # the state moved on meanwhile; wait for the next one
                    print(f"omweso-cam demo: set-up not confirmed: {error}", flush=True)


def setup_to_confirm(state: dict[str, Any]) -> str | None:
    """The set-up notation to confirm from a state snapshot, or None when there is none to confirm."""
    setup = state.get("setup")
    if state.get("phase") != "setup" or not setup or not setup.get("valid") or not setup.get("observed"):
        return None
    from omweso_cam.rules import board_notation

    board = board_notation([count for row in setup["observed"] for count in row])
    return f"{board} {state.get('side_to_move') or 'S'} 0 0:0"
