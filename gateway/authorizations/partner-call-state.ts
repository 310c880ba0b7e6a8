/**
 * The partner decision endpoint calls as one process sees them: what a call came to, the in-flight
 * cap per partner, and the health the admin API shows; partner-endpoint.ts re-exports it.
 */

/** Calls in flight to one partner's endpoint in one process; past it: the default decision, reason `overloaded`, at once. */
export const MAX_IN_FLIGHT_PER_PARTNER = 32;

/** How the partner's error came about, for health and logs (never the answer's content). */
export type PartnerCallError = 'connection' | 'http_status' | 'redirect' | 'invalid_answer' | 'answer_too_large' | 'target_refused' | 'secret_unavailable';

/** What the partner decided, or what applied instead. */
export type PartnerDecision =
  | { kind: 'answered'; approved: boolean; declineReason?: string; latencyMs: number }
  | {
      kind: 'default';
      /** timeout: no answer within min(timeoutMs, budget); error: see `error`; disabled: an operator disabled the endpoint; overloaded: the partner's in-flight cap was reached. */
      reason: 'timeout' | 'error' | 'disabled' | 'overloaded';
      /** The endpoint's `defaultDecision`. */
      approved: boolean;
      latencyMs: number;
      /** With reason `error`: what failed. */
      error?: PartnerCallError;
    }
  /** No endpoint, or the partner disabled it: the partner is not asked. */
  | { kind: 'none' };

/** One partner's calls as this process saw them (the admin API's health; since the process started). */
export interface PartnerCallHealth {
  inFlight: number;
  calls: number;
  answered: number;
  approved: number;
  declined: number;
  timeouts: number;
  errors: number;
  overloaded: number;
  /** Counts by error kind. */
  errorKinds: Partial<Record<PartnerCallError, number>>;
  lastAnswerAt: string | null;
  lastFailure: { at: string; reason: 'timeout' | 'error'; error: PartnerCallError | null } | null;
  /** Latency of the last (up to 100) answered calls, in ms. */
  latencyMs: { p50: number; p99: number; max: number } | null;
}

const LATENCY_WINDOW = 100;

interface PartnerState {
  inFlight: number;
  health: Omit<PartnerCallHealth, 'inFlight' | 'latencyMs'>;
  latencies: number[];
}

/**
 * The per-process state of the decision calls: each partner's calls in flight (the isolation cap)
 * and health. One per gateway process (createAuthorizationServices); the keep-alive agents are the
 * gateway's outbound transport's (gateway/outbound).
 */
export class PartnerCallState {
  private readonly partners = new Map<string, PartnerState>();
  constructor(readonly maxInFlightPerPartner = MAX_IN_FLIGHT_PER_PARTNER) {}

  private state(partnerId: string): PartnerState {
    let state = this.partners.get(partnerId);
    if (!state) {
      state = {
        inFlight: 0,
        health: { calls: 0, answered: 0, approved: 0, declined: 0, timeouts: 0, errors: 0, overloaded: 0, errorKinds: {}, lastAnswerAt: null, lastFailure: null },
        latencies: [],
      };
      this.partners.set(partnerId, state);
    }
    return state;
  }

  /** Takes a slot of the partner's cap; false when it is full. */
  acquire(partnerId: string): boolean {
    const state = this.state(partnerId);
    if (state.inFlight >= this.maxInFlightPerPartner) {
      state.health.overloaded++;
      return false;
    }
    state.inFlight++;
    state.health.calls++;
    return true;
  }

  release(partnerId: string): void {
    this.state(partnerId).inFlight--;
  }

  record(partnerId: string, decision: PartnerDecision): void {
    const { health, latencies } = this.state(partnerId);
    const now = new Date().toISOString();
    if (decision.kind === 'answered') {
      health.answered++;
      if (decision.approved) health.approved++;
      else health.declined++;
      health.lastAnswerAt = now;
      latencies.push(decision.latencyMs);
      if (latencies.length > LATENCY_WINDOW) latencies.shift();
    } else if (decision.kind === 'default' && (decision.reason === 'timeout' || decision.reason === 'error')) {
      if (decision.reason === 'timeout') health.timeouts++;
      else {
        health.errors++;
        if (decision.error) health.errorKinds[decision.error] = (health.errorKinds[decision.error] ?? 0) + 1;
      }
      health.lastFailure = { at: now, reason: decision.reason, error: decision.error ?? null };
    }
  }

  /** The partner's health in this process; undefined when it was never asked here. */
  health(partnerId: string): PartnerCallHealth | undefined {
    const state = this.partners.get(partnerId);
    if (!state) return undefined;
    const sorted = [...state.latencies].sort((a, b) => a - b);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
    return {
      inFlight: state.inFlight,
      ...state.health,
      errorKinds: { ...state.health.errorKinds },
      latencyMs: sorted.length ? { p50: at(0.5), p99: at(0.99), max: sorted[sorted.length - 1] } : null,
    };
  }
}
