#!/usr/bin/env bash
# Checks that emulateNoAcceleration really slows the crypto it claims to: AES-128-GCM over 16 KiB
# records in the JDK (the JDK TLS engine) with and without the flags JVMOptions renders, and in
# OpenSSL's libcrypto (the same OPENSSL_ia32cap mask BoringSSL in netty-tcnative honours) with
# and without the mask. Prints a table; takes about half a minute.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mask="~0x200000200000000" # cassandra.NoAccelerationEnv
jdk_off=(-XX:-UseAES -XX:-UseCLMUL -XX:+UnlockDiagnosticVMOptions -XX:-UseAESIntrinsics -XX:-UseAESCTRIntrinsics -XX:-UseGHASHIntrinsics)
jdk() { java "$@" "$here/AesGcm.java" 3; }
ossl() { openssl speed -seconds 3 -bytes 16384 -evp aes-128-gcm 2>/dev/null | awk '/^AES-128-GCM|^aes-128-gcm/ {v=$NF; sub("k","",v); printf "%.0f\n", v*1000/1e6}'; }
echo "engine   accelerated MB/s   emulated-off MB/s   slowdown"
a=$(jdk); b=$(jdk "${jdk_off[@]}")
printf "JDK      %16s   %17s   %7.1fx\n" "$a" "$b" "$(echo "$a / $b" | bc -l)"
a=$(ossl); b=$(OPENSSL_ia32cap="$mask" ossl)
printf "OpenSSL  %16s   %17s   %7.1fx\n" "$a" "$b" "$(echo "$a / $b" | bc -l)"
