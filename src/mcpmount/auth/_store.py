"""Where OAuth logins are kept: one file per server URL and client, readable by the user only.

A login is the client's registration, its tokens, when the access token expires, and the
server metadata that discovery found (so a later process can refresh without discovering
again). It is written whole to a temporary file and renamed into place, so a reader never
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

__all__ = ["Login", "LoginMetadata", "TokenStore"]

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

    def login(self, server_url: str, client_id: str | None) -> Login:
        """Return the login kept for ``server_url`` and ``client_id`` (None: a registered one)."""
        key = xxhash.xxh3_128_hexdigest(f"{server_url}\n{client_id or ''}".encode())
        return Login(self.directory / f"{key}.json", keyring=self.keyring)


class Login:
    """One server's login: the SDK's ``TokenStorage``, and what mcpmount keeps beside it.

    In the keyring it is one entry of service ``mcpmount`` named by the file's stem.
    """

    def __init__(self, path: Path, *, keyring: bool = False) -> None:
        self.path = path
        self._lock_path = path.with_suffix(".lock")
        self._keyring = keyring

    # The SDK's TokenStorage protocol.

    async def get_tokens(self) -> OAuthToken | None:
        return self._model("tokens", OAuthToken)

    async def set_tokens(self, tokens: OAuthToken) -> None:
        expires_at = None if tokens.expires_in is None else time.time() + int(tokens.expires_in)
        self._update(tokens=tokens.model_dump(mode="json"), expires_at=expires_at)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self._model("client", OAuthClientInformationFull)

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self._update(client=client_info.model_dump(mode="json", exclude_none=True))

    # What mcpmount keeps beside it.

    def expires_at(self) -> float | None:
        """When the stored access token expires (seconds since the epoch), if it says."""
        value = self._read().get("expires_at")
        return float(value) if isinstance(value, int | float) else None

    def metadata(self) -> LoginMetadata:
        return self._model("metadata", LoginMetadata) or LoginMetadata()

    def set_metadata(self, metadata: LoginMetadata) -> None:
        self._update(metadata=metadata.model_dump(mode="json", exclude_none=True))

    def tokens_kept(self) -> dict[str, object]:
        """Return the tokens and their expiry as kept, for `keep_tokens` to put back."""
        data = self._read()
        return {key: data.get(key) for key in ("tokens", "expires_at")}

    def keep_tokens(self, kept: dict[str, object]) -> None:
        """Put back what `tokens_kept` returned."""
        self._update(**kept)

    def forget_tokens(self) -> None:
        """Drop the tokens and keep the registration, so a login starts afresh."""
        self._update(tokens=None, expires_at=None)

    def forget_client(self) -> None:
        """Drop the registration (its redirect URI no longer fits), so the client registers
        again."""
        self._update(client=None)

    def forget(self) -> bool:
        """Remove the login altogether; return whether there was one."""
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
        """Hold the login's lock, shared by every process of this user.

        Raises:
            TimeoutError: Another process held it for `LOCK_WAIT` seconds.
        """
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

    def _model(self, key: str, model: type[_M]) -> _M | None:
        value = self._read().get(key)
        if value is None:
            return None
        try:
            return model.model_validate(value)
        except ValidationError:
            return None  # a damaged entry is no login: the user logs in again

    def _read(self) -> dict[str, Any]:
        try:
            if self._keyring:
                import keyring

                data = json.loads(keyring.get_password(_SERVICE, self.path.stem) or "{}")
            else:
                data = json.loads(self.path.read_bytes())
        except (FileNotFoundError, ValueError):
            return {}
        return cast("dict[str, Any]", data) if isinstance(data, dict) else {}

    def _update(self, **fields: object) -> None:
        data = self._read()
        data.update(fields)
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
