// Sends each case of a JSON list (argv[2]) with Node's fetch — what the official MCP TypeScript
// SDK's Streamable HTTP transport calls — and prints one JSON line per case: its name and the
// status it read, or the error it raised instead. Driven by the Rust tests of the staged close
// (crates/*/tests/it/*refusals*); it asserts nothing itself.
//
// A case: {"name", "url", "headers": {..}, "size": bytes, "mode": "length" | "chunked",
// "pause_ms": optional pause after the first 16 KiB}.

const CHUNK = 16 * 1024;

function stream(size, pauseMs) {
  let sent = 0;
  let first = true;
  return new ReadableStream({
    async pull(controller) {
      if (sent >= size) {
        controller.close();
        return;
      }
      if (!first && pauseMs && sent === CHUNK) {
        await new Promise((r) => setTimeout(r, pauseMs));
      }
      const n = Math.min(CHUNK, size - sent);
      controller.enqueue(new Uint8Array(n).fill(32));
      sent += n;
      first = false;
    },
  });
}

async function send(c) {
  const headers = { ...(c.headers ?? {}) };
  const pause = c.pause_ms ?? 0;
  let body;
  if (c.mode === "length" && !pause) {
    body = new Uint8Array(c.size).fill(32);
  } else {
    if (c.mode === "length") headers["content-length"] = String(c.size);
    body = stream(c.size, pause);
  }
  try {
    const response = await fetch(c.url, { method: "POST", headers, body, duplex: "half" });
    const text = await response.text();
    return { name: c.name, status: response.status, body: text.slice(0, 400) };
  } catch (e) {
    return { name: c.name, error: `${e.name}: ${e.message}; cause: ${e.cause?.code ?? e.cause?.message ?? ""}` };
  }
}

for (const c of JSON.parse(process.argv[2])) {
  console.log(JSON.stringify(await send(c)));
}
