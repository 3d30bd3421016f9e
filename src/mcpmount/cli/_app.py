"""Parse the command line, then run one command (`mcpmount.cli._run`).

Parsing imports only the standard library (``_parser``), so ``--help``, ``--version`` and
a usage error load none of the SDK; the commands are imported once the arguments parse.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from mcpmount.cli._parser import a_path, build_parser

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (also used by ``python -m mcpmount``)."""
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

        sys.stdout.write(completion_script(args.shell, parser))
        return 0
    from mcpmount.cli._run import run  # the commands, the SDK and rich: only now

    return run(args, parser)


_parser = build_parser
"""The parser, where the docs' CLI reference and the tests read it."""
