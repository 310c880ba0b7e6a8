import { Writable } from 'node:stream';
import { expect } from 'chai';
import fc from 'fast-check';
import { createLogger } from '../../../../gateway/logging/logger';
import {
  luhnValid,
  MAX_LOGGED_URL_LENGTH,
  redactJwts,
  redactUrl,
  redactValue,
  REDACTED_KEYS,
  scrubText,
  URL_TRUNCATED,
} from '../../../../gateway/logging/redaction';

describe('unit: logging/redaction', function () {
  it('declares every secret the product handles, authorization first', function () {
    expect(REDACTED_KEYS[0]).to.equal('authorization');
    expect(REDACTED_KEYS).to.include.members(['securityKey', 'pin', 'cvv', 'cardNumber', 'passportNumber', 'taxIdNumber', 'answer']);
  });

  const urls: { url: string; expected: string }[] = [
    { url: '/api/partner/cards/CK1/cvv?expDate=01/2030&securityKey=MIIBIjAN', expected: '/api/partner/cards/CK1/cvv?expDate=01/2030&securityKey=[REDACTED]' },
    { url: '/x?SECURITYKEY=abc', expected: '/x?SECURITYKEY=[REDACTED]' },
    { url: '/x?security%4Bey=abc&page=2', expected: '/x?security%4Bey=[REDACTED]&page=2' },
    { url: '/x?pin=1234&cvv=123&cardNumber=4111111111111111', expected: '/x?pin=[REDACTED]&cvv=[REDACTED]&cardNumber=[REDACTED]' },
    { url: '/x?page=1&limit=20', expected: '/x?page=1&limit=20' },
    { url: '/x?note=%E0%A4%A', expected: '/x?note=%E0%A4%A' },
    { url: '/no-query', expected: '/no-query' },
    // A card number as a partner types it (spaces, dashes), percent-encoded or with `+`: the application reads a PAN, so the log must not keep it.
    { url: '/api/partner/cards?search=5355%207099%209999%209994', expected: '/api/partner/cards?search=[REDACTED_PAN]' },
    { url: '/api/partner/cards?search=5355+7099+9999+9994&limit=5', expected: '/api/partner/cards?search=[REDACTED_PAN]&limit=5' },
    { url: '/api/partner/cards?search=5355%2D7099%2D9999%2D9994', expected: '/api/partner/cards?search=[REDACTED_PAN]' },
    { url: '/api/partner/cards?search=5355%25207099%25209999%25209994', expected: '/api/partner/cards?search=[REDACTED_PAN]' },
    { url: '/api/partner/cards?search=card%205355%207099%209999%209994%20%26%20more', expected: '/api/partner/cards?search=card%20[REDACTED_PAN]%20%26%20more' },
    { url: '/api/partner/cards/5355%207099%209999%209994/status', expected: '/api/partner/cards/[REDACTED_PAN]/status' },
    { url: '/x?5355%207099%209999%209994', expected: '/x?[REDACTED_PAN]' },
    // A malformed escape elsewhere in the value, `+` in a path, `%2B` in a query, a webhook secret encoded.
    { url: '/api/partner/cards?search=5355%207099%209999%209994%', expected: '/api/partner/cards?search=[REDACTED_PAN]%25' },
    { url: '/api/partner/cards?search=5355%207099%209999%209994%FF', expected: '/api/partner/cards?search=[REDACTED_PAN]%25FF' },
    { url: '/api/partner/cards/5355%207099%209999%209994%ZZ', expected: '/api/partner/cards/[REDACTED_PAN]%25ZZ' },
    { url: '/api/partner/cards/5355+7099+9999+9994/status', expected: '/api/partner/cards/[REDACTED_PAN]/status' },
    { url: '/api/partner/cards?search=5355%2B7099%2B9999%2B9994', expected: '/api/partner/cards?search=[REDACTED_PAN]' },
    { url: '/x?note=whsec%5Fabcdefgh%', expected: '/x?note=[REDACTED_WEBHOOK_SECRET]%25' },
    // Escapes that hide nothing are logged as sent.
    { url: '/api/partner/cards?search=Ada%20Lovelace&q=a+b', expected: '/api/partner/cards?search=Ada%20Lovelace&q=a+b' },
    { url: '/api/partner/cards?search=5355%207099%209999%209995', expected: '/api/partner/cards?search=5355%207099%209999%209995' },
  ];
  for (const { url, expected } of urls) {
    it(`redactUrl(${url})`, function () {
      expect(redactUrl(url)).to.equal(expected);
    });
  }

  it('never throws on a URL it cannot re-encode (a lone surrogate next to a card number): the part goes whole', function () {
    expect(redactUrl('/x?q=5355%207099%209999%209994\ud800')).to.equal('/x?q=[REDACTED]');
  });

  it('scrubs JWTs, webhook secrets and Luhn-valid PANs from free text, keeps other numbers', function () {
    const jwt = 'eyJhbGciOiJFUzUxMiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl';
    expect(scrubText(`token ${jwt} end`)).to.equal('token [REDACTED_JWT] end');
    expect(scrubText('pan 4111 1111 1111 1111 here')).to.equal('pan [REDACTED_PAN] here');
    expect(scrubText('id 1732233600000 is a timestamp')).to.equal('id 1732233600000 is a timestamp');
    expect(scrubText('req-1763778230043'), 'a Luhn-valid epoch timestamp is not a PAN').to.equal('req-1763778230043');
    expect(scrubText('amex 378282246310005, mc 5555-5555-5555-4444')).to.equal('amex [REDACTED_PAN], mc [REDACTED_PAN]');
    expect(scrubText('endpoint secret whsec_Ab3-_x9QzE4k2LmN8pQrStUvWxYz0123456789abcdefg rotated')).to.equal('endpoint secret [REDACTED_WEBHOOK_SECRET] rotated');
    expect(scrubText('{"secret":"whsec_abc"}'), 'inside a JSON text too').to.equal('{"secret":"[REDACTED_WEBHOOK_SECRET]"}');
    expect(luhnValid('4111111111111111')).to.equal(true);
    expect(luhnValid('4111111111111112')).to.equal(false);
  });

  it('finds JWTs wherever the former pattern did: inside a run, between dots, several in a row', function () {
    const jwt = 'eyJhbGciOiJFUzUxMiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl';
    const cases: [string, string][] = [
      [`/api/partner/${jwt}/x`, '/api/partner/[REDACTED_JWT]/x'],
      [`Bearer ${jwt}`, 'Bearer [REDACTED_JWT]'],
      [`abc${jwt}`, 'abc[REDACTED_JWT]'],
      [`pre.${jwt}.more`, 'pre.[REDACTED_JWT].more'],
      [`${jwt}.${jwt}`, '[REDACTED_JWT].[REDACTED_JWT]'],
      ['eyJhbGciOiJFUzUxMiJ9.eyJzdWIiOiJ4In0.', '[REDACTED_JWT]'],
      ['eyJab.eyJabcdef.ghijk.x', 'eyJab.[REDACTED_JWT]'],
      ['eyJabcde.abcd.xyz', 'eyJabcde.abcd.xyz'],
      ['eyJabcde.abcde', 'eyJabcde.abcde'],
      ['eyJ'.repeat(20), 'eyJ'.repeat(20)],
    ];
    for (const [text, expected] of cases) expect(redactJwts(text), text).to.equal(expected);
  });

  it('redacts exactly what the former JWT pattern redacted, on any text', function () {
    // The pattern the scanner replaces (quadratic on "eyJeyJ…", see docs/logging.md), as the reference.
    const former = /eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g;
    const pieces = fc.constantFrom('eyJ', 'e', 'y', 'J', 'a', 'Z9', '_', '-', '.', '..', ' ', '/', '?', '=', 'é', 'abcde');
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 40 }), (parts) => {
        const text = parts.join('');
        expect(redactJwts(text)).to.equal(text.replace(former, '[REDACTED_JWT]'));
      }),
      { numRuns: 3000, seed: 11 }
    );
  });

  it('caps a logged URL at 2 KB and marks the cut; a 15 KB "eyJeyJ…" path is logged capped', function () {
    const hostile = `/api/partner/${'eyJ'.repeat(5000)}`;
    const logged = redactUrl(hostile);
    expect(MAX_LOGGED_URL_LENGTH).to.equal(2048);
    expect(logged).to.equal(`${hostile.slice(0, 2048)}${URL_TRUNCATED}`);
    expect(logged.endsWith('…[truncated]')).to.equal(true);
    const exactly = `/x/${'a'.repeat(2045)}`;
    expect(redactUrl(exactly), 'a URL of exactly 2048 characters is kept whole').to.equal(exactly);
    // Scrubbed before it is cut: a token across the 2 KB mark leaves nothing of itself behind.
    const jwt = 'eyJhbGciOiJFUzUxMiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl';
    const across = `/p/${'a'.repeat(2030)}/${jwt}?securityKey=MIIB`;
    expect(redactUrl(across)).to.equal(`/p/${'a'.repeat(2030)}/[REDACTED_JWT]`.slice(0, 2048) + URL_TRUNCATED);
    expect(redactValue({ url: hostile })).to.deep.equal({ url: logged });
  });

  it('redacts listed keys at any depth, case-insensitively, and scrubs URL fields', function () {
    const out = redactValue({
      headers: { Authorization: 'Bearer x', 'content-type': 'application/json' },
      body: { passportNumber: 'P123', nested: [{ PIN: 'abc', ok: 1 }], answer: 'blue' },
      url: '/c?securityKey=zzz',
    }) as Record<string, any>;
    expect(out.headers.Authorization).to.equal('[REDACTED]');
    expect(out.headers['content-type']).to.equal('application/json');
    expect(out.body.passportNumber).to.equal('[REDACTED]');
    expect(out.body.nested[0]).to.deep.equal({ PIN: '[REDACTED]', ok: 1 });
    expect(out.body.answer).to.equal('[REDACTED]');
    expect(out.url).to.equal('/c?securityKey=[REDACTED]');
  });

  it('bounds depth so a cyclic object cannot stall logging', function () {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(JSON.stringify(redactValue(cyclic))).to.include('[TRUNCATED]');
  });

  it('applies to every line the logger writes, messages included', async function () {
    let written = '';
    const sink = new Writable({
      write(chunk, _enc, cb) {
        written += chunk.toString();
        cb();
      },
    });
    const log = createLogger({ level: 'info', destination: sink });
    log.info({ req: { headers: { authorization: 'Bearer eyJabcdefgh.eyJabcdefgh.sig' } }, cvv: '123', url: '/p?pin=9999' }, 'saw eyJhbGciOiJFUzUxMiJ9.eyJzdWIiOiJ4In0.c2ln');
    log.info('format %s', 'cardNumber 4111111111111111');
    await new Promise((r) => setImmediate(r));
    expect(written).to.not.include('eyJ');
    expect(written).to.not.include('9999');
    expect(written).to.not.include('4111111111111111');
    expect(written).to.not.match(/"cvv":"123"/);
    expect(written).to.include('[REDACTED]');
  });
});
