"""Approval gates: a person (scripted here) approves or denies calls before servers see them.

Run it from the repository root:  python examples/approval.py [configs/demo.toml]

The notes server's ``delete_*`` tools are gated (as ``approve = ["delete_*"]`` under
``[servers.notes]`` would do in the file). Adding a note runs at once; deleting one waits for
the approver, who denies it, and the model reads why. A real host asks its user where
`ScriptedPerson.decide` is.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import anyio

import mcpmount
from mcpmount.errors import CallDeniedError
from mcpmount.handlers import Approval, ApprovalRequest


@dataclass
class ScriptedPerson:
    """Denies deletions, allows the rest, and says what it was asked."""

    async def decide(self, request: ApprovalRequest) -> Approval:
        print(f"approver asked: {request.tool}({dict(request.arguments)}) [{request.context}]")
        if request.raw_name.startswith("delete_"):
            return Approval.deny("the user keeps every note; archive it instead")
        return Approval.allow()


async def main(path: str) -> None:
    config = mcpmount.load_config(path)
    notes = config.servers["notes"].model_copy(update={"approve": ["delete_*"]})
    config = mcpmount.RegistryConfig(config.settings, {"notes": notes}, config.path)
    person = ScriptedPerson()
    async with mcpmount.open_registry(config, approver=person.decide) as registry:
        added = await registry.call("notes__add_note", {"title": "keep", "body": "me"})
        print("add_note ran, no approval needed:", not added.is_error)
        try:
            await registry.call("notes__delete_note", {"note_id": 1}, context="turn 2")
        except CallDeniedError as exc:
            print("the model reads:", exc)
        listed = await registry.call("notes__list_notes", {})
        print("the note is still there:", '"title": "keep"' in str(listed.content))


if __name__ == "__main__":
    anyio.run(main, sys.argv[1] if len(sys.argv) > 1 else "configs/demo.toml")
