#!/usr/bin/env bash
# images.sh: builds the product's container images locally (no registry needed) and, when the
# Kind cluster runs, loads them into it. Each image is FROM scratch or a base built from Debian
# packages, tagged with a hash of its inputs, built once and saved in bin/images/. Prints
# "name=image" lines.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/hack/build/versions.sh"
log() { echo "images: $*" >&2; }
export DOCKER_BUILDKIT=0
"$root/hack/kind/docker-up.sh"

# go_image NAME PACKAGE [DIR...]: a static Go binary of this module on scratch, running as a
# non-root user, with the repository's DIRs copied to the same paths under /.
go_image() {
  local name=$1 pkg=$2 version; shift 2
  version=$( (cd "$root" && git ls-files --cached --others --exclude-standard go.mod go.sum api internal cmd controllers "$@" | xargs sha256sum | sha256sum) | cut -c1-12)
  local tag="secured.dev/$name:$version"
  local tar="$root/bin/images/${tag//[\/:]/_}.tar"
  if [[ ! -f $tar ]]; then
    log "building $tag"
    local bin ctx
    bin=$("$root/hack/build/build-go-binary.sh" "$name" "$root" "$pkg" "$version")
    ctx=$(mktemp -d)
    cp "$bin" "$ctx/$name"
    printf 'FROM scratch\nCOPY %s /%s\n' "$name" "$name" >"$ctx/Dockerfile"
    for dir in "$@"; do
      mkdir -p "$ctx/$dir" && cp -r "$root/$dir/." "$ctx/$dir/"
      printf 'COPY %s /%s\n' "$dir" "$dir" >>"$ctx/Dockerfile"
    done
    printf 'USER 65532:65532\nENTRYPOINT ["/%s"]\n' "$name" >>"$ctx/Dockerfile"
    docker build -q -t "$tag" "$ctx" >/dev/null 2>"$ctx/build.log" || { cat "$ctx/build.log" >&2; exit 1; }
    rm -rf "$ctx"
    mkdir -p "$(dirname "$tar")"
    docker save -o "$tar.tmp" "$tag" && mv "$tar.tmp" "$tar"
  fi
  echo "$name=$tag $tar"
}

# save TAG: the image as a tarball in bin/images/, for kind load and the node image.
save() {
  local tar="$root/bin/images/${1//[\/:]/_}.tar"
  if [[ ! -f $tar ]]; then
    mkdir -p "$(dirname "$tar")"
    docker save -o "$tar.tmp" "$1" && mv "$tar.tmp" "$tar"
  fi
  echo "$tar"
}

# debian_image NAME ENTRYPOINT PACKAGE...: a Debian root filesystem with the packages, as an image.
debian_image() {
  local name=$1 entrypoint=$2; shift 2
  local rootfs tag
  rootfs=$("$root/hack/kind/rootfs.sh" "$name" "$@")
  tag="secured.dev/$name:$(basename "$rootfs" .tar | sed "s/^$name-//")"
  if ! docker image inspect "$tag" >/dev/null 2>&1; then
    log "importing $tag"
    docker import ${entrypoint:+-c "ENTRYPOINT [\"$entrypoint\"]"} "$rootfs" "$tag" >/dev/null
  fi
  echo "$name=$tag $(save "$tag")"
}

# cassandra_image JRE_TAG: Apache Cassandra from Maven Central on the JRE base, with the upstream
# image's layout (/etc/cassandra, /var/lib/cassandra, user 999) and our launcher.
cassandra_image() {
  local jre=$1 version ctx
  version=$(sed -n 's:.*<cassandra.version>\(.*\)</cassandra.version>.*:\1:p' "$root/images/cassandra/pom.xml")
  local lib
  lib=$("$root/hack/build/cassandra-jars.sh")
  local hash
  hash=$( { echo "$jre"; ls "$lib"; cd "$root/images/cassandra" && find . -type f | sort | xargs sha256sum; } | sha256sum | cut -c1-12)
  local tag="secured.dev/cassandra:$version-$hash"
  if ! docker image inspect "$tag" >/dev/null 2>&1; then
    log "building $tag"
    ctx=$(mktemp -d)
    cp -r "$lib" "$ctx/lib"
    cp -r "$root/images/cassandra/bin" "$root/images/cassandra/conf" "$ctx/"
    cat >"$ctx/Dockerfile" <<DOCKERFILE
FROM $jre
COPY lib /opt/cassandra/lib
COPY bin /opt/cassandra/bin
COPY conf /etc/cassandra
RUN groupadd -r -g 999 cassandra && useradd -r -u 999 -g cassandra -d /var/lib/cassandra cassandra && \
    mkdir -p /var/lib/cassandra /var/log/cassandra && chown -R cassandra:cassandra /var/lib/cassandra /var/log/cassandra
ENV CASSANDRA_HOME=/opt/cassandra CASSANDRA_CONF=/etc/cassandra PATH=/opt/cassandra/bin:/usr/local/bin:/usr/bin:/bin
USER 999:999
EXPOSE 7000 7199 9042
CMD ["cassandra", "-f"]
DOCKERFILE
    docker build -q -t "$tag" "$ctx" >/dev/null 2>"$ctx/build.log" || { cat "$ctx/build.log" >&2; exit 1; }
    rm -rf "$ctx"
  fi
  echo "cassandra=$tag $(save "$tag")"
}

# jvm_image NAME VERSION JRE_TAG LIB [DIR [SOURCE]]: jars (LIB) on the JRE base under
# /opt/NAME/lib, with DIR's files under /opt/NAME; SOURCE (a single-file Java program in DIR) is
# compiled here, because the JRE cannot. Runs as uid 1000, the user the operator's pods ask for.
jvm_image() {
  local name=$1 version=$2 jre=$3 lib=$4 dir=${5:-} source=${6:-} ctx hash
  hash=$( { echo "$jre"; find "$lib" -type f | sort; [[ -z $dir ]] || { cd "$root/$dir" && find . -type f | sort | xargs sha256sum; }; } | sha256sum | cut -c1-12)
  local tag="secured.dev/$name:$version-$hash"
  if ! docker image inspect "$tag" >/dev/null 2>&1; then
    log "building $tag"
    ctx=$(mktemp -d)
    cp -r "$lib" "$ctx/lib"
    mkdir -p "$ctx/extra"
    [[ -z $dir ]] || cp -r "$root/$dir/." "$ctx/extra/"
    if [[ -n $source ]]; then
      javac -d "$ctx/extra" -cp "$lib/*" "$root/$dir/$source"
    fi
    cat >"$ctx/Dockerfile" <<DOCKERFILE
FROM $jre
COPY lib /opt/$name/lib
COPY extra /opt/$name
RUN groupadd -r -g 1000 $name && useradd -r -u 1000 -g $name -d /tmp $name
USER 1000:1000
DOCKERFILE
    docker build -q -t "$tag" "$ctx" >/dev/null 2>"$ctx/build.log" || { cat "$ctx/build.log" >&2; exit 1; }
    rm -rf "$ctx"
  fi
  echo "$name=$tag $(save "$tag")"
}

# entrypoint_image NAME BASE FILE [USER]: the image NAME with FILE as its entrypoint, in
# /usr/local/bin under FILE's own name, on the image BASE; tagged with a hash of both.
entrypoint_image() {
  local name=$1 base=$2 file=$3 user=${4:-} bin ctx tag
  bin=$(basename "$file")
  tag="secured.dev/$name:$( { echo "$base"; sha256sum <"$file"; } | sha256sum | cut -c1-12)"
  if ! docker image inspect "$tag" >/dev/null 2>&1; then
    log "building $tag"
    ctx=$(mktemp -d)
    cp "$file" "$ctx/$bin"
    {
      printf 'FROM %s\nCOPY %s /usr/local/bin/%s\n' "$base" "$bin" "$bin"
      [[ -z $user ]] || printf 'USER %s\n' "$user"
      printf 'ENTRYPOINT ["/usr/local/bin/%s"]\n' "$bin"
    } >"$ctx/Dockerfile"
    docker build -q -t "$tag" "$ctx" >/dev/null 2>"$ctx/build.log" || { cat "$ctx/build.log" >&2; exit 1; }
    rm -rf "$ctx"
  fi
  echo "$name=$tag $(save "$tag")"
}

# vpn_image: the tunnel sidecar, images/vpn/bin/tunnel on a Debian base with WireGuard's tools,
# wireguard-go (for nodes without the kernel module), OpenVPN, nftables and curl (the key fetch).
vpn_image() {
  local base
  base=$(debian_image vpn-base "" wireguard-tools wireguard-go openvpn nftables iproute2 procps curl)
  base=${base#*=}; base=${base%% *}
  entrypoint_image vpn "$base" "$root/images/vpn/bin/tunnel"
}

# storage_bench_image: cmd/storage-bench, the client of storage workloads, on a Debian base
# with fio.
storage_bench_image() {
  local base version
  base=$(debian_image fio-base "" fio)
  base=${base#*=}; base=${base%% *}
  version=$( (cd "$root" && git ls-files --cached --others --exclude-standard go.mod go.sum api internal cmd | xargs sha256sum | sha256sum) | cut -c1-12)
  entrypoint_image storage-bench "$base" "$("$root/hack/build/build-go-binary.sh" storage-bench "$root" ./cmd/storage-bench "$version")" 65532:65532
}

jre=$(debian_image jre "" openjdk-17-jre-headless procps iproute2 passwd)
jre_tag=${jre#*=}; jre_tag=${jre_tag%% *}
images=(
  "$(go_image manager ./cmd/manager)"
  "$(go_image crypto-labeller ./cmd/crypto-labeller)"
  "$(go_image cql-client ./cmd/cql-client)"
  "$(go_image volume-encryption ./cmd/volume-encryption)"
  "$(go_image k6 ./cmd/k6 bench/k6)"
  "$jre"
  "$(cassandra_image "$jre_tag")"
  "$(jvm_image hbase "$(sed -n 's:.*<hbase.version>\(.*\)</hbase.version>.*:\1:p' "$root/images/hbase/pom.xml")" "$jre_tag" "$("$root/hack/build/hbase-jars.sh")" images/hbase)"
  "$(jvm_image ycsb-hbase 0.17.0 "$jre_tag" "$(dirname "$("$root/hack/build/ycsb-hbase.sh" | cut -d: -f1)")")"
  "$(jvm_image kdc "$(sed -n 's:.*<kerby.version>\(.*\)</kerby.version>.*:\1:p' "$root/images/kdc/pom.xml")" "$jre_tag" "$("$root/hack/build/kdc-jars.sh")" images/kdc Kdc.java)"
  "$(debian_image prometheus /usr/bin/prometheus prometheus)"
  "$(vpn_image)"
  "$(storage_bench_image)"
)

kind="$root/bin/kind-cli/$KIND_VERSION/kind"
if [[ -x $kind ]] && "$kind" get clusters 2>/dev/null | grep -qx secured; then
  # Tags change with their inputs, so an image every node holds is current: skip the load.
  nodes=$("$kind" get nodes --name secured)
  for line in "${images[@]}"; do
    tag=${line#*=}; tag=${tag%% *}
    missing=0
    for n in $nodes; do
      docker exec "$n" ctr -n k8s.io images ls -q "name==$tag" 2>/dev/null | grep -q . || missing=1
    done
    ((missing)) || continue
    log "loading $tag into the Kind cluster"
    "$kind" load image-archive "${line##* }" --name secured >/dev/null
  done
fi
printf '%s\n' "${images[@]%% *}"
