"""The call log of a real `mcpmount serve` over HTTP: one record per request, each field
right, and no secret in any byte of it."""

from __future__ import annotations

import base64
import json
from collections import Counter
from pathlib import Path
from typing import Any

import mcp_types
import pytest
from mcp import MCPError
from serve_calllog_support import (
    ARG_SECRET,
    ENV_SECRET,
    ENVIRONMENT,
    ERAS,
    FULL,
    LIMITED,
    SECRETS,
    Sent,
    calllog_config,
    client_of,
    digest,
    log_bytes,
    methods,
    records,
    serving,
    wait_for_records,
)

from support import text_of

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaks")]

MEMO = "mcpmount://docs/memo://one"


@pytest.mark.parametrize("mode", ERAS)
async def test_the_log_holds_one_record_per_request_with_each_field_right_and_no_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """Every request two tokens' clients send (lists, calls, a tool's failure, an unknown
    name, one a token's namespaces hide and one the policy hides, a call past a rate limit,
    a prompt, a resource, a completion) is one record naming its
    principal, method, name, server, outcome and arguments' digest; tokens, argument
    values, a server's env secret that went through a result, and the digest key are in
    no byte of the log."""
    for name, value in ENVIRONMENT.items():
        monkeypatch.setenv(name, value)
    log = tmp_path / "calls.jsonl"
    full, limited = Sent(), Sent()
    async with serving(calllog_config(tmp_path), tmp_path, log=log) as url:
        before = len(records(log))
        async with client_of(url, FULL, full, mode=mode) as client:
            await client.list_tools()
            assert text_of(await client.call_tool("pub__echo", {"text": ARG_SECRET})) == ARG_SECRET
            assert (await client.call_tool("pub__fail", {"message": "no"})).is_error
            planted = await client.call_tool("env__reversed_env", {"name": "PLANTED"})
            assert text_of(planted) == ENV_SECRET[::-1]  # the secret went through serve
            with pytest.raises(MCPError):
                await client.call_tool("nowhere__echo", {"text": "x"})
            assert not (await client.call_tool("pub__add", {"a": 1, "b": 2})).is_error
            assert (await client.call_tool("pub__add", {"a": 1, "b": 2})).is_error  # the limit
            await client.read_resource(MEMO)
            await client.get_prompt("docs__greet", {"name": ARG_SECRET})
            ref = mcp_types.PromptReference(type="ref/prompt", name="docs__greet")
            await client.complete(ref, {"name": "name", "value": ARG_SECRET})
        async with client_of(url, LIMITED, limited, mode=mode) as client:
            with pytest.raises(MCPError):
                await client.call_tool("vault__echo", {"text": "x"})
            with pytest.raises(MCPError):
                await client.call_tool("pub__big", {"n": 3})  # the policy hides it
            await client.call_tool("pub__echo", {"text": "hello"})
        sent = len(full.requests) + len(limited.requests)
        logged = (await wait_for_records(log, before + sent))[before:]
    assert len(logged) == sent
    (tmp_path.parent / "peek.json").write_text(json.dumps([logged, full.requests]))
    by_principal: dict[str, list[dict[str, Any]]] = {"token:full": [], "token:limited": []}
    for record in logged:
        by_principal[record["principal"]].append(record)
    assert methods(by_principal["token:full"]) == methods(full.requests)
    assert methods(by_principal["token:limited"]) == methods(limited.requests)
    for principal, client in (("token:full", full), ("token:limited", limited)):
        sizes = Counter((r["method"], r["bytes_in"]) for r in by_principal[principal])
        assert sizes == Counter((r["method"], _size(r.get("params"))) for r in client.requests)

    def named(principal: str, method: str) -> list[tuple[object, ...]]:
        keys = ("name", "server", "outcome", "code", "args")
        chosen = [r for r in by_principal[principal] if r["method"] == method]
        return [tuple(r[key] for key in keys) for r in chosen]

    assert named("token:full", "tools/call") == [
        ("pub__echo", "pub", "ok", None, digest({"text": ARG_SECRET})),
        ("pub__fail", "pub", "tool_error", None, digest({"message": "no"})),
        ("env__reversed_env", "env", "ok", None, digest({"name": "PLANTED"})),
        ("nowhere__echo", None, "unknown", -32602, digest({"text": "x"})),
        ("pub__add", "pub", "ok", None, digest({"a": 1, "b": 2})),
        ("pub__add", "pub", "rate_limited", None, digest({"a": 1, "b": 2})),
    ]
    assert named("token:full", "resources/read") == [(MEMO, "docs", "ok", None, None)]
    assert named("token:full", "prompts/get") == [
        ("docs__greet", "docs", "ok", None, digest({"name": ARG_SECRET}))
    ]
    assert named("token:full", "completion/complete") == [
        ("docs__greet", "docs", "ok", None, digest({"name": "name", "value": ARG_SECRET}))
    ]
    assert named("token:limited", "tools/call") == [
        ("vault__echo", "vault", "denied", -32602, digest({"text": "x"})),
        ("pub__big", "pub", "denied", -32602, digest({"n": 3})),
        ("pub__echo", "pub", "ok", None, digest({"text": "hello"})),
    ]
    for record in logged:
        assert record["duration_ms"] >= 0
        assert record["time"].endswith("Z")
        assert record["bytes_out"] > 0 or record["outcome"] == "cancelled", record
    lists = [r for r in logged if r["method"] == "tools/list"]
    assert lists
    assert all(r["name"] is None and r["args"] is None for r in lists)
    raw = log_bytes(log)
    assert raw.count(b"\n") == len(records(log))
    for secret in SECRETS:
        for form in _forms(secret):
            assert form not in raw, f"{secret!r} is in the call log as {form!r}"


def _size(params: object) -> int:
    """The size of ``params`` as compact JSON (0 without any)."""
    if params is None:
        return 0
    return len(json.dumps(params, separators=(",", ":"), ensure_ascii=False).encode())


def _forms(secret: str) -> list[bytes]:
    """``secret`` as the log could hold it: as is, reversed, in either case, hex, base64."""
    data = secret.encode()
    return [
        data,
        data[::-1],
        data.lower(),
        data.upper(),
        data.hex().encode(),
        base64.b64encode(data).rstrip(b"="),
        base64.urlsafe_b64encode(data).rstrip(b"="),
    ]
