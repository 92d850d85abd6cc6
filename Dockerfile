# One image for the worker and the API (different commands in docker-compose.yml).
# The Node version is pinned (the one CI runs), and so is everything npm installs: `npm ci` takes
# the exact versions of package-lock.json, tsx included (it runs the TypeScript in production, so
# it is a production dependency), and nothing is installed outside the lockfile.
FROM node:20.20.2-bookworm-slim
WORKDIR /app
# .npmrc first: the lockfile was resolved with its settings (legacy-peer-deps).
COPY package.json package-lock.json .npmrc ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY . .
# The workflow bundle, built once here: a worker (re)start loads it instead of bundling (docs/operations.md).
RUN npm run build:workflows
ENV NODE_ENV=production HOST=0.0.0.0
CMD ["node", "--import", "tsx", "src/cli/api.ts"]
