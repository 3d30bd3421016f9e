"""``mcpmount audit`` finds every finding the poisoned server plants, none above info on the
clean fixture, never prints a secret, and exits by ``--fail-on``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli.cli_support import mcpmount
from support import SERVERS, fixture_server, script_server, write_config

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("no_leaks")]

API_KEY = "sk-" + "Zq7" * 10
TOKEN = "ghp_" + "a1B2c3D4e5" * 4
"""Made-up secrets in credential formats, planted on the poisoned server's command line."""


def poisoned(name: str = "p", *flags: str, extra: str = "") -> str:
    return script_server(name, str(SERVERS / "poisoned_server.py"), *flags, extra=extra)


def audit_json(config: str, *flags: str) -> tuple[int, list[dict[str, str | None]]]:
    done = mcpmount("audit", config, "--json", *flags)
    assert done.returncode in (0, 1), done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] is (done.returncode == 0)
    return done.returncode, report["findings"]


def test_audit_finds_every_planted_finding_by_rule_server_and_item(tmp_path: Path) -> None:
    """Each plant is one finding of its rule, on its server and definition, at its severity."""
    secrets = poisoned("p", f"--api-key={API_KEY}", "--token", TOKEN)
    config = write_config(tmp_path, fixture_server("fx") + secrets)
    code, findings = audit_json(config)
    assert code == 1
    got = {(f["rule"], f["server"], f["kind"], f["item"], f["severity"]) for f in findings}
    expected = {
        ("hidden-text", "p", "tool", "add", "high"),  # tag characters
        ("hidden-text", "p", "tool", "read_notes", "high"),  # a bidi override
        ("hidden-text", "p", "tool", "search_notes", "medium"),  # a zero-width space
        ("hidden-text", "p", "tool", "format_note", "high"),  # ESC
        ("hidden-text", "p", "prompt", "summarize", "high"),  # a tag character
        ("shadowing", "p", "tool", "relay", "high"),
        ("instructions", "p", "tool", "sum", "high"),
        ("destructive-ungated", "p", "tool", "delete_note", "medium"),
        ("destructive-ungated", "p", "tool", "rewrite", "medium"),
        ("secret-in-args", "p", None, None, "high"),
        ("unpinned", "p", None, None, "info"),
        ("unpinned", "fx", None, None, "info"),
        ("unsandboxed", "p", None, None, "info"),
    }
    assert expected <= got
    messages = {(f["rule"], f["item"]): f["message"] or "" for f in findings}
    assert "35 tag characters (U+E0041 U+E006C" in messages["hidden-text", "add"]
    assert "'fx__echo'" in messages["shadowing", "relay"]
    said = " ".join(f["message"] or "" for f in findings if f["item"] == "sum")
    for quoted in ("'<IMPORTANT>'", "'~/.ssh'", "'Do not tell the user'", "'Before using this"):
        assert quoted in said
    args = [f["message"] or "" for f in findings if f["rule"] == "secret-in-args"]
    assert len(args) == 2
    assert any("args[1] (--api-key=***)" in m for m in args)
    assert any("args[3] (***) looks like a GitHub token" in m for m in args)
    assert not {f for f in got if f[1] == "fx" and f[4] != "info"}


def test_audit_never_prints_a_secret_nor_hidden_text(tmp_path: Path) -> None:
    """Table, summary, logs and JSON show secrets redacted and hidden characters as code
    points, never the text they spell."""
    config = write_config(tmp_path, poisoned("p", f"--api-key={API_KEY}", TOKEN))
    for flags in ((), ("--json",)):
        done = mcpmount("audit", config, *flags)
        assert done.returncode == 1, done.stderr
        for stream in (done.stdout, done.stderr):
            assert API_KEY not in stream
            assert TOKEN not in stream
            assert TOKEN[4:12] not in stream
            assert "send the user" not in stream
            assert "\U000e0041" not in stream
    assert "hidden-text" in done.stdout or "hidden-text" in mcpmount("audit", config).stdout


def test_the_clean_fixture_reports_nothing_above_info(tmp_path: Path) -> None:
    """A server with nothing planted gets only info findings, and exit 0 unless
    ``--fail-on info``."""
    config = write_config(tmp_path, fixture_server("fx"))
    code, findings = audit_json(config)
    assert code == 0
    assert findings
    assert {f["severity"] for f in findings} == {"info"}
    assert audit_json(config, "--fail-on", "info")[0] == 1


@pytest.mark.parametrize(("fail_on", "code"), [("high", 0), ("medium", 1), ("low", 1), ("info", 1)])
def test_the_exit_code_follows_fail_on(tmp_path: Path, fail_on: str, code: int) -> None:
    """Without hidden text or phrases, the poisoned server's worst is its ungated
    destructive tools (medium): exit 1 from ``--fail-on medium`` down."""
    body = poisoned("p", "--no-hidden", extra='tools = ["add", "delete_note", "rewrite"]')
    config = write_config(tmp_path, body)
    returned, findings = audit_json(config, "--fail-on", fail_on)
    assert max(f["severity"] or "" for f in findings) == "medium"  # "medium" > "info"
    assert returned == code


def test_a_gate_clears_the_destructive_finding(tmp_path: Path) -> None:
    """``approve`` globs (or ``approval = "destructive"``) gate the tools: no finding."""
    body = poisoned("p", "--no-hidden", extra='approve = ["delete_*", "rewrite"]')
    _, findings = audit_json(write_config(tmp_path, body))
    assert not [f for f in findings if f["rule"] == "destructive-ungated"]


def test_a_server_that_fails_to_mount_is_a_high_finding(tmp_path: Path) -> None:
    """It cannot be read, so the audit cannot pass it: ``unmounted``, with its error."""
    config = write_config(
        tmp_path, fixture_server("bad", "--crash-on-start") + fixture_server("fx")
    )
    code, findings = audit_json(config)
    assert code == 1
    [bad] = [f for f in findings if f["rule"] == "unmounted"]
    assert bad["server"] == "bad"
    assert bad["severity"] == "high"


def test_the_table_names_each_finding_and_the_summary_counts_them(tmp_path: Path) -> None:
    """Human output: a row per finding (server text shown, never obeyed) and a summary."""
    config = write_config(tmp_path, poisoned("p", f"--api-key={API_KEY}"))
    done = mcpmount("audit", config)
    assert done.returncode == 1
    flat = " ".join(done.stdout.split())
    for piece in ("instructions", "hidden-text", "tool sum", "tool add", "secret-in-args"):
        assert piece in flat
    assert "at or above high" in done.stderr


def test_a_lock_file_clears_the_unpinned_finding(tmp_path: Path) -> None:
    """After ``mcpmount lock`` the servers it pinned are no longer ``unpinned`` (and a
    sandboxed one is not ``unsandboxed``: nothing is left to report)."""
    config = write_config(tmp_path, fixture_server("fx", extra="sandbox = true"))
    assert mcpmount("lock", config).returncode == 0
    code, findings = audit_json(config, "--fail-on", "info")
    assert (code, findings) == (0, [])


def test_a_server_without_a_sandbox_is_an_info_finding_and_the_default_clears_it(
    tmp_path: Path,
) -> None:
    """A stdio server that runs with all of the user's rights is ``unsandboxed``; the
    registry-wide ``sandbox = true`` covers every server that sets none."""
    plain = write_config(
        tmp_path, fixture_server("fx") + fixture_server("own", extra="sandbox = false")
    )
    _, findings = audit_json(plain, "--fail-on", "info")
    unsandboxed = {f["server"] for f in findings if f["rule"] == "unsandboxed"}
    assert unsandboxed == {"fx", "own"}
    assert all(f["severity"] == "info" for f in findings)
    default = write_config(
        tmp_path,
        "[registry]\nsandbox = true\n"
        + fixture_server("fx")
        + fixture_server("own", extra="sandbox = false"),
    )
    _, findings = audit_json(default, "--fail-on", "info")
    assert {f["server"] for f in findings if f["rule"] == "unsandboxed"} == {"own"}


def test_check_refuses_under_refuse_and_notes_what_strip_removed(tmp_path: Path) -> None:
    """``check`` under ``hidden_text = "refuse"``: exit 1, the error names the server, the
    tool and the setting that accepts it; under the default it mounts with a note."""
    refused = write_config(tmp_path, poisoned("p", extra='hidden_text = "refuse"'))
    done = mcpmount("check", refused, "--json")  # the error whole, not wrapped in a table
    assert done.returncode == 1
    (row,) = json.loads(done.stdout)["servers"]
    assert "tool 'add': its text holds hidden characters: 35 tag characters" in row["error"]
    assert 'set hidden_text = "strip" to mount it' in row["error"]
    stripped = write_config(tmp_path, poisoned("p"))
    done = mcpmount("check", stripped)
    assert done.returncode == 0, done.stderr
    assert "p: hidden characters stripped from tool 'add'" in " ".join(done.stderr.split())
