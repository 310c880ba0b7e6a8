import crypto from 'node:crypto';
import { expect } from 'chai';
import { newTokenId } from '../../../../gateway/ids';
import { deleteExpiredTokenizations } from '../../../../gateway/tokens/retention';
import { openServices, type InProcessServices } from '../../../support/in-process';

/**
 * The retention of tokenization decisions and verification attempts (docs/tokens.md, "What is
 * stored"): past NOTIFICATIONS_RETENTION_DAYS they go, in batches; a claim still deciding stays
 * until its lease is over; a recent row stays.
 */
describe('unit: retention of tokenization decisions and verification attempts (gateway/tokens/retention.ts)', function () {
  this.timeout(30_000);
  let services: InProcessServices;
  before(async function () {
    services = await openServices();
  });
  after(async function () {
    await services?.close();
  });

  it('deletes the decided and the abandoned decisions and the attempts older than the retention, in batches, and keeps the rest', async function () {
    const tag = crypto.randomBytes(4).toString('hex');
    const decision = (name: string, state: 'deciding' | 'decided', ageDays: number, leaseOver: boolean) =>
      services.db.query(
        `INSERT INTO tokenization_decisions (tokenization_id, token_id, card_key, state, claim_token, decision, lease_until, commit_by, created_at)
         VALUES ($1, $2, 'CK1', $3, 'c', CASE WHEN $3 = 'decided' THEN '{"decision":"approve","decidedBy":"network"}'::jsonb END,
                 now() + CASE WHEN $4 THEN interval '-1 minute' ELSE interval '1 minute' END, now() + interval '1 hour', now() - make_interval(days => $5))`,
        [`tkz_${tag}_${name}`, newTokenId(), state, leaseOver, ageDays]
      );
    await decision('old_decided_1', 'decided', 8, true);
    await decision('old_decided_2', 'decided', 9, true);
    await decision('old_abandoned', 'deciding', 8, true);
    await decision('old_still_leased', 'deciding', 8, false);
    await decision('recent_decided', 'decided', 1, true);
    const attempt = (name: string, ageDays: number) =>
      services.db.query(
        `INSERT INTO token_verification_attempts (verification_id, token_id, outcome, commit_by, created_at)
         VALUES ($1, 'tok_x', '{"verified":true}', now() + interval '1 hour', now() - make_interval(days => $2))`,
        [`tvr_${tag}_${name}`, ageDays]
      );
    await attempt('old', 8);
    await attempt('recent', 2);
    const deleted = await deleteExpiredTokenizations(services.db, 7, 1);
    expect(deleted.decisions).to.be.at.least(3);
    expect(deleted.verifications).to.be.at.least(1);
    const left = await services.db.query<{ tokenization_id: string }>('SELECT tokenization_id FROM tokenization_decisions WHERE tokenization_id LIKE $1 ORDER BY 1', [`tkz_${tag}_%`]);
    expect(left.rows.map((r) => r.tokenization_id)).to.deep.equal([`tkz_${tag}_old_still_leased`, `tkz_${tag}_recent_decided`]);
    const attempts = await services.db.query<{ verification_id: string }>('SELECT verification_id FROM token_verification_attempts WHERE verification_id LIKE $1', [`tvr_${tag}_%`]);
    expect(attempts.rows.map((r) => r.verification_id)).to.deep.equal([`tvr_${tag}_recent`]);
  });
});
