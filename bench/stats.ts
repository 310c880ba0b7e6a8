/** The figures every bench reports, computed one way. */

/** The p-th percentile of ascending `sorted` (nearest rank); 0 for no sample. */
export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;
}

/** Rounded to 2 decimals, as the reports print figures. */
export const round2 = (n: number): number => Math.round(n * 100) / 100;

/** A JSON call of the bench's set-up (admin API, partner API): its parsed answer, or an error naming the status and body. */
export async function json(url: string, init: RequestInit = {}): Promise<any> {
  const response = await fetch(url, { ...init, headers: { 'content-type': 'application/json', ...(init.headers ?? {}) } });
  const text = await response.text();
  if (!response.ok) throw new Error(`${init.method ?? 'GET'} ${url} → ${response.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

/** How often bench/count-queries writes the gateway's statement count (when it changed); a reader waits a little longer. */
export const QUERY_COUNT_EVERY_MS = 200;
