#!/usr/bin/env bash
# Installs the Debian packages of the real services the tests start (PostgreSQL, Redis, Mosquitto, RabbitMQ, NATS, MariaDB,
# git daemon, OpenSSH's sshd for SFTP), the interpreters of the Ruby and R script tasks (ruby, r-base-core: about 80 MB) and
# the headless browser the web UI's tests drive (Chromium, and a font for legible screenshots: test/ui/) when they are missing (the
# file each package installs is looked for). Needs root (CI, containers); otherwise prints the command to run.
# While apt-get installs, a policy-rc.d keeps the packages from starting system-wide services (the tests start their
# own); the policy-rc.d that was there before, if any, is put back as it was (content, mode, owner), also when apt-get
# fails or the script is interrupted. Overridable for tests: POLICY_RC_D (its path), SERVICE_PACKAGES (the packages).
set -euo pipefail
read -r -a PKGS <<< "${SERVICE_PACKAGES-postgresql redis-server mosquitto rabbitmq-server nats-server mariadb-server chromium fonts-liberation python3-aiosmtpd git openssh-server ruby r-base-core}"
POLICY_RC_D=${POLICY_RC_D:-/usr/sbin/policy-rc.d}
declare -A BIN=(
  [postgresql]=/usr/lib/postgresql/15/bin/postgres
  [redis-server]=/usr/bin/redis-server
  [mosquitto]=/usr/sbin/mosquitto
  [rabbitmq-server]=/usr/sbin/rabbitmq-server
  [nats-server]=/usr/sbin/nats-server
  [mariadb-server]=/usr/sbin/mariadbd
  [chromium]=/usr/bin/chromium
  [fonts-liberation]=/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf
  [python3-aiosmtpd]=/usr/lib/python3/dist-packages/aiosmtpd/__init__.py
  [git]=/usr/bin/git
  [openssh-server]=/usr/sbin/sshd
  [ruby]=/usr/bin/ruby
  [r-base-core]=/usr/bin/Rscript
)
missing=()
for p in "${PKGS[@]}"; do [ -e "${BIN[$p]:-}" ] || missing+=("$p"); done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "Missing service packages for the tests: ${missing[*]}. Install them with: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
echo "Installing ${missing[*]} from Debian's archive..."
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq

saved=""   # where the previous policy-rc.d waits meanwhile (moved: content, mode and owner kept)
ours=0     # whether the file at POLICY_RC_D is now ours
restore_policy() {
  if [ "$ours" = 1 ]; then rm -f "$POLICY_RC_D"; fi
  if [ -n "$saved" ]; then mv -f "$saved" "$POLICY_RC_D"; fi
}
trap restore_policy EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
if [ -e "$POLICY_RC_D" ] || [ -L "$POLICY_RC_D" ]; then
  mv -f "$POLICY_RC_D" "$POLICY_RC_D.flowpilot-saved.$$"
  saved="$POLICY_RC_D.flowpilot-saved.$$"
fi
ours=1
printf '#!/bin/sh\nexit 101\n' > "$POLICY_RC_D" && chmod 755 "$POLICY_RC_D"
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
