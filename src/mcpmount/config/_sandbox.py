"""A stdio server's sandbox: ``sandbox = true``, ``false``, ``"prefer"`` or a table.

Each is read into one `SandboxTable` (``true`` is an empty table, ``"prefer"`` one with
``prefer = true``), so a problem in a table is named by its key alone. Only the shape is
checked here; the ``sandbox`` room finds the tool and builds the sandbox.
"""

from __future__ import annotations

import contextlib
import re
from ipaddress import IPv4Address, IPv6Address
from typing import Annotated, cast

from pydantic import AfterValidator, BaseModel, BeforeValidator, Field
from pydantic_core import PydanticCustomError

from mcpmount.config._fields import STRICT_DATA

_HOST = re.compile(r"(\*\.)?[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?")


def _sandbox_path(value: str) -> str:
    if "\0" in value or not (value.startswith("/") or value == "~" or value.startswith("~/")):
        raise PydanticCustomError(
            "mcpmount_sandbox_path", "must be an absolute path or start with ~/"
        )
    return value


def _host(entry: str) -> str | None:
    """Return the allow-list entry ``entry`` in its canonical form, or None if it is not one.

    A name (``*.`` may lead) or an IPv4 address, with an optional ``:port``; an IPv6
    address in brackets (``[fd00::1]``, ``[fd00::1]:8080``). Addresses are written the way
    ``ipaddress`` writes them, so the proxy compares them as addresses.
    """
    if entry.startswith("["):
        inside, bracket, port = entry[1:].partition("]")
        if not bracket or (port and not port.startswith(":")):
            return None
        host, colon, port = inside, port[:1], port[1:]
        try:
            address: IPv4Address | IPv6Address = IPv6Address(host)
        except ValueError:
            return None
        if "%" in host:  # a zone index names an interface of this machine, never a host
            return None
        host = f"[{address}]"
    else:
        host, colon, port = entry.partition(":")
        if not _HOST.fullmatch(host):
            return None
        with contextlib.suppress(ValueError):
            host = str(IPv4Address(host))
    if colon and not (port.isdigit() and len(port) <= 5 and 0 < int(port) < 65536):
        return None
    return f"{host}:{port}".lower() if port else host.lower()


def _network(value: object) -> object:
    # Checked up front so a bad entry gets one line instead of one per union member.
    if isinstance(value, bool):
        return value
    if not isinstance(value, list):
        raise PydanticCustomError(
            "mcpmount_sandbox_network", "must be true, false or a list of hosts"
        )
    hosts: list[str] = []
    for index, entry in enumerate(cast("list[object]", value)):
        host = _host(entry) if isinstance(entry, str) else None
        if host is None:
            raise PydanticCustomError(
                "mcpmount_sandbox_host",
                "entry {index} must be a host name or address, with an optional :port or a "
                "leading *. (example.com, api.example.com:8443, *.example.com, 10.0.0.5, "
                "[fd00::1]:8080)",
                {"index": index},
            )
        hosts.append(host)
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
    allows its subdomains. A listed name is reached at its public addresses only: one
    that resolves to a loopback, private, link-local (cloud metadata), shared (CGNAT) or
    reserved address is refused unless that address is listed itself (``127.0.0.1:8080``,
    ``10.0.0.5``, ``[fd00::1]:8080``)."""

    max_connections: Annotated[int, Field(ge=1, le=4096)] = 32
    """With a host list: connections the server may hold open through its proxy at once;
    more are answered ``503`` (each takes one or two of the registry's file descriptors)."""

    max_buffered_bytes: Annotated[int, Field(ge=1024)] = 4 * 1024 * 1024
    """With a host list: bytes its proxy holds for the server at once, read from one side
    and not yet written to the other; at the cap its connections wait and new ones are
    answered ``503``."""

    prefer: bool = False
    """Where no sandbox tool is installed, run the server unsandboxed with one warning
    instead of refusing it (like ``sandbox = "prefer"``)."""


Sandbox = Annotated[SandboxTable | None, BeforeValidator(sandbox_shorthand)]
"""A server's ``sandbox``: ``true`` (refuse to run without one), ``"prefer"`` (sandbox where
a tool is installed, else warn once and run unsandboxed), ``false``, or a table; None uses
the registry's."""
