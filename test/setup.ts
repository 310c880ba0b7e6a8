// Loaded by mocha before every spec file (see .mocharc.json).
// Test processes never print gateway logs to the terminal unless asked to.
process.env.LOG_LEVEL = process.env.LOG_LEVEL ?? 'silent';
