# Partner Gateway container image (docs/operations.md).
#
#   docker build -t partner-gateway .
#   docker run --read-only --tmpfs /tmp -p 8080:8080 \
#     -e DATABASE_URL=postgres://... -e ADMIN_TOKEN=... -e ISSUER_URL=... -e PROCESSING_URL=... -e ACCOUNTS_URL=... \
#     partner-gateway
#
# Three stages: the TypeScript build with the dev toolchain, the production dependencies alone,
# and the runtime image with only those two results, run as an unprivileged user under tini.
ARG NODE_IMAGE=node:20-bookworm-slim

# --- 1. Compile (dev dependencies, never shipped) ---------------------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# No dependency needs an install script (only banners): none runs.
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json ./
COPY types types
COPY contracts contracts
COPY gateway gateway
COPY plugins plugins
COPY policies policies
COPY sandbox sandbox
COPY scripts scripts
# test/, bench/ and examples/ are not copied (.dockerignore): tsc compiles what is there.
RUN node node_modules/typescript/bin/tsc -p tsconfig.json

# --- 2. Production dependencies only ----------------------------------------------------------
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts

# --- 3. Runtime -------------------------------------------------------------------------------
FROM ${NODE_IMAGE} AS runtime
# tini as PID 1: forwards SIGTERM/SIGINT to the gateway (which drains in-flight requests and
# stops its cluster workers) and reaps any orphaned process. Without it, run with `docker run --init`.
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    PORT=8080 \
    HOST=0.0.0.0 \
    ADMIN_HOST=127.0.0.1 \
    ADMIN_PORT=9876 \
    WORKERS=2 \
    CONFIG_DIR=/app/config \
    DATA_DIR=/var/lib/partner-gateway
WORKDIR /app
# Everything below is owned by root and read-only to the gateway's user.
COPY package.json ./
COPY --from=deps /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY config config
COPY db db
# DATA_DIR is the only place the gateway writes (the embedded database and a generated admin
# token, both unused in production): a volume, so the root filesystem can be mounted read-only.
RUN mkdir -p /var/lib/partner-gateway && chown 1000:1000 /var/lib/partner-gateway
VOLUME ["/var/lib/partner-gateway"]
# Numeric (the image's "node" user) so that Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 8080 9876
# For Docker and Compose; Kubernetes ignores it and uses the Deployment's probes.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/api/partner/health-check').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "--max-old-space-size=160", "dist/gateway/main.js"]
