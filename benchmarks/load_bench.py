"""Load check of the dashboard: many viewers on /events and the MJPEG stream while the referee acts.

Starts the dashboard (waitress, the same server as `omweso-cam serve`) in a child
process around a synthetic session whose camera changes frame ``--fps`` times a
second, opens ``--viewers`` SSE connections and ``--viewers`` MJPEG connections on
loopback, and has a referee POST a pit correction ``--updates-per-s`` times a
second for ``--duration`` seconds. Each POST changes the state, which the session
publishes; every viewer timestamps its arrival. Reports update latency (POST sent
-> state received by a viewer), missed updates, referee POST failures, frames
delivered and the server's resident memory.

    .venv/bin/python benchmarks/load_bench.py --viewers 100 --duration 60
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

TOKEN = "load-bench-token"


# ---------------------------------------------------------------- server side (child process)

class BenchSession:
    """Synthetic LiveSession: state changes only on referee actions; frames change at ``fps``."""

    def __init__(self, *, fps: float, frame_size: tuple[int, int]) -> None:
        import cv2
        import numpy as np

        from omweso_cam.events import EventBus

        self.bus = EventBus()
        self.repository = None
        rng = np.random.default_rng(0)
        width, height = frame_size
        self._frames = []
        for i in range(8):
            image = np.full((height, width, 3), 90, np.uint8)
            image[:] = rng.integers(60, 120, (height, width, 3), dtype=np.uint8)
            cv2.putText(image, f"frame {i}", (40, height // 2), cv2.FONT_HERSHEY_SIMPLEX, 3, (255, 255, 255), 6)
            ok, jpeg = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 80])
            assert ok
            self._frames.append(jpeg.tobytes())
        self._fps = fps
        self._start = time.monotonic()
        self._lock = threading.Lock()
        self._state: dict[str, Any] = {
            "phase": "playing", "camera": "stable", "frame": 0, "time_s": 0.0, "rules": "seed",
            "options": {}, "mode": "classical", "position": "", "board": [[4] * 8, [0] * 8, [0] * 8, [4] * 8],
            "side_to_move": "S", "observed": None, "setup": None, "last_move": None, "plies": [],
            "alarm": None, "in_progress": None, "match": None, "result": None,
            "clocks": {"mode": "classical", "since_last_move_s": 0.0, "late_start": False, "overtime": False},
        }

    def state(self) -> dict[str, Any]:
        with self._lock:
            return json.loads(json.dumps(self._state))

    def latest_jpeg(self) -> bytes:
        index = int((time.monotonic() - self._start) * self._fps) % len(self._frames)
        return self._frames[index]

    def latest_raw_jpeg(self) -> bytes:
        return self.latest_jpeg()

    def correct_pit(self, square: str, count: int) -> None:
        with self._lock:
            self._state["frame"] += 1
            self._state["board"][4 - int(square[1])]["abcdefgh".index(square[0])] = count
            snapshot = json.loads(json.dumps(self._state))
        self.bus.publish("state", snapshot)

    def _refuse(self, *args: Any, **kwargs: Any) -> None:
        raise ValueError("not supported by the load-bench session")

    new_match = confirm_setup = board_restored = accept_observed = set_calibration = _refuse


def serve(args: argparse.Namespace) -> int:
    from omweso_cam.dashboard import create_app
    from omweso_cam.dashboard.server import DashboardServer, ServerConfig

    session = BenchSession(fps=args.fps, frame_size=(640, 480))
    app = create_app({"REFEREE_TOKEN": TOKEN, "VIDEO_MAX_FPS": args.fps}, session=session)
    server = DashboardServer(app, ServerConfig(port=0, threads=args.threads))
    print(f"PORT {server.port} JPEG {len(session.latest_jpeg())}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.run()
    return 0


# ---------------------------------------------------------------- client side

@dataclass
class Results:
    lock: threading.Lock = field(default_factory=threading.Lock)
    sent_at: dict[int, float] = field(default_factory=dict)
    latencies_s: list[float] = field(default_factory=list)
    received: dict[int, int] = field(default_factory=dict)  # viewer -> updates seen
    frames: dict[int, int] = field(default_factory=dict)  # viewer -> MJPEG frames
    frame_bytes: int = 0
    stream_errors: list[str] = field(default_factory=list)
    post_status: list[int] = field(default_factory=list)
    post_latencies_s: list[float] = field(default_factory=list)
    rss_kb: list[int] = field(default_factory=list)


def sse_viewer(port: int, viewer: int, stop: threading.Event, results: Results, ready: threading.Barrier) -> None:
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("GET", "/events")
        response = conn.getresponse()
        if response.status != 200:
            raise RuntimeError(f"/events -> {response.status}")
        ready.wait()
        seen = 0
        event = None
        while not stop.is_set():
            line = response.readline()
            if not line:
                break
            if line.startswith(b"event: "):
                event = line[7:].strip()
            elif line.startswith(b"data: ") and event == b"state":
                now = time.monotonic()
                frame = json.loads(line[6:])["frame"]
                with results.lock:
                    sent = results.sent_at.get(frame)
                    if sent is not None:
                        results.latencies_s.append(now - sent)
                        seen += 1
                        results.received[viewer] = seen
        conn.close()
    except Exception as error:  # report, do not crash the benchmark
        with results.lock:
            results.stream_errors.append(f"sse {viewer}: {error!r}")
        with contextlib.suppress(threading.BrokenBarrierError):
            ready.abort()


def mjpeg_viewer(port: int, viewer: int, stop: threading.Event, results: Results, ready: threading.Barrier) -> None:
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("GET", "/video/stream.mjpg")
        response = conn.getresponse()
        if response.status != 200:
            raise RuntimeError(f"/video/stream.mjpg -> {response.status}")
        ready.wait()
        frames = 0
        while not stop.is_set():
            line = response.readline()
            if not line:
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
                response.readline()
                data = response.read(length)
                frames += 1
                with results.lock:
                    results.frames[viewer] = frames
                    results.frame_bytes += len(data)
        conn.close()
    except Exception as error:
        with results.lock:
            results.stream_errors.append(f"mjpeg {viewer}: {error!r}")
        with contextlib.suppress(threading.BrokenBarrierError):
            ready.abort()


def referee(port: int, args: argparse.Namespace, stop: threading.Event, results: Results) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    interval = 1.0 / args.updates_per_s
    n = 0
    next_at = time.monotonic()
    while not stop.is_set():
        n += 1
        body = json.dumps({"square": "a1", "count": n % 10})
        with results.lock:
            results.sent_at[n] = time.monotonic()
        start = time.monotonic()
        try:
            conn.request("POST", "/api/correct-pit", body=body,
                         headers={"Content-Type": "application/json", "X-Referee-Token": TOKEN})
            response = conn.getresponse()
            response.read()
            status = response.status
        except Exception:
            status = -1
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        with results.lock:
            results.post_status.append(status)
            results.post_latencies_s.append(time.monotonic() - start)
        next_at += interval
        stop.wait(max(0.0, next_at - time.monotonic()))


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def threads_of(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    return 0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def run(args: argparse.Namespace) -> int:
    child = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), "--serve", "--threads", str(args.threads), "--fps", str(args.fps)],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert child.stdout is not None
        words = child.stdout.readline().split()
        port, jpeg_bytes = int(words[1]), int(words[3])
        rss_idle = rss_kb(child.pid)
        results = Results()
        stop = threading.Event()
        ready = threading.Barrier(2 * args.viewers + 1)
        viewers = [threading.Thread(target=sse_viewer, args=(port, i, stop, results, ready), daemon=True)
                   for i in range(args.viewers)]
        viewers += [threading.Thread(target=mjpeg_viewer, args=(port, i, stop, results, ready), daemon=True)
                    for i in range(args.viewers)]
        for thread in viewers:
            thread.start()
        try:
            ready.wait(timeout=60)
        except threading.BrokenBarrierError:
            print("viewers failed to connect:", results.stream_errors[:5], file=sys.stderr)
            return 1
        server_threads = threads_of(child.pid)
        time.sleep(0.5)
        stop_referee = threading.Event()
        ref = threading.Thread(target=referee, args=(port, args, stop_referee, results), daemon=True)
        with results.lock:
            frames_before = sum(results.frames.values())
        started = time.monotonic()
        ref.start()
        while time.monotonic() - started < args.duration:
            results.rss_kb.append(rss_kb(child.pid))
            time.sleep(1.0)
        stop_referee.set()
        ref.join(10)
        elapsed = time.monotonic() - started
        time.sleep(1.0)  # let the last updates arrive before the viewers stop counting
        stop.set()
        viewing_s = time.monotonic() - started
    finally:
        child.terminate()
        child.wait(10)

    updates = len(results.post_status)
    ok_posts = sum(1 for s in results.post_status if s == 200)
    expected = updates * args.viewers
    delivered = len(results.latencies_s)
    lat_ms = [x * 1000 for x in results.latencies_s] or [float("nan")]
    post_ms = [x * 1000 for x in results.post_latencies_s] or [float("nan")]
    frames = sum(results.frames.values()) - frames_before
    rows = [
        ("viewers (SSE + MJPEG connections)", f"{args.viewers} + {args.viewers}"),
        ("duration", f"{elapsed:.1f} s"),
        ("server threads (waitress pool + main)", f"{server_threads}"),
        ("referee POSTs sent / 200 OK / refused or failed", f"{updates} / {ok_posts} / {updates - ok_posts}"),
        ("referee POST latency median / p95 / max", f"{statistics.median(post_ms):.1f} / {percentile(post_ms, .95):.1f} / {max(post_ms):.1f} ms"),
        ("state updates delivered / expected", f"{delivered} / {expected} ({100 * delivered / max(expected, 1):.1f} %)"),
        ("update latency median / p95 / max", f"{statistics.median(lat_ms):.1f} / {percentile(lat_ms, .95):.1f} / {max(lat_ms):.1f} ms"),
        ("MJPEG frames delivered (per viewer per s)", f"{frames} ({frames / max(args.viewers, 1) / viewing_s:.1f} fps; {jpeg_bytes // 1024} KiB/frame)"),
        ("stream errors", f"{len(results.stream_errors)}"),
        ("server RSS idle / peak under load", f"{rss_idle / 1024:.1f} / {max(results.rss_kb or [0]) / 1024:.1f} MiB"),
    ]
    width = max(len(name) for name, _ in rows)
    print(f"\nomweso-cam dashboard load check ({args.updates_per_s:g} updates/s, camera {args.fps:g} fps)")
    print("-" * (width + 40))
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    for error in results.stream_errors[:5]:
        print("  ", error)
    ok = ok_posts == updates and not results.stream_errors and delivered == expected
    print("RESULT:", "ok" if ok else "PROBLEMS (see above)")
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--viewers", type=int, default=100, help="SSE viewers, and as many MJPEG viewers")
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of load (default 60)")
    parser.add_argument("--updates-per-s", type=float, default=2.0, help="referee POSTs per second")
    parser.add_argument("--fps", type=float, default=5.0, help="camera frames per second (MJPEG)")
    parser.add_argument("--threads", type=int, default=256, help="waitress worker threads")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    return serve(args) if args.serve else run(args)


if __name__ == "__main__":
    sys.exit(main())
