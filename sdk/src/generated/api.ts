// Generated from openapi.json (the document the gateway serves, without examples) by
// scripts/generate-types.js with openapi-typescript. Do not edit: run `npm run generate` in sdk/.
// Document sha256: 9c39b59548ca53c6b0fa169a327773b8eb768d4a63073096e81133455b8c5e84
/* eslint-disable */
export interface paths {
    "/health-check": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Health check
         * @description Liveness only: never touches the database; always 200 `OK` (spec 4.1).
         *
         *     Pipeline `health-check`: operation (health-check).
         */
        get: operations["health-check"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * OpenAPI document
         * @description This document (OpenAPI 3.1), generated at start from the gateway configuration and the validation schemas. Cacheable for 5 minutes.
         *
         *     Pipeline `openapi-document`: rate-limit → operation (openapi-document).
         */
        get: operations["openapi-document"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/docs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * API reference page
         * @description This reference, rendered by Redoc from the OpenAPI document. Nothing is loaded from another origin.
         *
         *     Pipeline `api-docs`: rate-limit → operation (api-docs).
         */
        get: operations["api-docs"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/me": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get partner identity
         * @description The authenticated partner, its B2B tenants (`activeTenantId` is the first-created one) and its 100 newest individuals (spec 4.1).
         *
         *     Pipeline `me`: es512-jwt → rate-limit → operation (me).
         */
        get: operations["me"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/individual/accounts": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List individual accounts
         * @description Every individual you own, newest first, as `{count, data}` (spec 4.2).
         *
         *     Pipeline `list-individuals`: es512-jwt → rate-limit → validate (query: pagination-query) → operation (list-individuals).
         */
        get: operations["list-individuals"];
        put?: never;
        /**
         * Create individual account
         * @description Validates the body, creates the account at the account-creation upstream, and answers 201 with the individual. If the upstream fails nothing is kept (no user, onboarding or audit record). Send an `Idempotency-Key` to retry safely.
         *
         *     Pipeline `create-individual`: es512-jwt → rate-limit → validate (body: individual-create) → idempotency → operation (create-individual).
         */
        post: operations["create-individual"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/individual/accounts/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get individual account
         * @description Pipeline `get-individual`: es512-jwt → rate-limit → ownership (individual) → operation (get-individual).
         */
        get: operations["get-individual"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/individual/accounts/{id}/cards": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List cards for an individual
         * @description The individual's ACTIVE cards, newest first, with the first nine fields of the card (spec 2.3). At most `limit` (1 to 100, default 100) at once: every individual with up to 100 active cards gets them all in one answer; past that, a `Link` header with `rel="next"` names the next page (`page`, from 1).
         *
         *     Pipeline `list-individual-cards`: es512-jwt → rate-limit → ownership (individual) → validate (query: individual-cards-query) → operation (list-individual-cards).
         */
        get: operations["list-individual-cards"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/individual/accounts/{id}/cards/virtual": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Create virtual card for an individual
         * @description Issues a virtual card (ACTIVE, `00`). `clientCode` must be the individual's `clientID`. Send an `Idempotency-Key` to retry safely.
         *
         *     Pipeline `issue-virtual-card`: es512-jwt → rate-limit → ownership (individual) → validate (body: card-issue) → idempotency → operation (issue-virtual-card).
         */
        post: operations["issue-virtual-card"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/individual/accounts/{id}/cards/physical": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Create physical card for an individual
         * @description Issues a physical card: LOCKED with `I1` until it is activated. `clientCode` must be the individual's `clientID`. Send an `Idempotency-Key` to retry safely.
         *
         *     Pipeline `issue-physical-card`: es512-jwt → rate-limit → ownership (individual) → validate (body: card-issue) → idempotency → operation (issue-physical-card).
         */
        post: operations["issue-physical-card"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/individual/accounts/{id}/audit-logs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List audit logs for an individual
         * @description Every change on the individual and its cards, newest first. `total` is exact up to 1,000; above, it is 1,000 with `X-Total-Capped: true` (docs/pagination.md).
         *
         *     Pipeline `list-individual-audit-logs`: es512-jwt → rate-limit → ownership (individual) → validate (query: pagination-query) → operation (list-individual-audit-logs).
         */
        get: operations["list-individual-audit-logs"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/individual/accounts/{id}/card-status-history": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Card status history for an individual
         * @description Every status change of the individual's cards, newest first. `total` is exact up to 1,000; above, it is 1,000 with `X-Total-Capped: true` (docs/pagination.md).
         *
         *     Pipeline `list-individual-card-status-history`: es512-jwt → rate-limit → ownership (individual) → validate (query: pagination-query) → operation (list-individual-card-status-history).
         */
        get: operations["list-individual-card-status-history"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/individual/accounts/{id}/transactions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List transactions for an individual
         * @description From the card processing system, by the individual's clientID and optionally one of its cards. Empty when the processing system is not configured for you.
         *
         *     Pipeline `list-individual-transactions`: es512-jwt → rate-limit → ownership (individual) → validate (query: transactions-query) → operation (list-individual-transactions).
         */
        get: operations["list-individual-transactions"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/cards": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List all partner cards
         * @description Every card you own, individual and B2B (not tenant-scoped), newest first. Without `search`, `total` is exact; with `search`, it is exact up to 10,000, and above 10,000 with `X-Total-Capped: true`. Only the first 10,000 matches can be paged through: `totalPages` counts their pages, and `hasMore` is false on the last of them (docs/card-search.md).
         *
         *     Pipeline `list-cards`: es512-jwt → rate-limit → validate (query: cards-list-query) → operation (list-cards).
         */
        get: operations["list-cards"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/cards/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get card details
         * @description The card, fresh from the issuer for its status; never the card number or CVV.
         *
         *     Pipeline `get-card`: es512-jwt → rate-limit → ownership (card) → sensitive-data → operation (issuer: card-details).
         */
        get: operations["get-card"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/cards/{id}/status": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get card status
         * @description Pipeline `get-card-status`: es512-jwt → rate-limit → ownership (card) → operation (issuer: card-status).
         */
        get: operations["get-card-status"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/cards/{id}/lock": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Lock card
         * @description The holder keeps the card; it cannot authorize transactions. Checks the transition first (409 `invalid_transition`, the issuer is not called), then asks the issuer; records the status history and the audit entry.
         *
         *     Pipeline `lock-card`: es512-jwt → rate-limit → ownership (card) → validate (body: card-status-change) → idempotency → operation (lock-card).
         */
        post: operations["lock-card"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/cards/{id}/unlock": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Unlock card
         * @description For a locked, temporarily locked or restricted card. Checks the transition first (409 `invalid_transition`, the issuer is not called), then asks the issuer; records the status history and the audit entry.
         *
         *     Pipeline `unlock-card`: es512-jwt → rate-limit → ownership (card) → validate (body: card-status-change) → idempotency → operation (unlock-card).
         */
        post: operations["unlock-card"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/cards/{id}/activate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Activate card
         * @description A freshly issued physical card (I1) becomes ACTIVE. Checks the transition first (409 `invalid_transition`, the issuer is not called), then asks the issuer; records the status history and the audit entry.
         *
         *     Pipeline `activate-card`: es512-jwt → rate-limit → ownership (card) → validate (body: card-status-change) → idempotency → operation (activate-card).
         */
        post: operations["activate-card"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/cards/{id}/temporary-lock": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Temporary lock card
         * @description Checks the transition first (409 `invalid_transition`, the issuer is not called), then asks the issuer; records the status history and the audit entry.
         *
         *     Pipeline `temporary-lock-card`: es512-jwt → rate-limit → ownership (card) → validate (body: card-status-change) → idempotency → operation (temporary-lock-card).
         */
        post: operations["temporary-lock-card"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/cards/{id}/restrict": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Restrict card
         * @description Generic restriction (RESTRICTED, S1). Checks the transition first (409 `invalid_transition`, the issuer is not called), then asks the issuer; records the status history and the audit entry.
         *
         *     Pipeline `restrict-card`: es512-jwt → rate-limit → ownership (card) → validate (body: card-restrict) → idempotency → operation (restrict-card).
         */
        post: operations["restrict-card"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/cards/{id}/restrict/lost": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Restrict card as lost
         * @description Restricts the card as lost. The card cannot be unlocked afterwards: close it, report it again, or replace / re-issue it. Checks the transition first (409 `invalid_transition`, the issuer is not called), then asks the issuer; records the status history and the audit entry.
         *
         *     Pipeline `restrict-card-lost`: es512-jwt → rate-limit → ownership (card) → validate (body: card-restrict) → idempotency → operation (restrict-card-lost).
         */
        post: operations["restrict-card-lost"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/cards/{id}/restrict/stolen": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Restrict card as stolen
         * @description Restricts the card as stolen. The card cannot be unlocked afterwards: close it, report it again, or replace / re-issue it. Checks the transition first (409 `invalid_transition`, the issuer is not called), then asks the issuer; records the status history and the audit entry.
         *
         *     Pipeline `restrict-card-stolen`: es512-jwt → rate-limit → ownership (card) → validate (body: card-restrict) → idempotency → operation (restrict-card-stolen).
         */
        post: operations["restrict-card-stolen"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/cards/{id}/restrict/closed": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Restrict card as closed
         * @description Closes the card for good (CLOSED is final). Checks the transition first (409 `invalid_transition`, the issuer is not called), then asks the issuer; records the status history and the audit entry.
         *
         *     Pipeline `restrict-card-closed`: es512-jwt → rate-limit → ownership (card) → validate (body: card-restrict) → idempotency → operation (restrict-card-closed).
         */
        post: operations["restrict-card-closed"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/cards/{id}/restrict/fraud": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Restrict card as fraud
         * @description Restricts the card as fraud. The card cannot be unlocked afterwards: close it, report it again, or replace / re-issue it. Checks the transition first (409 `invalid_transition`, the issuer is not called), then asks the issuer; records the status history and the audit entry.
         *
         *     Pipeline `restrict-card-fraud`: es512-jwt → rate-limit → ownership (card) → validate (body: card-restrict) → idempotency → operation (restrict-card-fraud).
         */
        post: operations["restrict-card-fraud"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/cards/{id}/restrict/mobile-lost": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Restrict card as mobile-lost
         * @description Restricts the card as lost on a mobile device. The card cannot be unlocked afterwards: close it, report it again, or replace / re-issue it. Checks the transition first (409 `invalid_transition`, the issuer is not called), then asks the issuer; records the status history and the audit entry.
         *
         *     Pipeline `restrict-card-mobile-lost`: es512-jwt → rate-limit → ownership (card) → validate (body: card-restrict) → idempotency → operation (restrict-card-mobile-lost).
         */
        post: operations["restrict-card-mobile-lost"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/cards/{id}/nickname": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /**
         * Change card nickname
         * @description Kept by the gateway only; never sent to the issuer.
         *
         *     Pipeline `set-card-nickname`: es512-jwt → rate-limit → ownership (card) → validate (body: card-nickname) → operation (set-card-nickname).
         */
        patch: operations["set-card-nickname"];
        trace?: never;
    };
    "/cards/{id}/emboss-name": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /**
         * Change emboss name
         * @description 1 to 26 of `A-Z a-z 0-9 . ' - /`, no spaces (the issuer refuses them).
         *
         *     Pipeline `set-card-emboss-name`: es512-jwt → rate-limit → ownership (card) → validate (body: card-emboss-name) → operation (set-card-emboss-name).
         */
        patch: operations["set-card-emboss-name"];
        trace?: never;
    };
    "/cards/{id}/replace": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Replace card
         * @description Physical cards only (a virtual card is 409 `conflict`): the same card record moves to the new cardKey, which the answer carries; the old cardKey is 404 from then on. Send an `Idempotency-Key` to retry safely.
         *
         *     Pipeline `replace-card`: es512-jwt → rate-limit → idempotency → ownership (card) → validate (body: card-replace) → idempotency → operation (replace-card).
         */
        post: operations["replace-card"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/cards/{id}/reissue": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Re-issue card
         * @description A new card (201) replaces this one, which is closed. Nickname and 3DS phone carry over. Send an `Idempotency-Key` to retry safely.
         *
         *     Pipeline `reissue-card`: es512-jwt → rate-limit → idempotency → ownership (card) → validate (body: card-replace) → idempotency → operation (reissue-card).
         */
        post: operations["reissue-card"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/cards/{id}/cvv": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get card CVV
         * @description The CVV2, encrypted with RSA-OAEP (SHA-256) under `securityKey` (your RSA public key, base64 SPKI DER, at least 2048 bits); decrypt it with your private key. Audited as `card.cvv.read`; never logged.
         *
         *     Pipeline `get-card-cvv`: es512-jwt → rate-limit → ownership (card) → sensitive-data → validate (query: card-secret-query) → operation (issuer: cvv).
         */
        get: operations["get-card-cvv"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/cards/{id}/pan": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get full card number
         * @description The card number (PAN), encrypted with RSA-OAEP (SHA-256) under `securityKey`. Audited as `card.pan.read`; never logged.
         *
         *     Pipeline `get-card-pan`: es512-jwt → rate-limit → ownership (card) → sensitive-data → validate (query: card-secret-query) → operation (issuer: card-number).
         */
        get: operations["get-card-pan"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/cards/{id}/3ds/answer": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /**
         * Set 3DS answer
         * @description Forwarded to the issuer; never stored, answered or logged by the gateway.
         *
         *     Pipeline `set-card-3ds-answer`: es512-jwt → rate-limit → ownership (card) → sensitive-data → validate (body: three-ds-answer) → operation (set-card-3ds-answer).
         */
        put: operations["set-card-3ds-answer"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/cards/{id}/3ds/phone": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        /**
         * Change 3DS phone number
         * @description E.164; kept by the gateway only.
         *
         *     Pipeline `set-card-3ds-phone`: es512-jwt → rate-limit → ownership (card) → validate (body: three-ds-phone) → operation (set-card-3ds-phone).
         */
        put: operations["set-card-3ds-phone"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/cards/{id}/pin/reset-tries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Reset PIN tries
         * @description Resets the PIN-attempt counter. Takes no field: send `{}`.
         *
         *     Pipeline `reset-card-pin-tries`: es512-jwt → rate-limit → ownership (card) → sensitive-data → validate (body: empty-body) → operation (reset-card-pin-tries).
         */
        post: operations["reset-card-pin-tries"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/cards/{id}/pin/change": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Change PIN
         * @description `pin` is a PIN block encrypted with RSA-OAEP (SHA-256) under the key of `GET /pin-encryption-key`. Known limitation: the issuer platform refuses this operation today, which is 502 `upstream_error` with `upstreamCode: OPERATION_NOT_SUPPORTED`.
         *
         *     Pipeline `change-card-pin`: es512-jwt → rate-limit → ownership (card) → sensitive-data → validate (body: pin-change) → operation (change-card-pin).
         */
        post: operations["change-card-pin"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/cards/{id}/pin/force-lock": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Force PIN lock
         * @description Known limitation: the issuer platform refuses this operation today, which is 502 `upstream_error` with `upstreamCode: OPERATION_NOT_SUPPORTED`.
         *
         *     Pipeline `force-card-pin-lock`: es512-jwt → rate-limit → ownership (card) → sensitive-data → validate (body: pin-force-lock) → operation (force-card-pin-lock).
         */
        post: operations["force-card-pin-lock"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/cards/{id}/authorize": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Authorize cardholder
         * @description PIN-less action authorized with an encrypted PIN block.
         *
         *     Pipeline `authorize-cardholder`: es512-jwt → rate-limit → ownership (card) → sensitive-data → validate (body: card-authorize) → operation (authorize-cardholder).
         */
        post: operations["authorize-cardholder"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/cards/{id}/limits": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get all card limits
         * @description Pipeline `get-card-limits`: es512-jwt → rate-limit → ownership (card) → operation (issuer: limits).
         */
        get: operations["get-card-limits"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /**
         * Patch card limits
         * @description Sets 1 to 5 distinct limits at once; answers every limit of the card.
         *
         *     Pipeline `patch-card-limits`: es512-jwt → rate-limit → ownership (card) → validate (body: limits-patch) → operation (patch-card-limits).
         */
        patch: operations["patch-card-limits"];
        trace?: never;
    };
    "/cards/{id}/limits/{limitName}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get a single card limit
         * @description Pipeline `get-card-limit`: es512-jwt → rate-limit → ownership (card) → validate (params: limit-params) → operation (issuer: limit).
         */
        get: operations["get-card-limit"];
        /**
         * Set a single card limit
         * @description The body's `name` must be the path's `limitName`.
         *
         *     Pipeline `set-card-limit`: es512-jwt → rate-limit → ownership (card) → validate (body: limit-set, params: limit-params) → operation (set-card-limit).
         */
        put: operations["set-card-limit"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/cards/{id}/limits/{limitName}/available": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get available limit
         * @description Pipeline `get-card-limit-available`: es512-jwt → rate-limit → ownership (card) → validate (params: limit-params) → operation (issuer: limit-available).
         */
        get: operations["get-card-limit-available"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/cards/{id}/spend-controls": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get a card's spend controls
         * @description The card's own controls; `{}` when none are set. Your default (`GET /spend-controls`) applies as well.
         *
         *     Pipeline `get-card-spend-controls`: es512-jwt → rate-limit → ownership (card) → operation (get-card-spend-controls).
         */
        get: operations["get-card-spend-controls"];
        /**
         * Replace a card's spend controls
         * @description Replaces the whole object with the body; `{}` clears it, on purpose only: a request without a body (none, zero bytes or only whitespace) is 400 `body_required` and changes nothing. A purchase must pass these and your default. Audited; emits `card.updated` with `changed: ["spendControls"]`.
         *
         *     Pipeline `set-card-spend-controls`: es512-jwt → rate-limit → ownership (card) → validate (body: spend-controls) → operation (set-card-spend-controls).
         */
        put: operations["set-card-spend-controls"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/spend-controls": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get your default spend controls
         * @description Your default for all your cards; `{}` when none are set.
         *
         *     Pipeline `get-spend-controls`: es512-jwt → rate-limit → operation (get-spend-controls).
         */
        get: operations["get-spend-controls"];
        /**
         * Replace your default spend controls
         * @description Your default for all your cards, checked on each card's purchases besides the card's own controls (velocity counts each card's own authorizations). Replaces the whole object with the body; `{}` clears it, on purpose only: a request without a body (none, zero bytes or only whitespace) is 400 `body_required` and changes nothing. Audited.
         *
         *     Pipeline `set-spend-controls`: es512-jwt → rate-limit → validate (body: spend-controls) → operation (set-spend-controls).
         */
        put: operations["set-spend-controls"];
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/pin-encryption-key": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get PIN encryption key
         * @description The issuer's RSA key to encrypt PIN blocks under (RSA-OAEP-256).
         *
         *     Pipeline `get-pin-encryption-key`: es512-jwt → rate-limit → sensitive-data → operation (issuer: pin-encryption-key).
         */
        get: operations["get-pin-encryption-key"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/delivery-methods": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List delivery methods by country
         * @description Pipeline `list-delivery-methods`: es512-jwt → rate-limit → validate (query: delivery-methods-query) → operation (processing: delivery-methods).
         */
        get: operations["list-delivery-methods"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/fees/card-issuing": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Check card issuing fee
         * @description The gateway sets `OperationType` to `CARD_ISSUING_FEE`.
         *
         *     Pipeline `check-card-issuing-fee`: es512-jwt → rate-limit → validate (body: fee-check) → ownership (card in body.cardKey, client in body.clientId) → operation (processing: fee).
         */
        post: operations["check-card-issuing-fee"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/fees/card-delivery": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Check card delivery fee
         * @description The gateway sets `OperationType` to `CARD_DELIVERY_FEE`.
         *
         *     Pipeline `check-card-delivery-fee`: es512-jwt → rate-limit → validate (body: fee-check) → ownership (card in body.cardKey, client in body.clientId) → operation (processing: fee).
         */
        post: operations["check-card-delivery-fee"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/transactions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Search transactions
         * @description Your transactions across all your individuals and B2B cards, newest first by `createdAt`, filtered by any of `cardKey`, `individualId`, `status`, `type` and a `from` (inclusive) / `to` (exclusive) window. Pass the answer's `nextCursor` as `cursor`, with the same filters, for the next (older) page: transactions recorded meanwhile never shift a page; `nextCursor` is null on the last page. A filter naming a card or individual that is not yours matches nothing. Empty when the processing system is not configured for you.
         *
         *     Pipeline `list-transactions`: es512-jwt → rate-limit → validate (query: transactions-search-query) → operation (list-transactions).
         */
        get: operations["list-transactions"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/transactions/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get transaction
         * @description One of your transactions with its `history`: every step of its life, oldest first.
         *
         *     Pipeline `get-transaction`: es512-jwt → rate-limit → ownership (transaction) → operation (get-transaction).
         */
        get: operations["get-transaction"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/cards/{id}/wallet-provisioning/apple-pay": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Provision a card to Apple Pay
         * @description Takes what PassKit's `PKAddPaymentPassViewController` delegate (`certificates`, `nonce`, `nonceSignature`) gave your app and answers what Apple Pay (`PKAddPaymentPassRequest`) needs to add the card, made by the card processing system and encrypted for the wallet: pass it on unchanged. The card must be ACTIVE (or a physical card not yet activated where your settings allow it), else 409 `card_not_active` and the processor is not called. Answered `Cache-Control: no-store`; the gateway writes neither the inputs nor the payload to any log, table or replay store (the audit entry `card.wallet.provision` names the card and the wallet only). Takes no `Idempotency-Key`: calling again simply makes another payload. In sandbox mode the payload has the right encoding and size but is not a real wallet cryptogram.
         *
         *     Pipeline `provision-card-apple-pay`: es512-jwt → rate-limit → ownership (card) → sensitive-data → validate (body: wallet-provisioning-apple-pay) → operation (provision-card-apple-pay).
         */
        post: operations["provision-card-apple-pay"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/cards/{id}/wallet-provisioning/google-pay": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Provision a card to Google Pay
         * @description Takes what the Google Pay SDK (`walletAccountId`, `deviceId`) gave your app and answers what Google Pay's `pushTokenize` needs to add the card, made by the card processing system and encrypted for the wallet: pass it on unchanged. The card must be ACTIVE (or a physical card not yet activated where your settings allow it), else 409 `card_not_active` and the processor is not called. Answered `Cache-Control: no-store`; the gateway writes neither the inputs nor the payload to any log, table or replay store (the audit entry `card.wallet.provision` names the card and the wallet only). Takes no `Idempotency-Key`: calling again simply makes another payload. In sandbox mode the payload has the right encoding and size but is not a real wallet cryptogram.
         *
         *     Pipeline `provision-card-google-pay`: es512-jwt → rate-limit → ownership (card) → sensitive-data → validate (body: wallet-provisioning-google-pay) → operation (provision-card-google-pay).
         */
        post: operations["provision-card-google-pay"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/cards/{id}/tokens": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List a card's tokens
         * @description Every network token of the card (wallets and merchants), newest first; a card has a handful, so there is no paging.
         *
         *     Pipeline `list-card-tokens`: es512-jwt → rate-limit → ownership (card) → operation (list-card-tokens).
         */
        get: operations["list-card-tokens"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tokens": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Search tokens
         * @description Your network tokens across all your cards, newest first by `createdAt` (ties by `_id`), filtered by any of `cardKey`, `status` and `walletProvider` (combined with AND). Pass the answer's `nextCursor` as `cursor`, with the same filters, for the next (older) page: tokens made meanwhile never shift a page; `nextCursor` is null on the last page. A cursor changed, or used with other filters, is 400. A `cardKey` that is not yours matches nothing.
         *
         *     Pipeline `list-tokens`: es512-jwt → rate-limit → validate (query: tokens-search-query) → operation (list-tokens).
         */
        get: operations["list-tokens"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tokens/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get token
         * @description One of your network tokens with its `history`: every status it took, oldest first.
         *
         *     Pipeline `get-token`: es512-jwt → rate-limit → ownership (token) → operation (get-token).
         */
        get: operations["get-token"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tokens/{id}/suspend": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Suspend token
         * @description An `active` token becomes `suspended`, `suspendedBy: partner`: it stays suspended when its card is unlocked. The processor makes the change first (with your `Idempotency-Key`'s operation id: a retry is applied once), then the gateway records its answer, the token's history, the audit entry and a `token.updated` event, before the 200. A suspended token answers 200 unchanged (one the card's state suspended becomes yours, with an event); any other status is 409 `token_transition_invalid`. A processor that does not answer is 504 `upstream_timeout`: retry with the same `Idempotency-Key` (docs/tokens.md).
         *
         *     Pipeline `suspend-token`: es512-jwt → rate-limit → ownership (token) → validate (body: token-change) → idempotency → operation (suspend-token).
         */
        post: operations["suspend-token"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tokens/{id}/resume": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Resume token
         * @description A `suspended` token becomes `active` again; its card must be ACTIVE (else 409 `card_not_active`: unlock the card). The processor makes the change first (with your `Idempotency-Key`'s operation id: a retry is applied once), then the gateway records its answer, the token's history, the audit entry and a `token.updated` event, before the 200. An active token answers 200 unchanged; any other status is 409 `token_transition_invalid`. A processor that does not answer is 504 `upstream_timeout`: retry with the same `Idempotency-Key` (docs/tokens.md).
         *
         *     Pipeline `resume-token`: es512-jwt → rate-limit → ownership (token) → validate (body: token-change) → idempotency → operation (resume-token).
         */
        post: operations["resume-token"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/tokens/{id}/deactivate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Deactivate token
         * @description The token is `deactivated` for good: the wallet no longer holds it. The processor makes the change first (with your `Idempotency-Key`'s operation id: a retry is applied once), then the gateway records its answer, the token's history, the audit entry and a `token.updated` event, before the 200. A `deactivated` or `declined` token is 409 `token_transition_invalid`. A processor that does not answer is 504 `upstream_timeout`: retry with the same `Idempotency-Key` (docs/tokens.md).
         *
         *     Pipeline `deactivate-token`: es512-jwt → rate-limit → ownership (token) → validate (body: token-change) → idempotency → operation (deactivate-token).
         */
        post: operations["deactivate-token"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List events
         * @description Your events of the last 30 days, newest first, optionally of one `type`. Pass the answer's `nextCursor` as `after` for the next (older) page: events written meanwhile never shift a page; `nextCursor` is null on the last page.
         *
         *     Pipeline `list-events`: es512-jwt → rate-limit → validate (query: events-query) → operation (list-events).
         */
        get: operations["list-events"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/events/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get event
         * @description One of your events, as the list answers it.
         *
         *     Pipeline `get-event`: es512-jwt → rate-limit → ownership (event) → operation (get-event).
         */
        get: operations["get-event"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/events/{id}/resend": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Resend event
         * @description Sends the event again, with the same id and body, to every enabled endpoint subscribed to its type (also one that failed to receive it). Resends are not ordered among the card's other events.
         *
         *     Pipeline `resend-event`: es512-jwt → rate-limit → ownership (event) → validate (body: empty-body) → operation (resend-event).
         */
        post: operations["resend-event"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/endpoints": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List webhook endpoints
         * @description Your endpoints, oldest first, never with their secrets.
         *
         *     Pipeline `list-webhook-endpoints`: es512-jwt → rate-limit → operation (list-webhook-endpoints).
         */
        get: operations["list-webhook-endpoints"];
        put?: never;
        /**
         * Create webhook endpoint
         * @description Registers a URL to receive your events (all types when `events` is omitted). The answer carries the signing `secret`, shown only here. The URL must be https and resolve to public addresses (in sandbox mode, http and localhost are accepted); otherwise 400. At most 16 endpoints (409 `conflict`).
         *
         *     Pipeline `create-webhook-endpoint`: es512-jwt → rate-limit → sensitive-data → validate (body: webhook-endpoint-create) → operation (create-webhook-endpoint).
         */
        post: operations["create-webhook-endpoint"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/endpoints/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get webhook endpoint
         * @description One of your endpoints, never with its secret.
         *
         *     Pipeline `get-webhook-endpoint`: es512-jwt → rate-limit → ownership (webhook-endpoint) → operation (get-webhook-endpoint).
         */
        get: operations["get-webhook-endpoint"];
        put?: never;
        post?: never;
        /**
         * Delete webhook endpoint
         * @description Deletes the endpoint: its pending deliveries are cancelled.
         *
         *     Pipeline `delete-webhook-endpoint`: es512-jwt → rate-limit → ownership (webhook-endpoint) → operation (delete-webhook-endpoint).
         */
        delete: operations["delete-webhook-endpoint"];
        options?: never;
        head?: never;
        /**
         * Update webhook endpoint
         * @description Changes the URL (checked as at creation), the event types, the description, or enables / disables it.
         *
         *     Pipeline `update-webhook-endpoint`: es512-jwt → rate-limit → ownership (webhook-endpoint) → validate (body: webhook-endpoint-update) → operation (update-webhook-endpoint).
         */
        patch: operations["update-webhook-endpoint"];
        trace?: never;
    };
    "/webhooks/endpoints/{id}/rotate-secret": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Rotate webhook secret
         * @description A new signing secret, shown only here. For 24 hours deliveries are signed with both, so `Partner-Gateway-Signature` carries two `v1=` values (the new one first).
         *
         *     Pipeline `rotate-webhook-secret`: es512-jwt → rate-limit → ownership (webhook-endpoint) → sensitive-data → validate (body: empty-body) → operation (rotate-webhook-secret).
         */
        post: operations["rotate-webhook-secret"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/endpoints/{id}/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List delivery attempts
         * @description The endpoint's delivery attempts, newest first: event, attempt number, time, HTTP status or error, duration, next retry. Pass `nextCursor` as `after` for the next page.
         *
         *     Pipeline `list-webhook-deliveries`: es512-jwt → rate-limit → ownership (webhook-endpoint) → validate (query: webhook-deliveries-query) → operation (list-webhook-deliveries).
         */
        get: operations["list-webhook-deliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/authorization-endpoint": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Get authorization endpoint
         * @description Your decision endpoint, never with its secret; 404 when you have none.
         *
         *     Pipeline `get-authorization-endpoint`: es512-jwt → rate-limit → operation (get-authorization-endpoint).
         */
        get: operations["get-authorization-endpoint"];
        put?: never;
        /**
         * Create authorization endpoint
         * @description Registers your decision endpoint: the gateway POSTs it a signed `authorization.request` for each purchase of your cards and applies your answer. The answer carries the signing `secret`, shown only here. The URL must be https and resolve to public addresses (in sandbox mode, http and localhost are accepted); otherwise 400. One per partner: a second one is 409 `authorization_endpoint_exists`.
         *
         *     Pipeline `create-authorization-endpoint`: es512-jwt → rate-limit → sensitive-data → validate (body: authorization-endpoint-create) → operation (create-authorization-endpoint).
         */
        post: operations["create-authorization-endpoint"];
        /**
         * Delete authorization endpoint
         * @description Deletes your decision endpoint and its secrets: purchases are no longer sent to you. 404 when you have none.
         *
         *     Pipeline `delete-authorization-endpoint`: es512-jwt → rate-limit → operation (delete-authorization-endpoint).
         */
        delete: operations["delete-authorization-endpoint"];
        options?: never;
        head?: never;
        /**
         * Update authorization endpoint
         * @description Changes the URL (checked as at creation), `timeoutMs`, `defaultDecision`, or enables / disables it (a disabled endpoint is not asked). 404 when you have none.
         *
         *     Pipeline `update-authorization-endpoint`: es512-jwt → rate-limit → validate (body: authorization-endpoint-update) → operation (update-authorization-endpoint).
         */
        patch: operations["update-authorization-endpoint"];
        trace?: never;
    };
    "/authorization-endpoint/rotate-secret": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Rotate authorization endpoint secret
         * @description A new signing secret, shown only here. For 24 hours requests are signed with both, so `Partner-Gateway-Signature` carries two `v1=` values (the new one first). 404 when you have no endpoint.
         *
         *     Pipeline `rotate-authorization-endpoint-secret`: es512-jwt → rate-limit → sensitive-data → validate (body: empty-body) → operation (rotate-authorization-endpoint-secret).
         */
        post: operations["rotate-authorization-endpoint-secret"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/simulate/cards/{id}/transactions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Simulate a card transaction
         * @description Sandbox mode only (404 elsewhere). The shortcut: the processing sandbox records a transaction on the card: `authorization` (the default) is PENDING, `clearing` a force-post (SETTLED with no authorization before it), `decline` DECLINED with its `declineReason`. It then appears in the transactions and as a `transaction.created` event. The lifecycle routes (`/simulate/cards/{id}/authorizations`, `/simulate/transactions/{id}/...`) play the steps of one transaction.
         *
         *     Pipeline `simulate-card-transaction`: es512-jwt → rate-limit → ownership (card) → validate (body: simulate-transaction) → idempotency → operation (simulate-card-transaction).
         */
        post: operations["simulate-card-transaction"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/simulate/cards/{id}/issuer-status": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Simulate an issuer status change
         * @description Sandbox mode only (404 elsewhere). The issuer sandbox sets the card's status on its own, whatever the partner transition table allows (as a fraud team or an expiry would); a `card.status_changed` event with `source: "issuer"` follows. A CLOSED card cannot change (409 `invalid_transition`).
         *
         *     Pipeline `simulate-card-issuer-status`: es512-jwt → rate-limit → ownership (card) → validate (body: simulate-issuer-status) → idempotency → operation (simulate-card-issuer-status).
         */
        post: operations["simulate-card-issuer-status"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/simulate/cards/{id}/authorizations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Simulate an authorization
         * @description Sandbox mode only (404 elsewhere). The processing sandbox authorizes a purchase or withdrawal on the card: a PENDING transaction, a `transaction.created` event. `authorizationId` is the processor's id of the authorization: sending the same one again plays the processor's retry and answers the same transaction, nothing new.
         *
         *     Pipeline `simulate-card-authorization`: es512-jwt → rate-limit → ownership (card) → validate (body: simulate-authorization) → idempotency → operation (simulate-card-authorization).
         */
        post: operations["simulate-card-authorization"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/simulate/transactions/{id}/clearing": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Simulate a clearing
         * @description Sandbox mode only (404 elsewhere). Clears a PENDING transaction in full, or for less than its amount (`settledAmount`): SETTLED, a `transaction.updated` event (`change: clearing`).
         *
         *     Pipeline `simulate-transaction-clearing`: es512-jwt → rate-limit → ownership (transaction) → validate (body: simulate-transaction-step) → idempotency → operation (simulate-transaction-clearing).
         */
        post: operations["simulate-transaction-clearing"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/simulate/transactions/{id}/reversal": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Simulate a reversal
         * @description Sandbox mode only (404 elsewhere). Reverses a PENDING transaction in full (REVERSED, `amount` 0) or in part (`amount` lowered, still PENDING): a `transaction.updated` event (`change: reversal`).
         *
         *     Pipeline `simulate-transaction-reversal`: es512-jwt → rate-limit → ownership (transaction) → validate (body: simulate-transaction-step) → idempotency → operation (simulate-transaction-reversal).
         */
        post: operations["simulate-transaction-reversal"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/simulate/transactions/{id}/expiry": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Simulate an expiry
         * @description Sandbox mode only (404 elsewhere). A PENDING authorization that was never cleared expires: EXPIRED, a `transaction.updated` event (`change: expiry`).
         *
         *     Pipeline `simulate-transaction-expiry`: es512-jwt → rate-limit → ownership (transaction) → validate (body: empty-body) → idempotency → operation (simulate-transaction-expiry).
         */
        post: operations["simulate-transaction-expiry"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/simulate/transactions/{id}/refund": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Simulate a refund
         * @description Sandbox mode only (404 elsewhere). Refunds a SETTLED purchase, in full (what is left of its settled amount) or in part: a new REFUND transaction whose `relatedTransactionId` is the purchase, and its `transaction.created` event.
         *
         *     Pipeline `simulate-transaction-refund`: es512-jwt → rate-limit → ownership (transaction) → validate (body: simulate-transaction-step) → idempotency → operation (simulate-transaction-refund).
         */
        post: operations["simulate-transaction-refund"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/simulate/cards/{id}/tokenizations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Simulate a tokenization
         * @description Sandbox mode only (404 elsewhere). A wallet or a merchant asks to tokenize the card: the processing sandbox runs the whole tokenization request through the gateway's decision (the card's state, the wallet controls, your decision endpoint when enrolled for `tokenization.request`, the network's verdict) and answers the token it made: `active`, `pending_verification` (the `token.verification_code` event carries the code) or `declined`, with its `token.created` event. `tokenizationId` is the processor's id of the request: the same one again plays its retry and answers the same token, nothing new.
         *
         *     Pipeline `simulate-card-tokenization`: es512-jwt → rate-limit → ownership (card) → validate (body: simulate-tokenization) → idempotency → operation (simulate-card-tokenization).
         */
        post: operations["simulate-card-tokenization"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/simulate/tokens/{id}/verify": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Simulate a verification
         * @description Sandbox mode only (404 elsewhere). The cardholder types `code` into the wallet: the right one makes the `pending_verification` token `active`; a wrong one is 409 `verification_failed` with `attemptsLeft` (0: the token is now `declined`). A token that is not `pending_verification` is 409 `token_transition_invalid`.
         *
         *     Pipeline `simulate-token-verification`: es512-jwt → rate-limit → ownership (token) → validate (body: simulate-token-verification) → idempotency → operation (simulate-token-verification).
         */
        post: operations["simulate-token-verification"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/simulate/tokens/{id}/authorizations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Simulate a purchase with a token
         * @description Sandbox mode only (404 elsewhere). The processing sandbox authorizes a purchase made with the token (the phone's wallet, or the merchant keeping the card on file), decided like any other on the token's card now: a transaction with `tokenId` and `walletProvider`, and its `transaction.created` event. `authorizationId` as for `POST /simulate/cards/{id}/authorizations`.
         *
         *     Pipeline `simulate-token-authorization`: es512-jwt → rate-limit → ownership (token) → validate (body: simulate-authorization) → idempotency → operation (simulate-token-authorization).
         */
        post: operations["simulate-token-authorization"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface webhooks {
    "card.created": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A card was issued, replaced or re-issued
         * @description The `card.created` event, POSTed to every enabled endpoint subscribed to it, and listed by `GET /events` with the same bytes. docs/events.md says when it is written.
         */
        post: operations["event-card-created"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "card.status_changed": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A card's status changed
         * @description The `card.status_changed` event, POSTed to every enabled endpoint subscribed to it, and listed by `GET /events` with the same bytes. docs/events.md says when it is written.
         */
        post: operations["event-card-status-changed"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "card.updated": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A card's nickname, emboss name, 3DS phone or limits changed
         * @description The `card.updated` event, POSTed to every enabled endpoint subscribed to it, and listed by `GET /events` with the same bytes. docs/events.md says when it is written.
         */
        post: operations["event-card-updated"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "individual.created": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * An individual account was created
         * @description The `individual.created` event, POSTed to every enabled endpoint subscribed to it, and listed by `GET /events` with the same bytes. docs/events.md says when it is written.
         */
        post: operations["event-individual-created"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "transaction.created": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A transaction was recorded on a card
         * @description The `transaction.created` event, POSTed to every enabled endpoint subscribed to it, and listed by `GET /events` with the same bytes. docs/events.md says when it is written.
         */
        post: operations["event-transaction-created"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "transaction.updated": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A transaction took a step: cleared, reversed or expired
         * @description The `transaction.updated` event, POSTed to every enabled endpoint subscribed to it, and listed by `GET /events` with the same bytes. docs/events.md says when it is written.
         */
        post: operations["event-transaction-updated"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "token.created": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A network token of a card was made (a wallet or a merchant tokenized it)
         * @description The `token.created` event, POSTed to every enabled endpoint subscribed to it, and listed by `GET /events` with the same bytes. docs/events.md says when it is written.
         */
        post: operations["event-token-created"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "token.updated": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A token's status, card or device changed
         * @description The `token.updated` event, POSTed to every enabled endpoint subscribed to it, and listed by `GET /events` with the same bytes. docs/events.md says when it is written.
         */
        post: operations["event-token-updated"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "token.verification_code": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A one-time code for you to deliver to the cardholder
         * @description The `token.verification_code` event, POSTed to every enabled endpoint subscribed to it, and listed by `GET /events` with the same bytes. docs/events.md says when it is written.
         */
        post: operations["event-token-verification-code"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface components {
    schemas: {
        "individual-create": {
            /** @description Account/program under which the individual is created */
            baasAccountClientId?: number;
            firstName: string;
            middleName: string;
            lastName: string;
            country: string;
            city: string;
            stateProvince?: string;
            zipCode: string;
            buildingNumber: string;
            /** @enum {string} */
            idType: "PASSPORT" | "DRIVER_LICENSE" | "RESIDENCE_CARD" | "MINOR_WITHOUT_ID" | "OTHER";
            address1: string;
            address2?: string;
            passportNumber: string;
            /** Format: date */
            issuingDate: string;
            /** Format: date */
            validityDate: string;
            passportCountry: string;
            taxCountry?: string;
            taxIdNumber?: string;
            birthCountry: string;
            /** Format: date */
            birthDate: string;
            nationality: string;
            /**
             * @description FATCA indicator: T (US person) or F
             * @default F
             * @enum {string}
             */
            fatca?: "T" | "F";
            /** @description E.164, e.g. +4915112345678 */
            phone: string;
            /** Format: email */
            email: string;
        };
        "card-issue": {
            /** @description MM/YYYY */
            expDate: string;
            /** @description The individual's clientID */
            clientCode: string;
            /** @description three upper-case letters */
            currency: string;
            productCode: string;
            /** @description 1-26 of A-Z a-z 0-9 . ' - /, no spaces */
            embossedName?: string;
            shippingAddressId?: string;
        };
        "card-status-change": {
            /** @description MM/YYYY */
            expDate: string;
            /** @description Free-form reason, kept in the audit log and status history */
            reason?: string;
        };
        "card-restrict": {
            /** @description MM/YYYY */
            expDate?: string;
            /** @description Free-form reason, kept in the audit log and status history */
            reason?: string;
            description?: string;
            /** @description Where the card was last seen */
            cardLocation?: string;
        };
        "card-nickname": {
            nickname: string;
        };
        "card-emboss-name": {
            /** @description 1-26 of A-Z a-z 0-9 . ' - /, no spaces */
            embossedName: string;
        };
        "card-replace": {
            /** @description MM/YYYY, the new card's expiry */
            expDate: string;
            /** @description Free-form reason, kept in the audit log and status history */
            reason?: string;
            /** @description Postal pin-mailer reference */
            pinMailer?: string;
        };
        "three-ds-answer": {
            answer: string;
        };
        "three-ds-phone": {
            /** @description E.164, at most 32 characters */
            phoneNumber: string;
        };
        /** @description An empty object: the operation takes no field, but the request carries this body (without one: 400 `body_required`) */
        "empty-body": Record<string, never>;
        "pin-change": {
            /** @description MM/YYYY */
            expDate: string;
            /** @description base64 of RSA-OAEP-256 ciphertext */
            pin: string;
        };
        "pin-force-lock": {
            /** @description MM/YYYY */
            expDate: string;
        };
        "card-authorize": {
            /** @description base64 of RSA-OAEP-256 ciphertext */
            pin: string;
        };
        "limits-patch": {
            /** @enum {string} */
            name: "dailyPurchase" | "monthlyPurchase" | "dailyWithdrawal" | "monthlyWithdrawal" | "singleTransaction";
            /** @description Amount in the card currency */
            value: number;
        }[];
        "limit-set": {
            /** @enum {string} */
            name: "dailyPurchase" | "monthlyPurchase" | "dailyWithdrawal" | "monthlyWithdrawal" | "singleTransaction";
            /** @description Amount in the card currency */
            value: number;
        };
        "spend-controls": {
            /** @description A purchase above it is declined (`amount_exceeded`); in the card currency, at most 2 decimals */
            maxAmountPerTransaction?: number;
            /** @description Only these merchant categories are allowed (`mcc_blocked` otherwise); 1 to 200 */
            allowedMccs?: string[];
            /** @description These merchant categories are declined (`mcc_blocked`); at most 200 */
            blockedMccs?: string[];
            /** @description Only merchants in these countries are allowed (`country_blocked` otherwise); 1 to 250 */
            allowedCountries?: string[];
            /** @description Merchants in these countries are declined (`country_blocked`); at most 250 */
            blockedCountries?: string[];
            /** @description Only tokens of these wallets may be made (tokenizations) and used (purchases): `wallet_provider_blocked` otherwise; 1 to 4 distinct. A purchase with the card itself passes */
            allowedWalletProviders?: ("apple_pay" | "google_pay" | "samsung_pay" | "merchant")[];
            /** @description Tokens of these wallets are declined (`wallet_provider_blocked`), for tokenizations and purchases; at most 4 distinct */
            blockedWalletProviders?: ("apple_pay" | "google_pay" | "samsung_pay" | "merchant")[];
            /** @description At most 4 rules, each over a rolling window of the card's approved authorizations (`velocity_exceeded`) */
            velocity?: ({
                /**
                 * @description The rolling window: the last hour, 24 hours, 7 days or 30 days
                 * @enum {string}
                 */
                window: "1h" | "24h" | "7d" | "30d";
                /** @description At most this many approved authorizations in the window */
                maxCount?: number;
                /** @description At most this much authorized in the window, in the card currency */
                maxAmount?: number;
            } | unknown | unknown)[];
        };
        "fee-check": {
            /** @enum {string} */
            CustomerType: "Consumer Debit" | "Business Debit" | "Consumer Prepaid" | "Business Prepaid";
            /** @enum {string} */
            ProductType: "R001" | "R002" | "R003" | "R004" | "R005" | "R006";
            cardKey?: string;
            clientId?: string;
            /** @description IBAN without spaces */
            iban?: string;
        } | unknown | unknown | unknown;
        "wallet-provisioning-apple-pay": {
            /** @description Apple's leaf and sub-CA certificates, leaf first, as PassKit gives them */
            certificates: string[];
            /** @description Standard base64 of 4 to 64 bytes: Apple's one-time nonce */
            nonce: string;
            /** @description Standard base64 of 16 to 512 bytes: the device's signature over the nonce */
            nonceSignature: string;
        };
        "wallet-provisioning-google-pay": {
            /** @description The client wallet account id the Google Pay SDK gives your app, 1 to 64 visible ASCII characters */
            walletAccountId: string;
            /** @description The stable hardware id the Google Pay SDK gives, 1 to 64 visible ASCII characters */
            deviceId: string;
        };
        "token-change": {
            /** @description Why: kept in the token's history */
            reason?: string;
        };
        "webhook-endpoint-create": {
            /** @description Where events are POSTed: https, resolving to public addresses only (in sandbox mode, http and localhost too) */
            url: string;
            /** @description The event types sent to the endpoint; `*` (the default) is every type, future ones included */
            events?: ("card.created" | "card.status_changed" | "card.updated" | "individual.created" | "transaction.created" | "transaction.updated" | "token.created" | "token.updated" | "token.verification_code" | "*")[];
            /** @description Your note about the endpoint */
            description?: string;
        };
        "webhook-endpoint-update": {
            /** @description Where events are POSTed: https, resolving to public addresses only (in sandbox mode, http and localhost too) */
            url?: string;
            /** @description The event types sent to the endpoint; `*` (the default) is every type, future ones included */
            events?: ("card.created" | "card.status_changed" | "card.updated" | "individual.created" | "transaction.created" | "transaction.updated" | "token.created" | "token.updated" | "token.verification_code" | "*")[];
            /** @description Your note about the endpoint */
            description?: string;
            /**
             * @description A disabled endpoint is sent nothing; events meanwhile are not queued for it
             * @enum {string}
             */
            status?: "enabled" | "disabled";
        };
        "authorization-endpoint-create": {
            /** @description Where authorization requests are POSTed: https, resolving to public addresses only (in sandbox mode, http and localhost too) */
            url: string;
            /** @description How long the gateway waits for your answer, in ms (100 to 1500; default 1000); past it your defaultDecision applies */
            timeoutMs?: number;
            /**
             * @description What applies to a purchase when your endpoint does not answer in time, answers an error or an answer of another shape (default decline); never to a tokenization
             * @enum {string}
             */
            defaultDecision?: "approve" | "decline";
            /** @description The requests your endpoint is sent (default ["authorization.request"]): add "tokenization.request" to decide tokenizations of your cards too (docs/tokens.md, "The decision") */
            requestTypes?: ("authorization.request" | "tokenization.request")[];
        };
        "authorization-endpoint-update": {
            /** @description Where authorization requests are POSTed: https, resolving to public addresses only (in sandbox mode, http and localhost too) */
            url?: string;
            /** @description How long the gateway waits for your answer, in ms (100 to 1500; default 1000); past it your defaultDecision applies */
            timeoutMs?: number;
            /**
             * @description What applies to a purchase when your endpoint does not answer in time, answers an error or an answer of another shape (default decline); never to a tokenization
             * @enum {string}
             */
            defaultDecision?: "approve" | "decline";
            /** @description The requests your endpoint is sent (default ["authorization.request"]): add "tokenization.request" to decide tokenizations of your cards too (docs/tokens.md, "The decision") */
            requestTypes?: ("authorization.request" | "tokenization.request")[];
            /**
             * @description A disabled endpoint is not asked: purchases are decided as if you had none
             * @enum {string}
             */
            status?: "enabled" | "disabled";
        };
        "simulate-transaction": {
            /** @description Amount in `currency` */
            amount: number;
            /** @description three upper-case letters */
            currency: string;
            /**
             * @description authorization (PENDING, the default), clearing (SETTLED) or decline (DECLINED)
             * @enum {string}
             */
            type?: "authorization" | "clearing" | "decline";
            merchant?: {
                name?: string;
                /** @description Merchant category code */
                mcc?: string;
                city?: string;
                country?: string;
            };
            /**
             * @description For a decline; default do_not_honor
             * @enum {string}
             */
            declineReason?: "insufficient_funds" | "card_inactive" | "card_locked" | "card_expired" | "limit_exceeded" | "suspected_fraud" | "do_not_honor" | "stand_in" | "mcc_blocked" | "country_blocked" | "amount_exceeded" | "velocity_exceeded" | "partner_declined" | "partner_timeout" | "partner_error" | "token_inactive" | "wallet_provider_blocked";
        };
        "simulate-issuer-status": {
            /** @enum {string} */
            status: "ACTIVE" | "LOCKED" | "CLOSED" | "LOST" | "STOLEN" | "FRAUD" | "MOBILE_LOST" | "RESTRICTED" | "TEMP_LOCKED";
            /** @description Free-form reason, kept in the audit log and status history */
            reason?: string;
        };
        "simulate-authorization": {
            /** @description In the card currency, at most 2 decimals */
            amount: number;
            /** @description The card currency when left out */
            currency?: string;
            /**
             * @description PURCHASE (the default) or WITHDRAWAL
             * @enum {string}
             */
            type?: "PURCHASE" | "WITHDRAWAL";
            merchant?: {
                name?: string;
                /** @description Merchant category code */
                mcc?: string;
                city?: string;
                country?: string;
            };
            /** @description The processor's id of the authorization; the same one again is its retry: the same transaction */
            authorizationId?: string;
        };
        "simulate-transaction-step": {
            /** @description Less than the whole, in the transaction currency; the whole when left out */
            amount?: number;
        };
        "simulate-tokenization": {
            /** @enum {string} */
            walletProvider: "apple_pay" | "google_pay" | "samsung_pay" | "merchant";
            /** @description What the wallet says about the device; the sandbox's default when left out */
            device?: {
                /** @enum {string} */
                type: "phone" | "watch" | "tablet" | "wearable" | "computer" | "other";
                name?: string;
                /** @description ISO 3166-1 alpha-2 */
                ipCountry?: string;
            };
            /**
             * @description The network's risk verdict: approve (the default), require_verification or decline
             * @enum {string}
             */
            networkVerdict?: "approve" | "require_verification" | "decline";
            /** @description The processor's tokenization id; the same again plays the processor's retry (the same token, nothing new) */
            tokenizationId?: string;
        };
        "simulate-token-verification": {
            /** @description What the cardholder typed */
            code: string;
        };
        /** @description A card (spec 2.3) with the locally kept nickname and 3DS phone. Never holds the card number or CVV. */
        Card: {
            /** @description Issuer-platform identifier of the card: the `{id}` of card routes */
            cardKey: string;
            /** @description Masked card number */
            cardMask: string;
            /** @enum {string} */
            type: "virtual" | "physical";
            /**
             * @description CardStatus (spec 3.1; docs/cards.md maps issuer codes to it)
             * @enum {string}
             */
            status: "ACTIVE" | "LOCKED" | "CLOSED" | "LOST" | "STOLEN" | "FRAUD" | "MOBILE_LOST" | "RESTRICTED" | "TEMP_LOCKED";
            /** @description Raw issuer-platform status code (00, I1, L1, T1, S1 to S6) */
            statusCode: string;
            /** @description Three upper-case letters */
            currency: string;
            /** @enum {string} */
            ownerType: "individual" | "b2b";
            /** @description The individual _id or the B2B tenant _id, as ownerType says */
            ownerId: string;
            /**
             * Format: date-time
             * @description ISO 8601 date-time (UTC)
             */
            createdAt: string;
            productCode: string;
            /** @description The holder's clientID */
            holderClientCode: string | null;
            /** @description Card expiry, MM/YYYY */
            expDate: string;
            /** @description Name embossed on the card; null when none */
            embossedName: string | null;
            /** @description Nickname kept by the gateway only; null until set */
            nickname: string | null;
            /** @description 3-D Secure phone number kept by the gateway only (E.164); null until set */
            threeDsPhone: string | null;
        };
        /** @description A card in an individual's card list: the first nine fields of the card (spec 2.3) */
        CardListItem: {
            /** @description Issuer-platform identifier of the card: the `{id}` of card routes */
            cardKey: string;
            /** @description Masked card number */
            cardMask: string;
            /** @enum {string} */
            type: "virtual" | "physical";
            /**
             * @description CardStatus (spec 3.1; docs/cards.md maps issuer codes to it)
             * @enum {string}
             */
            status: "ACTIVE" | "LOCKED" | "CLOSED" | "LOST" | "STOLEN" | "FRAUD" | "MOBILE_LOST" | "RESTRICTED" | "TEMP_LOCKED";
            /** @description Raw issuer-platform status code (00, I1, L1, T1, S1 to S6) */
            statusCode: string;
            /** @description Three upper-case letters */
            currency: string;
            /** @enum {string} */
            ownerType: "individual" | "b2b";
            /** @description The individual _id or the B2B tenant _id, as ownerType says */
            ownerId: string;
            /**
             * Format: date-time
             * @description ISO 8601 date-time (UTC)
             */
            createdAt: string;
        };
        /** @description A card in the partner-wide list: the card without productCode and holderClientCode, with its nickname (docs/card-search.md) */
        CardSummary: {
            /** @description Issuer-platform identifier of the card: the `{id}` of card routes */
            cardKey: string;
            /** @description Masked card number */
            cardMask: string;
            /** @enum {string} */
            type: "virtual" | "physical";
            /**
             * @description CardStatus (spec 3.1; docs/cards.md maps issuer codes to it)
             * @enum {string}
             */
            status: "ACTIVE" | "LOCKED" | "CLOSED" | "LOST" | "STOLEN" | "FRAUD" | "MOBILE_LOST" | "RESTRICTED" | "TEMP_LOCKED";
            /** @description Raw issuer-platform status code (00, I1, L1, T1, S1 to S6) */
            statusCode: string;
            /** @description Three upper-case letters */
            currency: string;
            /** @enum {string} */
            ownerType: "individual" | "b2b";
            /** @description The individual _id or the B2B tenant _id, as ownerType says */
            ownerId: string;
            /** @description Nickname kept by the gateway only; null until set */
            nickname: string | null;
            /** @description Name embossed on the card; null when none */
            embossedName: string | null;
            /** @description Card expiry, MM/YYYY */
            expDate: string;
            /**
             * Format: date-time
             * @description ISO 8601 date-time (UTC)
             */
            createdAt: string;
        };
        /** @description A page of the partner-wide card list, newest first */
        CardPage: {
            /** @constant */
            success: true;
            data: components["schemas"]["CardSummary"][];
            pagination: components["schemas"]["Pagination"];
        };
        /** @description Card status result (spec 2.4) */
        CardStatusResult: {
            /** @description Issuer-platform identifier of the card: the `{id}` of card routes */
            cardKey: string;
            /**
             * @description CardStatus (spec 3.1; docs/cards.md maps issuer codes to it)
             * @enum {string}
             */
            status: "ACTIVE" | "LOCKED" | "CLOSED" | "LOST" | "STOLEN" | "FRAUD" | "MOBILE_LOST" | "RESTRICTED" | "TEMP_LOCKED";
            /** @description Raw issuer-platform status code (00, I1, L1, T1, S1 to S6) */
            statusCode: string;
        };
        /** @description Card limit (spec 2.5) */
        CardLimit: {
            /** @description dailyPurchase, monthlyPurchase, dailyWithdrawal, monthlyWithdrawal or singleTransaction */
            name: string;
            /** @description The limit, in the card currency */
            value: number;
            currency: string;
            /** @description Spent against the limit so far */
            used: number;
            /** @description max(0, value − used) */
            available: number;
        };
        /** @description What is left of one card limit */
        AvailableLimit: {
            /** @description max(0, value − used), in the card currency */
            available: number;
        };
        /** @description Spend controls: a card's own, or your default for all your cards (docs/spend-controls.md). Only the fields set; `{}` when none */
        SpendControls: {
            /** @description A purchase above it is declined (`amount_exceeded`), in the card currency */
            maxAmountPerTransaction?: number;
            /** @description Only these merchant categories are allowed */
            allowedMccs?: string[];
            /** @description These merchant categories are declined */
            blockedMccs?: string[];
            /** @description Only merchants in these countries are allowed */
            allowedCountries?: string[];
            /** @description Merchants in these countries are declined */
            blockedCountries?: string[];
            /** @description A purchase with a token is allowed only from these wallets (`wallet_provider_blocked`); card purchases are not affected */
            allowedWalletProviders?: ("apple_pay" | "google_pay" | "samsung_pay" | "merchant")[];
            /** @description A purchase with a token from these wallets is declined (`wallet_provider_blocked`) */
            blockedWalletProviders?: ("apple_pay" | "google_pay" | "samsung_pay" | "merchant")[];
            /** @description Rules over rolling windows of the card's approved authorizations */
            velocity?: {
                /** @enum {string} */
                window: "1h" | "24h" | "7d" | "30d";
                /** @description At most this many approved authorizations in the window */
                maxCount?: number;
                /** @description At most this much authorized in the window, in the card currency */
                maxAmount?: number;
            }[];
        };
        /** @description The CVV2, encrypted with RSA-OAEP (SHA-256) under the securityKey you sent */
        EncryptedCvv: {
            /** @description base64 of the RSA-OAEP-256 ciphertext; decrypt it with your RSA private key */
            cvv: string;
        };
        /** @description The full card number, encrypted with RSA-OAEP (SHA-256) under the securityKey you sent */
        EncryptedCardNumber: {
            /** @description base64 of the RSA-OAEP-256 ciphertext; decrypt it with your RSA private key */
            cardNumber: string;
        };
        /** @description The issuer's key to encrypt PIN blocks with (RSA-OAEP-256) for the PIN operations */
        PinEncryptionKey: {
            keyId: string;
            /** @description RSA-OAEP-256 */
            algorithm: string;
            /** @description RSA public key (PEM, SPKI) */
            publicKey: string;
        };
        /** @description Fee result (spec 2.6) */
        FeeResult: {
            /** @description CARD_ISSUING_FEE or CARD_DELIVERY_FEE, fixed by the route */
            OperationType: string;
            CustomerType: string;
            ProductType: string;
            /** @description The fee */
            fee: number;
            currency: string;
        };
        /** @description A postal-carrier or courier delivery method */
        DeliveryMethod: {
            id: string;
            /** @description postal or courier */
            type: string;
            carrier: string;
            name: string;
            /** @description Estimated delivery time in days */
            estimatedDays: number;
            /** @description Delivery fee */
            fee: number;
            currency: string;
        };
        /** @description Delivery methods of a country (spec 4.4) */
        DeliveryMethods: {
            /** @description The lookup result */
            data: {
                success: boolean;
                /** @description ISO 3166-1 alpha-2 */
                country: string;
                deliveryMethods: components["schemas"]["DeliveryMethod"][];
            };
        };
        /** @description Identity data of the individual; document numbers masked to their last 4 characters */
        PersonalInfo: {
            firstName: string;
            middleName: string;
            lastName: string;
            /** Format: date */
            birthDate: string;
            /** @description ISO 3166-1 alpha-2 */
            birthCountry: string;
            /** @description ISO 3166-1 alpha-2 */
            nationality: string;
            /** Format: email */
            email: string;
            /** @description E.164 */
            phone: string;
            /** @enum {string} */
            idType: "PASSPORT" | "DRIVER_LICENSE" | "RESIDENCE_CARD" | "MINOR_WITHOUT_ID" | "OTHER";
            /** @description Masked: only the last 4 characters are shown */
            passportNumber: string;
            /** @description ISO 3166-1 alpha-2 */
            passportCountry: string;
            /** Format: date */
            issuingDate: string;
            /** Format: date */
            validityDate: string;
            /** @description ISO 3166-1 alpha-2 */
            taxCountry: string | null;
            /** @description Masked: only the last 4 characters are shown */
            taxIdNumber: string;
            /** @enum {string} */
            fatca: "T" | "F";
        };
        /** @description Postal address of the individual */
        Address: {
            address1: string;
            /** @description Second address line */
            address2: string | null;
            buildingNumber: string;
            city: string;
            /** @description State or province */
            stateProvince: string | null;
            zipCode: string;
            /** @description ISO 3166-1 alpha-2 */
            country: string;
        };
        /** @description Individual account (spec 2.1) */
        IndividualAccount: {
            /** @description 24-character hexadecimal id */
            _id: string;
            /** @description The account-creation upstream's client id: the clientCode of the individual's cards */
            clientID: string | null;
            /** @description Account/program under which the individual was created */
            baasAccountClientId: number | null;
            personalInfo: components["schemas"]["PersonalInfo"];
            address: components["schemas"]["Address"];
            /**
             * @description APPROVED once the account exists (PENDING is internal and never returned)
             * @enum {string}
             */
            applicationStatus: "APPROVED";
            /**
             * @description How the record shows in the operator's dashboard
             * @enum {string}
             */
            dashboardStatus: "ACTIVE" | "SUSPENDED" | "CLOSED";
            /**
             * Format: date-time
             * @description ISO 8601 date-time (UTC)
             */
            createdAt: string;
            /**
             * Format: date-time
             * @description ISO 8601 date-time (UTC)
             */
            updatedAt: string;
        };
        /** @description Individual account summary (list and /me) */
        IndividualSummary: {
            /** @description 24-character hexadecimal id */
            _id: string;
            /** @description The account-creation upstream's client id */
            clientID: string | null;
            firstName: string;
            lastName: string;
            /**
             * @description APPROVED once the account exists (PENDING is internal and never returned)
             * @enum {string}
             */
            applicationStatus: "APPROVED";
            /**
             * @description How the record shows in the operator's dashboard
             * @enum {string}
             */
            dashboardStatus: "ACTIVE" | "SUSPENDED" | "CLOSED";
            /**
             * Format: date-time
             * @description ISO 8601 date-time (UTC)
             */
            createdAt: string;
        };
        /** @description A page of the partner's individuals, newest first */
        IndividualList: {
            /** @description The partner's individuals across all pages */
            count: number;
            data: components["schemas"]["IndividualSummary"][];
        };
        /** @description An audit entry of a change on the individual or its cards */
        AuditLogEntry: {
            _id: string;
            /** @description individual.create, card.issue.virtual, card.lock, card.cvv.read, ... */
            operation: string;
            /** @enum {string} */
            targetType: "individual" | "card";
            /** @description The individual _id or the cardKey */
            targetId: string;
            /** @enum {string} */
            outcome: "success" | "failure";
            /** @description X-Request-Id of the request that made the change */
            requestId: string | null;
            /** @description Safe details (card mask and type, clientID, status codes ...); never a secret */
            details: {
                [key: string]: string | number | boolean | null;
            };
            /**
             * Format: date-time
             * @description ISO 8601 date-time (UTC)
             */
            createdAt: string;
        };
        /** @description A page of audit entries, newest first */
        AuditLogPage: {
            data: components["schemas"]["AuditLogEntry"][];
            pagination: components["schemas"]["Pagination"];
        };
        /** @description One status change of a card of the individual (card creation first) */
        CardStatusHistoryEntry: {
            _id: string;
            cardKey: string;
            /** @description card.issue, card.lock, card.restrict.lost, card.replace, ... */
            operation: string;
            /**
             * @description null for the card creation
             * @enum {string|null}
             */
            oldStatus: "ACTIVE" | "LOCKED" | "CLOSED" | "LOST" | "STOLEN" | "FRAUD" | "MOBILE_LOST" | "RESTRICTED" | "TEMP_LOCKED" | null;
            /**
             * @description CardStatus (spec 3.1; docs/cards.md maps issuer codes to it)
             * @enum {string}
             */
            newStatus: "ACTIVE" | "LOCKED" | "CLOSED" | "LOST" | "STOLEN" | "FRAUD" | "MOBILE_LOST" | "RESTRICTED" | "TEMP_LOCKED";
            /** @description null for the card creation */
            oldStatusCode: string | null;
            /** @description Raw issuer-platform status code (00, I1, L1, T1, S1 to S6) */
            newStatusCode: string;
            /** @description The reason sent with the change */
            reason: string | null;
            /**
             * Format: date-time
             * @description ISO 8601 date-time (UTC)
             */
            createdAt: string;
        };
        /** @description A page of card status changes, newest first */
        CardStatusHistoryPage: {
            data: components["schemas"]["CardStatusHistoryEntry"][];
            pagination: components["schemas"]["Pagination"];
        };
        /** @description A card transaction: one object from its first step to its last (docs/transactions.md) */
        Transaction: {
            /** @description The transaction id (the card processing system's) */
            _id: string;
            cardKey: string;
            /** @description The individual the card belongs to; null for a B2B card */
            individualId: string | null;
            /** @description What is authorized now: a partial reversal lowers it, a full one makes it 0; type says which way the money went */
            amount: number;
            currency: string;
            /** @enum {string} */
            type: "PURCHASE" | "WITHDRAWAL" | "REFUND";
            /**
             * @description PENDING (authorized, not cleared), SETTLED, DECLINED, REVERSED (fully), EXPIRED (never cleared)
             * @enum {string}
             */
            status: "PENDING" | "SETTLED" | "DECLINED" | "REVERSED" | "EXPIRED";
            /** @description Where the transaction happened */
            merchant: {
                name: string;
                /** @description Merchant category code */
                mcc: string;
                city: string;
                country: string;
            };
            /**
             * Format: date-time
             * @description ISO 8601 date-time (UTC)
             */
            createdAt: string;
            /**
             * Format: date-time
             * @description When its latest step happened
             */
            updatedAt: string;
            /** @description The cleared amount once SETTLED (may be less than amount); null before */
            settledAmount: number | null;
            /**
             * @description Why it was declined (docs/transactions.md, "Decline reasons"); null unless DECLINED
             * @enum {string|null}
             */
            declineReason: "insufficient_funds" | "card_inactive" | "card_locked" | "card_expired" | "limit_exceeded" | "suspected_fraud" | "do_not_honor" | "stand_in" | "mcc_blocked" | "country_blocked" | "amount_exceeded" | "velocity_exceeded" | "partner_declined" | "partner_timeout" | "partner_error" | "token_inactive" | "wallet_provider_blocked" | null;
            /** @description On a REFUND: the purchase it refunds; null otherwise */
            relatedTransactionId: string | null;
            /** @description Every step, oldest first */
            history: components["schemas"]["TransactionStep"][];
            /** @description The network token the purchase was made with (docs/tokens.md); absent on a purchase with the card itself */
            tokenId?: string;
            /**
             * @description The wallet of that token; absent on a purchase with the card itself
             * @enum {string}
             */
            walletProvider?: "apple_pay" | "google_pay" | "samsung_pay" | "merchant";
            /** @description null when the gateway was not asked (a force-post, a refund, a processor that does not ask) */
            authorization: {
                /**
                 * @description What decided: the card state, the state of the token it was made with, the spend controls, your decision endpoint, its default decision, or nothing refused
                 * @enum {string}
                 */
                decidedBy: "card_state" | "token_state" | "spend_controls" | "partner" | "partner_default" | "approved";
                /** @description Which state, control or rule decided (`card.status.LOCKED`, `card.blockedMccs`, `partner.velocity.1h.maxCount`, `partner.timeout`) */
                rule?: string;
                /** @description How long your decision endpoint took */
                partnerLatencyMs?: number;
            } | null;
        };
        /** @description A page of transactions */
        TransactionPage: {
            data: components["schemas"]["Transaction"][];
            pagination: components["schemas"]["Pagination"];
        };
        /** @description A page of your transactions, newest first */
        TransactionList: {
            data: components["schemas"]["Transaction"][];
            /** @description Pass it as `cursor`, with the same filters, for the next (older) page; null on the last page */
            nextCursor: string | null;
        };
        /** @description One step of a transaction's life */
        TransactionStep: {
            /**
             * @description authorization, clearing, reversal, expiry, refund or decline
             * @enum {string}
             */
            kind: "authorization" | "clearing" | "reversal" | "expiry" | "refund" | "decline";
            /** @description The amount of the step: authorized, cleared, reversed, left when it expired, refunded or declined */
            amount: number;
            /**
             * Format: date-time
             * @description When the processing system recorded the step
             */
            at: string;
        };
        /** @description A network token of one of your cards: a wallet's or a merchant's (docs/tokens.md) */
        Token: {
            /** @description The token's id: `tok_` and 24 hexadecimal characters */
            _id: string;
            /** @description The card the token stands for now: a replacement or re-issue moves it to the new card */
            cardKey: string;
            /**
             * @description `merchant`: a card-on-file token of a merchant
             * @enum {string}
             */
            walletProvider: "apple_pay" | "google_pay" | "samsung_pay" | "merchant";
            /** @description The network's id of the wallet or merchant that asked */
            tokenRequestorId: string;
            /** @description The last four digits of the token's own number (what the wallet shows), never the card's */
            last4: string;
            /** @description The token's own expiry, MM/YYYY */
            tokenExpDate: string;
            /** @description The device, as the wallet described it */
            device: {
                /** @enum {string} */
                type: "phone" | "watch" | "tablet" | "wearable" | "computer" | "other";
                /** @description The device's name */
                name?: string;
                /** @description ISO 3166-1 alpha-2 */
                ipCountry?: string;
            };
            /**
             * @description requested, pending_verification, active, suspended, deactivated (final) or declined (final): docs/tokens.md
             * @enum {string}
             */
            status: "requested" | "pending_verification" | "active" | "suspended" | "deactivated" | "declined";
            /**
             * @description While suspended only: you (`partner`), or the card's state (`card_state`: the card's unlock resumes it); absent when the network suspended it
             * @enum {string}
             */
            suspendedBy?: "partner" | "card_state";
            /**
             * Format: date-time
             * @description ISO 8601 date-time (UTC)
             */
            createdAt: string;
            /**
             * Format: date-time
             * @description ISO 8601 date-time (UTC)
             */
            updatedAt: string;
            /** @description Every status it took, oldest first */
            history: components["schemas"]["TokenHistoryEntry"][];
        };
        /** @description One status of a token's life, or a move to another card (its status unchanged) */
        TokenHistoryEntry: {
            /**
             * @description requested, pending_verification, active, suspended, deactivated (final) or declined (final): docs/tokens.md
             * @enum {string}
             */
            status: "requested" | "pending_verification" | "active" | "suspended" | "deactivated" | "declined";
            /**
             * Format: date-time
             * @description ISO 8601 date-time (UTC)
             */
            at: string;
            /**
             * @description Who made it: the tokenization decision (card_state, spend_controls, partner, partner_default, network), the code entered (verification), your route (partner), the cascade (card_state), or the network on its own
             * @enum {string}
             */
            by: "card_state" | "spend_controls" | "partner" | "partner_default" | "network" | "verification";
            /** @description Why, when one was given (a decline reason, your `reason`, the network's) */
            reason?: string;
        };
        /** @description A page of your tokens, newest first */
        TokenList: {
            data: components["schemas"]["Token"][];
            /** @description Pass it as `cursor`, with the same filters, for the next (older) page; null on the last page */
            nextCursor: string | null;
        };
        /** @description Every token of the card, newest first */
        CardTokens: {
            data: components["schemas"]["Token"][];
        };
        /** @description What PassKit needs to add the card, made by the processor and encrypted for Apple: hand it to `PKAddPaymentPassRequest` unchanged (in sandbox mode not a real cryptogram) */
        ApplePayProvisioning: {
            /** @description Base64 activation data. Opaque: pass it to the wallet as it is */
            activationData: string;
            /** @description Base64 of the card data encrypted for Apple. Opaque: pass it to the wallet as it is */
            encryptedPassData: string;
            /** @description Base64 of the ephemeral EC P-256 public key (uncompressed point). Opaque: pass it to the wallet as it is */
            ephemeralPublicKey: string;
        };
        /** @description What Google Pay's `pushTokenize` needs, made by the processor (in sandbox mode not a real cryptogram) */
        GooglePayProvisioning: {
            /** @description The opaque payment card (base64url). Opaque: pass it to the wallet as it is */
            opaquePaymentCard: string;
            /** @description The card's network, e.g. MASTERCARD */
            network: string;
            /** @description e.g. TOKEN_PROVIDER_MASTERCARD */
            tokenServiceProvider: string;
            /** @description The card's product name, shown while the wallet adds it */
            displayName: string;
            /** @description The card's last four digits, shown while the wallet adds it */
            lastDigits: string;
        };
        /** @description Position of a page in a list (docs/pagination.md) */
        Pagination: {
            /** @description The page returned, from 1 */
            page: number;
            /** @description The page size asked for */
            limit: number;
            /** @description Items across all pages: exact, or a lower bound where the list caps its count (the partner-wide card list with a search past 10,000, an individual's audit log and card status history past 1,000), which `X-Total-Capped: true` says */
            total: number;
            /** @description `ceil(total / limit)`, on the partner-wide card list of at most its first 10,000 items (the pages it serves); 0 when there is no item */
            totalPages: number;
            /** @description A page after this one holds items (exact also when `total` is capped; false on the last page the partner-wide card list serves) */
            hasMore: boolean;
        };
        /** @description The authenticated partner */
        Partner: {
            /** @description 24-character hexadecimal id */
            _id: string;
            name: string;
            /** @description The `iss` your tokens must carry */
            issuer: string;
            /** @enum {string} */
            status: "active" | "disabled";
            /** @description Whether the card processing system is configured for you (transactions) */
            processingEnabled: boolean;
            /**
             * Format: date-time
             * @description ISO 8601 date-time (UTC)
             */
            createdAt: string;
            /**
             * Format: date-time
             * @description ISO 8601 date-time (UTC)
             */
            updatedAt: string;
        };
        /** @description A B2B tenant of the partner */
        B2bTenant: {
            /** @description 24-character hexadecimal id */
            _id: string;
            name: string;
            /**
             * Format: date-time
             * @description ISO 8601 date-time (UTC)
             */
            createdAt: string;
        };
        /** @description Partner self-introspection (spec 4.1) */
        Me: {
            partner: components["schemas"]["Partner"];
            /** @description The first-created B2B tenant; null without tenants */
            activeTenantId: string | null;
            b2bAccounts: components["schemas"]["B2bTenant"][];
            /** @description The 100 newest individuals; the paginated list serves the rest */
            individuals: components["schemas"]["IndividualSummary"][];
        };
        /** @description A partner event (docs/events.md); `type` says which `data` it carries */
        Event: components["schemas"]["EventCardCreated"] | components["schemas"]["EventCardStatusChanged"] | components["schemas"]["EventCardUpdated"] | components["schemas"]["EventIndividualCreated"] | components["schemas"]["EventTransactionCreated"] | components["schemas"]["EventTransactionUpdated"] | components["schemas"]["EventTokenCreated"] | components["schemas"]["EventTokenUpdated"] | components["schemas"]["EventTokenVerificationCode"];
        /** @description A page of your events, newest first */
        EventPage: {
            data: components["schemas"]["Event"][];
            /** @description Pass it as `after` for the next (older) page; null on the last page */
            nextCursor: string | null;
        };
        /** @description A card was issued (`issued`), or a replace (`replaced`: the same card under a new cardKey) or a re-issue (`reissued`: a new card, the old one closed) made one */
        EventCardCreated: {
            /** @description The event id: the same on every delivery of the event */
            id: string;
            /** @constant */
            type: "card.created";
            /**
             * Format: date-time
             * @description When the change was written
             */
            createdAt: string;
            /** @description You: the partner whose resource changed */
            partnerId: string;
            /** @description What was created */
            data: {
                card: components["schemas"]["Card"];
                /** @enum {string} */
                reason: "issued" | "replaced" | "reissued";
                /** @description The cardKey replaced or re-issued (`replaced` and `reissued` only) */
                previousCardKey?: string;
            };
            /** @description X-Request-Id of your request that made the change; absent when the gateway or the issuer made it (a reconciliation, an issuer-side change) */
            requestId?: string;
        };
        /** @description A card's status code changed: through your API call (`source: partner`), or by the issuer on its own (`issuer`: fraud, expiry ...) */
        EventCardStatusChanged: {
            /** @description The event id: the same on every delivery of the event */
            id: string;
            /** @constant */
            type: "card.status_changed";
            /**
             * Format: date-time
             * @description When the change was written
             */
            createdAt: string;
            /** @description You: the partner whose resource changed */
            partnerId: string;
            /** @description The change */
            data: {
                cardKey: string;
                /**
                 * @description The status before
                 * @enum {string|null}
                 */
                previousStatus: "ACTIVE" | "LOCKED" | "CLOSED" | "LOST" | "STOLEN" | "FRAUD" | "MOBILE_LOST" | "RESTRICTED" | "TEMP_LOCKED" | null;
                /**
                 * @description CardStatus (spec 3.1; docs/cards.md maps issuer codes to it)
                 * @enum {string}
                 */
                status: "ACTIVE" | "LOCKED" | "CLOSED" | "LOST" | "STOLEN" | "FRAUD" | "MOBILE_LOST" | "RESTRICTED" | "TEMP_LOCKED";
                /** @description Raw issuer-platform status code (00, I1, L1, T1, S1 to S6) */
                statusCode: string;
                /** @description The status code before */
                previousStatusCode: string | null;
                /**
                 * @description Who changed it: the partner through this API, the issuer on its own, or the bank's operators
                 * @enum {string}
                 */
                source: "partner" | "issuer" | "operator";
                /** @description The reason sent with the change; `issuer-side change` for the issuer */
                reason?: string | null;
            };
            /** @description X-Request-Id of your request that made the change; absent when the gateway or the issuer made it (a reconciliation, an issuer-side change) */
            requestId?: string;
        };
        /** @description A card's nickname, emboss name, 3DS phone, limits or spend controls changed. Never a 3DS answer, a PIN or card data */
        EventCardUpdated: {
            /** @description The event id: the same on every delivery of the event */
            id: string;
            /** @constant */
            type: "card.updated";
            /**
             * Format: date-time
             * @description When the change was written
             */
            createdAt: string;
            /** @description You: the partner whose resource changed */
            partnerId: string;
            /** @description What changed */
            data: {
                cardKey: string;
                /** @description The names of the fields changed (`spendControls`: the card's own spend controls, read them with `GET /cards/{id}/spend-controls`) */
                changed: ("nickname" | "embossedName" | "threeDsPhone" | "limits" | "spendControls")[];
                card: components["schemas"]["Card"];
                /** @description The limits set (`limits` only) */
                limits?: {
                    /** @enum {string} */
                    name: "dailyPurchase" | "monthlyPurchase" | "dailyWithdrawal" | "monthlyWithdrawal" | "singleTransaction";
                    /** @description The new limit, in the card currency */
                    value: number;
                }[];
            };
            /** @description X-Request-Id of your request that made the change; absent when the gateway or the issuer made it (a reconciliation, an issuer-side change) */
            requestId?: string;
        };
        /** @description An individual account was created (by your request, or completed later by the gateway after an interrupted one) */
        EventIndividualCreated: {
            /** @description The event id: the same on every delivery of the event */
            id: string;
            /** @constant */
            type: "individual.created";
            /**
             * Format: date-time
             * @description When the change was written
             */
            createdAt: string;
            /** @description You: the partner whose resource changed */
            partnerId: string;
            /** @description The individual */
            data: {
                individual: components["schemas"]["IndividualAccount"];
            };
            /** @description X-Request-Id of your request that made the change; absent when the gateway or the issuer made it (a reconciliation, an issuer-side change) */
            requestId?: string;
        };
        /** @description The card processing system recorded a transaction on one of your cards: an authorization, a force-posted clearing, a decline or a refund (in sandbox mode, `POST /simulate/cards/{id}/authorizations` makes one) */
        EventTransactionCreated: {
            /** @description The event id: the same on every delivery of the event */
            id: string;
            /** @constant */
            type: "transaction.created";
            /**
             * Format: date-time
             * @description When the change was written
             */
            createdAt: string;
            /** @description You: the partner whose resource changed */
            partnerId: string;
            /** @description The transaction */
            data: {
                transaction: components["schemas"]["Transaction"];
            };
            /** @description X-Request-Id of your request that made the change; absent when the gateway or the issuer made it (a reconciliation, an issuer-side change) */
            requestId?: string;
        };
        /** @description A transaction of one of your cards took a step: cleared, reversed (in full or in part) or expired. Sent in order per card, one event per step */
        EventTransactionUpdated: {
            /** @description The event id: the same on every delivery of the event */
            id: string;
            /** @constant */
            type: "transaction.updated";
            /**
             * Format: date-time
             * @description When the change was written
             */
            createdAt: string;
            /** @description You: the partner whose resource changed */
            partnerId: string;
            /** @description The transaction and the step */
            data: {
                transaction: components["schemas"]["Transaction"];
                /**
                 * @description The status before this step
                 * @enum {string|null}
                 */
                previousStatus: "PENDING" | "SETTLED" | "DECLINED" | "REVERSED" | "EXPIRED" | null;
                /**
                 * @description The step: the kind of the history entry it added
                 * @enum {string}
                 */
                change: "authorization" | "clearing" | "reversal" | "expiry" | "refund" | "decline";
            };
            /** @description X-Request-Id of your request that made the change; absent when the gateway or the issuer made it (a reconciliation, an issuer-side change) */
            requestId?: string;
        };
        /** @description A token of one of your cards was made: by the tokenization decision (whatever its outcome: `active`, `pending_verification` or `declined`), or by the processor without a decision of the gateway */
        EventTokenCreated: {
            /** @description The event id: the same on every delivery of the event */
            id: string;
            /** @constant */
            type: "token.created";
            /**
             * Format: date-time
             * @description When the change was written
             */
            createdAt: string;
            /** @description You: the partner whose resource changed */
            partnerId: string;
            /** @description The token */
            data: {
                token: components["schemas"]["Token"];
            };
            /** @description X-Request-Id of your request that made the change; absent when the gateway or the issuer made it (a reconciliation, an issuer-side change) */
            requestId?: string;
        };
        /** @description A token of one of your cards changed: its status (your route, the card's state, a verification, the network), its card (a replacement or re-issue) or its device. Ordered with the card's events */
        EventTokenUpdated: {
            /** @description The event id: the same on every delivery of the event */
            id: string;
            /** @constant */
            type: "token.updated";
            /**
             * Format: date-time
             * @description When the change was written
             */
            createdAt: string;
            /** @description You: the partner whose resource changed */
            partnerId: string;
            /** @description The token and the change */
            data: {
                token: components["schemas"]["Token"];
                /**
                 * @description The status before the change
                 * @enum {string}
                 */
                previousStatus: "requested" | "pending_verification" | "active" | "suspended" | "deactivated" | "declined";
                /**
                 * @description What changed
                 * @enum {string}
                 */
                change: "verification_required" | "activated" | "suspended" | "resumed" | "deactivated" | "declined" | "card_updated" | "device_updated";
            };
            /** @description X-Request-Id of your request that made the change; absent when the gateway or the issuer made it (a reconciliation, an issuer-side change) */
            requestId?: string;
        };
        /** @description A tokenization was approved on condition of a one-time code: deliver `code` to the cardholder (an SMS, a push in your app), who types it into the wallet. Valid until `expiresAt` (10 minutes), 3 attempts; after `expiresAt` the event holds `code: null` */
        EventTokenVerificationCode: {
            /** @description The event id: the same on every delivery of the event */
            id: string;
            /** @constant */
            type: "token.verification_code";
            /**
             * Format: date-time
             * @description When the change was written
             */
            createdAt: string;
            /** @description You: the partner whose resource changed */
            partnerId: string;
            /** @description The token and its code */
            data: {
                token: components["schemas"]["Token"];
                /** @description The 6-digit code; null once it has expired */
                code: string | null;
                /**
                 * Format: date-time
                 * @description When the code stops being accepted
                 */
                expiresAt: string;
            };
            /** @description X-Request-Id of your request that made the change; absent when the gateway or the issuer made it (a reconciliation, an issuer-side change) */
            requestId?: string;
        };
        /** @description The event was queued again */
        EventResend: {
            /** @description The event id: the same on every delivery of the event */
            id: string;
            /** @description Deliveries queued: one per enabled endpoint subscribed to its type */
            deliveries: number;
        };
        /** @description A webhook endpoint (its secret is answered only at creation and rotation) */
        WebhookEndpoint: {
            /** @description The endpoint id */
            id: string;
            /** @description Where events are POSTed */
            url: string;
            /** @description The event types sent to it; `*`: every type */
            events: string[];
            /** @description Your note about the endpoint */
            description: string | null;
            /** @enum {string} */
            status: "enabled" | "disabled";
            /**
             * Format: date-time
             * @description ISO 8601 date-time (UTC)
             */
            createdAt: string;
            /**
             * Format: date-time
             * @description ISO 8601 date-time (UTC)
             */
            updatedAt: string;
        };
        /** @description The new endpoint and its signing secret, shown only here */
        WebhookEndpointCreated: {
            /** @description The endpoint id */
            id: string;
            /** @description Where events are POSTed */
            url: string;
            /** @description The event types sent to it; `*`: every type */
            events: string[];
            /** @description Your note about the endpoint */
            description: string | null;
            /** @enum {string} */
            status: "enabled" | "disabled";
            /**
             * Format: date-time
             * @description ISO 8601 date-time (UTC)
             */
            createdAt: string;
            /**
             * Format: date-time
             * @description ISO 8601 date-time (UTC)
             */
            updatedAt: string;
            /** @description The signing secret (HMAC-SHA256 key, docs/webhooks.md): shown only in this answer, keep it */
            secret: string;
        };
        /** @description Your webhook endpoints, oldest first */
        WebhookEndpointList: {
            data: components["schemas"]["WebhookEndpoint"][];
        };
        /** @description The new signing secret; the previous one also signs for 24 hours */
        WebhookSecret: {
            /** @description The signing secret (HMAC-SHA256 key, docs/webhooks.md): shown only in this answer, keep it */
            secret: string;
        };
        /** @description One delivery attempt */
        WebhookAttempt: {
            /** @description The event id: the same on every delivery of the event */
            eventId: string;
            /** @description The event type */
            eventType: string;
            /** @description The attempt's number for this delivery */
            attempt: number;
            /**
             * Format: date-time
             * @description ISO 8601 date-time (UTC)
             */
            attemptedAt: string;
            /**
             * @description failed: the retry window (3 days) is over; the event can be resent
             * @enum {string}
             */
            outcome: "delivered" | "retrying" | "failed";
            /** @description Your endpoint's HTTP status; null when it did not answer */
            httpStatus: number | null;
            /**
             * @description Why the attempt failed; null when delivered. secret_unavailable: the gateway could not read the signing secret and held the delivery (never sent unsigned)
             * @enum {string|null}
             */
            error: "timeout" | "connection" | "target_refused" | "redirect" | "interrupted" | "http_status" | "secret_unavailable" | null;
            /** @description Time to the answer (null for an interrupted attempt) */
            durationMs: number | null;
            /**
             * Format: date-time
             * @description When the next attempt is due; null once delivered or failed
             */
            nextRetryAt: string | null;
        };
        /** @description Delivery attempts, newest first */
        WebhookAttemptPage: {
            data: components["schemas"]["WebhookAttempt"][];
            /** @description Pass it as `after` for the next (older) page; null on the last page */
            nextCursor: string | null;
        };
        /** @description Your decision endpoint for real-time authorizations (its secret is answered only at creation and rotation) */
        AuthorizationEndpoint: {
            /** @description The endpoint id */
            id: string;
            /** @description Where authorization requests are POSTed */
            url: string;
            /** @description How long the gateway waits for your answer, in ms */
            timeoutMs: number;
            /**
             * @description What applies on a timeout, an error or an answer of another shape
             * @enum {string}
             */
            defaultDecision: "approve" | "decline";
            /**
             * @description disabled: not asked (by you, or by an operator)
             * @enum {string}
             */
            status: "enabled" | "disabled";
            /** @description The requests sent to this endpoint: authorization.request, and tokenization.request once you add it (docs/tokens.md) */
            requestTypes: ("authorization.request" | "tokenization.request")[];
            /**
             * Format: date-time
             * @description ISO 8601 date-time (UTC)
             */
            createdAt: string;
            /**
             * Format: date-time
             * @description ISO 8601 date-time (UTC)
             */
            updatedAt: string;
        };
        /** @description The new decision endpoint and its signing secret, shown only here */
        AuthorizationEndpointCreated: {
            /** @description The endpoint id */
            id: string;
            /** @description Where authorization requests are POSTed */
            url: string;
            /** @description How long the gateway waits for your answer, in ms */
            timeoutMs: number;
            /**
             * @description What applies on a timeout, an error or an answer of another shape
             * @enum {string}
             */
            defaultDecision: "approve" | "decline";
            /**
             * @description disabled: not asked (by you, or by an operator)
             * @enum {string}
             */
            status: "enabled" | "disabled";
            /** @description The requests sent to this endpoint: authorization.request, and tokenization.request once you add it (docs/tokens.md) */
            requestTypes: ("authorization.request" | "tokenization.request")[];
            /**
             * Format: date-time
             * @description ISO 8601 date-time (UTC)
             */
            createdAt: string;
            /**
             * Format: date-time
             * @description ISO 8601 date-time (UTC)
             */
            updatedAt: string;
            /** @description The signing secret (HMAC-SHA256 key, docs/webhooks.md): shown only in this answer, keep it */
            secret: string;
        };
        /** @description The new signing secret of the decision endpoint; the previous one also signs for 24 hours */
        AuthorizationEndpointSecret: {
            /** @description The signing secret (HMAC-SHA256 key, docs/webhooks.md): shown only in this answer, keep it */
            secret: string;
        };
        /** @description One invalid field of the request */
        InvalidParam: {
            /** @description The field: a body property path (`items.0.value`), a query or path parameter */
            name: string;
            /** @description Why it is invalid */
            reason: string;
        };
        /** @description An RFC 9457 problem (application/problem+json); docs/errors.md */
        Problem: {
            /**
             * Format: uri
             * @description `https://partner-gateway.dev/problems/<code>`
             */
            type: string;
            /** @description Human title of the code */
            title: string;
            /** @description The HTTP status */
            status: number;
            /** @description What happened, for a human; never a secret, stack trace or upstream body */
            detail: string;
            /**
             * @description Machine-readable reason (docs/errors.md)
             * @enum {string}
             */
            code: "validation_failed" | "malformed_json" | "body_required" | "body_too_deep" | "invalid_id" | "token_missing" | "token_malformed" | "alg_not_allowed" | "header_not_allowed" | "claim_missing" | "claim_invalid" | "token_expired" | "token_not_yet_valid" | "lifetime_too_long" | "unknown_partner" | "partner_disabled" | "key_unknown" | "key_revoked" | "signature_invalid" | "admin_unauthorized" | "forbidden" | "not_found" | "route_not_found" | "conflict" | "idempotency_key_reused" | "idempotency_in_progress" | "invalid_transition" | "transaction_not_pending" | "amount_exceeds_remaining" | "refund_not_allowed" | "refund_exceeds_settled" | "authorization_id_reused" | "authorization_endpoint_exists" | "card_not_active" | "token_transition_invalid" | "verification_failed" | "tokenization_id_reused" | "payload_too_large" | "unsupported_media_type" | "upstream_rejected" | "rate_limited" | "internal_error" | "upstream_error" | "database_unavailable" | "decision_unavailable" | "upstream_timeout";
            /** @description Equals the X-Request-Id response header: quote it to support */
            requestId: string;
            /** @description Validation failures only: every invalid field */
            invalidParams?: components["schemas"]["InvalidParam"][];
            /**
             * @description The upstream that caused the problem
             * @enum {string}
             */
            upstream?: "issuer" | "processing" | "accounts";
            /** @description The upstream's error code, when it gave a well-formed one */
            upstreamCode?: string;
            /**
             * @description invalid_transition, card_not_active: the card status that refused the operation
             * @enum {string}
             */
            cardStatus?: "ACTIVE" | "LOCKED" | "CLOSED" | "LOST" | "STOLEN" | "FRAUD" | "MOBILE_LOST" | "RESTRICTED" | "TEMP_LOCKED";
            /** @description invalid_transition, card_not_active: the issuer status code that refused the operation */
            statusCode?: string;
            /**
             * @description token_transition_invalid: the token status that refused the operation
             * @enum {string}
             */
            tokenStatus?: "requested" | "pending_verification" | "active" | "suspended" | "deactivated" | "declined";
            /** @description verification_failed: the attempts left (0: the token is now declined) */
            attemptsLeft?: number;
        } & {
            [key: string]: unknown;
        };
    };
    responses: {
        /** @description The request is invalid; `invalidParams` lists every invalid field. Codes: `validation_failed`, `malformed_json`, `body_required`, `body_too_deep`, `invalid_id`. */
        BadRequest: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description The token is missing or refused; `code` says why (docs/authentication.md). Codes: `token_missing`, `token_malformed`, `alg_not_allowed`, `header_not_allowed`, `claim_missing`, `claim_invalid`, `token_expired`, `token_not_yet_valid`, `lifetime_too_long`, `unknown_partner`, `partner_disabled`, `key_unknown`, `key_revoked`, `signature_invalid`. */
        Unauthorized: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                "WWW-Authenticate": components["headers"]["WWW-Authenticate"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description The resource belongs to another partner. Codes: `forbidden`. */
        Forbidden: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description The resource does not exist. Codes: `not_found`. */
        NotFound: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description The request conflicts with the state of the resource or with an earlier request of the same Idempotency-Key (`Retry-After` on `idempotency_in_progress`). Codes: `conflict`, `idempotency_key_reused`, `idempotency_in_progress`, `invalid_transition`, `transaction_not_pending`, `amount_exceeds_remaining`, `refund_not_allowed`, `refund_exceeds_settled`, `authorization_id_reused`, `authorization_endpoint_exists`, `card_not_active`, `token_transition_invalid`, `verification_failed`, `tokenization_id_reused`. */
        Conflict: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                "Retry-After": components["headers"]["Retry-After"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description The body exceeds 64 KB. Codes: `payload_too_large`. */
        PayloadTooLarge: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description The body is not UTF-8 `application/json`. Codes: `unsupported_media_type`. */
        UnsupportedMediaType: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description An upstream system refused the request; `upstream` names it and `upstreamCode` says why. Codes: `upstream_rejected`. */
        UpstreamRejected: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description Over the rate limit of the route: wait `Retry-After` seconds (`RateLimit-Policy` and `RateLimit` say the quota). Codes: `rate_limited`. */
        TooManyRequests: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                "Retry-After": components["headers"]["Retry-After"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                RateLimit: components["headers"]["RateLimit"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description An upstream system failed or answered something unusable (`Retry-After` when it said it is unavailable). Codes: `upstream_error`. */
        BadGateway: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                "Retry-After": components["headers"]["Retry-After"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description The database is unavailable: retry after `Retry-After` seconds. Codes: `database_unavailable`, `decision_unavailable`. */
        ServiceUnavailable: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                "Retry-After": components["headers"]["Retry-After"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
        /** @description An upstream system did not answer in time (`UPSTREAM_TIMEOUT_MS`, 5 s by default). Codes: `upstream_timeout`. */
        GatewayTimeout: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                [name: string]: unknown;
            };
            content: {
                "application/problem+json": components["schemas"]["Problem"];
            };
        };
    };
    parameters: never;
    requestBodies: never;
    headers: {
        /** @description The request id: yours if you sent a well-formed `X-Request-Id` (1 to 128 of `A-Z a-z 0-9 . _ : -`), else generated. Quote it to support. */
        "X-Request-Id": string;
        /** @description Seconds to wait before retrying */
        "Retry-After": number;
        /** @description The refusal, RFC 6750 style */
        "WWW-Authenticate": string;
        /** @description `true` when this is the stored answer of an earlier request with the same Idempotency-Key */
        "Idempotent-Replayed": "true";
        /** @description The quota of the route (IETF RateLimit header fields): `"<name>";q=<requests>;w=<window seconds>` */
        "RateLimit-Policy": string;
        /** @description What is left of the quota: `"<name>";r=<remaining>;t=<seconds to reset>` */
        RateLimit: string;
        /** @description `true` when more items exist than the list counts exactly (10,000 cards matching a search; 1,000 entries of an individual's history): `total` is then a lower bound, and `hasMore` says whether the next page holds items */
        "X-Total-Capped": "true";
        /** @description Version of the document, for `If-None-Match` */
        ETag: string;
        /** @description RFC 8288: the next page of the list, when there is one (`rel="next"`); absent on the last page */
        Link: string;
    };
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    "health-check": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Alive */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    [name: string]: unknown;
                };
                content: {
                    "text/plain": "OK";
                };
            };
        };
    };
    "openapi-document": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The OpenAPI 3.1 document */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    ETag: components["headers"]["ETag"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, never>;
                };
            };
            429: components["responses"]["TooManyRequests"];
        };
    };
    "api-docs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The HTML page */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                };
            };
            429: components["responses"]["TooManyRequests"];
        };
    };
    me: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The authenticated partner */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Me"];
                };
            };
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    "list-individuals": {
        parameters: {
            query?: {
                /** @description Page number, from 1 */
                page?: number;
                /** @description Page size, 1 to 100 */
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of individuals */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["IndividualList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    "create-individual": {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry for 24 hours: the same key and body replay the first answer (`Idempotent-Replayed: true`); the same key with another body is 409 `idempotency_key_reused`; while the first request runs, 409 `idempotency_in_progress`. 1 to 255 visible ASCII characters, scoped to you. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["individual-create"];
            };
        };
        responses: {
            /** @description The individual account was created */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["IndividualAccount"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "get-individual": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The individual account `_id` (24 hexadecimal characters) */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The individual account */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["IndividualAccount"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    "list-individual-cards": {
        parameters: {
            query?: {
                /** @description Page number, from 1 */
                page?: number;
                /** @description Page size, 1 to 100 (default 100) */
                limit?: number;
            };
            header?: never;
            path: {
                /** @description The individual account `_id` (24 hexadecimal characters) */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The individual's active cards */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    Link: components["headers"]["Link"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CardListItem"][];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    "issue-virtual-card": {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry for 24 hours: the same key and body replay the first answer (`Idempotent-Replayed: true`); the same key with another body is 409 `idempotency_key_reused`; while the first request runs, 409 `idempotency_in_progress`. 1 to 255 visible ASCII characters, scoped to you. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description The individual account `_id` (24 hexadecimal characters) */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["card-issue"];
            };
        };
        responses: {
            /** @description The card was issued */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Card"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "issue-physical-card": {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry for 24 hours: the same key and body replay the first answer (`Idempotent-Replayed: true`); the same key with another body is 409 `idempotency_key_reused`; while the first request runs, 409 `idempotency_in_progress`. 1 to 255 visible ASCII characters, scoped to you. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description The individual account `_id` (24 hexadecimal characters) */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["card-issue"];
            };
        };
        responses: {
            /** @description The card was issued */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Card"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "list-individual-audit-logs": {
        parameters: {
            query?: {
                /** @description Page number, from 1 */
                page?: number;
                /** @description Page size, 1 to 100 */
                limit?: number;
            };
            header?: never;
            path: {
                /** @description The individual account `_id` (24 hexadecimal characters) */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of audit entries */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-Total-Capped": components["headers"]["X-Total-Capped"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AuditLogPage"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    "list-individual-card-status-history": {
        parameters: {
            query?: {
                /** @description Page number, from 1 */
                page?: number;
                /** @description Page size, 1 to 100 */
                limit?: number;
            };
            header?: never;
            path: {
                /** @description The individual account `_id` (24 hexadecimal characters) */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of status changes */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-Total-Capped": components["headers"]["X-Total-Capped"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CardStatusHistoryPage"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    "list-individual-transactions": {
        parameters: {
            query?: {
                /** @description Page number, from 1 */
                page?: number;
                /** @description Page size, 1 to 100 */
                limit?: number;
                /** @description Only this card of the individual */
                cardKey?: string;
            };
            header?: never;
            path: {
                /** @description The individual account `_id` (24 hexadecimal characters) */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of transactions */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TransactionPage"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "list-cards": {
        parameters: {
            query?: {
                /** @description Page number, from 1 */
                page?: number;
                /** @description Page size, 1 to 100 */
                limit?: number;
                status?: "ACTIVE" | "LOCKED" | "CLOSED" | "LOST" | "STOLEN" | "FRAUD" | "MOBILE_LOST" | "RESTRICTED" | "TEMP_LOCKED";
                type?: "virtual" | "physical";
                /** @description Case-insensitive, on cardMask, nickname and embossedName; at least 3 characters (docs/card-search.md) */
                search?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of cards */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "X-Total-Capped": components["headers"]["X-Total-Capped"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CardPage"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    "get-card": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The cardKey */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The card */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Card"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "get-card-status": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The cardKey */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The card status result */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CardStatusResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "lock-card": {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry for 24 hours: the same key and body replay the first answer (`Idempotent-Replayed: true`); the same key with another body is 409 `idempotency_key_reused`; while the first request runs, 409 `idempotency_in_progress`. 1 to 255 visible ASCII characters, scoped to you. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description The cardKey */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["card-status-change"];
            };
        };
        responses: {
            /** @description The card status result */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CardStatusResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "unlock-card": {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry for 24 hours: the same key and body replay the first answer (`Idempotent-Replayed: true`); the same key with another body is 409 `idempotency_key_reused`; while the first request runs, 409 `idempotency_in_progress`. 1 to 255 visible ASCII characters, scoped to you. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description The cardKey */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["card-status-change"];
            };
        };
        responses: {
            /** @description The card status result */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CardStatusResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "activate-card": {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry for 24 hours: the same key and body replay the first answer (`Idempotent-Replayed: true`); the same key with another body is 409 `idempotency_key_reused`; while the first request runs, 409 `idempotency_in_progress`. 1 to 255 visible ASCII characters, scoped to you. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description The cardKey */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["card-status-change"];
            };
        };
        responses: {
            /** @description The card status result */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CardStatusResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "temporary-lock-card": {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry for 24 hours: the same key and body replay the first answer (`Idempotent-Replayed: true`); the same key with another body is 409 `idempotency_key_reused`; while the first request runs, 409 `idempotency_in_progress`. 1 to 255 visible ASCII characters, scoped to you. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description The cardKey */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["card-status-change"];
            };
        };
        responses: {
            /** @description The card status result */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CardStatusResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "restrict-card": {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry for 24 hours: the same key and body replay the first answer (`Idempotent-Replayed: true`); the same key with another body is 409 `idempotency_key_reused`; while the first request runs, 409 `idempotency_in_progress`. 1 to 255 visible ASCII characters, scoped to you. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description The cardKey */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["card-restrict"];
            };
        };
        responses: {
            /** @description The card status result */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CardStatusResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "restrict-card-lost": {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry for 24 hours: the same key and body replay the first answer (`Idempotent-Replayed: true`); the same key with another body is 409 `idempotency_key_reused`; while the first request runs, 409 `idempotency_in_progress`. 1 to 255 visible ASCII characters, scoped to you. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description The cardKey */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["card-restrict"];
            };
        };
        responses: {
            /** @description The card status result */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CardStatusResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "restrict-card-stolen": {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry for 24 hours: the same key and body replay the first answer (`Idempotent-Replayed: true`); the same key with another body is 409 `idempotency_key_reused`; while the first request runs, 409 `idempotency_in_progress`. 1 to 255 visible ASCII characters, scoped to you. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description The cardKey */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["card-restrict"];
            };
        };
        responses: {
            /** @description The card status result */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CardStatusResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "restrict-card-closed": {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry for 24 hours: the same key and body replay the first answer (`Idempotent-Replayed: true`); the same key with another body is 409 `idempotency_key_reused`; while the first request runs, 409 `idempotency_in_progress`. 1 to 255 visible ASCII characters, scoped to you. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description The cardKey */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["card-restrict"];
            };
        };
        responses: {
            /** @description The card status result */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CardStatusResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "restrict-card-fraud": {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry for 24 hours: the same key and body replay the first answer (`Idempotent-Replayed: true`); the same key with another body is 409 `idempotency_key_reused`; while the first request runs, 409 `idempotency_in_progress`. 1 to 255 visible ASCII characters, scoped to you. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description The cardKey */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["card-restrict"];
            };
        };
        responses: {
            /** @description The card status result */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CardStatusResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "restrict-card-mobile-lost": {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry for 24 hours: the same key and body replay the first answer (`Idempotent-Replayed: true`); the same key with another body is 409 `idempotency_key_reused`; while the first request runs, 409 `idempotency_in_progress`. 1 to 255 visible ASCII characters, scoped to you. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description The cardKey */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["card-restrict"];
            };
        };
        responses: {
            /** @description The card status result */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CardStatusResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "set-card-nickname": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The cardKey */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["card-nickname"];
            };
        };
        responses: {
            /** @description The card */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Card"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    "set-card-emboss-name": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The cardKey */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["card-emboss-name"];
            };
        };
        responses: {
            /** @description The card */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Card"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "replace-card": {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry for 24 hours: the same key and body replay the first answer (`Idempotent-Replayed: true`); the same key with another body is 409 `idempotency_key_reused`; while the first request runs, 409 `idempotency_in_progress`. 1 to 255 visible ASCII characters, scoped to you. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description The cardKey */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["card-replace"];
            };
        };
        responses: {
            /** @description The card under its new cardKey and cardMask */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Card"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "reissue-card": {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry for 24 hours: the same key and body replay the first answer (`Idempotent-Replayed: true`); the same key with another body is 409 `idempotency_key_reused`; while the first request runs, 409 `idempotency_in_progress`. 1 to 255 visible ASCII characters, scoped to you. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description The cardKey */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["card-replace"];
            };
        };
        responses: {
            /** @description The new card */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Card"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "get-card-cvv": {
        parameters: {
            query: {
                /** @description MM/YYYY */
                expDate: string;
                /** @description base64 of your RSA public key (SPKI DER, ≥ 2048 bits) */
                securityKey: string;
            };
            header?: never;
            path: {
                /** @description The cardKey */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The encrypted CVV2 */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EncryptedCvv"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "get-card-pan": {
        parameters: {
            query: {
                /** @description MM/YYYY */
                expDate: string;
                /** @description base64 of your RSA public key (SPKI DER, ≥ 2048 bits) */
                securityKey: string;
            };
            header?: never;
            path: {
                /** @description The cardKey */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The encrypted card number */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EncryptedCardNumber"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "set-card-3ds-answer": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The cardKey */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["three-ds-answer"];
            };
        };
        responses: {
            /** @description The card */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Card"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "set-card-3ds-phone": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The cardKey */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["three-ds-phone"];
            };
        };
        responses: {
            /** @description The card */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Card"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    "reset-card-pin-tries": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The cardKey */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["empty-body"];
            };
        };
        responses: {
            /** @description The card */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Card"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "change-card-pin": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The cardKey */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["pin-change"];
            };
        };
        responses: {
            /** @description The card */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Card"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "force-card-pin-lock": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The cardKey */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["pin-force-lock"];
            };
        };
        responses: {
            /** @description The card status result */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CardStatusResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "authorize-cardholder": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The cardKey */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["card-authorize"];
            };
        };
        responses: {
            /** @description The card */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Card"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "get-card-limits": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The cardKey */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Every limit of the card */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CardLimit"][];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "patch-card-limits": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The cardKey */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["limits-patch"];
            };
        };
        responses: {
            /** @description Every limit of the card */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CardLimit"][];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "get-card-limit": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The cardKey */
                id: string;
                limitName: "dailyPurchase" | "monthlyPurchase" | "dailyWithdrawal" | "monthlyWithdrawal" | "singleTransaction";
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The limit */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CardLimit"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "set-card-limit": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The cardKey */
                id: string;
                limitName: "dailyPurchase" | "monthlyPurchase" | "dailyWithdrawal" | "monthlyWithdrawal" | "singleTransaction";
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["limit-set"];
            };
        };
        responses: {
            /** @description The limit */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CardLimit"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "get-card-limit-available": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The cardKey */
                id: string;
                limitName: "dailyPurchase" | "monthlyPurchase" | "dailyWithdrawal" | "monthlyWithdrawal" | "singleTransaction";
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description What is left of the limit */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AvailableLimit"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "get-card-spend-controls": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The cardKey */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The spend controls */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SpendControls"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    "set-card-spend-controls": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The cardKey */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["spend-controls"];
            };
        };
        responses: {
            /** @description The spend controls */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SpendControls"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    "get-spend-controls": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The spend controls */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SpendControls"];
                };
            };
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    "set-spend-controls": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["spend-controls"];
            };
        };
        responses: {
            /** @description The spend controls */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SpendControls"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    "get-pin-encryption-key": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The PIN encryption key */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PinEncryptionKey"];
                };
            };
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["NotFound"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "list-delivery-methods": {
        parameters: {
            query: {
                country: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The delivery methods */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DeliveryMethods"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["NotFound"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "check-card-issuing-fee": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["fee-check"];
            };
        };
        responses: {
            /** @description The fee */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["FeeResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "check-card-delivery-fee": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["fee-check"];
            };
        };
        responses: {
            /** @description The fee */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["FeeResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "list-transactions": {
        parameters: {
            query?: {
                /** @description Only this card's transactions */
                cardKey?: string;
                /** @description Only the transactions of this individual's cards */
                individualId?: string;
                /** @description Only transactions in this status */
                status?: "PENDING" | "SETTLED" | "DECLINED" | "REVERSED" | "EXPIRED";
                /** @description Only transactions of this type */
                type?: "PURCHASE" | "WITHDRAWAL" | "REFUND";
                /** @description Only transactions created at or after this instant (RFC 3339, with `Z` or `±hh:mm`) */
                from?: string;
                /** @description Only transactions created before this instant (RFC 3339, with `Z` or `±hh:mm`); not before `from` */
                to?: string;
                /** @description Page size, 1 to 100 */
                limit?: number;
                /** @description The `nextCursor` of the previous page, with the same filters */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of transactions */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TransactionList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    "get-transaction": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The transaction id (the card processing system's) */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The transaction */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Transaction"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    "provision-card-apple-pay": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The cardKey */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["wallet-provisioning-apple-pay"];
            };
        };
        responses: {
            /** @description The payload for Apple Pay */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ApplePayProvisioning"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "provision-card-google-pay": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The cardKey */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["wallet-provisioning-google-pay"];
            };
        };
        responses: {
            /** @description The payload for Google Pay */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["GooglePayProvisioning"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "list-card-tokens": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The cardKey */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The card's tokens */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CardTokens"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    "list-tokens": {
        parameters: {
            query?: {
                /** @description Only this card's tokens (a card that is not yours matches nothing) */
                cardKey?: string;
                /** @description Only tokens in this status */
                status?: "requested" | "pending_verification" | "active" | "suspended" | "deactivated" | "declined";
                /** @description Only tokens of this wallet (or `merchant`) */
                walletProvider?: "apple_pay" | "google_pay" | "samsung_pay" | "merchant";
                /** @description Page size, 1 to 100 */
                limit?: number;
                /** @description The `nextCursor` of the previous page, with the same filters */
                cursor?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of tokens */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TokenList"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    "get-token": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The token id (`tok_` and 24 hexadecimal characters) */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The token */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Token"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    "suspend-token": {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry for 24 hours: the same key and body replay the first answer (`Idempotent-Replayed: true`); the same key with another body is 409 `idempotency_key_reused`; while the first request runs, 409 `idempotency_in_progress`. 1 to 255 visible ASCII characters, scoped to you. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description The token id (`tok_` and 24 hexadecimal characters) */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["token-change"];
            };
        };
        responses: {
            /** @description The token */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Token"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "resume-token": {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry for 24 hours: the same key and body replay the first answer (`Idempotent-Replayed: true`); the same key with another body is 409 `idempotency_key_reused`; while the first request runs, 409 `idempotency_in_progress`. 1 to 255 visible ASCII characters, scoped to you. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description The token id (`tok_` and 24 hexadecimal characters) */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["token-change"];
            };
        };
        responses: {
            /** @description The token */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Token"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "deactivate-token": {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry for 24 hours: the same key and body replay the first answer (`Idempotent-Replayed: true`); the same key with another body is 409 `idempotency_key_reused`; while the first request runs, 409 `idempotency_in_progress`. 1 to 255 visible ASCII characters, scoped to you. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description The token id (`tok_` and 24 hexadecimal characters) */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["token-change"];
            };
        };
        responses: {
            /** @description The token */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Token"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "list-events": {
        parameters: {
            query?: {
                /** @description Only events of this type */
                type?: "card.created" | "card.status_changed" | "card.updated" | "individual.created" | "transaction.created" | "transaction.updated" | "token.created" | "token.updated" | "token.verification_code";
                /** @description The `nextCursor` of the previous page: the events older than that page's last */
                after?: string;
                /** @description Page size, 1 to 100 */
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of events */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EventPage"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    "get-event": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The event id (`evt_` and 24 hexadecimal characters) */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The event */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Event"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    "resend-event": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The event id (`evt_` and 24 hexadecimal characters) */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["empty-body"];
            };
        };
        responses: {
            /** @description The event is queued for delivery */
            202: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["EventResend"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    "list-webhook-endpoints": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Your endpoints */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookEndpointList"];
                };
            };
            401: components["responses"]["Unauthorized"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    "create-webhook-endpoint": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["webhook-endpoint-create"];
            };
        };
        responses: {
            /** @description The endpoint and its secret */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookEndpointCreated"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    "get-webhook-endpoint": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The webhook endpoint id (`we_` and 24 hexadecimal characters) */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The endpoint */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookEndpoint"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    "delete-webhook-endpoint": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The webhook endpoint id (`we_` and 24 hexadecimal characters) */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted */
            204: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    "update-webhook-endpoint": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The webhook endpoint id (`we_` and 24 hexadecimal characters) */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["webhook-endpoint-update"];
            };
        };
        responses: {
            /** @description The endpoint */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookEndpoint"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    "rotate-webhook-secret": {
        parameters: {
            query?: never;
            header?: never;
            path: {
                /** @description The webhook endpoint id (`we_` and 24 hexadecimal characters) */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["empty-body"];
            };
        };
        responses: {
            /** @description The new secret */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookSecret"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    "list-webhook-deliveries": {
        parameters: {
            query?: {
                /** @description The `nextCursor` of the previous page: the attempts older than that page's last */
                after?: string;
                /** @description Page size, 1 to 100 */
                limit?: number;
            };
            header?: never;
            path: {
                /** @description The webhook endpoint id (`we_` and 24 hexadecimal characters) */
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of attempts */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookAttemptPage"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    "get-authorization-endpoint": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The endpoint */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AuthorizationEndpoint"];
                };
            };
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    "create-authorization-endpoint": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["authorization-endpoint-create"];
            };
        };
        responses: {
            /** @description The endpoint and its secret */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AuthorizationEndpointCreated"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    "delete-authorization-endpoint": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted */
            204: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content?: never;
            };
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["NotFound"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    "update-authorization-endpoint": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["authorization-endpoint-update"];
            };
        };
        responses: {
            /** @description The endpoint */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AuthorizationEndpoint"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    "rotate-authorization-endpoint-secret": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["empty-body"];
            };
        };
        responses: {
            /** @description The new secret */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["AuthorizationEndpointSecret"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            404: components["responses"]["NotFound"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            429: components["responses"]["TooManyRequests"];
            503: components["responses"]["ServiceUnavailable"];
        };
    };
    "simulate-card-transaction": {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry for 24 hours: the same key and body replay the first answer (`Idempotent-Replayed: true`); the same key with another body is 409 `idempotency_key_reused`; while the first request runs, 409 `idempotency_in_progress`. 1 to 255 visible ASCII characters, scoped to you. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description The cardKey */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["simulate-transaction"];
            };
        };
        responses: {
            /** @description The recorded transaction */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Transaction"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "simulate-card-issuer-status": {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry for 24 hours: the same key and body replay the first answer (`Idempotent-Replayed: true`); the same key with another body is 409 `idempotency_key_reused`; while the first request runs, 409 `idempotency_in_progress`. 1 to 255 visible ASCII characters, scoped to you. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description The cardKey */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["simulate-issuer-status"];
            };
        };
        responses: {
            /** @description The card status result */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CardStatusResult"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "simulate-card-authorization": {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry for 24 hours: the same key and body replay the first answer (`Idempotent-Replayed: true`); the same key with another body is 409 `idempotency_key_reused`; while the first request runs, 409 `idempotency_in_progress`. 1 to 255 visible ASCII characters, scoped to you. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description The cardKey */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["simulate-authorization"];
            };
        };
        responses: {
            /** @description The authorized transaction */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Transaction"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "simulate-transaction-clearing": {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry for 24 hours: the same key and body replay the first answer (`Idempotent-Replayed: true`); the same key with another body is 409 `idempotency_key_reused`; while the first request runs, 409 `idempotency_in_progress`. 1 to 255 visible ASCII characters, scoped to you. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description The transaction id (the card processing system's) */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["simulate-transaction-step"];
            };
        };
        responses: {
            /** @description The transaction after the step */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Transaction"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "simulate-transaction-reversal": {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry for 24 hours: the same key and body replay the first answer (`Idempotent-Replayed: true`); the same key with another body is 409 `idempotency_key_reused`; while the first request runs, 409 `idempotency_in_progress`. 1 to 255 visible ASCII characters, scoped to you. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description The transaction id (the card processing system's) */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["simulate-transaction-step"];
            };
        };
        responses: {
            /** @description The transaction after the step */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Transaction"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "simulate-transaction-expiry": {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry for 24 hours: the same key and body replay the first answer (`Idempotent-Replayed: true`); the same key with another body is 409 `idempotency_key_reused`; while the first request runs, 409 `idempotency_in_progress`. 1 to 255 visible ASCII characters, scoped to you. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description The transaction id (the card processing system's) */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["empty-body"];
            };
        };
        responses: {
            /** @description The transaction after the step */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Transaction"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "simulate-transaction-refund": {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry for 24 hours: the same key and body replay the first answer (`Idempotent-Replayed: true`); the same key with another body is 409 `idempotency_key_reused`; while the first request runs, 409 `idempotency_in_progress`. 1 to 255 visible ASCII characters, scoped to you. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description The transaction id (the card processing system's) */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["simulate-transaction-step"];
            };
        };
        responses: {
            /** @description The new REFUND transaction */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Transaction"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "simulate-card-tokenization": {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry for 24 hours: the same key and body replay the first answer (`Idempotent-Replayed: true`); the same key with another body is 409 `idempotency_key_reused`; while the first request runs, 409 `idempotency_in_progress`. 1 to 255 visible ASCII characters, scoped to you. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description The cardKey */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["simulate-tokenization"];
            };
        };
        responses: {
            /** @description The token made */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Token"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "simulate-token-verification": {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry for 24 hours: the same key and body replay the first answer (`Idempotent-Replayed: true`); the same key with another body is 409 `idempotency_key_reused`; while the first request runs, 409 `idempotency_in_progress`. 1 to 255 visible ASCII characters, scoped to you. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description The token id (`tok_` and 24 hexadecimal characters) */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["simulate-token-verification"];
            };
        };
        responses: {
            /** @description The token */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Token"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "simulate-token-authorization": {
        parameters: {
            query?: never;
            header?: {
                /** @description Makes the request safe to retry for 24 hours: the same key and body replay the first answer (`Idempotent-Replayed: true`); the same key with another body is 409 `idempotency_key_reused`; while the first request runs, 409 `idempotency_in_progress`. 1 to 255 visible ASCII characters, scoped to you. */
                "Idempotency-Key"?: string;
            };
            path: {
                /** @description The token id (`tok_` and 24 hexadecimal characters) */
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["simulate-authorization"];
            };
        };
        responses: {
            /** @description The authorized (or declined) transaction */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Idempotent-Replayed": components["headers"]["Idempotent-Replayed"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    RateLimit: components["headers"]["RateLimit"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Transaction"];
                };
            };
            400: components["responses"]["BadRequest"];
            401: components["responses"]["Unauthorized"];
            403: components["responses"]["Forbidden"];
            404: components["responses"]["NotFound"];
            409: components["responses"]["Conflict"];
            413: components["responses"]["PayloadTooLarge"];
            415: components["responses"]["UnsupportedMediaType"];
            422: components["responses"]["UpstreamRejected"];
            429: components["responses"]["TooManyRequests"];
            502: components["responses"]["BadGateway"];
            503: components["responses"]["ServiceUnavailable"];
            504: components["responses"]["GatewayTimeout"];
        };
    };
    "event-card-created": {
        parameters: {
            query?: never;
            header: {
                /** @description The event's `id`: the same on every attempt, so a receiver can drop repeats */
                "Partner-Gateway-Event-Id": string;
                /** @description The event's `type` */
                "Partner-Gateway-Event-Type": "card.created" | "card.status_changed" | "card.updated" | "individual.created" | "transaction.created" | "transaction.updated" | "token.created" | "token.updated" | "token.verification_code";
                /** @description `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`; two `v1=` values while a rotated secret still signs. Reject a `t` older than 5 minutes. */
                "Partner-Gateway-Signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["EventCardCreated"];
            };
        };
        responses: {
            /** @description Delivered. Anything else, or no answer within 10 s, is retried with backoff for up to 3 days */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    "event-card-status-changed": {
        parameters: {
            query?: never;
            header: {
                /** @description The event's `id`: the same on every attempt, so a receiver can drop repeats */
                "Partner-Gateway-Event-Id": string;
                /** @description The event's `type` */
                "Partner-Gateway-Event-Type": "card.created" | "card.status_changed" | "card.updated" | "individual.created" | "transaction.created" | "transaction.updated" | "token.created" | "token.updated" | "token.verification_code";
                /** @description `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`; two `v1=` values while a rotated secret still signs. Reject a `t` older than 5 minutes. */
                "Partner-Gateway-Signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["EventCardStatusChanged"];
            };
        };
        responses: {
            /** @description Delivered. Anything else, or no answer within 10 s, is retried with backoff for up to 3 days */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    "event-card-updated": {
        parameters: {
            query?: never;
            header: {
                /** @description The event's `id`: the same on every attempt, so a receiver can drop repeats */
                "Partner-Gateway-Event-Id": string;
                /** @description The event's `type` */
                "Partner-Gateway-Event-Type": "card.created" | "card.status_changed" | "card.updated" | "individual.created" | "transaction.created" | "transaction.updated" | "token.created" | "token.updated" | "token.verification_code";
                /** @description `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`; two `v1=` values while a rotated secret still signs. Reject a `t` older than 5 minutes. */
                "Partner-Gateway-Signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["EventCardUpdated"];
            };
        };
        responses: {
            /** @description Delivered. Anything else, or no answer within 10 s, is retried with backoff for up to 3 days */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    "event-individual-created": {
        parameters: {
            query?: never;
            header: {
                /** @description The event's `id`: the same on every attempt, so a receiver can drop repeats */
                "Partner-Gateway-Event-Id": string;
                /** @description The event's `type` */
                "Partner-Gateway-Event-Type": "card.created" | "card.status_changed" | "card.updated" | "individual.created" | "transaction.created" | "transaction.updated" | "token.created" | "token.updated" | "token.verification_code";
                /** @description `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`; two `v1=` values while a rotated secret still signs. Reject a `t` older than 5 minutes. */
                "Partner-Gateway-Signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["EventIndividualCreated"];
            };
        };
        responses: {
            /** @description Delivered. Anything else, or no answer within 10 s, is retried with backoff for up to 3 days */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    "event-transaction-created": {
        parameters: {
            query?: never;
            header: {
                /** @description The event's `id`: the same on every attempt, so a receiver can drop repeats */
                "Partner-Gateway-Event-Id": string;
                /** @description The event's `type` */
                "Partner-Gateway-Event-Type": "card.created" | "card.status_changed" | "card.updated" | "individual.created" | "transaction.created" | "transaction.updated" | "token.created" | "token.updated" | "token.verification_code";
                /** @description `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`; two `v1=` values while a rotated secret still signs. Reject a `t` older than 5 minutes. */
                "Partner-Gateway-Signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["EventTransactionCreated"];
            };
        };
        responses: {
            /** @description Delivered. Anything else, or no answer within 10 s, is retried with backoff for up to 3 days */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    "event-transaction-updated": {
        parameters: {
            query?: never;
            header: {
                /** @description The event's `id`: the same on every attempt, so a receiver can drop repeats */
                "Partner-Gateway-Event-Id": string;
                /** @description The event's `type` */
                "Partner-Gateway-Event-Type": "card.created" | "card.status_changed" | "card.updated" | "individual.created" | "transaction.created" | "transaction.updated" | "token.created" | "token.updated" | "token.verification_code";
                /** @description `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`; two `v1=` values while a rotated secret still signs. Reject a `t` older than 5 minutes. */
                "Partner-Gateway-Signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["EventTransactionUpdated"];
            };
        };
        responses: {
            /** @description Delivered. Anything else, or no answer within 10 s, is retried with backoff for up to 3 days */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    "event-token-created": {
        parameters: {
            query?: never;
            header: {
                /** @description The event's `id`: the same on every attempt, so a receiver can drop repeats */
                "Partner-Gateway-Event-Id": string;
                /** @description The event's `type` */
                "Partner-Gateway-Event-Type": "card.created" | "card.status_changed" | "card.updated" | "individual.created" | "transaction.created" | "transaction.updated" | "token.created" | "token.updated" | "token.verification_code";
                /** @description `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`; two `v1=` values while a rotated secret still signs. Reject a `t` older than 5 minutes. */
                "Partner-Gateway-Signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["EventTokenCreated"];
            };
        };
        responses: {
            /** @description Delivered. Anything else, or no answer within 10 s, is retried with backoff for up to 3 days */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    "event-token-updated": {
        parameters: {
            query?: never;
            header: {
                /** @description The event's `id`: the same on every attempt, so a receiver can drop repeats */
                "Partner-Gateway-Event-Id": string;
                /** @description The event's `type` */
                "Partner-Gateway-Event-Type": "card.created" | "card.status_changed" | "card.updated" | "individual.created" | "transaction.created" | "transaction.updated" | "token.created" | "token.updated" | "token.verification_code";
                /** @description `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`; two `v1=` values while a rotated secret still signs. Reject a `t` older than 5 minutes. */
                "Partner-Gateway-Signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["EventTokenUpdated"];
            };
        };
        responses: {
            /** @description Delivered. Anything else, or no answer within 10 s, is retried with backoff for up to 3 days */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    "event-token-verification-code": {
        parameters: {
            query?: never;
            header: {
                /** @description The event's `id`: the same on every attempt, so a receiver can drop repeats */
                "Partner-Gateway-Event-Id": string;
                /** @description The event's `type` */
                "Partner-Gateway-Event-Type": "card.created" | "card.status_changed" | "card.updated" | "individual.created" | "transaction.created" | "transaction.updated" | "token.created" | "token.updated" | "token.verification_code";
                /** @description `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`; two `v1=` values while a rotated secret still signs. Reject a `t` older than 5 minutes. */
                "Partner-Gateway-Signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["EventTokenVerificationCode"];
            };
        };
        responses: {
            /** @description Delivered. Anything else, or no answer within 10 s, is retried with backoff for up to 3 days */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
}
