/** Re-exports gateway/outbound/secret-box.ts (the keyring, storage and signatures of every partner secret) for the modules that import it from webhooks/. */
export * from '../outbound/secret-box';
