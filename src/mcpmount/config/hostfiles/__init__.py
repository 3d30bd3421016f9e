"""The config files MCP hosts keep (Claude Desktop, Claude Code, Cursor, VS Code), read into
our own tables: a sub-room of ``config`` above its core, which it uses and which never uses
it back (only ``_load`` reads a host file through `read_host_file`).

Its modules: ``_dotenv`` (an ``envFile``), ``_hostentry`` (one host entry in our keys) and
``_hostfile`` (a whole host file: its servers, ``inputs`` and where they are kept). The
hosts' own variables (``${env:X}``, ``${input:id}``, ...) stay in the core
(``config._variables``), since ``${VAR}`` expansion everywhere reads them.
"""

from mcpmount.config.hostfiles._formats import FORMATS_READ, HostFormat, sniff_format
from mcpmount.config.hostfiles._hostfile import read_host_file

__all__ = ["FORMATS_READ", "HostFormat", "read_host_file", "sniff_format"]
