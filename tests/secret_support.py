"""What the secret-guard tests check of tests/servers/secret_planter_server.py's results."""

from __future__ import annotations

import base64

import mcp_types

from support import text_of


def assert_planted_redacted(
    leak: mcp_types.CallToolResult, blob: mcp_types.ReadResourceResult, shown: str
) -> None:
    """``leak``'s result and ``memo://blob`` show ``shown`` wherever the secret was planted:
    text, resource link, ``_meta``, structured content, embedded and read bytes."""
    assert text_of(leak) == f"text {shown}"
    link = leak.content[1]
    assert isinstance(link, mcp_types.ResourceLink)
    assert (link.name, link.description) == (shown, shown)
    assert leak.meta is not None
    assert leak.meta["planted"] == shown
    assert leak.structured_content == {"secret": shown}
    embedded = leak.content[3]
    assert isinstance(embedded, mcp_types.EmbeddedResource)
    assert isinstance(embedded.resource, mcp_types.BlobResourceContents)
    [contents] = blob.contents
    assert isinstance(contents, mcp_types.BlobResourceContents)
    for payload in (embedded.resource.blob, contents.blob):
        assert base64.b64decode(payload) == f"bin:{shown}".encode()
