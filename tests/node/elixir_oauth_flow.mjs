#!/usr/bin/env node
// Elixir's OAuth flow end to end with the OFFICIAL MCP TypeScript SDK (`@modelcontextprotocol/sdk`,
// the engine of MCP Inspector), non-interactive.
//
// Usage: node elixir_oauth_flow.mjs BASE_URL OUTBOX_DIR ACCESS_TTL_SECONDS
//   BASE_URL            the running `elixir serve` origin (its --public-url), e.g. http://127.0.0.1:8090
//   OUTBOX_DIR          its --mail-outbox directory (the six-digit codes are read from the .eml files)
//   ACCESS_TTL_SECONDS  its access-token life, short so that the SDK refreshes during the run
//
// The SDK's `auth()` does discovery from the 401, dynamic registration, PKCE, the token exchange
// and the refresh; this file implements only the `OAuthClientProvider` storage (in memory) and
// its `redirectToAuthorization`, which plays the person in a browser with fetch and a cookie
// jar: it GETs the authorize URL, submits the email form, reads the code from the newest .eml,
// submits the code with the CSRF token and the ticked capabilities, and keeps the 303's `code`.
// Then the SDK's documented pattern: `connect` throws `UnauthorizedError`, the caller hands the
// code to `transport.finishAuth(code)` and connects again with a fresh transport.
// Then: initialize, tools/list, `elixir_docs`, the access token expires, the next call is a 401
// that the SDK answers by refreshing, a second call; the person narrows the grant on
// Account -> Connections, and the SDK's next call of a feedback:write tool is refused (403
// -32003, `insufficient_scope`): the SDK's step-up refreshes instead of re-consenting (see the
// end of `main`). Last, what MCP Inspector's "Clear OAuth State" does: the tokens are forgotten,
// the signed-in browser re-consents with one click, and `elixir_feedback` goes through.
// Prints one JSON line `{"ok":true,…}` on stdout; exits 0, or 1 with `FAILED: …` on stderr.

import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';

import { CheckFailed, check, formsOf, newestCode } from './pages.mjs';

const EMAIL = 'node-flow@example.com';
const REDIRECT_URI = 'http://127.0.0.1:33419/callback';
const STANDARD = ['cr:read', 'recordings:write', 'collections:write', 'account:write', 'feedback:write'];

/** The person in a browser: one cookie jar, forms submitted as a browser would, no redirects followed. */
class Person {
    constructor(base, outbox) {
        this.base = base;
        this.outbox = outbox;
        this.cookies = new Map();
        this.authorizeUrls = [];
        this.codeLogins = 0;
        this.redirect = undefined;
    }

    async request(url, init = {}) {
        const headers = new Headers(init.headers);
        if (this.cookies.size > 0) {
            headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
        }
        const response = await fetch(new URL(url, this.base), { ...init, headers, redirect: 'manual' });
        for (const cookie of response.headers.getSetCookie()) {
            const [pair] = cookie.split(';');
            const eq = pair.indexOf('=');
            const [name, value] = [pair.slice(0, eq).trim(), pair.slice(eq + 1).trim()];
            if (value === '' || /;\s*max-age=0\b/i.test(cookie)) {
                this.cookies.delete(name);
            } else {
                this.cookies.set(name, value);
            }
        }
        return { status: response.status, headers: response.headers, text: await response.text() };
    }

    postForm(path, fields) {
        return this.request(path, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded', origin: this.base },
            body: new URLSearchParams(fields).toString()
        });
    }

    /** `redirectToAuthorization`: complete the consent page and keep the redirect's code and state. */
    async consent(authorizationUrl) {
        this.authorizeUrls.push(authorizationUrl);
        let page = await this.request(authorizationUrl);
        check(page.status === 200, `authorize page ${page.status}: ${page.text.slice(0, 300)}`);
        for (const header of ['content-security-policy', 'referrer-policy', 'cache-control']) {
            check(page.headers.has(header), `consent page without ${header}`);
        }
        let [form] = formsOf(page.text);
        check(form !== undefined, `no form on the consent page: ${page.text.slice(0, 300)}`);
        let data;
        if (form.names.has('email')) {
            const sentAt = Date.now();
            page = await this.postForm(form.action, [...form.fields, ['email', EMAIL], ['action', 'send_code']]);
            check(page.status === 200, `send_code ${page.status}: ${page.text.slice(0, 300)}`);
            [form] = formsOf(page.text);
            check(form?.names.has('code'), `no code form: ${page.text.slice(0, 300)}`);
            const code = await newestCode(this.outbox, sentAt);
            data = [...form.fields, ...form.checked, ['code', code], ['action', 'verify']];
            this.codeLogins += 1;
        } else {
            // Signed in already (the consent by code signed the browser in): one click.
            data = [...form.fields, ...form.checked, ['action', 'authorize']];
        }
        const answer = await this.postForm(form.action, data);
        check(answer.status === 303, `consent answered ${answer.status}: ${answer.text.slice(0, 300)}`);
        const location = answer.headers.get('location') ?? '';
        check(location.startsWith(REDIRECT_URI), `redirected to ${location}`);
        const query = new URL(location).searchParams;
        check(query.get('code'), `no code in ${location}`);
        this.redirect = { code: query.get('code'), state: query.get('state') };
    }

    /** Account -> Connections: untick everything but `keep` on the one connection. */
    async narrowConnection(keep) {
        const page = await this.request('/account/connections');
        check(page.status === 200, `connections page ${page.status}`);
        const forms = formsOf(page.text).filter(f => f.action.endsWith('/scopes'));
        check(forms.length === 1, `${forms.length} connections listed, expected 1`);
        const ticked = forms[0].checked.map(([, v]) => v).sort();
        check(JSON.stringify(ticked) === JSON.stringify([...STANDARD].sort()), `the connection holds ${ticked}`);
        const answer = await this.postForm(forms[0].action, [...forms[0].fields, ...keep.map(s => ['scope', s])]);
        check(answer.status === 303, `saving capabilities answered ${answer.status}`);
    }
}

/** The SDK's `OAuthClientProvider`, in memory; `saves` keeps every token set the SDK stored. */
class MemoryProvider {
    constructor(person) {
        this.person = person;
        this.client = undefined;
        this.saved = undefined;
        this.verifier = undefined;
        this.states = [];
        this.saves = [];
    }

    get redirectUrl() {
        return REDIRECT_URI;
    }

    get clientMetadata() {
        return {
            client_name: 'Elixir TypeScript SDK flow test',
            redirect_uris: [REDIRECT_URI],
            grant_types: ['authorization_code', 'refresh_token'],
            response_types: ['code'],
            token_endpoint_auth_method: 'none'
        };
    }

    state() {
        const state = randomBytes(16).toString('base64url');
        this.states.push(state);
        return state;
    }

    clientInformation() {
        return this.client;
    }

    saveClientInformation(info) {
        this.client = info;
    }

    tokens() {
        return this.saved;
    }

    saveTokens(tokens) {
        this.saved = tokens;
        this.saves.push(tokens);
    }

    saveCodeVerifier(verifier) {
        this.verifier = verifier;
    }

    codeVerifier() {
        check(this.verifier !== undefined, 'no code verifier saved');
        return this.verifier;
    }

    async redirectToAuthorization(url) {
        await this.person.consent(url.toString());
    }

    /** The redirect's code, once: its state must be the one this provider sent. */
    takeCode() {
        const redirect = this.person.redirect;
        check(redirect !== undefined, 'the SDK asked to finish auth before any redirect');
        this.person.redirect = undefined;
        check(redirect.state === this.states.at(-1), `state ${redirect.state} is not the one sent`);
        return redirect.code;
    }
}

/** Connects `client`, following the SDK's documented pattern for `UnauthorizedError`. */
async function connect(client, url, provider) {
    for (let attempt = 0; attempt < 2; attempt++) {
        const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
        try {
            await client.connect(transport);
            return transport;
        } catch (error) {
            if (!(error instanceof UnauthorizedError)) {
                throw error;
            }
            await transport.finishAuth(provider.takeCode());
        }
    }
    throw new CheckFailed('not connected after one authorization');
}

/** One tools/call without the SDK, to see the HTTP answer itself. */
function rawCall(base, token, name, args) {
    return fetch(`${base}/mcp`, {
        method: 'POST',
        headers: {
            authorization: `Bearer ${token}`,
            accept: 'application/json, text/event-stream',
            'content-type': 'application/json',
            'mcp-protocol-version': '2025-06-18'
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: args } })
    });
}

/** A successful tool result's structured content. */
function structured(result, tool) {
    check(!result.isError, `${tool} failed: ${JSON.stringify(result.content)}`);
    check(result.structuredContent && typeof result.structuredContent === 'object', `${tool} answered no structuredContent`);
    return result.structuredContent;
}

async function main(base, outbox, ttl) {
    const person = new Person(base, outbox);
    const provider = new MemoryProvider(person);
    const client = new Client({ name: 'elixir-node-oauth-flow', version: '1.0.0' });
    const url = new URL(`${base}/mcp`);

    const transport = await connect(client, url, provider);
    const server = client.getServerVersion();
    check(server?.name === 'elixir-mcp', `serverInfo.name ${server?.name}`);
    check(provider.client?.client_id, 'no registration');
    check(provider.saves.length === 1, `${provider.saves.length} token saves after the code exchange`);
    const first = provider.saves[0];
    check(first.access_token.startsWith('eat_'), 'access token prefix');
    check(first.refresh_token?.startsWith('ert_'), 'refresh token prefix');
    check(first.scope === STANDARD.join(' '), `granted scope ${first.scope}`);
    check(person.codeLogins === 1, 'the first consent is by email code');
    check(person.authorizeUrls.length === 1, `${person.authorizeUrls.length} authorizations`);
    const authorize = new URL(person.authorizeUrls[0]);
    check(authorize.searchParams.get('resource') === `${base}/mcp`, `resource ${authorize.searchParams.get('resource')}`);
    check(authorize.searchParams.get('code_challenge_method') === 'S256', 'PKCE S256');

    const { tools } = await client.listTools();
    const names = tools.map(t => t.name);
    check(names.includes('elixir_docs'), `tools/list without elixir_docs: ${names}`);

    const docs = structured(await client.callTool({ name: 'elixir_docs', arguments: {} }), 'elixir_docs');
    check('pages' in docs, `elixir_docs answered no pages: ${JSON.stringify(docs).slice(0, 300)}`);

    // The access token expires; the next request is a 401 and the SDK refreshes, then retries.
    await sleep((ttl + 1.5) * 1000);
    const expired = await rawCall(base, first.access_token, 'elixir_docs', {});
    check(expired.status === 401, `an expired access token answered ${expired.status}`);
    structured(await client.callTool({ name: 'elixir_docs', arguments: { query: 'scopes' } }), 'elixir_docs');
    check(provider.saves.length === 2, `${provider.saves.length} token saves after the refresh`);
    const second = provider.saves[1];
    check(second.access_token !== first.access_token, 'the access token was not refreshed');
    check(second.refresh_token !== first.refresh_token, 'the refresh token was not rotated');
    check(second.scope === first.scope, 'refreshing changed the scope');
    check(person.authorizeUrls.length === 1, 'the refresh sent the person to the consent page');

    // The person narrows the grant on Account -> Connections; the next feedback:write call is 403.
    await person.narrowConnection(['cr:read']);
    const refused = await rawCall(base, second.access_token, 'elixir_feedback', { message: 'hello' });
    check(refused.status === 403, `narrowed grant answered ${refused.status}`);
    const body = await refused.json();
    check(body.error?.code === -32003, `error ${JSON.stringify(body.error)}`);
    check(body.error.data.required_scope === 'feedback:write', `required ${JSON.stringify(body.error.data)}`);
    check(body.error.data.granted_scope === 'cr:read', `granted ${JSON.stringify(body.error.data)}`);
    const challenge = refused.headers.get('www-authenticate') ?? '';
    check(challenge.includes('error="insufficient_scope"'), `challenge ${challenge}`);
    check(challenge.includes('scope="cr:read feedback:write"'), `challenge scope ${challenge}`);
    // Reads still work through the SDK on the narrowed grant.
    structured(await client.callTool({ name: 'elixir_docs', arguments: {} }), 'elixir_docs');

    // The SDK's own answer to the 403 (1.32.2): it reads the challenge as insufficient_scope
    // and calls auth() with its scope, but auth() refreshes whenever it holds a refresh token;
    // the refresh succeeds with the grant's narrowed cr:read, the retry is the same 403, and the
    // SDK gives up ("after trying upscoping") without sending the person to the consent page.
    // So no step-up re-consent with this SDK: the person widens the connection again on
    // Account -> Connections, or the application drops its tokens and connects again.
    let stepUp;
    try {
        await client.callTool({ name: 'elixir_feedback', arguments: { message: 'SDK step-up' } });
        stepUp = 'the call went through';
    } catch (error) {
        check(error instanceof StreamableHTTPError, `the narrowed call threw ${error}`);
        check(error.code === 403, `the narrowed call threw HTTP ${error.code}`);
        stepUp = error.message;
    }
    check(stepUp.includes('upscoping'), `the SDK did not try to step up: ${stepUp}`);
    check(provider.saves.length === 3, `${provider.saves.length} token saves after the step-up attempt`);
    check(provider.saves[2].scope === 'cr:read', `the step-up refresh got ${provider.saves[2].scope}`);
    check(person.authorizeUrls.length === 1, 'the SDK sent the person to the consent page again');

    // What MCP Inspector's "Clear OAuth State" does: the application forgets the tokens and
    // connects again; the signed-in browser re-consents with one click, and the call goes through.
    await transport.close();
    provider.saved = undefined;
    const again = await connect(client, url, provider);
    check(person.authorizeUrls.length === 2, `${person.authorizeUrls.length} authorizations after reconnecting`);
    check(person.codeLogins === 1, 'the re-consent asked for an email code again');
    const widened = provider.saves.at(-1);
    check(provider.saves.length === 4, `${provider.saves.length} token saves after re-consenting`);
    check(widened.scope === STANDARD.join(' '), `re-consent granted ${widened.scope}`);
    const filed = structured(
        await client.callTool({ name: 'elixir_feedback', arguments: { message: 'TypeScript SDK re-consent works' } }),
        'elixir_feedback'
    );
    check(filed.feedback?.status === 'new', `feedback answered ${JSON.stringify(filed).slice(0, 300)}`);
    await again.close();
    return {
        ok: true,
        sdk: 'typescript',
        client_id: provider.client.client_id,
        tools: names,
        token_saves: provider.saves.length,
        refreshed: second.access_token !== first.access_token,
        refresh_rotated: second.refresh_token !== first.refresh_token,
        code_logins: person.codeLogins,
        authorizations: person.authorizeUrls.length,
        narrowed_scope: provider.saves[2].scope,
        step_up: stepUp,
        reconsented_scope: widened.scope,
        feedback_id: filed.feedback.id
    };
}

const [, , base, outbox, ttl] = process.argv;
if (!base || !outbox || !ttl) {
    console.error('usage: node elixir_oauth_flow.mjs BASE_URL OUTBOX_DIR ACCESS_TTL_SECONDS');
    process.exit(2);
}
try {
    console.log(JSON.stringify(await main(base.replace(/\/$/, ''), outbox, Number(ttl))));
} catch (error) {
    console.error(`FAILED: ${error instanceof CheckFailed ? error.message : (error?.stack ?? error)}`);
    process.exit(1);
}
