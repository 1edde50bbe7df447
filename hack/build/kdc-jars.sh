#!/usr/bin/env bash
# Resolves Apache Kerby's KDC jars (images/kdc/pom.xml) from Maven Central, once, and prints
# their directory.
exec "$(dirname "$0")/maven-lib.sh" images/kdc/pom.xml kerby kerby.version
