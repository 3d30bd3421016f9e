"""`redacted_url`: how every URL a message shows is shown."""

from __future__ import annotations

import pytest

from mcpmount.config import redacted_url


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("redis://host:6379/0", "redis://host:6379/0"),
        ("redis://host:6379/0?password=pw", "redis://host:6379/0?password=***"),
        ("redis://user:pw@host:6379/0", "redis://user:***@host:6379/0"),
        ("redis://:pw@host", "redis://:***@host"),
        ("redis://localhost?Password=pw&db=2", "redis://localhost?Password=***&db=2"),
        ("unix:///run/redis.sock?db=0&password=pw", "unix:///run/redis.sock?db=0&password=***"),
        ("unix://u:pw@/run/redis.sock", "unix://u:***@/run/redis.sock"),
        ("rediss://[::1]:6380/1?passwd=pw", "rediss://[::1]:6380/1?passwd=***"),
        ("https://tok@api.example.com/mcp", "https://***@api.example.com/mcp"),
        ("https://a.example/mcp?api_key=k&region=eu", "https://a.example/mcp?api_key=***&region=eu"),
        ("https://a.example/mcp?X-Amz-Signature=s&X-Amz-Credential=c", "https://a.example/mcp?X-Amz-Signature=***&X-Amz-Credential=***"),
        ("https://a.example/mcp?access_token=t#frag", "https://a.example/mcp?access_token=***"),
        ("https://a.example/mcp?%70assword=pw", "https://a.example/mcp?%70assword=***"),
        ("https://a.example/mcp?client_secret=a=b", "https://a.example/mcp?client_secret=***"),
        ("https://a.example/mcp?next=u@b.example", "https://a.example/mcp?next=u@b.example"),
        ("redis://:p?a#s@s@host/0", "redis://:***@host/0"),
        ("https://[::1/mcp?sig=s", "https://[::1/mcp?sig=***"),
        ("not a url", "not a url"),
    ],
)  # fmt: skip
def test_a_url_is_shown_without_its_password_or_credential_query_values(
    url: str, shown: str
) -> None:
    """The userinfo's password and every credential-like query value become ``***``; the
    keys stay, so the reader can tell which one; nothing else changes, nothing raises."""
    assert redacted_url(url) == shown


def test_every_credential_word_is_recognised_in_any_case_and_inside_a_key() -> None:
    words = ["password", "passwd", "pwd", "token", "access_token", "secret", "client_secret"]
    words += ["key", "api_key", "apikey", "sig", "signature", "auth", "credential"]
    for word in words:
        for key in (word, word.upper(), f"x-{word}-1"):
            assert redacted_url(f"redis://h/0?{key}=SECRET") == f"redis://h/0?{key}=***"
