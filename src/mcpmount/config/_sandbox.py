"""A stdio server's sandbox: ``sandbox = true``, ``false``, ``"prefer"`` or a table.

Each is read into one `SandboxTable` (``true`` is an empty table, ``"prefer"`` one with
``prefer = true``), so a problem in a table is named by its key alone. Only the shape is
checked here; the ``sandbox`` room finds the tool and builds the sandbox.
"""

from __future__ import annotations

import re
from typing import Annotated, cast

from pydantic import AfterValidator, BaseModel, BeforeValidator
from pydantic_core import PydanticCustomError

from mcpmount.config._fields import STRICT_DATA

_HOST = re.compile(r"(\*\.)?[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]{1,5})?")


def _sandbox_path(value: str) -> str:
    if "\0" in value or not (value.startswith("/") or value == "~" or value.startswith("~/")):
        raise PydanticCustomError(
            "mcpmount_sandbox_path", "must be an absolute path or start with ~/"
        )
    return value


def _network(value: object) -> object:
    # Checked up front so a bad entry gets one line instead of one per union member.
    if isinstance(value, bool):
        return value
    if not isinstance(value, list):
        raise PydanticCustomError(
            "mcpmount_sandbox_network", "must be true, false or a list of hosts"
        )
    hosts: list[str] = []
    for index, host in enumerate(cast("list[object]", value)):
        port = host.rpartition(":")[2] if isinstance(host, str) and ":" in host else "80"
        if not isinstance(host, str) or not _HOST.fullmatch(host) or not 0 < int(port) < 65536:
            raise PydanticCustomError(
                "mcpmount_sandbox_host",
                "entry {index} must be a host name, with an optional :port or a leading *. "
                "(example.com, api.example.com:8443, *.example.com)",
                {"index": index},
            )
        hosts.append(host.lower())
    return hosts


def sandbox_shorthand(value: object) -> object:
    """Read ``true``, ``false`` and ``"prefer"`` as the tables they stand for."""
    if isinstance(value, bool):
        return {"enabled": value}
    if value == "prefer":
        return {"prefer": True}
    if value is None or isinstance(value, dict | SandboxTable):
        return cast("object", value)
    raise PydanticCustomError("mcpmount_sandbox", 'must be true, false, "prefer" or a table')


SandboxPath = Annotated[str, AfterValidator(_sandbox_path)]
"""A path visible in the sandbox: absolute, or under the user's home (``~/notes``)."""


class SandboxTable(BaseModel):
    """``[servers.x] sandbox = { read = [...], write = [...], network = ... }``."""

    model_config = STRICT_DATA

    enabled: bool = True
    """Whether the server runs in a sandbox at all (``sandbox = false`` sets it false)."""

    read: list[SandboxPath] = []
    """Paths the server may read (absolute or ``~/...``); each must exist."""

    write: list[SandboxPath] = []
    """Paths the server may read and write (absolute or ``~/...``); each must exist."""

    network: Annotated[bool | list[str], BeforeValidator(_network)] = False
    """``false``: no network at all (an empty network namespace); ``true``: the host's
    network; a list of hosts: only those, through an HTTP(S) proxy that mcpmount runs
    outside the sandbox (``HTTPS_PROXY`` and ``HTTP_PROXY`` are set for the server). A
    host alone allows ports 443 and 80; ``host:port`` allows that port; ``*.example.com``
    allows its subdomains."""

    prefer: bool = False
    """Where no sandbox tool is installed, run the server unsandboxed with one warning
    instead of refusing it (like ``sandbox = "prefer"``)."""


Sandbox = Annotated[SandboxTable | None, BeforeValidator(sandbox_shorthand)]
"""A server's ``sandbox``: ``true`` (refuse to run without one), ``"prefer"`` (sandbox where
a tool is installed, else warn once and run unsandboxed), ``false``, or a table; None uses
the registry's."""
