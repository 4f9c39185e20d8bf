#!/usr/bin/env bash
# Builds Goblin's Docker image (default tag goblin:local) from scratch: a
# statically linked goblind and the Dockerfile, nothing pulled.
#
#   scripts/docker-image.sh [TAG]
set -euo pipefail
cd "$(dirname "$0")/.."

tag=${1:-${GOBLIN_IMAGE:-goblin:local}}
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT

CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$ctx/goblind" ./cmd/goblind
cp Dockerfile NOTICE "$ctx/"
docker build -t "$tag" "$ctx"
echo "built $tag"
