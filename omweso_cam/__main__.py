"""`python -m omweso_cam` is the same as the `omweso-cam` command."""

from __future__ import annotations

from omweso_cam.cli import main

raise SystemExit(main())
