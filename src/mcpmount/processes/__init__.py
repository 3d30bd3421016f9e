"""Child processes and how they end: a process group per child, stopped and swept
(`ProcessGroup`), a watchdog that ends them if this process dies without closing them
(`Reaper`), and short-lived helper programs (``headers_command``, ``before_call``) run
bounded and reaped (`run_program`). Knows nothing of MCP; a stdio server is one such group.
"""

from mcpmount.processes._procgroup import (
    STDIN_GRACE,
    SWEEP_GRACE,
    TERM_GRACE,
    ProcessGroup,
    group_members,
)
from mcpmount.processes._program import ProgramRun, first_line, run_program
from mcpmount.processes._reaper import Reaper

__all__ = [
    "STDIN_GRACE",
    "SWEEP_GRACE",
    "TERM_GRACE",
    "ProcessGroup",
    "ProgramRun",
    "Reaper",
    "first_line",
    "group_members",
    "run_program",
]
