"""Install the real servers of ``configs/real-servers.toml``, pinned, where it runs them.

The install lines are the config's header comment, the one place they are written: this
runs them (the first block of indented comment lines, with ``\\`` continuations joined),
one at a time, stopping at the first that fails, then checks that every stdio server's
command of the config is there. Running it again installs nothing new. They run as in a
shell with no venv active: an active venv's ``python3`` may be another interpreter than
the one that made the scratch venvs, and ``venv`` then fails on them.

Run it from anywhere:  python tests/bench/install_real_servers.py [--dry-run]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tomllib
from pathlib import Path

CONFIG = Path(__file__).parents[2] / "configs" / "real-servers.toml"


def install_lines(text: str) -> list[str]:
    """The shell lines of the header's first indented block, continuations joined."""
    lines: list[str] = []
    started = False
    for raw in text.splitlines():
        if not raw.startswith("#"):
            break
        body = raw[1:]
        if body.startswith("   ") and body.strip():
            started = True
            if lines and lines[-1].endswith("\\"):
                lines[-1] = lines[-1][:-1].rstrip() + " " + body.strip()
            else:
                lines.append(body.strip())
        elif started:
            break
    return lines


def missing_commands(text: str) -> list[str]:
    """The commands of the config's stdio servers that are not installed."""
    servers: dict[str, dict[str, object]] = tomllib.loads(text)["servers"]
    commands = [str(s["command"]) for s in servers.values() if "command" in s]
    return [c for c in commands if Path(c).is_absolute() and not Path(c).exists()]


def no_venv(environ: dict[str, str]) -> dict[str, str]:
    """``environ`` as a shell without an active venv has it."""
    venv = environ.pop("VIRTUAL_ENV", None)
    if venv is not None:
        venv_bin = str(Path(venv) / "bin")
        path = environ.get("PATH", "").split(os.pathsep)
        environ["PATH"] = os.pathsep.join(p for p in path if p != venv_bin)
    return environ


def main(dry_run: bool) -> int:
    text = CONFIG.read_text(encoding="utf-8")
    env = no_venv(dict(os.environ))
    for line in install_lines(text):
        print(f"$ {line}", flush=True)
        if dry_run:
            continue
        if subprocess.run(["/bin/sh", "-c", line], env=env, check=False).returncode:
            print(f"failed: {line}", file=sys.stderr)
            return 1
    missing = [] if dry_run else missing_commands(text)
    for command in missing:
        print(f"not installed: {command}", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Install the real servers, pinned.")
    parser.add_argument("--dry-run", action="store_true", help="print the lines; run none")
    sys.exit(main(parser.parse_args().dry_run))
