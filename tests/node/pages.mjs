// What the Node scripts that play a person on Elixir's pages share (this folder's
// elixir_oauth_flow.mjs and tests/recipes/bridge.mjs): a check that fails the script with a
// message, reading the forms of a page (action, hidden fields, ticked checkboxes, input names)
// and the newest sign-in code in the mail outbox. Node's own modules only, so a script in any
// folder can import it.

import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** A check that failed: the script prints its message and exits 1. */
export class CheckFailed extends Error {}

/** Fails the script with `message` unless `condition` holds. */
export function check(condition, message) {
    if (!condition) {
        throw new CheckFailed(message);
    }
}

const ENTITIES = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" };
const unescape = s => s.replace(/&(amp|lt|gt|quot|#39);/g, (_, e) => ENTITIES[e]);

/** Every <form>: its action, hidden inputs, ticked checkboxes and the names of all inputs. */
export function formsOf(html) {
    const forms = [];
    for (const [, attrs, inner] of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/g)) {
        const form = { action: unescape(/action="([^"]*)"/.exec(attrs)?.[1] ?? ''), fields: [], checked: [], names: new Set() };
        for (const [tag] of inner.matchAll(/<input\b[^>]*>/g)) {
            const attr = name => {
                const m = new RegExp(`\\s${name}="([^"]*)"`).exec(tag);
                return m ? unescape(m[1]) : undefined;
            };
            const name = attr('name') ?? '';
            form.names.add(name);
            const type = attr('type') ?? 'text';
            if (type === 'hidden') {
                form.fields.push([name, attr('value') ?? '']);
            } else if (type === 'checkbox' && /\schecked\b/.test(tag)) {
                form.checked.push([name, attr('value') ?? '']);
            }
        }
        forms.push(form);
    }
    return forms;
}

/** The six-digit code of the newest .eml in `outbox` written at or after `after` (ms, less a second of clock skew). */
export async function newestCode(outbox, after) {
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
        const files = [];
        for (const name of await readdir(outbox).catch(() => [])) {
            if (name.endsWith('.eml')) {
                const path = join(outbox, name);
                const { mtimeMs } = await stat(path);
                if (mtimeMs >= after - 1000) {
                    files.push({ path, mtimeMs });
                }
            }
        }
        files.sort((a, b) => a.mtimeMs - b.mtimeMs);
        if (files.length > 0) {
            const match = /Your code: (\d{6})/.exec(await readFile(files.at(-1).path, 'utf8'));
            if (match) {
                return match[1];
            }
        }
        await sleep(100);
    }
    throw new CheckFailed(`no code in ${outbox}`);
}
