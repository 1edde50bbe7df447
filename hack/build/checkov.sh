#!/usr/bin/env bash
# Installs Checkov (the Kubernetes manifest policy scanner) from PyPI once, with every dependency
# pinned by hack/build/checkov-requirements.txt, in a virtualenv cached under
# bin/checkov/<version>/ (~40 s the first time), and prints the checkov executable's path.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/hack/build/versions.sh"
dir="$root/bin/checkov/$CHECKOV_VERSION"
# The stamp is written last: an interrupted install is started again, not half used.
if [[ ! -f $dir/.installed ]]; then
  echo "checkov: installing $CHECKOV_VERSION from PyPI (cached afterwards in bin/checkov/$CHECKOV_VERSION)..." >&2
  rm -rf "$dir"
  python3 -m venv "$dir" >&2
  "$dir/bin/pip" install --quiet --disable-pip-version-check -r "$root/hack/build/checkov-requirements.txt" >&2
  touch "$dir/.installed"
fi
echo "$dir/bin/checkov"
