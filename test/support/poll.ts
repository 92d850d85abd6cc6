/**
 * Reads until `ok` holds or `ms` have passed, and returns the last value read: the caller's
 * assertion on it then says what state things were left in, rather than "timed out".
 */
export async function poll<T>(read: () => Promise<T>, ok: (v: T) => boolean, ms = 20_000, everyMs = 200): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
