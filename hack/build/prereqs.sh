#!/usr/bin/env bash
# Installs what `make test` needs on a fresh Debian machine: make and git (build), openssl and
# a JDK (the cipher-suite catalogue is checked against the real OpenSSL and JDK; the YCSB
# HBase driver is compiled), Maven (the data-plane tests run Cassandra and HBase from Maven
# Central jars), tcpdump (the confidentiality canary captures loopback traffic; it needs
# root or CAP_NET_RAW), Prometheus (benchmark clients remote-write to it), and for the VPN
# tests iproute2 (network namespaces), WireGuard's tools and wireguard-go, OpenVPN, nftables
# (the sidecar's underlay rule) and iperf3 (tunnel throughput); e2fsprogs (the encrypted-volume
# tests make ext4 filesystems on loop devices) and fio (make bench-storage); Chromium opens the HTML study
# report headless to check its charts are drawn; python3's venv holds Checkov, the manifest
# policy scanner. Go 1.26 itself must already be
# installed; Debian's golang package is too old for this module.
set -euo pipefail
log() { echo "prereqs: $*" >&2; }

command -v go >/dev/null || { log "Go is not installed: install Go 1.26 (https://go.dev/doc/install)"; exit 1; }
need=()
command -v make >/dev/null || need+=(make)
command -v git >/dev/null || need+=(git)
command -v openssl >/dev/null || need+=(openssl)
command -v javac >/dev/null || need+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null || need+=(maven)
command -v tcpdump >/dev/null || need+=(tcpdump)
command -v prometheus >/dev/null || need+=(prometheus)
command -v ip >/dev/null || need+=(iproute2)
command -v wg >/dev/null || need+=(wireguard-tools)
command -v wireguard-go >/dev/null || need+=(wireguard-go)
command -v openvpn >/dev/null || need+=(openvpn)
command -v nft >/dev/null || need+=(nftables)
command -v iperf3 >/dev/null || need+=(iperf3)
command -v mkfs.ext4 >/dev/null || need+=(e2fsprogs)
command -v fio >/dev/null || need+=(fio)
command -v chromium >/dev/null || need+=(chromium)
# Checkov (hack/build/checkov.sh) installs into a virtualenv.
{ command -v python3 && python3 -c 'import venv, ensurepip'; } >/dev/null 2>&1 || need+=(python3 python3-venv)
if ((${#need[@]})); then
  log "installing ${need[*]} from Debian"
  sudo=""; [[ $(id -u) -eq 0 ]] || sudo=sudo
  # A mirror that hiccups must not fail the run: three tries, 20 s apart.
  for try in 1 2 3; do
    if $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null; then
      break
    fi
    ((try < 3)) || { log "apt-get failed three times; the packages above are needed"; exit 1; }
    log "apt-get failed (try $try of 3); again in 20 s"
    sleep 20
  done
fi
log "ok: $(go version | cut -d' ' -f3), $(openssl version | cut -d' ' -f1-2), java $(java -version 2>&1 | head -1 | cut -d'"' -f2)"
