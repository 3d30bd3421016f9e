"""``headers_command``: request headers from a program's JSON output, renewed after a 401.

`CommandHeaders` is the HTTP client's ``auth``. Before the first request it runs the spec's
``headers_command``, once however many requests wait for it, and adds the headers the
command printed to every request, over same-named static ``headers``. When the server
answers 401, it runs the command again (once for all the requests refused with the same
headers) and sends the request once more, unless the command printed the same headers.

The command runs as `run_program` runs a helper (the user's environment, stdin closed, a
process group of its own, stopped and swept however it ends) for at most `TIMEOUT`
seconds. Its output holds secrets: no message quotes it, the values are added to what the
spec redacts, and at most one short line of its stderr is quoted.

A layer under the client that answers refused requests itself (the SSE POSTs,
``_sse_posts``) agrees on a 401 through the request extension `RENEWAL`: it hands up a
first refusal marked `OFFERED`, and answers a request marked `GivenUp` without sending it.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass

import anyio
import httpx2
from pydantic import ConfigDict, TypeAdapter, ValidationError

from mcpmount.config import HeaderName, HeaderValue, HttpServer
from mcpmount.processes import Reaper, first_line, run_program

__all__ = [
    "OFFERED",
    "RENEWAL",
    "TIMEOUT",
    "CommandHeaders",
    "GivenUp",
    "HeadersCommandError",
    "run_headers_command",
]

TIMEOUT = 10.0
"""Seconds ``headers_command`` may run; a token helper answers in well under that. Past
it, the command is stopped as a server is (SIGTERM a few seconds later, then SIGKILL)."""

_MAX_OUTPUT = 64 * 1024
"""The most the command may print to stdout (a few headers fit many times over)."""

_HEADERS = TypeAdapter(
    dict[HeaderName, HeaderValue], config=ConfigDict(strict=True, hide_input_in_errors=True)
)
_WHAT_TO_PRINT = "it must print one JSON object of header names to string values"


RENEWAL = "mcpmount_renewal"
"""The request and response extension of a 401's renewal (see the module docstring)."""

OFFERED = "offered"
"""`RENEWAL` of a first attempt, which may be sent again with new headers after a 401; a
layer that answers refusals hands such a 401 up with this mark on the response."""


@dataclass(frozen=True)
class GivenUp:
    """`RENEWAL` of a request refused with 401 that will not be sent again: a layer that
    answers refusals answers it as refused, or ends the connection with ``failure``."""

    failure: str | None = None
    """Why no new headers could be had (``headers_command`` failed), if that is why."""


class HeadersCommandError(Exception):
    """Raised when ``headers_command`` fails; the message says how and quotes no output."""


class CommandHeaders(httpx2.Auth):
    """Adds the headers ``headers_command`` prints to every request; see the module docstring."""

    requires_request_body = True  # a request refused with 401 is sent again

    def __init__(self, spec: HttpServer, reaper: Reaper | None = None) -> None:
        self._spec = spec
        self._reaper = reaper
        self.failure: str | None = None
        """How the command failed for a request whose error the caller may never see (the
        SDK's streamable HTTP sender only logs a POST's), until a later run works."""
        self._lock = anyio.Lock()
        self._headers: dict[str, str] | None = None
        self._error: str | None = None
        self._generation = 0
        """How many times the command ran; the headers are the last run's."""

    async def async_auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        generation = self._generation
        # The SDK's streamable HTTP sender swallows a POST's failure (it only logs it), so
        # that is kept in ``failure``; a GET's (the SSE stream's opening) reaches the caller.
        report = request.method != "GET"
        sent = self._headers if self._headers is not None else await self._after(generation, report)
        request.headers.update(sent)
        request.extensions = {**request.extensions, RENEWAL: OFFERED}
        response = yield request
        if response.status_code != 401:
            return
        handed_up = response.extensions.get(RENEWAL) == OFFERED
        try:  # a layer that handed the 401 up reports a failure itself, as it ends the connection
            fresh = await self._after(generation, report and not handed_up)
        except HeadersCommandError as exc:
            if not handed_up:
                raise
            fresh, given_up = sent, GivenUp(str(exc))
        else:
            given_up = GivenUp()
        if fresh == sent:  # the same credentials would be refused the same way
            if handed_up:
                request.extensions = {**request.extensions, RENEWAL: given_up}
                yield request
            return
        request.headers.update(fresh)
        request.extensions = {k: v for k, v in request.extensions.items() if k != RENEWAL}
        yield request

    async def _after(self, generation: int, report: bool) -> dict[str, str]:
        """Return headers newer than run ``generation``'s, running the command if none are.

        A failure is raised, and kept in ``failure`` if ``report``.
        """
        if self._generation == generation:
            async with self._lock:
                if self._generation == generation:  # nobody ran it while we waited
                    await self._run()
        if self._error is None:
            assert self._headers is not None
            return self._headers
        if report and self.failure is None:
            self.failure = self._error
        raise HeadersCommandError(self._error)

    async def _run(self) -> None:
        self._generation += 1
        try:
            self._headers = await run_headers_command(self._spec, self._reaper)
        except HeadersCommandError as exc:
            self._headers, self._error = None, str(exc)
            return
        self._error = self.failure = None
        # Redacted wherever the spec redacts: a server may quote a header it refused.
        self._spec.with_expanded([*self._spec.secret_values(), *self._headers.values()])


async def run_headers_command(spec: HttpServer, reaper: Reaper | None = None) -> dict[str, str]:
    """Run ``spec.headers_command`` and return the headers it printed.

    Raises:
        HeadersCommandError: If it cannot start, times out, fails, or prints anything but a
            JSON object of valid header names to string values.
    """
    argv = spec.headers_command
    assert argv
    program = os.path.basename(argv[0]) or argv[0]

    def failed(what: str, hint: str) -> HeadersCommandError:
        return HeadersCommandError(spec.redact(f"headers_command ({program}) {what}; {hint}"))

    try:
        run = await run_program(argv, timeout=TIMEOUT, max_output=_MAX_OUTPUT, reaper=reaper)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise failed(f"cannot be started: {reason}", "check the program's name or path") from None
    if run.status is None:
        raise failed(f"did not finish within {TIMEOUT:g} s", "check that it runs non-interactively")
    if run.status != 0:
        note = first_line(run.stderr, spec.redact)
        raise failed(run.how() + (f": {note}" if note else ""), "run it by hand to see why")
    if len(run.stdout) > _MAX_OUTPUT:
        raise failed(f"printed more than {_MAX_OUTPUT // 1024} KiB", _WHAT_TO_PRINT)
    return _parse(run.stdout, failed)


def _parse(output: bytes, failed: Callable[[str, str], HeadersCommandError]) -> dict[str, str]:
    """Return the headers in ``output``; the messages name no header and quote no value."""
    try:
        value: object = json.loads(output)
    except ValueError:
        raise failed("printed no JSON", _WHAT_TO_PRINT) from None
    if not isinstance(value, dict):
        raise failed("printed JSON that is not an object", _WHAT_TO_PRINT)
    try:
        headers = _HEADERS.validate_python(value)
    except ValidationError as exc:
        error = exc.errors(include_url=False, include_input=False)[0]
        what = {
            "string_type": "a header value that is not a string",
            "mcpmount_header_value": "a header value with a line break or a NUL character",
        }.get(error["type"], "an invalid HTTP header name")
        raise failed(f"printed {what}", _WHAT_TO_PRINT) from None
    return {name: value.get_secret_value() for name, value in headers.items()}
