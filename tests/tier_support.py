"""A pytest plugin that writes what a run selected, for `test_working_tier`.

``pytest --collect-only -m "not slow" -p tier_support`` (``tests`` on ``PYTHONPATH``)
writes to ``$TIER_REPORT`` one JSON object: each selected test's node id, and the
fixtures it uses, so a test can tell which of them open servers (they prove, through a
leak checker, that they leaked nothing).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest


def pytest_collection_finish(session: pytest.Session) -> None:
    report = os.environ.get("TIER_REPORT")
    if report is None:
        return
    selected = {item.nodeid: sorted(getattr(item, "fixturenames", ())) for item in session.items}
    Path(report).write_text(json.dumps(selected))
