#!/usr/bin/env bash
# maven-lib.sh POM NAME VERSION_PROPERTY: resolves the runtime jars of POM's dependencies from
# Maven Central into bin/maven/NAME-<version>/lib, once, and prints that directory. The version
# is POM's VERSION_PROPERTY, so a version bump resolves anew.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
pom=$root/$1 name=$2 property=$3
version=$(sed -n "s:.*<$property>\(.*\)</$property>.*:\1:p" "$pom")
lib="$root/bin/maven/$name-$version/lib"
source "$root/hack/build/maven-lock.sh"
[[ -d $lib ]] || maven_lock # and look again: the one we waited for may have resolved it
if [[ ! -d $lib ]]; then
  if ! command -v mvn >/dev/null; then
    echo "maven-lib: installing Maven from Debian" >&2
    sudo=""; [[ $(id -u) -eq 0 ]] || sudo=sudo
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq maven >/dev/null
  fi
  echo "maven-lib: resolving $name $version from Maven Central (once)" >&2
  rm -rf "$lib.tmp"
  mvn -q -B -Dstyle.color=never -f "$pom" dependency:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$lib.tmp" >&2
  mv "$lib.tmp" "$lib"
fi
echo "$lib"
