/**
 * Polls `probe` every `everyMs` until it returns (or resolves to) a value other than `undefined` or `false`, and
 * returns that value; after `ms` it throws `timed out waiting for <what>`. For state another process or event loop turn
 * changes (a daemon's writes, a watch event), never for timing assertions.
 */
export async function eventually<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  ms = 10_000,
  everyMs = 20,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
