# Image of the operator and the API (one image, two commands; the Helm chart sets them):
#   operator:  node --import tsx operator/kube/main.ts      (default)
#   API:       node --import tsx api/kube-main.ts
#   embedded:  node --import tsx operator/main.ts           (single process, SQLite; PORT 8080, DATA_DIR)
# Build from the repository root:  docker build -t flowpilot .

# Dependencies, with a compiler at hand in case better-sqlite3 finds no prebuilt binary and builds from source.
FROM node:20-bookworm-slim AS deps
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# Production dependencies only (optional ones would pull ~700 MB of GPU builds of node-llama-cpp), then tsx (a dev
# dependency) at the lockfile's version with its own dependencies nested, moved in as a real directory so that
# `node --import tsx` resolves it.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --omit=optional --no-audit --no-fund \
 && npm install -g --prefix /tmp/tsx --no-audit --no-fund "tsx@$(node -p "require('./package-lock.json').packages['node_modules/tsx'].version")" \
 && mv /tmp/tsx/lib/node_modules/tsx node_modules/tsx \
 && rm -rf /tmp/tsx

FROM node:20-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 10001 flowpilot \
 && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /app --shell /usr/sbin/nologin flowpilot
WORKDIR /app
ENV NODE_ENV=production
COPY --from=deps /app/node_modules ./node_modules
COPY package.json package-lock.json tsconfig.json ./
COPY operator ./operator
COPY api ./api
COPY runner-image ./runner-image
COPY crds ./crds
COPY examples ./examples

USER 10001:10001
EXPOSE 8080 9090
CMD ["node", "--import", "tsx", "operator/kube/main.ts"]
