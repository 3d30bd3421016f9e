"""The guard's outbound side: every known secret out of what a server says, whatever it is.

A server's words reach the model and the client in many shapes: a tool result (its text,
structured content, ``_meta``, resource links, embedded resources), a prompt's messages, a
resource's contents, a completion's values, the progress and log messages it sends, what
it asks the client (elicitation, sampling). One function redacts them all
(`redact_model`): the message is dumped to its JSON text once and scanned with the one
compiled alternation of every known secret (`SecretIndex.known`); only when something
matched is the redacted text validated back into a message, so a clean message costs one
dump and one scan and comes back as itself. Base64 payloads (a resource's ``blob``, an
image's or audio's ``data``) are decoded and scanned too, since a scan of their text
cannot see a secret in them; a match is replaced in the bytes.
"""

from __future__ import annotations

import base64
import binascii
import re
from functools import cached_property
from typing import Any, Protocol, TypeVar, cast

import pydantic

__all__ = ["redact_model", "redact_text"]

_Model = TypeVar("_Model", bound=pydantic.BaseModel)


class SecretIndex(Protocol):
    """What redaction needs of the known secrets (`mcpmount.gates._secrets.SecretIndex`)."""

    @cached_property
    def known(self) -> re.Pattern[str] | None:
        """Finds any known secret; None when there is none."""
        ...

    @cached_property
    def known_bytes(self) -> re.Pattern[bytes] | None:
        """Finds any known secret in bytes."""
        ...

    def redact(self, text: str) -> str:
        """``text`` with every known secret replaced."""
        ...

    def marker(self, value: str) -> str:
        """What replaces the known secret ``value``."""
        ...


_BASE64_FIELDS = re.compile(r'"(?:blob|data)":"')
"""Where a message may hold base64: the cheap test before any decoding."""


def redact_text(index: SecretIndex, text: str | None) -> str | None:
    """``text`` with every known secret replaced (None stays None)."""
    return None if text is None else index.redact(text)


def redact_model(index: SecretIndex, model: _Model) -> _Model:
    """``model`` with every known secret in it replaced, wherever it is; ``model`` itself
    when it holds none."""
    known = index.known
    if known is None:
        return model
    text = model.model_dump_json(by_alias=True, exclude_unset=True)
    in_text = known.search(text) is not None
    if not in_text and not (_BASE64_FIELDS.search(text) and _secret_in_base64(index, model)):
        return model
    data = cast("object", model.model_dump(mode="json", by_alias=True, exclude_unset=True))
    return type(model).model_validate(_redact_value(index, data))


def _redact_value(index: SecretIndex, value: Any) -> Any:
    """A JSON value with every secret redacted: strings, keys, and base64 payloads."""
    if isinstance(value, str):
        return index.redact(value)
    if isinstance(value, dict):
        mapping = cast("dict[str, Any]", value)
        redacted = {index.redact(k): _redact_value(index, v) for k, v in mapping.items()}
        for key in ("blob", "data"):
            payload = mapping.get(key)
            if isinstance(payload, str) and _is_base64_field(mapping, key):
                redacted[key] = _redact_base64(index, payload)
        return redacted
    if isinstance(value, list):
        return [_redact_value(index, item) for item in cast("list[Any]", value)]
    return value


def _is_base64_field(mapping: dict[str, Any], key: str) -> bool:
    """A resource's ``blob``, or the ``data`` of an image or audio block."""
    return key == "blob" or mapping.get("type") in ("image", "audio")


def _secret_in_base64(index: SecretIndex, model: pydantic.BaseModel) -> bool:
    data = cast("object", model.model_dump(mode="json", by_alias=True, exclude_unset=True))
    stack: list[object] = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            mapping = cast("dict[str, Any]", value)
            for key in ("blob", "data"):
                payload = mapping.get(key)
                if (
                    isinstance(payload, str)
                    and _is_base64_field(mapping, key)
                    and _redact_base64(index, payload) != payload
                ):
                    return True
            stack.extend(mapping.values())
        elif isinstance(value, list):
            stack.extend(cast("list[object]", value))
    return False


def _redact_base64(index: SecretIndex, payload: str) -> str:
    """``payload`` (base64) with every known secret in its bytes replaced; as it was when
    it holds none or is no valid base64."""
    pattern = index.known_bytes
    if pattern is None:
        return payload
    try:
        raw = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        return payload
    if pattern.search(raw) is None:
        return payload
    redacted = pattern.sub(lambda m: index.marker(m[0].decode("utf-8")).encode(), raw)
    return base64.b64encode(redacted).decode("ascii")
