import { describeOneOperationPerKey } from './idempotency-once-cases';

// The cases of idempotency-once.test.ts on the embedded database (PGlite).
describeOneOperationPerKey('embedded');
