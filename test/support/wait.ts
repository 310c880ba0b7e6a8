/**
 * Polls `probe` every `intervalMs` until it returns a value (anything but `undefined` or `false`),
 * and resolves with that value; throws "timed out waiting for <what>" once `ms` have passed. The
 * suite waits for conditions this way, never with fixed sleeps.
 *
 * @example await waitFor('the key released', async () => (await state()) === 'released')
 */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, ms = 20_000, intervalMs = 50): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
