import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import YAML from 'yaml';
import { configEnvNames, ROOT, settingsEnvNames } from './settings-env';

const KUBE_DIR = path.join(ROOT, 'deploy', 'kubernetes');
const CONFIG_DIR = path.join(ROOT, 'config');

type Json = any;

/** Every document of every YAML file of deploy/kubernetes, by file. */
function loadManifests(): Map<string, Json[]> {
  const files = new Map<string, Json[]>();
  for (const file of fs.readdirSync(KUBE_DIR).filter((f) => /\.ya?ml$/.test(f))) {
    const documents = YAML.parseAllDocuments(fs.readFileSync(path.join(KUBE_DIR, file), 'utf8'));
    for (const document of documents) {
      if (document.errors.length > 0) throw new Error(`${file}: ${document.errors.map((e) => e.message).join('; ')}`);
    }
    files.set(file, documents.map((d) => d.toJS() as Json).filter((d) => d !== null));
  }
  return files;
}

/** Files of a folder, recursively, as relative paths with "/". */
function listFiles(dir: string, prefix = ''): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? listFiles(path.join(dir, entry.name), `${prefix}${entry.name}/`) : [`${prefix}${entry.name}`]
  );
}

/** What kustomize's configMapGenerator makes of one generator: data (files and literals) by key. */
function generate(generator: Json): Map<string, { file?: string; value: string }> {
  const data = new Map<string, { file?: string; value: string }>();
  for (const entry of (generator.files ?? []) as string[]) {
    const [key, source] = entry.includes('=') ? entry.split('=', 2) : [path.basename(entry), entry];
    const file = path.resolve(KUBE_DIR, source);
    expect(fs.existsSync(file), `configMapGenerator ${generator.name}: ${source} exists`).to.equal(true);
    data.set(key, { file, value: fs.readFileSync(file, 'utf8') });
  }
  for (const literal of (generator.literals ?? []) as string[]) {
    const at = literal.indexOf('=');
    data.set(literal.slice(0, at), { value: literal.slice(at + 1) });
  }
  return data;
}

/** The YAML of the gateway's own configuration. */
const gatewayConfig = (): Json => YAML.parse(fs.readFileSync(path.join(CONFIG_DIR, 'gateway.config.yml'), 'utf8'), { maxAliasCount: -1 });

describe('unit: deploy/kubernetes manifests', function () {
  const manifests = loadManifests();
  const all = [...manifests.values()].flat();
  const ofKind = (kind: string) => all.filter((d) => d.kind === kind);
  const kustomization = manifests.get('kustomization.yaml')![0];
  const generators = new Map<string, Map<string, { file?: string; value: string }>>(
    (kustomization.configMapGenerator as Json[]).map((g) => [g.name as string, generate(g)])
  );
  const deployment = ofKind('Deployment')[0];
  const pod = deployment.spec.template;
  const containers = pod.spec.containers as Json[];
  const container = containers.find((c) => c.name === 'gateway');
  const sidecar = containers.find((c) => c.name === 'metrics-proxy');
  const envConfigMap = container.envFrom.find((e: Json) => e.configMapRef).configMapRef.name as string;
  const env = generators.get(envConfigMap)!;
  const literal = (name: string) => env.get(name)?.value;

  it('every file parses (multi-document YAML), and every object has apiVersion, kind and a name', function () {
    expect(manifests.size).to.be.at.least(6);
    for (const [file, documents] of manifests) {
      expect(documents.length, file).to.be.at.least(1);
      for (const document of documents) {
        expect(document.apiVersion, file).to.be.a('string');
        expect(document.kind, file).to.be.a('string');
        if (document.kind !== 'Kustomization') expect(document.metadata?.name, file).to.be.a('string');
      }
    }
    for (const kind of ['Deployment', 'Service', 'HorizontalPodAutoscaler', 'PodDisruptionBudget', 'Secret']) {
      expect(ofKind(kind), kind).to.not.be.empty;
    }
  });

  it('the kustomization lists files that exist, and never the example Secret', function () {
    for (const resource of kustomization.resources as string[]) expect(fs.existsSync(path.join(KUBE_DIR, resource)), resource).to.equal(true);
    expect(kustomization.resources).to.not.include('secret.example.yaml');
  });

  it('the config ConfigMap is generated from config/ itself: gateway.config.yml byte for byte, and every file of CONFIG_DIR is projected', function () {
    const volume = pod.spec.volumes.find((v: Json) => v.configMap && generators.has(v.configMap.name));
    expect(volume, 'a volume of a generated ConfigMap').to.not.equal(undefined);
    const data = generators.get(volume.configMap.name)!;
    expect(data.get('gateway.config.yml')!.file).to.equal(path.join(CONFIG_DIR, 'gateway.config.yml'));
    expect(data.get('gateway.config.yml')!.value).to.equal(fs.readFileSync(path.join(CONFIG_DIR, 'gateway.config.yml'), 'utf8'));
    const projected = new Map<string, string>((volume.configMap.items as Json[]).map((item) => [item.path as string, item.key as string]));
    expect([...projected.keys()].sort()).to.deep.equal(listFiles(CONFIG_DIR).sort());
    for (const [file, key] of projected) {
      expect(data.has(key), `ConfigMap key ${key}`).to.equal(true);
      expect(data.get(key)!.value, file).to.equal(fs.readFileSync(path.join(CONFIG_DIR, file), 'utf8'));
    }
    const mount = container.volumeMounts.find((m: Json) => m.name === volume.name);
    expect(mount.readOnly).to.equal(true);
    expect(mount.subPath, 'a whole-folder mount (a subPath mount never sees ConfigMap updates)').to.equal(undefined);
    expect(literal('CONFIG_DIR')).to.equal(mount.mountPath);
  });

  it('uses only environment variables the gateway reads (gateway/settings.ts, or substituted into gateway.config.yml), from a ConfigMap or the Secret', function () {
    const known = new Set([...settingsEnvNames(), ...configEnvNames()]);
    expect([...known]).to.include.members(['PORT', 'ADMIN_TOKEN', 'DATABASE_URL', 'WORKERS', 'CONFIG_DIR', 'DATA_DIR']);
    const names = [...env.keys(), ...(container.env as Json[]).map((e) => e.name as string)];
    for (const name of names) expect(known.has(name), `${name} is read by gateway/settings.ts or gateway.config.yml`).to.equal(true);
    for (const e of container.env as Json[]) expect(e.value, `${e.name} comes from a reference, never a literal`).to.equal(undefined);
  });

  it('references Secret keys that the Secret has (placeholders only)', function () {
    const secret = ofKind('Secret')[0];
    const refs = (container.env as Json[]).filter((e) => e.valueFrom?.secretKeyRef).map((e) => e.valueFrom.secretKeyRef);
    expect(refs.filter((r: Json) => r.optional !== true).map((r: Json) => r.key).sort()).to.deep.equal(['ADMIN_TOKEN', 'DATABASE_URL']);
    for (const ref of refs) {
      expect(ref.name).to.equal(secret.metadata.name);
      expect(secret.stringData, ref.key).to.have.property(ref.key);
    }
    // A placeholder token the gateway refuses (under 32 characters), and no real-looking credential.
    expect(secret.stringData.ADMIN_TOKEN.length).to.be.below(32);
    expect(secret.stringData.DATABASE_URL).to.match(/USER:PASSWORD@HOST/);
  });

  it('serves on PORT, probes a route of gateway.config.yml that needs no token, and exposes the ports the Services target', function () {
    const ports = new Map<string, number>(containers.flatMap((c) => (c.ports as Json[]).map((p) => [p.name as string, p.containerPort as number] as const)));
    expect(ports.get('http')).to.equal(Number(literal('PORT')));
    expect((container.ports as Json[]).map((p) => p.containerPort), 'the loopback admin API has no container port').to.not.include(Number(literal('ADMIN_PORT')));

    const config = gatewayConfig();
    const endpoints = Object.entries(config.apiEndpoints as Record<string, Json>);
    for (const probeName of ['startupProbe', 'readinessProbe', 'livenessProbe']) {
      const probe = container[probeName];
      expect(probe, probeName).to.not.equal(undefined);
      expect(probe.httpGet.port, probeName).to.equal('http');
      const endpoint = endpoints.find(([, e]) => ([] as string[]).concat(e.paths).includes(probe.httpGet.path) && String(e.methods).split(',').includes('GET'));
      expect(endpoint, `${probeName} ${probe.httpGet.path} is a GET route of gateway.config.yml`).to.not.equal(undefined);
      const pipeline = Object.values(config.pipelines as Record<string, Json>).find((p) => (p.apiEndpoints as string[]).includes(endpoint![0]));
      const policyNames = (pipeline.policies as Json[]).map((p) => Object.keys(p)[0]);
      expect(policyNames, `${probeName}: the probe sends no token`).to.not.include('es512-jwt');
    }

    for (const service of ofKind('Service')) {
      for (const port of service.spec.ports as Json[]) expect(ports.has(port.targetPort), `${service.metadata.name} → ${port.targetPort}`).to.equal(true);
      for (const [label, value] of Object.entries(service.spec.selector as Record<string, string>)) expect(pod.metadata.labels[label]).to.equal(value);
    }
    for (const policy of ofKind('NetworkPolicy')) {
      for (const rule of policy.spec.ingress as Json[]) for (const port of rule.ports as Json[]) expect(ports.has(port.port), String(port.port)).to.equal(true);
    }
  });

  it('keeps the admin API on loopback (the policy audit refuses anything else) and lets Prometheus reach only GET /admin/metrics, through the sidecar', function () {
    expect(literal('ADMIN_HOST')).to.match(/^(127\.[0-9.]+|::1|localhost)$/);
    expect(sidecar, 'the metrics-proxy container').to.not.equal(undefined);
    expect(sidecar.image).to.equal(container.image);
    expect(sidecar.command, 'the image ENTRYPOINT (tini) stays').to.equal(undefined);
    const args = sidecar.args as string[];
    expect(args[0]).to.equal('node');
    const source = path.join(ROOT, args[1].replace(/^dist\//, '').replace(/\.js$/, '.ts'));
    expect(fs.existsSync(source), `${args[1]} is compiled from ${source}`).to.equal(true);
    expect(Number(args[args.indexOf('--port') + 1])).to.equal(sidecar.ports.find((p: Json) => p.name === 'metrics').containerPort);
    expect(sidecar.envFrom.map((e: Json) => e.configMapRef?.name), 'reads ADMIN_PORT where the gateway does').to.include(envConfigMap);
  });

  it('runs non-root on a read-only root filesystem, with DATA_DIR and /tmp writable', function () {
    expect(pod.spec.securityContext.runAsNonRoot).to.equal(true);
    expect(pod.spec.securityContext.runAsUser).to.be.above(0);
    for (const c of containers) {
      expect(c.securityContext, c.name).to.include({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
      expect(c.securityContext.capabilities.drop, c.name).to.include('ALL');
      expect(c.resources.requests, c.name).to.have.keys(['cpu', 'memory']);
      expect(c.resources.limits, c.name).to.have.property('memory');
    }
    const writable = (container.volumeMounts as Json[]).filter((m) => !m.readOnly).map((m) => m.mountPath);
    expect(writable).to.include.members([literal('DATA_DIR'), '/tmp']);
    for (const mount of container.volumeMounts as Json[]) {
      const volume = (pod.spec.volumes as Json[]).find((v) => v.name === mount.name);
      expect(volume, mount.name).to.not.equal(undefined);
      if (!mount.readOnly) expect(volume.emptyDir, `${mount.name} is an emptyDir`).to.not.equal(undefined);
    }
  });

  it('rolls without losing capacity, drains within the grace period, and sizes the pod for WORKERS', function () {
    expect(deployment.spec.replicas, 'the HPA owns the replica count').to.equal(undefined);
    expect(deployment.spec.strategy).to.deep.include({ type: 'RollingUpdate' });
    expect(deployment.spec.strategy.rollingUpdate.maxUnavailable).to.equal(0);
    const preStop = container.lifecycle.preStop.exec.command as string[];
    expect(preStop[0]).to.equal('sleep');
    // main.ts: a cluster worker gets 20 s to finish its in-flight requests before SIGKILL.
    expect(pod.spec.terminationGracePeriodSeconds).to.be.at.least(Number(preStop[1]) + 20);
    expect(Number(literal('WORKERS'))).to.equal(2);
    expect(container.resources.requests).to.have.keys(['cpu', 'memory']);
    expect(container.resources.limits).to.have.property('memory');
  });

  it('scales and protects the Deployment it names (HPA, PodDisruptionBudget)', function () {
    const hpa = ofKind('HorizontalPodAutoscaler')[0];
    expect(hpa.spec.scaleTargetRef).to.include({ kind: 'Deployment', name: deployment.metadata.name });
    expect(hpa.spec.minReplicas).to.be.at.least(2);
    expect(hpa.spec.maxReplicas).to.be.at.least(hpa.spec.minReplicas);
    const pdb = ofKind('PodDisruptionBudget')[0];
    for (const [label, value] of Object.entries(pdb.spec.selector.matchLabels as Record<string, string>)) expect(pod.metadata.labels[label]).to.equal(value);
    for (const [label, value] of Object.entries(deployment.spec.selector.matchLabels as Record<string, string>)) expect(pod.metadata.labels[label]).to.equal(value);
    expect(pdb.spec.maxUnavailable ?? 0).to.be.below(hpa.spec.minReplicas);
  });
});
