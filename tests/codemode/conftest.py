"""The code mode tests need bubblewrap and libseccomp; without them they fail saying so."""

from __future__ import annotations

import pytest

from mcpmount.codemode import code_sandbox_problem


@pytest.fixture(scope="session")
def code_sandbox() -> None:
    """Fail unless a code sandbox can be made on this machine (never skip)."""
    problem = code_sandbox_problem()
    if problem is not None:
        pytest.fail(f"the code mode tests need a code sandbox: {problem}")
