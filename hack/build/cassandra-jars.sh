#!/usr/bin/env bash
# Resolves Apache Cassandra's server jars (images/cassandra/pom.xml) from Maven Central, once,
# and prints their directory. Used by the image build and by the data-plane tests, which run
# real Cassandra processes from these jars.
exec "$(dirname "$0")/maven-lib.sh" images/cassandra/pom.xml cassandra cassandra.version
