# The ccs-bulk image the Kubernetes examples of docs/scale-out.md and docs/scheduled-reports.md
# name: `ccs-bulk` as the entrypoint, run as a non-root user, nothing in it but Node, the
# production dependencies and the compiled CLI.
#   docker build -t registry.example.com/ccs-bulk:0.2.0 .
#   docker run --rm registry.example.com/ccs-bulk:0.2.0 --version

# 1. Compile: every dependency (TypeScript is a dev dependency). --ignore-scripts: npm ci would
#    otherwise run the package's `prepare` (a build) before the sources are here.
FROM node:20-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npx tsc -p tsconfig.build.json

# 2. The production dependencies alone (all plain JavaScript: no install scripts to run).
FROM node:20-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

# 3. What runs: node, node_modules and dist/. npm, npx, corepack and yarn are removed: nothing is
#    installed or built at run time, and a tool that can fetch code is not left in the image.
FROM node:20-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY package.json LICENSE ./
RUN rm -rf /usr/local/lib/node_modules /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack /opt/yarn* /usr/local/bin/yarn /usr/local/bin/yarnpkg \
  && chmod 755 /app/dist/bin.cjs \
  && ln -s /app/dist/bin.cjs /usr/local/bin/ccs-bulk
# The image's own unprivileged account, `node`, by number: a pod's runAsNonRoot can only check a number.
USER 1000:1000
WORKDIR /data
ENTRYPOINT ["ccs-bulk"]
CMD ["--help"]
