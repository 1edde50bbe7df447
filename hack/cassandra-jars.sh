#!/usr/bin/env bash
# Resolves Apache Cassandra's server jars (images/cassandra/pom.xml) from Maven Central into
# bin/maven/cassandra-<version>/lib, once, and prints that directory. Used by the image build and
# by the data-plane tests, which run real Cassandra processes from these jars.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
version=$(sed -n 's:.*<cassandra.version>\(.*\)</cassandra.version>.*:\1:p' "$root/images/cassandra/pom.xml")
lib="$root/bin/maven/cassandra-$version/lib"
if [[ ! -d $lib ]]; then
  if ! command -v mvn >/dev/null; then
    echo "cassandra-jars: installing Maven from Debian" >&2
    sudo=""; [[ $(id -u) -eq 0 ]] || sudo=sudo
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq maven >/dev/null
  fi
  echo "cassandra-jars: resolving Cassandra $version from Maven Central (once)" >&2
  rm -rf "$lib.tmp"
  mvn -q -B -Dstyle.color=never -f "$root/images/cassandra/pom.xml" dependency:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$lib.tmp" >&2
  mv "$lib.tmp" "$lib"
fi
echo "$lib"
