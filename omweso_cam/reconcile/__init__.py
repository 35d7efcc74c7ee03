"""Reconcile readings with the rules and track a game: vision -> **reconcile/Tracker** -> store/events.

``reconcile()`` (pure scoring of one stable reading against the legal hypotheses) lives in
:mod:`omweso_cam.reconcile.scoring`; the stateful :class:`Tracker` that commits moves,
raises alarms and runs set-up, game end and match progression in
:mod:`omweso_cam.reconcile.tracker`.
"""

from __future__ import annotations

from omweso_cam.reconcile.scoring import (
    ACCEPTED,
    AMBIGUOUS,
    ILLEGAL,
    IN_PROGRESS,
    NOT_STABLE,
    UNCHANGED,
    Candidate,
    Progress,
    ReconcileConfig,
    ReconcileError,
    Reconciliation,
    TraceCache,
    fit_setup,
    reconcile,
    score_board,
)
from omweso_cam.reconcile.tracker import RefereeError, Tracker, TrackerConfig, TrackerEvent

__all__ = [
    "ACCEPTED",
    "AMBIGUOUS",
    "ILLEGAL",
    "IN_PROGRESS",
    "NOT_STABLE",
    "UNCHANGED",
    "Candidate",
    "Progress",
    "ReconcileConfig",
    "ReconcileError",
    "Reconciliation",
    "RefereeError",
    "TraceCache",
    "Tracker",
    "TrackerConfig",
    "TrackerEvent",
    "fit_setup",
    "reconcile",
    "score_board",
]
