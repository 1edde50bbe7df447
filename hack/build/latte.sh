#!/usr/bin/env bash
# Builds latte (latte-cli, a CQL load tool in Rust) from crates.io once, caches it under
# bin/latte/<version>/ and prints its path: latte=$(hack/build/latte.sh). make bench-client
# measures our k6 client against it. The first build takes ~15 min on 2 cores; it needs cargo
# (rustup) and OpenSSL's headers, which it installs from Debian when they are missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/hack/build/versions.sh"
latte="$root/bin/latte/$LATTE_VERSION/bin/latte"
if [[ ! -x $latte ]]; then
  cargo=$(command -v cargo || echo "$HOME/.cargo/bin/cargo")
  if [[ ! -x $cargo ]]; then
    echo "latte: cargo not found; install Rust with rustup (https://rustup.rs) and run again" >&2
    exit 1
  fi
  if ! pkg-config --exists openssl 2>/dev/null; then
    echo "latte: installing OpenSSL's headers and pkg-config from Debian..." >&2
    apt-get install -y -qq libssl-dev pkg-config >&2
  fi
  echo "latte: building latte-cli $LATTE_VERSION from crates.io (cached afterwards in bin/latte/$LATTE_VERSION)..." >&2
  # --locked: the dependency versions latte's authors released it with, not today's newest.
  "$cargo" install --quiet --locked --root "$root/bin/latte/$LATTE_VERSION" latte-cli --version "=$LATTE_VERSION" >&2
fi
echo "$latte"
