"""A server's own setting wins over the registry's, and the registry's holds where it sets
none: through real mounted servers, for keys resolved once by ``spec.effective``."""

from __future__ import annotations

from pathlib import Path

import pytest

import mcpmount
from mcpmount.errors import CallTimeoutError, SecretRefusedError
from support import fixture_server, text_of, write_config

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

TOKEN = "ghp_" + "q3Vn8Rt2" * 4 + "Lm7x"
"""Text in a well-known credential format: ``block_secrets`` refuses a call carrying it."""


def two_servers(tmp_path: Path, key: str, registry: str, own: str) -> mcpmount.RegistryConfig:
    """The fixture server twice: ``inherits`` sets nothing, ``own`` sets ``key = own``;
    the registry sets ``key = registry``."""
    path = write_config(
        tmp_path,
        fixture_server("inherits"),
        fixture_server("own", extra=f"{key} = {own}"),
        registry=f"{key} = {registry}\nstartup_timeout = 30",
    )
    return mcpmount.load_config(path, environ={})


async def test_a_servers_call_timeout_overrides_the_registrys(tmp_path: Path) -> None:
    """The registry's ``call_timeout`` ends ``inherits``'s slow call; ``own`` sets a
    longer one of its own and its same call runs to the end."""
    async with mcpmount.open_registry(two_servers(tmp_path, "call_timeout", "0.5", "60")) as reg:
        assert text_of(await reg.call("own__sleep", {"seconds": 1.5})) == "slept 1.5"
        with pytest.raises(CallTimeoutError, match="'inherits__sleep'"):
            await reg.call("inherits__sleep", {"seconds": 1.5})


async def test_a_servers_block_secrets_false_overrides_the_registrys_true(
    tmp_path: Path,
) -> None:
    """``block_secrets = true`` in the registry refuses a call carrying a GitHub token to a
    server that sets nothing, before it leaves; ``own`` says false, and its call runs."""
    config = two_servers(tmp_path, "block_secrets", "true", "false")
    async with mcpmount.open_registry(config) as reg:
        assert text_of(await reg.call("own__echo", {"text": TOKEN})) == TOKEN
        with pytest.raises(SecretRefusedError, match="inherits"):
            await reg.call("inherits__echo", {"text": TOKEN})
