"""`shared`: one served registry (`isolation_support.serving`) for the tests of a module that
only read from it, per (protocol, serve flags): see `isolation_support.on_shared_eras`."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from leaks import leak_checked
from serve_isolation.isolation_support import Shared, serving


@pytest.fixture(scope="module", name="shared")
async def shared_fixture(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Shared]:
    """`serving(...)` with ``request.param`` = (protocol, serve flags), started once
    for the module's tests that ask for it (indirect parametrization) and checked for leaks
    when the last of them is done. Tests that change what a server holds (grow a tool, set
    a level, park a call) start their own with `serving` instead."""
    protocol, flags = request.param
    async with (
        leak_checked(),
        serving(tmp_path_factory.mktemp("shared"), *flags, protocol=protocol) as url,
    ):
        yield Shared(url, stateless="--stateless" in flags)
