import net from 'node:net';

/** A request body as framed on the wire, byte for byte (what fetch and node:http do not let a test choose). */
export interface RawBody {
  /** The case, for test titles. */
  description: string;
  /** `none`: no Content-Length and no Transfer-Encoding; `length`: Content-Length; `chunked`: Transfer-Encoding: chunked. */
  framing: 'none' | 'length' | 'chunked';
  /** The body's text; chunked, one chunk each (empty ones are left out: a zero-length chunk ends the body). */
  chunks: readonly string[];
  contentType?: string;
}

const JSON_TYPE = 'application/json';

/**
 * Every way a request arrives without a body once a client, a proxy or a retry dropped it: nothing
 * at all, zero bytes (by length or chunked) and only whitespace (space, tab, CR, LF), each with and
 * without `Content-Type: application/json`. The partner API reads each as no body.
 */
export const ABSENT_BODIES: readonly RawBody[] = [
  { description: 'no body at all', framing: 'none', chunks: [] },
  { description: 'no body at all, Content-Type: application/json', framing: 'none', chunks: [], contentType: JSON_TYPE },
  { description: 'Content-Length: 0', framing: 'length', chunks: [] },
  { description: 'Content-Length: 0, Content-Type: application/json', framing: 'length', chunks: [], contentType: JSON_TYPE },
  { description: 'a chunked body of zero bytes', framing: 'chunked', chunks: [] },
  { description: 'a chunked body of zero bytes, Content-Type: application/json', framing: 'chunked', chunks: [], contentType: JSON_TYPE },
  { description: 'only whitespace', framing: 'length', chunks: [' \t\r\n '] },
  { description: 'only whitespace, Content-Type: application/json', framing: 'length', chunks: [' \t\r\n '], contentType: JSON_TYPE },
  { description: 'only whitespace, chunked, Content-Type: application/json', framing: 'chunked', chunks: ['\r\n ', '\t'], contentType: JSON_TYPE },
];

/** A response read off the socket: status, headers (lower-case names), the body parsed as JSON when it is. */
export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
  body: any;
}

/**
 * Sends one HTTP/1.1 request over a fresh connection (`Connection: close`) with exactly the framing
 * of `body`, and reads the whole answer.
 *
 * @example await rawRequest(gateway.baseUrl, 'PUT', '/api/partner/spend-controls', { authorization }, ABSENT_BODIES[0])
 */
export function rawRequest(baseUrl: string, method: string, path: string, headers: Record<string, string>, body: RawBody): Promise<RawResponse> {
  const { hostname, port } = new URL(baseUrl);
  const lines = [`${method} ${path} HTTP/1.1`, `Host: ${hostname}:${port}`, 'Connection: close'];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  if (body.contentType) lines.push(`Content-Type: ${body.contentType}`);
  let payload = '';
  if (body.framing === 'length') {
    payload = body.chunks.join('');
    lines.push(`Content-Length: ${Buffer.byteLength(payload)}`);
  } else if (body.framing === 'chunked') {
    lines.push('Transfer-Encoding: chunked');
    payload = `${body.chunks
      .filter((chunk) => chunk.length > 0)
      .map((chunk) => `${Buffer.byteLength(chunk).toString(16)}\r\n${chunk}\r\n`)
      .join('')}0\r\n\r\n`;
  }
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const received: Buffer[] = [];
    socket.on('data', (data) => received.push(data));
    socket.on('error', reject);
    socket.on('end', () => {
      try {
        resolve(parseResponse(Buffer.concat(received)));
      } catch (err) {
        reject(err);
      }
    });
    socket.write(`${lines.join('\r\n')}\r\n\r\n${payload}`);
  });
}

function parseResponse(bytes: Buffer): RawResponse {
  const end = bytes.indexOf('\r\n\r\n');
  if (end < 0) throw new Error(`no complete HTTP response: ${JSON.stringify(bytes.toString('latin1').slice(0, 200))}`);
  const [statusLine, ...headerLines] = bytes.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let content = bytes.subarray(end + 4);
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) content = dechunk(content);
  const text = content.toString('utf8');
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: keep the text
  }
  return { status, headers, text, body };
}

function dechunk(bytes: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', at);
    const size = parseInt(bytes.subarray(at, lineEnd).toString('latin1'), 16);
    if (!(size > 0)) return Buffer.concat(parts);
    parts.push(bytes.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}
