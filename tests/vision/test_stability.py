"""Stability monitor: stable after quiet frames, moving on change, hand on skin-coloured change; speed."""

from __future__ import annotations

import cv2
import numpy as np

from omweso_cam.vision.stability import HAND, MOVING, STABLE, StabilityConfig, StabilityMonitor
from tests.vision.drawn import draw_board


def _frame(rng: np.random.Generator) -> np.ndarray:
    return draw_board([3] * 32, rng=np.random.default_rng(1), image_size=(1280, 720), noise=0).image


def _noisy(frame: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return np.clip(frame.astype(np.int16) + rng.integers(-3, 4, frame.shape), 0, 255).astype(np.uint8)


def test_quiet_frames_become_stable() -> None:
    rng = np.random.default_rng(0)
    base = _frame(rng)
    monitor = StabilityMonitor(StabilityConfig(stable_frames=3))
    states = [monitor.update(_noisy(base, rng)) for _ in range(6)]
    assert states[:3] == [MOVING, MOVING, MOVING]
    assert states[3:] == [STABLE, STABLE, STABLE]


def test_a_moving_object_is_moving_and_a_hand_is_a_hand() -> None:
    rng = np.random.default_rng(0)
    base = _frame(rng)
    monitor = StabilityMonitor()
    for _ in range(5):
        monitor.update(_noisy(base, rng))
    shifted = base.copy()
    cv2.circle(shifted, (640, 360), 30, (30, 30, 30), -1)  # a seed-coloured object dropped in
    assert monitor.update(shifted) == MOVING
    hand = base.copy()
    cv2.ellipse(hand, (600, 300), (220, 120), 20, 0, 360, (120, 150, 200), -1)  # skin tone (BGR)
    cv2.line(hand, (700, 330), (1279, 520), (120, 150, 200), 90)  # its arm, from beyond the picture
    assert monitor.update(hand) == HAND
    # A hand held still over the board is still a hand (it differs from the last stable frame).
    assert monitor.update(hand) == HAND
    assert monitor.update(hand) == HAND
    # So is a hand held still over the watched board, its arm crossing the board's edge.
    watched = StabilityMonitor()
    watched.set_region(np.array([[256, 144], [1024, 144], [1024, 576], [256, 576]], float), (1280, 720))
    for _ in range(5):
        watched.update(_noisy(base, rng))
    assert [watched.update(hand) for _ in range(3)] == [HAND, HAND, HAND]


def test_seeds_moved_on_a_skin_coloured_board_settle_to_stable() -> None:
    # A pale board is skin-coloured; a move changes it against the last stable frame for good.
    # Those changes stay on the board (a hand's arm reaches in from beyond it): once the
    # frames are quiet again the board is stable, not a hand held still for ever.
    pale = {"board_bgr": (140, 178, 211), "bowl_bgr": (110, 150, 190)}
    before = draw_board([3] * 32, rng=np.random.default_rng(1), image_size=(1280, 720), noise=0, **pale)
    # North's far row emptied into its near row (a capture's worth of change).
    after = draw_board([0] * 8 + [6] * 8 + [3] * 16, rng=np.random.default_rng(1), image_size=(1280, 720), noise=0,
                       corners_px=before.corners_px, **pale)
    rng = np.random.default_rng(8)
    monitor = StabilityMonitor(StabilityConfig(stable_frames=2))
    monitor.set_region(np.asarray(before.corners_px, float), (1280, 720))
    states = [monitor.update(_noisy(before.image, rng)) for _ in range(4)]
    assert states[-1] == STABLE
    states = [monitor.update(_noisy(after.image, rng)) for _ in range(5)]
    assert states[0] != STABLE and states[-2:] == [STABLE, STABLE], states


def test_a_sleeve_held_still_for_a_frame_does_not_make_every_later_frame_a_hand() -> None:
    # At a few frames a second one quiet frame after a hand is stable; a sleeve (not skin) held
    # still over a pale (skin-coloured) board then became the last stable frame, and once it
    # left, the board it had covered differed from that frame, skin-coloured and reaching out
    # of the picture: a hand on every still frame after (seed 2105's 35 px default film).
    pale = {"board_bgr": (140, 178, 211), "bowl_bgr": (110, 150, 190)}
    board = draw_board([3] * 32, rng=np.random.default_rng(1), image_size=(1280, 720), noise=0, **pale).image
    sleeve = board.copy()
    cv2.line(sleeve, (700, 330), (1279, 520), (120, 60, 30), 90)  # dark blue cloth from beyond the picture
    rng = np.random.default_rng(3)
    monitor = StabilityMonitor(StabilityConfig(stable_frames=1))
    assert [monitor.update(_noisy(board, rng)) for _ in range(3)][-1] == STABLE
    assert [monitor.update(_noisy(sleeve, rng)) for _ in range(2)] == [MOVING, STABLE]
    assert monitor.update(_noisy(board, rng)) == HAND  # the sleeve leaving, over skin-coloured wood
    assert [monitor.update(_noisy(board, rng)) for _ in range(3)] == [STABLE, STABLE, STABLE]
    # A hand held still after two rests is still a hand: it differs from the board of each.
    base = _frame(rng)
    moved = base.copy()
    cv2.circle(moved, (640, 360), 30, (30, 30, 30), -1)  # a seed put down: a second rest
    hand = moved.copy()
    cv2.ellipse(hand, (600, 300), (220, 120), 20, 0, 360, (120, 150, 200), -1)  # skin tone (BGR)
    cv2.line(hand, (700, 330), (1279, 520), (120, 150, 200), 90)  # its arm, from beyond the picture
    monitor = StabilityMonitor(StabilityConfig(stable_frames=1))
    assert [monitor.update(_noisy(base, rng)) for _ in range(3)][-1] == STABLE
    assert [monitor.update(_noisy(moved, rng)) for _ in range(3)][-1] == STABLE
    assert [monitor.update(_noisy(hand, rng)) for _ in range(4)] == [HAND] * 4


def test_region_limits_what_is_watched() -> None:
    rng = np.random.default_rng(0)
    base = _frame(rng)
    monitor = StabilityMonitor(StabilityConfig(stable_frames=1))
    monitor.set_region(np.array([[256, 144], [1024, 144], [1024, 576], [256, 576]], float), (1280, 720))
    monitor.update(base)
    outside = base.copy()
    cv2.rectangle(outside, (0, 0), (150, 100), (0, 0, 255), -1)  # change off the board
    assert monitor.update(outside) == STABLE


def _shifted(frame: np.ndarray, dx: float, dy: float, angle_deg: float = 0.0) -> np.ndarray:
    h, w = frame.shape[:2]
    matrix = cv2.getRotationMatrix2D((w / 2, h / 2), angle_deg, 1.0)
    matrix[:, 2] += (dx, dy)
    return cv2.warpAffine(frame, matrix, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)


def test_camera_shake_noise_and_exposure_drift_stay_stable() -> None:
    # A real webcam: every frame shifted by up to 3 px and turned 0.1 deg, sensor noise
    # (sigma 4 levels) and a slow brightness drift. Nothing on the board changes.
    rng = np.random.default_rng(3)
    base = _frame(rng)
    monitor = StabilityMonitor(StabilityConfig(stable_frames=2))
    states = []
    for i in range(12):
        shaken = _shifted(base, *rng.uniform(-3, 3, 2), angle_deg=float(rng.uniform(-0.1, 0.1)))
        noise = rng.normal(0, 4, base.shape) + 1.5 * i  # exposure creeps up
        states.append(monitor.update(np.clip(shaken + noise, 0, 255).astype(np.uint8)))
    assert states[2:] == [STABLE] * 10, states


def test_a_seed_dropped_during_shake_is_still_seen() -> None:
    rng = np.random.default_rng(4)
    base = _frame(rng)
    monitor = StabilityMonitor(StabilityConfig(stable_frames=1))
    monitor.set_region(np.array([[256, 144], [1024, 144], [1024, 576], [256, 576]], float), (1280, 720))
    states = [monitor.update(_noisy(_shifted(base, *rng.uniform(-2, 2, 2)), rng)) for _ in range(3)]
    assert states[1:] == [STABLE, STABLE]
    dropped = base.copy()
    # One dark seed on the bare wood between pits (~1.2% of the frame width). Limitation: shake
    # tolerance hides a seed landing within ~1% of the frame width of another dark seed.
    cv2.circle(dropped, (460, 265), 16, (25, 25, 30), -1)
    assert monitor.update(_noisy(_shifted(dropped, 1.0, -1.0), rng)) == MOVING


def test_skin_coloured_board_is_not_a_hand_but_a_pale_hand_is() -> None:
    # Hands are told by skin colour AND change: a board as skin-coloured as a hand never counts.
    rng = np.random.default_rng(5)
    base = _frame(rng)
    base[:] = (110, 150, 205)  # the whole picture skin-toned (BGR)
    monitor = StabilityMonitor(StabilityConfig(stable_frames=1))
    states = [monitor.update(_noisy(base, rng)) for _ in range(4)]
    assert states[1:] == [STABLE] * 3
    board = _frame(rng)
    monitor = StabilityMonitor(StabilityConfig(stable_frames=1))
    for _ in range(3):
        monitor.update(_noisy(board, rng))
    hand = board.copy()
    cv2.ellipse(hand, (700, 420), (260, 110), -30, 0, 360, (150, 170, 215), -1)  # pale skin (BGR)
    assert monitor.update(_noisy(hand, rng)) == HAND


def test_after_a_hand_the_seeds_get_time_to_settle() -> None:
    rng = np.random.default_rng(6)
    base = _frame(rng)
    monitor = StabilityMonitor(StabilityConfig(stable_frames=1, settle_frames=2))
    for _ in range(3):
        monitor.update(_noisy(base, rng))
    hand = base.copy()
    cv2.ellipse(hand, (600, 300), (220, 120), 20, 0, 360, (120, 150, 200), -1)
    assert monitor.update(hand) == HAND
    states = [monitor.update(_noisy(base, rng)) for _ in range(5)]
    # The first frame differs from the hand frame (where the hand was); then 1 + 2 quiet frames.
    assert states[0] != STABLE and states[1:] == [MOVING, MOVING, STABLE, STABLE], states


def test_rendered_film_hand_frames_never_stable_and_still_runs_found() -> None:
    # The first 21 frames of a bundled film (set-up, two moves by hand): every hand frame is
    # not stable, and every still run (set-up / after a move) has stable frames.
    import json

    from omweso_cam.resources import samples_dir

    folder = samples_dir() / "sequences" / "illegal_sowing"
    truth = json.loads((folder / "truth.json").read_text())
    monitor = StabilityMonitor(StabilityConfig(stable_frames=1))
    said = [monitor.update(cv2.imread(str(folder / f["file"]))) for f in truth["frames"][:21]]
    hands = [i for i, f in enumerate(truth["frames"][:21]) if f["hand_visible"]]
    assert hands and all(said[i] != STABLE for i in hands)
    still = [i for i, f in enumerate(truth["frames"][:21]) if f["phase"] in ("setup", "stable")]
    assert sum(said[i] == STABLE for i in still) >= len(still) - 4  # the first of each run differs from the last hand frame


class _FakeReader:
    """Answers every read with the board at the next of the given corner sets."""

    def __init__(self, corners: list[list[list[float]]]) -> None:
        from omweso_cam.vision.pipeline import ReaderConfig

        self.calibration = None
        self.config = ReaderConfig()
        self.corners = corners
        self.reads = 0

    def at_corners(self, corners_px: np.ndarray, image_size: tuple[int, int], **kw):  # type: ignore[no-untyped-def]
        from omweso_cam.vision.pipeline import BoardReader

        return BoardReader(config=self.config).at_corners(corners_px, image_size, **kw)

    def read(self, image: np.ndarray, *, frame_index: int = 0, timestamp_s: float = 0.0):  # type: ignore[no-untyped-def]
        from omweso_cam.observation import Observation
        from omweso_cam.vision.pipeline import Reading

        corners = np.array(self.corners[min(self.reads, len(self.corners) - 1)], float)
        self.reads += 1
        counts = (4,) * 8 + (0,) * 16 + (4,) * 8
        return Reading("ok", Observation.from_counts(counts, frame_index=frame_index), counts=counts,
                       confidence=0.9, corners_px=corners)


def _processor_after(corners: list[list[list[float]]], **kw):  # type: ignore[no-untyped-def]
    from omweso_cam.runner import FrameProcessor
    from omweso_cam.vision.frames import Frame

    frame = _frame(np.random.default_rng(0))
    processor = FrameProcessor(_FakeReader(corners), StabilityMonitor(StabilityConfig(stable_frames=1)),  # type: ignore[arg-type]
                               max_reads_per_stable_run=99, lock_board=True, **kw)
    for i in range(len(corners) + 1):
        processor.process(Frame(i, i / 4, frame))
    return processor


def test_demo_locks_the_board_after_three_agreeing_reads() -> None:
    quad = [[256.0, 144.0], [1024.0, 144.0], [1024.0, 576.0], [256.0, 576.0]]
    near = [[x + 3.0, y - 2.0] for x, y in quad]  # 0.25% of the diagonal away
    processor = _processor_after([quad, near, quad])
    assert processor.reader.calibration is not None
    assert processor.reader.calibration.method == "session"
    assert processor.reader.config.check_drift  # a locked board is still checked for drift
    assert np.allclose(processor.reader.calibration.corners_px, quad)
    assert processor.reader.config.count.views == 8
    # Locked in a live session: one view a frame, within the calibrated read's budget.
    assert _processor_after([quad, near, quad], fixed_views=1).reader.config.count.views == 1
    # One read 40 px off (2.7% of the diagonal) among them: no lock yet.
    far = [[x + 40.0, y] for x, y in quad]
    processor = _processor_after([quad, far, quad])
    assert isinstance(processor.reader, _FakeReader)


def test_live_processors_read_a_calibrated_board_in_the_views_asked_for() -> None:
    from omweso_cam.runner import RunnerConfig, make_processor
    from omweso_cam.vision.calibration import Calibration

    calibration = Calibration(np.array([[10.0, 10.0], [300.0, 10.0], [300.0, 150.0], [10.0, 150.0]]), (320, 180))
    assert make_processor(calibration).reader.config.count.views == RunnerConfig().fixed_views == 8
    assert make_processor(calibration, config=RunnerConfig(fixed_views=1)).reader.config.count.views == 1
    assert make_processor(None, config=RunnerConfig(fixed_views=1)).reader.config.count.views == 8


def test_a_board_at_fixed_corners_is_read_until_every_view_was_seen() -> None:
    from omweso_cam.runner import FrameProcessor
    from omweso_cam.vision.frames import Frame

    quad = [[256.0, 144.0], [1024.0, 144.0], [1024.0, 576.0], [256.0, 576.0]]
    frame = _frame(np.random.default_rng(0))

    def reads(fixed_views: int | None, calibrated: bool) -> int:
        reader = _FakeReader([quad])
        reader.calibration = object() if calibrated else None
        reader.with_views = lambda views: reader  # type: ignore[attr-defined]
        processor = FrameProcessor(reader, StabilityMonitor(StabilityConfig(stable_frames=1)),  # type: ignore[arg-type]
                                   max_reads_per_stable_run=3, fixed_views=fixed_views)
        for i in range(20):
            processor.process(Frame(i, i / 4, frame))
        return reader.reads

    assert reads(1, calibrated=True) == 8  # one view a read: eight reads see all eight
    assert reads(4, calibrated=True) == 3  # two reads would do; never fewer than asked
    assert reads(1, calibrated=False) == reads(None, calibrated=True) == 3


def test_a_board_found_far_from_the_last_read_counts_only_once_a_second_read_agrees() -> None:
    from omweso_cam.observation import MOVING, STABLE
    from omweso_cam.runner import FrameProcessor
    from omweso_cam.vision.frames import Frame

    quad = [[256.0, 144.0], [1024.0, 144.0], [1024.0, 576.0], [256.0, 576.0]]
    wild = [[x + 200.0, y - 60.0] for x, y in quad]  # 24% of the board's diagonal away
    moved = [[x - 150.0, y] for x, y in quad]  # 17%
    nudged = [[x + 20.0, y] for x, y in moved]  # 2.3%: an ordinary localisation wobble
    column = [[x + 96.0, y] for x, y in nudged]  # the lattice a column off: 11% of the board, 6.5% of the frame
    reads = [quad, wild, quad, moved, moved, nudged, column, nudged]
    frame = _frame(np.random.default_rng(0))
    processor = FrameProcessor(_FakeReader(reads), StabilityMonitor(StabilityConfig(stable_frames=1)),  # type: ignore[arg-type]
                               max_reads_per_stable_run=99)
    statuses = [processor.process(Frame(i, i / 4, frame))[0].status for i in range(len(reads) + 1)]
    # frame 0 is the monitor's first frame (not stable yet); then one status per read
    assert statuses[1:] == [STABLE, MOVING, STABLE, MOVING, STABLE, STABLE, MOVING, STABLE]


def test_an_arm_over_a_board_small_in_the_frame_is_seen() -> None:
    # A board a quarter of the frame wide (pits about 30 px): shrunk with the whole frame to
    # the work width its pits were two or three small pixels apart, and a thin arm as dark as
    # the pits, reaching over it, stayed inside the 3x3 shake tolerance: said "stable" while
    # it moved (a rendered film, dim light, its arm not skin-coloured). The monitor now
    # watches the board and a margin around it at the work width.
    corners = np.array([[520.0, 300.0], [840.0, 300.0], [840.0, 460.0], [520.0, 460.0]])
    look = {"corners_px": corners, "image_size": (1280, 720), "noise": 0, "table_bgr": (40, 70, 40),
            "board_bgr": (110, 100, 105), "bowl_bgr": (45, 40, 45)}
    board = draw_board([3] * 32, rng=np.random.default_rng(1), **look).image
    monitor = StabilityMonitor(StabilityConfig(stable_frames=1))
    rng = np.random.default_rng(2)
    assert [monitor.update(_noisy(board, rng)) for _ in range(3)][-1] == STABLE
    # As in the runner: the board is watched once a read has found it, and stays still.
    monitor.set_region(corners, (1280, 720))
    assert monitor.update(_noisy(board, rng)) == STABLE
    said = []
    for k in range(4):  # the arm comes in from the top of the picture, sowing from pit to pit
        arm = board.copy()
        cv2.line(arm, (700 + 40 * k, 0), (690 + 40 * k, 330), (50, 45, 50), 12)
        said.append(monitor.update(_noisy(arm, rng)))
    assert STABLE not in said, said


def test_a_still_scene_without_a_board_is_searched_a_few_times_until_something_moves() -> None:
    # Every board search runs when there is no board (about a second a frame): reading each
    # still frame again would only repeat it, and leave a live camera's picture a second
    # behind; but a small board is found on some frames and not others, so one read that found
    # none is not the last. The whole frame is watched from then on, so a board put down
    # anywhere is seen.
    from omweso_cam.observation import MOVING, NO_BOARD, STABLE, Observation
    from omweso_cam.runner import FrameProcessor
    from omweso_cam.vision.frames import Frame
    from omweso_cam.vision.pipeline import Reading

    class EmptyTable(_FakeReader):
        def __init__(self, corners: list[list[list[float]]], found_from: int = 10**9) -> None:
            super().__init__(corners)
            self.found_from = found_from  # reads from this one on find the board

        def read(self, image: np.ndarray, *, frame_index: int = 0, timestamp_s: float = 0.0):  # type: ignore[no-untyped-def]
            if self.reads >= self.found_from:
                return super().read(image, frame_index=frame_index, timestamp_s=timestamp_s)
            self.reads += 1
            return Reading(NO_BOARD, Observation(frame_index, timestamp_s, NO_BOARD, detail="no board found"))

    class SizedMonitor(StabilityMonitor):
        # The runner gives the frame's size with every region, as the benchmarks' stand-ins need.
        def set_region(self, corners_px: np.ndarray | None, image_size: tuple[int, int] | None) -> None:  # type: ignore[override]
            assert image_size is not None
            super().set_region(corners_px, image_size)

    quad = [[256.0, 144.0], [1024.0, 144.0], [1024.0, 576.0], [256.0, 576.0]]
    table = _frame(np.random.default_rng(0))

    def processor_for(reader: EmptyTable) -> FrameProcessor:
        stability = SizedMonitor(StabilityConfig(stable_frames=1))
        stability.set_region(np.array(quad), (1280, 720))  # where a board was last seen
        return FrameProcessor(reader, stability, max_reads_per_stable_run=3)  # type: ignore[arg-type]

    reader = EmptyTable([quad])
    processor = processor_for(reader)
    statuses = [processor.process(Frame(i, i / 4, table))[0].status for i in range(10)]
    assert statuses[1:] == [NO_BOARD] * 9 and reader.reads == 3
    # Something moves far from the old board's place: watched, so the next still run is read again.
    moved = table.copy()
    moved[20:140, 20:140] = 255 - moved[20:140, 20:140]
    assert processor.process(Frame(10, 2.5, moved))[0].status == MOVING
    statuses = [processor.process(Frame(i, i / 4, moved))[0].status for i in range(11, 16)]
    assert statuses == [NO_BOARD] * 5 and reader.reads == 6
    # A board found on the second frame of a still run after a read that found none.
    reader = EmptyTable([quad], found_from=1)
    processor = processor_for(reader)
    statuses = [processor.process(Frame(i, i / 4, table))[0].status for i in range(4)]
    assert statuses[1:] == [NO_BOARD, STABLE, STABLE]
