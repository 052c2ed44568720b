#!/usr/bin/env bash
# Builds the Containerfile with buildah and starts the image against PostgreSQL: it must migrate
# an empty schema, answer /readyz 200 as the user node, and exit 0 on SIGTERM (docs/deployment.md,
# "Container image").
#
#   scripts/image-smoke.sh [--local-base]      DATABASE_URL defaults to postgres://root@127.0.0.1:5432/test
#
# --local-base: where no container registry is reachable (the base image, node:20-bookworm-slim,
# comes from Docker Hub), assemble a stand-in base image from this machine's own Node and npm
# (its node binary and libraries, npm, /bin/sh, /usr/bin/env, the CA bundle of NODE_EXTRA_CA_CERTS)
# and build on it. The Containerfile is the same; only NODE_IMAGE differs.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILDAH=(buildah --storage-driver "${STORAGE_DRIVER:-vfs}")
IMAGE=registry.example.com/climate-pulse:$(node -p 'require("./package.json").version')
DATABASE_URL="${DATABASE_URL:-postgres://root@127.0.0.1:5432/test}"
PORT="${SMOKE_PORT:-3917}"
args=()

if [ "${1:-}" = --local-base ]; then
  base=localhost/climate-pulse-node-base:$(node -p 'process.versions.node')
  ctr=$("${BUILDAH[@]}" from scratch)
  mnt=$("${BUILDAH[@]}" mount "$ctr")
  node_bin=$(command -v node)
  for f in "$node_bin" /bin/dash /usr/bin/env $( (ldd "$node_bin"; ldd /bin/dash; ldd /usr/bin/env) | grep -o '/[^ :]*' | sort -u); do
    mkdir -p "$mnt$(dirname "$f")"; cp -L "$f" "$mnt$f"
  done
  [ "$node_bin" = /usr/bin/node ] || ln -s "$node_bin" "$mnt/usr/bin/node"
  ln -s dash "$mnt/bin/sh"
  npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
  mkdir -p "$mnt/usr/lib/node_modules" "$mnt/etc" "$mnt/tmp" "$mnt/home/node" "$mnt/root"
  chmod 1777 "$mnt/tmp"
  cp -a "$npm_dir" "$mnt/usr/lib/node_modules/npm"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$mnt/usr/bin/npm"
  printf 'root:x:0:0:root:/root:/bin/sh\nnode:x:1000:1000::/home/node:/bin/sh\n' > "$mnt/etc/passwd"
  printf 'root:x:0:\nnode:x:1000:\n' > "$mnt/etc/group"
  chown 1000:1000 "$mnt/home/node"
  ca="${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}"
  mkdir -p "$mnt$(dirname "$ca")"; cp -L "$ca" "$mnt$ca"
  "${BUILDAH[@]}" config --env PATH=/usr/local/bin:/usr/bin:/bin --env "NODE_EXTRA_CA_CERTS=$ca" "$ctr"
  "${BUILDAH[@]}" umount "$ctr" >/dev/null
  "${BUILDAH[@]}" commit -q "$ctr" "$base" >/dev/null
  "${BUILDAH[@]}" rm "$ctr" >/dev/null
  args+=(--build-arg "NODE_IMAGE=$base")
  echo "== base image $base (this machine's Node $(node -v))"
fi

echo "== building $IMAGE"
"${BUILDAH[@]}" bud --isolation chroot "${args[@]}" -t "$IMAGE" -f Containerfile .

schema="image_smoke_$(node -e 'console.log(require("crypto").randomBytes(4).toString("hex"))')"
psql "$DATABASE_URL" -qc "CREATE SCHEMA $schema"
ctr=$("${BUILDAH[@]}" from "$IMAGE")
log=$(mktemp)
cleanup() {
  [ -n "${pid:-}" ] && kill -TERM "$pid" 2>/dev/null || true
  "${BUILDAH[@]}" rm "$ctr" >/dev/null 2>&1 || true
  psql "$DATABASE_URL" -qc "DROP SCHEMA IF EXISTS $schema CASCADE" >/dev/null 2>&1 || true
  rm -f "$log"
}
trap cleanup EXIT
"${BUILDAH[@]}" run --isolation chroot --env "DATABASE_URL=$DATABASE_URL?options=-c%20search_path%3D$schema" --env "PORT=$PORT" \
  "$ctr" -- node bin/climate-pulse.js serve > "$log" 2>&1 &
for _ in $(seq 1 120); do
  curl -sf -o /dev/null "http://127.0.0.1:$PORT/readyz" && break
  sleep 1
done
curl -sf -o /dev/null "http://127.0.0.1:$PORT/readyz" || { echo "FAILED: /readyz never answered 200" >&2; cat "$log" >&2; exit 1; }
# The server's own pid, from its first log line (chroot isolation shares this machine's pid namespace).
pid=$(grep -o '"pid":[0-9]*' "$log" | head -1 | cut -d: -f2)
user=$(ps -o user= -p "$pid" | tr -d ' ')
uid=$(ps -o uid= -p "$pid" | tr -d ' ')
[ "$uid" = 1000 ] || { echo "FAILED: the server runs as uid $uid ($user), not 1000" >&2; exit 1; }
kill -TERM "$pid"
for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
pid=
grep -q '"msg":"shutdown complete"' "$log" || { echo "FAILED: no clean shutdown" >&2; cat "$log" >&2; exit 1; }
echo "== $IMAGE: migrated an empty schema, /readyz 200 as uid 1000, SIGTERM: shutdown complete"
