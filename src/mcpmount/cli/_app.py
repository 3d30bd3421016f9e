"""Parse the command line, then run one command (`mcpmount.cli._run`).

Parsing imports only the standard library (``_parser``, ``_exit``), so ``--help``,
``--version`` and a usage error load none of the SDK; the commands are imported once the
arguments parse. A usage error is told as argparse tells it or, under ``--json``, as one
JSON object on stdout (`mcpmount.cli._exit.Failure`).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence

from mcpmount.cli._exit import EXIT_USAGE, UsageError
from mcpmount.cli._parser import a_path, build_parser, wants_json

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (also used by ``python -m mcpmount``)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        return _main(argv)
    except UsageError as exc:
        if wants_json(argv):
            return exc.failure().tell(as_json=True)
        sys.stderr.write(exc.usage + exc.message + "\n")
        return EXIT_USAGE


def _main(argv: list[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command in ("call", "prompt") and args.config is None and a_path(args.arguments):
        if os.path.isfile(args.name) and not os.path.exists(args.arguments):
            # `call CONFIG NAME`: the config file where the name goes
            parser.error(
                f"{args.command}: the name comes first: mcpmount {args.command} "
                f"{args.arguments} [ARGUMENTS] {args.name}"
            )
        args.config, args.arguments = args.arguments, "{}"  # `call NAME CONFIG`: no arguments
    if getattr(args, "from_host", None) and args.config is not None:
        parser.error("check: give a config file or --from HOST, not both")
    if getattr(args, "as_host", None) and (args.config is not None or args.from_host):
        parser.error("check: --as-host HOST starts the host's entry: give no config nor --from")
    if args.command == "completion":  # from the parser alone
        from mcpmount.cli._completion import completion_script

        script = completion_script(args.shell, parser)
        if args.json:
            script = json.dumps({"shell": args.shell, "script": script}) + "\n"
        sys.stdout.write(script)
        return 0
    from mcpmount.cli._run import run  # the commands, the SDK and rich: only now

    return run(args, parser)


_parser = build_parser
"""The parser, where the docs' CLI reference and the tests read it."""
