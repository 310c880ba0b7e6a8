# Partner Gateway container: build with the dev toolchain, run with production dependencies only,
# as a non-root user. DATABASE_URL and ADMIN_TOKEN come from the orchestrator's secrets.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY gateway gateway
COPY plugins plugins
COPY policies policies
COPY sandbox sandbox
COPY scripts scripts
COPY types types
COPY test test
RUN npx tsc -p tsconfig.json && rm -rf dist/test

FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production PORT=8080 ADMIN_HOST=127.0.0.1 ADMIN_PORT=9876 DATA_DIR=/var/lib/partner-gateway
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist dist
COPY config config
COPY db db
RUN mkdir -p /var/lib/partner-gateway && chown node:node /var/lib/partner-gateway && touch dist/.build-stamp
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/api/partner/health-check').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "dist/gateway/main.js"]
