# Image of the operator and the API (one image, two commands; the Helm chart sets them), running compiled JavaScript:
#   operator:  node dist/operator/kube/main.js      (default)
#   API:       node dist/api/kube-main.js
#   embedded:  node dist/operator/main.js           (single process, SQLite; PORT 8080, DATA_DIR; it listens on
#              127.0.0.1 unless HOST=0.0.0.0 with BASIC_AUTH_USERNAME/BASIC_AUTH_PASSWORD or API_TOKENS)
# Build from the repository root:  docker build -t flowpilot .

# TypeScript → dist/ (scripts/build.mjs: esbuild strips the types file for file, then bundles the entry points of task
# Pods with the packages they import). The dependencies are installed without their install scripts (no native module
# is bundled); only dist/ leaves this stage.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY scripts/build.mjs ./scripts/build.mjs
COPY operator ./operator
COPY api ./api
COPY runner-image ./runner-image
RUN node scripts/build.mjs

# The web UI (ui/, React + Vite) → ui/dist, served by the API under /ui. The build tools are devDependencies: this stage
# installs them without running install scripts (the native modules are not needed to bundle), and only ui/dist leaves it.
FROM node:20-bookworm-slim AS ui
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY scripts/build-ui.mjs ./scripts/build-ui.mjs
COPY ui ./ui
RUN node scripts/build-ui.mjs

# Production dependencies only (optional ones would pull ~700 MB of GPU builds of node-llama-cpp), with a compiler at
# hand in case better-sqlite3 finds no prebuilt binary and builds from source.
FROM node:20-bookworm-slim AS deps
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts/build-ui.mjs scripts/build-cli.mjs ./scripts/
RUN npm ci --omit=dev --omit=optional --no-audit --no-fund

FROM node:20-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 10001 flowpilot \
 && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /app --shell /usr/sbin/nologin flowpilot
WORKDIR /app
ENV NODE_ENV=production
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=ui /app/ui/dist ./ui/dist
COPY package.json package-lock.json ./
COPY crds ./crds
COPY examples ./examples

USER 10001:10001
EXPOSE 8080 9090
CMD ["node", "dist/operator/kube/main.js"]
