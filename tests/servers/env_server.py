"""A stdio server whose tool ``env`` answers the value of a variable of its environment.

It shows what a config gave the process it started: ``env``, an ``envFile``, a host
file's ``${input:id}``.
"""

from __future__ import annotations

import os

from mcp.server.mcpserver import MCPServer

server = MCPServer("env", version="0.1.0")


@server.tool()
def env(name: str) -> str:
    """Return the value of the environment variable ``name`` ("<unset>" if it is not set)."""
    return os.environ.get(name, "<unset>")


@server.tool()
def reversed_env(name: str) -> str:
    """Return the value of ``name`` backwards: proof that a secret value arrived, in a form
    the registry's redaction of that server's secrets leaves readable."""
    return os.environ.get(name, "<unset>")[::-1]


@server.tool()
def cwd() -> str:
    """Return the server's working directory."""
    return os.getcwd()


if __name__ == "__main__":
    server.run()
