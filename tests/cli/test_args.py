"""Numbers argparse would take that mean nothing are refused before any command runs."""

from __future__ import annotations

import pytest

from omweso_cam.cli import build_parser


@pytest.mark.parametrize(
    ("args", "message"),
    [
        *[(["track", ".", f"--fps={fps}"], "--fps: must be a positive number") for fps in ("0", "-3", "nan", "inf", "fast")],
        *[(["render", "sequence", f"--fps={fps}"], "--fps: must be a positive number") for fps in ("0", "nan", "inf")],
        *[(["demo", f"--speed={speed}"], "--speed: must be a positive number") for speed in ("0", "-1", "nan", "inf")],
        *[(["demo", f"--exit-after={s}"], "--exit-after: must be a number of seconds") for s in ("-5", "nan", "inf")],
        *[(["serve", "--source", "0", f"--port={p}"], "--port: must be a TCP port") for p in ("-1", "65536", "99999", "http")],
        *[(["serve", "--source", "frames", f"--fps={fps}"], "--fps: must be a positive number") for fps in ("0", "nan")],
        # 10^23 threads: waitress tried to start them all and the process died ("can't start new thread")
        *[(["serve", "--source", "0", f"--threads={n}"], "--threads: must be a whole number, 17 to 2048")
          for n in ("16", "2049", str(10**23), "many")],
        (["render", "sequence", "--plies=-1"], "--plies: must be a whole number, 0 or more"),
        (["render", "speed", "--count=0"], "--count: must be a whole number, 1 or more"),
        (["render", "stills", "--out", "o", "--count=0"], "--count: must be a whole number, 1 or more"),
        (["render", "stills", "--out", "o", "--size=100000x100000"], "is too large (max 7680 a side"),
        *[(["evaluate", "dir", f"--limit={n}"], "--limit: must be a whole number, 0 or more") for n in ("-1", "two")],
        *[(["calibrate", "intrinsics", "x.png", f"--square-mm={s}", "--out", "c.json"], "--square-mm: must be a positive")
          for s in ("0", "-25", "nan")],
    ],
)
def test_a_number_that_means_nothing_is_a_usage_error(args: list[str], message: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    # Parsed only: a command that took such a number would run (a demo at speed nan serves forever).
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args([*args, "--out", "x.json"] if args[:2] in (["track", "."], ["render", "sequence"]) else args)
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(("option", "value"), [("--fps", "0.5"), ("--fps", "30")])
def test_a_sensible_rate_parses(option: str, value: str) -> None:
    args = build_parser().parse_args(["track", ".", option, value, "--out", "x.json"])
    assert args.fps == float(value)


def test_the_thread_bounds_are_the_servers() -> None:
    from omweso_cam.cli.web import MIN_THREADS
    from omweso_cam.dashboard.server import ServerConfig

    assert ServerConfig.reserved_threads + 1 == MIN_THREADS
    for threads in (17, 2048):
        assert build_parser().parse_args(["serve", "--source", "0", "--threads", str(threads)]).threads == threads


def test_port_zero_and_the_top_port_parse() -> None:
    for port in (0, 65535):
        assert build_parser().parse_args(["serve", "--source", "0", "--port", str(port)]).port == port
    assert build_parser().parse_args(["demo", "--exit-after", "0"]).exit_after == 0.0
