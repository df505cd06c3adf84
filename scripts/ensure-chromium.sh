#!/bin/sh
# Makes sure Debian's `chromium` (driven by playwright-core in test/admin-pages/browser.test.ts)
# is installed at /usr/bin/chromium. Installs the package when it is missing; needs root (or
# passwordless sudo). Waits for the dpkg lock when another installation is running.
set -eu
CHROMIUM=/usr/bin/chromium
if [ -x "$CHROMIUM" ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "ensure-chromium: $CHROMIUM is missing and this user cannot install it (run as root, or install the chromium package)" >&2
    exit 1
  fi
fi
echo "ensure-chromium: installing chromium" >&2
$SUDO apt-get -o DPkg::Lock::Timeout=300 update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=300 install -y -qq chromium >/dev/null
if [ ! -x "$CHROMIUM" ]; then
  echo "ensure-chromium: installation finished but $CHROMIUM is still missing" >&2
  exit 1
fi
"$CHROMIUM" --version >&2 || true
