#!/usr/bin/env bash
# Resolves YCSB's core jar (site.ycsb:core, the reference our generators must match) from Maven
# Central into bin/maven/ycsb-core-<version>/, once, and prints the jar's path.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
version=0.17.0
dir="$root/bin/maven/ycsb-core-$version"
jar="$dir/core-$version.jar"
source "$root/hack/build/maven-lock.sh"
[[ -f $jar ]] || maven_lock # and look again: the one we waited for may have built it
if [[ ! -f $jar ]]; then
  command -v mvn >/dev/null || { echo "ycsb-jars: Maven is missing (make prereqs installs it)" >&2; exit 1; }
  echo "ycsb-jars: resolving site.ycsb:core:$version from Maven Central (once)" >&2
  rm -rf "$dir.tmp"
  mvn -q -B -Dstyle.color=never dependency:copy -Dartifact="site.ycsb:core:$version" -DoutputDirectory="$dir.tmp" >&2
  mv "$dir.tmp" "$dir"
fi
echo "$jar"
