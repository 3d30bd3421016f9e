"""Where OAuth logins are kept: one file per server, client and authorization server (its
issuer), readable by the user only.

A login is the client's registration, its tokens, when the access token expires, and the
server metadata that discovery found (so a later process can refresh without discovering
again). Registrations and tokens belong to the authorization server that issued them, so a
login is keyed by its issuer as well as the server (SEP-2352): a server whose
authorization server changes starts a new login there and never shows the old one's
client id or tokens to the new one, and two servers behind one authorization server keep
their own tokens (each token is for one server, its audience). A small file per server and
client names the issuer of its last login, so a new process finds it without discovery;
before issuers were kept, that file held the login itself, and it is moved under its issuer
when first read.

Each file is written whole to a temporary file and renamed into place, so a reader never
sees half of one. Refreshing takes the login's lock, a lock file beside it, so that two
processes never spend the same refresh token (an authorization server that rotates refresh
tokens revokes the login when one is spent twice).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import tempfile
import time
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any, TypeVar, cast
from urllib.parse import urlsplit

import anyio
import filelock
import platformdirs
import xxhash
from mcp.shared.auth import (
    OAuthClientInformationFull,
    OAuthMetadata,
    OAuthToken,
    ProtectedResourceMetadata,
)
from pydantic import BaseModel, ValidationError

from mcpmount.config import RegistrySettings

__all__ = ["Login", "LoginMetadata", "Record", "TokenStore"]

logger = logging.getLogger(__name__)

LOCK_WAIT = 30.0
"""Seconds a refresh waits for another process's refresh of the same login."""

_POLL = 0.05

_SERVICE = "mcpmount"
"""The keyring service logins are kept under."""

_M = TypeVar("_M", bound=BaseModel)


class LoginMetadata(BaseModel):
    """What discovery found for a login's server, kept so that refreshing needs none."""

    resource: ProtectedResourceMetadata | None = None
    authorization_server: str | None = None
    server: OAuthMetadata | None = None


class TokenStore:
    """The logins of this user: files in ``directory`` (``token_dir``, or ``tokens`` under the
    user's state directory), or entries of the system keyring with their lock files there."""

    def __init__(
        self, directory: str | os.PathLike[str] | None = None, *, keyring: bool = False
    ) -> None:
        default = Path(platformdirs.user_state_dir("mcpmount")) / "tokens"
        self.directory = Path(directory) if directory is not None else default
        self.keyring = keyring

    @classmethod
    def of(cls, settings: RegistrySettings) -> TokenStore:
        """Return the store ``settings`` name (``token_dir``, ``token_store``)."""
        return cls(settings.token_dir, keyring=settings.token_store == "keyring")

    def login(self, server_url: str, client_id: str | None, *, issuer: str | None = None) -> Login:
        """Return the login kept for ``server_url`` and ``client_id`` (None: a registered one).

        Its issuer is ``issuer`` when configured, else that of the server's last login, until
        discovery names one (`Login.use`).
        """
        return Login(self, server_url, client_id or "", issuer)

    def _record(self, *key: str) -> Record:
        name = xxhash.xxh3_128_hexdigest("\n".join(key).encode())
        return Record(self.directory / f"{name}.json", keyring=self.keyring)


def same_issuer(issuer: str) -> str:
    """``issuer`` as logins are keyed: a root issuer without its trailing slash, as the SDK
    compares them (``https://as.example`` and ``https://as.example/`` are one server)."""
    return issuer.rstrip("/") if urlsplit(issuer).path in ("", "/") else issuer


class Login:
    """One server's login at its authorization server: the SDK's ``TokenStorage``, and what
    mcpmount keeps beside it."""

    def __init__(self, store: TokenStore, server_url: str, client: str, issuer: str | None):
        self._store = store
        self._key = (server_url, client)
        # Named as the whole login was before issuers were kept: old logins are found.
        self._server = store._record(server_url, client)  # pyright: ignore[reportPrivateUsage]
        self._migrate()
        kept = self._server.read().get("issuer")
        chosen = issuer if issuer is not None else kept if isinstance(kept, str) else None
        self.issuer = same_issuer(chosen) if chosen is not None else None

    @property
    def path(self) -> Path:
        """The file of the login at its issuer (in the keyring, the entry named by its stem)."""
        return self._current.path

    @property
    def _current(self) -> Record:
        if self.issuer is None:
            return self._server  # no login yet, or one from before issuers, not yet placed
        return self._store._record(*self._key, self.issuer)  # pyright: ignore[reportPrivateUsage]

    def _migrate(self) -> None:
        """Move a login kept before issuers were under the issuer its metadata names."""
        data = self._server.read()
        if "issuer" in data or not data.keys() & {"tokens", "client", "metadata"}:
            return
        issuer = _issuer_of(data)
        if issuer is not None:
            self._place(issuer, data)

    def _place(self, issuer: str, data: dict[str, Any]) -> None:
        issuer = same_issuer(issuer)
        self._store._record(*self._key, issuer).update(**data)  # pyright: ignore[reportPrivateUsage]
        self._server.replace({"issuer": issuer, "issuers": [issuer]})

    def use(self, issuer: str) -> bool:
        """Key this login by ``issuer``, the authorization server discovery found; return
        whether that changed it. A login kept before issuers were, with none named, is
        taken to be this one's (the SDK likewise keeps credentials with no issuer)."""
        issuer = same_issuer(issuer)
        if issuer == self.issuer:
            return False
        if self.issuer is None and "issuer" not in (data := self._server.read()) and data:
            self._place(issuer, data)
        self.issuer = issuer
        return True

    # The SDK's TokenStorage protocol.

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens()

    async def set_tokens(self, tokens: OAuthToken) -> None:
        expires_at = None if tokens.expires_in is None else time.time() + int(tokens.expires_in)
        self._current.update(tokens=tokens.model_dump(mode="json"), expires_at=expires_at)
        self._point()

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client()

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self._current.update(client=client_info.model_dump(mode="json", exclude_none=True))

    # What mcpmount keeps beside it.

    def tokens(self) -> OAuthToken | None:
        return self._current.model("tokens", OAuthToken)

    def client(self) -> OAuthClientInformationFull | None:
        return self._current.model("client", OAuthClientInformationFull)

    def _point(self) -> None:
        """Name this login's issuer as the server's, once it holds tokens from there."""
        data = self._server.read()
        if self.issuer is None or data.get("issuer") == self.issuer:
            return
        issuers = [*_issuers(data), self.issuer]
        self._server.replace({"issuer": self.issuer, "issuers": issuers})

    def expires_at(self) -> float | None:
        """When the stored access token expires (seconds since the epoch), if it says."""
        value = self._current.read().get("expires_at")
        return float(value) if isinstance(value, int | float) else None

    def metadata(self) -> LoginMetadata:
        return self._current.model("metadata", LoginMetadata) or LoginMetadata()

    def set_metadata(self, metadata: LoginMetadata) -> None:
        self._current.update(metadata=metadata.model_dump(mode="json", exclude_none=True))

    def wanted_scope(self) -> str | None:
        """The scope the server asked for mid-session, which the next login asks for too."""
        value = self._current.read().get("wanted_scope")
        return value if isinstance(value, str) else None

    def want_scope(self, scope: str | None) -> None:
        self._current.update(wanted_scope=scope)

    def tokens_kept(self) -> dict[str, object]:
        """Return the tokens, their expiry and issuer as kept, for `keep_tokens` to put back."""
        data = self._current.read()
        kept: dict[str, object] = {"issuer": self.issuer}
        return kept | {key: data.get(key) for key in ("tokens", "expires_at")}

    def keep_tokens(self, kept: dict[str, object]) -> None:
        """Put back what `tokens_kept` returned, and its issuer as the server's."""
        fields = dict(kept)
        issuer = fields.pop("issuer", None)
        self.issuer = issuer if isinstance(issuer, str) else None
        self._current.update(**fields)
        if fields.get("tokens") is not None:
            self._point()

    def forget_tokens(self) -> None:
        """Drop the tokens and keep the registration, so a login starts afresh."""
        self._current.update(tokens=None, expires_at=None)

    def forget_client(self) -> None:
        """Drop the registration (its redirect URI no longer fits), so the client registers
        again."""
        self._current.update(client=None)

    def forget(self) -> bool:
        """Remove the login at every issuer it had; return whether there was one."""
        issuers = {*_issuers(self._server.read()), *([self.issuer] if self.issuer else [])}
        records = [self._store._record(*self._key, i) for i in issuers]  # pyright: ignore[reportPrivateUsage]
        forgotten = [record.forget() for record in [*records, self._server]]  # each of them
        return any(forgotten)

    @contextlib.asynccontextmanager
    async def locked(self) -> AsyncGenerator[None]:
        """Hold the login's lock, shared by every process of this user.

        Raises:
            TimeoutError: Another process held it for `LOCK_WAIT` seconds.
        """
        async with self._current.locked():
            yield


def _issuer_of(data: dict[str, Any]) -> str | None:
    """The issuer a login kept before issuers were names: its metadata's, else its client's."""
    metadata = _table(data, "metadata")
    for found in (_table(metadata, "server").get("issuer"), metadata.get("authorization_server")):
        if isinstance(found, str):
            return found
    found = _table(data, "client").get("issuer")
    return found if isinstance(found, str) else None


def _issuers(data: dict[str, Any]) -> list[str]:
    """The issuers a server's record says it had logins at."""
    seen = data.get("issuers")
    listed = cast("list[object]", seen) if isinstance(seen, list) else []
    return [issuer for issuer in listed if isinstance(issuer, str)]


def _table(data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key)
    return cast("dict[str, Any]", value) if isinstance(value, dict) else {}


class Record:
    """One JSON file, or in the keyring one entry of service ``mcpmount`` named by the
    file's stem, with a lock file beside it."""

    def __init__(self, path: Path, *, keyring: bool = False) -> None:
        self.path = path
        self._lock_path = path.with_suffix(".lock")
        self._keyring = keyring

    def forget(self) -> bool:
        """Remove the record and its lock file; return whether there was one."""
        with contextlib.suppress(FileNotFoundError):
            self._lock_path.unlink()
        if self._keyring:
            import keyring.errors  # the optional extra; settings refuse "keyring" without it

            try:
                keyring.delete_password(_SERVICE, self.path.stem)
            except keyring.errors.PasswordDeleteError:
                return False
            return True
        try:
            self.path.unlink()
        except FileNotFoundError:
            return False
        return True

    @contextlib.asynccontextmanager
    async def locked(self) -> AsyncGenerator[None]:
        self._make_directory()
        # A lock object of its own each time: two tasks of one process exclude each other
        # too (the lock file is opened once per object).
        lock = filelock.FileLock(self._lock_path, mode=0o600)
        with anyio.fail_after(LOCK_WAIT):
            for attempt in itertools.count():
                try:
                    lock.acquire(blocking=False)
                    break
                except filelock.Timeout:
                    if attempt == 0:
                        logger.info(
                            "waiting for another process's OAuth refresh (%s)", self.path.stem
                        )
                    await anyio.sleep(_POLL)
        try:
            yield
        finally:
            lock.release()

    def model(self, key: str, model: type[_M]) -> _M | None:
        value = self.read().get(key)
        if value is None:
            return None
        try:
            return model.model_validate(value)
        except ValidationError:
            return None  # a damaged entry is no login: the user logs in again

    def read(self) -> dict[str, Any]:
        try:
            if self._keyring:
                import keyring

                data = json.loads(keyring.get_password(_SERVICE, self.path.stem) or "{}")
            else:
                data = json.loads(self.path.read_bytes())
        except (FileNotFoundError, ValueError):
            return {}
        return cast("dict[str, Any]", data) if isinstance(data, dict) else {}

    def update(self, **fields: object) -> None:
        self.replace(self.read() | fields)

    def replace(self, data: dict[str, object]) -> None:
        if self._keyring:
            import keyring

            keyring.set_password(_SERVICE, self.path.stem, json.dumps(data))
            return
        self._make_directory()
        # mkstemp makes the file readable by the user only (0600).
        descriptor, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".", suffix=".tmp")
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as file:
                json.dump(data, file)
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise

    def _make_directory(self) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
