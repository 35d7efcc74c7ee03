"""The automatic board finder's tunables (:class:`LocaliseConfig`), shared by every stage."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LocaliseConfig:
    """Tunables of the automatic board finder."""

    work_max_side_px: int = 640  # the image is downscaled to this before searching
    min_board_area_frac: float = 0.06  # of the image area
    max_board_area_frac: float = 0.995
    min_lattice_score: float = 1.6  # pit-pattern contrast (see grid.lattice_score) to accept a segmented quad
    min_pit_lattice_score: float = 0.2  # the same, for the outline found from the pit lattice
    min_pits_seen_to_trust: int = 28  # a 4x8 lattice with this many pits seen as circles needs no colour contrast
    min_pits_in_view_to_trust: int = 20  # ... one the picture cuts, as many of its pits in view as this at least
    min_pits_seen: int = 16  # a lattice with fewer of its pits seen as circles is a guess, not a board
    # The strip between the players' halves may be wider than the rows' pitch (boards made in two
    # halves, a carved ridge): the pit lattice looks for a gap of up to max_gap_of_pitch row
    # pitches there and models one when it is at least min_gap_of_pitch (lattice._fit_gap).
    max_gap_of_pitch: float = 0.7
    min_gap_of_pitch: float = 0.1
    max_stray_circles_frac: float = 0.5  # pit-sized circles inside the lattice but off its pits, of those on them
    # The 32 pits' rims must be rounder than the ring of nodes one step beyond them by this much
    # (rim coherence: ~0.87 on pits, ~0.45-0.5 off them), and at most max_round_beyond of that
    # ring may look like pits (rim coherence over pit_rim_coherence). 72 fresh renders (seeds
    # 555001+) turned 0/90/180 degrees: board lattices step by 0.15-0.5 with at most 8% of the
    # ring round; a dotted cloth's lattice has 41-47% round; lattices on tables without a board
    # (seeds 1800001+) step by 0.01-0.02.
    min_rim_step: float = 0.1
    pit_rim_coherence: float = 0.7
    max_round_beyond: float = 0.25
    colour_clusters: tuple[int, ...] = (2, 3, 4)  # k of the k-means colour segmentations tried
    kmeans_side_px: int = 160  # segmentation runs on an image this wide
    refine_search_frac: float = 0.025  # of the board diagonal, each side of a rough edge
    refine_iterations: int = 2
    max_refined_candidates: int = 6
    # Last resort, when neither the circles nor a segmented quad showed a board: the circle search
    # again inside each of the largest segmented regions, their contrast stretched (a dark board
    # in dim light, whose pits barely differ from its wood). Believed only on a clear pit pattern.
    stretched_regions: int = 3
    stretched_max_level: float = 64.0  # only dark regions (median grey level 0..255 below this) are stretched
    stretched_min_lattice_score: float = 0.5
    # Last of all: the segmented regions that show the pit pattern best (this many, each under
    # max_rectified_area_frac of the image), warped top-down and searched for the pit lattice
    # (see search._rectified_board). rectified_pad: the quad's share of the warped image left each side.
    rectified_regions: int = 3
    max_rectified_area_frac: float = 0.9
    rectified_pad: float = 0.08
    rectified_width_px: int = 640
    min_edge_support: float = 25.0  # a segmented quad's sides must sit on edges at least this strong (Sobel units)
    min_pit_radius_frac: float = 0.012  # pit radius range searched, of the image's longer side
    max_pit_radius_frac: float = 0.06
    min_small_pit_radius_frac: float = 0.006  # second try, for small boards: radii from this up
    small_pit_search: bool = True
    pit_search_max_side_px: int = 960  # circles are searched at this size (small boards have small pits)
    hough_edge_threshold: float = 80.0  # Canny high threshold of the circle finder
    hough_min_roundness: float = 0.5  # HOUGH_GRADIENT_ALT circle "perfectness" (0..1)
    # Last circle searches, on the image stretched upright this many times: a camera 45-55
    # degrees from vertical sees the pits 0.7-0.57 as high as wide, which the circle finder
    # misses. Such a lattice needs min_oblique_lattice_score (a table without a board gave one
    # of 0.47; boards 0.9-5).
    oblique_stretches: tuple[float, ...] = (1.4, 1.9)
    min_oblique_lattice_score: float = 0.8
    # Last of the pit searches: pits as discs darker or lighter than the wood around them, where
    # their rims are too faint for the circle finder and seeds' outlines are the strongest edges
    # (dark wood, dim light). See lattice._disc_blobs. Only in the contrast-stretched dark regions.
    disc_search: bool = False
    disc_scale_px: float = 6.0  # each pit radius is searched on the image shrunk to make it this many pixels
    disc_min_response: float = 1.0  # a disc's contrast against the local contrast's RMS at its scale
    max_disc_blobs: int = 400
    disc_radius_of_pitch: float = 0.36
    retry_contrast_clip: float = 3.0  # CLAHE clip limit of the second, contrast-stretched circle search
    candidate_score_ratio: float = 0.6  # refine candidates scoring at least this share of the best
    profiles_per_side: int = 24  # outward profiles searched for each side's edge
    profile_step_of_pitch: float = 0.02  # sample step along a profile, of the pit pitch
    colour_window_of_pitch: float = 0.08  # colour compared this far inside and outside an edge point
    min_edge_points: int = 6  # a side needs at least this many edge points on one line
    # ... and at least this share of its profiles: 0.3 lets a side with a shadow, a side face or a
    # seed-coloured table along part of it keep its own edge instead of the lattice-parallel guess
    # (corners within 1% on 153 fresh renders, seeds 555001+ and 556001+: 76 -> 83; 0.2 gained one
    # more but moved three good corners by 1-3% of the diagonal).
    min_edge_inlier_frac: float = 0.3
    edge_line_tolerance_px: float = 1.5  # RANSAC inlier distance at the pit-search scale
    min_edge_colour_step: float = 6.0  # Lab units: an edge point's outside must differ this much more from the surface
    # A side's edge may turn this much from the pit lattice's prediction. 2 was tried (2026-11-30):
    # within 1% on renders 3100001+ and the stills 182 -> 186, but on renders nobody had tuned on
    # (3200001+, 3300001+, the benchmark's scan 1100001+) 131, 133, 143 -> 131, 136, 141, one board
    # more found on one set and one fewer on another, with single outlines 2-3% worse either way.
    max_edge_turn_deg: float = 4.0
    edge_support_keep: float = 0.8  # lines with this share of the best support compete on being innermost
    edge_candidate_keep: float = 0.4  # lines with this share of it may still win for alike opposite margins
    rim_margin: float = 0.6  # summed rim coherence (32 nodes) by which a lattice placement must win (~0.15 a node of a column)
    rim_steps_polished: int = 4  # placements near a lattice snapped to the circles and measured again
    candidate_separation_of_pitch: float = 0.04  # candidate lines of one side lie at least this far apart
    max_margin_difference_of_pitch: float = 0.15  # opposite margins differing more than this look for an alike pair
    # A band along the board's edge (a bevel, a chamfer) shows a second straight edge beyond the
    # innermost one on three or four sides (see outline._past_a_band); its width lies in this range (of the pit pitch) ...
    band_width_of_pitch: tuple[float, float] = (0.03, 0.2)
    band_width_spread_of_pitch: float = 0.08  # ... and three or four sides' widths lie within this range
    # A side without an edge line of its own takes the opposite side's margin when its strongest
    # gradient lies further than this from it (see outline.board_outline).
    max_fallback_margin_difference_of_pitch: float = 0.3
    min_plumb_points: int = 8  # a side takes part in the lens fit with at least this many edge points
    min_plumb_sides: int = 3  # ... and at least this many sides must
    max_lens_k: float = 0.5  # radial coefficients searched (division model, radius in units of the longer side)
    lens_search_steps: int = 5  # the sides' lines are looked for under this many distortions each way, and none
    min_lens_gain_points: int = 4  # ... and under a distortion only if it puts this many more edge points on lines
    min_straightening_px: float = 0.15  # the lens must bring the sides' RMS off-line distance down by this much
    max_straightened_ratio: float = 0.8  # ... and to at most this share of what it was
    edge_step_of_pitch: float = 0.025  # board-edge search step outward from the pits, of the pit pitch
    max_margin_of_pitch: float = 1.3  # the board's edge lies at most this far beyond the outer pit cells
    min_board_edge_strength: float = 8.0  # Sobel units: weaker gradient peaks are not board edges
    min_surface_contrast: float = 15.0  # Lab units: a side's median colour nearer the surface's looks like it
    max_unlike_inside: float = 0.4  # share of the strips just inside an edge allowed to look unlike the surface
    min_unlike_outside: float = 0.6  # share of the strips just outside it that must look unlike it
