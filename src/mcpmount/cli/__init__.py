"""The ``mcpmount`` command line: a thin layer over the public API.

Data goes to stdout (rich tables, or ``--json``); diagnostics go to stderr. Each command
lives with its kind: the commands that mount a config's servers and report on them or
query what they offer (``check``, ``status``, ``lock``, ``tools``, ``search``, ``call``,
``describe``, ``prompts``, ``resources``, ``read``, ``prompt``) are their own package,
``mounting`` (`mcpmount.cli.mounting`); ``audit`` tells what the servers tell the model
(``_audit``); ``serve`` merges its flags (``_serve_args``) into the config's ``[serve]``
table and hands it to `mcpmount.serve` (``_serve``), ``status`` reads a running one
(``_serving``) and ``log`` its call log (``_log``, its arguments ``_log_args``); the MCP
hosts' files (``_hosts``), OAuth logins (``_login``) and shell completion
(``_completion``) have their own. ``_app`` parses (``_parser``: the standard library
only, so ``--help`` loads no SDK) and ``_run`` dispatches, closes what a command opened on
a stop signal (``_signals``) and maps errors to exit codes (``_failure``, ``_exit``).
Whatever a server wrote is printed through ``_shown``: never as markup, never as control
codes a terminal would obey.
"""

from __future__ import annotations

from mcpmount.cli._app import main

__all__ = ["main"]
