#!/usr/bin/env bash
# Installs a Tessera .deb into a clean Debian 12 root and checks that it works there:
#  1. `apt install ./tessera_*.deb` pulls in every dependency (Recommends left out, so Depends
#     alone must be enough);
#  2. the CLI JIT-compiles and runs the installed MobileNetV2 sample on the CPU, checked against
#     the reference interpreter (`tessera-cli run ... --target cpu --check`);
#  3. the GUI starts offscreen: `tessera --help`, then a screenshot of the sample (graph layout,
#     fonts, SVG);
#  4. the desktop entry validates, its Exec is on PATH and its Icon is installed; the AppStream
#     metadata validates.
# Usage: sudo packaging/test-deb.sh PATH/TO/tessera_VERSION_ARCH.deb
# Needs root, network access to a Debian mirror, and debootstrap (installed when missing). The
# root is made with `debootstrap --variant=minbase bookworm` in a fresh directory under /tmp and
# removed afterwards. Environment: TESSERA_DEBIAN_MIRROR (default: the mirror this machine's apt
# uses, else http://deb.debian.org/debian), KEEP_ROOT=1 (keep the root for a look inside),
# TESSERA_TEST_OUT (a directory that receives the logs and the screenshot).
# Not part of CI: it needs root and the network.
set -euo pipefail

deb=${1:?usage: test-deb.sh PATH/TO/tessera_VERSION_ARCH.deb}
deb=$(realpath "$deb")
[ -f "$deb" ] || { echo "test-deb: no such file: $deb" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "test-deb: needs root (debootstrap, chroot)" >&2; exit 2; }

log() { printf '\n== %s\n' "$*"; }

if ! command -v debootstrap >/dev/null; then
  log "installing debootstrap"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >/dev/null
fi

# The mirror: the first Debian URI in apt's sources (deb822 or one-line format).
mirror=${TESSERA_DEBIAN_MIRROR:-}
if [ -z "$mirror" ]; then
  mirror=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '$1 == "URIs:" && $2 ~ /debian\/?$/ {print $2; exit}')
fi
if [ -z "$mirror" ]; then
  mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
    awk '$1 == "deb" {for (i = 2; i <= NF; i++) if ($i ~ /^https?:.*debian\/?$/) {print $i; exit}}')
fi
mirror=${mirror:-http://deb.debian.org/debian}

target=$(mktemp -d /tmp/tessera-deb-root.XXXXXX)
chmod 755 "$target"  # mktemp's 0700 would keep apt's _apt user out
out=${TESSERA_TEST_OUT:-}
cleanup() {
  for m in "$target/proc" "$target/dev/pts" "$target/dev"; do
    mountpoint -q "$m" && umount "$m"
  done
  if [ "${KEEP_ROOT:-0}" = 1 ]; then
    echo "test-deb: root kept at $target"
  elif findmnt -l -n -o TARGET | grep -q "^$target/"; then
    echo "test-deb: something is still mounted under $target; not removing it" >&2
  else
    rm -rf --one-file-system "$target"
  fi
}
trap cleanup EXIT

log "debootstrap bookworm from $mirror into $target"
debootstrap --variant=minbase bookworm "$target" "$mirror" >"$target.debootstrap.log" 2>&1 ||
  { tail -20 "$target.debootstrap.log"; exit 1; }
rm -f "$target.debootstrap.log"
cp /etc/resolv.conf "$target/etc/resolv.conf"
# A stock installation's sources: the release, its updates and the security archive.
security=http://deb.debian.org/debian-security
case "$mirror" in */debian | */debian/) security="${mirror%/}-security" ;; esac
cat >"$target/etc/apt/sources.list" <<EOF
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb $security bookworm-security main
EOF
mount -t proc proc "$target/proc"
mount --bind /dev "$target/dev"
mount --bind /dev/pts "$target/dev/pts"
cp "$deb" "$target/tmp/"
debname=$(basename "$deb")

# Runs a script inside the root, as root, with a plain environment; any failing command fails it.
in_root() {
  chroot "$target" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive /bin/bash -euo pipefail -c "$1"
}

log "apt install ./$debname"
in_root "apt-get update -q >/dev/null && cd /tmp && apt install -y -q --no-install-recommends ./$debname" \
  >"$target/tmp/install.log" 2>&1 || { tail -30 "$target/tmp/install.log"; exit 1; }
tail -5 "$target/tmp/install.log"
in_root "dpkg-query -W -f='installed: \${Package} \${Version}, \${Installed-Size} KiB\n' tessera
         dpkg -L tessera | grep -E '^/usr/bin/|\.desktop$|metainfo\.xml$|/apps/' | sort"

log "tessera-cli run mobilenet_v2.onnx --target cpu --check"
in_root "tessera-cli --version
         tessera-cli run /usr/share/tessera/samples/mobilenet_v2.onnx --target cpu --check" \
  >"$target/tmp/run.log" 2>&1 || { tail -30 "$target/tmp/run.log"; echo "test-deb: the checked run failed" >&2; exit 1; }
tail -3 "$target/tmp/run.log"
grep -q '^check: all [0-9]* kernels match' "$target/tmp/run.log" || { echo "test-deb: no passing check line" >&2; exit 1; }

log "tessera --help, and a screenshot of the sample (offscreen)"
in_root "export QT_QPA_PLATFORM=offscreen
         timeout 60 tessera --help >/tmp/help.txt
         head -2 /tmp/help.txt
         timeout 600 tessera /usr/share/tessera/samples/mobilenet_v2.onnx --screenshot /tmp/screenshot.png --geometry 1280x800
         test -s /tmp/screenshot.png
         echo \"screenshot: \$(stat -c %s /tmp/screenshot.png) bytes\""

log "desktop entry and AppStream metadata"
in_root "apt-get install -y -q --no-install-recommends desktop-file-utils appstream >/dev/null
         entry=/usr/share/applications/io.tessera.Tessera.desktop
         desktop-file-validate \$entry
         echo 'desktop-file-validate: ok'
         exe=\$(sed -n 's/^Exec=\\([^ ]*\\).*/\\1/p' \$entry); icon=\$(sed -n 's/^Icon=//p' \$entry)
         path=\$(command -v \$exe)
         echo \"Exec: \$exe -> \$path\"
         ls /usr/share/icons/hicolor/*/apps/\$icon.* | sed 's/^/Icon: /'
         appstreamcli validate --no-net /usr/share/metainfo/io.tessera.Tessera.metainfo.xml"

if [ -n "$out" ]; then
  mkdir -p "$out"
  cp "$target/tmp/install.log" "$target/tmp/run.log" "$target/tmp/screenshot.png" "$out/"
fi
log "test-deb: all checks passed"
