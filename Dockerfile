# syntax=docker/dockerfile:1
#
# The payments server as a container image: multi-stage, runs the built JavaScript only, as the
# unprivileged `node` user.
#
# NOT EXERCISED BY THIS PROJECT'S CI: the build machines have no container engine, so this file has
# been written against Docker's and the node image's documentation and checked by reading, never
# built there. docs/operating.md "Deployment files" says what was and was not verified.
#
#   docker build -t payments .
#   docker run -p 127.0.0.1:3000:3000 -v payments-data:/data \
#     -e VAULT_MASTER_KEY="$(openssl rand -base64 32)" -e VAULT_FINGERPRINT_KEY="$(openssl rand -base64 32)" payments
#
# Node 24, the release .ci/run tests first (its NODE24_VERSION; docs/operating.md "Supported Node
# versions"): move both together.
ARG NODE_IMAGE=node:24.21.0-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
# better-sqlite3 downloads a prebuilt addon when one matches; otherwise it compiles (node-gyp).
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
# The manifests first, so the dependency layer is rebuilt only when they change. npm ci needs every
# workspace's package.json to match the lock file.
COPY package.json package-lock.json tsconfig.json ./
COPY spec/package.json spec/
COPY generated/package.json generated/
COPY clients/typescript/package.json clients/typescript/
COPY clients/pay-page/package.json clients/pay-page/
COPY clients/console/package.json clients/console/
COPY server/package.json server/
COPY test/package.json test/
# The root postinstall applies these to the installed dependencies (patches/README.md).
COPY patches/ patches/
RUN npm ci --no-audit --no-fund
COPY generated/ generated/
# The console and the reference (clients/console) bundle the typed client's sources; the hosted
# payment page's sources (clients/pay-page) are copied beside the server.
COPY clients/ clients/
COPY server/ server/
# server/dist: the server and the admin CLI with the generated contract bundled in, the hosted payment
# page's sources (dist/pay-page/) and public/ (the console's and the reference's pages).
RUN npm run build -w @payments/server
# Only what server/dist needs at run time: the server workspace's production dependencies.
RUN rm -rf node_modules server/node_modules \
  && npm ci --omit=dev --workspace @payments/server --no-audit --no-fund \
  && mkdir -p server/node_modules

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/server/node_modules ./server/node_modules
COPY --from=build /src/server/package.json ./server/package.json
COPY --from=build /src/server/dist ./server/dist
# /data for the store; server/dist/.compile-cache/ for Node's compile cache (server/src/compile-cache.ts),
# which the server writes once it listens: owned by `node`, or every container compiles its modules anew.
RUN mkdir -p /data server/dist/.compile-cache && chown node:node /data server/dist/.compile-cache
USER node
VOLUME ["/data"]
EXPOSE 3000
# Readiness (GET /readyz) asks the store; an orchestrator should use its own probes on /healthz and /readyz.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:3000/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Node itself as PID 1 (not npm), so SIGTERM reaches the server and it drains (SHUTDOWN_TIMEOUT_SECONDS).
CMD ["node", "server/dist/main.js"]
