"""Camera images: the annotated MJPEG stream and JPEG stills (annotated, and raw for calibration)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from flask import Blueprint, Response, current_app

from omweso_cam.dashboard.context import (
    get_context,
    get_session,
    open_stream_slot,
    streams_full_response,
)
from omweso_cam.dashboard.security import error_response

bp = Blueprint("video", __name__, url_prefix="/video")

BOUNDARY = "omweso-frame"


def _part(jpeg: bytes) -> bytes:
    """One frame, followed by the next boundary: browsers show a part once its end is known."""
    head = f"Content-Type: image/jpeg\r\nContent-Length: {len(jpeg)}\r\n\r\n"
    return head.encode("ascii") + jpeg + f"\r\n--{BOUNDARY}\r\n".encode("ascii")


@bp.get("/stream.mjpg")
def stream() -> Response:
    """``multipart/x-mixed-replace`` of the annotated frames, at most ``VIDEO_MAX_FPS`` per second.

    The last frame is re-sent every ``SSE_KEEPALIVE_S`` when the camera is idle, so
    closed viewers are noticed and their thread freed.
    """
    context = get_context()
    session = get_session()
    slot = open_stream_slot(context)
    if slot is None:
        return streams_full_response()
    interval_s = 1.0 / max(float(current_app.config["VIDEO_MAX_FPS"]), 0.1)
    resend_s = float(current_app.config["SSE_KEEPALIVE_S"])

    def generate() -> Iterator[bytes]:
        yield f"--{BOUNDARY}\r\n".encode("ascii")
        last: bytes | None = None
        since_sent_s = 0.0
        while not context.shutdown.is_set():
            jpeg = session.latest_jpeg()
            is_new = jpeg is not None and jpeg is not last and jpeg != last
            if jpeg is not None and (is_new or since_sent_s >= resend_s):
                last = jpeg
                since_sent_s = 0.0
                yield _part(jpeg)
            context.shutdown.wait(interval_s)
            since_sent_s += interval_s

    return slot.response(generate(), mimetype=f"multipart/x-mixed-replace; boundary={BOUNDARY}")


def _still(get: Callable[[], bytes | None], what: str) -> Response:
    jpeg = get()
    if jpeg is None:
        return error_response(404, f"no {what} frame yet")
    return Response(jpeg, mimetype="image/jpeg", headers={"Cache-Control": "no-store"})


@bp.get("/frame.jpg")
def frame() -> Response:
    """The latest annotated frame."""
    return _still(get_session().latest_jpeg, "annotated")


@bp.get("/raw.jpg")
def raw() -> Response:
    """The latest raw camera frame (for clicking calibration corners)."""
    return _still(get_session().latest_raw_jpeg, "raw")
