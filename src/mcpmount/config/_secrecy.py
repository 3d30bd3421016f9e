"""What of a server's config is secret: the values the secret guard keeps to their server.

A guard that takes every configured value for a secret refuses ordinary calls (a path
under ``${HOME}/notes`` is no secret) and teaches users to switch it off; one that takes
too few lets a token through. So a value counts by where it comes from and what it looks
like (`secret_parts`):

- Under a credential-like name (`credential_name`: an ``env`` key, a header, a ``${VAR}``
  such as ``GITHUB_TOKEN``, ``PGPASSWORD``, ``Authorization``): the whole value.
- Anywhere: a URL's userinfo and the values of its credential-like query keys, text in a
  known credential format (`CREDENTIAL_FORMATS`), and a token of high entropy with no
  path or word structure (`secret_shaped`).
- Never, whatever the name: numbers, paths and URLs without credentials (`never_secret`).

A server's ``secrets = [...]`` / ``not_secrets = [...]`` (variable names) settle the cases
these rules get wrong; OAuth tokens and what ``headers_command`` prints always count.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Final
from urllib.parse import parse_qsl, unquote, urlsplit

__all__ = [
    "CREDENTIAL_FORMATS",
    "credential_name",
    "decide",
    "never_secret",
    "secret_parts",
    "secret_shaped",
    "url_secrets",
]

CREDENTIAL_FORMATS: Mapping[str, str] = {
    "a GitHub token": r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})",
    "an OpenAI or Anthropic API key": r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}",
    "a Slack token": r"\bxox[abpr]-[A-Za-z0-9-]{10,}",
    "an AWS access key ID": r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    "a JSON Web Token": r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",
    "a private key": r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----",
}
"""Text in a well-known credential format: a secret wherever it is configured, and what
``block_secrets`` refuses in arguments whoever's it is."""

_FORMATS: Final = re.compile("|".join(CREDENTIAL_FORMATS.values()))

_CREDENTIAL_NAME: Final = re.compile(
    r"TOKEN|SECRET|PASSW|PASSPHRASE|CREDENTIAL|AUTH(?!OR)|PRIVATE|COOKIE|SESSION|SIGNATURE"
    r"|API_?KEY|ACCESS_?KEY|(?:^|_)(?:PASS|PAT|KEY|PWD|PSK|DSN|JWT|BEARER)(?:_|$)|KEY$",
)
"""Names (upper-cased, ``-`` as ``_``) of what holds a credential: ``GH_PAT``,
``OPENAI_API_KEY``, ``PGPASSWORD``, ``Authorization``, ``X-Api-Key``."""

_QUERY_CREDENTIAL: Final = re.compile(
    r"pass|pwd|token|secret|key|sig|auth|cred|session|cookie|jwt|bearer|private", re.IGNORECASE
)

SHAPED_LENGTH: Final = 16
"""The shortest token taken for a secret by its shape alone."""

_ENTROPY: Final = 3.3
"""Bits per character a token taken for a secret by its shape has at least (a random
base62 token of 16 characters has about 3.7; a hex one of 32 about 3.8; words far less)."""

_NUMBER: Final = re.compile(r"[+-]?\d+(?:[.,_]\d+)*(?:[eE][+-]?\d+)?")
_UUID: Final = re.compile(r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}")
_WINDOWS_PATH: Final = re.compile(r"[A-Za-z]:[\\/]")
_URL: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>]+")
_SPLIT: Final = re.compile(r"[\s=,;]+")
_HEX: Final = re.compile(r"[0-9a-f]{32,}|[0-9A-F]{32,}")
_WORDLIKE: Final = re.compile(
    r"[A-Z]?(?=[a-z]*[aeiouy])[a-z]{3,}"  # a word with a vowel: ``Cloud``, ``mini``
    r"|(?<![A-Za-z0-9])[A-Za-z]{2,3}(?![A-Za-z])"  # a short name alone: ``gpt``, ``db``
    r"|(?<![A-Za-z])[A-Z]{2,5}(?![a-z])"  # an acronym: ``API``, ``HTTP``
    r"|[0-9]{2,}"  # a number: ``2024``
)
"""What text of words and numbers is made of. A random token is mostly made of other
things: consonant clusters, letters and digits interleaved."""

_WORDY: Final = 0.6
"""The share of a token's letters and digits in `_WORDLIKE` runs from which it is taken
for words and numbers (``gpt-4o-mini-2024-07-18``, ``GoogleCloudProject42``)."""


def credential_name(name: str) -> bool:
    """Whether ``name`` (a variable, an ``env`` key, a header) names a credential."""
    return _CREDENTIAL_NAME.search(name.upper().replace("-", "_")) is not None


def never_secret(value: str) -> bool:
    """Whether ``value`` is a number, a path or a URL without credentials: never a secret,
    whatever it is called (a ``PASSWORD_FILE`` path, a ``TOKEN_LIMIT``, an ``AUTH_URL``)."""
    text = value.strip()
    if not text or _NUMBER.fullmatch(text):
        return True
    if text.startswith(("/", "~", "./", "../")) or _WINDOWS_PATH.match(text):
        return not any(secret_shaped(part) for part in re.split(r"[\\/]", text))
    if _URL.fullmatch(text):
        return not url_secrets(text)
    return False


def url_secrets(text: str) -> list[str]:
    """The credentials of every URL in ``text``: its userinfo's password (its user when
    it has none: ``https://<token>@host``), and the values of its credential-like query
    keys (``?api_key=...``), each as written and decoded."""
    found: list[str] = []
    for match in _URL.finditer(text):
        url = match[0]
        try:
            parts = urlsplit(url)
        except ValueError:
            continue
        netloc = parts.netloc
        if "@" in netloc:
            userinfo = netloc.rpartition("@")[0]
            user, colon, password = userinfo.partition(":")
            found += [password, unquote(password)] if colon else [user, unquote(user)]
        for key, item in parse_qsl(parts.query, keep_blank_values=False):
            if _QUERY_CREDENTIAL.search(key) and not never_secret(item):
                found.append(item)
    return [each for each in dict.fromkeys(found) if each]


def _entropy(text: str) -> float:
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def secret_shaped(token: str) -> bool:
    """Whether one whitespace-free ``token`` looks like a credential: a known format, or
    random text (at least `SHAPED_LENGTH` characters, letters and digits mixed, high
    entropy, no word structure: not ``my-project-2024``, ``ServerBackupName``, a UUID)."""
    if _FORMATS.search(token):
        return True
    if len(token) < SHAPED_LENGTH or _NUMBER.fullmatch(token) or _UUID.fullmatch(token):
        return False
    letters = sum(ch.isalpha() for ch in token)
    digits = sum(ch.isdigit() for ch in token)
    mixed_case = any(ch.islower() for ch in token) and any(ch.isupper() for ch in token)
    if letters == 0 or (digits == 0 and not mixed_case):
        return False
    if _entropy(token) < _ENTROPY:
        return False
    if _HEX.fullmatch(token):
        return True  # a hex key; a short hash or colour stays below the length
    wordy = sum(map(len, _WORDLIKE.findall(token)))
    return wordy < _WORDY * (letters + digits)


def secret_parts(value: str, *, named: bool) -> list[str]:
    """What of one configured ``value`` is secret. ``named``: it is held under a
    credential-like name (`credential_name`), so all of it is, unless it is never one."""
    text = value.strip()
    if not text or never_secret(text):
        return []
    if named:
        return [text]
    found = url_secrets(text)
    for part in _SPLIT.split(text):
        if _URL.match(part):
            continue  # its credentials were taken above; the rest is an address
        if secret_shaped(part):
            found.append(part)
    return list(dict.fromkeys(found))


def decide(
    values: Iterable[tuple[str, str]], secrets: Iterable[str], not_secrets: Iterable[str]
) -> list[str]:
    """The secrets among ``values`` (each a name and the value it holds), with a server's
    ``secrets`` and ``not_secrets`` (names) deciding first."""
    forced, exempt = set(secrets), set(not_secrets)
    found: list[str] = []
    for name, value in values:
        if name in exempt:
            continue
        if name in forced:
            found += [value.strip()] if value.strip() else []
        else:
            found += secret_parts(value, named=credential_name(name))
    return list(dict.fromkeys(found))
