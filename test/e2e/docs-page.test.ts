import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { findChromium } from '../support/browser';
import { sharedGateway, type Gateway } from '../support/gateway-process';

const OUTPUT_DIR = path.resolve(__dirname, '..', '..', '..', 'test-output');

type Json = Record<string, any>;

describe('e2e: the API reference page (GET /api/partner/docs, Redoc, headless Chromium)', function () {
  this.timeout(180_000);
  let gateway: Gateway;
  let document: Json;

  before(async function () {
    gateway = await sharedGateway();
    document = (await (await fetch(`${gateway.baseUrl}/api/partner/openapi.json`)).json()) as Json;
  });


  it('serves the page without a token, under a Content-Security-Policy that allows only this origin', async function () {
    const response = await fetch(`${gateway.baseUrl}/api/partner/docs`);
    expect(response.status).to.equal(200);
    expect(response.headers.get('content-type')).to.match(/^text\/html/);
    const csp = response.headers.get('content-security-policy')!;
    const directives = Object.fromEntries(csp.split(';').map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name, values]));
    expect(directives['default-src']).to.deep.equal(["'none'"]);
    expect(directives['script-src']).to.deep.equal(["'self'"]);
    expect(directives['connect-src']).to.deep.equal(["'self'"]);
    expect(directives['worker-src']).to.deep.equal(['blob:']);
    expect(directives['frame-ancestors']).to.deep.equal(["'none'"]);
    for (const values of Object.values(directives)) for (const value of values) expect(value).to.not.match(/^https?:|\*/);
    const html = await response.text();
    expect(html).to.not.match(/https?:\/\//);
    expect(html).to.not.match(/<script>/);
    expect(html).to.include('<redoc spec-url="/api/partner/openapi.json"');
  });

  it('serves the Redoc bundle from the gateway (cacheable) and refuses any other asset', async function () {
    const bundle = await fetch(`${gateway.baseUrl}/api/partner/docs?asset=redoc.standalone.js`);
    expect(bundle.status).to.equal(200);
    expect(bundle.headers.get('content-type')).to.match(/^application\/javascript/);
    expect(bundle.headers.get('cache-control')).to.equal('public, max-age=86400');
    const served = await bundle.text();
    const shipped = fs.readFileSync(require.resolve('redoc/bundles/redoc.standalone.js'), 'utf8');
    // The same bundle, but for Redocly's CDN logo, pointed at an empty data: image (docs/openapi.md).
    expect(served).to.not.include('cdn.redoc.ly');
    expect(served).to.equal(shipped.replace('https://cdn.redoc.ly/redoc/logo-mini.svg', 'data:,'));
    const unknown = await fetch(`${gateway.baseUrl}/api/partner/docs?asset=../../package.json`);
    expect(unknown.status).to.equal(404);
    expect(((await unknown.json()) as Json).code).to.equal('not_found');
  });

  describe('in Chromium', function () {
    let context: BrowserContext;
    let page: Page;
    let userDataDir: string;
    const requested: string[] = [];
    const problems: string[] = [];

    before(async function () {
      // Fails, never skips: without a browser the page is untested (findChromium names what is missing).
      const browser = await findChromium();
      userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-chromium-'));
      context = await chromium.launchPersistentContext(userDataDir, {
        executablePath: browser.executablePath,
        headless: true,
        args: browser.args,
        viewport: { width: 1440, height: 900 },
      });
      page = context.pages()[0] ?? (await context.newPage());
      page.on('request', (request) => requested.push(request.url()));
      page.on('console', (message) => {
        if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) problems.push(`console ${message.type()}: ${message.text()}`);
      });
      page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
      await page.goto(`${gateway.baseUrl}/api/partner/docs`, { waitUntil: 'load' });
      // Redoc has rendered when the operations of the document are in its menu and middle panel.
      await page.waitForSelector('[data-section-id^="operation/"]', { timeout: 60_000 });
      await page.waitForLoadState('networkidle');
    });

    after(async function () {
      await context?.close();
      if (userDataDir) fs.rmSync(userDataDir, { recursive: true, force: true });
    });

    it('renders every operation of the document (by operationId and summary)', async function () {
      const operations = Object.values<Json>(document.paths).flatMap((item) => Object.values<Json>(item));
      const sections = await page.$$eval('[data-section-id^="operation/"]', (elements) => elements.map((e) => e.getAttribute('data-section-id')));
      const rendered = new Set(sections.map((id) => id!.replace(/^.*operation\//, '')));
      // textContent: the operations of collapsed tags are in the menu, hidden.
      const menu = (await page.locator('.menu-content').textContent()) ?? '';
      for (const op of operations) {
        expect(rendered.has(op.operationId), `section of ${op.operationId}`).to.equal(true);
        expect(menu, `menu entry of ${op.operationId}`).to.include(op.summary);
      }
      expect(operations.length).to.be.greaterThan(40);
      // The security scheme (ES512 bearer JWT) is rendered in the Authentication section.
      const scheme = page.locator(`[data-section-id="section/Authentication/${Object.keys(document.components.securitySchemes)[0]}"]`);
      expect(await scheme.textContent()).to.include('ES512').and.include('P-521');
      expect(await page.title()).to.equal('Partner Card-Management API reference');
    });

    it('loads nothing from another origin and breaks no CSP rule', function () {
      const origin = new URL(gateway.baseUrl).origin;
      const foreign = requested.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith('blob:') && !url.startsWith('data:'));
      expect(foreign, 'requests to other origins').to.deep.equal([]);
      expect(requested).to.include(`${origin}/api/partner/openapi.json`);
      expect(requested.filter((url) => url.startsWith(`${origin}/api/partner/docs?asset=redoc.standalone.js&v=`))).to.have.length(1);
      expect(problems, problems.join('\n')).to.deep.equal([]);
    });

    it('saves screenshots under test-output/', async function () {
      fs.mkdirSync(OUTPUT_DIR, { recursive: true });
      const top = path.join(OUTPUT_DIR, 'docs-page.png');
      await page.screenshot({ path: top });
      await page.locator('[data-section-id$="operation/issue-virtual-card"]').first().evaluate((section) => section.scrollIntoView({ block: 'start' }));
      const operation = path.join(OUTPUT_DIR, 'docs-page-operation.png');
      await page.screenshot({ path: operation });
      for (const file of [top, operation]) expect(fs.statSync(file).size).to.be.greaterThan(10_000);
    });
  });
});
