#!/usr/bin/env python3
"""End-to-end check of a running Sidequest player door with the OFFICIAL MCP Python SDK client.

Usage: e2e_sdk.py [URL [TOKEN]]
  URL   the player endpoint, e.g. http://127.0.0.1:8080/play/mcp  (or env SIDEQUEST_URL)
  TOKEN a play token of a fresh assignment at version 1          (or env SIDEQUEST_TOKEN)

Runs initialize, tools/list, get_play_context, commit_play_turn (and its identical retry),
finish_play_session and one invalid call, asserting the contract's answers. Prints one summary
line; exits 0 on success, 1 on any failed check, 2 on bad usage.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from typing import Any

from mcp import ClientSession

try:  # SDK 2.x: the transport takes a configured HTTP client
    from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

    SDK_API = 2
except ImportError:  # SDK 1.x: the transport takes headers
    from mcp.client.streamable_http import streamablehttp_client

    SDK_API = 1

EXPECTED_TOOLS = {
    "get_play_context",
    "read_play_journal",
    "search_play_memory",
    "commit_play_turn",
    "finish_play_session",
}


class CheckFailed(Exception):
    pass


def check(condition: bool, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


def field(obj: Any, snake: str, camel: str) -> Any:
    """A result field across SDK generations (2.x snake_case, 1.x camelCase)."""
    if hasattr(obj, snake):
        return getattr(obj, snake)
    return getattr(obj, camel)


def text_of(result: Any) -> str:
    content = result.content
    check(len(content) > 0, "tool result has no content")
    text = getattr(content[0], "text", None)
    check(isinstance(text, str), f"first content block is not text: {content[0]!r}")
    return text


def payload(name: str, result: Any) -> dict[str, Any]:
    """The JSON payload of a successful tool result (text and structuredContent must agree)."""
    check(not field(result, "is_error", "isError"), f"{name} failed: {text_of(result)}")
    data = json.loads(text_of(result))
    structured = field(result, "structured_content", "structuredContent")
    if structured is not None:
        check(structured == data, f"{name}: structuredContent differs from the text content")
    return data


def connect(url: str, token: str) -> Any:
    headers = {"Authorization": f"Bearer {token}"}
    if SDK_API == 2:
        return streamable_http_client(url, http_client=create_mcp_http_client(headers=headers))
    return streamablehttp_client(url, headers=headers)


async def play(url: str, token: str) -> str:
    async with connect(url, token) as streams:
        read, write = streams[0], streams[1]
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            version = field(init, "protocol_version", "protocolVersion")
            server = field(init, "server_info", "serverInfo")
            check(server.name == "sidequest", f"serverInfo.name is {server.name!r}")
            check(bool(init.instructions), "initialize has no instructions")

            tools = await session.list_tools()
            names = {t.name for t in tools.tools}
            check(names == EXPECTED_TOOLS, f"tools/list answered {sorted(names)}")

            ctx = payload("get_play_context", await session.call_tool("get_play_context", {}))
            check(ctx["version"] == 1, f"context version {ctx['version']}, expected 1 (a fresh assignment)")
            scene = ctx["assignment"]["current_scene"]

            turn = {
                "operation_id": str(uuid.uuid4()),
                "expected_version": 1,
                "player_action": "I help Mira search the pier before dawn.",
                "narration": "You find a torn page from the keeper's journal and promise to return tomorrow.",
                "memory_markdown": "# Current state\nAt the harbor before dawn.\n",
                "current_scene": scene,
                "consequences": [
                    {"category": "relationship", "description": "Mira may become Arin's local contact."},
                    {"category": "discovery", "description": "Arin brings back the torn page."},
                ],
            }
            first = payload("commit_play_turn", await session.call_tool("commit_play_turn", turn))
            check(first["version"] == 2, f"commit version {first['version']}, expected 2")
            check(first["replayed"] is False, "first commit reported replayed")
            check(len(first["consequences"]) == 2, "commit did not return two consequences")
            check(
                all(c["status"] == "pending" for c in first["consequences"]),
                "consequences are not pending",
            )

            again = payload("commit_play_turn (retry)", await session.call_tool("commit_play_turn", turn))
            check(again["replayed"] is True, "identical retry was not replayed")
            check(again["version"] == 2, f"replay version {again['version']}, expected 2")
            check(
                {**again, "replayed": False} == first,
                "replay differs from the original receipt",
            )

            finish = {
                "operation_id": str(uuid.uuid4()),
                "expected_version": 2,
                "summary": "Arin returns at dawn after helping Mira.",
            }
            done = payload("finish_play_session", await session.call_tool("finish_play_session", finish))
            check(done["status"] == "completed", f"finish status {done['status']!r}")
            check(done["version"] == 3, f"finish version {done['version']}, expected 3")
            check(done["replayed"] is False, "finish reported replayed")
            check(done["pending_consequences"] == 2, f"pending {done['pending_consequences']}, expected 2")

            invalid = await session.call_tool(
                "commit_play_turn", {"operation_id": "not-a-uuid", "expected_version": 3}
            )
            check(bool(field(invalid, "is_error", "isError")), "an invalid call was not isError")
            check(text_of(invalid).startswith("422:"), f"invalid call answered {text_of(invalid)!r}")

            return f"protocol {version}; 5 tools; commit v2, replay v2, finish v3 completed; invalid call 422"


def main(argv: list[str]) -> int:
    url = argv[1] if len(argv) > 1 else os.environ.get("SIDEQUEST_URL", "")
    token = argv[2] if len(argv) > 2 else os.environ.get("SIDEQUEST_TOKEN", "")
    if not url or not token:
        print("usage: e2e_sdk.py URL TOKEN (or env SIDEQUEST_URL, SIDEQUEST_TOKEN)", file=sys.stderr)
        return 2
    try:
        summary = asyncio.run(asyncio.wait_for(play(url, token), timeout=45))
    except BaseException as e:  # failures inside the SDK's task groups arrive wrapped in groups
        print("FAIL: " + "; ".join(describe(leaf) for leaf in leaves(e)))
        return 1
    print(f"ok: MCP Python SDK {sdk_version()} ({url}): {summary}")
    return 0


def leaves(e: BaseException) -> list[BaseException]:
    inner = getattr(e, "exceptions", None)
    if isinstance(inner, (list, tuple)) and inner:
        return [leaf for sub in inner for leaf in leaves(sub)]
    return [e]


def describe(e: BaseException) -> str:
    if isinstance(e, CheckFailed):
        return str(e)
    if isinstance(e, (TimeoutError, asyncio.TimeoutError)):
        return "timed out after 45 s"
    return f"{type(e).__name__}: {e}"


def sdk_version() -> str:
    try:
        from importlib.metadata import version

        return version("mcp")
    except Exception:
        return "?"


if __name__ == "__main__":
    sys.exit(main(sys.argv))
