import { expect } from 'chai';
import { VerifiedTokenCache, type VerifiedToken } from '../../../../policies/es512-jwt/verified-token-cache';
import { Database } from '../../../../gateway/db/database';
import { createLogger } from '../../../../gateway/logging/logger';
import { trackGatewayState } from '../../../../gateway/metrics';
import { OwnershipCache } from '../../../../gateway/ownership';
import { runDatabaseUrl } from '../../../support/test-database';
import { seriesValue } from './helpers';

const verified = (partnerId: string, exp: number): VerifiedToken => ({
  partner: { _id: partnerId, name: 'p', issuer: 'https://p.example', status: 'active', processingEnabled: true, createdAt: '', updatedAt: '' },
  kid: 'k1',
  claims: { iss: 'https://p.example', sub: partnerId, iat: exp - 60, exp },
});

describe('unit: metrics/state (read at scrape)', function () {
  let db: Database;

  before(function () {
    db = new Database(runDatabaseUrl(), { max: 3, log: createLogger({ level: 'silent' }) });
  });

  after(async function () {
    trackGatewayState(undefined);
    await db.close();
  });

  it('the ownership cache counts hits and misses (concurrent misses of one key are each a miss, one load)', async function () {
    const cache = new OwnershipCache();
    let loads = 0;
    const loader = async () => {
      loads += 1;
      return { partnerId: 'p1' };
    };
    await Promise.all([cache.get('card', 'CK1', loader), cache.get('card', 'CK1', loader)]);
    await cache.get('card', 'CK1', loader);
    await cache.get('individual', 'nobody', async () => undefined);
    await cache.get('individual', 'nobody', async () => undefined);
    expect(loads).to.equal(1);
    expect(cache.stats()).to.deep.equal({ size: 2, hits: 2, misses: 3 });
  });

  it('exposes the caches\' hits, misses and entries, and the pool\'s connections, as they are at each scrape', async function () {
    const ownership = new OwnershipCache();
    const tokenCache = new VerifiedTokenCache();
    trackGatewayState({ db, ownership, tokenCache });

    expect(await seriesValue('cache_hits_total', { cache: 'ownership' })).to.equal(0);
    expect(await seriesValue('cache_misses_total', { cache: 'verified_token' })).to.equal(0);
    expect(await seriesValue('db_pool_max_connections')).to.equal(3);

    await ownership.get('card', 'CK1', async () => ({ partnerId: 'p1' }));
    await ownership.get('card', 'CK1', async () => ({ partnerId: 'p1' }));
    const now = Date.now();
    tokenCache.get('a.b.c', now);
    tokenCache.set('a.b.c', verified('p1', Math.floor(now / 1000) + 60), now);
    tokenCache.get('a.b.c', now);
    tokenCache.get('a.b.c', now);

    expect(await seriesValue('cache_hits_total', { cache: 'ownership' })).to.equal(1);
    expect(await seriesValue('cache_misses_total', { cache: 'ownership' })).to.equal(1);
    expect(await seriesValue('cache_entries', { cache: 'ownership' })).to.equal(1);
    expect(await seriesValue('cache_hits_total', { cache: 'verified_token' })).to.equal(2);
    expect(await seriesValue('cache_misses_total', { cache: 'verified_token' })).to.equal(1);
    expect(await seriesValue('cache_entries', { cache: 'verified_token' })).to.equal(1);

    // One connection held in a transaction, three more queries queued behind the pool's max of 3.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const transactions = [1, 2, 3].map(() => db.transaction(() => held));
    const queued = db.query('SELECT 1');
    try {
      // Connecting takes a moment: wait until the pool is full and the fourth query queued.
      for (let tries = 0; db.pool.waitingCount !== 1 || db.pool.totalCount !== 3; tries++) {
        if (tries > 500) throw new Error('the pool never filled up');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(await seriesValue('db_pool_total_connections')).to.equal(3);
      expect(await seriesValue('db_pool_idle_connections')).to.equal(0);
      expect(await seriesValue('db_pool_waiting_clients')).to.equal(1);
    } finally {
      release();
      await Promise.all([...transactions, queued]);
    }
    expect(await seriesValue('db_pool_waiting_clients')).to.equal(0);
    expect(await seriesValue('db_pool_idle_connections')).to.equal(3);
  });

  it('a later call replaces the sources (counts restart: a counter reset)', async function () {
    trackGatewayState({ db, ownership: new OwnershipCache(), tokenCache: new VerifiedTokenCache() });
    expect(await seriesValue('cache_hits_total', { cache: 'verified_token' })).to.equal(0);
  });
});
