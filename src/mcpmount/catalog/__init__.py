"""What is mounted: the name table, its search index and manifest, the prompt and resource
tables with their registry URIs, and the lock file's pins.

`Catalog` (``_catalog``) is the name table: a server's tool list is published into it in
one synchronous call, each tool shown as its overrides say (``_overrides``) and checked
against the lock file's hashes (`Pins`, ``_pins``); MCP Apps' views, and which tools the
model may see, are ``_apps``'. `Library` (``_library``) does the same for prompts and
resources, whose URIs are rewritten under the registry's own scheme (``_uris``), so a
read routes back to its server. Both tell their change callbacks (`ChangeListener`)
through ``_listeners``, where one failing callback never stops the rest.
"""

from mcpmount.catalog._apps import model_visible
from mcpmount.catalog._catalog import Catalog, ChangeListener, RegistryChange
from mcpmount.catalog._library import Library, MountedPrompt, StagedContent
from mcpmount.catalog._pins import (
    CONTENT_KINDS,
    LOCK_VERSION,
    Pins,
    ToolDiff,
    content_hash,
    diff_hashes,
    diff_tools,
    lock_path,
    tool_hash,
)
from mcpmount.catalog._uris import (
    URI_SCHEME,
    registry_uri,
    rewrite_blocks,
    rewrite_call,
    rewrite_prompt,
    rewrite_read,
    split_uri,
)

__all__ = [
    "CONTENT_KINDS",
    "LOCK_VERSION",
    "URI_SCHEME",
    "Catalog",
    "ChangeListener",
    "Library",
    "MountedPrompt",
    "Pins",
    "RegistryChange",
    "StagedContent",
    "ToolDiff",
    "content_hash",
    "diff_hashes",
    "diff_tools",
    "lock_path",
    "model_visible",
    "registry_uri",
    "rewrite_blocks",
    "rewrite_call",
    "rewrite_prompt",
    "rewrite_read",
    "split_uri",
    "tool_hash",
]
