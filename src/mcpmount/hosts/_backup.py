"""Writing a host's file so that it can be put back: `read_host_file`, `write_host_file`,
`Written`, `last_written`.

Before mcpmount first changes a host's file, the file as it was is copied, byte for byte,
beside it (``<file>.bak-<YYYYmmdd-HHMMSS>``), and the copy is remembered, with a digest of
what mcpmount wrote, in mcpmount's state folder (one small JSON record per host file).
``mcpmount uninstall`` compares the file with that digest: unchanged since, the copy is
put back as it was; changed (by its user, or its host), only mcpmount's entry is taken
out. A later install into a file mcpmount wrote last keeps the first copy: it is the file
as its user had it.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path

__all__ = ["Written", "digest", "forget", "last_written", "read_host_file", "write_host_file"]

_BOM = "\ufeff"


def read_host_file(path: Path) -> str | None:
    """Return the file's text as written (its line endings kept, a byte order mark
    dropped); None if there is no file."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    return data.decode("utf-8-sig")


def digest(data: bytes) -> str:
    """The SHA-256 of ``data``, in hex: how a file is known unchanged."""
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True, slots=True)
class Written:
    """What mcpmount last wrote into a host's file, and where the file as it was is."""

    file: str
    """The host's file."""

    backup: str | None
    """The copy of the file from before mcpmount's first change; None if it made it."""

    written: str
    """The digest of what mcpmount wrote last."""

    name: str
    """The entry's name."""

    config: str | None = None
    """The config ``adopt`` moved the file's servers into; None for ``install``."""


def _state() -> Path:
    import platformdirs  # only where a host's file is written

    return platformdirs.user_state_path("mcpmount") / "hosts"


def _record_path(file: Path) -> Path:
    return _state() / f"{digest(str(file.absolute()).encode())[:32]}.json"


def last_written(file: Path) -> Written | None:
    """Return what mcpmount last wrote into ``file``; None if nothing (or unreadable)."""
    try:
        data = json.loads(_record_path(file).read_text(encoding="utf-8"))
        return Written(**data)
    except (OSError, ValueError, TypeError):
        return None


def forget(file: Path) -> None:
    """Drop the record of ``file``: it is as its user had it again."""
    _record_path(file).unlink(missing_ok=True)


def write_host_file(
    path: Path, after: str, name: str, *, config: str | None = None, now: datetime | None = None
) -> Path | None:
    """Replace ``path`` with ``after`` atomically, keeping its mode, after copying it as it
    was beside it; remember both (see the module's docstring).

    Returns:
        The copy's path; None if there was no file to copy.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    old = path.read_bytes() if path.is_file() else None
    data = after.encode("utf-8")
    if old is not None and old.startswith(_BOM.encode()):
        data = _BOM.encode() + data
    backup = None
    if old is not None:
        backup = _backup_path(path, now or datetime.now())
        backup.write_bytes(old)
        os.chmod(backup, os.stat(path).st_mode & 0o777)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.mcpmount")
    temporary.write_bytes(data)
    # A new file is the user's alone: it may come to hold a secret.
    os.chmod(temporary, os.stat(path).st_mode & 0o777 if old is not None else 0o600)
    os.replace(temporary, path)
    previous = last_written(path)
    first = previous if previous and old is not None and digest(old) == previous.written else None
    record = Written(
        file=str(path.absolute()),
        backup=first.backup if first else (str(backup) if backup else None),
        written=digest(data),
        name=name,
        config=config or (first.config if first else None),
    )
    where = _record_path(path)
    where.parent.mkdir(parents=True, exist_ok=True)
    where.write_text(json.dumps(asdict(record)), encoding="utf-8")
    return backup


def _backup_path(path: Path, now: datetime) -> Path:
    stamp = now.strftime("%Y%m%d-%H%M%S")
    backup, n = path.with_name(f"{path.name}.bak-{stamp}"), 1
    while backup.exists():
        backup, n = path.with_name(f"{path.name}.bak-{stamp}-{n}"), n + 1
    return backup
