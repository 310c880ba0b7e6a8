import type { Logger } from '../logging/logger';
import type { PartnerFault } from './decide';

/** How a decision ended after its partner's fault: the endpoint's default was answered, or nothing could be recorded in time (503, the stand-in). */
export type FaultedAnswer = 'default' | 'unavailable';

/** One fault as the decision's caller reports it. */
export interface FaultReport extends PartnerFault {
  /** The request's id: an authorization's, or with `tokenization` a tokenization's (the log line names it `tokenizationId`). */
  authorizationId: string;
  /** The fault was a tokenization's (`tokenization.request`), not a purchase's. */
  tokenization?: boolean;
  answered: FaultedAnswer;
}

interface PartnerWindow {
  /** When the partner's last line was written (the clock's ms). */
  lastLineAt: number;
  /** Faults since that line, not written yet: by reason and by how the decision ended. */
  held: number;
  reasons: Partial<Record<PartnerFault['reason'], number>>;
  answers: Partial<Record<FaultedAnswer, number>>;
  last?: FaultReport;
  timer?: NodeJS.Timeout;
}

/**
 * The log of the partners' decision-endpoint faults (docs/authorization-endpoint.md, "Logs"): a
 * decision that fell back to the endpoint's default, or to 503, because the partner's endpoint did
 * not answer usably is the partner's fault, not the gateway's: one `warn` line, never `error`, no
 * stack. A burst from one partner is bounded: at most one line per partner per `intervalMs`
 * (default 1 s). The first fault after a quiet interval is written at once (`count: 1`); the ones
 * that follow within the interval are held and written as one line when it ends, with their
 * `count`, their `reasons` and `answers` counted, and the last one's authorization id. Memory: one
 * entry per partner with a line in the last interval.
 *
 * @example
 * const faults = new PartnerFaultLog(log);
 * faults.report({ partnerId, reason: 'timeout', latencyMs: 1480, authorizationId, answered: 'default' });
 */
export class PartnerFaultLog {
  private readonly partners = new Map<string, PartnerWindow>();

  constructor(
    private readonly log: Logger,
    private readonly intervalMs = 1000,
    private readonly now: () => number = Date.now
  ) {}

  report(fault: FaultReport): void {
    const at = this.now();
    let window = this.partners.get(fault.partnerId);
    if (!window || (window.held === 0 && at - window.lastLineAt >= this.intervalMs)) {
      if (window?.timer) clearTimeout(window.timer);
      window = { lastLineAt: at, held: 0, reasons: {}, answers: {} };
      this.partners.set(fault.partnerId, window);
      this.write(fault, 1, { [fault.reason]: 1 }, { [fault.answered]: 1 });
      this.forgetAfterInterval(fault.partnerId, window);
      return;
    }
    window.held++;
    window.reasons[fault.reason] = (window.reasons[fault.reason] ?? 0) + 1;
    window.answers[fault.answered] = (window.answers[fault.answered] ?? 0) + 1;
    window.last = fault;
  }

  /** Writes what is held at once (at shutdown) and forgets every partner. */
  flush(): void {
    for (const [partnerId, window] of this.partners) {
      if (window.timer) clearTimeout(window.timer);
      if (window.held > 0 && window.last) this.write(window.last, window.held, window.reasons, window.answers);
      this.partners.delete(partnerId);
    }
  }

  /** At the interval's end: the held faults in one line (and another interval), or the partner forgotten. */
  private forgetAfterInterval(partnerId: string, window: PartnerWindow): void {
    window.timer = setTimeout(() => {
      if (this.partners.get(partnerId) !== window) return;
      if (window.held === 0 || !window.last) {
        this.partners.delete(partnerId);
        return;
      }
      this.write(window.last, window.held, window.reasons, window.answers);
      window.lastLineAt = this.now();
      window.held = 0;
      window.reasons = {};
      window.answers = {};
      window.last = undefined;
      this.forgetAfterInterval(partnerId, window);
    }, this.intervalMs);
    window.timer.unref();
  }

  private write(fault: FaultReport, count: number, reasons: PartnerWindow['reasons'], answers: PartnerWindow['answers']): void {
    // The partner, the failure's kind and counts: never the endpoint's answer, its URL or a secret.
    this.log.warn(
      {
        partnerId: fault.partnerId,
        reason: fault.reason,
        ...(fault.error === undefined ? {} : { error: fault.error }),
        latencyMs: fault.latencyMs,
        ...(fault.tokenization ? { tokenizationId: fault.authorizationId } : { authorizationId: fault.authorizationId }),
        answered: fault.answered,
        count,
        reasons,
        answers,
      },
      'partner decision endpoint did not answer usably'
    );
  }
}
