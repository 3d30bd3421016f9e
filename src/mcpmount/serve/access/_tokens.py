"""Bearer tokens HTTP ``serve`` accepts: static ones (`StaticTokens`) and JWTs (`JwtTokens`).

Both are the SDK's ``TokenVerifier`` (mcp/server/auth/provider.py): the SDK's bearer
middleware asks them about every request to ``/mcp`` and answers 401 itself when they
return None. What a token may see travels with it as a `Grant`.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import anyio.to_thread
import jwt
from mcp.server.auth.provider import AccessToken

from mcpmount.config import MIN_TOKEN_LENGTH, ServeOAuth, ServeToken
from mcpmount.errors import ConfigError

__all__ = ["Grant", "JwtTokens", "StaticTokens", "read_tokens_file"]

logger = logging.getLogger(__name__)

NAMESPACES_CLAIM: Final = "mcpmount_namespaces"
"""A JWT claim (a list of strings) that limits the namespaces the token may see."""

_ALGORITHMS: Final = (
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "ES512",
    "EdDSA",
)
"""Signatures with the issuer's public keys only: never a shared-secret HS* algorithm, which
would let anyone holding the (public) JWKS forge tokens."""


class Grant(AccessToken):
    """An accepted token, and the namespaces it may see."""

    namespaces: frozenset[str] | None = None
    """The namespaces whose tools, prompts and resources the token may see; None: all."""


@dataclass(frozen=True, slots=True)
class _Static:
    name: str
    digest: bytes
    """The SHA-256 of the token."""
    namespaces: frozenset[str] | None


class StaticTokens:
    """Static bearer tokens, compared in constant time.

    Args:
        tokens: Name to token; the name is the token's ``client_id`` (what logs show, and
            what binds a session to the token that opened it).
        scopes: Scopes every static token holds (the ones an OAuth setup requires).
    """

    def __init__(self, tokens: Mapping[str, ServeToken], scopes: list[str]) -> None:
        self._tokens = [
            _Static(
                name,
                hashlib.sha256(token.token.get_secret_value().encode()).digest(),
                frozenset(token.namespaces) if token.namespaces is not None else None,
            )
            for name, token in tokens.items()
        ]
        self._scopes = scopes

    def __bool__(self) -> bool:
        return bool(self._tokens)

    async def verify_token(self, token: str) -> Grant | None:
        """Return the grant of ``token``, or None if it is none of ours."""
        # Digests are compared, so the time says nothing of a token's length either; and
        # every one is compared, so it says nothing of which matched.
        given = hashlib.sha256(token.encode()).digest()
        found: _Static | None = None
        for static in self._tokens:
            if hmac.compare_digest(static.digest, given) and found is None:
                found = static
        if found is None:
            return None
        return Grant(
            token=token,
            client_id=f"token:{found.name}",
            scopes=list(self._scopes),
            namespaces=found.namespaces,
        )


class JwtTokens:
    """JWT access tokens of one issuer for one resource, checked against the issuer's JWKS.

    Checks the signature (a key of the JWKS, an asymmetric algorithm), ``exp`` (and ``nbf``
    and ``iat`` when present), ``iss`` and ``aud``; the SDK's middleware checks the scopes.
    Keys are fetched on first use and kept for five minutes; a token naming an unknown key
    fetches them again. Why a token was refused is logged (info) through ``redact``.
    """

    def __init__(self, oauth: ServeOAuth, redact: Callable[[str], str]) -> None:
        self._oauth = oauth
        self._redact = redact
        self._keys = jwt.PyJWKClient(oauth.jwks_url, cache_keys=True, lifespan=300, timeout=10)

    async def verify_token(self, token: str) -> Grant | None:
        """Return the grant of ``token``, or None if it is not a valid token for us."""
        if token.count(".") != 2:
            return None
        try:
            # PyJWKClient fetches with urllib, which blocks: not on the event loop.
            key = await anyio.to_thread.run_sync(self._keys.get_signing_key_from_jwt, token)
            claims: dict[str, Any] = jwt.decode(
                token,
                key.key,
                algorithms=list(_ALGORITHMS),
                audience=self._oauth.resource,
                issuer=self._oauth.issuer,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.PyJWTError as exc:  # the reason only: never the token
            logger.info("refused a JWT: %s", self._redact(str(exc)))
            return None
        scope = claims.get("scope", claims.get("scp", ""))
        scopes = scope.split() if isinstance(scope, str) else [str(s) for s in scope]
        client = claims.get("client_id", claims.get("azp", claims.get("sub", "")))
        subject = claims.get("sub")
        return Grant(
            token=token,
            client_id=str(client),
            scopes=scopes,
            expires_at=int(claims["exp"]),
            resource=self._oauth.resource,
            subject=str(subject) if subject is not None else None,
            claims=claims,
            namespaces=_claimed_namespaces(claims),
        )


def _claimed_namespaces(claims: Mapping[str, Any]) -> frozenset[str] | None:
    """The namespaces a token's ``mcpmount_namespaces`` claim allows; a malformed claim
    allows none."""
    if NAMESPACES_CLAIM not in claims:
        return None
    value = claims[NAMESPACES_CLAIM]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):  # pyright: ignore[reportUnknownVariableType]
        return frozenset(value)  # pyright: ignore[reportUnknownArgumentType]
    return frozenset()


def read_tokens_file(path: Path) -> dict[str, ServeToken]:
    """Read a tokens file: one token a line, ``TOKEN`` or ``TOKEN ns1,ns2``; ``#`` comments.

    Each token is named ``FILE:LINE`` (the file's name and the line number).

    Raises:
        ConfigError: The file is unreadable, or a line is malformed; never quoting a token.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(str(path), [f"cannot read the tokens file: {exc.strerror}"]) from None
    except UnicodeDecodeError:
        raise ConfigError(str(path), ["the tokens file is not UTF-8 text"]) from None
    tokens: dict[str, ServeToken] = {}
    problems: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) > 2:
            problems.append(f"line {number}: write TOKEN or TOKEN ns1,ns2 (no spaces in the list)")
            continue
        if len(words[0]) < MIN_TOKEN_LENGTH:
            problems.append(f"line {number}: a token must be {MIN_TOKEN_LENGTH} characters or more")
            continue
        namespaces = [ns for ns in words[1].split(",") if ns] if len(words) == 2 else None
        tokens[f"{path.name}:{number}"] = ServeToken.model_validate(
            {"token": words[0], "namespaces": namespaces}
        )
    if problems:
        raise ConfigError(str(path), problems)
    return tokens
