#!/usr/bin/env python3
"""A door connected in both protocol eras with the OFFICIAL MCP Python SDK (2.x `mcp.Client`).

Usage: sdk_eras.py URL TOKEN TOOL ARGUMENTS_JSON

For each connect mode the SDK offers — its default `auto` (server/discover, falling back to
initialize), pinned to the stateless revision `2026-07-28`, and `legacy` (the initialize
handshake; the SDK always offers its newest handshake revision there) — it connects with
`Authorization: Bearer TOKEN`, lists the tools, calls TOOL with ARGUMENTS_JSON and checks the
call succeeded. Prints one JSON line: per mode the negotiated version, serverInfo, the tool
count, whether the call succeeded and the `_meta` of the discovery result (auto). Exits 0 when
every mode connected and the call succeeded, 1 otherwise, 2 on bad usage.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from mcp import Client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

MODES = ["auto", "2026-07-28", "legacy"]


async def one(url: str, token: str, mode: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    transport = streamable_http_client(url, http_client=http)
    async with Client(transport, mode=mode) as client:  # type: ignore[arg-type]
        tools = await client.list_tools()
        result = await client.call_tool(tool, arguments)
        info = client.server_info
        discover = client.session.discover_result
        meta = None
        if discover is not None:
            dumped = discover.model_dump(by_alias=True, mode="json")
            meta = dumped.get("_meta")
        text = ""
        if result.content:
            text = getattr(result.content[0], "text", "") or ""
        return {
            "protocol": client.protocol_version,
            "server": None if info is None else {"name": info.name, "version": info.version},
            "tools": len(tools.tools),
            "tool_ok": not result.is_error,
            "structured": result.structured_content is not None,
            "text": text[:200],
            "discover_meta": meta,
        }


async def run(url: str, token: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for mode in MODES:
        try:
            out[mode] = await asyncio.wait_for(one(url, token, mode, tool, arguments), timeout=30)
        except BaseException as e:  # failures inside the SDK's task groups arrive wrapped
            out[mode] = {"error": "; ".join(f"{type(x).__name__}: {x}" for x in leaves(e))}
    return out


def leaves(e: BaseException) -> list[BaseException]:
    inner = getattr(e, "exceptions", None)
    if isinstance(inner, (list, tuple)) and inner:
        return [leaf for sub in inner for leaf in leaves(sub)]
    return [e]


def main(argv: list[str]) -> int:
    if len(argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    url, token, tool, raw = argv[1:]
    modes = asyncio.run(run(url, token, tool, json.loads(raw)))
    from importlib.metadata import version

    ok = all("error" not in m and m["tool_ok"] for m in modes.values())
    print(json.dumps({"ok": ok, "sdk": version("mcp"), "modes": modes}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
