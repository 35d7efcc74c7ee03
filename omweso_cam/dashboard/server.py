"""Serve the dashboard with waitress (one process, a pool of threads), stoppable from any thread.

Every open SSE or MJPEG viewer holds one worker thread for as long as it watches,
so the pool is large (``threads``) and the app refuses streams beyond
``MAX_STREAMS`` (set to ``threads - reserved_threads``) with a 503: the
remaining threads stay free for the referee's requests and page loads.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from flask import Flask

from omweso_cam.dashboard.context import get_context


@dataclass(frozen=True)
class ServerConfig:
    """Waitress settings. ``threads`` bounds viewers: each stream holds a thread."""

    host: str = "127.0.0.1"
    port: int = 8000
    threads: int = 256
    reserved_threads: int = 16
    # Open TCP connections accepted at once (streams + page loads + keep-alive sockets).
    connection_limit: int = 1000
    # Seconds an idle keep-alive connection (no request in flight) is kept open.
    channel_timeout_s: int = 60
    # Bytes queued for one slow viewer before its stream thread waits for the socket to drain:
    # a slow MJPEG viewer then skips frames instead of piling them up in server memory.
    outbuf_high_watermark_bytes: int = 256 * 1024
    poll_interval_s: float = 0.5


#: Host names a loopback-bound dashboard answers to. Anything else (a DNS-rebinding page that
#: points its own name at 127.0.0.1) gets 400, so other web sites cannot read the camera.
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1", "[::1]")


def is_loopback(host: str) -> bool:
    return host in LOOPBACK_NAMES or host.startswith("127.")


class DashboardServer:
    """A waitress server around a dashboard app; :meth:`run` blocks until :meth:`stop`."""

    def __init__(self, app: Flask, config: ServerConfig = ServerConfig()) -> None:
        from waitress.server import create_server

        if config.threads <= config.reserved_threads:
            raise ValueError(
                f"threads ({config.threads}) must exceed reserved_threads ({config.reserved_threads})"
            )
        self.app = app
        self.config = config
        if is_loopback(config.host) and not app.config.get("TRUSTED_HOSTS"):
            app.config["TRUSTED_HOSTS"] = [*LOOPBACK_NAMES, config.host]
        context = get_context(app)
        context.max_streams = min(context.max_streams, config.threads - config.reserved_threads)
        self._stop = threading.Event()
        self._closed = False
        self._server: Any = create_server(
            app,
            host=config.host,
            port=config.port,
            threads=config.threads,
            connection_limit=config.connection_limit,
            channel_timeout=config.channel_timeout_s,
            outbuf_high_watermark=config.outbuf_high_watermark_bytes,
            ident="omweso-cam",
            clear_untrusted_proxy_headers=True,
        )

    @property
    def port(self) -> int:
        """The bound port (useful with ``port=0``)."""
        return int(self._server.effective_port)

    @property
    def host(self) -> str:
        return str(self._server.effective_host)

    @property
    def url(self) -> str:
        host = self.host
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}/"

    def run(self) -> None:
        """Serve until :meth:`stop` (or KeyboardInterrupt, which is re-raised after a clean stop)."""
        from waitress import wasyncore

        try:
            while not self._stop.is_set():
                wasyncore.loop(
                    timeout=self.config.poll_interval_s,
                    map=self._server._map,
                    use_poll=True,
                    count=1,
                )
        finally:
            self.close()

    def start_in_thread(self) -> threading.Thread:
        """Run the server in a daemon thread (tests, benchmarks); stop it with :meth:`stop`."""
        thread = threading.Thread(target=self.run, name="omweso-dashboard", daemon=True)
        thread.start()
        return thread

    def stop(self) -> None:
        """Ask :meth:`run` to return; open streams end within a poll interval."""
        get_context(self.app).shutdown.set()
        self._stop.set()

    def close(self) -> None:
        """End open streams, stop the worker threads and close every socket (idempotent)."""
        from waitress import wasyncore

        if self._closed:
            return
        self._closed = True
        get_context(self.app).shutdown.set()
        self._stop.set()
        self._server.task_dispatcher.shutdown(timeout=5)
        wasyncore.close_all(self._server._map)


def serve_session(
    session: Any,
    *,
    config: ServerConfig = ServerConfig(),
    exit_after_s: float | None = None,
    test_config: dict[str, Any] | None = None,
    announce: Any = print,
) -> int:
    """Run the dashboard around ``session`` until Ctrl-C, SIGTERM or ``exit_after_s``; returns 0.

    Binds the server, starts the session (its camera thread), prints the referee
    URL (with the token) and the viewer/overlay URLs, serves, and stops the session
    on the way out, whatever the reason. A port already in use raises OSError and a
    source that cannot be opened the session's ValueError, before anything is served.
    """
    import signal

    from omweso_cam.dashboard import create_app

    app = create_app(test_config, session=session)
    server = DashboardServer(app, config)
    try:
        session.start()
    except BaseException:
        server.close()
        raise
    token = app.config["REFEREE_TOKEN"]
    announce(f"omweso-cam dashboard on {server.url}")
    announce(f"  referee (keep private): {server.url}?token={token}")
    announce(f"  viewers (read-only):    {server.url}")
    announce(f"  OBS overlay:            {server.url}overlay")
    if session.rate_note:
        announce(f"Note: {session.rate_note}")
    announce("Press Ctrl-C to stop.")
    timer = None
    if exit_after_s is not None:
        timer = threading.Timer(exit_after_s, server.stop)
        timer.daemon = True
        timer.start()
    # Ctrl-C and SIGTERM ask the serving loop to end rather than raise into whatever the main
    # thread is doing (a KeyboardInterrupt inside the server's own bookkeeping could leave it
    # unable to stop). A second Ctrl-C interrupts at once, as Python's own handler does.
    previous: dict[int, Any] = {}

    def stop_serving(signum: int, _frame: Any) -> None:
        server.stop()
        if signum == signal.SIGINT:
            signal.signal(signal.SIGINT, previous[signal.SIGINT])

    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, stop_serving)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        if timer is not None:
            timer.cancel()
        server.close()
        session.stop()
        for number, handler in previous.items():
            signal.signal(number, handler)
    announce("omweso-cam dashboard stopped.")
    return 0
