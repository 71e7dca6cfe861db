#!/usr/bin/env python3
"""Elixir's OAuth flow end to end with the OFFICIAL MCP Python SDK client, non-interactive.

Usage: elixir_oauth_flow.py BASE_URL OUTBOX_DIR ACCESS_TTL_SECONDS
  BASE_URL            the running `elixir serve` origin (its --public-url), e.g. http://127.0.0.1:8090
  OUTBOX_DIR          its --mail-outbox directory (the six-digit codes are read from the .eml files)
  ACCESS_TTL_SECONDS  its access-token life, short so that the SDK refreshes during the run

The SDK's OAuthClientProvider does discovery, dynamic registration, PKCE and the token exchange;
the redirect handler plays the person in a browser with httpx2: it GETs the authorize URL,
submits the email form, reads the code from the newest .eml, submits the code with the CSRF token
and the ticked capabilities, and catches the 303 to the redirect URI. Then: initialize, a Help
tool, a refresh (the access token expires), a second call; the person narrows the grant on
Account -> Connections with the browser session the consent left behind, and the next call of a
feedback:write tool is the 403 step-up answer. Prints one `ok:` line; exits 0, or 1 on a failure.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import time
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urljoin, urlparse

import httpx2
from mcp import ClientSession
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

EMAIL = "flow@example.com"
REDIRECT_URI = "http://127.0.0.1:33418/callback"
STANDARD = ["cr:read", "recordings:write", "collections:write", "account:write", "feedback:write"]


class CheckFailed(Exception):
    pass


def check(condition: bool, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


class MemoryStorage(TokenStorage):
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Forms(HTMLParser):
    """Every <form>: its action and inputs (hidden values, ticked checkboxes, text fields)."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[dict[str, Any]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: (v or "") for k, v in attrs}
        if tag == "form":
            self.forms.append({"action": a.get("action", ""), "fields": [], "checked": [], "names": set()})
        elif tag == "input" and self.forms:
            form = self.forms[-1]
            name = a.get("name", "")
            form["names"].add(name)
            kind = a.get("type", "text")
            if kind == "hidden":
                form["fields"].append((name, a.get("value", "")))
            elif kind == "checkbox" and "checked" in a:
                form["checked"].append((name, a.get("value", "")))


def forms_of(html: str) -> list[dict[str, Any]]:
    parser = Forms()
    parser.feed(html)
    return parser.forms


def newest_code(outbox: Path, after: float) -> str:
    deadline = time.time() + 10
    while time.time() < deadline:
        files = sorted(
            (p for p in outbox.glob("*.eml") if p.stat().st_mtime >= after - 1),
            key=lambda p: p.stat().st_mtime,
        )
        if files:
            match = re.search(r"Your code: (\d{6})", files[-1].read_text())
            if match:
                return match.group(1)
        time.sleep(0.1)
    raise CheckFailed(f"no code in {outbox}")


class Person:
    """The person in a browser: one cookie jar, forms submitted as a browser would."""

    def __init__(self, base: str, outbox: Path) -> None:
        self.base = base
        self.outbox = outbox
        self.browser = httpx2.AsyncClient(follow_redirects=False, timeout=30)
        self.result: AuthorizationCodeResult | None = None
        self.authorize_urls: list[str] = []
        self.code_logins = 0

    async def post_form(self, path: str, fields: list[tuple[str, str]]) -> httpx2.Response:
        return await self.browser.post(
            urljoin(self.base, path),
            content=urlencode(fields).encode(),
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )

    async def consent(self, authorization_url: str) -> None:
        """The SDK's redirect handler: complete the consent page, keep the redirect's code."""
        self.authorize_urls.append(authorization_url)
        page = await self.browser.get(authorization_url)
        check(page.status_code == 200, f"authorize page {page.status_code}: {page.text[:300]}")
        for header in ["content-security-policy", "referrer-policy", "cache-control"]:
            check(header in page.headers, f"consent page without {header}")
        form = forms_of(page.text)[0]
        fields = list(form["fields"])
        if "email" in form["names"]:
            sent_at = time.time()
            page = await self.post_form(form["action"], fields + [("email", EMAIL), ("action", "send_code")])
            check(page.status_code == 200, f"send_code {page.status_code}: {page.text[:300]}")
            form = forms_of(page.text)[0]
            code = newest_code(self.outbox, sent_at)
            data = list(form["fields"]) + form["checked"] + [("code", code), ("action", "verify")]
            self.code_logins += 1
        else:
            # Signed in already (the earlier consent by code signed the browser in): one click.
            data = fields + form["checked"] + [("action", "authorize")]
        answer = await self.post_form(form["action"], data)
        check(answer.status_code == 303, f"consent answered {answer.status_code}: {answer.text[:300]}")
        location = answer.headers["location"]
        check(location.startswith(REDIRECT_URI), f"redirected to {location}")
        query = parse_qs(urlparse(location).query)
        self.result = AuthorizationCodeResult(
            code=query["code"][0], state=query.get("state", [None])[0], iss=query.get("iss", [None])[0]
        )

    async def callback(self) -> AuthorizationCodeResult:
        check(self.result is not None, "the callback ran before the redirect")
        result, self.result = self.result, None
        return result

    async def narrow_connection(self, keep: list[str]) -> None:
        """Account -> Connections: untick everything but `keep` on the one connection."""
        page = await self.browser.get(urljoin(self.base, "/account/connections"))
        check(page.status_code == 200, f"connections page {page.status_code}")
        forms = [f for f in forms_of(page.text) if f["action"].endswith("/scopes")]
        check(len(forms) == 1, f"{len(forms)} connections listed, expected 1")
        ticked = {v for _, v in forms[0]["checked"]}
        check(ticked == set(STANDARD), f"the connection holds {sorted(ticked)}")
        answer = await self.post_form(forms[0]["action"], list(forms[0]["fields"]) + [("scope", s) for s in keep])
        check(answer.status_code == 303, f"saving capabilities answered {answer.status_code}")


async def raw_call(base: str, token: str, name: str, arguments: dict[str, Any]) -> httpx2.Response:
    """One tools/call without the SDK, to see the HTTP answer itself."""
    async with httpx2.AsyncClient(timeout=30) as http:
        return await http.post(
            f"{base}/mcp",
            headers={
                "Authorization": f"Bearer {token}",
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2025-06-18",
            },
            json={"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": name, "arguments": arguments}},
        )


def payload(result: Any) -> dict[str, Any]:
    check(not result.is_error, f"tool failed: {result.content[0].text}")
    return json.loads(result.content[0].text)


async def main(base: str, outbox: Path, ttl: float) -> str:
    person = Person(base, outbox)
    storage = MemoryStorage()
    provider = OAuthClientProvider(
        server_url=f"{base}/mcp",
        client_metadata=OAuthClientMetadata(
            client_name="Elixir SDK flow test",
            redirect_uris=[REDIRECT_URI],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=person.consent,
        callback_handler=person.callback,
    )
    async with create_mcp_http_client(auth=provider) as http:
        async with streamable_http_client(f"{base}/mcp", http_client=http) as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                check(init.server_info.name == "elixir-mcp", f"serverInfo.name {init.server_info.name}")
                check(storage.client is not None, "no registration")
                check(storage.tokens is not None, "no tokens")
                first = storage.tokens
                check(first.access_token.startswith("eat_"), "access token prefix")
                check(first.refresh_token and first.refresh_token.startswith("ert_"), "refresh token prefix")
                check(first.scope == " ".join(STANDARD), f"granted scope {first.scope!r}")
                check(person.code_logins == 1, "the first consent is by email code")
                query = parse_qs(urlparse(person.authorize_urls[0]).query)
                check(query.get("resource") == [f"{base}/mcp"], f"resource {query.get('resource')}")

                docs = payload(await session.call_tool("elixir_docs", {}))
                check("pages" in json.dumps(docs), "elixir_docs answered no index")

                # The access token expires; the provider refreshes before the next request.
                await asyncio.sleep(ttl + 1.5)
                expired = await raw_call(base, first.access_token, "elixir_docs", {})
                check(expired.status_code == 401, f"an expired access token answered {expired.status_code}")
                payload(await session.call_tool("elixir_docs", {"query": "scopes"}))
                second = storage.tokens
                check(second.access_token != first.access_token, "the access token was not refreshed")
                check(second.refresh_token != first.refresh_token, "the refresh token was not rotated")
                check(second.scope == first.scope, "refreshing changed the scope")

                # The person narrows the grant on Account -> Connections; the next call is 403.
                await person.narrow_connection(["cr:read"])
                refused = await raw_call(base, second.access_token, "elixir_feedback", {"message": "hello"})
                check(refused.status_code == 403, f"narrowed grant answered {refused.status_code}: {refused.text}")
                body = refused.json()
                check(body["error"]["code"] == -32003, f"error {body['error']}")
                data = body["error"]["data"]
                check(data["required_scope"] == "feedback:write", f"required {data}")
                check(data["granted_scope"] == "cr:read", f"granted {data}")
                check("Account -> Connections" in data["hint"], "hint")
                challenge = refused.headers.get("www-authenticate", "")
                check('error="insufficient_scope"' in challenge, f"challenge {challenge}")
                check('scope="cr:read feedback:write"' in challenge, f"challenge scope {challenge}")
                # Reads still work on the narrowed grant, with the same token.
                payload(await session.call_tool("elixir_docs", {}))

                # The SDK steps up: it re-authorizes with the challenge's scope; the signed-in
                # browser consents with one click, and the call goes through.
                filed = payload(await session.call_tool("elixir_feedback", {"message": "SDK step-up works"}))
                check(len(person.authorize_urls) == 2, f"{len(person.authorize_urls)} authorizations")
                step_up = parse_qs(urlparse(person.authorize_urls[1]).query)
                check(
                    "feedback:write" in step_up.get("scope", [""])[0].split(),
                    f"step-up scope {step_up.get('scope')}",
                )
                check(person.code_logins == 1, "the step-up consent reused the browser session")
                check("meta" in filed, "feedback answered no meta")
    await person.browser.aclose()
    return (
        f"ok: registered {storage.client.client_id}, consent by code, refresh rotated, "
        f"narrowed grant answered 403 -32003, step-up re-consented as {step_up['scope'][0]!r}"
    )


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    try:
        print(asyncio.run(main(sys.argv[1].rstrip("/"), Path(sys.argv[2]), float(sys.argv[3]))))
    except CheckFailed as e:
        print(f"FAILED: {e}", file=sys.stderr)
        sys.exit(1)
