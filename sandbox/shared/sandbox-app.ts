import express, { type Express, type NextFunction, type Request, type Response, type Router } from 'express';
import { FaultBook, faultSpecSchema, type Fault, type FaultSpec } from './faults';
import { RequestLog } from './request-log';
import { SandboxError, upstreamError, type ErrorDetail } from './sandbox-error';
import { compileValidator } from './validation';

/** The three upstream systems the sandboxes stand in for. */
export type SandboxName = 'issuer' | 'processing' | 'accounts';

/** Options shared by every sandbox factory. */
export interface SandboxOptions {
  /**
   * How long a hanging answer (`timeout` fault, `SANDBOX-TIMEOUT` trigger) waits before it
   * finally answers 504 `SANDBOX_TIMEOUT`, unless the client disconnects first. Default 120000 ms.
   */
  hangMs?: number;
  /**
   * Most cards a sandbox keeps (issuer: issued cards; processing: known cards); the oldest is
   * evicted with everything keyed by it. Default `SANDBOX_MAX_CARDS`, else 10,000.
   */
  maxCards?: number;
  /**
   * Most accounts the accounts sandbox keeps; the oldest is evicted with its onboarding id and
   * client id. Default `SANDBOX_MAX_ACCOUNTS`, else 10,000.
   */
  maxAccounts?: number;
}

/** Default of {@link SandboxOptions.hangMs}: well past any sane gateway upstream timeout. */
export const DEFAULT_HANG_MS = 120_000;

/**
 * Default of {@link SandboxOptions.maxCards} and {@link SandboxOptions.maxAccounts}: a card costs
 * the sandboxes about 2 KB of live heap (the issuer's record, the processing system's and its
 * memoised transactions), an account about 1 KB (bench/sandbox-memory.ts), so 10,000 of each
 * bound the sandboxes' state to about 30 MB (`npm run sandbox`: about 170 MB of RSS in all),
 * still far more cards than an integration makes (docs/performance.md, "The sandboxes").
 */
export const DEFAULT_MAX_RECORDS = 10_000;

/**
 * A record cap: the option when given, else the environment variable `envName`, else
 * {@link DEFAULT_MAX_RECORDS}. A value that is not a positive integer is refused at start.
 */
export function recordCap(option: number | undefined, envName: 'SANDBOX_MAX_CARDS' | 'SANDBOX_MAX_ACCOUNTS'): number {
  const raw = option ?? (process.env[envName] ? Number(process.env[envName]) : DEFAULT_MAX_RECORDS);
  if (!(Number.isInteger(raw) && raw > 0)) throw new Error(`${envName} must be a positive integer, got ${String(option ?? process.env[envName])}`);
  return raw;
}

/** Largest request body a sandbox reads. */
const MAX_BODY_BYTES = 1024 * 1024;

/** What a sandbox definition gets to build its routes with. */
export interface SandboxKit {
  hangMs: number;
  /** Answers nothing until the client disconnects or `hangMs` passes (then 504 `SANDBOX_TIMEOUT`). */
  hang(res: Response): void;
}

/** One sandbox: its name, its state reset, and its routes. */
export interface SandboxDefinition {
  name: SandboxName;
  options?: SandboxOptions;
  /** Forgets all domain state (called by `POST /__sandbox/reset`). */
  resetState(): void;
  /** Extra test-only routes mounted under `/__sandbox/` (not recorded, never faulted). */
  control?(router: Router, kit: SandboxKit): void;
  /** The upstream's real API. */
  routes(router: Router, kit: SandboxKit): void;
}

const checkFaultSpec = compileValidator<FaultSpec>(faultSpecSchema);

function hangResponse(res: Response, hangMs: number): void {
  const timer = setTimeout(() => {
    if (res.headersSent || res.destroyed) return;
    const error = upstreamError('SANDBOX_TIMEOUT', `No answer within ${hangMs} ms (sandbox hang)`);
    res.status(error.status).json(error.toBody());
  }, hangMs);
  // The hang must never keep a closed server's process alive, nor outlive its connection.
  timer.unref();
  res.on('close', () => clearTimeout(timer));
}

/** The first value of a query parameter, or `undefined`. */
export function queryParam(req: Request, name: string): string | undefined {
  const value: unknown = req.query[name];
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
  return undefined;
}

/** A query parameter of 1 to `max` (`fallback` when absent or empty); anything else adds its detail to `details`. */
export function positiveInt(req: Request, name: string, fallback: number, max: number, details: ErrorDetail[]): number {
  const raw = queryParam(req, name);
  if (raw === undefined || raw === '') return fallback;
  const value = /^[0-9]+$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= 1 && value <= max)) details.push({ path: `?${name}`, message: `must be an integer from 1 to ${max}` });
  return value;
}

function queryRecord(req: Request): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(req.query)) {
    if (typeof value === 'string') out[name] = value;
    else if (Array.isArray(value)) out[name] = value.filter((v): v is string => typeof v === 'string');
  }
  return out;
}

type BodyProblem = 'too-large' | 'invalid-json';

/** Body problems are remembered per request and answered only after recording and faults. */
const bodyProblems = new WeakMap<Request, BodyProblem>();
/** Size of each request's body as received (the request log truncates large ones). */
const bodySizes = new WeakMap<Request, number>();

/** Reads the body as text and parses it as JSON when there is one; never fails the request itself. */
function readJsonBody(req: Request, _res: Response, next: NextFunction): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) tooLarge = true;
    else chunks.push(chunk);
  });
  req.on('error', next);
  req.on('end', () => {
    const text = Buffer.concat(chunks).toString('utf8');
    bodySizes.set(req, size);
    if (tooLarge) bodyProblems.set(req, 'too-large');
    if (text.trim().length === 0) {
      req.body = undefined;
    } else {
      try {
        req.body = JSON.parse(text) as unknown;
      } catch {
        req.body = text;
        if (!tooLarge) bodyProblems.set(req, 'invalid-json');
      }
    }
    next();
  });
}

function answerFault(fault: Fault, req: Request, res: Response, kit: SandboxKit): void {
  switch (fault.mode) {
    case 'status':
      res.status(fault.status ?? 500).json({
        errorCode: 'SANDBOX_FAULT',
        message: `Injected fault: status ${fault.status ?? 500}`,
      });
      return;
    case 'timeout':
      kit.hang(res);
      return;
    case 'reset':
      // Promise a long body, send a fragment, then drop the connection mid-response.
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': '4096' });
      res.write('{"sandbox":"reset","data":[', () => req.socket.destroy());
      return;
    case 'malformed':
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      res.end('{"sandbox": "malformed", "data": [1, 2, <<this is not JSON>>');
      return;
  }
}

function buildControlRouter(def: SandboxDefinition, faults: FaultBook, log: RequestLog, kit: SandboxKit): Router {
  const router = express.Router();
  router.get('/health', (_req, res) => {
    res.json({ sandbox: def.name, status: 'ok' });
  });
  router.post('/faults', (req, res) => {
    const spec = checkFaultSpec(req.body);
    if (spec.mode === 'status' && spec.status === undefined) {
      throw upstreamError('VALIDATION_ERROR', "Invalid request: /status is required for mode 'status'", [
        { path: '/status', message: "is required for mode 'status'" },
      ]);
    }
    res.status(201).json(faults.add(spec));
  });
  router.get('/faults', (_req, res) => {
    res.json(faults.list());
  });
  router.delete('/faults', (_req, res) => {
    faults.clear();
    res.status(204).end();
  });
  router.get('/requests', (req, res) => {
    res.json(log.list({ method: queryParam(req, 'method'), path: queryParam(req, 'path') }));
  });
  router.delete('/requests', (_req, res) => {
    log.clear();
    res.status(204).end();
  });
  router.post('/reset', (_req, res) => {
    faults.clear();
    log.clear();
    def.resetState();
    res.json({ sandbox: def.name, reset: true });
  });
  def.control?.(router, kit);
  router.use(function unknownControlRoute(req, _res, next) {
    next(upstreamError('ROUTE_NOT_FOUND', `No control route ${req.method} /__sandbox${req.path}`));
  });
  return router;
}

/**
 * Builds a sandbox Express app around a definition. In order: request-id echo, body reading,
 * `/__sandbox/*` control routes, request recording, fault injection, the definition's routes,
 * a 404 and the one error handler that writes `{ errorCode, message }`.
 */
export function createSandboxApp(def: SandboxDefinition): Express {
  const hangMs = def.options?.hangMs ?? DEFAULT_HANG_MS;
  const kit: SandboxKit = { hangMs, hang: (res) => hangResponse(res, hangMs) };
  const faults = new FaultBook();
  const log = new RequestLog();
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');

  app.use(function echoRequestId(req, res, next) {
    const requestId = req.get('x-request-id');
    if (requestId) res.setHeader('x-request-id', requestId);
    next();
  });
  app.use(readJsonBody);
  app.use('/__sandbox', buildControlRouter(def, faults, log, kit));

  app.use(function recordRequest(req, _res, next) {
    const body: unknown = req.body;
    log.record({
      method: req.method,
      path: req.path,
      query: queryRecord(req),
      body: body === undefined ? null : body,
      requestId: req.get('x-request-id') ?? null,
      headers: { ...req.headers },
      at: new Date().toISOString(),
      bodyBytes: bodySizes.get(req) ?? 0,
    });
    next();
  });
  app.use(function injectFault(req, res, next) {
    const fault = faults.take(req.method, req.path, () => (typeof req.body === 'string' ? req.body : JSON.stringify(req.body ?? null)));
    if (fault) answerFault(fault, req, res, kit);
    else next();
  });
  app.use(function refuseUnreadableBody(req, _res, next) {
    const problem = bodyProblems.get(req);
    if (problem === 'too-large') next(upstreamError('PAYLOAD_TOO_LARGE', 'Request body exceeds 1 MiB'));
    else if (problem === 'invalid-json') next(upstreamError('INVALID_JSON', 'Request body is not valid JSON'));
    else next();
  });

  const routes = express.Router();
  def.routes(routes, kit);
  app.use(routes);

  app.use(function routeNotFound(req, _res, next) {
    next(upstreamError('ROUTE_NOT_FOUND', `No route ${req.method} ${req.path} on the ${def.name} sandbox`));
  });
  app.use(function writeError(err: unknown, _req: Request, res: Response, _next: NextFunction) {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const error =
      err instanceof SandboxError
        ? err
        : upstreamError('INTERNAL_ERROR', err instanceof Error ? err.message : 'Unexpected sandbox error');
    res.status(error.status).json(error.toBody());
  });
  return app;
}
