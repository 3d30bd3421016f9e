"""The sandbox tests need bubblewrap; without it they fail saying so (never skip)."""

from __future__ import annotations

import pytest
from sandbox_support import has_bwrap


@pytest.fixture(scope="session")
def bwrap() -> None:
    """Fail unless bwrap is installed and can make a sandbox on this machine."""
    if not has_bwrap():
        pytest.fail("the sandbox tests need a working bwrap: apt-get install bubblewrap")
