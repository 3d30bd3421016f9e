"""Every code block of README.md and docs/ does what it shows, and the site builds strictly.

Python blocks run as programs from the repository root, against the demo config (a few
marked ``compile-only`` are compiled and their configs loaded); transcripts run and print
what they show; TOML and ``mcpServers`` JSON load with `load_config`; every ``mcpmount``
command line parses, and those that query the demo config run. `docs_support` says how.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import cast

import pytest
from docs_support import (
    ROOT,
    Block,
    blocks,
    environment,
    every_block,
    normalize,
    pages,
    run_in_terminal,
    transcript,
)

from mcpmount.cli._app import _parser  # pyright: ignore[reportPrivateUsage]
from mcpmount.cli._exit import UsageError
from mcpmount.config import input_variable, load_config
from mcpmount.policy import policy_problems

pytestmark = pytest.mark.usefixtures("no_leaks")

BLOCKS = every_block()
CHECKED = {"python", "toml", "json", "sh", "console", "text", "cedar"}
DEMO = "configs/demo.toml"
RUN_ON_THE_DEMO = {"check", "tools", "search", "call", "prompts", "resources"}
"""Commands a block runs for real when it names the demo config: they only read it."""
TIMEOUT = 60


def of(*langs: str) -> list[Block]:
    return [block for block in BLOCKS if block.lang in langs and block.marker != "output"]


def ids(found: list[Block]) -> list[str]:
    return [block.id for block in found]


def output_of(block: Block) -> Block | None:
    """The ``output`` block right after ``block`` in its file, if there is one."""
    same_file = blocks(block.path)
    after = [b for b in same_file if b.line > block.line]
    return after[0] if after and after[0].marker == "output" else None


def variables(text: str) -> dict[str, str]:
    """This environment, with a stand-in (long enough for a token) for each unset ``${VAR}``
    or ``${env:VAR}``, and for the variable that answers each ``${input:id}``."""
    env = environment()
    names = re.findall(r"\$\{(?:env:)?(\w+)", text)
    names += [input_variable(found) for found in re.findall(r"\$\{input:([^}]+)\}", text)]
    for name in names:
        env.setdefault(name, f"docs-test-{name.lower()}-stand-in")
    return env


def parse_command_line(argv: list[str]) -> None:
    """Fail the test if ``mcpmount argv`` is not a command line the CLI accepts."""
    try:
        _parser().parse_args(argv)
    except UsageError as exc:
        pytest.fail(f"`mcpmount {shlex.join(argv)}` does not parse: {exc}")


def test_every_block_is_of_a_kind_the_tests_check() -> None:
    """A block in another language would go unchecked: add it to the checks first."""
    unchecked = [f"{b.id} ({b.lang or 'no language'})" for b in BLOCKS if b.lang not in CHECKED]
    assert unchecked == []
    orphans = [b.id for b in BLOCKS if b.marker == "output" and b.lang != "text"]
    assert orphans == []


@pytest.mark.slow  # the transcripts keep the working tier's end-to-end run of the docs
@pytest.mark.parametrize("block", of("python"), ids=ids(of("python")))
def test_a_python_block_runs_as_a_program(block: Block, tmp_path: Path) -> None:
    """It runs to exit 0 from the repository root, and prints the output block after it."""
    if block.marker == "compile-only":
        compile(block.text, block.id, "exec")
        names = [
            node.value
            for node in ast.walk(ast.parse(block.text))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
        ]
        configs = [name for name in names if name.endswith((".toml", ".json"))]
        assert configs, "a compile-only block should name the config it runs on"
        for config in configs:
            load_config(ROOT / config)
        return
    program = tmp_path / "block.py"
    program.write_text(block.text)
    done = subprocess.run(
        [sys.executable, str(program)],
        cwd=ROOT,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    if (expected := output_of(block)) is not None:
        assert normalize(done.stdout) == normalize(expected.text)


@pytest.mark.parametrize("block", of("console"), ids=ids(of("console")))
def test_a_transcript_prints_what_it_shows(block: Block) -> None:
    """Each ``$ mcpmount ...`` runs in a terminal and prints the lines shown after it."""
    steps = transcript(block)
    assert steps, "a console block holds `$ command` lines"
    for step in steps:
        word, *argv = shlex.split(step.command)
        assert word == "mcpmount", f"{step.command!r}: transcripts run mcpmount only"
        code, printed = run_in_terminal([sys.executable, "-m", "mcpmount", *argv], TIMEOUT)
        assert code == 0, printed
        assert normalize(printed) == normalize(step.shown), step.command


@pytest.mark.parametrize("block", of("toml"), ids=ids(of("toml")))
def test_a_toml_block_is_a_config_mcpmount_loads(block: Block, tmp_path: Path) -> None:
    """Written to a file, it loads without a problem (``${VAR}``s get stand-in values); the
    policy file it names is its page's first ``cedar`` block."""
    config = tmp_path / "mcpmount.toml"
    config.write_text(block.text)
    policies = [b.text for b in blocks(block.path) if b.lang == "cedar"]
    if policies:
        (tmp_path / "policy.cedar").write_text(policies[0])
    load_config(config, environ=variables(block.text))


@pytest.mark.parametrize("block", of("json"), ids=ids(of("json")))
def test_a_json_block_is_a_host_file_that_runs_mcpmount_as_it_parses(
    block: Block, tmp_path: Path
) -> None:
    """It parses; an ``mcpServers`` file, or VS Code's ``servers``, loads as a config; a
    server it declares that runs ``mcpmount`` passes arguments the command line accepts."""
    document = json.loads(block.text)
    servers: dict[str, dict[str, object]] = document.get("mcpServers") or document.get(
        "servers", {}
    )
    if "mcpServers" in document or "servers" in document:
        host_file = tmp_path / "mcp.json"
        host_file.write_text(block.text)
        load_config(host_file, environ=variables(block.text))
    if "servers" in document:  # VS Code's: every server says its type
        assert all("type" in server for server in servers.values())
    for server in servers.values():
        command, args = server.get("command"), server.get("args", [])
        if isinstance(command, str) and Path(command).name == "mcpmount":
            assert isinstance(args, list)
            parse_command_line([str(arg) for arg in cast("list[object]", args)])


@pytest.mark.parametrize("block", of("cedar"), ids=ids(of("cedar")))
def test_a_cedar_block_is_a_policy_check_accepts(block: Block) -> None:
    """It parses and fits the schema policies are checked against (`mcpmount.policy`)."""
    assert policy_problems(block.text, block.id) == []


def commands(script: str) -> list[list[str]]:
    """The simple commands of a shell block: comments, continuations, ``$(...)`` and
    variable assignments before a command dropped; split at ``&&``, ``;``, ``|``, ``&``."""
    script = re.sub(r"\$\([^)]*\)", "SUBSTITUTED", script.replace("\\\n", " "))
    found: list[list[str]] = []
    for line in script.splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        current: list[str] = []
        for token in [*lexer, ";"]:
            if token in ("&&", ";", "|", "&", "||"):
                while current and re.match(r"^\w+=", current[0]):
                    current.pop(0)
                if current:
                    found.append(current)
                current = []
            else:
                current.append(token)
    return found


def check_command(words: list[str]) -> None:
    """Check one command of a shell block against the repository (see the module doc)."""
    word, rest = words[0], words[1:]
    if word == "claude" and "--" in rest:
        check_command(rest[rest.index("--") + 1 :])
    elif Path(word).name == "mcpmount":
        parse_command_line(rest)
        if DEMO in rest and rest[0] in RUN_ON_THE_DEMO:
            done = subprocess.run(
                [sys.executable, "-m", "mcpmount", *rest],
                cwd=ROOT,
                env=environment(),
                capture_output=True,
                text=True,
                timeout=TIMEOUT,
                check=False,
            )
            assert done.returncode == 0, done.stderr
    elif word in ("python", "python3") and rest[:2] == ["-m", "mcpmount"]:
        check_command(["mcpmount", *rest[2:]])
    elif word in ("python", "python3") and rest and rest[0].endswith(".py"):
        assert (ROOT / rest[0]).is_file(), f"{rest[0]} does not exist"
    elif word == "pip" and "install" in rest:
        extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
            "optional-dependencies"
        ]
        for arg in rest:
            for named in re.findall(r"\[([\w,-]+)\]", arg):
                assert set(named.split(",")) <= set(extras), f"no extra {named!r}"
    elif word == "npm" and "--prefix" in rest:
        prefix = rest[rest.index("--prefix") + 1]
        assert (ROOT / prefix / "package-lock.json").is_file(), f"{prefix} has no lock file"
    elif word == "apt-get" and "install" in rest:
        ci = (ROOT / ".ci" / "run").read_text()
        packages = [arg for arg in rest[rest.index("install") + 1 :] if not arg.startswith("-")]
        assert all(package in ci for package in packages), "CI installs other packages"


@pytest.mark.parametrize("block", of("sh"), ids=ids(of("sh")))
def test_a_shell_block_names_what_exists(block: Block) -> None:
    """Its mcpmount command lines parse (and run, when they only read the demo config);
    the scripts, extras, npm projects and Debian packages it names exist."""
    found = commands(block.text)
    assert found, "an empty shell block"
    for words in found:
        check_command(words)


@pytest.mark.timeout(180)  # mkdocstrings reads the whole package: seconds, more on a busy box
def test_the_site_builds_strictly(tmp_path: Path) -> None:
    """`mkdocs build --strict`: no broken link or include, every reference generated."""
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(tmp_path)],
        cwd=ROOT,
        env={**environment(), "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=150,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "reference" / "configuration" / "index.html").is_file()


def test_every_page_is_in_the_site_navigation() -> None:
    """A page left out of mkdocs.yml's nav is built but found by no reader."""
    nav = (ROOT / "mkdocs.yml").read_text()
    docs = ROOT / "docs"
    missing = [
        str(page.relative_to(docs))
        for page in pages()
        if page.is_relative_to(docs) and str(page.relative_to(docs)) not in nav
    ]
    assert missing == []
