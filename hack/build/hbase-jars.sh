#!/usr/bin/env bash
# Resolves Apache HBase's server jars (images/hbase/pom.xml) from Maven Central, once, and
# prints their directory. The data-plane tests run real HBase processes from these jars.
exec "$(dirname "$0")/maven-lib.sh" images/hbase/pom.xml hbase hbase.version
