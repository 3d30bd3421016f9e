"""What a sandbox must never show of the user's: credentials, and the folders around them.

A sandbox exists to keep a server away from the user's secrets, so no mount may hold
one. `credential_locations` lists where secrets live under a home (SSH and GnuPG keys,
cloud and registry logins, mcpmount's own token store); `never_shown` says why a path
must not be mounted whole: it is the home itself or one of its catch-all folders
(``~/.local``, ``~/.config``, ``~/.cache``...), a project root (its ``.env`` and
sources), or it holds, or lies in, a credential location. `exposed` is the audit's
question of a path the user listed: does it show a credential?
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from mcpmount.errors import SandboxUnavailableError

__all__ = ["Exposure", "SandboxUnavailableError", "credential_locations", "exposed", "never_shown"]


_CREDENTIALS = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube/config",
    ".config/gcloud",
    ".config/gh",
    ".netrc",
    ".git-credentials",
    ".pypirc",
    ".npmrc",
    ".docker/config.json",
    ".cargo/credentials",
    ".cargo/credentials.toml",
)
"""Under a home: keys, and the logins of the tools people use most."""

_CATCH_ALL = ("", ".local", ".local/share", ".local/state", ".local/lib", ".config", ".cache")
"""Under a home: folders that hold everything of everyone's (never mounted whole)."""

_PROJECT_MARKERS = (".git", ".env", "pyproject.toml", "package.json", "setup.py", "Cargo.toml")
"""What a project root holds at its top (its secrets sit beside its sources)."""


def credential_locations(homes: Iterable[str], private: Iterable[str] = ()) -> list[str]:
    """Where the user's secrets live: the known files and folders under each home,
    mcpmount's own state directory (its OAuth tokens) and ``private`` (a ``token_dir``
    set elsewhere)."""
    import platformdirs  # only where a sandbox is made: `import mcpmount` stays light

    state = platformdirs.user_state_dir("mcpmount")
    found = [os.path.join(home, name) for home in _and_real(homes) for name in _CREDENTIALS]
    ours = (p for path in (state, *private) for p in (path, os.path.realpath(path)))
    return [*found, *dict.fromkeys(ours)]


def _and_real(homes: Iterable[str]) -> list[str]:
    """Each home, and its real path where a symlink leads to it (``/home`` -> ``/var/home``):
    a program found on PATH may be named by either."""
    return list(dict.fromkeys(p for home in homes for p in (home, os.path.realpath(home))))


def _within(path: str, outer: str) -> bool:
    return path == outer or path.startswith(outer.rstrip("/") + "/")


def _is_install(path: str) -> bool:
    """Whether ``path`` is a virtualenv or an install prefix (not a project)."""
    if os.path.isfile(os.path.join(path, "pyvenv.cfg")):
        return True
    lib = os.path.join(path, "lib")
    try:
        names = os.listdir(lib)
    except OSError:
        return False
    return any(name.startswith("python") or name == "node_modules" for name in names)


class Exposure:
    """`never_shown` for one set of homes, with their folders worked out once (a server's
    start asks it of every file on its program's way)."""

    def __init__(self, homes: Iterable[str], private: Iterable[str] = ()) -> None:
        homes = _and_real(homes)
        self.catch_all = {
            os.path.normpath(os.path.join(home, name)): name
            for home in homes
            for name in _CATCH_ALL
        }
        locations = credential_locations(homes, private)
        self.locations = [location.rstrip("/") + "/" for location in locations]

    def why(self, path: str) -> str | None:
        """Why ``path`` must not be mounted whole, or None where it may be (judged as
        written and where its symlinks lead)."""
        real = os.path.realpath(path)
        return self._why(path) or (self._why(real) if real != path else None)

    def _why(self, path: str) -> str | None:
        base = os.path.basename(path)
        if base == ".env" or base.startswith(".env."):
            return "a .env file"
        name = self.catch_all.get(path)
        if name is not None:
            return "your home" if not name else f"~/{name}, which holds other programs' data"
        inside = path.rstrip("/") + "/"
        for location in self.locations:
            if location.startswith(inside):
                return f"it holds {location[:-1]}"
            if inside.startswith(location):
                return f"it is in {location[:-1]}"
        if os.path.isdir(path) and not _is_install(path):
            for marker in _PROJECT_MARKERS:
                if os.path.lexists(os.path.join(path, marker)):
                    return f"a project root (it holds {marker})"
        if os.path.lexists(os.path.join(path, ".env")):
            return "it holds .env"
        return None


def never_shown(path: str, homes: Iterable[str]) -> str | None:
    """Why ``path`` must not be mounted whole, or None where it may be."""
    return Exposure(homes).why(path)


def exposed(path: str, homes: Iterable[str]) -> str | None:
    """The credential location ``path`` shows (it is, holds or lies in one), or None."""
    for location in credential_locations(homes):
        for shown in dict.fromkeys((path, os.path.realpath(path))):
            if _within(location, shown) or _within(shown, location):
                return location
    return None
