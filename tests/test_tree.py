"""The tree itself: nothing a merge left behind."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARKER = re.compile(r"^(<{7} |={7}$|>{7} )", re.MULTILINE)
SKIP = {"node_modules", ".venv", ".git", "__pycache__", "site"}
SUFFIXES = {".py", ".md", ".toml", ".json", ".cfg", ".yaml", ".yml", ""}


def _texts() -> list[Path]:
    found = [ROOT / "README.md"]
    for top in ("src", "docs", "tests", "deploy", "configs", "conformance", ".ci"):
        for path in (ROOT / top).rglob("*"):
            parts = set(path.relative_to(ROOT).parts)
            if path.suffix in SUFFIXES and path.is_file() and not SKIP & parts:
                found.append(path)
    return found


def test_no_merge_conflict_markers() -> None:
    texts = _texts()
    assert len(texts) > 100  # the walk found the tree
    marked = [
        str(path.relative_to(ROOT))
        for path in texts
        if MARKER.search(path.read_text(errors="replace"))
    ]
    assert marked == [], f"merge conflict markers left in {marked}"
