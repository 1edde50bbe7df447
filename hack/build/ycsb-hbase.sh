#!/usr/bin/env bash
# Builds the YCSB HBase driver (drivers/ycsb-hbase: YCSB's core with our binding and summary
# exporter) once per source version into bin/maven/ycsb-hbase-<hash>/ and prints its Java
# class path.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
src=$root/drivers/ycsb-hbase
hash=$(cd "$src" && find pom.xml src -type f | sort | xargs sha256sum | sha256sum | cut -c1-12)
dir=$root/bin/maven/ycsb-hbase-$hash
source "$root/hack/build/maven-lock.sh"
[[ -d $dir ]] || maven_lock # and look again: the one we waited for may have built it
if [[ ! -d $dir ]]; then
  command -v mvn >/dev/null || { echo "ycsb-hbase: Maven is missing (make prereqs installs it)" >&2; exit 1; }
  echo "ycsb-hbase: building the driver (once per source version)" >&2
  rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
  mvn -q -B -Dstyle.color=never -f "$src/pom.xml" package dependency:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$dir.tmp/lib" >&2
  cp "$src/target/ycsb-hbase-1.jar" "$dir.tmp/"
  mv "$dir.tmp" "$dir"
fi
echo "$dir/ycsb-hbase-1.jar:$dir/lib/*"
