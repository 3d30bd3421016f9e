"""``mcpmount completion SHELL`` prints a script that completes commands, options and
choices: bash's is run in a real bash, as the shell runs it on Tab."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from cli.cli_support import mcpmount


def completions(script: str, *words: str) -> list[str]:
    """What bash offers for ``words`` (the last one being typed) after sourcing ``script``."""
    line = " ".join(words)
    program = (
        f"{script}\nCOMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; "
        'COMP_LINE="$*"; _mcpmount; printf "%s\\n" "${COMPREPLY[@]}"'
    )
    done = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", program],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return done.stdout.split()


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_bashs_script_completes_commands_options_and_choices() -> None:
    done = mcpmount("completion", "bash")
    assert done.returncode == 0, done.stderr
    script = done.stdout
    assert completions(script, "mcpmount", "")[:3] == ["check", "status", "lock"]
    assert completions(script, "mcpmount", "de") == ["describe"]
    assert completions(script, "mcpmount", "-v", "com") == ["completion"]
    assert completions(script, "mcpmount", "call", "x__y", "--ti") == ["--timeout"]
    assert completions(script, "mcpmount", "tools", "--l") == ["--live"]
    assert completions(script, "mcpmount", "check", "--from", "c") == [
        "claude-desktop",
        "claude-code",
        "cursor",
        "codex",
        "continue",
    ]
    assert completions(script, "mcpmount", "install", "v") == ["vscode"]


def test_zsh_and_fish_scripts_name_every_command() -> None:
    zsh = mcpmount("completion", "zsh").stdout
    assert "bashcompinit" in zsh
    assert "complete -o filenames -F _mcpmount mcpmount" in zsh
    fish = mcpmount("completion", "fish").stdout
    for command in ("check", "call", "describe", "serve", "completion"):
        assert f"-n __fish_use_subcommand -a {command} -d" in fish
    assert "complete -c mcpmount -n '__fish_seen_subcommand_from call' -l timeout -r" in fish
    assert "-l from -x -a 'claude-desktop claude-code cursor vscode windsurf zed" in fish
    unknown = mcpmount("completion", "tcsh")
    assert unknown.returncode == 2
    assert "invalid choice" in unknown.stderr
