import { expect } from 'chai';
import { areaOf, summarise } from '../../../bench/profile-summary';

describe('unit: bench/profile-summary', () => {
  it('puts a frame in its dependency, our folder, Node or V8', () => {
    const cases: Array<[url: string, fn: string, area: string]> = [
      ['file:///work/main/node_modules/express/lib/router/index.js', 'next', 'express'],
      ['file:///work/main/node_modules/@electric-sql/pglite/dist/index.js', 'query', '@electric-sql/pglite'],
      ['file:///work/main/node_modules/express-gateway/node_modules/express/lib/router/index.js', 'next', 'express'],
      ['file:///work/main/dist/policies/proxy/proxy.js', 'answer', 'our policies/'],
      ['node:_http_agent', 'addRequest', 'node'],
      ['', '(garbage collector)', '(garbage collector)'],
      ['', 'writev', '(native)'],
    ];
    for (const [url, fn, area] of cases) expect(areaOf(url, fn), `${url} ${fn}`).to.equal(area);
  });

  it('sums self time by area and function as shares of the busy time, idle left out', () => {
    const frame = (functionName: string, url = '') => ({ functionName, url, lineNumber: 0 });
    const profile = {
      nodes: [
        { id: 1, callFrame: frame('(root)'), children: [2, 5] },
        { id: 5, callFrame: frame('step', 'file:///x/dist/policies/proxy/proxy.js'), children: [3, 4] },
        { id: 2, callFrame: frame('(idle)') },
        { id: 3, callFrame: frame('next', 'file:///x/node_modules/express/lib/router/index.js') },
        { id: 4, callFrame: frame('answer', 'file:///x/dist/policies/proxy/proxy.js') },
      ],
      samples: [2, 3, 3, 3, 4],
      timeDeltas: [5000, 1000, 1000, 1000, 1000],
      startTime: 0,
      endTime: 9000,
    };
    const text = summarise(profile, 5);
    expect(text).to.contain('busy 4 ms of 9 ms profiled');
    expect(text).to.match(/75\.0 %\s+express\n/);
    expect(text).to.match(/25\.0 %\s+our policies\/\n/);
    expect(text).to.match(/75\.0 %\s+next node_modules\/express\/lib\/router\/index\.js:1/);
    expect(text).not.to.contain('(idle)');
    // `step` has no self time but calls express's `next` and `answer`: all of the busy time.
    expect(text).to.match(/by inclusive time[^\n]*\n\s+100\.0 %\s+step dist\/policies\/proxy\/proxy\.js:1\n\s+25\.0 %\s+answer/);
  });
});
