// Reading the metrics registry in tests: the registry is one per process, so tests compare
// values before and after what they do, never absolute counts.
import { registry } from '../../../../gateway/metrics';

/** The value of one series (`name` as exposed, e.g. `..._count` for a histogram), or undefined if absent. */
export async function seriesValue(name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
  const base = name.replace(/_(count|sum|bucket)$/, '');
  const metrics = await registry.getMetricsAsJSON();
  const metric = metrics.find((m) => m.name === name || m.name === base);
  if (!metric) return undefined;
  const wanted = Object.entries(labels);
  const match = (metric.values as { value: number; labels: Record<string, string | number>; metricName?: string }[]).find(
    (v) => (v.metricName ?? metric.name) === name && wanted.every(([k, val]) => String(v.labels[k]) === val) && Object.keys(v.labels).length === wanted.length
  );
  return match?.value;
}

/** Like {@link seriesValue}, with an absent series read as 0. */
export async function countOf(name: string, labels: Record<string, string> = {}): Promise<number> {
  return (await seriesValue(name, labels)) ?? 0;
}
