"""Localise: find the board's four corners in a camera image (first stage after stability).

Three ways, one result type (:class:`BoardLocation`):

* :func:`find_board` - automatic and markerless: first the 4x8 lattice of round pits
  (Hough circles, again on a contrast-stretched image if need be, a lattice walk that
  steps over hidden pits, a homography; moved a column or a row, or unsheared, when
  its nodes then show rounder rims and keep their circles, see :func:`rim_coherence`;
  believed only when most of its pits are circles and no pit-sized circles lie off
  it), then each side of the board's top face as a line through edge points found
  outward from the lattice: the innermost well-supported line with the board's surface
  colour inside and another colour outside (side faces, shadows and grain lines lose),
  or a pair of supported lines giving opposite sides alike margins when the innermost
  ones do not. One radial lens distortion, fitted so that all sides come out straight
  (plumb line), bends the corners back into the image. Without a lattice: candidate
  quads from colour segmentation and edges, each checked for the pit pattern (which
  also rejects empty tables); then the lattice search again inside the largest dark
  segmented regions, their contrast stretched (a dark board in dim light); last, inside
  the segmented regions warped top-down (a steep, turned camera's elliptical pits);
* :func:`find_markers` - four printed ArUco markers (ids 0..3 = TL, TR, BR, BL
  seen from South) lying just outside the board corners;
* :func:`parse_corners` - four points given by a person.

Corners are always ordered TL, TR, BR, BL with South (the long side nearer the
bottom of the image, unless a calibration says otherwise) at the bottom.
"""

from __future__ import annotations

# One module per stage, each importing only those above it: config (the tunables), geometry
# (quads, corner order, South), markers, nodes (lattice points, rim coherence), outline (the
# board's edges around a lattice, the lens), lattice (the pit lattice, then its outline), search
# (find_board and its segmentation fallbacks).
from omweso_cam.vision.localise.config import LocaliseConfig
from omweso_cam.vision.localise.geometry import (
    SOUTH_GUESS_LEVEL,
    BoardLocation,
    CornersError,
    clockwise,
    corner_error,
    corners_within,
    order_corners,
    parse_corners,
    quad_diagonal,
    south_is_a_guess,
    validate_quad,
)
from omweso_cam.vision.localise.lattice import PitLattice, find_pit_lattice
from omweso_cam.vision.localise.markers import (
    MARKER_DICTIONARY,
    MARKER_IDS,
    find_markers,
    marker_sheet,
)
from omweso_cam.vision.localise.nodes import PIT_NODES, lattice_points, rim_coherence, rim_sectors
from omweso_cam.vision.localise.outline import image_gradients
from omweso_cam.vision.localise.search import (
    best_orientation,
    edge_support,
    find_board,
    refine_corners,
)

__all__ = [
    "MARKER_DICTIONARY",
    "MARKER_IDS",
    "PIT_NODES",
    "SOUTH_GUESS_LEVEL",
    "BoardLocation",
    "CornersError",
    "LocaliseConfig",
    "PitLattice",
    "best_orientation",
    "clockwise",
    "corner_error",
    "corners_within",
    "edge_support",
    "find_board",
    "find_markers",
    "find_pit_lattice",
    "image_gradients",
    "lattice_points",
    "marker_sheet",
    "order_corners",
    "parse_corners",
    "quad_diagonal",
    "refine_corners",
    "rim_coherence",
    "rim_sectors",
    "south_is_a_guess",
    "validate_quad",
]
