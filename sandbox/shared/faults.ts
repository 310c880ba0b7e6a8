import { randomBytes } from 'node:crypto';

/** How an injected fault answers. */
export type FaultMode = 'status' | 'timeout' | 'reset' | 'malformed';

/** Body of `POST /__sandbox/faults`. */
export interface FaultSpec {
  method?: string;
  path: string;
  mode: FaultMode;
  status?: number;
  times?: number;
  /**
   * Only requests whose body contains this text (e.g. a cardKey), so that a fault aimed at one
   * card's calls never hits another client's calls to the same route.
   */
  bodyIncludes?: string;
}

/** A fault as stored and listed by `GET /__sandbox/faults`. */
export interface Fault {
  id: string;
  /** Upper-case HTTP method, or `null` for any method. */
  method: string | null;
  path: string;
  mode: FaultMode;
  status: number | null;
  /** Requests this fault still applies to; `null` means until the faults are cleared. */
  remaining: number | null;
  /** Text the request body must contain, or `null` for any body. */
  bodyIncludes: string | null;
  createdAt: string;
}

/** JSON schema of {@link FaultSpec}. */
export const faultSpecSchema = {
  $id: 'sandbox-fault-spec',
  type: 'object',
  required: ['path', 'mode'],
  additionalProperties: false,
  properties: {
    method: { type: 'string', minLength: 1, maxLength: 16 },
    path: { type: 'string', pattern: '^/' },
    mode: { type: 'string', enum: ['status', 'timeout', 'reset', 'malformed'] },
    status: { type: 'integer', minimum: 400, maximum: 599 },
    times: { type: 'integer', minimum: 0 },
    bodyIncludes: { type: 'string', minLength: 1, maxLength: 256 },
  },
};

/**
 * True when `path` matches `pattern`: equal to it, or, for a pattern ending in `*`,
 * starting with everything before the `*`.
 *
 * @example pathMatches('/cards/*', '/cards/CK0123/status') // => true
 */
export function pathMatches(pattern: string, path: string): boolean {
  return pattern.endsWith('*') ? path.startsWith(pattern.slice(0, -1)) : pattern === path;
}

/** The injected faults of one sandbox, first added first matched. */
export class FaultBook {
  private faults: Fault[] = [];

  add(spec: FaultSpec): Fault {
    const times = spec.times ?? 1;
    const fault: Fault = {
      id: randomBytes(6).toString('hex'),
      method: spec.method ? spec.method.toUpperCase() : null,
      path: spec.path,
      mode: spec.mode,
      status: spec.mode === 'status' ? (spec.status ?? null) : null,
      remaining: times === 0 ? null : times,
      bodyIncludes: spec.bodyIncludes ?? null,
      createdAt: new Date().toISOString(),
    };
    this.faults.push(fault);
    return fault;
  }

  /** Finds the first fault matching the request and consumes one of its uses; `body()` is read only when a fault needs it. */
  take(method: string, path: string, body: () => string = () => ''): Fault | undefined {
    const index = this.faults.findIndex(
      (f) =>
        (f.method === null || f.method === method.toUpperCase()) &&
        pathMatches(f.path, path) &&
        (f.bodyIncludes === null || body().includes(f.bodyIncludes)),
    );
    if (index < 0) return undefined;
    const fault = this.faults[index];
    if (fault.remaining !== null) {
      fault.remaining -= 1;
      if (fault.remaining <= 0) this.faults.splice(index, 1);
    }
    return { ...fault };
  }

  list(): Fault[] {
    return this.faults.map((f) => ({ ...f }));
  }

  clear(): void {
    this.faults = [];
  }
}
