/**
 * Which engine runs the pipelines of gateway.config.yml (docs/decisions.md, "Pipeline engine"):
 *
 * - `compiled` (the default): every route in one trie, each pipeline a flat chain of its policies'
 *   middlewares (compiled-dispatch.ts), built with express-gateway's policy registry and condition
 *   implementations;
 * - `express-gateway`: express-gateway's own pipeline builder (an endpoint router trying each
 *   route's regular expression in turn, an Express `Router` per pipeline, an `egContext` per
 *   request), kept as the reference the compiled engine is compared with.
 *
 * Chosen by `PIPELINE_ENGINE` (settings.ts hands it on as written); only gateway/runtime reads it.
 */
export type PipelineEngine = 'compiled' | 'express-gateway';

export const PIPELINE_ENGINES: readonly PipelineEngine[] = ['compiled', 'express-gateway'];

export const DEFAULT_PIPELINE_ENGINE: PipelineEngine = 'compiled';

/** The engine `PIPELINE_ENGINE` names (unset: {@link DEFAULT_PIPELINE_ENGINE}); throws on any other value. */
export function pipelineEngineOf(value: string | undefined): PipelineEngine {
  if (!value) return DEFAULT_PIPELINE_ENGINE;
  if ((PIPELINE_ENGINES as readonly string[]).includes(value)) return value as PipelineEngine;
  throw new Error(`PIPELINE_ENGINE must be one of ${PIPELINE_ENGINES.join(', ')}, got "${value}"`);
}
