"""The config files MCP hosts keep, each in its host's format, read into our own tables.

The formats (`HostFormat`) are the ``mcpServers`` JSON of Claude Desktop, Claude Code,
Cursor, VS Code and LM Studio, and Windsurf's, Gemini CLI's, Zed's, OpenAI Codex's,
goose's and Continue's own. A sub-room of ``config`` above its core, which it uses and
which never uses it back (only ``config._load`` reads a host file through
`read_host_file`).

Its modules: ``_formats`` (the formats, and telling a file's apart), ``_dotenv`` (an
``envFile``), ``_entrykeys`` (value checks the readers share), ``_hostentry`` (one
``mcpServers`` entry in our keys, and Windsurf's), ``_gemini``, ``_zed``, ``_codex`` and
``_yamlhosts`` (goose and Continue): one entry of each other format in our keys; and
``_hostfile`` (a whole host file: its servers, ``inputs`` and where they are kept). The
hosts' own variables (``${env:X}``, ``${input:id}``, ...) are the room below's
(``configfile._variables``), since ``${VAR}`` expansion everywhere reads them.
"""

from mcpmount.config.hostfiles._formats import FORMATS_READ, HostFormat, sniff_format
from mcpmount.config.hostfiles._hostfile import read_host_file

__all__ = ["FORMATS_READ", "HostFormat", "read_host_file", "sniff_format"]
