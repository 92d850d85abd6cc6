# One image for the worker and the API (different commands in docker-compose.yml).
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm install --no-save tsx
COPY . .
ENV NODE_ENV=production HOST=0.0.0.0
CMD ["npx", "tsx", "src/cli/api.ts"]
