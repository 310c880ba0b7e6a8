import type { Logger } from '../logging/logger';

/**
 * Runs `pass` every `intervalMs` (and at once with `immediately`), never two at a time: a pass
 * still running when the next is due is not doubled. A failed pass is logged at warn level with
 * `failure` as the message. The timer does not keep the process alive. Returns the function that
 * stops it: no pass starts any more; its promise resolves once a pass still running has ended (a
 * caller that closes what the pass uses awaits it).
 *
 * @example const stop = every(5_000, () => outbox.deliver(), log, 'outbox pass failed');
 */
export function every(intervalMs: number, pass: () => Promise<unknown>, log: Logger, failure: string, options: { immediately?: boolean } = {}): () => Promise<void> {
  let running: Promise<void> | undefined;
  const run = () => {
    if (running) return;
    running = pass()
      .then(
        () => undefined,
        (err: unknown) => log.warn({ err }, failure)
      )
      .finally(() => (running = undefined));
  };
  if (options.immediately) run();
  const timer = setInterval(run, intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
