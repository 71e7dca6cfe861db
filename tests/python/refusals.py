"""Sends each case of a JSON list (argv[1]) with the async httpx client the official MCP Python
SDK uses (httpx2.AsyncClient), and prints one JSON line per case: its name and the status it
read, or the exception it raised instead. Driven by the Rust tests of the staged close
(crates/*/tests/it/*refusals*); it asserts nothing itself.

A case: {"name", "url", "headers": {..}, "size": bytes, "mode": "length" | "chunked",
"pause_ms": optional pause after the first 16 KiB}.
"""

from __future__ import annotations

import asyncio
import json
import sys

import httpx2 as httpx

CHUNK = 16 * 1024


async def chunks(size: int, pause_ms: int):
    sent = 0
    first = True
    while sent < size:
        n = min(CHUNK, size - sent)
        yield b" " * n
        sent += n
        if first and pause_ms:
            await asyncio.sleep(pause_ms / 1000)
        first = False


async def send(client: httpx.AsyncClient, case: dict) -> dict:
    headers = dict(case.get("headers", {}))
    size = int(case["size"])
    pause = int(case.get("pause_ms", 0))
    if case["mode"] == "length":
        headers["content-length"] = str(size)
        content = chunks(size, pause) if pause else b" " * size
    else:
        content = chunks(size, pause)
    try:
        response = await client.post(case["url"], headers=headers, content=content)
        return {"name": case["name"], "status": response.status_code, "body": response.text[:400]}
    except Exception as e:  # noqa: BLE001 - the test reads what was raised
        return {"name": case["name"], "error": f"{type(e).__name__}: {e}"}


async def main() -> None:
    cases = json.loads(sys.argv[1])
    async with httpx.AsyncClient(timeout=30.0) as client:
        for case in cases:
            print(json.dumps(await send(client, case)), flush=True)


asyncio.run(main())
