import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import express, { type Request } from 'express';
import { expect } from 'chai';
import { checkGatewayConfig } from '../../../../gateway/boot/config-guards';
import { OPERATIONS, operationNamed, type HandledOperationName, type Operation } from '../../../../gateway/catalog';
import type { HandlerFactory } from '../../../../gateway/handlers';
import { factsRequiredBy, handlerFactsReader, runWithFacts } from '../../../../gateway/handlers/context';
import { getCardSpendControls, getSpendControls } from '../../../../gateway/handlers/spend-controls';
import { getIndividual, listIndividuals } from '../../../../gateway/handlers/individuals';
import { listCards } from '../../../../gateway/handlers/cards-list';
import { setCardEmbossName } from '../../../../gateway/handlers/card-operations';
import { setCardNickname } from '../../../../gateway/handlers/card-local';
import { MissingFactError, OWNERSHIP, PARTNER, UPSTREAM_OPERATION, VALIDATED_BODY, VALIDATED_QUERY, type OwnedResource } from '../../../../gateway/http/request-facts';
import { problemHandler } from '../../../../gateway/http/problem';
import { createLogger } from '../../../../gateway/logging/logger';
import type { Partner } from '../../../../gateway/partners/partner-store';
import { readRouteModel, type Pipeline } from '../../../../gateway/route-model';
import { POLICIES } from '../../../../policies';
import operationPolicy from '../../../../policies/operation';
import type { GatewayServices } from '../../../../policies';
import { changedConfig, guardContext, shippedConfig, SYSTEM_CONFIG, type Yaml } from '../policy-audit/shipped-config';

const PARTNER_ROW: Partner = { _id: 'a'.repeat(24), name: 'p', issuer: 'https://p.example', status: 'active', processingEnabled: false, createdAt: '', updatedAt: '' };
const CARD: OwnedResource = { kind: 'card', id: '5355701234567890abc', partnerId: PARTNER_ROW._id, individualId: 'b'.repeat(24) };

/** A request as the steps before the operation leave it. */
function requestWith(facts: Partial<Pick<Request, 'partner' | 'ownership' | 'validatedBody' | 'validatedQuery' | 'upstreamOperation'>>): Request {
  return { requestId: 'r1', ...facts } as Request;
}

// Compile-time: a handler asking for a fact its entry does not imply is refused where it would be
// registered (HandlerTable's slot types). These lines fail the build if the compiler accepted them.
// @ts-expect-error an individual's route gives the handler no card's owner
export const cardOwnerOnIndividualRoute: HandlerFactory<(typeof OPERATIONS)['get-individual']> = getCardSpendControls;
// @ts-expect-error a public route gives the handler no partner
export const partnerOnPublicRoute: HandlerFactory<(typeof OPERATIONS)['health-check']> = getSpendControls;
export const individualOnIndividualRoute: HandlerFactory<(typeof OPERATIONS)['get-individual']> = getIndividual;
// @ts-expect-error the nickname route's validated body is { nickname }, not the emboss name's
export const embossNameBodyOnNicknameRoute: HandlerFactory<(typeof OPERATIONS)['set-card-nickname']> = setCardEmbossName;
export const nicknameBodyOnNicknameRoute: HandlerFactory<(typeof OPERATIONS)['set-card-nickname']> = setCardNickname;
// @ts-expect-error a route without a query schema gives the handler no query
export const queryOnRouteWithoutOne: HandlerFactory<(typeof OPERATIONS)['me']> = listIndividuals;
// @ts-expect-error the event log's validated query has no page
export const pagedQueryOnEventLog: HandlerFactory<(typeof OPERATIONS)['list-events']> = listCards;
export const pagedQueryOnPagedRoute: HandlerFactory<(typeof OPERATIONS)['list-individuals']> = listIndividuals;

describe('unit: the handler context (gateway/handlers/context.ts)', function () {
  describe('handlerFactsReader', function () {
    const lock = handlerFactsReader('lock-card', OPERATIONS['lock-card']);

    it("reads the facts its entry implies: the partner, the card of the path, the validated body, and the orchestration's upstream operation", function () {
      const req = requestWith({ partner: PARTNER_ROW, ownership: CARD, validatedBody: { reason: 'x' } });
      const facts = lock(req);
      expect(facts.partner).to.equal(PARTNER_ROW);
      expect(facts.ownership).to.equal(CARD);
      expect(facts.body).to.deep.equal({ reason: 'x' });
      // Without a claimed key: the request's own operation id, kept on the request for any later reader.
      expect(facts.operation.id).to.match(/^[0-9a-f]{24}$/);
      expect(facts.operation.resumed).to.equal(false);
      expect(req.upstreamOperation).to.equal(facts.operation);
    });

    it("takes the claimed Idempotency-Key's upstream operation as it is", function () {
      const claimed = { id: 'c'.repeat(24), resumed: true };
      expect(lock(requestWith({ partner: PARTNER_ROW, ownership: CARD, validatedBody: {}, upstreamOperation: claimed })).operation).to.equal(claimed);
    });

    const missing: { description: string; req: Request; fact: string; by: string }[] = [
      { description: 'no partner (no es512-jwt step)', req: requestWith({ ownership: CARD, validatedBody: {} }), fact: 'partner', by: 'es512-jwt' },
      { description: 'no owned resource (no ownership step)', req: requestWith({ partner: PARTNER_ROW, validatedBody: {} }), fact: 'ownership', by: 'ownership' },
      { description: 'an owned resource of another kind', req: requestWith({ partner: PARTNER_ROW, ownership: { ...CARD, kind: 'individual' }, validatedBody: {} }), fact: 'ownership', by: 'ownership' },
      { description: 'no validated body (no validate step)', req: requestWith({ partner: PARTNER_ROW, ownership: CARD }), fact: 'body', by: 'validate' },
    ];
    for (const { description, req, fact, by } of missing) {
      it(`refuses to run the handler with ${description}`, function () {
        expect(() => lock(req)).to.throw(MissingFactError, `the handler of operation "lock-card" needs the ${fact} fact, which no ${by} step before it provided`);
      });
    }

    it('reads the validated query where the entry declares a query schema, and refuses to run the handler without it', function () {
      const list = handlerFactsReader('list-individuals', OPERATIONS['list-individuals']);
      const query = { page: 2, limit: 20 };
      const facts = list(requestWith({ partner: PARTNER_ROW, validatedQuery: query }));
      expect(facts.query).to.equal(query);
      expect(Object.keys(facts)).to.deep.equal(['partner', 'query']);
      expect(() => list(requestWith({ partner: PARTNER_ROW }))).to.throw(
        MissingFactError,
        'the handler of operation "list-individuals" needs the query fact, which no validate step before it provided'
      );
    });

    it('asks a public operation for nothing, and a local one for the partner only', function () {
      expect(Object.keys(handlerFactsReader('health-check', OPERATIONS['health-check'])(requestWith({})) as object)).to.deep.equal([]);
      const facts = handlerFactsReader('me', OPERATIONS.me)(requestWith({ partner: PARTNER_ROW }));
      expect(Object.keys(facts)).to.deep.equal(['partner']);
      expect(facts.partner).to.equal(PARTNER_ROW);
    });

    it("makes an orchestration's own upstream operation only when its handler reads it", function () {
      const req = requestWith({ partner: PARTNER_ROW, ownership: CARD, validatedBody: {} });
      const facts = lock(req);
      expect(req.upstreamOperation).to.equal(undefined);
      expect(facts.operation).to.equal(req.upstreamOperation);
      expect(facts.operation).to.equal(facts.operation);
    });
  });

  describe('the operation policy', function () {
    it('answers the 500 problem and logs the error when a fact is missing, without running the handler', async function () {
      const lines: string[] = [];
      const log = createLogger({ level: 'info', destination: new Writable({ write: (chunk: Buffer, _enc, done) => (lines.push(chunk.toString()), done()) }) });
      let ran = false;
      const touched = async () => {
        ran = true;
        return { data: [] };
      };
      const services = { partners: { tenants: touched }, individuals: { list: touched } } as unknown as GatewayServices;
      const app = express();
      app.use((req, _res, next) => ((req.requestId = 'missing-fact'), next()));
      app.get('/me', operationPolicy.policy({ name: 'me' }, { services, gatewayConfig: {} }));
      app.use(problemHandler(log));
      const server = http.createServer(app);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/me`);
        expect(response.status).to.equal(500);
        expect(response.headers.get('content-type')).to.match(/^application\/problem\+json/);
        expect(((await response.json()) as { code: string }).code).to.equal('internal_error');
        expect(ran).to.equal(false);
        const logged = lines.map((line) => JSON.parse(line) as { level: string; msg: string; requestId: string; err?: { message: string } });
        const failure = logged.find((l) => l.msg === 'request failed');
        expect(failure, lines.join('')).to.not.equal(undefined);
        expect(failure!.level).to.equal('error');
        expect(failure!.requestId).to.equal('missing-fact');
        expect(failure!.err!.message).to.contain('the handler of operation "me" needs the partner fact');
      } finally {
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    });

    it('runs the handler with its facts when the steps before it provided them, and writes the answer it returns', async function () {
      const reader = handlerFactsReader('me', OPERATIONS.me);
      let seen: unknown;
      const handler = runWithFacts<{ partner: Partner }>(async ({ partner }) => {
        seen = partner;
        return { status: 201, body: { partnerId: partner._id }, headers: { Location: '/somewhere' } };
      }, reader);
      const app = express();
      app.use((req, _res, next) => ((req.partner = PARTNER_ROW), next()));
      app.get('/me', handler);
      const errors: unknown[] = [];
      app.use(((err, _req, res, _next) => (errors.push(err), res.status(500).end())) as express.ErrorRequestHandler);
      const server = http.createServer(app);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/me`);
        expect(errors).to.deep.equal([]);
        expect(seen).to.equal(PARTNER_ROW);
        expect(response.status).to.equal(201);
        expect(response.headers.get('location')).to.equal('/somewhere');
        expect(response.headers.get('content-type')).to.equal('application/json; charset=utf-8');
        expect(await response.text()).to.equal(JSON.stringify({ partnerId: PARTNER_ROW._id }));
      } finally {
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    });
  });

  describe('the boot guards make a missing fact unreachable', function () {
    /** Every pipeline of the shipped config ending in a handled operation, with its entry. */
    function handledPipelines(config: Yaml): { pipeline: Pipeline; name: HandledOperationName; entry: Operation }[] {
      const found: { pipeline: Pipeline; name: HandledOperationName; entry: Operation }[] = [];
      for (const pipeline of readRouteModel(config).pipelines.values()) {
        const last = pipeline.steps[pipeline.steps.length - 1]!;
        const name = last.actions[0]!.params.name as HandledOperationName;
        const entry = operationNamed(name)!;
        if (entry.ends.kind !== 'upstream') found.push({ pipeline, name, entry });
      }
      return found;
    }

    it('each fact key is declared by the policy that provides it', function () {
      for (const key of [PARTNER, OWNERSHIP, VALIDATED_BODY, VALIDATED_QUERY, UPSTREAM_OPERATION]) {
        const providers = POLICIES.filter((p) => p.provides?.includes(key)).map((p) => p.name);
        expect(providers, key.name).to.deep.equal([key.providedBy]);
      }
    });

    it("reads the owned resource the entry's type names: no entry checks two resources of its path (FactsOf takes every path check, the reader the first)", function () {
      let withPathCheck = 0;
      for (const [name, entry] of Object.entries(OPERATIONS) as [string, Operation][]) {
        const pathChecks = (entry.ownership ?? []).filter((check) => check.in === 'path');
        expect(pathChecks.length, name).to.be.at.most(1);
        if (pathChecks.length === 1) {
          withPathCheck++;
          const required = factsRequiredBy(entry).find(({ key }) => key === OWNERSHIP);
          expect(required?.step, name).to.deep.equal({ resource: pathChecks[0]!.resource, param: pathChecks[0]!.param });
        }
      }
      expect(withPathCheck).to.be.greaterThan(20);
    });

    it('every handled pipeline of the shipped config runs, before its operation and unconditionally, the step providing each fact its handler needs', function () {
      const pipelines = handledPipelines(shippedConfig());
      expect(pipelines.length).to.be.greaterThan(50);
      for (const { pipeline, name, entry } of pipelines) {
        const before = pipeline.steps.slice(0, -1);
        for (const { key, step } of factsRequiredBy(entry)) {
          const provided = before.some(
            (s) =>
              s.policy === key.providedBy &&
              s.actions.some(
                (a) =>
                  a.unconditional &&
                  (step === undefined ||
                    ('resource' in step
                      ? a.params.resource === step.resource && (a.params.param ?? 'id') === step.param && (a.params.in ?? 'path') === 'path'
                      : 'body' in step
                        ? a.params.body === step.body
                        : a.params.query === step.query))
              )
          );
          expect(provided, `${name}: ${key.name} from ${key.providedBy}`).to.equal(true);
        }
      }
    });

    it("refuses the config when the step providing a handler's fact is taken out of its pipeline (each kind of requirement once)", function () {
      this.timeout(30000);
      const shipped = shippedConfig();
      const seen = new Set<string>();
      let checked = 0;
      for (const { pipeline, name, entry } of handledPipelines(shipped)) {
        for (const { key, step } of factsRequiredBy(entry)) {
          // One pipeline per requirement (fact and what its step must say): the guards' rules read the entry, not the pipeline's name.
          const requirement = `${key.name} ${JSON.stringify(step ?? {})}`;
          if (seen.has(requirement)) continue;
          seen.add(requirement);
          const config = changedConfig((c) => {
            c.pipelines[pipeline.name].policies = (c.pipelines[pipeline.name].policies as Yaml[]).filter((s) => !(key.providedBy in s));
          });
          const refusals = checkGatewayConfig(readRouteModel(config), SYSTEM_CONFIG, guardContext());
          expect(refusals.length, `${name} without its ${key.providedBy} step`).to.be.greaterThan(0);
          expect(refusals.map((r) => `${r.where}: ${r.message}`).join('\n'), `${name} without its ${key.providedBy} step`).to.contain(`"${name}"`);
          checked++;
        }
      }
      // The partner, the six owned kinds of a path, and each body and query schema a handler reads.
      expect(checked).to.be.greaterThan(20);
      const queries = [...seen].filter((requirement) => requirement.startsWith('query '));
      expect(queries.sort()).to.deep.equal(
        ['cards-list-query', 'events-query', 'individual-cards-query', 'pagination-query', 'tokens-search-query', 'transactions-query', 'transactions-search-query', 'webhook-deliveries-query'].map(
          (schema) => `query ${JSON.stringify({ query: schema })}`
        )
      );
    });
  });
});
