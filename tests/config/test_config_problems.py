"""Problems: every one reported at once, one line each, naming the key and never a secret."""

from __future__ import annotations

import pytest
from config_support import SECRET, Write, http, problems_of

from mcpmount.config import load_config
from mcpmount.errors import ConfigError


def test_an_unknown_key_is_an_error_with_a_suggestion(write: Write) -> None:
    """A misspelled key is named, with the closest real key as a suggestion."""
    path = write(
        "servers.toml",
        """
        server = 1

        [registry]
        max_toolz = 64

        [servers.fs]
        command = "x"
        arsg = ["a"]
        zzz = 1
        """,
    )
    assert problems_of(path) == (
        "server: unknown key; did you mean 'servers'?",
        "registry.max_toolz: unknown key; did you mean 'max_tools'?",
        "servers.fs.arsg: unknown key; did you mean 'args'?",
        "servers.fs.zzz: unknown key",
    )


@pytest.mark.parametrize(
    ("namespace", "reason"),
    [
        ("GitHub", "lowercase"),
        ("a__b", "'__'"),
        ("a" * 33, "at most 32"),
        ("1abc", "starting with a letter"),
        ("my.server", "lowercase"),
    ],
)
def test_an_invalid_namespace_is_an_error(write: Write, namespace: str, reason: str) -> None:
    """The server key is the namespace, and a bad one is named with the rule it breaks."""
    path = write("servers.toml", f'[servers.{namespace!r}]\ncommand = "x"\n')
    (problem,) = problems_of(path)
    quoted = f'"{namespace}"' if "." in namespace else namespace
    assert problem.startswith(f"servers.{quoted}: ")
    assert reason in problem


def test_every_problem_in_the_file_is_reported_at_once(write: Write) -> None:
    """Problems in several servers and the registry come back together, in file order."""
    path = write(
        "servers.toml",
        """
        [registry]
        max_name_length = 1

        [servers.a]
        comand = "x"

        [servers.b]
        command = "x"
        args = "y"
        """,
    )
    assert len(problems_of(path)) == 3


def test_a_secret_never_appears_in_reprs_or_error_output(write: Write) -> None:
    """Secrets in env, headers, url and under a misspelled key never reach repr or errors."""
    good = write(
        "good.toml",
        f"""
        [servers.fs]
        command = "x"
        env = {{ TOKEN = "{SECRET}" }}

        [servers.api]
        url = "https://user:{SECRET}@api.example.com/mcp?key={SECRET}"
        headers = {{ Authorization = "Bearer ${{TOKEN}}" }}
        """,
    )
    config = load_config(good, environ={"TOKEN": SECRET})
    for text in (repr(config), str(config), repr(config.servers), str(config.servers["api"])):
        assert SECRET not in text
    assert http(config, "api").header_values() == {"Authorization": f"Bearer {SECRET}"}

    bad = write(
        "bad.toml",
        f"""
        [servers.api]
        url = "https://api.example.com/mcp"
        heders = {{ Authorization = "Bearer {SECRET}" }}
        headers = {{ Authorization = ["Bearer {SECRET}"], "X Y" = "{SECRET}" }}

        [servers.fs]
        command = "x"
        env = {{ TOKEN = 42, OTHER = "{SECRET}" }}
        args = "{SECRET}"
        startup_timeout = "{SECRET}"
        """,
    )
    with pytest.raises(ConfigError) as caught:
        load_config(bad, environ={})
    assert len(caught.value.problems) == 6
    assert SECRET not in str(caught.value)
    assert SECRET not in repr(caught.value)
    assert caught.value.__cause__ is None
    assert caught.value.__context__ is None
