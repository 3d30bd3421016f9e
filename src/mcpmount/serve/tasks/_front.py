"""`TaskFront`: the task requests of ``serve``'s clients, relayed to the mounted servers.

- A task-augmented ``tools/call`` starts the task on the tool's server and answers a task
  under a downstream id of serve's own (`mcpmount.serve.tasks._records`): in the
  2025-11-25 form for a client that sent ``task`` (a tool whose ``execution.taskSupport``
  is ``"optional"`` or ``"required"``), and as the 2026-07-28 extension's
  ``resultType: "task"`` for a 2026-era request that declared
  ``io.modelcontextprotocol/tasks`` and calls a task-required tool (the server decides,
  as the extension says). Any other call is a plain one: the registry runs a
  task-required tool as a task and waits for it.
- ``tasks/get``, ``tasks/result``, ``tasks/list`` and ``tasks/cancel`` (2025-11-25), and
  ``tasks/get``, ``tasks/update`` and ``tasks/cancel`` (the 2026 extension) resolve the
  downstream id and ask the server. An id that is not the caller's principal's (another
  token's, an expired or a made-up one) is answered exactly as an unknown id
  (`unknown_task`), and ``tasks/list`` lists the caller's own only.
- What a server asks inside a task (an elicitation) reaches the client that waits on it:
  the handshake-era client's ``tasks/result`` carries the question on its stream, as for a
  call in flight (`Downstream`); for a 2026-era client serve waits itself and shows the
  question in ``tasks/get`` (`Driver`).
- A server's ``notifications/tasks/status`` of a task a handshake-era session started is
  told to that session, under the downstream id (`TaskFront.status_changed`).
"""

from __future__ import annotations

import contextlib
import logging
from collections import OrderedDict
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any, Final, TypeVar, cast

import anyio
import anyio.abc
import mcp_types
import pydantic
from anyio.abc import TaskGroup
from mcp import MCPError
from mcp.server import Server, ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.server.session import ServerSession

from mcpmount.errors import RegistryError, UnknownToolError, UpstreamError
from mcpmount.registry import Registry
from mcpmount.serve.access import principal_of
from mcpmount.serve.relay import Downstream
from mcpmount.serve.tasks._backend import RegistryTasks, TaskBackend, task_support
from mcpmount.serve.tasks._drivers import Driver, TaskAsking
from mcpmount.serve.tasks._records import (
    InMemoryTaskIds,
    TaskIds,
    TaskRecord,
    expiry,
    new_task_id,
)
from mcpmount.serve.tasks._wire import (
    RELATED_TASK,
    TASKS_EXTENSION,
    declares_tasks,
    legacy_task,
    missing_capability,
    modern,
    modern_task,
    unknown_task,
)

__all__ = ["MAX_DRIVEN", "MAX_LISTED", "TaskFront", "UpdateTaskParams"]

logger = logging.getLogger(__name__)

MAX_LISTED: Final = 100
"""The most tasks one ``tasks/list`` shows (the caller's newest)."""

MAX_DRIVEN: Final = 1000
"""The most 2026-era tasks whose results serve waits on at once (`Driver`)."""

_MAX_TOLD: Final = 10_000
"""The most handshake-era tasks whose status changes are told to their session."""

_MAX_QUEUED: Final = 1000
"""Status changes heard and not yet told; more are dropped (the client can poll)."""

_TERMINAL: Final = frozenset({"completed", "failed", "cancelled"})

T = TypeVar("T")


class UpdateTaskParams(mcp_types.RequestParams):
    """``tasks/update`` (the 2026 extension): the client's answers to a task's questions."""

    task_id: str
    input_responses: mcp_types.InputResponses = pydantic.Field(
        default_factory=dict[str, mcp_types.InputResponse]
    )


class TaskFront:
    """The task requests of a served registry (see the module docstring).

    Args:
        registry: The served registry (which tool is whose, and how it runs).
        ids: The downstream ids; default: this process's memory (`InMemoryTaskIds`).
        round_timeout: Seconds a question of a task waits for its client.
        wait_mounted: Awaited with the tool's name before a call: the first answers wait
            for the mounts, and a name no server has yet for the initial mounts to end.
        backend: The servers' tasks; default: the registry's connections (`RegistryTasks`).
    """

    def __init__(
        self,
        registry: Registry,
        ids: TaskIds | None,
        round_timeout: float,
        wait_mounted: Callable[[str], Awaitable[None]],
        backend: TaskBackend | None = None,
    ) -> None:
        self._registry = registry
        self._backend = backend if backend is not None else RegistryTasks(registry)
        self.ids = ids if ids is not None else InMemoryTaskIds()
        self._round_timeout = round_timeout
        self._wait_mounted = wait_mounted
        self._drivers: dict[str, Driver] = {}
        self._told: OrderedDict[tuple[str, str], tuple[str, ServerSession]] = OrderedDict()
        """(server, upstream id) -> (downstream id, the session that started it)."""
        self._tg: TaskGroup | None = None

    def install(self, server: Server[Any]) -> None:
        """Serve the task methods on ``server``, start tasks in its ``tools/call`` and
        advertise the 2026 extension (the handshake's ``tasks`` is `server_capability`)."""
        server.extensions[TASKS_EXTENSION] = {}
        server.middleware.append(self.intercept)
        add = server.add_request_handler
        add("tasks/get", mcp_types.GetTaskRequestParams, self.get)
        add("tasks/result", mcp_types.GetTaskPayloadRequestParams, self.result)
        add("tasks/list", mcp_types.PaginatedRequestParams, self.list)
        add("tasks/cancel", mcp_types.CancelTaskRequestParams, self.cancel)
        add("tasks/update", UpdateTaskParams, self.update)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncGenerator[TaskFront]:
        """Own the waits on 2026-era tasks' results; leaving cancels them."""
        send, receive = anyio.create_memory_object_stream[tuple[str, mcp_types.Task]](_MAX_QUEUED)

        def heard(server: str, task: mcp_types.Task) -> None:
            if (server, task.task_id) in self._told:  # only what a session waits to hear
                with contextlib.suppress(anyio.WouldBlock):
                    send.send_nowait((server, task))

        unsubscribe = self._backend.subscribe_status(heard)
        async with anyio.create_task_group() as tg, send, receive:
            self._tg = tg
            tg.start_soon(self._tell, receive)
            try:
                yield self
            finally:
                unsubscribe()
                self._tg = None
                self._drivers.clear()
                tg.cancel_scope.cancel()

    async def _tell(self, heard: anyio.abc.ObjectReceiveStream[tuple[str, mcp_types.Task]]) -> None:
        async for server, task in heard:
            await self.status_changed(server, task)

    # -- tools/call ------------------------------------------------------------------------

    async def intercept(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        """A server middleware: a ``tools/call`` to run as a task starts one; any other
        request goes on."""
        if ctx.method != "tools/call" or not (
            declares_tasks(ctx) if modern(ctx) else "task" in (ctx.params or {})
        ):
            return await call_next(ctx)  # the hot path: no validation here
        try:
            params = mcp_types.CallToolRequestParams.model_validate(ctx.params or {}, by_name=False)
        except pydantic.ValidationError:
            return await call_next(ctx)  # the SDK refuses it
        if not modern(ctx) and params.task is None:  # "task": null
            return await call_next(ctx)
        await self._wait_mounted(params.name)
        try:
            entry = self._registry.get(params.name)
        except UnknownToolError:
            return await call_next(ctx)  # the front answers it, as for any call
        support = task_support(entry.definition)
        if modern(ctx):
            if support != "required":
                return await call_next(ctx)
        elif support == "forbidden":
            message = (
                f"{params.name} cannot run as a task (its execution.taskSupport is "
                '"forbidden"): call it without "task"'
            )
            raise MCPError(mcp_types.METHOD_NOT_FOUND, message)
        return await self._start(ctx, params)

    async def _start(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.CallToolRequestParams
    ) -> dict[str, Any]:
        name = params.name
        ttl = params.task.ttl if params.task is not None else None
        try:
            started = await self._backend.start(
                name, params.arguments, ttl, Downstream(ctx, self._round_timeout)
            )
        except UpstreamError as exc:
            data = {"server": exc.server, "tool": exc.tool}
            raise MCPError(exc.code, exc.upstream_message, data) from None
        except RegistryError as exc:
            logger.info("task of %r could not start: %s", name, exc)
            failed = mcp_types.CallToolResult(
                content=[mcp_types.TextContent(type="text", text=str(exc))], is_error=True
            )
            return failed.model_dump(by_alias=True, mode="json", exclude_none=True)
        task = started.task
        record = TaskRecord(
            task_id=new_task_id(),
            server=started.server,
            upstream_id=task.task_id,
            tool=name,
            owner=principal_of(ctx).identity,
            expires=expiry(task.ttl),
        )
        await self.ids.put(record)
        if modern(ctx):
            self._drive(Driver(ctx, self._round_timeout, record))
            return {"resultType": "task", **modern_task(task, record.task_id)}
        self._told[(record.server, record.upstream_id)] = (record.task_id, ctx.session)
        while len(self._told) > _MAX_TOLD:
            self._told.popitem(last=False)
        return {"task": legacy_task(task, record.task_id)}

    def _drive(self, driver: Driver) -> None:
        """Wait on a 2026-era task's result (its server asks only while someone does)."""
        if self._tg is None or len(self._drivers) >= MAX_DRIVEN:
            return  # tasks/get asks the server; a question of the task then waits unseen
        task_id = driver.record.task_id
        self._drivers[task_id] = driver

        async def run() -> None:
            try:
                await driver.run(self._backend)
            finally:
                if self._drivers.get(task_id) is driver:
                    del self._drivers[task_id]  # tasks/get asks the server for the result

        self._tg.start_soon(run)

    # -- tasks/* ---------------------------------------------------------------------------

    async def _record(self, ctx: ServerRequestContext[Any, Any], task_id: str) -> TaskRecord:
        """The caller's task ``task_id``; any other is unknown (see `unknown_task`)."""
        if modern(ctx) and not declares_tasks(ctx):
            raise missing_capability(ctx.method)
        record = await self.ids.get(task_id)
        principal = principal_of(ctx)
        mine = record is not None and record.owner == principal.identity
        if record is None or not mine or not principal.sees(record.server):
            raise unknown_task(ctx.method)
        return record

    async def _ask(self, ctx: ServerRequestContext[Any, Any], work: Awaitable[T]) -> T:
        """Await a request to the server; its errors as the client should read them."""
        try:
            return await work
        except UpstreamError as exc:
            if exc.code == mcp_types.INVALID_PARAMS:  # the server forgot the task
                raise unknown_task(ctx.method) from None
            raise MCPError(exc.code, exc.upstream_message, {"server": exc.server}) from None
        except RegistryError as exc:
            raise MCPError(mcp_types.INTERNAL_ERROR, str(exc)) from None

    async def get(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.GetTaskRequestParams
    ) -> dict[str, Any]:
        record = await self._record(ctx, params.task_id)
        task = await self._ask(ctx, self._backend.get(record.server, record.upstream_id))
        if not modern(ctx):
            return legacy_task(task, record.task_id)
        wire = modern_task(task, record.task_id)
        driver = self._drivers.get(record.task_id)
        if driver is not None and (questions := driver.questions()):
            wire["status"] = "input_required"
            wire["inputRequests"] = {key: _wire(question) for key, question in questions.items()}
        elif task.status in ("completed", "failed"):
            outcome = await self._outcome(record)
            if isinstance(outcome, MCPError):
                wire["status"] = "failed"
                wire["error"] = _wire(outcome.error)
            else:
                wire["result"] = _relabeled(outcome, record.task_id)
        elif task.status == "input_required":
            wire["status"] = "working"  # no question of it has reached serve yet
        return wire

    async def _outcome(self, record: TaskRecord) -> mcp_types.CallToolResult | MCPError:
        """A finished task's result, or the JSON-RPC error it failed with."""
        try:
            return await self._backend.result(record, None)
        except UpstreamError as exc:
            return MCPError(exc.code, exc.upstream_message)
        except RegistryError as exc:
            return MCPError(mcp_types.INTERNAL_ERROR, str(exc))

    async def result(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.GetTaskPayloadRequestParams
    ) -> dict[str, Any]:
        if modern(ctx):
            raise MCPError(mcp_types.METHOD_NOT_FOUND, "tasks/result: tasks/get carries the result")
        record = await self._record(ctx, params.task_id)
        downstream = TaskAsking(ctx, self._round_timeout, record)
        outcome = await self._ask(
            ctx,
            self._backend.result(record, downstream),
        )
        return _relabeled(outcome, record.task_id)

    async def list(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.PaginatedRequestParams
    ) -> dict[str, Any]:
        if modern(ctx):
            raise MCPError(mcp_types.METHOD_NOT_FOUND, "tasks/list is not in the tasks extension")
        principal = principal_of(ctx)
        records = [
            record
            for record in await self.ids.owned_by(principal.identity)
            if principal.sees(record.server)
        ]
        tasks: list[dict[str, Any]] = []
        for record in records[-MAX_LISTED:]:
            try:
                task = await self._backend.get(record.server, record.upstream_id)
            except RegistryError:
                continue  # its server forgot it, or is down: not listed
            tasks.append(legacy_task(task, record.task_id))
        return {"tasks": tasks}

    async def cancel(
        self, ctx: ServerRequestContext[Any, Any], params: mcp_types.CancelTaskRequestParams
    ) -> dict[str, Any]:
        record = await self._record(ctx, params.task_id)
        task = await self._ask(ctx, self._backend.cancel(record.server, record.upstream_id))
        driver = self._drivers.pop(record.task_id, None)
        if driver is not None:
            driver.scope.cancel()
        return {} if modern(ctx) else legacy_task(task, record.task_id)

    async def update(
        self, ctx: ServerRequestContext[Any, Any], params: UpdateTaskParams
    ) -> dict[str, Any]:
        if not modern(ctx):
            raise MCPError(mcp_types.METHOD_NOT_FOUND, "tasks/update is the 2026 extension's")
        record = await self._record(ctx, params.task_id)
        driver = self._drivers.get(record.task_id)
        if driver is not None:
            driver.answer(params.input_responses)
        return {}

    # -- notifications ---------------------------------------------------------------------

    async def status_changed(self, server: str, task: mcp_types.Task) -> None:
        """Tell the handshake-era session that started ``task`` (on ``server``) its new
        status, under the downstream id; a task of no such session is not told."""
        key = (server, task.task_id)
        told = self._told.get(key)
        if told is None:
            return
        task_id, session = told
        if task.status in _TERMINAL:
            del self._told[key]
        params = mcp_types.TaskStatusNotificationParams.model_validate(
            legacy_task(task, task_id), by_name=False
        )
        notice = mcp_types.TaskStatusNotification(params=params)
        try:
            with anyio.fail_after(self._round_timeout):
                await session.send_notification(cast("mcp_types.ServerNotification", notice))
        except Exception as exc:  # a gone session: nobody left to tell
            logger.info("task of %r: its status could not be told: %r", server, exc)


def _wire(model: pydantic.BaseModel) -> dict[str, Any]:
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


def _relabeled(result: mcp_types.CallToolResult, task_id: str) -> dict[str, Any]:
    """A task's result as its client reads it: tied to the downstream id (the server's
    ``related-task`` names its own id, which never leaves serve), without the server's
    ``serverInfo`` stamp."""
    wire = _wire(result)
    meta = cast("dict[str, Any]", wire.get("_meta") or {})
    meta.pop("io.modelcontextprotocol/serverInfo", None)
    wire["_meta"] = {**meta, RELATED_TASK: {"taskId": task_id}}
    return wire
