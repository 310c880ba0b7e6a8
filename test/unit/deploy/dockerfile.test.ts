import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import YAML from 'yaml';
import { ROOT, settingsEnvNames } from './settings-env';

/** One Dockerfile instruction, continuation lines joined. */
interface Instruction {
  keyword: string;
  args: string;
  stage: string;
}

function parseDockerfile(text: string): Instruction[] {
  const instructions: Instruction[] = [];
  let stage = '';
  let pending = '';
  for (const raw of text.split('\n')) {
    if (pending === '' && /^\s*(#|$)/.test(raw)) continue;
    if (/^\s*#/.test(raw)) continue; // a comment inside a continued instruction
    pending += raw.replace(/\\$/, ' ');
    if (raw.endsWith('\\')) continue;
    const match = /^\s*([A-Za-z]+)\s+(.*)$/.exec(pending);
    pending = '';
    if (!match) continue;
    const keyword = match[1].toUpperCase();
    const args = match[2].trim();
    if (keyword === 'FROM') stage = /\bAS\s+(\S+)/i.exec(args)?.[1] ?? args;
    instructions.push({ keyword, args, stage });
  }
  return instructions;
}

/** `["a", "b"]` (exec form) or `a b` (shell form). */
function words(args: string): string[] {
  return args.startsWith('[') ? (JSON.parse(args) as string[]) : args.split(/\s+/);
}

/** Whether a .dockerignore pattern list excludes a path (enough of Docker's matching for our patterns). */
function ignored(patterns: string[], file: string): boolean {
  let excluded = false;
  for (const raw of patterns) {
    const negate = raw.startsWith('!');
    const pattern = negate ? raw.slice(1) : raw;
    const regex = new RegExp(
      `^${pattern
        .replace(/[.+^${}()|[\]\\]/g, '\\$&')
        .replace(/\*\*\//g, '(.*/)?')
        .replace(/\*\*/g, '.*')
        .replace(/\*/g, '[^/]*')
        .replace(/\?/g, '[^/]')}(/.*)?$`
    );
    if (regex.test(file)) excluded = !negate;
  }
  return excluded;
}

/**
 * Folders of tsconfig.json's include that the image does not need (development only). A new
 * source folder must be copied by the build stage or listed here: the test says which.
 */
const NOT_SHIPPED = ['test', 'bench', 'examples', 'sdk/src'];

describe('unit: Dockerfile and .dockerignore', function () {
  const instructions = parseDockerfile(fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8'));
  const dockerignore = fs
    .readFileSync(path.join(ROOT, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  const stages = instructions.filter((i) => i.keyword === 'FROM').map((i) => i.stage);
  const runtime = stages[stages.length - 1];
  const inStage = (stage: string, keyword: string) => instructions.filter((i) => i.stage === stage && i.keyword === keyword);
  const copies = instructions
    .filter((i) => i.keyword === 'COPY')
    .map((i) => {
      const parts = words(i.args);
      const from = parts.find((p) => p.startsWith('--from='))?.slice('--from='.length);
      const rest = parts.filter((p) => !p.startsWith('--'));
      return { stage: i.stage, from, sources: rest.slice(0, -1), destination: rest[rest.length - 1] };
    });
  const env = new Map<string, string>();
  for (const i of inStage(runtime, 'ENV')) for (const [, name, value] of i.args.matchAll(/([A-Z_][A-Z0-9_]*)=(\S+)/g)) env.set(name, value);

  it('is multi-stage: the runtime stage takes only other stages\' results and the files it needs', function () {
    expect(stages.length).to.be.at.least(2);
    for (const copy of copies.filter((c) => c.from !== undefined)) expect(stages, `COPY --from=${copy.from}`).to.include(copy.from);
    const runs = inStage(runtime, 'RUN').map((i) => i.args).join('\n');
    expect(runs, 'no npm install in the runtime stage').to.not.match(/npm (ci|install)/);
    const deps = copies.find((c) => c.stage === runtime && c.sources.includes('/app/node_modules'));
    expect(deps, 'node_modules comes from a stage').to.not.equal(undefined);
    const depsRuns = inStage(deps!.from!, 'RUN').map((i) => i.args).join('\n');
    expect(depsRuns, 'production dependencies only').to.match(/npm ci[^\n]*--omit=dev/);
  });

  it('copies sources that exist and that .dockerignore lets through', function () {
    for (const copy of copies.filter((c) => c.from === undefined)) {
      for (const source of copy.sources) {
        expect(fs.existsSync(path.join(ROOT, source)), `COPY ${source}`).to.equal(true);
        expect(ignored(dockerignore, source), `COPY ${source} is not excluded by .dockerignore`).to.equal(false);
      }
    }
  });

  it('compiles every source folder of tsconfig.json but the development-only ones, and CMD runs a file that build produces', function () {
    const build = copies.find((c) => c.stage === runtime && c.sources.includes('/app/dist'))!.from!;
    const copied = new Set(copies.filter((c) => c.stage === build && c.from === undefined).flatMap((c) => c.sources));
    const tsconfig = JSON.parse(fs.readFileSync(path.join(ROOT, 'tsconfig.json'), 'utf8')) as { include: string[]; compilerOptions: { outDir: string; rootDir: string } };
    for (const folder of tsconfig.include.filter((f) => !NOT_SHIPPED.includes(f))) {
      expect(copied.has(folder), `the build stage copies ${folder}/ (or NOT_SHIPPED lists it)`).to.equal(true);
    }
    for (const folder of NOT_SHIPPED) expect(ignored(dockerignore, folder), `.dockerignore keeps ${folder}/ out`).to.equal(true);
    expect(copied.has('tsconfig.json')).to.equal(true);
    expect(inStage(build, 'RUN').map((i) => i.args).join('\n')).to.match(/tsc -p tsconfig\.json/);

    // node, its flags (e.g. --max-old-space-size), then the script.
    const cmd = words(inStage(runtime, 'CMD')[0].args).filter((word) => !word.startsWith('--'));
    expect(cmd[0]).to.equal('node');
    const outDir = tsconfig.compilerOptions.outDir;
    expect(cmd[1].startsWith(`${outDir}/`), `${cmd[1]} is under ${outDir}/`).to.equal(true);
    const source = path.join(tsconfig.compilerOptions.rootDir, cmd[1].slice(outDir.length + 1)).replace(/\.js$/, '.ts');
    expect(fs.existsSync(path.join(ROOT, source)), `${source} (compiled to ${cmd[1]})`).to.equal(true);
    expect(copied.has(source.split(path.sep)[0]), `the build stage copies ${source}`).to.equal(true);
  });

  it('ships what the gateway reads at run time: migrations, the config folder, and CONFIG_DIR points at it', function () {
    const runtimeSources = copies.filter((c) => c.stage === runtime && c.from === undefined).flatMap((c) => c.sources);
    expect(runtimeSources).to.include.members(['config', 'db']);
    expect(env.get('CONFIG_DIR')).to.equal('/app/config');
    expect(inStage(runtime, 'WORKDIR')[0].args).to.equal('/app');
  });

  it('runs as a numeric non-root user under an init, with WORKERS 2, DATA_DIR a volume, and only variables settings.ts reads', function () {
    const user = inStage(runtime, 'USER')[0].args;
    expect(user).to.match(/^[0-9]+(:[0-9]+)?$/);
    expect(Number(user.split(':')[0])).to.be.above(0);
    const deployment = YAML.parseAllDocuments(fs.readFileSync(path.join(ROOT, 'deploy', 'kubernetes', 'deployment.yaml'), 'utf8'))[0].toJS();
    expect(deployment.spec.template.spec.securityContext.runAsUser, 'the Deployment runs as the image user').to.equal(Number(user.split(':')[0]));
    expect(words(inStage(runtime, 'ENTRYPOINT')[0].args)[0]).to.match(/tini$/);
    expect(env.get('WORKERS')).to.equal('2');
    const volume = words(inStage(runtime, 'VOLUME')[0].args);
    expect(volume).to.include(env.get('DATA_DIR'));
    const known = settingsEnvNames();
    for (const name of env.keys()) if (name !== 'NODE_ENV') expect(known.has(name), `${name} is read by gateway/settings.ts`).to.equal(true);
  });

  it('health-checks the health-check route on PORT, which it exposes', function () {
    const healthcheck = inStage(runtime, 'HEALTHCHECK')[0].args;
    expect(healthcheck).to.contain('/api/partner/health-check');
    expect(healthcheck).to.contain('process.env.PORT');
    expect(words(inStage(runtime, 'EXPOSE')[0].args)).to.include(env.get('PORT'));
    expect(words(inStage(runtime, 'EXPOSE')[0].args)).to.include(env.get('ADMIN_PORT'));
  });
});
