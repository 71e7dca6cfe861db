#!/usr/bin/env node
// The README's Claude Desktop recipe, run as Claude Desktop runs it: one `mcpServers` entry of a
// claude_desktop_config.json (a stdio server: `npx -y mcp-remote@VERSION URL …` with its `env`)
// started as a stdio server and driven by the OFFICIAL TypeScript SDK's stdio client
// (`StdioClientTransport`): initialize, tools/list, one tools/call.
//
// Usage: node bridge.mjs CONFIG_JSON SERVER_NAME TOOL [OUTBOX_DIR EMAIL]
//   CONFIG_JSON  a claude_desktop_config.json (the README's, placeholders filled in)
//   SERVER_NAME  the entry under mcpServers
//   TOOL         the tool to call with no arguments
//   OUTBOX_DIR   for an OAuth door: the server's mail outbox; the bridge prints the consent URL
//   EMAIL        (it cannot open a browser here) and this script plays the person over HTTP:
//                the consent page, the emailed code, Authorize, then the bridge's callback.
//
// `npx -y mcp-remote@VERSION` is replaced by this folder's pinned mcp-remote (the version must be
// the one in package-lock.json), so nothing is fetched; every other argument and the `env` are the
// README's. Prints one JSON line `{"ok":true,…}`; exits 0, or 1 with `FAILED: …` on stderr.

import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { CheckFailed, check, formsOf, newestCode } from '../node/pages.mjs';

const require = createRequire(import.meta.url);

/** The consent page's form: its hidden fields and ticked checkboxes. */
function consentForm(html) {
    const [form] = formsOf(html);
    check(form, `no form on the consent page: ${html.slice(0, 400)}`);
    return [...form.fields, ...form.checked];
}

/** The person in a browser: consent by emailed code, then the 303 to the bridge's callback. */
async function consent(authorizeUrl, outbox, email) {
    const post = (pairs, url) =>
        fetch(url, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams(pairs).toString(),
            redirect: 'manual',
        });
    const action = new URL('/oauth/authorize', authorizeUrl).toString();
    const first = await fetch(authorizeUrl, { redirect: 'manual' });
    const firstPage = await first.text();
    check(first.status === 200, `consent page ${first.status}: ${firstPage.slice(0, 400)}`);
    const sentAt = Date.now();
    const codePage = await post([...consentForm(firstPage), ['email', email], ['action', 'send_code']], action);
    const codeHtml = await codePage.text();
    check(codePage.status === 200, `send_code ${codePage.status}: ${codeHtml.slice(0, 400)}`);
    const code = await newestCode(outbox, sentAt);
    const done = await post([...consentForm(codeHtml), ['code', code], ['action', 'verify']], action);
    check(done.status === 303, `verify ${done.status}: ${(await done.text()).slice(0, 400)}`);
    const callback = done.headers.get('location');
    const answer = await fetch(callback, { redirect: 'manual' });
    await answer.text();
    check(answer.status < 400, `the bridge's callback ${callback} answered ${answer.status}`);
    return new URL(callback).port;
}

async function main() {
    const [configPath, serverName, tool, outbox, email] = process.argv.slice(2);
    check(configPath && serverName && tool, 'usage: bridge.mjs CONFIG_JSON SERVER_NAME TOOL [OUTBOX_DIR EMAIL]');
    const entry = JSON.parse(await readFile(configPath, 'utf8')).mcpServers?.[serverName];
    check(entry, `no mcpServers.${serverName} in ${configPath}`);
    const pinned = require('mcp-remote/package.json').version;
    check(entry.command === 'npx', `command is ${entry.command}, not npx`);
    check(
        entry.args[0] === '-y' && entry.args[1] === `mcp-remote@${pinned}`,
        `args start ${JSON.stringify(entry.args.slice(0, 2))}, not ["-y", "mcp-remote@${pinned}"]`,
    );
    const proxy = join(require.resolve('mcp-remote/package.json'), '..', 'dist', 'proxy.js');
    const transport = new StdioClientTransport({
        command: process.execPath,
        args: [proxy, ...entry.args.slice(2)],
        // What Claude Desktop gives a stdio server: a small default environment plus `env`.
        // HOME is the test's own directory (mcp-remote keeps its tokens in ~/.mcp-auth);
        // BROWSER=true makes the opener a no-op, as on a machine without a browser.
        env: {
            PATH: process.env.PATH,
            HOME: process.env.HOME,
            BROWSER: 'true',
            ...(entry.env ?? {}),
        },
        stderr: 'pipe',
    });
    let log = '';
    let consented = null;
    // Whether mcp-remote had its callback listener up before it printed the sign-in URL: it
    // starts it first only when a GET to the door is answered 401.
    let listenerFirst = null;
    transport.stderr.on('data', chunk => {
        log += chunk.toString();
        const url = /Please authorize this client by visiting:\s*(\S+)/.exec(log);
        const listening = /running the sign-in for this server \(callback port \d+\)/.exec(log);
        // The person follows the link once the bridge listens for the answer, as a browser
        // opened by it would: mcp-remote prints the URL first when it starts the listener late.
        if (url && listening && !consented) {
            listenerFirst = listening.index < url.index;
            check(outbox && email, `the bridge asks for consent but no OUTBOX_DIR was given: ${url[1]}`);
            consented = consent(url[1], outbox, email);
            // A consent that fails ends the run now, with the bridge's log, rather than leaving
            // the client waiting for a sign-in that will not come.
            consented.catch(error => {
                console.error(
                    `FAILED: the consent: ${error instanceof CheckFailed ? error.message : error.stack}\n` +
                        `--- mcp-remote's stderr ---\n${log}`,
                );
                process.exit(1);
            });
        }
    });
    const client = new Client({ name: 'recipes-bridge-test', version: '1.0.0' });
    try {
        await client.connect(transport);
        const { tools } = await client.listTools();
        const result = await client.callTool({ name: tool, arguments: {} });
        const text = result.content?.[0]?.text ?? '';
        check(!result.isError, `${tool} failed: ${text}`);
        console.log(
            JSON.stringify({
                ok: true,
                mcp_remote: pinned,
                server: client.getServerVersion(),
                tools: tools.map(t => t.name),
                called: tool,
                structured: result.structuredContent ?? null,
                callback_port: consented ? await consented : null,
                listener_first: listenerFirst,
            }),
        );
    } catch (error) {
        throw new CheckFailed(`${error.stack ?? error}\n--- mcp-remote's stderr ---\n${log}`);
    } finally {
        await client.close().catch(() => {});
    }
}

main().catch(error => {
    console.error(`FAILED: ${error instanceof CheckFailed ? error.message : error.stack}`);
    process.exit(1);
});
