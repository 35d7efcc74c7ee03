"""Pipeline: one camera frame -> :class:`Reading` (localise, rectify, grid, count).

``BoardReader(calibration).read(image)`` is the single entry point used by the
CLI, the runner and the benchmarks. Expected conditions (no board, a hand over
it, an unreadable frame) are statuses, never exceptions.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, replace

import cv2
import numpy as np

from omweso_cam.observation import NO_BOARD, OCCLUDED, STABLE, UNREADABLE, Observation, fit_board
from omweso_cam.vision.blur import RimBlur, rim_blur
from omweso_cam.vision.calibration import Calibration, DriftConfig, check_drift
from omweso_cam.vision.count import (
    CountConfig,
    PitCounts,
    SeedModel,
    count_seeds,
    default_seed_model,
    views_for,
)
from omweso_cam.vision.frames import decode_image
from omweso_cam.vision.grid import (
    GridConfig,
    PitGrid,
    fit_grid,
    grid_from_points,
    refine_grid,
    rim_band,
)
from omweso_cam.vision.localise import (
    PIT_NODES,
    BoardLocation,
    LocaliseConfig,
    corners_within,
    find_board,
    find_markers,
    find_pit_lattice,
    image_gradients,
    rim_sectors,
    south_is_a_guess,
)
from omweso_cam.vision.rectify import (
    FixedRectifier,
    RectifiedBoard,
    RectifyConfig,
    board_from_image,
    rectify,
)

OK = "ok"


@dataclass(frozen=True)
class ReaderConfig:
    """Configuration of the whole reading pipeline (stage configs nested)."""

    max_side_px: int = 2048  # bigger frames are downscaled first (bounded time and memory)
    min_side_px: int = 64  # smaller frames are unreadable
    try_markers: bool = True  # when the markerless finder fails
    check_drift: bool = True  # with a calibration: verify the board has not moved
    drift_check_every_frames: int = 8  # a live stream checks every Nth frame (the board rarely moves)
    # Pits smaller than this across (in the image the reader works on: frames over max_side_px
    # are shrunk first) are too few pixels to count reliably: a reading still comes back, marked
    # unreliable, with a warning in its detail. vision_bench's pit-size table (true corners, 0-6
    # seeds a pit): exact counts level off from about 36 px (78-85 %) and fall fast below it
    # (66 % at 30-36 px, 44 % under 24). README, "Camera placement".
    min_pit_diameter_px: float = 36.0
    # A board smeared by motion (camera or board moving during the exposure) is read much worse:
    # on 236 renders read at their true corners (seeds 6100000+ and 6200000+, 0-6 seeds a pit, half
    # of them smeared over up to 18 px), 85% of pits were exact without a smear, 66% with one of
    # 4-8 px, 57% at 8-12 and 40% beyond. Such a reading comes back marked unreliable when the pits'
    # rim edges are this many times wider one way than the other (vision.blur): on those seeds none
    # of 137 boards smeared under 2 px reach 1.5 and 54 of 69 smeared 8 px or more do; on 120 others
    # (6300000+) 0 of 70 and 24 of 37 (docs/vision.md, "Motion blur").
    max_rim_blur_ratio: float = 1.5
    # A board out of focus is read worse too: on 40 scenes rendered at focus blur 0-6 px (seeds
    # 12800001+, pits of 36-105 px) 0-6 seeds were exact in 92% of pits when sharp,
    # 79% at 2 px, 66% at 3, 46% at 4.5 and 31% at 6; pits of 100-150 px lose little below 4.5 px.
    # Such a reading comes back marked unreliable when the rims' width (vision.blur,
    # RimBlur.width_px) reaches max_rim_width_px and max_rim_width_of_diameter of the pits'
    # diameter. The width in px was chosen on those scenes (the least, in 0.25 px steps, reached
    # by at most one board blurred 1 px or less), the share on them, 40 more (12800101+) and 12 of
    # large pits (fewest warnings on boards read within a pit of their sharp selves plus boards left
    # unwarned though read 3 pits worse). On 40 scenes not used for either (12800201+): no board
    # blurred 1 px or less warned of 65, 32 of 36 at 3 px, 17 of 34 at 2 px; warned boards 54%
    # exact, the others 87% (docs/vision.md, "Focus blur").
    max_rim_width_px: float = 6.5
    max_rim_width_of_diameter: float = 0.10
    # ...and whatever the width in px, rims this share of the pits' diameter wide are out of focus:
    # on small pits (under 41 px, where it is under 6.5 px) a rim a sixth of the pit wide blurs
    # seeds of a fifth. The least of 0.12-0.20 that warned at most one board blurred 1 px or less
    # of 30 scenes with pits of 36-48 px (seeds 39200001+; boards blurred 0-1 px reach 0.158);
    # on 30 others (39300001+) it newly warned 5 boards (one blurred 1 px), read 58% exact
    # against 94% (docs/vision.md, "Small pits out of focus").
    max_rim_width_of_diameter_any_px: float = 0.16
    # A board too dark (or washed out) is read worse as well, and the rim measures above cannot
    # see it: their noise estimate falls to nothing on a dark frame, so every rim looks sharp. The
    # depth of the rims does: the median grey levels a rim's profile spans (RimBlur.contrast).
    # On 24 scenes rendered at 1 to 0.07 times their exposure (seeds 39000001+, true corners, 0-6
    # seeds a pit) pits were exact in 46-54% below 5 levels, 68-72% at 6-10, 82% at 10-12 and
    # 89-95% above; none of those boards was warned. The limit is the largest of 4-10 that no
    # scene at its own exposure fell under (the least was 12). On 12 scenes not used for it
    # (39100001+) boards under it read 60% exact against 76%, and none at its own exposure was
    # under it; no sample still (least 17.6) and 3 of the 264 film scenes of track_bench (6.4-8.8,
    # two of them films the tracker could not follow) are (docs/vision.md, "A board in poor light").
    min_rim_contrast: float = 10.0
    # A gap between pits looks foreign when its Lab distance from the surface exceeds
    # gap_foreign_distance (lightness counted half, and measured against a plane through the gaps'
    # own lightness: see _foreign_gaps); the board is "occluded" when occluded_gap_group such gaps
    # lie next to each other. A hand or sleeve covers neighbouring gaps; grain, a seed at a pit's
    # edge or noise makes single foreign gaps scattered over the board. Chosen on 240 renders
    # (docs/vision.md, "Finding the board"): a group of 2 at distance 20 sees 73 of 110 hands instead of
    # 55 and calls 4 of 130 clear boards occluded, as many as 3 gaps anywhere at 24 did.
    occluded_gap_group: int = 2
    # A pit whose centre lies nearer the picture's edge than this many pit radii (or beyond it) is
    # cut off by the frame: a third or more of its bowl is out of view, and its count is a guess.
    # The board is then "occluded" by the frame's edge, said as such, and not read (2026-12-04,
    # docs/vision.md "A board cut off by the picture's edge": the finder carries the board past
    # the edge and used to read the pits still in view and guess the others, or blame a hand).
    frame_edge_of_radius: float = 0.5
    gap_foreign_distance: float = 20.0
    gap_plane_keep: float = 0.6  # share of the gaps the lightness plane is fitted to (those it fits best)
    # A hard-edged cast shadow changes the gaps' lightness but not their chromaticity (within
    # shade_chromaticity of the rim's, rgb shares) and leaves the pits' rims visible; a hand
    # hides the rims it covers. Such shaded gaps do not count when the least round rim of the
    # pits beside foreign gaps keeps shade_rim_ratio of the median of the other pits' rims.
    # Chosen on 480 renders (docs/vision.md, "Finding the board"). The ratio was 0.75 until
    # 2026-11-30: a blurred board's heaped pits keep rims of 0.60-0.63 beside a cast shadow
    # against 0.86 elsewhere (seed 2028's purple film: every clean frame from the set-up on
    # was called occluded, its illegal sowing unseen); a hand leaves about 0.45. At 0.65 the
    # occlusion table of 720 renders (seeds 380000+, 390000+, 1200001+) and the sample
    # stills are as they were. A glossy board's highlight is shade too (since 2026-12-02): lighter
    # than the rim, its chromaticity within shade_chromaticity of the way from the rim's to grey
    # (docs/vision.md, "A glossy board's highlight").
    shade_chromaticity: float = 0.015
    shade_rim_ratio: float = 0.65
    # A hand the colour of the wood, or blurred by its motion so the gaps keep the wood's colour,
    # still hides the pits' rims. A pit is hidden when the four least radial of its ring's eight
    # sectors (localise.rim_sectors) keep under hidden_rim_ratio of the median pit's radial share
    # and its ring holds less gradient energy than the median pit's (a hand is smoother than the
    # rims and seeds it hides; a heap spilling over the rim is the opposite); occluded_pit_group
    # hidden pits side by side make the board occluded. Chosen on 540 renders with and without a
    # hand (seeds 4400001+, 4500001+; counts 0-7) and 360 boards of heaps up to 24 without one
    # (4600001+, 4700001+): 16 more of 242 hands seen, no clear board called occluded that was
    # not already; a ratio of 0.55 called a board of heaps occluded, and without the energy
    # condition 0.5 called four (docs/vision.md, "Pits a hand hides").
    hidden_rim_ratio: float = 0.5
    occluded_pit_group: int = 2
    # ... or whose ring's least radial half is crossed by one straight edge, as a hand's outline
    # crosses it: the gradient in those sectors keeps one orientation (structure-tensor coherence
    # at least hidden_edge_coherence; seeds heaped over a rim point every way) and one sign (its
    # mean at least hidden_edge_one_way of its mean length; wood grain's stripes alternate). A
    # contrasty hand (light skin on dark wood) puts more energy in the ring than a bare rim, which
    # the energy condition took for seeds. 0.65: the smallest of 0.6-0.95 that called no more
    # clear boards or boards of heaps occluded on renders read at their true corners (seeds
    # 15000001+, 15100001+; hands seen 103 -> 106 of 141 there); 0.5: midway between a grain
    # board that 0.65 alone called occluded (0.21, 0.34) and those hands (0.66-0.98). Not for a
    # single smooth pit (below). See docs/vision.md, "Pits a hand hides".
    hidden_edge_coherence: float = 0.65
    hidden_edge_one_way: float = 0.5
    # One hidden pit is enough when its ring is smooth: under this share of the median pit's
    # gradient energy (a hand over a single pit; seeds and grain leave edges). See docs/vision.md,
    # "Pits a hand hides".
    smooth_rim_energy_ratio: float = 0.3
    # At corners given from outside, the localiser's pit lattice is used when its centre lies
    # within this share of a pitch of the board's (see BoardReader._grid_at_corners).
    max_lattice_offcentre_of_pitch: float = 0.3
    # An Omweso board at rest holds all its 64 seeds (RULES.md §1: captured seeds change sides,
    # none leaves the board). A reading whose most likely counts hold another total is brought
    # to board_seeds the most likely way (observation.fit_board: of the boards of 64 seeds with
    # every pit within board_fit_window seeds of its own most likely count, the one the per-pit
    # likelihoods favour) when that costs at most board_total_max_nats of log-likelihood; a
    # reading further off (a set-up half laid, a dark board the counter barely sees) keeps its
    # counts. The window matters: every count keeps at least the counter's 1% spread, so without
    # it a dark still read as 2 seeds was "fitted" by 62 seeds in one pit for 7 nats. Read at
    # their true corners, renders of game positions (scene seeds 9100000+) went from 39 to 71 of
    # 150 boards read exactly, heaps of 7-12 exact 56 -> 62% (unseen style 27 -> 57 boards, 46 ->
    # 56%; sample stills, found automatically: 12 -> 22 of 38). The cut (of 4, 6, 8, 12 nats or
    # none) and then the window (1-8 seeds) were each chosen on those 150 default-style renders
    # as the smallest within 1% of the fewest pits misread (325 misread pits unfitted, 295 as
    # chosen). It cannot tell a misread board from one with seeds off it: 84 of 100 renders with
    # a pit's seeds lifted were fitted (docs/vision.md, "The 64 seeds"). None: counts as read.
    board_seeds: int | None = 64
    board_fit_window: int = 3
    board_total_max_nats: float = 12.0
    localise: LocaliseConfig = field(default_factory=LocaliseConfig)
    rectify: RectifyConfig = field(default_factory=RectifyConfig)
    grid: GridConfig = field(default_factory=GridConfig)
    count: CountConfig = field(default_factory=CountConfig)
    drift: DriftConfig = field(default_factory=DriftConfig)

    def to_dict(self) -> dict[str, object]:
        from dataclasses import asdict

        return asdict(self)


@dataclass(frozen=True, eq=False)
class Reading:
    """What one frame says about the board."""

    status: str  # "ok" | "no_board" | "occluded" | "unreadable_image"
    observation: Observation
    counts: tuple[int, ...] | None = None  # 32, image order, fitted to the board's 64 seeds (ReaderConfig.board_seeds)
    confidence: float = 0.0
    corners_px: np.ndarray | None = None  # (4, 2) TL, TR, BR, BL in the input image's pixels
    timings_ms: dict[str, float] = field(default_factory=dict)
    detail: str = ""
    method: str = ""
    grid: PitGrid | None = None
    rectified: RectifiedBoard | None = None  # in working-image pixels (see scale)
    pit_counts: PitCounts | None = None  # the counter's own output (its most likely counts may hold another total)
    scale: float = 1.0  # working image = input image * scale

    @property
    def pit_centers_px(self) -> np.ndarray | None:
        """Pit centres (32, 2) in the input image's pixels."""
        if self.grid is None or self.rectified is None:
            return None
        return self.rectified.to_image(self.grid.centers_px) / self.scale

    @property
    def board_from_input(self) -> np.ndarray | None:
        """Homography (3x3) from the input image's pixels to the rectified board's."""
        if self.rectified is None:
            return None
        return self.rectified.board_from_image @ np.diag([self.scale, self.scale, 1.0])

    def board_notation(self) -> str | None:
        """The ``R4/R3/R2/R1`` board part of the position notation."""
        if self.counts is None:
            return None
        from omweso_cam.rules import board_notation

        return board_notation(self.counts)


def grid_from_location(board: RectifiedBoard, location: BoardLocation) -> PitGrid | None:
    """The pit grid from the pits the localiser itself found (their rims, seen at camera resolution)."""
    centres = location.detail.get("pit_centers_px")
    radius = location.detail.get("pit_radius_px")
    if not isinstance(centres, np.ndarray) or not isinstance(radius, float):
        return None
    return grid_from_pits(board, centres, radius)


def grid_from_pits(board: RectifiedBoard, centres: np.ndarray, radius: float) -> PitGrid | None:
    """The pit grid from 32 pit centres and their radius in the camera image (None unless 4 rows of 8)."""
    rect = cv2.perspectiveTransform(centres.reshape(-1, 1, 2).astype(np.float64), board.board_from_image).reshape(-1, 2)
    rims = cv2.perspectiveTransform((centres + np.array([radius, 0.0])).reshape(-1, 1, 2).astype(np.float64),
                                    board.board_from_image).reshape(-1, 2)
    size = (board.image.shape[1], board.image.shape[0])
    return grid_from_points(rect, float(np.median(np.linalg.norm(rims - rect, axis=1))), size)


def _pit_axes_in_image(board: RectifiedBoard, grid: PitGrid) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pits' centres (32, 2) in the camera image the board was rectified from, and the grid's
    pit radius carried into it along the board's length and across it ((32,) each, pixels)."""
    centres = board.to_image(grid.centers_px)
    along = np.linalg.norm(board.to_image(grid.centers_px + np.array([grid.radius_px, 0.0])) - centres, axis=1)
    across = np.linalg.norm(board.to_image(grid.centers_px + np.array([0.0, grid.radius_px])) - centres, axis=1)
    return centres, along, across


def pits_cut_off(width: int, height: int, board: RectifiedBoard, grid: PitGrid, edge_of_radius: float) -> list[int]:
    """The pits (image order) whose centres lie within ``edge_of_radius`` of their radius of the edge of the
    ``width`` x ``height`` camera image ``board`` was rectified from, or beyond it."""
    centres, along, across = _pit_axes_in_image(board, grid)
    keep = edge_of_radius * np.minimum(along, across)
    inside = ((centres[:, 0] >= keep) & (centres[:, 0] <= width - 1 - keep)
              & (centres[:, 1] >= keep) & (centres[:, 1] <= height - 1 - keep))
    return [int(i) for i in np.flatnonzero(~inside)]


def cut_off_detail(cut: list[int]) -> str:
    """What a reading says of the pits ``cut`` (:func:`pits_cut_off`), and what to do."""
    from omweso_cam.rules import square_name

    names = ", ".join(square_name(i) for i in cut)
    return (f"{len(cut)} {'pit' if len(cut) == 1 else 'pits'} ({names}) cut off by the edge of the picture (move or "
            "turn the camera, or zoom out, so that the whole board is in view)")


def board_rim_blur(image: np.ndarray, board: RectifiedBoard, grid: PitGrid) -> RimBlur:
    """:func:`vision.blur.rim_blur` of the pits at ``grid`` in ``image``, the working camera image
    ``board`` was rectified from (each pit's radius: the mean of its two axes there)."""
    centres, along, across = _pit_axes_in_image(board, grid)
    return rim_blur(image, centres, (along + across) / 2.0)


#: How ``count_warnings`` begins its warnings about pits too small, a board smeared by motion, one
#: out of focus and one in poor light (``evaluate`` and the benchmarks tell them apart).
SMALL_WARNING = "board small in the image"
BLUR_WARNING = "board blurred by motion"
FOCUS_WARNING = "board out of focus"
LIGHT_WARNING = "board in poor light"


def count_warnings(image: np.ndarray, board: RectifiedBoard, grid: PitGrid, config: ReaderConfig) -> list[str]:
    """Why counts read from ``board`` at ``grid`` deserve no trust (none: an empty list): pits too small
    in the camera image (``min_pit_diameter_px``), a board smeared by motion (``max_rim_blur_ratio``)
    or else out of focus (``max_rim_width_px``, ``max_rim_width_of_diameter_any_px``; a smear widens
    the rims too, and one warning is enough), a board in poor light, too dark or too flat
    (``min_rim_contrast``). ``image`` is the working camera image the board was rectified from."""
    warnings = []
    diameter = pit_diameter_px(board, grid)
    if diameter < config.min_pit_diameter_px:
        warnings.append(f"{SMALL_WARNING}: pits about {diameter:.0f} px across, counts are unreliable "
                        f"below {config.min_pit_diameter_px:.0f} (move the camera closer or use a higher resolution)")
    blur = board_rim_blur(image, board, grid)
    if blur.ratio >= config.max_rim_blur_ratio:
        warnings.append(f"{BLUR_WARNING}: pit rims {blur.ratio:.1f} times wider one way than the other, "
                        "counts are unreliable (steady the camera, or light the board for a shorter exposure)")
    elif blur.width_px >= min(max(config.max_rim_width_px, config.max_rim_width_of_diameter * diameter),
                              config.max_rim_width_of_diameter_any_px * diameter):
        warnings.append(f"{FOCUS_WARNING}: pit rims about {blur.width_px:.0f} px wide, counts are unreliable "
                        "(focus the camera on the board)")
    if blur.contrast < config.min_rim_contrast:
        warnings.append(f"{LIGHT_WARNING}: pit rims only {blur.contrast:.0f} grey levels deep, counts are unreliable "
                        "(light the board well, set the camera's exposure so it is neither dark nor washed out, "
                        "and focus it on the board)")
    return warnings


#: How ``orientation_warnings`` begins its warning about a board lying across the picture.
SOUTH_WARNING = "board across the picture"


def orientation_warnings(location: BoardLocation) -> list[str]:
    """Why the pits' places may be turned round (none: an empty list): a board found on its own that lies
    across the picture, where which long side is South was a guess (:func:`localise.south_is_a_guess`).
    Corners given by hand, by markers or by a calibration say where South is. The counts are then
    distrusted as a small board's are: read turned round, every pit holds another pit's count."""
    if location.method != "auto" or not south_is_a_guess(location.corners_px):
        return []
    return [f"{SOUTH_WARNING}: its long sides lie level, so which is South is a guess and the board may be read "
            "turned round (give its corners with South at the bottom: `calibrate corners --corners` or the "
            "dashboard's calibration page; or turn the camera so that a long side faces the bottom of the picture)"]


def pit_diameter_px(board: RectifiedBoard, grid: PitGrid) -> float:
    """Median pit diameter in the camera image the board was rectified from (pixels, along the board)."""
    return 2.0 * float(np.median(_pit_axes_in_image(board, grid)[1]))


def prepare_image(image: np.ndarray | None, config: ReaderConfig) -> tuple[np.ndarray | None, float, str]:
    """(BGR uint8 working image, scale, problem) for any array the caller hands in."""
    if image is None or not isinstance(image, np.ndarray) or image.size == 0:
        return None, 1.0, "no image data"
    image, problem = _as_8_bit(image)
    if image is None:
        return None, 1.0, problem
    if image.ndim == 2:
        image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    elif image.ndim == 3 and image.shape[2] == 4:
        image = cv2.cvtColor(image, cv2.COLOR_BGRA2BGR)
    elif image.ndim == 3 and image.shape[2] == 1:
        image = cv2.cvtColor(image[..., 0], cv2.COLOR_GRAY2BGR)
    elif image.ndim != 3 or image.shape[2] != 3:
        return None, 1.0, f"unsupported image shape {image.shape}"
    h, w = image.shape[:2]
    if min(h, w) < config.min_side_px:
        return None, 1.0, f"image too small ({w}x{h}, need at least {config.min_side_px} px a side)"
    scale = 1.0
    if max(h, w) > config.max_side_px:
        scale = config.max_side_px / max(h, w)
        image = cv2.resize(image, (max(1, round(w * scale)), max(1, round(h * scale))), interpolation=cv2.INTER_AREA)
    return np.ascontiguousarray(image), scale, ""


def _as_8_bit(image: np.ndarray) -> tuple[np.ndarray | None, str]:
    """(8-bit image, problem) of 8-bit, 16-bit or floating-point pixels (floats read as 0..1 when
    none is above 1, else as 0..255); other pixel types are refused."""
    if image.dtype == np.uint8:
        return image, ""
    if image.dtype == np.uint16:
        return (image >> 8).astype(np.uint8), ""
    if np.issubdtype(image.dtype, np.floating) and np.all(np.isfinite(image)):
        return np.clip(image * (255.0 if image.max() <= 1.0 else 1.0), 0, 255).astype(np.uint8), ""
    return None, f"unsupported pixel type {image.dtype}"


class BoardReader:
    """Reads boards from frames; keeps what it learnt (grid, moved calibration) between frames."""

    def __init__(self, calibration: Calibration | None = None, *, config: ReaderConfig = ReaderConfig(),
                 seed_model: SeedModel | None = None) -> None:
        self.calibration = calibration
        self.config = config
        self._seed_model = seed_model
        self._undistort_maps: tuple[tuple[int, int], np.ndarray, np.ndarray] | None = None
        self._grid_cache: dict[tuple[float, ...], PitGrid] = {}
        self._rectifier: FixedRectifier | None = None  # maps of the calibrated board, built on its first frame
        self._frames_since_drift_check = 0

    @property
    def seed_model(self) -> SeedModel:
        """The seed model in use: given explicitly, else the calibration's, else the default."""
        if self._seed_model is not None:
            return self._seed_model
        if self.calibration is not None and self.calibration.seed_model is not None:
            return self.calibration.seed_model
        return default_seed_model()  # loaded once per process (cached there)

    def at_corners(self, corners_px: np.ndarray, image_size: tuple[int, int], *, method: str = "manual",
                   check_drift: bool = False) -> BoardReader:
        """A reader of the board held at fixed corners (TL, TR, BR, BL in a ``image_size`` (w, h) frame).

        The one way to read at given corners (``read --corners``, ``evaluate
        --use-truth-corners``, a live session locking the board): this reader's config
        and seed model, no localisation; the drift check only when asked. The corners
        are in the frame's own pixels (a calibration's undistortion is not applied).
        """
        calibration = Calibration(np.asarray(corners_px, np.float64), image_size, method=method)
        config = self.config if self.config.check_drift == check_drift else replace(self.config, check_drift=check_drift)
        return BoardReader(calibration, config=config, seed_model=self.seed_model)

    def with_views(self, views: int) -> BoardReader:
        """This reader averaging ``views`` of the counter's eight views of each pit (see
        :attr:`CountConfig.views`); fewer views cost less time per frame."""
        if views == self.config.count.views:
            return self
        config = replace(self.config, count=replace(self.config.count, views=views))
        return BoardReader(self.calibration, config=config, seed_model=self._seed_model)

    def _undistort(self, image: np.ndarray) -> np.ndarray:
        intr = self.calibration.intrinsics if self.calibration else None
        if intr is None:
            return image
        h, w = image.shape[:2]
        if self._undistort_maps is None or self._undistort_maps[0] != (w, h):
            from omweso_cam.vision.intrinsics import undistort_maps

            m1, m2 = undistort_maps(intr, (w, h))
            self._undistort_maps = ((w, h), m1, m2)
        return cv2.remap(image, self._undistort_maps[1], self._undistort_maps[2], cv2.INTER_LINEAR)

    def locate(self, image: np.ndarray) -> tuple[BoardLocation | None, str]:
        """Board corners in the working image: calibration (checked for drift), else auto, else markers."""
        detail = ""
        moved_score = 0.0
        if self.calibration is not None:
            h, w = image.shape[:2]
            corners = self.calibration.corners_for((w, h))
            due = self._frames_since_drift_check % max(1, self.config.drift_check_every_frames) == 0
            self._frames_since_drift_check += 1
            if not self.config.check_drift or not due:
                return BoardLocation(corners, "calibration", 1.0), ""
            drift = check_drift(image, self.calibration, config=self.config.drift)
            if not drift.moved:
                return BoardLocation(corners, "calibration", drift.score), ""
            moved_score = drift.score
            detail = f"board moved since calibration (pit pattern score {moved_score:.2f}); re-localised"
        found = find_board(image, config=self.config.localise)
        if found is None and self.config.try_markers:
            found = find_markers(image)
        if detail:
            if found is not None and corners_within(found.corners_px, corners, self.config.drift.same_place):
                # The pattern looked weak but the board is where it was: it has not moved.
                return BoardLocation(corners, "calibration", moved_score), ""
            self._frames_since_drift_check = 0  # moved: check again on the very next frame
        if found is None and detail:
            detail = f"board moved since calibration and was not found again (score {moved_score:.2f})"
        return found, detail

    def read(self, image_bgr: np.ndarray | None, *, frame_index: int = 0, timestamp_s: float = 0.0) -> Reading:
        """Read one frame (any size, BGR/gray/BGRA uint8) into a :class:`Reading`."""
        t0 = time.perf_counter()
        timings: dict[str, float] = {}

        def lap(name: str, since: float) -> float:
            now = time.perf_counter()
            timings[name] = round((now - since) * 1000.0, 3)
            return now

        def finish(status: str, detail: str, **kw: object) -> Reading:
            timings["total"] = round((time.perf_counter() - t0) * 1000.0, 3)
            obs_status = {OK: STABLE}.get(status, status)
            obs = Observation(frame_index, timestamp_s, obs_status, kw.pop("log_likelihoods", None),  # type: ignore[arg-type]
                              detail=detail, unreliable=str(kw.pop("unreliable", "")))
            return Reading(status, obs, timings_ms=timings, detail=detail, **kw)  # type: ignore[arg-type]

        image, scale, problem = prepare_image(image_bgr, self.config)
        if image is None:
            return finish(UNREADABLE, problem)
        image = self._undistort(image)
        t = lap("prepare", t0)

        location, detail = self.locate(image)
        t = lap("localise", t)
        if location is None:
            return finish(NO_BOARD, detail or "no board found")
        corners_out = location.corners_px / scale

        board = self.rectify_board(image, location)
        t = lap("rectify", t)

        fresh_grid = location.method == "calibration" and self._grid_key(location) not in self._grid_cache
        grid = self.grid_for(board, location, image)
        t = lap("grid", t)

        cut = pits_cut_off(image.shape[1], image.shape[0], board, grid, self.config.frame_edge_of_radius)
        if cut:
            return finish(OCCLUDED, cut_off_detail(cut), corners_px=corners_out, grid=grid, rectified=board,
                          scale=scale, method=location.method)

        foreign, shaded = self._foreign_gaps(board.image, grid)
        rims = _Rims.of(board.image, grid)
        group = _largest_group(foreign, _GAP_NEIGHBOURS)
        if group >= self.config.occluded_gap_group and self._rims_kept(rims, foreign):
            group = _largest_group(foreign & ~shaded, _GAP_NEIGHBOURS)  # a shadow, not a hand (unless other gaps say so)
        edge = (self.config.hidden_edge_coherence, self.config.hidden_edge_one_way)
        hidden = _largest_group(rims.hidden(self.config.hidden_rim_ratio, edge=edge), _PIT_NEIGHBOURS)
        smooth = int(rims.hidden(self.config.hidden_rim_ratio, self.config.smooth_rim_energy_ratio).sum())
        if group >= self.config.occluded_gap_group or hidden >= self.config.occluded_pit_group or smooth:
            if fresh_grid:
                self._grid_cache.clear()  # found through a hand: found again on the next frame
            why = (f"{group} neighbouring gaps between pits hidden" if group >= self.config.occluded_gap_group
                   else f"the rims of {hidden} neighbouring pits hidden" if hidden >= self.config.occluded_pit_group
                   else f"the rim of {'a pit' if smooth == 1 else f'{smooth} pits'} hidden under something smooth")
            return finish(OCCLUDED, f"{why} (hand or object over the board)",
                          corners_px=corners_out, grid=grid, rectified=board, scale=scale, method=location.method)

        # Fewer views than eight: each frame turns to the next ones, so the still frames a
        # tracker averages see different views (count.CountConfig.views).
        views = views_for(self.config.count.views, frame_index * self.config.count.views)
        pit_counts = count_seeds(board.image, grid, model=self.seed_model, config=self.config.count,
                                 camera_bgr=image, board_from_image=board.board_from_image, views=views)
        t = lap("count", t)
        unreliable = "; ".join(count_warnings(image, board, grid, self.config) + orientation_warnings(location))
        counts, total_note = self.board_counts(pit_counts)
        detail = "; ".join(filter(None, (detail, unreliable, total_note)))
        ll = tuple(tuple(row) for row in pit_counts.log_likelihoods.tolist())
        return finish(OK, detail, log_likelihoods=ll, unreliable=unreliable, counts=counts,
                      confidence=round(pit_counts.confidence, 4), corners_px=corners_out, grid=grid,
                      rectified=board, pit_counts=pit_counts, scale=scale, method=location.method)

    def board_counts(self, pit_counts: PitCounts) -> tuple[tuple[int, ...], str]:
        """The counter's most likely counts, brought to the board's seeds when that costs little (see
        :attr:`ReaderConfig.board_seeds`), and a note for the reading's detail when they hold another total."""
        counts = pit_counts.counts
        seeds = self.config.board_seeds
        if seeds is None or sum(counts) == seeds:
            return counts, ""
        fit = fit_board(pit_counts.log_likelihoods.tolist(), seeds, window=self.config.board_fit_window,
                        max_cost=self.config.board_total_max_nats)
        read = f"{sum(counts)} seeds read"
        if fit is None:
            return counts, f"{read}, too far from the board's {seeds} to fit (seeds off the board, or misread)"
        from omweso_cam.rules import square_name

        changed = ", ".join(square_name(i) for i, (a, b) in enumerate(zip(counts, fit, strict=True)) if a != b)
        return fit, f"{read}; brought to the board's {seeds} in {changed}"

    def rectify_board(self, image: np.ndarray, location: BoardLocation) -> RectifiedBoard:
        """The top-down board image at ``location`` (the calibrated size when reading at calibrated corners)."""
        if location.method == "calibration" and self.calibration is not None:
            # The calibrated board stays put: its pixel maps are built once, each frame is one remap.
            size = self.calibration.rectified_size_px()
            frame = (image.shape[1], image.shape[0])
            r = self._rectifier
            if (r is None or r.size_px != size or r.image_size != frame
                    or not np.allclose(r.board_from_image, board_from_image(location.corners_px, size))):
                self._rectifier = r = FixedRectifier.of(location.corners_px, size, frame)
            return r.rectify(image)
        return rectify(image, location.corners_px, config=self.config.rectify)

    def grid_for(self, board: RectifiedBoard, location: BoardLocation, image: np.ndarray | None = None) -> PitGrid:
        """The pit grid: the calibration's, else found once per calibrated quad, else the localiser's pits
        refined on the rectified image, else found for these corners (:meth:`_grid_at_corners`)."""
        size = (board.image.shape[1], board.image.shape[0])
        if location.method == "calibration" and self.calibration is not None:
            if self.calibration.pit_grid is not None:
                return self.calibration.pit_grid.scaled(size)
            key = self._grid_key(location)
            if key not in self._grid_cache:
                self._grid_cache.clear()
                self._grid_cache[key] = self._grid_at_corners(board, image)
            return self._grid_cache[key]
        lattice = grid_from_location(board, location)
        if lattice is None:
            return self._grid_at_corners(board, image)
        # The localiser's lattice is one homography: each pit is then measured on the top-down image.
        return refine_grid(board.image, lattice, config=self.config.grid)

    @staticmethod
    def _grid_key(location: BoardLocation) -> tuple[float, ...]:
        return tuple(np.round(location.corners_px.ravel(), 1))

    def _grid_at_corners(self, board: RectifiedBoard, image: np.ndarray | None) -> PitGrid:
        """The pit grid of a board at corners given from outside (clicked, markers, a calibration).

        The localiser's pit lattice (round rims seen at camera resolution) when it finds one
        on this board, centred on it (a board's margins are alike: a lattice a column or row
        off is half a pitch off centre); else a lattice fitted to the top-down image alone
        (:func:`fit_grid`, whose margin search on a small copy misplaces more pits). Renders
        read at their true corners: boards whose median pit is more than 0.15 radii off 9 -> 5
        of 44 (seeds 2500000+, where the centring rule was added), 6 -> 4 of 45 (2600000+,
        checked after); exact counts 86.8% -> 88.8% and 88.8% -> 90.5%.
        """
        if image is not None:
            found = find_pit_lattice(image, config=self.config.localise)
            lattice = None if found is None else grid_from_pits(board, found.centres, found.radius)
            if lattice is not None:
                w, h = board.image.shape[1], board.image.shape[0]
                c = lattice.centers_px.reshape(4, 8, 2)
                pitch = np.array([np.median(np.diff(c[..., 0], axis=1)), np.median(np.diff(c[..., 1], axis=0))])
                offcentre = np.abs(lattice.centers_px.mean(axis=0) - (w / 2, h / 2)) / pitch
                if np.all(offcentre <= self.config.max_lattice_offcentre_of_pitch):
                    return refine_grid(board.image, lattice, config=self.config.grid)
        return fit_grid(board.image, config=self.config.grid)

    def _foreign_gaps(self, rectified: np.ndarray, grid: PitGrid) -> tuple[np.ndarray, np.ndarray]:
        """Which of the 49 between-pit gaps (:data:`GAP_NODES` order) have a colour far from the board surface,
        and which of those differ only in lightness (the surface's chromaticity: shade or light).

        Hue (Lab a, b) is compared with the bare surface along the board's rim. Lightness is
        compared with a plane fitted through the gaps' own lightness, robustly (refitted to the
        ``gap_plane_keep`` share it fits best), so a lamp's gradient or a soft shadow across the
        board is not foreign while a hand, covering some gaps and not others, stands out of it.
        A hard-edged shadow does too (a plane cannot follow its step), but changes lightness
        alone: gaps whose chromaticity is the rim's are returned as shaded as well.
        """
        c = grid.centers_px.reshape(4, 8, 2)
        # In the half-resolution image: plenty for "is this patch still wood?". Only the pixels
        # of the rim band and of the gaps' patches are converted (a third of the time of the
        # whole image; each conversion is per pixel, so the numbers are the same).
        gaps = _gap_points(c) / 2
        small = cv2.resize(rectified, (rectified.shape[1] // 2, rectified.shape[0] // 2), interpolation=cv2.INTER_AREA)
        rim = np.median(_lab_and_shares(rim_band(small)), axis=0)
        h, w = small.shape[:2]
        half = max(1, int(0.06 * grid.radius_px))
        centre = np.round(gaps).astype(int)  # (x, y) per gap
        if (centre >= half).all() and (centre[:, 0] < w - half).all() and (centre[:, 1] < h - half).all():
            # Every patch lies inside the image (the usual case): all medians at once.
            offsets = np.arange(-half, half + 1)
            ys = centre[:, 1, None, None] + offsets[None, :, None]
            xs = centre[:, 0, None, None] + offsets[None, None, :]
            values = np.median(_lab_and_shares(small[ys, xs]).reshape(len(centre), -1, len(rim)), axis=1) - rim
        else:
            patches = [small[max(0, yi - half) : min(h, yi + half + 1), max(0, xi - half) : min(w, xi + half + 1)]
                       for xi, yi in centre]
            values = np.array([np.median(_lab_and_shares(p), axis=0) - rim if p.size else np.zeros(len(rim))
                               for p in patches])
        lightness = values[:, 0] - _robust_plane(gaps / (w, h), values[:, 0], self.config.gap_plane_keep)
        # Lightness counts half: shading varies more than hue across a wooden board.
        distance = np.sqrt(0.25 * lightness**2 + values[:, 1] ** 2 + values[:, 2] ** 2)
        foreign = distance > self.config.gap_foreign_distance
        # Lightness alone: a shadow's step (either side of it may be the one the plane calls foreign).
        # Or a glossy board's highlight, lighter than the rim, which adds the light's own colour: near
        # white once the camera has balanced it, so its chromaticity lies between the rim's and grey.
        shares = values[:, 3:]
        to_grey = 1.0 / 3.0 - rim[3:]
        along = np.clip(shares @ to_grey / max(float(to_grey @ to_grey), 1e-12), 0.0, 1.0)
        highlight = (values[:, 0] > 0) & (np.linalg.norm(shares - along[:, None] * to_grey, axis=1)
                                          < self.config.shade_chromaticity)
        shaded = foreign & ((np.linalg.norm(shares, axis=1) < self.config.shade_chromaticity) | highlight)
        return foreign, shaded

    def _rims_kept(self, rims: _Rims, foreign: np.ndarray) -> bool:
        """Whether the pits beside the ``foreign`` gaps keep round rims (see ``ReaderConfig.shade_rim_ratio``)."""
        beside = _GAP_PITS[foreign].any(axis=0)
        if beside.all() or not beside.any():
            return False
        round_ = rims.radial.mean(axis=1)
        return bool(round_[beside].min() >= self.config.shade_rim_ratio * np.median(round_[~beside]))


@dataclass(frozen=True)
class _Rims:
    """The 32 pits' rims on the rectified board: per pit and sector of its ring (localise.rim_sectors),
    the share of the gradient's energy along the radius, the energy, the gradient's coherence and how
    much it points one way."""

    radial: np.ndarray  # (32, 8)
    energy: np.ndarray  # (32, 8)
    coherence: np.ndarray  # (32, 8)
    one_way: np.ndarray  # (32, 8)

    @classmethod
    def of(cls, rectified: np.ndarray, grid: PitGrid) -> _Rims:
        gx, gy = image_gradients(cv2.cvtColor(rectified, cv2.COLOR_BGR2GRAY))
        lattice_to_board, _ = cv2.findHomography(PIT_NODES, grid.centers_px)
        return cls(*rim_sectors(gx, gy, lattice_to_board, PIT_NODES, grid.radius_px))

    def hidden(self, ratio: float, energy_ratio: float = 1.0, edge: tuple[float, float] | None = None) -> np.ndarray:
        """Pits whose rim is hidden (see ``ReaderConfig.hidden_rim_ratio``) and whose ring holds
        less than ``energy_ratio`` of the median pit's gradient energy or, with ``edge`` (coherence,
        one way), whose least radial sectors show a single straight edge: their gradient at least
        that coherent and that much one way, on average: (32,) bool."""
        least_sectors = np.argsort(self.radial, axis=1)[:, : self.radial.shape[1] // 2]

        def least_mean(values: np.ndarray) -> np.ndarray:
            return np.asarray(np.take_along_axis(values, least_sectors, axis=1).mean(axis=1))

        least = least_mean(self.radial)
        energy = self.energy.mean(axis=1)
        covered = energy < energy_ratio * np.median(energy)
        if edge is not None:
            covered |= (least_mean(self.coherence) >= edge[0]) & (least_mean(self.one_way) >= edge[1])
        return np.asarray((least < ratio * np.median(least)) & covered)


def _lab_and_shares(bgr: np.ndarray) -> np.ndarray:
    """BGR uint8 pixels (any shape, last axis 3) -> (N, 6) float32: Lab, then chromaticity (rgb shares,
    what shade does not change)."""
    px = np.ascontiguousarray(bgr, np.uint8).reshape(-1, 1, 3)
    lab = cv2.cvtColor(px, cv2.COLOR_BGR2LAB).reshape(-1, 3).astype(np.float32)
    shares = px.reshape(-1, 3).astype(np.float32) + 1.0
    shares /= shares.sum(axis=1, keepdims=True)
    return np.concatenate([lab, shares], axis=1)


def _gap_points(centres: np.ndarray) -> np.ndarray:
    """The between-pit gaps of pit centres (4, 8, 2): the middle of every 2x2 block, then of each pair along a row."""
    c = centres
    return np.concatenate([((c[:3, :7] + c[1:, 1:]) / 2).reshape(-1, 2), ((c[:, :7] + c[:, 1:]) / 2).reshape(-1, 2)])


#: The 49 gaps between the pits in lattice units (column, row); which gaps are neighbours (a
#: block's middle and the pairs' middles half a pitch above and below it, i.e. along the gap
#: between two columns), and which pits (:data:`PIT_NODES`) each gap lies beside.
GAP_NODES = _gap_points(PIT_NODES.reshape(4, 8, 2))
_GAP_NEIGHBOURS = np.linalg.norm(GAP_NODES[:, None] - GAP_NODES[None], axis=2) <= 0.75
_GAP_PITS: np.ndarray = np.all(np.abs(GAP_NODES[:, None] - PIT_NODES[None]) <= 0.5, axis=2)
#: Pits side by side in a row or a column.
_PIT_NEIGHBOURS = np.abs(PIT_NODES[:, None] - PIT_NODES[None]).sum(axis=2) == 1


def _largest_group(marked: np.ndarray, neighbours: np.ndarray) -> int:
    """How many nodes the largest group of marked neighbouring ones holds (0 when none is marked)."""
    unvisited = np.asarray(marked, bool).copy()
    largest = 0
    for start in np.flatnonzero(unvisited).tolist():
        if not unvisited[start]:
            continue
        unvisited[start] = False
        stack: list[int] = [start]
        size = 0
        while stack:
            node = stack.pop()
            size += 1
            joined = np.flatnonzero(neighbours[node] & unvisited)
            unvisited[joined] = False
            stack.extend(joined.tolist())
        largest = max(largest, size)
    return largest


def _robust_plane(xy: np.ndarray, values: np.ndarray, keep: float, rounds: int = 3) -> np.ndarray:
    """The plane a + b x + c y through ``values`` at points ``xy``, refitted to the ``keep`` share it fits best."""
    design = np.column_stack([np.ones(len(xy)), xy])
    use = np.ones(len(xy), bool)
    for _ in range(rounds):
        coef = np.linalg.lstsq(design[use], values[use], rcond=None)[0]
        misfit = np.abs(values - design @ coef)
        use = misfit <= np.quantile(misfit, keep)
    return np.asarray(design @ coef)


# --------------------------------------------------------------------------- files

#: Files bigger than this are not decoded (bounded memory and time per image).
MAX_FILE_BYTES = 200 * 1024 * 1024
#: Decoded images with more pixels than this are refused before decoding when the header says so.
MAX_PIXELS = 120_000_000


def _header_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG or JPEG header, without decoding; None if unknown."""
    if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
        return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    if data[:2] == b"\xff\xd8":
        i = 2
        while i + 9 < len(data):
            if data[i] != 0xFF:
                return None
            marker = data[i + 1]
            length = int.from_bytes(data[i + 2 : i + 4], "big")
            if marker in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
                return int.from_bytes(data[i + 7 : i + 9], "big"), int.from_bytes(data[i + 5 : i + 7], "big")
            i += 2 + length
    return None


#: Brands of an ISO media file's ``ftyp`` box that make it a HEIF/HEIC (or AVIF) still image:
#: what phones save photos as by default, and OpenCV's wheels do not read.
_HEIF_BRANDS = {b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis", b"mif1", b"msf1", b"avif", b"avis"}


def _is_heif(data: bytes) -> bool:
    return len(data) >= 12 and data[4:8] == b"ftyp" and data[8:12] in _HEIF_BRANDS


def load_image(path: str) -> tuple[np.ndarray | None, str]:
    """(8-bit BGR image, problem): never raises for bad files; problem is "" when it loaded.

    A photo is turned the way its EXIF orientation says, as image viewers show it (a phone
    held upright stores its pixels sideways): corners and South then refer to the picture
    the user sees. Huge JPEGs are decoded at reduced resolution (the pipeline downscales
    anyway).
    """
    if os.path.isdir(path):
        return None, "a folder, not an image file"
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        return None, f"cannot read file: {exc.strerror or exc}"
    if not data:
        return None, "empty file"
    if len(data) > MAX_FILE_BYTES:
        return None, f"file larger than {MAX_FILE_BYTES // (1024 * 1024)} MB"
    # Not IMREAD_UNCHANGED: that ignores the EXIF orientation. IMREAD_ANYDEPTH keeps 16-bit and
    # float samples (a TIFF of 32-bit floats, as HDR and scientific cameras write, which the 8-bit
    # decode refuses); they are brought to 8 bits below, as 16-bit ones always were.
    flags = cv2.IMREAD_COLOR | cv2.IMREAD_ANYDEPTH
    size = _header_size(data)
    if size is not None:
        pixels = size[0] * size[1]
        if pixels > 4 * MAX_PIXELS or pixels == 0:
            return None, f"image of {size[0]}x{size[1]} pixels refused"
        if pixels > MAX_PIXELS:
            if data[:2] != b"\xff\xd8":
                return None, f"image of {size[0]}x{size[1]} pixels refused"
            flags = cv2.IMREAD_REDUCED_COLOR_4
    try:
        image = decode_image(np.frombuffer(data, np.uint8), flags)
    except cv2.error as exc:
        return None, f"cannot decode image: {exc.err}"
    if image is None:
        if _is_heif(data):
            return None, ("a HEIC/HEIF photo, which OpenCV cannot decode: save it as JPEG (on an iPhone, "
                          "Settings > Camera > Formats > Most Compatible takes JPEGs)")
        return None, "not a readable image (corrupt, truncated or unknown format)"
    image, problem = _as_8_bit(image)
    return (None, f"not a readable image ({problem})") if image is None else (image, "")
