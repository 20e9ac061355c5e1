// Polling for tests: waits until a check yields a value (anything but undefined, null or false), with a generous
// limit and a message naming what was awaited (and, optionally, what the test knows so far). Never a timing assertion.
export async function until<T>(
  check: () => T | Promise<T>,
  what: string | (() => string),
  timeoutMs = 60_000,
  intervalMs = 50,
): Promise<Exclude<T, undefined | null | false>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== null && value !== false) return value as Exclude<T, undefined | null | false>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${typeof what === 'function' ? what() : what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
