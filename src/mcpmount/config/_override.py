"""Per-tool overrides: the name, title and description a server's tool is shown under."""

from __future__ import annotations

from pydantic import BaseModel, field_validator
from pydantic_core import PydanticCustomError

from mcpmount.config._fields import STRICT_DATA
from mcpmount.naming import TOOL_NAME_PATTERN


class ToolOverride(BaseModel):
    """What the model is shown of one tool instead of what its server lists.

    Applied before naming: the public name is built from ``name`` under the same rules as
    a raw name (namespace prefix, length limit, hash suffix when sanitizing changed it).
    Calls still reach the server under the tool's raw name.
    """

    model_config = STRICT_DATA

    name: str | None = None
    """The name to build the public name from; 1-128 of ``A-Z a-z 0-9 . _ -`` (SEP-986)."""

    title: str | None = None
    """The title shown instead of the server's."""

    description: str | None = None
    """The description shown (and searched) instead of the server's."""

    @field_validator("name")
    @classmethod
    def _check_name(cls, value: str | None) -> str | None:
        if value is not None and not TOOL_NAME_PATTERN.match(value):
            raise PydanticCustomError(
                "mcpmount_tool_name",
                "must be 1-128 characters of A-Z a-z 0-9 . _ - (the MCP tool name grammar)",
            )
        return value
