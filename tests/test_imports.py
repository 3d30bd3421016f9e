"""A plain registry loads only what it uses: the optional parts load with their first use.

Each test runs a fresh interpreter (``python -c``), as a user's program starts, and reads
its ``sys.modules``. Modules the SDK itself loads (``import mcp`` brings uvicorn, starlette
and opentelemetry's API) are not mcpmount's to avoid and are not listed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from support import FIXTURE

pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

LOADED_ON_USE = (
    "mcp.client.auth",  # OAuth: a url server with an `oauth` key, or `mcpmount login`
    "jwt",  # the SDK's client credentials, with OAuth
    "cryptography.hazmat.primitives.asymmetric",  # jwt's keys (the SDK loads ciphers itself)
    "cryptography.x509",
    "keyring",  # token_store = "keyring"
    "filelock",  # the OAuth token store's lock
    "platformdirs",  # default directories of the token store, caches and vectors
    "webbrowser",  # `mcpmount login`
    "jsonschema",  # a tool schema the plain check cannot pass
    "redis",  # `cache = "redis://..."`
    "prometheus_client",  # metrics of `serve`
    "numpy",  # the semantic extra
    "onnxruntime",
    "tokenizers",
    "mcpmount.semantic",
    "mcpmount.serve",
    "mcpmount.cli",
)
"""Module prefixes a plain registry never needs."""


def loaded(script: str, *, besides: tuple[str, ...] = ()) -> list[str]:
    """The modules of ``LOADED_ON_USE`` but ``besides`` loaded after ``script`` ran in a fresh
    interpreter."""
    report = "import json, sys\nprint(json.dumps(sorted(sys.modules)))\n"
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script) + report],
        capture_output=True,
        text=True,
        timeout=50,
        check=True,
    )
    modules: list[str] = json.loads(done.stdout.splitlines()[-1])
    prefixes = [p for p in LOADED_ON_USE if p not in besides]
    return [m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes)]


def test_import_mcpmount_loads_no_optional_part() -> None:
    """`import mcpmount` and its registry API leave OAuth, Redis, metrics, the extras unloaded."""
    assert loaded("import mcpmount\nfrom mcpmount import Registry, open_registry\n") == []


def test_a_plain_registry_mounting_and_calling_loads_no_optional_part() -> None:
    """Opening a registry of a stdio server and calling a tool loads none of them either (the
    SDK itself loads ``jsonschema`` to check a result against the tool's ``outputSchema``)."""
    script = f"""
    import sys
    import anyio
    from mcpmount import RegistryConfig, StdioServer, open_registry

    async def main() -> None:
        spec = StdioServer(command=sys.executable, args=[{FIXTURE!r}])
        async with open_registry(RegistryConfig.from_servers({{"fx": spec}})) as registry:
            result = await registry.call("fx__echo", {{"text": "hi"}})
            assert not result.is_error, result

    anyio.run(main)
    """
    assert loaded(script, besides=("jsonschema",)) == []
