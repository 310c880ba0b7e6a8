import { spawn } from 'node:child_process';
import fs from 'node:fs';

/**
 * The TCP ports a process listens on (Linux: its socket inodes in /proc/<pid>/fd matched against
 * the LISTEN rows of /proc/net/tcp and tcp6).
 */
export function tcpListeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match) inodes.add(match[1]);
    } catch {
      // the descriptor closed while we listed them
    }
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!fs.existsSync(table)) continue;
    for (const row of fs.readFileSync(table, 'utf8').split('\n').slice(1)) {
      const cols = row.trim().split(/\s+/);
      // cols: sl, local_address, rem_address, st, tx_queue:rx_queue, tr:tm->when, retrnsmt, uid, timeout, inode
      if (cols.length < 10 || cols[3] !== '0A' || !inodes.has(cols[9])) continue;
      ports.add(parseInt(cols[1].split(':')[1], 16));
    }
  }
  return [...ports].sort((a, b) => a - b);
}

/** What happened when another user tried to speak PostgreSQL to a listener. */
export interface ForeignAttempt {
  /** `authenticated` when the server answered the startup message with AuthenticationOk. */
  outcome: 'authenticated' | 'answered' | 'error';
  code?: string;
}

// Connects to the target given as JSON in argv, sends a PostgreSQL StartupMessage (user and
// database "postgres") and reports whether the server let it in without a password.
const ATTEMPT_SCRIPT = `
const net = require('node:net');
const target = JSON.parse(process.argv[1]);
const params = Buffer.from('user\\0postgres\\0database\\0postgres\\0\\0');
const startup = Buffer.alloc(8 + params.length);
startup.writeInt32BE(startup.length, 0);
startup.writeInt32BE(196608, 4);
params.copy(startup, 8);
const done = (result) => { process.stdout.write(JSON.stringify(result)); process.exit(0); };
const socket = net.connect(target, () => socket.write(startup));
socket.on('data', (data) => done({ outcome: data[0] === 0x52 && data.readInt32BE(5) === 0 ? 'authenticated' : 'answered' }));
socket.on('error', (err) => done({ outcome: 'error', code: err.code }));
socket.on('close', () => done({ outcome: 'error', code: 'closed' }));
`;

/**
 * Tries, as the unprivileged user `uid` (default 65534, "nobody"), to open a PostgreSQL session on
 * `target` (a TCP address or a Unix socket path). Only root can run a process as another user.
 */
export function connectAsOtherUser(target: { host: string; port: number } | { path: string }, uid = 65534): Promise<ForeignAttempt> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', ATTEMPT_SCRIPT, JSON.stringify(target)], { uid, gid: uid, cwd: '/', stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', reject);
    child.on('close', () => {
      try {
        resolve(JSON.parse(out) as ForeignAttempt);
      } catch {
        reject(new Error(`the other user's attempt printed no result: ${out}${err}`));
      }
    });
  });
}
