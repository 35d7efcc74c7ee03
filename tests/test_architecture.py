"""The import direction of ARCHITECTURE.md: rules <- reconcile <- runner -> vision; dashboard never imports vision."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "omweso_cam"


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def _files(sub: str) -> list[Path]:
    root = PACKAGE / sub
    return sorted(root.rglob("*.py")) if root.is_dir() else [root.with_suffix(".py")]


FORBIDDEN = {
    # rules is the pure engine: standard library only, nothing of ours above it.
    "rules": ("omweso_cam.vision", "omweso_cam.reconcile", "omweso_cam.runner", "omweso_cam.dashboard",
              "omweso_cam.store", "cv2", "numpy", "flask"),
    "reconcile": ("omweso_cam.vision", "omweso_cam.runner", "omweso_cam.dashboard", "cv2", "flask"),
    "vision": ("omweso_cam.reconcile", "omweso_cam.runner", "omweso_cam.dashboard", "omweso_cam.store", "flask"),
    "dashboard": ("omweso_cam.vision", "cv2"),
    "observation": ("numpy", "cv2", "omweso_cam.vision"),
}


@pytest.mark.parametrize("sub", sorted(FORBIDDEN))
def test_import_direction(sub: str) -> None:
    bad = []
    for path in _files(sub):
        if not path.exists():
            continue
        for name in _imports(path):
            if any(name == f or name.startswith(f + ".") for f in FORBIDDEN[sub]):
                bad.append(f"{path.relative_to(PACKAGE.parent)} imports {name}")
    assert not bad, "\n".join(bad)


def test_rules_uses_only_the_standard_library() -> None:
    import sys

    for path in _files("rules"):
        for name in _imports(path):
            top = name.split(".")[0]
            assert top == "omweso_cam" or top in sys.stdlib_module_names or top == "__future__", (
                f"{path.name} imports {name}, which is not in the standard library"
            )
