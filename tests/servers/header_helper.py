"""A ``headers_command`` for tests: prints ``{"Authorization": "Bearer <token>"}``.

Run it as ``python tests/servers/header_helper.py DIR [MODE]``; a file ``DIR/mode``, if
there is one, gives the MODE instead. Each run appends a line to ``DIR/runs`` first, then,
by MODE:

- ``ok`` (the default): prints the header with the token in ``DIR/token``;
- ``slow``: the same after 0.5 s (so that concurrent requests overlap the run);
- ``fail``: writes two lines to stderr and exits with status 1;
- ``hang``: starts a child (in its process group), then sleeps for a minute;
- ``garbage``: prints the token, which is not JSON;
- ``array``: prints a JSON array holding the token.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path


def main() -> None:
    folder, mode = Path(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else "ok"
    if (folder / "mode").exists():
        mode = (folder / "mode").read_text().strip()
    with open(folder / "runs", "a") as runs:
        runs.write(f"{mode}\n")
    token = (folder / "token").read_text().strip()
    match mode:
        case "ok" | "slow":
            if mode == "slow":
                time.sleep(0.5)
            print(json.dumps({"Authorization": f"Bearer {token}"}))
        case "fail":
            print("session expired, log in again\nsecond line", file=sys.stderr)
            sys.exit(1)
        case "hang":
            subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
            time.sleep(60)
        case "garbage":
            print(f"Bearer {token}")
        case _:
            print(json.dumps([f"Bearer {token}"]))


if __name__ == "__main__":
    main()
