#!/usr/bin/env bash
# Debian packages the test suite drives as real peers: kcat (a librdkafka consumer/producer),
# stunnel4 and socat (TLS terminators in front of Tansu), an MIT Kerberos KDC with its admin tools and
# kinit (the GSSAPI tests run a throw-away realm), and libkrb5-dev (the gssapi package builds from source
# against it: PyPI has no Linux wheel). Installed only when missing.
set -euo pipefail
need=()
command -v kcat >/dev/null 2>&1 || need+=(kcat)
command -v stunnel4 >/dev/null 2>&1 || need+=(stunnel4)
command -v socat >/dev/null 2>&1 || need+=(socat)
command -v java >/dev/null 2>&1 || need+=(openjdk-17-jre-headless)
[ -x /usr/sbin/krb5kdc ] || need+=(krb5-kdc)
[ -x /usr/sbin/kadmin.local ] || need+=(krb5-admin-server)
[ -x /usr/bin/kinit ] || need+=(krb5-user)
command -v krb5-config >/dev/null 2>&1 || need+=(libkrb5-dev)
[ ${#need[@]} -eq 0 ] && exit 0
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "installing system packages: ${need[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
