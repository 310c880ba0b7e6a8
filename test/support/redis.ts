import Redis from 'ioredis';

/** The Redis the rate-limit tests count in: TEST_REDIS_URL, or this machine's redis://127.0.0.1:6379. */
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * Resolves once Redis answers PING; otherwise throws an error naming what is missing and how to
 * start it, so a machine without Redis gets a clear failure, never a skip or a hang.
 */
export async function requireRedis(url = TEST_REDIS_URL): Promise<void> {
  const client = new Redis(url, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.ping();
  } catch (err) {
    throw new Error(
      `these tests need Redis at ${url} (set TEST_REDIS_URL, or start it with: redis-server --daemonize yes --port 6379 --save "" --appendonly no): ${(err as Error).message}`
    );
  } finally {
    client.disconnect();
  }
}
