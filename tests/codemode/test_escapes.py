"""Each escape a program may try: stopped or refused in the sandbox, and working without it.

Every test runs the same program twice: once through `run_code`, once as a plain
``python -I -S`` subprocess with the same ``$HOME``, so each shows both that the attempt
would work and that the sandbox is what stops it.
"""

from __future__ import annotations

import socket
import subprocess
import textwrap
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import anyio
import pytest
from codemode_support import LIMITS, outside, run

from mcpmount.codemode import CodeLimits

pytestmark = [
    pytest.mark.slow,
    pytest.mark.anyio,
    pytest.mark.usefixtures("no_leaks", "code_sandbox"),
]

ESCAPED = "ESCAPED"
"""What a program prints when its attempt worked."""


def escaped(output: str) -> bool:
    """Whether a line of ``output`` says the attempt worked (a traceback may quote the
    line of code that would have printed it)."""
    return any(line.startswith(ESCAPED) for line in output.splitlines())


@pytest.fixture(name="home")
def home_fixture(tmp_path: Path) -> Path:
    """A home with a private key planted in ``.ssh``."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nsecret\n")
    return home


@pytest.fixture(name="listener_port")
def listener_port_fixture() -> Iterator[int]:
    """A real loopback TCP listener on an OS-chosen port (the kernel completes connections)."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        yield listener.getsockname()[1]


async def attempt(source: str, limits: CodeLimits = LIMITS) -> str:
    """Run ``source`` outside (it must get through) and inside (it must be stopped by an
    error); the sandboxed run's text."""
    plain = await anyio.to_thread.run_sync(outside, source)
    assert plain.returncode == 0, plain.stderr
    assert escaped(plain.stdout)
    done, text = await run(source, limits=limits)
    assert done.result.is_error
    assert not escaped(text)
    return text


ESCAPES = {
    "fork": """
        import os
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        print("ESCAPED")
    """,
    "subprocess": """
        import subprocess
        subprocess.run(["/bin/true"], check=True)
        print("ESCAPED")
    """,
    "exec": """
        import os
        os.execv("/bin/echo", ["/bin/echo", "ESCAPED"])
    """,
    "threads-then-fork": """
        import os, threading
        done = []
        worker = threading.Thread(target=done.append, args=(1,))
        worker.start()
        worker.join()
        assert done == [1]  # threads work; a new process does not
        if os.fork() == 0:
            os._exit(0)
        print("ESCAPED")
    """,
}


@pytest.mark.parametrize("name", sorted(ESCAPES))
async def test_a_new_process_is_refused_inside_only(name: str) -> None:
    """fork, subprocess and exec work outside; inside they fail with EPERM in the program."""
    text = await attempt(textwrap.dedent(ESCAPES[name]))
    assert "PermissionError: [Errno 1] Operation not permitted" in text


async def test_a_socket_to_a_loopback_listener_is_refused_inside_only(listener_port: int) -> None:
    """A connection to a real 127.0.0.1 listener is made outside; inside, EPERM."""
    source = textwrap.dedent(
        f"""
        import socket
        with socket.create_connection(("127.0.0.1", {listener_port}), timeout=10):
            print("ESCAPED")
        """
    )
    text = await attempt(source)
    assert "PermissionError" in text


async def test_the_users_ssh_key_is_not_there_inside(home: Path) -> None:
    """``~/.ssh/id_rsa`` (by ``~`` and by its real path) is read outside; inside it does not
    exist, exactly as a path that exists nowhere."""
    key = home / ".ssh" / "id_rsa"
    source = textwrap.dedent(
        f"""
        import os
        for path in ("~/.ssh/id_rsa", {str(key)!r}, "/no/such/dir/id_rsa"):
            try:
                print(path[-6:], open(os.path.expanduser(path)).read().split()[0])
            except OSError as exc:
                print(path[-6:], type(exc).__name__, exc.errno)
        """
    )
    plain = await anyio.to_thread.run_sync(outside, source, {"HOME": str(home)})
    assert plain.stdout.splitlines() == [
        "id_rsa -----BEGIN",
        "id_rsa -----BEGIN",
        "id_rsa FileNotFoundError 2",
    ]
    done, text = await run(source)
    assert not done.result.is_error, text
    assert text.splitlines() == ["id_rsa FileNotFoundError 2"] * 3
    assert "BEGIN" not in text


def _writer(*paths: str) -> str:
    """A program that writes ``ESCAPED`` to each path and says how each went."""
    return textwrap.dedent(
        f"""
        for path in {paths!r}:
            try:
                with open(path, "w") as f:
                    f.write("ESCAPED")
                print(path, "written")
            except OSError as exc:
                print(path, type(exc).__name__)
        """
    )


async def test_a_write_outside_the_scratch_folder_does_not_reach_the_host(tmp_path: Path) -> None:
    """A file written to a host path is there after the plain run, never after the sandboxed;
    the system folders are read-only."""
    target = tmp_path / "written.txt"
    done, text = await run(_writer(str(target), "/usr/lib/escaped.txt"))
    assert not done.result.is_error, text
    assert text.splitlines() == [
        f"{target} FileNotFoundError",
        "/usr/lib/escaped.txt OSError",  # read-only file system (EROFS)
    ]
    assert not target.exists()
    plain = await anyio.to_thread.run_sync(outside, _writer(str(target)))
    assert plain.stdout.splitlines() == [f"{target} written"]
    assert target.read_text() == ESCAPED


async def test_an_allocation_past_the_memory_limit_fails_inside_only() -> None:
    """1 GiB is allocated outside; inside, 256 MB: MemoryError, told with the key to raise."""
    source = "data = bytearray(1 << 30)\nprint('ESCAPED', len(data))\n"
    text = await attempt(source, replace(LIMITS, memory_bytes=256 << 20))
    assert "MemoryError" in text
    assert "256 MB" in text
    assert "[registry.code_mode] memory_mb" in text


LOOPS = {
    "deadline": (
        "import time\nprint('started', flush=True)\nwhile True:\n    time.sleep(0.05)\n",
        replace(LIMITS, timeout=2),
        "started\nit was stopped at its deadline of 2 s; raise [registry.code_mode] timeout",
    ),
    "cpu": (
        "print('started', flush=True)\nwhile True:\n    pass\n",
        replace(LIMITS, cpu_seconds=1, timeout=60),
        "started\nit was stopped after its 1 s of CPU time; raise [registry.code_mode] cpu_seconds",
    ),
}


@pytest.mark.parametrize("name", sorted(LOOPS))
async def test_a_loop_is_stopped_by_its_deadline_or_cpu_limit(name: str) -> None:
    """A loop that sleeps or computes runs on outside; inside it is stopped (killed and
    reaped, not waited for) at its wall-clock deadline or after its CPU seconds, named."""
    source, limits, told = LOOPS[name]
    with pytest.raises(subprocess.TimeoutExpired):
        await anyio.to_thread.run_sync(outside, source, None, 3)
    started = anyio.current_time()
    done, text = await run(source, limits=limits)
    assert anyio.current_time() - started < limits.timeout + 10
    assert done.result.is_error
    assert text.startswith(told)


async def test_a_flood_of_output_is_cut_and_stopped() -> None:
    """10 MB printed reach a plain run whole; inside, ``output_bytes`` are kept, the rest cut
    with a marker, and the flood is stopped well before it ends."""
    source = "for _ in range(10_000):\n    print('x' * 999)\nprint('ESCAPED')\n"
    plain = await anyio.to_thread.run_sync(outside, source)
    assert len(plain.stdout) == 10_000 * 1000 + len("ESCAPED\n")
    done, text = await run(source, limits=replace(LIMITS, output_bytes=4096))
    assert done.result.is_error
    assert text.startswith("x" * 999 + "\n")
    assert not escaped(text)
    kept, _, said = text.partition("\n[output cut: ")
    assert len(kept) == 4096
    assert "[registry.code_mode] output_bytes" in said
    assert "printed far more than its 4096 bytes" in said
