"""Secrets on a server's command line, found by their form and never shown.

A stdio server's arguments are readable by every local user (``/proc/<pid>/cmdline``,
``ps``), and its ``env`` is not: a token belongs in ``env``. An argument is taken for a
secret when it holds a well-known credential format (a GitHub, OpenAI, Anthropic, Slack,
AWS, GitLab, Google, Stripe, npm or Hugging Face token, a JWT, a private key, a URL with a
password), when it is the value of a flag named like one (``--api-key=...``,
``--token ...``), or (less sure) when it is long and random enough to be a key. What is
reported names the argument's position and the format, with the value redacted.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from mcpmount.audit._findings import Severity

__all__ = ["SecretArg", "secrets_in_args"]

_FORMATS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern))
    for name, pattern in (
        ("a GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})"),
        ("an Anthropic key", r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
        ("an OpenAI-style key", r"\bsk-(?:proj-|live-)?[A-Za-z0-9_-]{20,}"),
        ("a Slack token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
        ("an AWS access key id", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
        ("a GitLab token", r"\bglpat-[A-Za-z0-9_-]{20,}"),
        ("a Google API key", r"\bAIza[0-9A-Za-z_-]{35}"),
        ("a Stripe key", r"\b[sr]k_(?:live|test)_[0-9A-Za-z]{16,}"),
        ("an npm token", r"\bnpm_[A-Za-z0-9]{36}"),
        ("a Hugging Face token", r"\bhf_[A-Za-z0-9]{30,}"),
        ("a JWT", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),
        ("a private key", r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
        ("a URL with a password", r"[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s@]+@"),
    )
)
"""Credential formats, each by the kind of secret it is."""

_SECRET_FLAG = re.compile(
    r"^--?(?:[A-Za-z0-9_-]*[-_])?(?:api[-_]?key|token|secret|passw(?:or)?d|pwd|credentials?"
    r"|access[-_]?key|private[-_]?key|client[-_]?secret)$",
    re.IGNORECASE,
)
"""A flag named like one that takes a secret (``--api-key``, ``--github-token``)."""

_RANDOM = re.compile(r"[A-Za-z0-9_+/=.-]{32,}")
_MIN_BITS_PER_CHAR = 4.0
"""Shannon entropy above which a long run of letters, digits and ``+/=._-`` looks random."""


@dataclass(frozen=True, slots=True)
class SecretArg:
    """A command-line argument that looks like a secret."""

    index: int
    """Its position in ``args``."""
    what: str
    """What it looks like (``"a GitHub token"``, ``"the value of --api-key"``)."""
    shown: str
    """The argument with the secret redacted (``--api-key=***``)."""
    severity: Severity


def secrets_in_args(args: Sequence[str]) -> Iterator[SecretArg]:
    """Yield each argument of ``args`` that looks like a secret, redacted."""
    for index, arg in enumerate(args):
        flag, equals, value = arg.partition("=")
        for what, pattern in _FORMATS:
            if pattern.search(arg):
                yield SecretArg(index, what, _redacted(arg, pattern), Severity.HIGH)
                break
        else:
            if equals and value and _SECRET_FLAG.match(flag):
                yield SecretArg(index, f"the value of {flag}", f"{flag}=***", Severity.HIGH)
            elif index and _SECRET_FLAG.match(args[index - 1]) and not arg.startswith("-"):
                yield SecretArg(index, f"the value of {args[index - 1]}", "***", Severity.HIGH)
            elif any(_looks_random(run) for run in _RANDOM.findall(value or flag)):
                shown = f"{flag}=***" if equals else "***"
                yield SecretArg(index, "a long random value", shown, Severity.MEDIUM)


def _redacted(arg: str, pattern: re.Pattern[str]) -> str:
    """``arg`` with every match of ``pattern`` replaced by ``***``."""
    return pattern.sub("***", arg)


def _looks_random(run: str) -> bool:
    """Whether ``run`` mixes upper and lower case and digits with high entropy (a git
    commit, a UUID or a path does not)."""
    if "/" in run or run.startswith("."):
        return False
    if not (any(c.isupper() for c in run) and any(c.islower() for c in run)):
        return False
    if not any(c.isdigit() for c in run):
        return False
    counts = Counter(run)
    bits = -sum(n / len(run) * math.log2(n / len(run)) for n in counts.values())
    return bits >= _MIN_BITS_PER_CHAR
