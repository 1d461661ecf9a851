#!/usr/bin/env bash
# Packs the GUI of BUILD_DIR, with what it needs at run time, so that it runs headless (Qt's
# offscreen platform) on a machine without Qt or Graphviz, e.g. the GPU machine (Ubuntu 24.04).
#
#   scripts/gui_bundle.sh BUILD_DIR OUT_DIR
#
# Writes OUT_DIR/tessera-gui/ and OUT_DIR/tessera-gui.tar.xz:
#   bin/       tessera, tessera-runner (stripped copies); tessera-cli and tessera_gpu_tests when built
#   lib/       every shared library they, the Qt plugins and Graphviz's plugins need, except
#              glibc's, the compiler runtime's and those of every Ubuntu base image (zlib, zstd,
#              systemd, gcrypt, pcre2-8, ...): the target's own, newer, are used
#   lib/base/  libraries a desktop system has but a server image may lack (X11, xcb, glvnd, GLib,
#              D-Bus, expat): used only where the target lacks them (`run` links the missing ones
#              into lib/.missing/)
#   plugins/   Qt's offscreen platform, the SVG image format and icon engine; generic/ holds
#              tesseratab, which shows a tab by its title (QT_QPA_GENERIC_PLUGINS=tesseratab:Energy)
#              since no command-line option picks a dock's tab
#   graphviz/  the core and dot layout plugins and their config6a (GVBINDIR)
#   fonts/     DejaVu Sans and Sans Mono with a fonts.conf
#   run        run PROGRAM [ARGS...]: sets LD_LIBRARY_PATH, QT_PLUGIN_PATH, QT_QPA_PLATFORM=offscreen,
#              FONTCONFIG_FILE, GVBINDIR and TESSERA_RUNNER, then runs bin/PROGRAM
#
# Built against this machine's libraries (glibc 2.36 on Debian 12): it runs where glibc is as new
# or newer. On the target: tar xJf tessera-gui.tar.xz && tessera-gui/run tessera --help
set -euo pipefail
build=${1:?usage: scripts/gui_bundle.sh BUILD_DIR OUT_DIR}
out=${2:?usage: scripts/gui_bundle.sh BUILD_DIR OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
dst=$out/tessera-gui
rm -rf "$dst" "$out/tessera-gui.tar.xz"
mkdir -p "$dst"/{bin,lib/base,plugins/platforms,plugins/imageformats,plugins/iconengines,plugins/generic,graphviz,fonts}

# Binaries
for b in app/gui/tessera app/runner/tessera-runner; do
    [ -x "$build/$b" ] || { echo "gui_bundle: $build/$b is not built" >&2; exit 1; }
    cp "$build/$b" "$dst/bin/"
done
# TESSERA_CLI: a tessera-cli from another build of the same tree, when BUILD_DIR has none
for b in "${TESSERA_CLI:-$build/app/cli/tessera-cli}" "$build/tests/tessera_gpu_tests"; do
    if [ -x "$b" ]; then cp "$b" "$dst/bin/"; fi
done
strip --strip-unneeded "$dst"/bin/*

# Qt plugins, located through QtCore's own plugin path
qtplugins=$(qtpaths6 --query QT_INSTALL_PLUGINS 2>/dev/null || echo /usr/lib/x86_64-linux-gnu/qt6/plugins)
cp "$qtplugins/platforms/libqoffscreen.so" "$dst/plugins/platforms/"
for f in libqsvg.so; do
    if [ -f "$qtplugins/imageformats/$f" ]; then cp "$qtplugins/imageformats/$f" "$dst/plugins/imageformats/"; fi
done
if [ -f "$qtplugins/iconengines/libqsvgicon.so" ]; then cp "$qtplugins/iconengines/libqsvgicon.so" "$dst/plugins/iconengines/"; fi

# The tab picker (a QGenericPlugin: Qt loads it at start-up when QT_QPA_GENERIC_PLUGINS names it)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/tesseratab.cpp" <<'EOF'
// QT_QPA_GENERIC_PLUGINS=tesseratab:TEXT: every QTabWidget with a tab titled TEXT shows that tab
// (checked every 100 ms), for screenshots of a tab other than a dock's first.
#include <QApplication>
#include <QGenericPlugin>
#include <QTabWidget>
#include <QTimer>

class TesseraTabPlugin : public QGenericPlugin {
    Q_OBJECT
    Q_PLUGIN_METADATA(IID QGenericPluginFactoryInterface_iid FILE "tesseratab.json")
public:
    QObject* create(const QString& key, const QString& spec) override
    {
        if (key.toLower() != QLatin1String("tesseratab"))
            return nullptr;
        auto* timer = new QTimer;
        timer->setInterval(100);
        QObject::connect(timer, &QTimer::timeout, [spec] {
            for (QWidget* w : QApplication::allWidgets()) {
                auto* tabs = qobject_cast<QTabWidget*>(w);
                for (int i = 0; tabs && i < tabs->count(); ++i) {
                    if (tabs->tabText(i).remove(QLatin1Char('&')) == spec && tabs->currentIndex() != i)
                        tabs->setCurrentIndex(i);
                }
            }
        });
        timer->start();
        return timer;
    }
};
#include "tesseratab.moc"
EOF
echo '{ "Keys": [ "tesseratab" ] }' > "$tmp/tesseratab.json"
moc=$(qtpaths6 --query QT_HOST_LIBEXECS 2>/dev/null || echo /usr/lib/qt6/libexec)/moc
"$moc" $(pkg-config --cflags-only-I Qt6Widgets) "$tmp/tesseratab.cpp" -o "$tmp/tesseratab.moc"
g++ -std=c++17 -O2 -fPIC -shared -I"$tmp" $(pkg-config --cflags Qt6Widgets) "$tmp/tesseratab.cpp" \
    -o "$dst/plugins/generic/libtesseratab.so" $(pkg-config --libs Qt6Widgets)
strip --strip-unneeded "$dst/plugins/generic/libtesseratab.so"

# Graphviz: the layout the graph view uses (dot) and the core plugin, with a config6a naming only them
gvdir=$(dirname "$(ldd "$build/app/gui/tessera" | awk '$1 == "libgvc.so.6" {print $3}')")/graphviz
for p in libgvplugin_core.so.6 libgvplugin_dot_layout.so.6; do
    cp -L "$gvdir/$p" "$dst/graphviz/"
done
awk '/^libgvplugin_(core|dot_layout)\.so\.6 /{keep=1} keep{print} /^}/{keep=0}' "$gvdir/config6a" \
    > "$dst/graphviz/config6a"

# Shared libraries of every ELF file in the bundle (ldd resolves them transitively)
# Never copied: glibc, the compiler runtime and what every Ubuntu/Debian base image has.
never='^(linux-vdso|ld-linux-x86-64|libc|libm|libdl|libpthread|librt|libresolv|libutil|libstdc\+\+|libgcc_s|libgomp|libz|libzstd|liblzma|liblz4|libbz2|libsystemd|libudev|libgcrypt|libgpg-error|libcap|libpcre2-8|libmd|libffi|libselinux|libmount|libblkid|libuuid)\.so'
base='^(libexpat|libglib-2\.0|libgobject-2\.0|libgio-2\.0|libgmodule-2\.0|libdbus-1|libbsd|libX[A-Za-z0-9]*|libxcb[a-z0-9-]*|libxkbcommon[a-z0-9-]*|libGL|libGLX|libGLdispatch|libEGL|libOpenGL|libbrotli[a-z]*)\.so'
find "$dst/bin" "$dst/plugins" "$dst/graphviz" -type f -name '*' | while read -r f; do
    if file -b "$f" | grep -q ELF; then ldd "$f"; fi
done | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u | while read -r name path; do
    if [[ $name =~ $never ]]; then continue; fi
    if [[ $name =~ $base ]]; then cp -L "$path" "$dst/lib/base/$name"; else cp -L "$path" "$dst/lib/$name"; fi
done
# ICU's data (31 MB) cut to what an English UI uses (4 MB): the root and English locales, the
# Unicode properties, normalisation and root collation. Dropped: other locales, display names of
# languages, regions, currencies, units and zones, codepage converters, transliterators, number
# spell-out rules, the dictionaries of word breaking in CJK and South-East Asian scripts.
# Needs icupkg and genccode (icu-devtools); without them the data is kept whole.
icudata=$(ls "$dst"/lib/libicudata.so.* 2>/dev/null | head -1)
if [ -n "$icudata" ] && command -v icupkg > /dev/null && command -v genccode > /dev/null; then
    sym=$(nm -D -S "$icudata" | awk '$4 ~ /^icudt[0-9]+_dat$/ {print $1, $2, $4}')
    read -r addr size name <<<"$sym"
    off=$(readelf -S -W "$icudata" | awk '$2 == ".rodata" {print $4, $5}')
    read -r secaddr secoff <<<"$off"
    start=$((0x$addr - 0x$secaddr + 0x$secoff))
    pkg=${name%_dat}l
    mkdir -p "$tmp/icu"
    dd if="$icudata" of="$tmp/icu/$pkg.dat" bs=1M iflag=skip_bytes,count_bytes skip=$start count=$((0x$size)) status=none
    icupkg -l "$tmp/icu/$pkg.dat" | awk '
        { n = split($0, p, "/"); f = p[n]; b = f; sub(/\.[^.]*$/, "", b); e = f; sub(/^.*\./, "", e)
          d = (n > 1) ? p[1] : ""
          keep = (b ~ /^(root|en|en_US|en_001|en_GB|pool|res_index)$/)
          if (d ~ /^(lang|region|unit|zone|translit|rbnf|curr)$/) drop = !keep
          else if (d == "coll") drop = !keep && e != "icu"
          else if (d == "brkitr") drop = (e == "dict") || (e == "res" && !keep)
          else if (d == "") drop = (e == "cnv") || (e == "res" && b ~ /^[a-z][a-z][a-z]?(_[A-Za-z0-9]+)*$/ && !keep) || f == "unames.icu" || f == "confusables.cfu"
          else drop = 0
          if (drop) print }' > "$tmp/icu/drop.txt"
    icupkg --ignore-deps -r "$tmp/icu/drop.txt" "$tmp/icu/$pkg.dat" 2> /dev/null
    (cd "$tmp/icu" && genccode -q -a gcc -e "${name%_dat}" "$pkg.dat" && gcc -c "${pkg}_dat.S" -o data.o)
    gcc -shared -nostdlib -Wl,-soname,"$(basename "$icudata")" -Wl,-z,noexecstack "$tmp/icu/data.o" -o "$icudata"
fi

if ldd "$dst"/bin/* "$dst"/plugins/*/*.so 2>/dev/null | grep -q 'not found'; then
    echo "gui_bundle: unresolved libraries here:" >&2
    ldd "$dst"/bin/* "$dst"/plugins/*/*.so | grep 'not found' | sort -u >&2
    exit 1
fi

# Fonts
fontdir=/usr/share/fonts/truetype/dejavu
for f in DejaVuSans.ttf DejaVuSans-Bold.ttf DejaVuSansMono.ttf; do
    cp "$fontdir/$f" "$dst/fonts/"
done
cat > "$dst/fonts/fonts.conf" <<'EOF'
<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
<fontconfig>
  <dir prefix="relative">.</dir>
  <cachedir prefix="xdg">tessera-gui-fontconfig</cachedir>
  <alias><family>sans-serif</family><prefer><family>DejaVu Sans</family></prefer></alias>
  <alias><family>monospace</family><prefer><family>DejaVu Sans Mono</family></prefer></alias>
</fontconfig>
EOF

cat > "$dst/run" <<'EOF'
#!/usr/bin/env bash
# run PROGRAM [ARGS...]: bin/PROGRAM (tessera, tessera-runner, tessera-cli, tessera_gpu_tests)
# with this bundle's libraries, Qt plugins (offscreen platform), fonts and Graphviz plugins.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
prog=${1:?usage: run PROGRAM [ARGS...]}
shift
# The base-system libraries the target lacks are linked into lib/.missing (the target's own win).
missing=$here/lib/.missing
rm -rf "$missing"
mkdir -p "$missing"
have=$(/sbin/ldconfig -p 2>/dev/null || ldconfig -p 2>/dev/null || true)
for f in "$here"/lib/base/*; do
    n=$(basename "$f")
    grep -q "^[[:space:]]*$n " <<<"$have" || ln -s "$f" "$missing/$n"
done
export LD_LIBRARY_PATH=$here/lib:$missing${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export QT_PLUGIN_PATH=$here/plugins
export QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen}
export FONTCONFIG_FILE=$here/fonts/fonts.conf
export GVBINDIR=$here/graphviz
export TESSERA_RUNNER=$here/bin/tessera-runner
if ldd "$here/bin/$prog" 2>/dev/null | grep -q 'not found'; then
    echo "run: libraries missing here:" >&2
    ldd "$here/bin/$prog" | grep 'not found' >&2
fi
exec "$here/bin/$prog" "$@"
EOF
chmod +x "$dst/run"

# One stream with a large window: the binaries share much of their code and data.
tar -C "$out" --sort=name -cf - tessera-gui | xz -9e -T1 > "$out/tessera-gui.tar.xz"
du -sh "$dst" "$out/tessera-gui.tar.xz"
