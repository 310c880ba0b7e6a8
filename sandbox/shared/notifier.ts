import crypto from 'node:crypto';

/** Where a sandbox sends its notifications: the gateway's notification listener and this upstream's secret. */
export interface NotifyTarget {
  /** Base URL of the listener, e.g. `http://127.0.0.1:9877`. */
  url: string;
  secret: string;
}

/** A notification body: its `id` is what the gateway deduplicates on. */
export interface NotificationBody {
  id: string;
  type: string;
  [field: string]: unknown;
}

/** Options of a {@link Notifier}; the defaults are the contract's (docs/upstreams.md, section 9). */
export interface NotifierOptions {
  /** Most notifications waiting for a retry; the oldest is dropped (and logged) past it. Default 10,000. */
  maxQueue?: number;
  /** How long a notification is retried. Default 24 h. */
  maxAgeMs?: number;
  /** First retry delay, doubled each attempt. Default 1 s. */
  baseDelayMs?: number;
  /** Longest retry delay. Default 60 s. */
  maxDelayMs?: number;
  /** Timeout of one attempt. Default 5 s. */
  timeoutMs?: number;
  /**
   * Least time between two lines about failed attempts; the failures in between are counted in the
   * next line (`suppressed`). Default 60 s: a gateway down for a day costs about 1,440 lines, not one per attempt.
   */
  failureLogIntervalMs?: number;
  /**
   * Where a failed attempt, a dropped or given-up notification is reported; default one JSON line on
   * stderr. A line never holds the secret nor a body, only ids, the target's URL, counts and the failure.
   */
  log?: (fields: Record<string, unknown>) => void;
}

interface Pending {
  body: NotificationBody;
  raw: string;
  firstAt: number;
  attempts: number;
  dueAt: number;
}

/** `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`: the gateway's partner-webhook scheme. */
export function upstreamSignature(secret: string, raw: string, t = Math.floor(Date.now() / 1000)): string {
  return `t=${t},v1=${crypto.createHmac('sha256', secret).update(`${t}.${raw}`).digest('hex')}`;
}

/** What went wrong with an attempt that got no answer: `timeout`, the socket's code (`ECONNREFUSED`), else `connection`. */
function failureOf(err: unknown): string {
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) return 'timeout';
  const code = (err as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  return typeof code === 'string' && /^[A-Z0-9_]{1,40}$/.test(code) ? code : 'connection';
}

/** A new notification id: `ntf_` and 24 random hex digits. */
export function newNotificationId(): string {
  return `ntf_${crypto.randomBytes(12).toString('hex')}`;
}

/**
 * Sends one upstream's signed notifications to the gateway (`POST <url>/upstream-notifications/<upstream>`),
 * at least once: a notification not answered 2xx is retried with exponential backoff from an
 * in-memory queue, bounded in length and age. Without a target, notifications queue until one is set.
 */
export class Notifier {
  private target: NotifyTarget | undefined;
  private readonly queue: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;
  private draining = false;
  /** Failure logging: when the last line was written, the failures since, and whether the last attempt failed. */
  private lastFailureLineAt = Number.NEGATIVE_INFINITY;
  private suppressedFailures = 0;
  private failing = false;
  private readonly o: Required<Omit<NotifierOptions, 'log'>> & { log: (fields: Record<string, unknown>) => void };

  constructor(
    private readonly upstream: 'issuer' | 'processing',
    options: NotifierOptions = {}
  ) {
    this.o = {
      maxQueue: options.maxQueue ?? 10_000,
      maxAgeMs: options.maxAgeMs ?? 24 * 3600_000,
      baseDelayMs: options.baseDelayMs ?? 1000,
      maxDelayMs: options.maxDelayMs ?? 60_000,
      timeoutMs: options.timeoutMs ?? 5000,
      failureLogIntervalMs: options.failureLogIntervalMs ?? 60_000,
      log: options.log ?? ((fields) => process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), sandbox: upstream, ...fields })}\n`)),
    };
  }

  /**
   * Where to send from now on (queued notifications are sent at once); `undefined` stops sending:
   * new notifications queue (bounded as the retries) until a target is set again.
   */
  setTarget(target: NotifyTarget | undefined): void {
    this.target = target;
    // A new target's first failure is reported at once (a wrong secret: 401), whatever the last line's time.
    this.lastFailureLineAt = Number.NEGATIVE_INFINITY;
    if (target) this.schedule(0);
  }

  /** The listener's base URL notifications go to, or null when there is no target (never the secret). */
  get targetUrl(): string | null {
    return this.target?.url ?? null;
  }

  /** Writes one line where this notifier reports (the control routes' changes of target). */
  report(fields: Record<string, unknown>): void {
    this.o.log(fields);
  }

  /** Notifications waiting for a retry (or for a target). */
  get backlog(): number {
    return this.queue.length;
  }

  /**
   * Sends `body` now and resolves once the gateway answered 2xx (true) or the first attempt failed,
   * or `waitMs` passed (false: it stays queued and is retried). With notifications already waiting
   * it is queued behind them instead (false), so none overtakes an older one.
   */
  async send(body: NotificationBody, waitMs = 2000): Promise<boolean> {
    const pending: Pending = { body, raw: JSON.stringify(body), firstAt: Date.now(), attempts: 0, dueAt: Date.now() };
    if (!this.target || this.queue.length > 0 || this.draining) {
      // Oldest first: behind the notifications already waiting (docs/upstreams.md section 9).
      this.enqueue(pending);
      if (this.target) this.schedule(0);
      return false;
    }
    const delivered = await Promise.race([this.attempt(pending), new Promise<false>((resolve) => setTimeout(resolve, waitMs, false).unref())]);
    return delivered;
  }

  /**
   * Asks the gateway a question that needs an answer now (the processor's authorization request,
   * docs/upstreams.md 6.10): `POST <url><path>`, signed like the notifications, waiting at most
   * `timeoutMs`. The answer's status and parsed body (undefined when not JSON), or undefined when no
   * answer came (no target, a timeout, a connection error). Never queued nor retried: the caller
   * applies its stand-in.
   */
  async ask(path: string, body: NotificationBody, timeoutMs: number): Promise<{ status: number; body: unknown } | undefined> {
    const target = this.target;
    if (!target) return undefined;
    const raw = JSON.stringify(body);
    try {
      const res = await fetch(`${target.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'upstream-notification-id': body.id, 'upstream-signature': upstreamSignature(target.secret, raw) },
        body: raw,
        redirect: 'manual',
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = await res.text();
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      return { status: res.status, body: parsed };
    } catch {
      return undefined;
    }
  }

  /** Drops every queued notification and the timer (the sandbox's reset and close). */
  clear(): void {
    this.queue.length = 0;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private async attempt(p: Pending): Promise<boolean> {
    const target = this.target;
    if (!target) {
      this.enqueue(p);
      return false;
    }
    p.attempts += 1;
    let ok = false;
    let failure: { status: number } | { error: string } | undefined;
    try {
      const res = await fetch(`${target.url}/upstream-notifications/${this.upstream}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'upstream-notification-id': p.body.id, 'upstream-signature': upstreamSignature(target.secret, p.raw) },
        body: p.raw,
        signal: AbortSignal.timeout(this.o.timeoutMs),
      });
      await res.arrayBuffer().catch(() => undefined);
      ok = res.ok;
      if (!ok) failure = { status: res.status };
    } catch (err) {
      ok = false;
      failure = { error: failureOf(err) };
    }
    if (!ok) {
      const retryInMs = Math.min(this.o.maxDelayMs, this.o.baseDelayMs * 2 ** (p.attempts - 1));
      p.dueAt = Date.now() + retryInMs;
      this.enqueue(p);
      this.reportFailure(target.url, p, failure ?? { error: 'connection' }, retryInMs);
    } else if (this.failing) {
      this.failing = false;
      this.o.log({ msg: 'notifications delivered again', url: target.url, backlog: this.queue.length });
    }
    return ok;
  }

  /**
   * One line per failed attempt, at most one per `failureLogIntervalMs` (the others are counted in
   * the next): the gateway's answer status (401: the secrets differ) or what failed, never the secret.
   */
  private reportFailure(url: string, p: Pending, failure: { status: number } | { error: string }, retryInMs: number): void {
    this.failing = true;
    const now = Date.now();
    if (now - this.lastFailureLineAt < this.o.failureLogIntervalMs) {
      this.suppressedFailures += 1;
      return;
    }
    this.lastFailureLineAt = now;
    const suppressed = this.suppressedFailures;
    this.suppressedFailures = 0;
    this.o.log({ msg: 'notification not delivered', url, notificationId: p.body.id, attempt: p.attempts, ...failure, retryInMs, backlog: this.queue.length, ...(suppressed > 0 ? { suppressed } : {}) });
  }

  private enqueue(p: Pending): void {
    if (Date.now() - p.firstAt > this.o.maxAgeMs) {
      this.o.log({ msg: 'notification given up', notificationId: p.body.id, attempts: p.attempts });
      return;
    }
    // Kept in the order the notifications were first made (a retried one goes back to its place).
    let at = this.queue.length;
    while (at > 0 && this.queue[at - 1]!.firstAt > p.firstAt) at -= 1;
    this.queue.splice(at, 0, p);
    while (this.queue.length > this.o.maxQueue) {
      const dropped = this.queue.shift()!;
      this.o.log({ msg: 'notification queue full: oldest dropped', notificationId: dropped.body.id });
    }
    this.schedule(Math.max(0, Math.min(...this.queue.map((q) => q.dueAt)) - Date.now()));
  }

  private schedule(delayMs: number): void {
    if (!this.target || this.queue.length === 0) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.drain(), delayMs);
    this.timer.unref();
  }

  private async drain(): Promise<void> {
    this.timer = undefined;
    // One drain at a time (a target set while one runs must not start a second, out of order): the
    // running one schedules the next when it ends.
    if (this.draining) return;
    this.draining = true;
    try {
      // One at a time, oldest first, and none before an older one: the gateway applies a card's
      // notifications in the order sent. An oldest one waiting for its retry holds the others.
      while (this.queue.length > 0 && this.queue[0]!.dueAt <= Date.now()) {
        const p = this.queue.shift()!;
        if (!(await this.attempt(p))) break;
      }
    } finally {
      this.draining = false;
    }
    if (this.queue.length) this.schedule(Math.max(0, Math.min(...this.queue.map((q) => q.dueAt)) - Date.now()));
  }
}
