// A door connected in both protocol eras with the OFFICIAL MCP TypeScript SDK
// (@modelcontextprotocol/client 2.x).
//
// Usage: node sdk_eras.mjs URL TOKEN TOOL ARGUMENTS_JSON
//
// For each way the SDK can be told to connect — its default (the legacy initialize handshake,
// offering its newest handshake revision), the handshake pinned to 2025-06-18 and to 2025-03-26
// (supportedProtocolVersions), `auto` (server/discover first) and pinned to the stateless
// revision 2026-07-28 — it connects with `Authorization: Bearer TOKEN`, lists the tools, calls
// TOOL with ARGUMENTS_JSON and checks the call succeeded. Prints one JSON line per run with the
// negotiated version, serverInfo, the tool count, the call's outcome and the `_meta` of the
// discovery result. Exits 0 when every mode connected and the call succeeded, 1 otherwise.

import { readFileSync } from 'node:fs';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const MODES = {
    default: {},
    'legacy-2025-06-18': { supportedProtocolVersions: ['2025-06-18'] },
    'legacy-2025-03-26': { supportedProtocolVersions: ['2025-03-26'] },
    auto: { versionNegotiation: { mode: 'auto' } },
    '2026-07-28': { versionNegotiation: { mode: { pin: '2026-07-28' } } },
};

async function one(url, token, options, tool, args) {
    const client = new Client({ name: 'sdk-eras', version: '1.0.0' }, options);
    const transport = new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
    });
    await client.connect(transport);
    try {
        const tools = await client.listTools();
        const result = await client.callTool({ name: tool, arguments: args });
        const info = client.getServerVersion();
        const discover = client.getDiscoverResult();
        const first = result.content?.[0];
        return {
            protocol: client.getNegotiatedProtocolVersion(),
            server: info ? { name: info.name, version: info.version } : null,
            tools: tools.tools.length,
            tool_ok: !result.isError,
            structured: result.structuredContent !== undefined,
            text: first && first.type === 'text' ? first.text.slice(0, 200) : '',
            discover_meta: discover?._meta ?? null,
        };
    } finally {
        await client.close();
    }
}

const [url, token, tool, raw] = process.argv.slice(2);
if (!url || !token || !tool || raw === undefined) {
    console.error('usage: node sdk_eras.mjs URL TOKEN TOOL ARGUMENTS_JSON');
    process.exit(2);
}
const args = JSON.parse(raw);
const modes = {};
for (const [mode, options] of Object.entries(MODES)) {
    try {
        modes[mode] = await one(url, token, options, tool, args);
    } catch (e) {
        modes[mode] = { error: `${e?.name ?? 'Error'}: ${e?.message ?? e}` };
    }
}
const ok = Object.values(modes).every((m) => !m.error && m.tool_ok);
const sdk = JSON.parse(
    readFileSync(new URL('./node_modules/@modelcontextprotocol/client/package.json', import.meta.url)),
).version;
console.log(JSON.stringify({ ok, sdk, modes }));
process.exit(ok ? 0 : 1);
