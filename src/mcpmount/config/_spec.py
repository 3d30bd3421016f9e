"""Server specs: the stdio kind, and the union of every kind.

`ServerSpec` is the pydantic discriminated union of the kinds, told apart by `kind_of`, so
another transport is one more member (and one more entry in `KINDS`), with `kind_of` taught
how to recognise it. `ServerBase` (``_server``) is what every kind declares; `HttpServer`
(``_http``) is the url kind.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Annotated, Literal, TypeAlias, cast

from pydantic import (
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Tag,
    TypeAdapter,
    ValidationError,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from mcpmount.config._fields import Arg, EnvName, EnvValue, Text
from mcpmount.config._http import HttpServer
from mcpmount.config._sandbox import Sandbox
from mcpmount.config._secrecy import secret_parts
from mcpmount.config._server import IMPLIED_BY, ServerBase

__all__ = [
    "IMPLIED_BY",
    "KINDS",
    "SPEC",
    "HttpServer",
    "ServerBase",
    "ServerSpec",
    "StdioServer",
    "kind_of",
]

_EITHER = " or ".join(f"{key} ({kind})" for key, kind in IMPLIED_BY.items())


class StdioServer(ServerBase):
    """A server run as a child process that speaks MCP over its stdin and stdout."""

    transport: Literal["stdio"] = "stdio"
    """The tag; implied by ``command``."""

    command: Text
    """The program to run, looked up on PATH; never run through a shell."""

    args: list[Arg] = []
    """Its arguments, one string each (a single string is refused, never split)."""

    env: dict[EnvName, EnvValue] = {}
    """Variables added to the child's minimal environment; the values are secrets."""

    cwd: Text | None = None
    """The child's working directory; a relative one is resolved against the config file."""

    sandbox: Sandbox = None
    """Run the server in a sandbox (bubblewrap on Linux, sandbox-exec on macOS): ``true``,
    ``"prefer"``, ``false`` or a table (``read``, ``write``, ``network``, ``prefer``); None
    uses the registry's ``sandbox``. See the security page."""

    def env_values(self) -> dict[str, str]:
        """Return ``env`` with the plain values, for spawning the process and nothing else."""
        return {name: value.get_secret_value() for name, value in self.env.items()}

    def secret_values(self) -> list[str]:
        """Return the values `redact` hides: the secret ``env`` values (`named_secrets`),
        credentials written in ``args`` (a URL's password, a token), and the secret
        expanded ones."""
        env = self.named_secrets(self.env_values().items())
        written = [part for arg in self.args for part in secret_parts(arg, named=False)]
        return list(dict.fromkeys([*env, *written, *super().secret_values()]))

    def __repr_args__(self) -> Iterable[tuple[str | None, object]]:
        # The command, an argument or the cwd may hold a value expanded from a secret variable.
        for name, value in super().__repr_args__():
            if name == "args":
                yield name, [self.redact(arg) for arg in self.args]
            elif name == "command":
                yield name, self.redact(self.command)
            elif name == "cwd" and self.cwd is not None:
                yield name, self.redact(self.cwd)
            else:
                yield name, value


KINDS: Mapping[str, type[StdioServer | HttpServer]] = {"stdio": StdioServer, "http": HttpServer}
"""Each kind of server by its ``transport`` tag."""


def kind_of(value: object) -> str | None:
    """Return the kind of a spec, or the kind a table's keys imply (None if they imply none).

    This is `ServerSpec`'s discriminator.
    """
    if isinstance(value, StdioServer):
        return "stdio"
    if isinstance(value, HttpServer):
        return "http"
    if not isinstance(value, dict):
        return None
    table = cast("dict[str, object]", value)
    implied = [kind for key, kind in IMPLIED_BY.items() if key in table]
    return implied[0] if len(implied) == 1 else None


def _one_kind(value: object) -> object:
    """Word the ways a table can fail to pick a kind better than the union's own error.

    Several kind keys at once are one problem. With none, a key close to one of them is
    taken for it misspelt and named as an unknown key; otherwise the union says what to add.
    """
    if not isinstance(value, dict):
        return value
    table = cast("dict[str, object]", value)
    present = [key for key in IMPLIED_BY if key in table]
    if len(present) > 1:
        raise PydanticCustomError(
            "mcpmount_kind", "give either {either}, not both", {"either": _EITHER}
        )
    if present:
        return table
    known = {name for model in KINDS.values() for name in model.model_fields}
    misspelt = [
        InitErrorDetails(type="extra_forbidden", loc=(key,), input=table[key])
        for key in table
        if key not in known and difflib.get_close_matches(key, IMPLIED_BY, n=1)
    ]
    if misspelt:
        raise ValidationError.from_exception_data("ServerSpec", misspelt, hide_input=True)
    return table


ServerSpec: TypeAlias = Annotated[
    Annotated[StdioServer, Tag("stdio")] | Annotated[HttpServer, Tag("http")],
    Discriminator(
        kind_of,
        custom_error_type="mcpmount_kind",
        custom_error_message=f"give either {_EITHER}",
    ),
    BeforeValidator(_one_kind),
]
"""One server of the config: `StdioServer` or `HttpServer`, told apart by `kind_of`."""

SPEC = TypeAdapter[ServerSpec](ServerSpec, config=ConfigDict(hide_input_in_errors=True))
"""Validates one server table into the kind its keys imply."""
