#!/bin/sh
# Debian's `chromium` at /usr/bin/chromium, driven by playwright-core in the browser tests.
set -eu
sh "$(dirname "$0")/ensure-deb.sh" chromium /usr/bin/chromium
