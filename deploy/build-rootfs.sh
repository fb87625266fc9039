#!/bin/sh
# build-rootfs.sh [DIR]: fill DIR (default deploy/rootfs) with the files of the worker
# image, for deploy/Dockerfile:
#
#   bin/chaos                           static (CGO_ENABLED=0): needs no libc
#   bin/chaos-relay                     static: the trials' {wall}, found next to chaos
#   bin/sh                              busybox, when a static one is installed (busybox-static):
#                                       agent commands run through sh -c
#   etc/ssl/certs/ca-certificates.crt   for https webhooks and model upstreams
#
# Run from the repository root (make image does).
set -eu
out=${1:-deploy/rootfs}
rm -rf "$out"
mkdir -p "$out/bin" "$out/etc/ssl/certs"

CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/bin/chaos" ./cmd/chaos
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/bin/chaos-relay" ./cmd/chaos-relay

if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
  cp /etc/ssl/certs/ca-certificates.crt "$out/etc/ssl/certs/"
else
  echo "build-rootfs: no /etc/ssl/certs/ca-certificates.crt (apt-get install ca-certificates): the image trusts no https server" >&2
  : > "$out/etc/ssl/certs/ca-certificates.crt"
fi

# ldd fails on a static binary: only a static busybox works on an empty base.
if [ -x /bin/busybox ] && ! ldd /bin/busybox >/dev/null 2>&1; then
  cp /bin/busybox "$out/bin/sh"
else
  echo "build-rootfs: no static busybox (apt-get install busybox-static): the image has no sh, so its worker cannot start agents" >&2
fi
