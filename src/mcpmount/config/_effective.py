"""One server's inherited settings, resolved: `EffectiveSettings`, ``spec.effective(settings)``.

Keys such as ``call_timeout`` or ``max_tools`` exist at both levels; the view holds
each one resolved once, so no caller picks between the two itself.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Literal, cast

from mcpmount.config._sandbox import SandboxTable
from mcpmount.config._settings import RegistrySettings

__all__ = ["INHERITED", "EffectiveSettings"]


@dataclass(frozen=True, slots=True)
class EffectiveSettings:
    """The settings one server runs with: each key a server table may set and the
    ``[registry]`` table too, resolved by one rule: the server's own value, unless it is
    None (unset), else the registry's.

    Its fields are the table of inherited keys (`INHERITED`): a key is inherited by
    being declared here, with the same name at both levels (a test holds the three
    together). Lists are made tuples, so the view is frozen through and through.
    """

    startup_timeout: float
    call_timeout: float
    roots: tuple[str, ...]
    max_tools: int
    max_prompts: int
    max_resources: int
    max_pages: int
    max_description_bytes: int
    max_schema_depth: int
    max_result_bytes: int
    max_message_bytes: int
    hidden_text: Literal["refuse", "strip"]
    start: Literal["eager", "background", "lazy"]
    manifest_ttl: float
    idle_timeout: float | None
    """None never stops the server (neither level set it)."""
    sandbox: SandboxTable | bool | Literal["prefer"]
    """A stdio server's own table, else the registry's ``true``, ``false`` or
    ``"prefer"`` (`mcpmount.sandbox.policy_for` reads either); a url server has none of
    its own."""
    block_secrets: bool

    @classmethod
    def of(cls, spec: object, settings: RegistrySettings) -> EffectiveSettings:
        """Resolve every inherited key of ``spec`` (any server kind; a kind without a
        key, such as a url server's ``sandbox``, inherits it) against ``settings``."""
        values: dict[str, Any] = {}
        for key in INHERITED:
            value = getattr(spec, key, None)
            if value is None:
                value = getattr(settings, key)
            values[key] = tuple(cast("list[object]", value)) if isinstance(value, list) else value
        return cls(**values)


INHERITED: tuple[str, ...] = tuple(each.name for each in fields(EffectiveSettings))
"""The keys a server inherits from the registry unless it sets its own."""
