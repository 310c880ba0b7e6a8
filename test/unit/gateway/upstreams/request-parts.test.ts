import { expect } from 'chai';
import { compilePath, encodeQuery, pickQuery, proxiedBody, upstreamHeaders } from '../../../../gateway/upstreams/request-parts';

describe('unit: upstreams/request-parts (what is sent upstream, pure builders)', function () {
  describe('compilePath', function () {
    const cases: { template: string; values: Record<string, string>; expected: string }[] = [
      { template: '/pin-encryption-key', values: {}, expected: '/pin-encryption-key' },
      { template: '/cards/{id}', values: { id: 'CK0123456789ABCDEF' }, expected: '/cards/CK0123456789ABCDEF' },
      { template: '/cards/{id}/limits/{limitName}/available', values: { id: 'CK1', limitName: 'dailyPurchase' }, expected: '/cards/CK1/limits/dailyPurchase/available' },
      { template: '/cards/{id}', values: { id: 'a/b?c#d e' }, expected: '/cards/a%2Fb%3Fc%23d%20e' },
      { template: '/cards/{id}/status', values: { id: '..' }, expected: '/cards/%2E%2E/status' },
      { template: '/cards/{id}/status', values: { id: '.' }, expected: '/cards/%2E/status' },
      { template: '/x/{id}', values: { id: '%2e%2e' }, expected: '/x/%252e%252e' },
    ];
    for (const { template, values, expected } of cases) {
      it(`${template} with ${JSON.stringify(values)} → ${expected}`, function () {
        expect(compilePath(template).build(values)).to.equal(expected);
      });
    }

    it('lists the parameters it uses', function () {
      expect(compilePath('/cards/{id}/limits/{limitName}').params).to.deep.equal(['id', 'limitName']);
    });

    it('refuses a missing or empty parameter at request time', function () {
      expect(() => compilePath('/cards/{id}').build({})).to.throw(TypeError, /"id"/);
      expect(() => compilePath('/cards/{id}').build({ id: '' })).to.throw(TypeError);
    });

    it('refuses a stray brace at set-up', function () {
      expect(() => compilePath('/cards/{id')).to.throw(TypeError);
      expect(() => compilePath('/cards/}')).to.throw(TypeError);
    });
  });

  describe('encodeQuery of pickQuery (the query of a proxied route)', function () {
    const key = 'MIIBIjAN+Bgkq/hkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA==';
    const cases: { description: string; query: Record<string, unknown> | undefined; names: string[]; expected: string }[] = [
      { description: 'nothing listed', query: { a: '1' }, names: [], expected: '' },
      { description: 'no query at all', query: undefined, names: ['a'], expected: '' },
      { description: 'only listed names, in listed order', query: { b: '2', a: '1', evil: 'x' }, names: ['a', 'b'], expected: '?a=1&b=2' },
      {
        description: 'a base64 key keeps + / =',
        query: { expDate: '12/2030', securityKey: key },
        names: ['expDate', 'securityKey'],
        expected: `?expDate=12%2F2030&securityKey=${encodeURIComponent(key)}`,
      },
      { description: 'numbers and booleans as text', query: { page: 2, all: true }, names: ['page', 'all'], expected: '?page=2&all=true' },
      { description: 'arrays repeated, objects dropped', query: { a: ['1', '2'], b: { c: 1 } }, names: ['a', 'b'], expected: '?a=1&a=2' },
      { description: '& and = in a value are encoded', query: { country: 'D&E=1' }, names: ['country'], expected: '?country=D%26E%3D1' },
    ];
    for (const { description, query, names, expected } of cases) {
      it(description, function () {
        const text = encodeQuery(pickQuery(query, names));
        expect(text).to.equal(expected);
        if (names.includes('securityKey')) expect(new URLSearchParams(text.slice(1)).get('securityKey')).to.equal(key);
      });
    }
  });

  describe('proxiedBody', function () {
    const cases: { description: string; method: string; mode: 'forward' | 'none'; body: unknown; setBody?: Record<string, string>; expected: unknown }[] = [
      { description: 'GET never sends a body', method: 'GET', mode: 'forward', body: { a: 1 }, expected: undefined },
      { description: 'body: none sends nothing', method: 'POST', mode: 'none', body: { a: 1 }, expected: undefined },
      { description: 'POST forwards the parsed body', method: 'POST', mode: 'forward', body: { a: 1 }, expected: { a: 1 } },
      { description: 'POST without a body sends {}', method: 'POST', mode: 'forward', body: undefined, expected: {} },
      {
        description: 'setBody is merged over the partner body',
        method: 'POST',
        mode: 'forward',
        body: { CustomerType: 'Consumer Debit', OperationType: 'CARD_DELIVERY_FEE' },
        setBody: { OperationType: 'CARD_ISSUING_FEE' },
        expected: { CustomerType: 'Consumer Debit', OperationType: 'CARD_ISSUING_FEE' },
      },
      { description: 'setBody over an array body is setBody alone', method: 'POST', mode: 'forward', body: [1], setBody: { a: 'b' }, expected: { a: 'b' } },
      { description: 'an array body is forwarded as is', method: 'PATCH', mode: 'forward', body: [{ name: 'x', value: 1 }], expected: [{ name: 'x', value: 1 }] },
      { description: 'DELETE without a partner body sends nothing', method: 'DELETE', mode: 'forward', body: {}, expected: undefined },
    ];
    for (const { description, method, mode, body, setBody, expected } of cases) {
      it(description, function () {
        expect(proxiedBody(method, mode, body, setBody)).to.deep.equal(expected);
      });
    }
  });

  describe('upstreamHeaders', function () {
    it('is exactly accept and x-request-id for a GET, then host', function () {
      expect(upstreamHeaders('GET', 'rid-1', undefined, undefined, 'issuer.test')).to.deep.equal(['accept', 'application/json', 'x-request-id', 'rid-1', 'host', 'issuer.test']);
    });
    it('adds content-type and content-length for a body', function () {
      expect(upstreamHeaders('POST', 'rid-2', Buffer.from('{"é":1}'), undefined, 'issuer.test')).to.deep.equal([
        'accept', 'application/json',
        'x-request-id', 'rid-2',
        'content-type', 'application/json',
        'content-length', '8',
        'host', 'issuer.test',
      ]);
    });
    it('sends content-length 0 for a POST without a body', function () {
      expect(upstreamHeaders('POST', 'rid-3', undefined, undefined, 'issuer.test')).to.deep.equal(['accept', 'application/json', 'x-request-id', 'rid-3', 'content-length', '0', 'host', 'issuer.test']);
    });
    it('adds idempotency-key for an operation id, and nothing for an empty request id', function () {
      expect(upstreamHeaders('POST', '', Buffer.from('{}'), 'op-1', 'issuer.test')).to.deep.equal([
        'accept', 'application/json',
        'idempotency-key', 'op-1',
        'content-type', 'application/json',
        'content-length', '2',
        'host', 'issuer.test',
      ]);
    });
  });
});
