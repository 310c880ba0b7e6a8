/** Re-exports gateway/outbound/signature.ts (the keyring, storage and signatures of every partner secret) for the modules that import it from webhooks/. */
export * from '../outbound/signature';
