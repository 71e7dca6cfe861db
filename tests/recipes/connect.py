# Sidequest's player door with the official MCP Python SDK (mcp 2.3): python connect.py URL TOKEN
import asyncio
import sys

from mcp import Client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client


async def main(url: str, token: str) -> None:
    headers = {"Authorization": f"Bearer {token}"}
    async with create_mcp_http_client(headers=headers) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            listed = await client.list_tools()
            print("tools:", ", ".join(tool.name for tool in listed.tools))
            result = await client.call_tool("get_play_context", {})
            print("get_play_context:", result.content[0].text)


asyncio.run(main(sys.argv[1], sys.argv[2]))
