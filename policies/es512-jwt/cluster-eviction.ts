import type { Logger } from '../../gateway/logging/logger';
import { broadcast, clusterBroadcastAvailable } from '../../gateway/cluster/broadcast';
import type { VerifiedTokenCache } from './verified-token-cache';

/** The cluster broadcast topic on which a partner's cached tokens are dropped in every worker. */
export const TOKEN_EVICTION_TOPIC = 'evict-partner-tokens';
/** A worker that has not confirmed the eviction within this time is killed (and replaced). */
export const TOKEN_EVICTION_TIMEOUT_MS = 5000;

/**
 * Drops a partner's cached tokens in this process and, with WORKERS > 1, in every worker of the
 * cluster: resolves once each worker confirmed, or exited, or did not answer within
 * {@link TOKEN_EVICTION_TIMEOUT_MS}. A worker that does not confirm the withdrawal of a credential
 * (a revoked key, a disabled partner) is killed, since it could still accept the credential; for
 * other changes (a new partner or key) it is only reported. Rejects only if the primary does not
 * answer (the admin call then fails with 500 rather than claim a revocation it cannot vouch for).
 */
export async function evictEverywhere(cache: VerifiedTokenCache, partnerId: string, log: Logger, options: { withdrawsCredentials: boolean } = { withdrawsCredentials: true }): Promise<void> {
  cache.evictPartner(partnerId);
  if (!clusterBroadcastAvailable()) return;
  const answers = await broadcast(TOKEN_EVICTION_TOPIC, partnerId, { timeoutMs: TOKEN_EVICTION_TIMEOUT_MS, killOnTimeout: options.withdrawsCredentials });
  const unconfirmed = answers.filter((a) => !a.ok);
  if (unconfirmed.length > 0) {
    // not_ready: the worker is still starting and has no cache yet; killed or exited: it serves nothing.
    log.warn({ partnerId, workers: unconfirmed.map((a) => ({ worker: a.worker, pid: a.pid, error: a.error })) }, 'partner change: some workers did not confirm the token eviction (starting, killed or exited)');
  }
}
