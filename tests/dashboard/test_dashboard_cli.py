"""`omweso-cam serve` and `omweso-cam demo`: start, print the referee URL, stop cleanly."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from omweso_cam.cli import main
from omweso_cam.cli.web import demo_folder, setup_to_confirm

np = pytest.importorskip("numpy")
cv2 = pytest.importorskip("cv2")

URL_RE = re.compile(r"referee \(keep private\): (http://127\.0\.0\.1:(\d+)/)\?token=([\w-]{20,})")


@pytest.fixture
def frames(tmp_path: Path) -> Path:
    folder = tmp_path / "frames"
    folder.mkdir()
    for i in range(4):
        cv2.imwrite(str(folder / f"frame_{i:03d}.jpg"), np.full((120, 160, 3), 90 + i, np.uint8))
    return folder


def test_serve_refuses_a_missing_source(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["serve", "--source", str(tmp_path / "nope"), "--port", "0", "--db", str(tmp_path / "m.db")])
    assert code == 2
    assert "no camera, stream, video file or folder" in capsys.readouterr().err


def test_serve_refuses_a_database_it_cannot_open(frames: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["serve", "--source", str(frames), "--port", "0", "--db", str(tmp_path)])  # a folder
    assert code == 2
    assert "cannot open the database" in capsys.readouterr().err


def test_serve_says_when_its_calibration_file_does_not_exist_yet(frames: Path, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    # Legitimate (the Calibration page saves clicked corners there), but a typo looks the same.
    args = ["serve", "--source", str(frames), "--port", "0", "--exit-after", "0.3", "--db", str(tmp_path / "m.db"),
            "--threads", "32", "--calibration", str(tmp_path / "rig.json")]
    assert main(args) == 0
    assert "rig.json does not exist yet" in capsys.readouterr().err


def test_serve_prints_the_referee_url_and_exits(frames: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["serve", "--source", str(frames), "--port", "0", "--exit-after", "1",
                 "--db", str(tmp_path / "m.db"), "--threads", "32"])
    out = capsys.readouterr().out
    assert code == 0
    assert URL_RE.search(out), out
    assert out.rstrip().endswith("omweso-cam dashboard stopped.")


def test_serve_says_when_it_guesses_a_folders_frame_rate(frames: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    args = ["serve", "--source", str(frames), "--port", "0", "--exit-after", "0.5", "--db", str(tmp_path / "m.db"),
            "--threads", "32"]
    assert main(args) == 0
    assert "frames taken as 10 a second (give --fps" in capsys.readouterr().out
    assert main([*args, "--fps", "4"]) == 0
    assert "give --fps" not in capsys.readouterr().out


def test_serve_reads_a_folder_at_the_rate_given(frames: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from omweso_cam.runner import LiveSession

    rates = []
    monkeypatch.setattr(LiveSession, "_run", lambda self: rates.append(self._source.fps))
    assert main(["serve", "--source", str(frames), "--fps", "2.5", "--port", "0", "--exit-after", "0.2",
                 "--db", str(tmp_path / "m.db"), "--threads", "32"]) == 0
    assert rates == [2.5]


@contextlib.contextmanager
def running(*args: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """`python -m omweso_cam ARGS` until it prints its referee URL: (process, base URL); killed if left running."""
    # PYTHONFAULTHANDLER: a process that hangs can be made to print every thread's stack (SIGABRT).
    process = subprocess.Popen([sys.executable, "-m", "omweso_cam", *args],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONFAULTHANDLER": "1"})
    try:
        assert process.stdout is not None
        lines = []
        for line in process.stdout:
            lines.append(line)
            if line.startswith("Press Ctrl-C"):
                break
        match = URL_RE.search("".join(lines))
        assert match, lines
        yield process, match.group(1)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


def stop_with_ctrl_c(process: subprocess.Popen[str]) -> tuple[str, str]:
    """Send SIGINT; the process's remaining stdout and stderr once it has exited.

    A hang detector (a machine busy with a benchmark took over 15 s): a process still running a
    minute later is made to print where each of its threads is (once seen in a full test run on
    2026-12-02, not reproduced since), and the test fails with that.
    """
    process.send_signal(signal.SIGINT)
    try:
        return process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGABRT)
        out, err = process.communicate(timeout=30)
        pytest.fail(f"still running 60 s after Ctrl-C; its threads:\n{err[-8000:]}\nits output:\n{out[-2000:]}")


def test_serve_stops_cleanly_on_ctrl_c(frames: Path, tmp_path: Path) -> None:
    with running("serve", "--source", str(frames), "--port", "0", "--db", str(tmp_path / "m.db"),
                 "--threads", "32") as (process, url):
        with urllib.request.urlopen(url + "api/state", timeout=5) as reply:
            assert json.load(reply)["phase"] == "no_match"
        out, err = stop_with_ctrl_c(process)
    assert process.returncode == 0, err
    assert "omweso-cam dashboard stopped." in out
    assert "Traceback" not in err


def test_ctrl_c_asks_the_server_to_stop_and_the_signal_handlers_are_restored(
        frames: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Ctrl-C sets the serving loop's stop flag instead of raising into the main thread's work;
    # once served, Ctrl-C and SIGTERM are handled as before the dashboard started.
    import os
    import threading

    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    seen: list[object] = []

    def press_ctrl_c() -> None:  # once the dashboard has taken Ctrl-C over (or after 30 s)
        deadline = time.monotonic() + 30
        while signal.getsignal(signal.SIGINT) in before and time.monotonic() < deadline:
            time.sleep(0.05)
        seen.append(signal.getsignal(signal.SIGINT))
        os.kill(os.getpid(), signal.SIGINT)

    presser = threading.Thread(target=press_ctrl_c, daemon=True)
    presser.start()
    code = main(["serve", "--source", str(frames), "--port", "0", "--db", str(tmp_path / "m.db"),
                 "--threads", "32"])
    presser.join()
    assert code == 0 and capsys.readouterr().out.rstrip().endswith("omweso-cam dashboard stopped.")
    assert seen and seen[0] not in before, "the dashboard handles Ctrl-C while it serves"
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


def test_setup_to_confirm_uses_the_reading() -> None:
    rows = [[4] * 8, [0] * 8, [0] * 8, [4] * 8]
    state = {"phase": "setup", "side_to_move": "N", "setup": {"observed": rows, "valid": True, "problems": []}}
    assert setup_to_confirm(state) == "4,4,4,4,4,4,4,4/0,0,0,0,0,0,0,0/0,0,0,0,0,0,0,0/4,4,4,4,4,4,4,4 N 0 0:0"
    assert setup_to_confirm({**state, "setup": {"observed": rows, "valid": False, "problems": ["x"]}}) is None
    assert setup_to_confirm({**state, "phase": "playing"}) is None
    assert setup_to_confirm({**state, "setup": None}) is None


@pytest.mark.skipif(not (demo_folder() / "truth.json").is_file(), reason="bundled demo game not generated yet")
def test_demo_starts_a_match_and_serves_it(tmp_path: Path) -> None:
    # Generous limits: the first frame comes within a few seconds, but on a machine busy with two
    # benchmarks this test once failed with 15 s for it and a 20 s run.
    with running("demo", "--port", "0", "--exit-after", "60", "--threads", "32") as (process, url):
        deadline = time.monotonic() + 45
        state: dict[str, object] = {}
        while time.monotonic() < deadline:
            with urllib.request.urlopen(url + "api/state", timeout=5) as reply:
                state = json.load(reply)
            if state["frame"] and int(str(state["frame"])) > 0:
                break
            time.sleep(0.5)
        assert state["phase"] in ("setup", "playing", "illegal", "game_over")
        assert isinstance(state["match"], dict) and state["match"]["south"] == "Demo South"
        assert int(str(state["frame"])) > 0, "the virtual camera delivers frames"
        out, err = stop_with_ctrl_c(process)
    assert process.returncode == 0, err
    assert "omweso-cam dashboard stopped." in out


def test_serve_reports_a_port_in_use(frames: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code = main(["serve", "--source", str(frames), "--port", str(port), "--db", str(tmp_path / "m.db"),
                     "--threads", "32", "--exit-after", "1"])
    assert code == 2
    assert f"port {port} on 127.0.0.1 is already in use" in capsys.readouterr().err
