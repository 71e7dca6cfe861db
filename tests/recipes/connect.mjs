// Sidequest's player door with the official MCP TypeScript SDK: node connect.mjs URL TOKEN
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url, token] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: 'my-assistant', version: '1.0.0' });
await client.connect(transport);
const { tools } = await client.listTools();
console.log('tools:', tools.map(tool => tool.name).join(', '));
const result = await client.callTool({ name: 'get_play_context', arguments: {} });
console.log('get_play_context:', result.content[0].text);
await client.close();
