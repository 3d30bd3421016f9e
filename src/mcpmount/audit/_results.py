"""Hidden characters in what a server answers: stripped or refused, as in its listings.

A tool result, a prompt's messages and a resource's contents reach the model as surely
as a description does, so the ``hidden_text`` policy that cleans a server's listings
(`Cleaner`) holds for its answers too, with the same rules (``_hidden``): under
``"strip"`` the characters are removed, and the first answer of each kind (tool results,
prompt messages, resource contents) that held any is named in one warning per server;
under ``"refuse"`` such an answer is refused (`ResultWithheldError`), naming what it held.

What is cleaned is the text the model reads: a result's text blocks, every string of its
structured content (keys too), a resource link's name, title and description, an
embedded resource's text, a prompt's description, and a resource's text contents. URIs,
MIME types, binary data and ``_meta`` are left as they are, as in a listing.

Most answers hold no hidden character, and pay for one search of each text for a
character that may be one; nothing is copied unless something was found.
"""

from __future__ import annotations

import logging
from typing import Literal, TypeVar, cast

import mcp_types
import pydantic

from mcpmount.audit._hidden import HiddenText, KeysCollide, clean_json
from mcpmount.errors import ResultWithheldError

__all__ = ["ResultCleaner"]

logger = logging.getLogger(__name__)

_Result = TypeVar("_Result", bound=pydantic.BaseModel)
_Model = TypeVar("_Model", bound=pydantic.BaseModel)

_ANSWERS = {"tool": "tool results", "prompt": "prompt messages", "resource": "resource contents"}
"""What each kind of request answers, as a warning names it."""


class ResultCleaner:
    """Strips hidden characters from one server's answers, or refuses them.

    Args:
        server: The server's namespace, for the error and the warning.
        policy: ``"strip"`` removes hidden characters; ``"refuse"`` refuses an answer
            that holds any (`ResultWithheldError`).
    """

    def __init__(self, server: str, policy: Literal["refuse", "strip"] = "strip") -> None:
        self.server = server
        self.policy = policy
        self.warned: set[str] = set()
        """The kinds of answer a warning has named already (``"tool"``, ...)."""

    def __repr__(self) -> str:
        return f"<ResultCleaner {self.server!r} {self.policy} warned={sorted(self.warned)}>"

    def clean(self, kind: str, name: str, result: _Result) -> _Result:
        """Return ``result`` without hidden characters (itself when it held none).

        ``kind`` and ``name`` say what was asked (``"tool"`` and a public tool name,
        ``"prompt"`` and a prompt's, ``"resource"`` and a URI). Answers other than a tool
        result, a prompt and a resource read are returned as they are.

        Raises:
            ResultWithheldError: Under ``"refuse"``, the result held hidden characters.
        """
        chars: list[str] = []
        try:
            if isinstance(result, mcp_types.CallToolResult):
                cleaned = cast("_Result", _tool_result(result, chars))
            elif isinstance(result, mcp_types.GetPromptResult):
                cleaned = cast("_Result", _prompt_result(result, chars))
            elif isinstance(result, mcp_types.ReadResourceResult):
                cleaned = cast("_Result", _read_result(result, chars))
            else:
                return result
        except KeysCollide:
            reason = "two keys of its structured content differ only in hidden characters"
            raise ResultWithheldError(self.server, name, reason, kind=kind) from None
        if not chars:
            return result
        found = HiddenText(kind, name, "".join(chars))
        if self.policy == "refuse":
            reason = (
                f"it holds hidden characters: {found.summary()}; set hidden_text = "
                '"strip" to receive it with them removed'
            )
            raise ResultWithheldError(self.server, name, reason, kind=kind)
        if kind not in self.warned:
            self.warned.add(kind)
            logger.warning(
                "server %r: hidden characters stripped from what the model is shown: %s %r "
                "answered %s; later %s of this server are stripped without a warning (set "
                'hidden_text = "refuse" to refuse them)',
                self.server,
                kind,
                name,
                found.summary(),
                _ANSWERS.get(kind, f"{kind} answers"),
            )
        return cleaned


def _texts(model: _Model, keys: tuple[str, ...], chars: list[str]) -> _Model:
    """``model`` with its text fields ``keys`` cleaned; itself when none held any."""
    update: dict[str, object] = {}
    for key in keys:
        value = getattr(model, key)
        if isinstance(value, str) and (cleaned := clean_json(value, chars)) is not value:
            update[key] = cleaned
    return model.model_copy(update=update) if update else model


def _block(block: mcp_types.ContentBlock, chars: list[str]) -> mcp_types.ContentBlock:
    """One content block without hidden characters in the text the model reads."""
    if isinstance(block, mcp_types.TextContent):
        return _texts(block, ("text",), chars)
    if isinstance(block, mcp_types.ResourceLink):
        return _texts(block, ("name", "title", "description"), chars)
    if isinstance(block, mcp_types.EmbeddedResource):
        contents = block.resource
        if isinstance(contents, mcp_types.TextResourceContents):
            cleaned = _texts(contents, ("text",), chars)
            if cleaned is not contents:
                return block.model_copy(update={"resource": cleaned})
    return block


def _blocks(
    blocks: list[mcp_types.ContentBlock], chars: list[str]
) -> list[mcp_types.ContentBlock] | None:
    """``blocks`` cleaned, or None when none held a hidden character."""
    before = len(chars)
    cleaned = [_block(block, chars) for block in blocks]
    return cleaned if len(chars) > before else None


def _tool_result(result: mcp_types.CallToolResult, chars: list[str]) -> mcp_types.CallToolResult:
    update: dict[str, object] = {}
    if (content := _blocks(result.content, chars)) is not None:
        update["content"] = content
    structured = result.structured_content
    if structured is not None and (cleaned := clean_json(structured, chars)) is not structured:
        update["structured_content"] = cleaned
    return result.model_copy(update=update) if update else result


def _prompt_result(
    result: mcp_types.GetPromptResult, chars: list[str]
) -> mcp_types.GetPromptResult:
    cleaned = _texts(result, ("description",), chars)
    before = len(chars)
    messages = [
        message.model_copy(update={"content": content})
        if (content := _block(message.content, chars)) is not message.content
        else message
        for message in result.messages
    ]
    if len(chars) > before:
        cleaned = cleaned.model_copy(update={"messages": messages})
    return cleaned


def _read_result(
    result: mcp_types.ReadResourceResult, chars: list[str]
) -> mcp_types.ReadResourceResult:
    before = len(chars)
    contents = [
        _texts(item, ("text",), chars) if isinstance(item, mcp_types.TextResourceContents) else item
        for item in result.contents
    ]
    return result.model_copy(update={"contents": contents}) if len(chars) > before else result
