import { boundedLru } from '../bounded-lru';
import { systemClock, type Clock } from './deadline';
import type { DecisionCard } from './decision';

/**
 * What a claim statement read of a card, kept for its next decision in this process: whether its
 * partner had a decision endpoint (which of the two claim statements to send, ./claim.ts); without
 * one, the card and its controls, on which the next decision is taken and which its recording
 * statement checks are still the card's (./recording-statements.ts, the remembered statement).
 */
export type CardHint = { hasEndpoint: true } | { hasEndpoint: false; card: DecisionCard; controls: string | undefined };

/**
 * The longest controls (the JSON text of both scopes, as the claim statement read them) a hint keeps:
 * past it only whether the partner has an endpoint is kept (and the card's decisions read first).
 * 10,000 hints then hold at most about 10 MB of controls (typical controls are 100 to 400 characters).
 */
export const REMEMBERED_CONTROLS_CHARS = 1024;

/** How many cards a process keeps hints of (the least recently decided go first). */
export const CARD_HINTS = 10_000;

/**
 * The hints of one gateway process by card key ({@link CardHint}). A hint only: a stale one costs a
 * statement (a read of the endpoint after the claim, or a recording that finds the card changed and
 * writes nothing) or a few reads of nothing, never a wrong decision.
 */
export type EndpointHints = ReturnType<typeof newEndpointHints>;

/**
 * The hints of one gateway process: the last {@link CARD_HINTS} cards decided, with no expiry (a
 * stale hint is caught by the statement it chooses). `now`: the cache's clock, the decision's own
 * (the real one by default).
 */
export function newEndpointHints(options: { now?: Clock } = {}) {
  return boundedLru<string, CardHint>(CARD_HINTS, { perf: { now: options.now ?? systemClock } });
}

/** The hint a claim statement's reads leave: the card and its controls' text when short enough, without an endpoint. */
export function hintOf(card: DecisionCard, hasEndpoint: boolean, controlsText: string | undefined): CardHint {
  if (hasEndpoint) return { hasEndpoint };
  return { hasEndpoint, card, controls: controlsText !== undefined && controlsText.length <= REMEMBERED_CONTROLS_CHARS ? controlsText : undefined };
}
