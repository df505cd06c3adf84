#!/bin/sh
# ensure-deb.sh PACKAGE FILE: makes sure Debian's PACKAGE is installed, FILE being the proof that
# it is (a binary or a module the tests use). Installs the package when FILE is missing; needs
# root (or passwordless sudo). Waits for the dpkg lock when another installation is running.
set -eu
PACKAGE=$1
FILE=$2
if [ -e "$FILE" ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "ensure-deb: $FILE is missing and this user cannot install $PACKAGE (run as root, or install it)" >&2
    exit 1
  fi
fi
echo "ensure-deb: installing $PACKAGE" >&2
$SUDO apt-get -o DPkg::Lock::Timeout=300 update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout=300 install -y -qq "$PACKAGE" >/dev/null
if [ ! -e "$FILE" ]; then
  echo "ensure-deb: $PACKAGE is installed but $FILE is still missing" >&2
  exit 1
fi
