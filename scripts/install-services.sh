#!/usr/bin/env bash
# Installs the Debian packages of the real services the tests start (PostgreSQL, Redis, Mosquitto, RabbitMQ, NATS)
# when they are missing. Needs root (CI, containers); otherwise prints the command to run.
set -euo pipefail
PKGS=(postgresql redis-server mosquitto rabbitmq-server nats-server)
declare -A BIN=([postgresql]=/usr/lib/postgresql/15/bin/postgres [redis-server]=/usr/bin/redis-server [mosquitto]=/usr/sbin/mosquitto [rabbitmq-server]=/usr/sbin/rabbitmq-server [nats-server]=/usr/sbin/nats-server)
missing=()
for p in "${PKGS[@]}"; do [ -x "${BIN[$p]}" ] || missing+=("$p"); done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "Missing service packages for the tests: ${missing[*]}. Install them with: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "Installing ${missing[*]} from Debian's archive..."
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# policy-rc.d keeps the packages from starting system-wide services: the tests start their own instances.
printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
rm -f /usr/sbin/policy-rc.d
