"""``mcpmount completion bash|zsh|fish``: a shell completion script, written from the parser.

Each script completes the commands (with their help in fish), each command's options,
the choices of an option or argument that has them (``--from``, ``install``'s host), and
files elsewhere (configs). bash's is a plain ``complete -F`` function; zsh runs the same
through ``bashcompinit``; fish gets ``complete`` lines. Like the parser, this imports only
the standard library.
"""

from __future__ import annotations

import argparse
import shlex
from typing import cast

__all__ = ["SHELLS", "completion_script"]

SHELLS = ["bash", "zsh", "fish"]

_INSTALL = {
    "bash": '# in ~/.bashrc:  eval "$(mcpmount completion bash)"',
    "zsh": '# in ~/.zshrc:  eval "$(mcpmount completion zsh)"',
    "fish": "# mcpmount completion fish > ~/.config/fish/completions/mcpmount.fish",
}


def _commands(parser: argparse.ArgumentParser) -> dict[str, tuple[str, argparse.ArgumentParser]]:
    """Each command's name, its one-line help and its parser, in the parser's order."""
    for action in parser._actions:  # pyright: ignore[reportPrivateUsage]
        if isinstance(action, argparse._SubParsersAction):  # pyright: ignore[reportPrivateUsage]
            helps = {a.dest: a.help or "" for a in action._choices_actions}  # pyright: ignore[reportPrivateUsage, reportUnknownMemberType]
            choices = cast(dict[str, argparse.ArgumentParser], action.choices)  # pyright: ignore[reportUnknownMemberType]
            return {name: (helps.get(name, ""), sub) for name, sub in choices.items()}
    return {}


def _options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [action for action in parser._actions if action.option_strings]  # pyright: ignore[reportPrivateUsage]


def _choices(parser: argparse.ArgumentParser) -> list[str]:
    """The choices of the command's positional arguments (e.g. ``install``'s hosts)."""
    return [
        str(choice)
        for action in parser._actions  # pyright: ignore[reportPrivateUsage]
        if not action.option_strings and action.choices
        for choice in action.choices
    ]


def _bash(parser: argparse.ArgumentParser) -> str:
    commands = _commands(parser)
    top = [*commands, *(s for a in _options(parser) for s in a.option_strings)]
    cases: list[str] = []
    for name, (_, sub) in commands.items():
        words = [s for a in _options(sub) for s in a.option_strings] + _choices(sub)
        valued = [
            f"            {'|'.join(a.option_strings)}) "
            f'COMPREPLY=($(compgen -W {shlex.quote(" ".join(map(str, a.choices)))} -- "$cur")); '
            "return;;"
            for a in _options(sub)
            if a.choices
        ]
        inner = "\n".join([*valued, ""])
        cases.append(
            f"        {name})\n"
            f'            case "$prev" in\n{inner}            esac\n'
            f"            words={shlex.quote(' '.join(words))};;"
        )
    body = "\n".join(cases)
    return f"""{_INSTALL["bash"]}
_mcpmount() {{
    local cur="${{COMP_WORDS[COMP_CWORD]}}" prev="${{COMP_WORDS[COMP_CWORD-1]}}" command="" i
    for ((i = 1; i < COMP_CWORD; i++)); do
        case "${{COMP_WORDS[i]}}" in -*) ;; *) command="${{COMP_WORDS[i]}}"; break;; esac
    done
    if [[ -z "$command" ]]; then
        COMPREPLY=($(compgen -W {shlex.quote(" ".join(top))} -- "$cur"))
        return
    fi
    local words=""
    case "$command" in
{body}
    esac
    if [[ "$cur" == -* ]]; then
        COMPREPLY=($(compgen -W "$words" -- "$cur"))
    else
        COMPREPLY=($(compgen -W "$words" -- "$cur") $(compgen -f -- "$cur"))
    fi
}}
complete -o filenames -F _mcpmount mcpmount
"""


def _zsh(parser: argparse.ArgumentParser) -> str:
    bash = _bash(parser).split("\n", 1)[1]
    return f"""{_INSTALL["zsh"]}
autoload -U +X bashcompinit && bashcompinit
{bash}"""


def _fish_quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _fish(parser: argparse.ArgumentParser) -> str:
    commands = _commands(parser)
    lines = [_INSTALL["fish"], "complete -c mcpmount -f"]
    for name, (help, _) in commands.items():
        description = _fish_quote(help.split(". ")[0])
        lines.append(f"complete -c mcpmount -n __fish_use_subcommand -a {name} -d {description}")
    for name, (_, sub) in commands.items():
        when = f"-n '__fish_seen_subcommand_from {name}'"
        if choices := _choices(sub):
            lines.append(f"complete -c mcpmount {when} -a {_fish_quote(' '.join(choices))}")
        lines.append(f"complete -c mcpmount {when} -F")  # configs and other files
        for action in _options(sub):
            flags = " ".join(
                f"-l {s[2:]}" if s.startswith("--") else f"-s {s[1:]}"
                for s in action.option_strings
            )
            values = ""
            if action.choices:
                values = f" -x -a {_fish_quote(' '.join(map(str, action.choices)))}"
            elif action.nargs != 0:
                values = " -r"
            help = _fish_quote((action.help or "").split(". ")[0])
            lines.append(f"complete -c mcpmount {when} {flags}{values} -d {help}")
    return "\n".join(lines) + "\n"


def completion_script(shell: str, parser: argparse.ArgumentParser) -> str:
    """Return the completion script of ``shell`` (one of `SHELLS`) for ``parser``."""
    return {"bash": _bash, "zsh": _zsh, "fish": _fish}[shell](parser)
