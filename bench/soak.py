#!/usr/bin/env python3
"""The soak's load driver and sampler (issue 13, item 6; docs/benchmarks.md, "Soak, issue 13").

`bench/soak.sh` prepares the databases and calls this; run it through that script. It starts
both servers from the release binaries, drives them at once with paced, mixed load for
`--minutes` minutes, and samples every minute, per server process: RSS (VmRSS), open file
descriptors (/proc/<pid>/fd), the database pool gauges of its metrics listener
(`mcp_door_pool_connections`), PostgreSQL's own count of the database's connections
(`pg_stat_activity`), and for each load stream the calls, p50/p99 and every failure of that
minute. Each minute is one line of `minutes.jsonl` and one row of `minutes.csv`; at the end it
prints a Markdown table and a drift verdict per series (the rule is `verdict()` below and the
doc's), and writes both to `report.md`. Every 5xx and every transport error is counted and
reported; none is retried silently.

Load streams (each paced, so no limit is what gets measured):
  sq_read    Sidequest players: get_play_context, read_play_journal, search_play_memory
  sq_commit  Sidequest players: commit_play_turn (fresh operation ids), finish_play_session
             after --turns turns, then the GM creates a new assignment and hands out its token
  sq_gm      Sidequest GM over REST: pending consequences, review, journal, report
  ex_oauth   Elixir's person door /mcp through the official SDK's OAuthClientProvider (consent by
             emailed code, tokens refreshed every --access-ttl seconds): read tools, mostly Help
  ex_agent   Elixir's agent door /a/<id>/mcp with the demo's service key: read tools, mostly Help
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import csv
import json
import os
import re
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientMetadata, OAuthToken

ROOT = Path(__file__).resolve().parent.parent
# The consent helper the tests use (a person in a browser reading the emailed code).
sys.path.insert(0, str(ROOT / "tests" / "python"))
import elixir_oauth_flow as flow  # noqa: E402

CALL_TIMEOUT = 30.0
TIMEOUT = httpx2.Timeout(30.0, read=60.0)


# --- per-minute statistics ------------------------------------------------------------------


@dataclass
class Bucket:
    latencies: list[float] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)
    # Answers the contract defines that are not failures (a version conflict after the GM's
    # review bumped the version): counted apart, never in `errors`.
    notes: dict[str, int] = field(default_factory=dict)


class Stream:
    """One load stream: latencies and failures of the current minute."""

    def __init__(self, name: str, log: Path) -> None:
        self.name = name
        self.bucket = Bucket()
        self.log = log
        self.totals: dict[str, int] = {}

    def ok(self, seconds: float) -> None:
        self.bucket.latencies.append(seconds)

    def fail(self, kind: str, detail: str) -> None:
        self.bucket.errors[kind] = self.bucket.errors.get(kind, 0) + 1
        self.totals[kind] = self.totals.get(kind, 0) + 1
        with self.log.open("a") as f:
            f.write(f"{time.strftime('%H:%M:%S')} {self.name} {kind}: {detail[:500]}\n")

    def note(self, kind: str) -> None:
        self.bucket.notes[kind] = self.bucket.notes.get(kind, 0) + 1

    def take(self) -> dict[str, Any]:
        b, self.bucket = self.bucket, Bucket()
        lat = sorted(b.latencies)
        return {
            "calls": len(lat),
            "p50_ms": round(percentile(lat, 0.50) * 1000, 1) if lat else None,
            "p99_ms": round(percentile(lat, 0.99) * 1000, 1) if lat else None,
            "errors": sum(b.errors.values()),
            "error_kinds": b.errors,
            "notes": b.notes,
        }


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile."""
    rank = max(1, int(-(-q * len(sorted_values) // 1)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


def http_client(stream: Stream, writes: Stream | None = None, **kwargs: Any) -> httpx2.AsyncClient:
    """An httpx2 client that counts every 5xx answer it receives on `stream` (refresh and
    registration requests of the OAuth provider included), or on `writes` for a commit or a
    finish."""

    async def on_response(response: httpx2.Response) -> None:
        if response.status_code >= 500:
            body = response.request.content or b""
            to = writes if writes is not None and (b"commit_play_turn" in body or b"finish_play_session" in body) else stream
            to.fail("5xx", f"{response.request.method} {response.request.url.path} -> {response.status_code}")

    return httpx2.AsyncClient(timeout=TIMEOUT, event_hooks={"response": [on_response]}, **kwargs)


async def timed_tool(stream: Stream, session: ClientSession, name: str, args: dict[str, Any]) -> Any | None:
    """One tools/call; its latency on success. A tool error (`isError`) is counted as
    `tool_error`; an exception propagates (the caller counts it and reconnects)."""
    started = time.perf_counter()
    result = await asyncio.wait_for(session.call_tool(name, args), CALL_TIMEOUT)
    took = time.perf_counter() - started
    if result.is_error:
        text = result.content[0].text if result.content else ""
        if text.startswith("409: Version conflict"):
            stream.note("version_conflict")
        else:
            stream.fail("tool_error", f"{name}: {text}")
        return None
    stream.ok(took)
    return result.structured_content


@contextlib.asynccontextmanager
async def mcp_session(url: str, http: httpx2.AsyncClient):
    async with streamable_http_client(url, http_client=http) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await asyncio.wait_for(session.initialize(), CALL_TIMEOUT)
            yield session


def exception_kind(e: BaseException) -> str:
    """`transport` for a connection-level failure, else `exception`."""
    text = repr(e)
    for marker in ("ConnectError", "ReadError", "RemoteProtocolError", "WriteError", "Timeout", "ConnectTimeout"):
        if marker in text:
            return "transport"
    return "exception"


def flatten(e: BaseException) -> BaseException:
    while isinstance(e, BaseExceptionGroup) and e.exceptions:
        e = e.exceptions[0]
    return e


# --- Sidequest ------------------------------------------------------------------------------


class Gm:
    """The GM over REST: one login, then assignments, tokens and reviews."""

    def __init__(self, base: str, stream: Stream, username: str, password: str, scenario: dict[str, Any]):
        self.base = base
        self.stream = stream
        self.username = username
        self.password = password
        self.scenario = scenario
        self.http = http_client(stream)
        self.csrf = ""
        self.reviewing: set[str] = set()

    async def request(self, method: str, path: str, body: Any | None = None, ok: tuple[int, ...] = (200,)) -> httpx2.Response | None:
        started = time.perf_counter()
        try:
            r = await self.http.request(
                method, f"{self.base}{path}", json=body, headers={"X-CSRF-Token": self.csrf} if self.csrf else {}
            )
        except Exception as e:  # noqa: BLE001 - counted and reported
            self.stream.fail(exception_kind(e), f"{method} {path}: {e!r}")
            return None
        took = time.perf_counter() - started
        if r.status_code in ok:
            self.stream.ok(took)
            return r
        if r.status_code < 500:  # a 5xx was counted by the hook already
            self.stream.fail(f"http_{r.status_code}", f"{method} {path}: {r.text[:300]}")
        return r

    async def login(self) -> None:
        r = await self.request("POST", "/api/auth/login", {"username": self.username, "password": self.password})
        if r is None or r.status_code != 200:
            raise RuntimeError(f"GM login failed: {r.status_code if r else 'no answer'}")
        self.csrf = r.json()["csrf_token"]

    async def new_assignment(self) -> tuple[str, str] | None:
        """A new assignment for the player in the demo scenario, and its play token."""
        nodes = [n["id"] for n in self.scenario["nodes"] if n["published"]]
        body = {
            "id": str(uuid.uuid4()),
            "scenario_id": self.scenario["id"],
            "source_version": self.scenario["source_version"],
            "player_username": "player",
            "mode": "downtime",
            "language": "en",
            "character": "Arin",
            "brief": "Arin stays in Saltmere while the party travels inland.",
            "boundaries": "No deaths; do not enter the crypt.",
            "return_condition": "Arin rejoins the party at dawn.",
            "gm_notes": "Soak assignment.",
            "published_node_ids": nodes,
        }
        r = await self.request("POST", "/api/plays/", body, ok=(201,))
        if r is None or r.status_code != 201:
            return None
        token = await self.request("POST", f"/api/plays/{body['id']}/access/", ok=(201,))
        if token is None or token.status_code != 201:
            return None
        return body["id"], token.json()["token"]

    async def review_round(self) -> None:
        """Every assignment with pending consequences: read it, decide up to 20, read its
        journal; now and then its report."""
        for play in sorted(self.reviewing):
            items = await self.request("GET", f"/api/plays/{play}/consequences/")
            if items is None or items.status_code != 200:
                continue
            pending = [c["id"] for c in items.json()["items"] if c["status"] == "pending"][:20]
            detail = await self.request("GET", f"/api/plays/{play}/")
            if detail is None or detail.status_code != 200:
                continue
            if pending:
                decisions = [
                    {"id": c, "decision": "approved" if i % 3 else "rejected", "note": "Reviewed in the soak."}
                    for i, c in enumerate(pending)
                ]
                review = {"operation_id": str(uuid.uuid4()), "expected_version": detail.json()["version"], "decisions": decisions}
                # 409: the player committed meanwhile (a version conflict is the contract's
                # answer, counted apart); the next round retries with the new version.
                r = await self.request("POST", f"/api/plays/{play}/review/", review, ok=(200, 409))
                if r is not None and r.status_code == 409:
                    self.stream.note("version_conflict")
            elif detail.json()["status"] != "active":
                self.reviewing.discard(play)
            await self.request("GET", f"/api/plays/{play}/journal/?offset=0&limit=10")
            if uuid.uuid4().int % 4 == 0:
                await self.request("GET", f"/api/plays/{play}/report/?lang=pl")


class Texts:
    action = "I help Mira search the pier before dawn. " * 5
    narration = "You find a torn page from the keeper's journal and promise to return tomorrow. " * 8
    memory = "# Current state\nAt the harbor before dawn.\n\n# Established during play\n" + "Arin helped Mira. " * 100


async def player(args: argparse.Namespace, reads: Stream, commits: Stream, gm: Gm, play: str, token: str, stop: asyncio.Event) -> None:
    """One player's assistant: reads and turns on its assignment, then the finish; the GM then
    gives it a new assignment."""
    while not stop.is_set():
        turns = 0
        try:
            async with http_client(reads, commits, headers={"Authorization": f"Bearer {token}"}) as http:
                async with mcp_session(f"{args.sq_url}/play/mcp", http) as session:
                    version = None
                    while not stop.is_set():
                        for name, a in (
                            ("get_play_context", {}),
                            ("read_play_journal", {"offset": 0, "limit": 10}),
                            ("search_play_memory", {"query": "Mira"}),
                        ):
                            got = await timed_tool(reads, session, name, a)
                            if got is not None and "version" in got:
                                version = got["version"]
                            await pace(args.sq_pace, stop)
                        if version is None:
                            continue
                        if turns < args.turns:
                            consequences = (
                                [{"category": "relationship", "description": f"Mira remembers turn {turns}."}]
                                if turns % 2 == 0
                                else []
                            )
                            got = await timed_tool(
                                commits,
                                session,
                                "commit_play_turn",
                                {
                                    "operation_id": str(uuid.uuid4()),
                                    "expected_version": version,
                                    "player_action": Texts.action,
                                    "narration": Texts.narration,
                                    "memory_markdown": Texts.memory,
                                    "current_scene": "harbor",
                                    "consequences": consequences,
                                },
                            )
                            if got is not None:
                                version = got["version"]
                                turns += 1
                                gm.reviewing.add(play)
                        else:
                            got = await timed_tool(
                                commits,
                                session,
                                "finish_play_session",
                                {"operation_id": str(uuid.uuid4()), "expected_version": version, "summary": "Arin rejoins the party."},
                            )
                            if got is not None:
                                break
                        await pace(args.sq_pace, stop)
        except Exception as e:  # noqa: BLE001 - counted, then a new session
            e = flatten(e)
            commits.fail(exception_kind(e), f"{play}: {e!r}")
            await pace(1.0, stop)
            continue
        if stop.is_set():
            return
        fresh = await gm.new_assignment()
        if fresh is None:
            await pace(5.0, stop)
            continue
        play, token = fresh


async def gm_loop(args: argparse.Namespace, gm: Gm, stop: asyncio.Event) -> None:
    while not stop.is_set():
        await gm.review_round()
        await pace(args.gm_pace, stop)


# --- Elixir ---------------------------------------------------------------------------------

# Read tools: mostly Help (unmetered), every fifth a metered read, so the day's quota of the
# demo's leader account (2,000 calls) is never what the soak measures.
PERSON_TOOLS = [
    ("elixir_docs", {}),
    ("players_summary", {}),
    ("elixir_docs", {"page": "limits"}),
    ("elixir_examples", {}),
    ("elixir_changelog", {}),
    ("elixir_docs", {"query": "scopes"}),
    ("battles_query", {"limit": 10}),
    ("elixir_updates", {}),
    ("elixir_docs", {"page": "clocks"}),
    ("elixir_examples", {}),
]
AGENT_TOOLS = [
    ("elixir_docs", {}),
    ("players_profile", {"player_tag": "PRIMARY"}),
    ("elixir_docs", {"page": "tools"}),
    ("elixir_changelog", {}),
    ("elixir_examples", {}),
    ("elixir_docs", {"query": "quota"}),
    ("players_summary", {"player_tag": "PRIMARY"}),
    ("elixir_updates", {}),
    ("elixir_docs", {"page": "responses"}),
    ("elixir_examples", {}),
]


class CountingStorage(flow.MemoryStorage):
    """The flow's token storage, counting how often the provider stores new tokens."""

    def __init__(self) -> None:
        super().__init__()
        self.stored = 0
        self.refreshed = 0

    async def set_tokens(self, tokens: OAuthToken) -> None:
        if self.tokens is not None and tokens.access_token != self.tokens.access_token:
            self.refreshed += 1
        self.stored += 1
        await super().set_tokens(tokens)


async def tool_loop(args: argparse.Namespace, stream: Stream, url: str, tools: list[tuple[str, dict[str, Any]]], make_http, stop: asyncio.Event) -> None:
    i = 0
    while not stop.is_set():
        try:
            async with make_http() as http:
                async with mcp_session(url, http) as session:
                    while not stop.is_set():
                        name, a = tools[i % len(tools)]
                        i += 1
                        await timed_tool(stream, session, name, a)
                        await pace(args.ex_pace, stop)
        except Exception as e:  # noqa: BLE001 - counted, then a new session
            e = flatten(e)
            stream.fail(exception_kind(e), repr(e))
            await pace(1.0, stop)


# --- servers and sampling -------------------------------------------------------------------


async def pace(seconds: float, stop: asyncio.Event) -> None:
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(stop.wait(), seconds)


@dataclass
class Server:
    name: str
    proc: subprocess.Popen
    log: Path
    address: str = ""
    metrics: str = ""


def logged_address(log: Path, message: str, proc: subprocess.Popen, timeout: float = 120) -> str:
    """The `address` field of the first JSON log line whose message starts with `message`."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        for line in log.read_text(errors="replace").splitlines() if log.exists() else []:
            with contextlib.suppress(ValueError):
                fields = json.loads(line).get("fields", {})
                if str(fields.get("message", "")).startswith(message) and "address" in fields:
                    return fields["address"]
        if proc.poll() is not None:
            raise RuntimeError(f"{log.name}: the server exited ({proc.returncode}):\n{log.read_text()[-3000:]}")
        time.sleep(0.1)
    raise RuntimeError(f"{log.name}: no '{message}' line within {timeout} s")


def start(name: str, argv: list[str], out: Path, cwd: Path, serving: str) -> Server:
    log = out / f"{name}.log"
    proc = subprocess.Popen(argv, stdout=log.open("w"), stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=cwd)
    server = Server(name, proc, log)
    server.metrics = logged_address(log, "serving GET /metrics", proc)
    server.address = logged_address(log, serving, proc)
    return server


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return -1


def fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def pool_gauges(metrics_addr: str) -> dict[str, int]:
    """`mcp_door_pool_connections` by `pool` and `state`, e.g. {"sidequest.open": 4}."""
    try:
        text = httpx2.get(f"http://{metrics_addr}/metrics", timeout=5).text
    except Exception:  # noqa: BLE001 - a failed scrape is a missing sample, shown as -1
        return {"scrape_failed": 1}
    out: dict[str, int] = {}
    for line in text.splitlines():
        m = re.match(r'mcp_door_pool_connections\{(.*)\} (\S+)', line)
        if m:
            labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
            out[f"{labels.get('pool')}.{labels.get('state')}"] = int(float(m.group(2)))
    return out


def pg_connections(pg_admin_url: str, datname: str) -> int:
    r = subprocess.run(
        ["psql", "-Atq", pg_admin_url, "-c", f"SELECT count(*) FROM pg_stat_activity WHERE datname = '{datname}'"],
        capture_output=True,
        text=True,
        timeout=20,
    )
    return int(r.stdout.strip()) if r.returncode == 0 and r.stdout.strip() else -1


def loadavg() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


# --- the report -----------------------------------------------------------------------------

# Per series: (relative tolerance of the baseline, absolute floor).
TOLERANCE = {"rss_mib": (0.10, 4.0), "fds": (0.0, 4.0), "pool_open": (0.0, 2.0), "pg_conns": (0.0, 2.0), "p50_ms": (0.5, 5.0), "p99_ms": (1.0, 25.0)}


def slope(ys: list[float]) -> float:
    n = len(ys)
    xs = list(range(n))
    mx, my = sum(xs) / n, sum(ys) / n
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den if den else 0.0


def verdict(name: str, values: list[float | None]) -> tuple[str, str]:
    """The drift rule: the baseline is the median of minutes 2-4 (minute 1 warms up); the
    trend is the least-squares slope over the second half of the run. A series drifts up when
    that slope, carried over the whole run, adds more than the tolerance to the baseline AND
    the second half's median is above the baseline by more than the tolerance. The tolerance
    is the larger of a share of the baseline and an absolute floor (TOLERANCE)."""
    ys = [v for v in values if v is not None]
    if len(ys) < 6:
        return "too short", f"{len(ys)} samples"
    kind = name.split("/")[-1]
    rel, floor = TOLERANCE.get(kind, (0.1, 1.0))
    base = sorted(ys[1:4])[1]
    half = ys[len(ys) // 2 :]
    s = slope(half)
    tol = max(rel * base, floor)
    second = sorted(half)[len(half) // 2]
    grew = s * len(ys)
    detail = f"baseline {base:g}, second-half median {second:g}, slope {s:+.3g}/min (x{len(ys)} min = {grew:+.3g}), tolerance {tol:.3g}"
    if grew > tol and second - base > tol:
        return "DRIFTS UP", detail
    return "flat", detail


def report(rows: list[dict[str, Any]], streams: list[Stream], out: Path, extra: dict[str, Any]) -> str:
    series: dict[str, list[float | None]] = {}
    for row in rows:
        for proc, s in row["servers"].items():
            series.setdefault(f"{proc}/rss_mib", []).append(round(s["rss_kib"] / 1024, 1))
            series.setdefault(f"{proc}/fds", []).append(s["fds"])
            series.setdefault(f"{proc}/pool_open", []).append(s["pool_open"])
            if s.get("pg_conns") is not None:
                series.setdefault(f"{proc}/pg_conns", []).append(s["pg_conns"])
        for name, st in row["streams"].items():
            series.setdefault(f"{name}/p50_ms", []).append(st["p50_ms"])
            series.setdefault(f"{name}/p99_ms", []).append(st["p99_ms"])
    lines = []
    head = ["min", "load"]
    for proc in rows[0]["servers"]:
        head += [f"{proc} RSS MiB", f"{proc} fds", f"{proc} pool open"]
        if rows[0]["servers"][proc].get("pg_conns") is not None:
            head.append(f"{proc} pg conns")
    for name in rows[0]["streams"]:
        head.append(f"{name} calls / p50 / p99 ms / err")
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    for row in rows:
        cells = [str(row["minute"]), f"{row['load']:.1f}"]
        for proc, s in row["servers"].items():
            cells += [f"{s['rss_kib'] / 1024:.1f}", str(s["fds"]), str(s["pool_open"])]
            if s.get("pg_conns") is not None:
                cells.append(str(s["pg_conns"]))
        for st in row["streams"].values():
            cells.append(f"{st['calls']} / {st['p50_ms']} / {st['p99_ms']} / {st['errors']}")
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("| series | verdict | how |")
    lines.append("|---|---|---|")
    for name, values in series.items():
        v, how = verdict(name, values)
        lines.append(f"| {name} | {v} | {how} |")
    lines.append("")
    totals = {s.name: s.totals for s in streams}
    lines.append(f"Failures over the whole run, by stream and kind: `{json.dumps(totals)}`")
    notes: dict[str, dict[str, int]] = {}
    for row in rows:
        for name, st in row["streams"].items():
            for k, v in st["notes"].items():
                notes.setdefault(name, {})[k] = notes.setdefault(name, {}).get(k, 0) + v
    lines.append(f"Answers the contract defines, not failures (version conflicts after a review), by stream: `{json.dumps(notes)}`")
    for k, v in extra.items():
        lines.append(f"{k}: {v}")
    text = "\n".join(lines) + "\n"
    (out / "report.md").write_text(text)
    return text


async def sample_forever(args, servers: list[Server], streams: list[Stream], rows: list, out: Path, stop: asyncio.Event, storage: CountingStorage) -> None:
    minute = 0
    started = time.monotonic()
    with (out / "minutes.csv").open("w", newline="") as csv_file:
        writer = None
        while minute < args.minutes:
            minute += 1
            await asyncio.sleep(max(0.0, started + minute * args.sample_secs - time.monotonic()))
            row: dict[str, Any] = {"minute": minute, "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "load": loadavg(), "servers": {}, "streams": {}}
            for s in servers:
                gauges = await asyncio.to_thread(pool_gauges, s.metrics)
                open_ = sum(v for k, v in gauges.items() if k.endswith(".open"))
                entry = {"rss_kib": rss_kib(s.proc.pid), "fds": fds(s.proc.pid), "pool_open": open_, "pool": gauges}
                if s.name == "sidequest":
                    entry["pg_conns"] = await asyncio.to_thread(pg_connections, args.pg_admin_url, args.pg_db)
                row["servers"][s.name] = entry
            for st in streams:
                row["streams"][st.name] = st.take()
            row["oauth_tokens_stored"] = storage.stored
            row["oauth_refreshes"] = storage.refreshed
            rows.append(row)
            with (out / "minutes.jsonl").open("a") as f:
                f.write(json.dumps(row) + "\n")
            flat = {"minute": minute, "at": row["at"], "load": row["load"], "oauth_refreshes": storage.refreshed}
            for name, e in row["servers"].items():
                for k in ("rss_kib", "fds", "pool_open", "pg_conns"):
                    if k in e:
                        flat[f"{name}_{k}"] = e[k]
            for name, st in row["streams"].items():
                for k in ("calls", "p50_ms", "p99_ms", "errors"):
                    flat[f"{name}_{k}"] = st[k]
            if writer is None:
                writer = csv.DictWriter(csv_file, fieldnames=list(flat))
                writer.writeheader()
            writer.writerow(flat)
            csv_file.flush()
            print(f"minute {minute}/{args.minutes}: " + ", ".join(f"{k}={v}" for k, v in flat.items() if k not in ("minute", "at")), flush=True)
            for s in servers:
                if s.proc.poll() is not None:
                    print(f"{s.name} exited with {s.proc.returncode}", flush=True)
                    stop.set()
                    return
    stop.set()


async def main(args: argparse.Namespace) -> int:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    errors_log = out / "errors.log"
    demo_sq = json.loads(Path(args.sq_demo).read_text())
    demo_ex = Path(args.ex_demo).read_text()
    agent = re.search(r"/a/([^/\s]+)/mcp --header \"Authorization: Bearer (svt_[^\"]+)\"", demo_ex)
    if not agent:
        raise RuntimeError("no agent door in the elixir demo output")
    agent_id, service_key = agent.group(1), agent.group(2)
    primary = re.search(r"primary player is (#[0-9A-Z]+)", demo_ex)
    if not primary:
        raise RuntimeError("no primary player in the elixir demo output")
    agent_tools = [(n, {k: primary.group(1) if v == "PRIMARY" else v for k, v in a.items()}) for n, a in AGENT_TOOLS]

    work = Path(args.work)
    sq = start(
        "sidequest",
        [args.sq_bin, "--database-url", args.sq_database_url, "--log-format", "json", "serve", "--bind", "127.0.0.1:0",
         "--redis-url", args.redis_url, "--redis-prefix", f"soak-{os.getpid()}:admission", "--metrics-bind", "127.0.0.1:0"],
        out,
        work,
        "sidequest serving",
    )
    ex_port = args.ex_port
    ex_base = f"http://127.0.0.1:{ex_port}"
    outbox = work / "outbox"
    ex = start(
        "elixir",
        [args.ex_bin, "--database-url", args.ex_database_url, "--log-format", "json", "serve", "--bind", f"127.0.0.1:{ex_port}",
         "--public-url", ex_base, "--mail-outbox", str(outbox), "--access-ttl-secs", str(args.access_ttl),
         "--hourly-rate", "1000000", "--metrics-bind", "127.0.0.1:0", "--archive-dir", str(work / "archive")],
        out,
        work,
        "elixir serving",
    )
    servers = [sq, ex]
    args.sq_url = f"http://{sq.address}"
    print(f"sidequest pid {sq.proc.pid} at {args.sq_url} (metrics {sq.metrics}); elixir pid {ex.proc.pid} at {ex_base} (metrics {ex.metrics})", flush=True)

    reads, commits, gm_stream = Stream("sq_read", errors_log), Stream("sq_commit", errors_log), Stream("sq_gm", errors_log)
    ex_oauth, ex_agent = Stream("ex_oauth", errors_log), Stream("ex_agent", errors_log)
    streams = [reads, commits, gm_stream, ex_oauth, ex_agent]
    gm = Gm(args.sq_url, gm_stream, "gm", args.gm_password, demo_sq["scenario"])
    await gm.login()

    flow.EMAIL = "demo@elixir.example"  # the demo account, whose primary player and clan are recorded
    person = flow.Person(ex_base, outbox)
    storage = CountingStorage()
    provider = OAuthClientProvider(
        server_url=f"{ex_base}/mcp",
        client_metadata=OAuthClientMetadata(
            client_name="Elixir soak",
            redirect_uris=[flow.REDIRECT_URI],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=person.consent,
        callback_handler=person.callback,
    )

    stop = asyncio.Event()
    rows: list[dict[str, Any]] = []
    tasks = [
        asyncio.create_task(player(args, reads, commits, gm, a["id"], a["token"], stop))
        for a in demo_sq["assignments"]
    ]
    tasks.append(asyncio.create_task(gm_loop(args, gm, stop)))
    tasks.append(asyncio.create_task(tool_loop(args, ex_oauth, f"{ex_base}/mcp", PERSON_TOOLS, lambda: http_client(ex_oauth, auth=provider), stop)))
    tasks.append(
        asyncio.create_task(
            tool_loop(args, ex_agent, f"{ex_base}/a/{agent_id}/mcp", agent_tools, lambda: http_client(ex_agent, headers={"Authorization": f"Bearer {service_key}"}), stop)
        )
    )
    try:
        await sample_forever(args, servers, streams, rows, out, stop, storage)
    finally:
        stop.set()
        await asyncio.wait(tasks, timeout=60)
        await gm.http.aclose()
        await person.browser.aclose()
        for s in servers:
            s.proc.terminate()
        for s in servers:
            try:
                s.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                s.proc.kill()
    extra = {
        "OAuth": f"{person.code_logins} consent(s) by emailed code, {storage.stored} token sets stored, {storage.refreshed} access tokens replaced by refresh or re-consent (access-token life {args.access_ttl} s)",
        "Servers' exit codes": ", ".join(f"{s.name} {s.proc.returncode}" for s in servers),
    }
    print(report(rows, streams, out, extra), flush=True)
    return 0


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--minutes", type=int, default=30)
    p.add_argument("--sample-secs", type=float, default=60.0, help="length of one sampled 'minute' (shorter only to test the script)")
    p.add_argument("--out", required=True)
    p.add_argument("--work", required=True, help="scratch directory (outbox, archive)")
    p.add_argument("--sq-bin", required=True)
    p.add_argument("--ex-bin", required=True)
    p.add_argument("--sq-database-url", required=True)
    p.add_argument("--pg-admin-url", required=True, help="where to read pg_stat_activity")
    p.add_argument("--pg-db", required=True, help="Sidequest's database name")
    p.add_argument("--redis-url", required=True)
    p.add_argument("--sq-demo", required=True, help="`sidequest demo --json` output")
    p.add_argument("--gm-password", required=True)
    p.add_argument("--ex-database-url", required=True)
    p.add_argument("--ex-demo", required=True, help="`elixir demo` output (its agent door and key)")
    p.add_argument("--ex-port", type=int, required=True)
    p.add_argument("--access-ttl", type=int, default=60)
    p.add_argument("--turns", type=int, default=12, help="turns per assignment before the finish")
    p.add_argument("--sq-pace", type=float, default=1.5, help="seconds between one player's calls")
    p.add_argument("--gm-pace", type=float, default=5.0, help="seconds between the GM's review rounds")
    p.add_argument("--ex-pace", type=float, default=1.0, help="seconds between one Elixir client's calls")
    sys.exit(asyncio.run(main(p.parse_args())))
