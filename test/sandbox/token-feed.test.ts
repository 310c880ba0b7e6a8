import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import type { SimulatedTokenizationResult, Token, TokenChanges } from '../../contracts/upstreams';
import { createProcessingSandbox, Notifier } from '../../sandbox';
import { TokenStore } from '../../sandbox/processing/tokens';
import { call, type ErrorBody } from './http-client';

/**
 * The token change feed (`GET /tokens/changes`, docs/upstreams.md 10.7): the transaction feed's
 * rules (6.8) over tokens. A processing sandbox without a notify target: its tokenizations take the
 * network's verdict (no gateway decides), and its notifications wait in the notifier's queue, so
 * the feed is the only way the changes are read, as the token reconciler reads them.
 */
describe('processing sandbox: the token change feed (GET /tokens/changes)', function () {
  let server: http.Server;
  let url: string;
  const notifier = new Notifier('processing', { log: () => undefined });

  const post = async <T>(path: string, body?: unknown, status = 200): Promise<T> => {
    const answer = await call<T>(`${url}${path}`, { method: 'POST', body });
    expect(answer.status, `${path} ${answer.text}`).to.equal(status);
    return answer.body;
  };
  const tokenize = async (): Promise<Token> => (await post<SimulatedTokenizationResult>('/__sandbox/tokenizations', { cardId: 'CK-TF-1', walletProvider: 'apple_pay' }, 201)).token;
  const read = async (ref: string): Promise<Token> => (await call<Token>(`${url}/tokens/${ref}`)).body;
  const changes = async (query = ''): Promise<TokenChanges> => {
    const answer = await call<TokenChanges>(`${url}/tokens/changes${query}`);
    expect(answer.status, answer.text).to.equal(200);
    return answer.body;
  };

  before(async () => {
    server = http.createServer(createProcessingSandbox({ notifier }));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    notifier.clear();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });
  beforeEach(async () => {
    await post('/__sandbox/reset');
    notifier.clear();
    await post('/__sandbox/cards', { cardKey: 'CK-TF-1', accountId: 'acc-tf' }, 201);
    await post('/__sandbox/cards', { cardKey: 'CK-TF-2', accountId: 'acc-tf' }, 201);
  });

  it('each changed token once, in the order of its latest change, in its current state; nextCursor pages and holds its place', async () => {
    const a = await tokenize();
    const b = await tokenize();
    const c = await tokenize();
    await post(`/tokens/${a.tokenReference}/suspend`, { requestedBy: 'partner' });
    await post(`/tokens/${a.tokenReference}/resume`, { requestedBy: 'partner' });
    const all = await changes();
    expect(all.data).to.deep.equal([await read(b.tokenReference), await read(c.tokenReference), await read(a.tokenReference)]);
    expect(all.data[2]).to.include({ status: 'active', version: 3 });

    const page1 = await changes('?limit=2');
    expect(page1.data.map((t) => t.tokenReference)).to.deep.equal([b.tokenReference, c.tokenReference]);
    const page2 = await changes(`?limit=2&after=${page1.nextCursor}`);
    expect(page2.data.map((t) => t.tokenReference)).to.deep.equal([a.tokenReference]);
    const empty = await changes(`?after=${page2.nextCursor}`);
    expect(empty).to.deep.equal({ data: [], nextCursor: page2.nextCursor });
    expect(all.nextCursor, 'the end of the feed is one position').to.equal(page2.nextCursor);

    // A move (oldest token first) and a network change are changes too; an operation that changes nothing is not.
    await post(`/tokens/${c.tokenReference}/resume`, { requestedBy: 'partner' });
    expect((await changes(`?after=${empty.nextCursor}`)).data).to.deep.equal([]);
    await post(`/cards/CK-TF-1/tokens/move`, { toCardKey: 'CK-TF-2', reason: 'replaced' });
    await post(`/__sandbox/tokens/${b.tokenReference}/network-status`, { status: 'suspended', notify: 'drop' });
    const next = await changes(`?after=${empty.nextCursor}`);
    expect(next.data.map((t) => [t.tokenReference, t.cardKey, t.status, t.version])).to.deep.equal([
      [a.tokenReference, 'CK-TF-2', 'active', 4],
      [c.tokenReference, 'CK-TF-2', 'active', 2],
      [b.tokenReference, 'CK-TF-2', 'suspended', 3],
    ]);
  });

  it('a cursor of another boot or from before a reset restarts from the oldest change kept; a bad cursor or limit is 400', async () => {
    const a = await tokenize();
    const { nextCursor } = await changes();
    expect(nextCursor).to.match(/^[0-9a-f]{16}\.[0-9]+$/);
    const otherBoot = `${nextCursor.startsWith('0') ? '1' : '0'}${nextCursor.slice(1)}`;
    expect((await changes(`?after=${otherBoot}`)).data.map((t) => t.tokenReference)).to.deep.equal([a.tokenReference]);
    // A position past the end of this boot's feed (a forged one) restarts too.
    const boot = nextCursor.split('.')[0];
    expect((await changes(`?after=${boot}.999999`)).data.map((t) => t.tokenReference)).to.deep.equal([a.tokenReference]);
    await post('/__sandbox/reset');
    await post('/__sandbox/cards', { cardKey: 'CK-TF-1', accountId: 'acc-tf' }, 201);
    const b = await tokenize();
    const afterReset = await changes(`?after=${nextCursor}`);
    expect(afterReset.data.map((t) => t.tokenReference)).to.deep.equal([b.tokenReference]);
    expect(afterReset.nextCursor.split('.')[0]).to.not.equal(boot);
    for (const query of ['?after=abc', '?after=1.2', `?after=${nextCursor}x`, '?limit=0', '?limit=501', '?limit=ten']) {
      const answer = await call<ErrorBody>(`${url}/tokens/changes${query}`);
      expect(answer.status, query).to.equal(400);
      expect(answer.body.errorCode).to.equal('VALIDATION_ERROR');
    }
    expect((await changes('?limit=500')).data).to.have.length(1);
  });

  it('without a gateway to ask, a tokenization takes the network\'s verdict; its token.created waits for a target, the feed has it at once', async () => {
    const token = await tokenize();
    expect(token).to.include({ status: 'active', version: 1 });
    expect(notifier.backlog, 'queued until a notify target is set').to.be.at.least(1);
    expect((await changes()).data).to.deep.equal([token]);
  });

  it('keeps the latest change of at most its cap of tokens: the one changed longest ago goes first', () => {
    const store = new TokenStore(100, 100, 3);
    const make = (i: number) =>
      store.create(
        { tokenReference: `tref_${i}`, cardKey: 'A', tokenizationId: null, walletProvider: 'merchant', tokenRequestorId: '50100000001', last4: '1111', tokenExpDate: '01/2030', device: { type: 'other' }, status: 'active', requestedBy: 'gateway', decision: { decision: 'approve' } },
        'drop',
      );
    for (const i of [1, 2, 3]) make(i);
    store.operate('tref_1', 'suspend', { requestedBy: 'partner' }, undefined);
    make(4);
    // tref_2 changed longest ago: out of the feed (the token itself is kept).
    expect(store.changes(undefined, 10).data.map((t) => t.tokenReference)).to.deep.equal(['tref_3', 'tref_1', 'tref_4']);
    expect(store.get('tref_2')).to.not.equal(undefined);
  });
});
