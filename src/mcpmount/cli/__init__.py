"""The ``mcpmount`` command line: a thin layer over the public API.

Data goes to stdout (rich tables, or ``--json``); diagnostics go to stderr. Each command
lives with its kind: ``check``, ``status`` and ``lock`` mount every server (``_mount``);
``tools``, ``search`` and ``call`` query the mounted tools (``_query``); ``prompts``,
``resources``, ``read`` and ``prompt`` what servers offer besides tools (``_content``);
``serve`` merges its flags (``_serve_args``) into the config's ``[serve]`` table and hands
it to `mcpmount.serve` (``_serve``). A one-shot command mounts
only the servers it needs, from their cached manifests where it may, naming on a terminal
those still pending (``_opening``); ``call`` shows a tool's progress (``_progress``);
``describe`` a tool's arguments (``_describe``). ``_app`` parses (``_parser``: the
standard library only, so ``--help`` loads no SDK) and ``_run`` dispatches and maps
errors to exit codes. Whatever a server wrote is printed through ``_shown``: never as
markup, never as control codes a terminal would obey.
"""

from __future__ import annotations

from mcpmount.cli._app import main

__all__ = ["main"]
