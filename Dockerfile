# Image of the operator and the API (one image, two commands; the Helm chart sets them):
#   operator:  node --import tsx operator/kube/main.ts      (default)
#   API:       node --import tsx api/kube-main.ts
#   embedded:  node --import tsx operator/main.ts           (single process, SQLite; PORT 8080, DATA_DIR)
# Build from the repository root:  docker build -t flowpilot .
FROM node:20-bookworm-slim

RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 10001 flowpilot \
 && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /app --shell /usr/sbin/nologin flowpilot

WORKDIR /app
ENV NODE_ENV=production

# Production dependencies only (optional ones would pull ~700 MB of GPU builds of node-llama-cpp), then tsx (a dev
# dependency) at the lockfile's version, installed globally and linked so that `node --import tsx` resolves it.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --omit=optional --no-audit --no-fund \
 && npm install -g --no-audit --no-fund "tsx@$(node -p "require('./package-lock.json').packages['node_modules/tsx'].version")" \
 && ln -s "$(npm root -g)/tsx" node_modules/tsx \
 && npm cache clean --force

COPY tsconfig.json ./
COPY operator ./operator
COPY api ./api
COPY runner-image ./runner-image
COPY crds ./crds
COPY examples ./examples

USER 10001:10001
EXPOSE 8080 9090
CMD ["node", "--import", "tsx", "operator/kube/main.ts"]
