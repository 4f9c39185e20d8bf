#!/usr/bin/env bash
# Writes the secrets docker-compose.yml reads, if they do not exist yet:
# a random cluster secret (authenticates and encrypts node-to-node
# traffic and gossip) and a random client password, readable by their
# owner only.
#
#   scripts/docker-secrets.sh [DIR]     # default: ./secrets, or $GOBLIN_SECRETS
set -euo pipefail
cd "$(dirname "$0")/.."

dir=${1:-${GOBLIN_SECRETS:-./secrets}}
mkdir -p "$dir"
chmod 700 "$dir"
umask 077
for name in cluster-secret requirepass; do
	f="$dir/$name"
	if [ -s "$f" ]; then
		echo "kept $f"
		continue
	fi
	head -c 48 /dev/urandom | base64 | tr -d '=+/\n' >"$f"
	echo >>"$f"
	echo "wrote $f"
done
