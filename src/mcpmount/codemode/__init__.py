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

Modules: ``_limits`` (`CodeLimits`, `CodeRun`, `ToolCaller`), ``_stubs`` (`tools_module`,
`stubs`, `python_names`), ``_names`` (identifiers), ``_schemas`` (JSON Schema to types).
"""

from mcpmount.codemode._limits import CodeLimits, CodeRun, ToolCaller
from mcpmount.codemode._stubs import python_names, stubs, tools_module
from mcpmount.errors import SandboxUnavailableError

__all__ = [
    "CodeLimits",
    "CodeRun",
    "SandboxUnavailableError",
    "ToolCaller",
    "python_names",
    "stubs",
    "tools_module",
]
