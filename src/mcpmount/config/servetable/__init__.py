"""The ``[serve]`` table: how ``mcpmount serve`` listens, who may call it, its quotas and call log.

A sub-room of ``config`` above its core (its checked field types and `Tables`), which it
uses and which never uses it back; only ``config._load`` reads the table
(`read_serve`) and merges the settings given beside the file (`serve_given`).

Its modules: ``_serving`` (where serve listens), ``_quotas`` (its ``limits``),
``_calllog`` (its call log), ``_serve`` (the whole table, its tokens and OAuth) and
``_given`` (settings given beside the file, merged into ``[serve]`` once).
"""

from mcpmount.config.servetable._calllog import CALL_LOG_SINKS
from mcpmount.config.servetable._given import serve_given
from mcpmount.config.servetable._quotas import LimitRule, ServeLimits
from mcpmount.config.servetable._serve import (
    MIN_TOKEN_LENGTH,
    ServeOAuth,
    ServeSettings,
    ServeToken,
    read_serve,
)
from mcpmount.config.servetable._serving import Transport

__all__ = [
    "CALL_LOG_SINKS",
    "MIN_TOKEN_LENGTH",
    "LimitRule",
    "ServeLimits",
    "ServeOAuth",
    "ServeSettings",
    "ServeToken",
    "Transport",
    "read_serve",
    "serve_given",
]
