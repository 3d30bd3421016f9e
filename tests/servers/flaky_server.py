"""A server that is broken, then fixed, while mcpmount runs: it exits at start while a flag
file exists, and once the file is gone it serves the fixture server's tools.

Run it as `python tests/servers/flaky_server.py FLAG [fixture flags...]`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

FIXTURE = Path(__file__).with_name("fixture_server.py")

if __name__ == "__main__":
    flag = Path(sys.argv[1])
    if flag.exists():
        sys.stderr.write(f"broken: {flag.name} is there\n")
        sys.exit(1)
    os.execv(sys.executable, [sys.executable, str(FIXTURE), *sys.argv[2:]])
