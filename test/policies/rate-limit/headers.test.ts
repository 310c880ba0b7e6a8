import { expect } from 'chai';
import { rateLimitHeaders, secondsToReset } from '../../../policies/rate-limit/headers';

describe('rate-limit: headers (draft-ietf-httpapi-ratelimit-headers)', function () {
  const quota = { name: 'get-card-cvv', limit: 100, windowSeconds: 60 };
  const table: { description: string; hit: { count: number; resetMs: number }; expected: Record<string, string> }[] = [
    {
      description: 'first request of a window',
      hit: { count: 1, resetMs: 60_000 },
      expected: { 'RateLimit-Policy': '"get-card-cvv";q=100;w=60', RateLimit: '"get-card-cvv";r=99;t=60' },
    },
    {
      description: 'the last allowed request: nothing remains, no Retry-After yet',
      hit: { count: 100, resetMs: 29_001 },
      expected: { 'RateLimit-Policy': '"get-card-cvv";q=100;w=60', RateLimit: '"get-card-cvv";r=0;t=30' },
    },
    {
      description: 'over the limit: Retry-After is the seconds left, rounded up',
      hit: { count: 101, resetMs: 12_300 },
      expected: { 'RateLimit-Policy': '"get-card-cvv";q=100;w=60', RateLimit: '"get-card-cvv";r=0;t=13', 'Retry-After': '13' },
    },
    {
      description: 'over the limit in the last millisecond: Retry-After at least 1',
      hit: { count: 500, resetMs: 1 },
      expected: { 'RateLimit-Policy': '"get-card-cvv";q=100;w=60', RateLimit: '"get-card-cvv";r=0;t=1', 'Retry-After': '1' },
    },
    {
      description: 'over the limit when the window just ended (a racing reset)',
      hit: { count: 101, resetMs: 0 },
      expected: { 'RateLimit-Policy': '"get-card-cvv";q=100;w=60', RateLimit: '"get-card-cvv";r=0;t=0', 'Retry-After': '1' },
    },
  ];
  for (const row of table) {
    it(row.description, function () {
      expect(rateLimitHeaders(quota, row.hit)).to.deep.equal(row.expected);
    });
  }

  it('quotes the quota name as a structured-field string', function () {
    expect(rateLimitHeaders({ name: 'a"b\\c\u00e9', limit: 1, windowSeconds: 1 }, { count: 1, resetMs: 1000 })['RateLimit-Policy']).to.equal('"a\\"b\\\\c?";q=1;w=1');
  });

  it('secondsToReset rounds up and is 0 only when the window is over', function () {
    expect([0, 1, 999, 1000, 1001, 59_999].map((resetMs) => secondsToReset({ count: 1, resetMs }))).to.deep.equal([0, 1, 1, 1, 2, 60]);
  });
});
