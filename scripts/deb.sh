#!/usr/bin/env bash
# Builds a Debian package of uji with Debian's own dpkg-deb: /usr/bin/uji,
# the plugins in /usr/lib/uji/plugins (uji looks in <exe>/../lib/uji/plugins),
# the man page and the completions where Debian's bash, zsh and fish look.
#
#   scripts/deb.sh                    cargo build --release, then package
#   scripts/deb.sh --profile debug --no-build --target-dir DIR --out DIR
#                                     (the options are scripts/dist.sh's)
#   scripts/deb.sh --archive FILE     package an archive dist.sh made
#   scripts/deb.sh --uncompressed     no compression inside the .deb (tests)
#
# The package's path is the last line on stdout.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

out="$root/dist"
archive=""
compress=(-Zgzip -z6)
pass=()
while [ $# -gt 0 ]; do
    case "$1" in
        --out) out="${2:?--out needs a directory}"; shift 2 ;;
        --archive) archive="${2:?--archive needs a file}"; shift 2 ;;
        --uncompressed) compress=(-Znone); shift ;;
        -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) pass+=("$1"); shift ;;
    esac
done
command -v dpkg-deb >/dev/null || { echo "deb.sh: dpkg-deb is missing: apt-get install dpkg" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# The release archive is the one layout; the package moves it under /usr.
if [ -z "$archive" ]; then
    archive="$("$root/scripts/dist.sh" "${pass[@]}" --out "$work" | tail -1)"
fi
mkdir "$work/unpacked"
tar -xzf "$archive" -C "$work/unpacked"
src="$(find "$work/unpacked" -mindepth 1 -maxdepth 1 -type d | head -1)"
pkg="$work/pkg"
umask 022
mkdir -p "$pkg/DEBIAN" "$pkg/usr"
# Moved, not copied: a debug build is hundreds of MB.
mv "$src/bin" "$src/lib" "$src/share" "$pkg/usr/"
mkdir -p "$pkg/usr/share/doc/uji" "$pkg/usr/share/zsh/vendor-completions"
# Debian's zsh reads vendor completions from its own directory.
mv "$pkg/usr/share/zsh/site-functions/_uji" "$pkg/usr/share/zsh/vendor-completions/_uji"
rmdir "$pkg/usr/share/zsh/site-functions"
cp "$src/README.md" "$pkg/usr/share/doc/uji/"
{
    echo "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"
    echo "Upstream-Name: uji"
    echo
    echo "Files: *"
    echo "Copyright: The uji authors"
    echo "License: MIT or Apache-2.0"
    echo " The full texts follow: MIT, then Apache-2.0 (also /usr/share/common-licenses/Apache-2.0)."
    echo " ."
    sed 's/^$/./; s/^/ /' "$src/LICENSE-MIT"
} > "$pkg/usr/share/doc/uji/copyright"

version="$("$pkg/usr/bin/uji" --version | awk '{ print $2 }')"
arch="$(dpkg --print-architecture 2>/dev/null || echo amd64)"
cat > "$pkg/DEBIAN/control" <<CONTROL
Package: uji
Version: $version
Architecture: $arch
Maintainer: The uji authors <maintainers@users.noreply.github.com>
Installed-Size: $(du -sk "$pkg/usr" | cut -f1)
Depends: libc6 (>= 2.36), bash
Recommends: git
Section: devel
Priority: optional
Homepage: https://github.com/uji-dev/uji
Description: coding agent for the terminal
 uji runs a model (Anthropic, OpenAI or any OpenAI-compatible server) that
 reads, edits and writes files and runs commands through tools, asking
 before risky calls as your policy says. Plugins in /usr/lib/uji/plugins;
 configuration in Lua (~/.config/uji/init.lua).
CONTROL

mkdir -p "$out"
deb="$(cd "$out" && pwd)/uji_${version}_${arch}.deb"
dpkg-deb --root-owner-group "${compress[@]}" --build "$pkg" "$deb" >&2
echo "deb.sh: wrote $deb ($(du -h "$deb" | cut -f1))" >&2
echo "$deb"
