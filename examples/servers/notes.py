"""An in-memory notes store over stdio: add, list, search and delete short notes.

Run: `python examples/servers/notes.py` (speaks MCP on stdin/stdout; notes vanish on exit).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

server = MCPServer(
    "notes",
    version="1.0.0",
    instructions="A scratchpad of short notes. Notes are kept in memory until the server exits.",
)


class Note(BaseModel):
    id: int
    title: str
    body: str
    tags: list[str]
    created: str  # ISO 8601, UTC


@dataclass
class Store:
    notes: dict[int, Note] = field(default_factory=dict[int, Note])
    next_id: int = 1


store = Store()


@server.tool()
def add_note(
    title: Annotated[str, Field(min_length=1, max_length=200, description="A short title.")],
    body: Annotated[str, Field(description="The note's text.")] = "",
    tags: Annotated[list[str] | None, Field(description="Optional labels, e.g. ['work'].")] = None,
) -> Note:
    """Save a new note and return it with its id."""
    note = Note(
        id=store.next_id,
        title=title,
        body=body,
        tags=sorted({t.strip().lower() for t in tags or [] if t.strip()}),
        created=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    store.notes[note.id] = note
    store.next_id += 1
    return note


@server.tool()
def list_notes(
    tag: Annotated[str | None, Field(description="Only notes carrying this tag.")] = None,
) -> list[Note]:
    """List notes, oldest first, optionally only those with a given tag."""
    notes = list(store.notes.values())
    if tag is not None:
        notes = [n for n in notes if tag.strip().lower() in n.tags]
    return notes


@server.tool()
def search_notes(
    query: Annotated[str, Field(min_length=1, description="Words to look for (all must match).")],
    limit: Annotated[int, Field(ge=1, le=100, description="At most this many results.")] = 10,
) -> list[Note]:
    """Find notes whose title, body or tags contain every word of the query (case-insensitive)."""
    words = query.lower().split()

    def matches(note: Note) -> bool:
        text = " ".join([note.title, note.body, *note.tags]).lower()
        return all(w in text for w in words)

    return [n for n in store.notes.values() if matches(n)][:limit]


@server.tool()
def delete_note(note_id: Annotated[int, Field(description="The id returned by add_note.")]) -> str:
    """Delete one note by id."""
    if store.notes.pop(note_id, None) is None:
        raise ToolError(f"no note with id {note_id}")
    return f"deleted note {note_id}"


if __name__ == "__main__":
    server.run()
