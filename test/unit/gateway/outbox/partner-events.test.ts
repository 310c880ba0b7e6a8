import { expect } from 'chai';
import type { Queryable } from '../../../../gateway/db/database';
import { decodeCursor, encodeCursor } from '../../../../gateway/db/cursor';
import { deleteExpiredEvents, findEvent, listEvents } from '../../../../gateway/outbox/event-log';
import { emitEvent, type CardStatusName, type EventCard, type EventIndividual, type NewPartnerEvent } from '../../../../gateway/outbox/partner-events';
import type { Card } from '../../../../gateway/cards/card-store';
import type { CardStatus } from '../../../../gateway/cards/card-status';
import type { IndividualAccount } from '../../../../gateway/individuals/individual-store';

/**
 * The event payload types are structural copies of the API's shapes (outbox/ cannot import cards/
 * or individuals/, which import it): the compiler holds the card and its status equal to the API's,
 * both ways, and the individual the API answers assignable to the event's (whose personalInfo and
 * address are declared loosely), so that an event never drifts from what the API answers.
 */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Fits<A, B> = [A] extends [B] ? true : false;
const shapesMatch: [Same<EventCard, Card>, Same<CardStatusName, CardStatus>, Fits<IndividualAccount, EventIndividual>] = [true, true, true];
import { makeKeyPair } from '../../../support/partners';
import { openServices, type InProcessServices } from '../../../support/in-process';

/** Partner events written in the change's transaction (gateway/outbox/partner-events.ts), on real PostgreSQL. */
describe('outbox: partner events written with their change, in per-card order', function () {
  it('declares its payloads in the shapes the API answers (checked by the compiler)', () => {
    expect(shapesMatch).to.deep.equal([true, true, true]);
  });

  let services: InProcessServices;
  let partnerId: string;

  const card = (cardKey: string) => ({
    cardKey,
    cardMask: '411111******1111',
    type: 'virtual' as const,
    status: 'ACTIVE' as const,
    statusCode: '00',
    currency: 'EUR',
    ownerType: 'individual' as const,
    ownerId: '6b02371b40487492a2ee0dd6',
    createdAt: new Date().toISOString(),
    productCode: 'P-STD',
    holderClientCode: null,
    expDate: '09/2030',
    embossedName: null,
    nickname: null,
    threeDsPhone: null,
  });
  const nicknameEvent = (cardKey: string, requestId?: string): NewPartnerEvent<'card.updated'> => ({
    type: 'card.updated',
    partnerId,
    cardKey,
    requestId,
    data: { cardKey, changed: ['nickname'], card: card(cardKey) },
  });
  const rowsOf = async (cardKey: string) =>
    (await services.db.query<{ seq: string; id: string; payload: string; request_id: string | null }>('SELECT seq, id, payload, request_id FROM partner_events WHERE ordering_key = $1 ORDER BY seq', [cardKey])).rows;
  /** Resolves once some backend waits for an advisory lock (the second writer of a card). */
  const someoneWaitsForAdvisoryLock = async () => {
    for (;;) {
      const waiting = await services.db.query("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND wait_event = 'advisory'");
      if (waiting.rowCount) return;
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  const rejection = (promise: Promise<unknown>) =>
    promise.then(
      () => expect.fail('expected a rejection'),
      (err: Error) => err
    );
  const deferred = () => {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    return { promise, resolve };
  };

  before(async function () {
    services = await openServices();
    partnerId = (await services.partners.create({ name: 'partner-events', issuer: 'https://partner-events.example', publicKey: makeKeyPair().publicPem }))._id;
  });
  after(async function () {
    await services?.close();
  });

  it('stores the envelope as its exact JSON, with an evt_ id, and answers it through the log', async function () {
    const written = await services.db.transaction((tx) => emitEvent(tx, nicknameEvent('CKEVT-ENVELOPE', 'req-envelope')));
    expect(written.id).to.match(/^evt_[0-9a-f]{24}$/);
    expect(written.deliveries).to.equal(0);
    const [row] = await rowsOf('CKEVT-ENVELOPE');
    expect(row).to.include({ id: written.id, seq: written.seq, request_id: 'req-envelope' });
    const envelope = JSON.parse(row.payload);
    expect(Object.keys(envelope)).to.deep.equal(['id', 'type', 'createdAt', 'partnerId', 'data', 'requestId']);
    expect(envelope).to.deep.include({ id: written.id, type: 'card.updated', partnerId, requestId: 'req-envelope' });
    expect(envelope.data.changed).to.deep.equal(['nickname']);
    expect(await findEvent(services.db, partnerId, written.id), 'the stored bytes').to.equal(row.payload);
    expect(await findEvent(services.db, '0'.repeat(24), written.id), "another partner's").to.equal(undefined);

    const withoutRequest = await services.db.transaction((tx) => emitEvent(tx, nicknameEvent('CKEVT-NOREQUEST')));
    expect(JSON.parse((await findEvent(services.db, partnerId, withoutRequest.id))!)).to.not.have.property('requestId');
  });

  it('a rolled-back change takes its event with it, and an event that cannot be written takes its change', async function () {
    const cardKey = 'CKEVT-ROLLBACK';
    const marker = async () => (await services.db.query("SELECT count(*)::int AS n FROM audit_log WHERE target_id = $1", [cardKey])).rows[0].n;
    const change = (tx: Queryable) =>
      tx.query("INSERT INTO audit_log (partner_id, operation, target_type, target_id, outcome) VALUES ($1, 'card.nickname.update', 'card', $2, 'success')", [partnerId, cardKey]);
    const failingChange = services.db.transaction(async (tx) => {
      await change(tx);
      await emitEvent(tx, nicknameEvent(cardKey));
      throw new Error('the change failed after its event was written');
    });
    expect((await rejection(failingChange)).message).to.equal('the change failed after its event was written');
    const failingEvent = services.db.transaction(async (tx) => {
      await change(tx);
      await emitEvent(tx, { ...nicknameEvent(cardKey), type: 'card.deleted' } as unknown as NewPartnerEvent);
    });
    expect((await rejection(failingEvent)).message).to.match(/partner_events_type_check/);
    expect(await rowsOf(cardKey)).to.deep.equal([]);
    expect(await marker(), 'no change without its event').to.equal(0);
  });

  it("a card's second writer waits for the first to commit, so the card's events are in commit order", async function () {
    const cardKey = 'CKEVT-ORDER';
    const order: string[] = [];
    const firstMayCommit = deferred();
    const firstWritten = deferred();
    const first = services.db.transaction(async (tx) => {
      const event = await emitEvent(tx, nicknameEvent(cardKey, 'first'));
      firstWritten.resolve();
      await firstMayCommit.promise;
      order.push('first commits');
      return event;
    });
    await firstWritten.promise;
    const second = services.db.transaction(async (tx) => {
      const event = await emitEvent(tx, nicknameEvent(cardKey, 'second'));
      order.push('second written');
      return event;
    });
    await someoneWaitsForAdvisoryLock();
    // Another card is not held up by the open transaction.
    await services.db.transaction((tx) => emitEvent(tx, nicknameEvent('CKEVT-ORDER-OTHER')));
    firstMayCommit.resolve();
    const [a, b] = await Promise.all([first, second]);
    expect(order).to.deep.equal(['first commits', 'second written']);
    expect(BigInt(a.seq) < BigInt(b.seq)).to.equal(true);
    expect((await rowsOf(cardKey)).map((r) => r.request_id)).to.deep.equal(['first', 'second']);
  });

  it('pages newest first with a cursor that new events do not shift', async function () {
    const other = (await services.partners.create({ name: 'partner-events-paging', issuer: 'https://partner-events-paging.example', publicKey: makeKeyPair().publicPem }))._id;
    const write = (n: number) => services.db.transaction((tx) => emitEvent(tx, { ...nicknameEvent(`CKEVT-PAGE-${n}`, `page-${n}`), partnerId: other }));
    for (let n = 1; n <= 5; n++) await write(n);
    const requestIds = (payloads: string[]) => payloads.map((p) => JSON.parse(p).requestId);
    const first = await listEvents(services.db, other, { limit: 2 });
    expect(requestIds(first.payloads)).to.deep.equal(['page-5', 'page-4']);
    await write(6);
    const second = await listEvents(services.db, other, { limit: 2, afterSeq: decodeCursor(first.nextCursor!) });
    expect(requestIds(second.payloads)).to.deep.equal(['page-3', 'page-2']);
    const last = await listEvents(services.db, other, { limit: 2, afterSeq: decodeCursor(second.nextCursor!) });
    expect(requestIds(last.payloads)).to.deep.equal(['page-1']);
    expect(last.nextCursor).to.equal(null);
    expect((await listEvents(services.db, other, { limit: 10, type: 'card.created' })).payloads).to.deep.equal([]);
  });

  it('cursors: the base64url of a sequence number, anything else refused', function () {
    expect(encodeCursor('42')).to.equal('NDI');
    expect(decodeCursor(encodeCursor('9007199254740993'))).to.equal('9007199254740993');
    for (const bad of ['', 'AAAA', encodeCursor('0'), encodeCursor('-1'), encodeCursor('1 OR 1=1'), `${encodeCursor('42')}=`]) expect(decodeCursor(bad), bad).to.equal(undefined);
  });

  it('retention deletes only events older than the retention period', async function () {
    const old = await services.db.transaction((tx) => emitEvent(tx, nicknameEvent('CKEVT-RETENTION-OLD')));
    const fresh = await services.db.transaction((tx) => emitEvent(tx, nicknameEvent('CKEVT-RETENTION-FRESH')));
    await services.db.query("UPDATE partner_events SET created_at = now() - interval '31 days' WHERE id = $1", [old.id]);
    expect(await deleteExpiredEvents(services.db, 30)).to.be.at.least(1);
    expect(await findEvent(services.db, partnerId, old.id)).to.equal(undefined);
    expect(await findEvent(services.db, partnerId, fresh.id)).to.be.a('string');
  });
});
