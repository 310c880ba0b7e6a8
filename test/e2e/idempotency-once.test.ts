import { describeOneOperationPerKey } from './idempotency-once-cases';

// On real PostgreSQL (a database of the gateway's own); the embedded database runs the same cases
// in idempotency-once-embedded.test.ts, a key's outage and takeover tests in idempotency-takeover.test.ts.
describeOneOperationPerKey('postgres');
