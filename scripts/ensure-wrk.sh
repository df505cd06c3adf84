#!/bin/sh
# Makes sure `wrk` (the HTTP load generator the benchmarks use) is on PATH.
# Installs the Debian package when it is missing; needs root (or passwordless sudo).
set -eu
if command -v wrk >/dev/null 2>&1; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "ensure-wrk: wrk is not installed and this user cannot install it (run as root, or install wrk)" >&2
    exit 1
  fi
fi
echo "ensure-wrk: installing wrk" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq wrk >/dev/null
command -v wrk >/dev/null 2>&1
