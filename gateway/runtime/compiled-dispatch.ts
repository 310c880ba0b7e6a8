import type { Request, RequestHandler, Response } from 'express';
import { writeAnswer } from '../http/answer';
import { EVERY_METHOD, type ApiEndpoint, type RouteModel } from '../route-model';
import { RouteTrie, type PathHit } from './route-trie';

// The compiled engine (docs/architecture.md, "Request path"): every route of a configuration in one
// trie (route-trie.ts), each pipeline a flat array of steps, run by one small loop. It keeps what
// express-gateway's routing does, to the byte (test/e2e/compiled-dispatch.test.ts compares the two):
//
// - the routes in the order express-gateway mounts them: grouped by host (in the order each host
//   first appears), then in declaration order, one route per mount path and method; the first that
//   matches the path and serves the method runs, and a pipeline that ends without answering
//   (`next()`) hands the request to the next one, as express's router does;
// - only the route shapes the boot's rules accept (gateway/policy-audit/boot-rules.ts): explicit
//   paths of static and `:name` segments (an operation's path), each with its methods listed. A
//   `pathRegex`, a wildcard, an optional parameter or an entry answering every method, which the
//   rules refuse, fails the build;
// - express's router's rules: a path matched case-insensitively with an optional trailing slash,
//   parameters decoded (a malformed one is express's 400 error), HEAD served by GET routes, and
//   OPTIONS answered with the methods of the routes matching the path (`Allow`) when none serves it;
// - a route no pipeline serves answers express-gateway's plain 404; a request no route serves goes
//   on to the partner app's problem 404.
//
// Nothing here is express-gateway's: the steps are built by the runtime (express-gateway.ts) with
// express-gateway's policy registry and condition implementations.

/** One step of a compiled pipeline: a policy's middleware (its condition checked first, if any). */
export type Step = (req: Request, res: Response, next: (err?: unknown) => void) => void;

/** A pipeline, compiled: its steps in order, and what must be set up on a request before them. */
export interface CompiledPipeline {
  steps: readonly Step[];
  /** Called when a route of this pipeline starts (express-gateway's request context, only for the conditions that need it). */
  enter?(req: Request, res: Response, endpoint: ApiEndpoint): void;
}

/** What express sets as `req.route` (read for the access log's `route` and the metrics label: its `path`). */
interface RouteInfo {
  path: string;
  methods: Record<string, boolean>;
}

/** One route as express's router holds it: a mount path, one method, a pipeline. */
interface MountedRoute {
  group: number;
  /** Lower-case. */
  method: string;
  endpoint: ApiEndpoint;
  pipeline: CompiledPipeline | undefined;
  route: RouteInfo;
  /** express's `Route._options()`, for an OPTIONS answer. */
  allow: readonly string[];
}

interface HostGroup {
  /** undefined: every host. */
  hostname?: RegExp;
}

/**
 * express-gateway's grouping of routes by host (`processApiEndpoints`), and their mount paths and
 * methods. Throws for a shape the boot's rules refuse (no explicit path, a `pathRegex`, every method).
 */
function mountedRoutes(model: RouteModel, pipelines: ReadonlyMap<string, CompiledPipeline>): { groups: HostGroup[]; routes: MountedRoute[]; paths: string[] } {
  const byHost = new Map<string, { isRegex: boolean; entries: { endpoint: ApiEndpoint; paths: readonly string[]; methods: readonly string[] }[] }>();
  for (const route of model.routes) {
    for (const entry of route.endpoint.entries) {
      const refused = entry.pathRegex !== undefined ? 'a pathRegex' : entry.paths.length === 0 ? 'no path' : entry.methods.includes(EVERY_METHOD) ? 'every method' : undefined;
      if (refused) throw new Error(`apiEndpoint "${route.endpoint.name}" has ${refused}: not a route shape the compiled dispatch serves (the boot's rules refuse it)`);
      const isRegex = Boolean(entry.hostRegex);
      const host = isRegex ? entry.hostRegex! : entry.host || '*';
      let group = byHost.get(host);
      if (!group) byHost.set(host, (group = { isRegex, entries: [] }));
      group.entries.push({ endpoint: route.endpoint, paths: entry.paths, methods: entry.methods });
    }
  }
  const served = new Map(model.routes.map((r) => [r.endpoint.name, r.pipeline ? pipelines.get(r.pipeline.name) : undefined]));
  const groups: HostGroup[] = [];
  const routes: MountedRoute[] = [];
  const paths: string[] = [];
  for (const [host, { isRegex, entries }] of byHost) {
    const group = groups.length;
    groups.push(host === '*' && !isRegex ? {} : { hostname: hostRegExp(host, isRegex) });
    for (const { endpoint, paths: mountPaths, methods } of entries) {
      for (const path of mountPaths) {
        for (const written of methods) {
          const method = written.toLowerCase();
          const allow = method === 'get' ? ['GET', 'HEAD'] : [method.toUpperCase()];
          routes.push({ group, method, endpoint, pipeline: served.get(endpoint.name), route: Object.freeze({ path, methods: { [method]: true } }), allow });
          paths.push(path);
        }
      }
    }
  }
  return { groups, routes, paths };
}

/**
 * vhost's hostname pattern (express-gateway mounts a host's routes with `vhost`): a `host` escaped,
 * each `*` one label; a `hostRegex` as the operator wrote it.
 */
function hostRegExp(host: string, isRegex: boolean): RegExp {
  let source = isRegex ? host : host.replace(/([.+?^=!:${}()|[\]/\\])/g, '\\$1').replace(/\*/g, '([^.]+)');
  if (source[0] !== '^') source = `^${source}`;
  if (!/(?:^|[^\\])(?:\\\\)*\$$/.test(source)) source += '$';
  return new RegExp(source, 'i');
}

/** vhost's hostname of a request: the Host header without its port. */
function hostnameOf(req: Request): string | undefined {
  const host = req.headers.host;
  if (!host) return undefined;
  const offset = host[0] === '[' ? host.indexOf(']') + 1 : 0;
  const index = host.indexOf(':', offset);
  return index !== -1 ? host.substring(0, index) : host;
}

/** express's `decode_param`: a malformed value is a 400 error. */
function decodeParam(value: string | undefined): string | undefined {
  if (typeof value !== 'string' || value.length === 0) return value;
  try {
    return decodeURIComponent(value);
  } catch (err) {
    if (err instanceof URIError) {
      err.message = `Failed to decode param '${value}'`;
      Object.assign(err, { status: 400, statusCode: 400 });
    }
    throw err;
  }
}

function paramsOf(hit: PathHit): Record<string, string> {
  const params: Record<string, string> = {};
  for (let i = 0; i < hit.names.length; i++) params[hit.names[i]!] = decodeParam(hit.values[i]) as string;
  return params;
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const parseUrl = require('parseurl') as (req: Request) => { pathname?: string | null } | undefined;

function pathnameOf(req: Request): string | undefined {
  try {
    return parseUrl(req)?.pathname ?? undefined;
  } catch {
    return undefined;
  }
}

/** Runs a pipeline's steps; `done()` when one hands on without answering, `done(err)` on an error. */
function runSteps(steps: readonly Step[], req: Request, res: Response, done: (err?: unknown) => void): void {
  let i = 0;
  const next = (err?: unknown): void => {
    if (err && err !== 'route') {
      // express's router: an error skips every remaining step; 'router' leaves the pipeline.
      done(err === 'router' ? undefined : err);
      return;
    }
    const step = steps[i++];
    if (step === undefined) {
      done();
      return;
    }
    try {
      step(req, res, next);
    } catch (thrown) {
      next(thrown);
    }
  };
  next();
}

/**
 * The request handler of a compiled configuration: one trie lookup, then the steps of the route's
 * pipeline. `pipelines` holds each pipeline of `model` compiled (by name). Immutable: a hot reload
 * builds another and swaps the reference; a request keeps the one it started on. Throws for a route
 * shape the boot's rules refuse.
 */
export function compiledDispatch(model: RouteModel, pipelines: ReadonlyMap<string, CompiledPipeline>): RequestHandler {
  const { groups, routes, paths } = mountedRoutes(model, pipelines);
  const trie = new RouteTrie(paths);

  return function compiledPipelines(req, res, out) {
    const pathname = pathnameOf(req);
    if (pathname === undefined) return out();
    const hits = trie.match(pathname);
    if (hits.length === 0) return out();
    const method = req.method;
    const lower = method.toLowerCase();
    const parentParams = req.params;
    let h = 0;
    let group = -1;
    let hostMatches = false;
    let allow: string[] | undefined;

    const leave = (err?: unknown): void => {
      req.params = parentParams;
      out(err);
    };

    // Ends a host's routes: express answers OPTIONS there when a route matched the path.
    const endGroup = (): boolean => {
      if (allow === undefined || allow.length === 0) return false;
      const body = allow.join(',');
      allow = undefined;
      try {
        writeAnswer(res, { status: res.statusCode, headers: { Allow: body }, bytes: body, contentType: 'text/html; charset=utf-8' });
      } catch (err) {
        leave(err);
      }
      return true;
    };

    const resume = (err?: unknown): void => {
      if (err) {
        leave(err);
        return;
      }
      while (h < hits.length) {
        const hit = hits[h++]!;
        const mounted = routes[hit.index]!;
        if (mounted.group !== group) {
          if (hostMatches && endGroup()) return;
          group = mounted.group;
          const hostname = groups[group]!.hostname;
          hostMatches = hostname === undefined || (() => {
            const name = hostnameOf(req);
            return name !== undefined && hostname.test(name);
          })();
        }
        if (!hostMatches) continue;
        let params: Record<string, string>;
        try {
          params = paramsOf(hit);
        } catch (decodeError) {
          leave(decodeError);
          return;
        }
        const serves = mounted.method === lower || (lower === 'head' && mounted.method === 'get');
        if (!serves) {
          if (method === 'OPTIONS') {
            allow ??= [];
            for (const m of mounted.allow) if (!allow.includes(m)) allow.push(m);
          }
          if (method !== 'HEAD') continue;
          // express's router takes a route matching the path for HEAD whatever its method; the
          // route then runs nothing and hands on (req.route stays set, as express leaves it).
          req.route = mounted.route;
          req.params = params;
          continue;
        }
        req.route = mounted.route;
        req.params = params;
        const pipeline = mounted.pipeline;
        if (pipeline === undefined) {
          // express-gateway: an apiEndpoint no pipeline serves.
          writeAnswer(res, { status: 404, bytes: 'Not Found', contentType: 'text/plain; charset=utf-8' });
          return;
        }
        req.apiEndpointName = mounted.endpoint.name;
        pipeline.enter?.(req, res, mounted.endpoint);
        runSteps(pipeline.steps, req, res, resume);
        return;
      }
      if (hostMatches && method === 'OPTIONS' && endGroup()) return;
      leave();
    };
    resume();
  };
}
