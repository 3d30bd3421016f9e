"""Whether a tool's schema is a valid JSON Schema, checked once per distinct schema.

Checking a schema against its metaschema (``jsonschema``'s ``check_schema``) costs about a
millisecond of the host's CPU per schema, more than the rest of mounting a tool. Many tools
share a schema, within a server and across servers started from the same program, and a
restarted or re-listed server lists the same schemas again; so a `SchemaVetting` remembers
each verdict under a digest of the schema's canonical JSON and checks each distinct schema
once. The registry owns one (the verdicts live and die with it, never shared between
registries), bounded to `MAX_VERDICTS` entries, least recently used dropped first.

The digest is ``xxh3_128`` of ``json.dumps(schema, sort_keys=True, separators=(",", ":"))``:
for JSON data (string keys; numbers, strings, booleans, null, lists, objects) that text is
one-to-one with the value, up to key order, and the verdict depends on nothing else (the
metaschema is chosen by the schema's own ``$schema``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import xxhash

from mcpmount.listing._plain_schema import plainly_valid

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

__all__ = ["MAX_VERDICTS", "SchemaVetting"]

MAX_VERDICTS = 4096
"""Verdicts one registry keeps by default (16-byte digests and short texts: well under 1 MiB)."""

_PROBLEM_CHARS = 200


class SchemaVetting:
    """The verdicts on the JSON Schemas one registry was listed, each checked once.

    Args:
        max_verdicts: How many verdicts to keep; the least recently used goes first. 0
            keeps none (every schema is checked every time).
    """

    def __init__(self, max_verdicts: int = MAX_VERDICTS) -> None:
        self.max_verdicts = max_verdicts
        self.checked = 0
        """Schemas checked against their metaschema (each distinct one once, while kept)."""
        self.reused = 0
        """Schemas answered from a verdict kept from an earlier check."""
        self.plain = 0
        """Checked schemas found valid at once by `plainly_valid`, without the metaschema."""
        self._verdicts: dict[bytes, str | None] = {}
        self._metaschemas: dict[type[Validator], Validator] = {}

    def __repr__(self) -> str:
        return (
            f"<SchemaVetting kept={len(self)} checked={self.checked} plain={self.plain} "
            f"reused={self.reused}>"
        )

    def __len__(self) -> int:
        return len(self._verdicts)

    def problem(self, schema: Mapping[str, Any]) -> str | None:
        """Return why ``schema`` is not a valid JSON Schema (``at WHERE: WHAT``), or None."""
        key = xxhash.xxh3_128_digest(
            json.dumps(schema, sort_keys=True, separators=(",", ":")).encode("ascii")
        )
        verdicts = self._verdicts
        if key in verdicts:
            self.reused += 1
            verdict = verdicts.pop(key)
            verdicts[key] = verdict  # now the most recently used
            return verdict
        self.checked += 1
        verdict = self._check(schema)
        if self.max_verdicts > 0:
            if len(verdicts) >= self.max_verdicts:
                del verdicts[next(iter(verdicts))]
            verdicts[key] = verdict
        return verdict

    def _check(self, schema: Mapping[str, Any]) -> str | None:
        """What ``check_schema`` of the schema's own validator class says, with its
        metaschema validator built once per class instead of once per schema.

        ``jsonschema`` loads with the first schema `plainly_valid` cannot answer.
        """
        if plainly_valid(schema):  # says yes only to Draft 2020-12, jsonschema's default
            self.plain += 1
            return None
        from jsonschema import SchemaError
        from jsonschema.validators import Draft202012Validator, validator_for

        # A "$schema" that is not a string (even unhashable) is the default draft's to refuse.
        own = isinstance(schema.get("$schema", ""), str)
        cls = validator_for(schema) if own else Draft202012Validator
        metaschema = self._metaschemas.get(cls)
        if metaschema is None:
            meta_cls = validator_for(cls.META_SCHEMA, default=cls)
            metaschema = meta_cls(cls.META_SCHEMA, format_checker=meta_cls.FORMAT_CHECKER)
            self._metaschemas[cls] = metaschema
        for error in metaschema.iter_errors(schema):
            problem = SchemaError.create_from(error)
            where = "/".join(str(part) for part in problem.path) or "the top level"
            return f"at {where}: {_short(problem.message)}"
        return None


def _short(text: str) -> str:
    return text if len(text) <= _PROBLEM_CHARS else text[:_PROBLEM_CHARS] + "..."
