# The image docs/deploy/kubernetes.yaml runs (docs/deployment.md, "Container image"):
#   podman build -t registry.example.com/climate-pulse:1.0.0 .     (or buildah bud, docker build)
# Two stages build it: one compiles the TypeScript with the dev dependencies, one installs the
# production dependencies only; the image holds those, the compiled JS, the migrations and the
# bin, and runs as the unprivileged user `node` (uid 1000) of the base image.
# test/ops/deployment-files.test.ts checks these rules.

# Node 20 LTS on Debian 12. Pin a digest (node:20-bookworm-slim@sha256:...) for builds you ship.
ARG NODE_IMAGE=docker.io/library/node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/cli/package.json packages/cli/
COPY packages/client/package.json packages/client/
# No scripts: `prepare` would build before the sources are here (the build is the next step).
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/copy-assets.mjs scripts/bundle.mjs scripts/
COPY src/ src/
# The compiled JS, then the console's CSS and JS files beside it (what tsc does not write), then
# the check-in page's script bundled (scripts/bundle.mjs): the server builds nothing at start.
RUN node node_modules/typescript/bin/tsc -p tsconfig.build.json && node scripts/copy-assets.mjs && node scripts/bundle.mjs --force

FROM ${NODE_IMAGE} AS production-dependencies
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/cli/package.json packages/cli/
COPY packages/client/package.json packages/client/
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000
WORKDIR /app
COPY --from=production-dependencies /app/node_modules/ node_modules/
COPY --from=build /app/dist/ dist/
COPY package.json ./
COPY bin/ bin/
COPY migrations/ migrations/
# Root owns every file; the server only reads them.
USER node
EXPOSE 3000
CMD ["node", "bin/climate-pulse.js", "serve"]
