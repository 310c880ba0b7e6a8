import type { Gateway } from './gateway-process';
import type { TestPartner } from './partners';
import { recordSecret } from './secrets';

/** A parsed response of the partner API. */
export interface ApiResponse {
  status: number;
  headers: Headers;
  body: any;
}

/** Calls the partner API as `partner` (a fresh token per call), or without a token when partner is null. */
export async function api(
  gateway: Gateway,
  partner: TestPartner | null,
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string> } = {}
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (partner) headers.authorization = `Bearer ${await partner.token()}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${gateway.baseUrl}/api/partner${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, headers: response.headers, body };
}

/** The sandbox URLs a gateway process started (from its ready line). */
export function sandboxUrls(gateway: Gateway): { issuer: string; processing: string; accounts: string } {
  const ready = gateway.logLines().find((l) => l.msg === 'gateway ready');
  return ready!.upstreams as { issuer: string; processing: string; accounts: string };
}

/**
 * Calls a sandbox control endpoint. Card secrets it reads (`/__sandbox/cards/{k}/secrets`: PAN and
 * CVV; `/__sandbox/cards/{k}`: the 3DS answer; `/cards/{k}` of a SANDBOX-LEAK card: PAN and CVV) are recorded for the run's log scan.
 */
export async function sandboxControl(url: string, method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  const parsed = text ? JSON.parse(text) : null;
  if (parsed && typeof parsed === 'object' && /^(\/__sandbox)?\/cards\/[^/]+(\/secrets)?$/.test(path.split('?')[0])) {
    recordSecret('pan', parsed.cardNumber);
    recordSecret('cvv', parsed.cvv);
    recordSecret('threeDsAnswer', parsed.threeDSAnswer);
  }
  return parsed;
}

/** A valid create-individual body (spec 2.2); override any field. Its document numbers are recorded as secrets. */
export function individualBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const body: Record<string, unknown> = {
    firstName: 'Ada',
    middleName: 'Augusta',
    lastName: 'Lovelace',
    country: 'GB',
    city: 'London',
    zipCode: 'SW1Y 4LE',
    buildingNumber: '12',
    idType: 'PASSPORT',
    address1: 'St James Square',
    passportNumber: 'P1234567',
    issuingDate: '2020-01-15',
    validityDate: '2030-01-14',
    passportCountry: 'GB',
    birthCountry: 'GB',
    birthDate: '1990-12-10',
    nationality: 'GB',
    phone: '+447700900123',
    email: 'ada@example.com',
    ...overrides,
  };
  recordSecret('passportNumber', body.passportNumber);
  recordSecret('passportNumber', body.taxIdNumber);
  return body;
}

/** A valid card-issue body (spec 2.7) for an individual's clientID. */
export function cardBody(clientCode: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { expDate: `12/${new Date().getUTCFullYear() + 4}`, clientCode, currency: 'EUR', productCode: 'P-STD', ...overrides };
}
