"""Code mode: a model's short Python program calls many tools in one sandboxed run.

`run_code` runs the program in a fresh sandbox (bubblewrap and a seccomp filter on Linux:
no network, no user files, no new processes; CPU, memory, output, call and wall-clock
limits), with the mounted tools importable as typed functions (``from tools import fs``).
Each call the program makes goes over a pipe to the caller's `ToolCaller`, the normal
call path, so visibility, the secret guard, approval and policy apply to it as to any
call. Where no sandbox can be made, `run_code` raises `SandboxUnavailableError` saying
what to install: code never runs unsandboxed.

The tools are offered as typed functions: `tools_module` writes the sandbox's ``tools``
module, `stubs` the signatures a model reads (``tool_search`` with ``"format": "python"``),
`python_names` which function each public name became.

Modules: ``_limits`` (`CodeLimits`, `CodeRun`, `ToolCaller`), ``_runner`` (the parent
side of a run: spawn, calls, limits, result), ``_sandbox`` (the sandbox's command line,
`code_sandbox_problem`), ``_seccomp`` (the seccomp filters), ``_child`` (the program run
inside the sandbox, standard library only), ``_stubs`` (`tools_module`, `stubs`,
`python_names`), ``_names`` (identifiers), ``_schemas`` (JSON Schema to types), ``_meta``
(the ``run_code`` meta-tool's definition, arguments and run, for the registry and serve).
"""

from mcpmount.codemode._limits import CodeLimits, CodeRun, ToolCaller
from mcpmount.codemode._meta import (
    RUN_CODE_NAME,
    code_error,
    code_limits,
    python_namespaces,
    read_code,
    run_code_definition,
    run_program,
)
from mcpmount.codemode._runner import run_code
from mcpmount.codemode._sandbox import code_sandbox_problem
from mcpmount.codemode._stubs import python_names, stubs, tools_module
from mcpmount.errors import SandboxUnavailableError

__all__ = [
    "RUN_CODE_NAME",
    "CodeLimits",
    "CodeRun",
    "SandboxUnavailableError",
    "ToolCaller",
    "code_error",
    "code_limits",
    "code_sandbox_problem",
    "python_names",
    "python_namespaces",
    "read_code",
    "run_code",
    "run_code_definition",
    "run_program",
    "stubs",
    "tools_module",
]
