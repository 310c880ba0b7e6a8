/** Per-call context: forwarded request id, and a sink the access log reads upstream latency from. */
export interface CallContext {
  /** Sent as `x-request-id` to the upstream. */
  requestId: string;
  /** Each call adds its duration in milliseconds to `upstreamLatencyMs` (sum over calls). */
  timing?: { upstreamLatencyMs?: number };
}
