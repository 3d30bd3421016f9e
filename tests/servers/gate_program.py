"""A ``before_call`` program for tests: allows or refuses the call it reads on stdin.

Run it as ``python tests/servers/gate_program.py DIR``. It appends the call it got (one
JSON line) to ``DIR/calls``, then acts on the call's ``arguments``: with ``"text"`` holding

- ``refuse``: prints a reason (two lines) on stdout and exits with status 3;
- ``quiet``: exits with status 4, printing nothing;
- ``hang``: starts a child (in its process group), writes both pids to ``DIR/pids``, then
  sleeps for a minute;
- ``daemon``: leaves a daemon (``setsid`` and a double fork, `daemonizing_server.daemonize`)
  that writes its pid to ``DIR/daemon``, then allows the call;

and otherwise exits 0 (the call is allowed). A request of another kind (a prompt get, a
resource read, a completion) is refused like ``refuse`` when ``refuse`` is anywhere in it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from daemonizing_server import daemonize  # a sibling: this script's folder is on sys.path


def main() -> None:
    folder = Path(sys.argv[1])
    call = json.load(sys.stdin)
    with open(folder / "calls", "a") as calls:
        calls.write(json.dumps(call) + "\n")
    text = call["arguments"].get("text")
    if call.get("kind", "tools/call") != "tools/call" and "refuse" in json.dumps(call["arguments"]):
        text = "refuse"  # a prompt get, a resource read or a completion
    match text:
        case "refuse":
            print("no shouting at the weather service\nsecond line")
            sys.exit(3)
        case "quiet":
            sys.exit(4)
        case "hang":
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
            (folder / "pids").write_text(f"{os.getpid()} {child.pid}")
            time.sleep(60)
        case "daemon":
            daemonize(folder / "daemon")
        case _:
            pass


if __name__ == "__main__":
    main()
