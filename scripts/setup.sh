#!/usr/bin/env bash
# Installs what `npm test` and `npm start` need on Debian 12: the Debian packages (installed with
# apt-get when run as root; otherwise the exact command is printed) and node_modules (the lock file's versions).
set -euo pipefail
cd "$(dirname "$0")/.."

# clang-16, lld-16 and wabt build and check the relaxed-SIMD kernels (emscripten's clang 14 cannot).
packages=(emscripten libeigen3-dev catch2 chromium python3-numpy clang-14 libclang-rt-14-dev cmake g++ ninja-build mkdocs-material
  clang-16 lld-16 wabt nlohmann-json3-dev libfast-float-dev clang-format-14)
missing=()
for package in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null || true)
  [ "$status" = installed ] || missing+=("$package")
done

if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "setup: installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update
    apt-get install -y "${missing[@]}"
  else
    echo "setup: missing Debian packages: ${missing[*]}" >&2
    echo "setup: install them with:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi

node -e '
  const [major, minor] = process.versions.node.split(".").map(Number);
  if (major < 20 || (major === 20 && minor < 19)) {
    console.error(`setup: Node ${process.versions.node} is too old: Node 20.19 or newer is needed`);
    process.exit(1);
  }'

# The lock file's versions, installed when node_modules is missing or older than the lock file.
# Not `npm ci`: the lock cannot list rollup's binaries for other platforms (optional dependencies
# of vitepress's bundler, missing from the registry this project is built against), and npm ci
# refuses a lock without them. `npm install --no-save` installs the lock's versions, skips the
# optional packages it cannot get, and writes neither package.json nor the lock.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: npm install (the lock file's versions)"
  npm install --no-save --no-audit --no-fund
fi
