#!/usr/bin/env bash
# Installs uji into a prefix (default ~/.local; no root needed there):
# bin/uji, lib/uji/plugins/, the man page and the bash, zsh and fish
# completions, and a list of what it installed for --uninstall.
#
#   ./install.sh                          from a checkout: build the release
#                                         archive (scripts/dist.sh), install it
#   ./install.sh uji-VERSION-TARGET.tar.gz   a downloaded archive
#   ./install.sh                          inside an unpacked archive: install it
#   ./install.sh --prefix DIR             another prefix (e.g. /usr/local, as root)
#   ./install.sh --uninstall [--prefix DIR]   remove what was installed there
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

prefix="${HOME:?HOME is not set: pass --prefix DIR}/.local"
uninstall=0
archive=""
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix="${2:?--prefix needs a directory}"; shift 2 ;;
        --uninstall) uninstall=1; shift ;;
        -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "install.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
        *) archive="$1"; shift ;;
    esac
done
mkdir -p "$prefix"
prefix="$(cd "$prefix" && pwd)"
# The list of installed files and created directories, relative to the prefix.
manifest="$prefix/lib/uji/install-manifest"
# Plugin directories others can write are refused by uji: never make one.
umask 022

remove_installed() {
    local dirs kind path
    dirs="$(sed -n 's/^d //p' "$manifest" | sort -r)"
    while read -r kind path; do
        if [ "$kind" = f ]; then rm -f "$prefix/$path"; fi
    done < "$manifest"
    rm -f "$manifest"
    # Directories it created, deepest first, each only if now empty.
    while read -r path; do
        if [ -n "$path" ]; then rmdir "$prefix/$path" 2>/dev/null || true; fi
    done <<< "$dirs"
}

if [ "$uninstall" = 1 ]; then
    if [ ! -f "$manifest" ]; then
        echo "install.sh: no uji installed by install.sh under $prefix (no $manifest)" >&2
        exit 1
    fi
    remove_installed
    echo "uji: removed from $prefix"
    exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Where the tree to install is: an archive given, this unpacked archive, or
# an archive built from this checkout.
if [ -z "$archive" ] && [ -x "$here/bin/uji" ] && [ -d "$here/lib/uji/plugins" ]; then
    src="$here"
else
    if [ -z "$archive" ]; then
        if [ ! -x "$here/scripts/dist.sh" ]; then
            echo "install.sh: name an archive (uji-VERSION-TARGET.tar.gz), or run me from a checkout" >&2
            exit 1
        fi
        echo "install.sh: building the release archive (cargo build --release: minutes)..." >&2
        archive="$("$here/scripts/dist.sh" --out "$work/dist" | tail -1)"
    fi
    if [ -f "$archive.sha256" ]; then
        (cd "$(dirname "$archive")" && sha256sum --quiet -c "$(basename "$archive").sha256") \
            || { echo "install.sh: $archive does not match its .sha256: download it again" >&2; exit 1; }
    fi
    mkdir "$work/unpacked"
    tar -xzf "$archive" -C "$work/unpacked"
    src="$(find "$work/unpacked" -mindepth 1 -maxdepth 1 -type d | head -1)"
fi
if [ ! -x "$src/bin/uji" ]; then
    echo "install.sh: $src holds no bin/uji: not a uji archive" >&2
    exit 1
fi

# An earlier install goes first, so plugins no longer shipped go with it.
if [ -f "$manifest" ]; then
    remove_installed
fi

new_manifest="$work/manifest"
: > "$new_manifest"
make_dir() {
    local rel="$1" parent
    [ -d "$prefix/$rel" ] && return 0
    parent="$(dirname "$rel")"
    if [ "$parent" != . ]; then make_dir "$parent"; fi
    mkdir "$prefix/$rel"
    echo "d $rel" >> "$new_manifest"
}
put() {  # put SOURCE REL MODE
    make_dir "$(dirname "$2")"
    install -m "$3" "$1" "$prefix/$2"
    echo "f $2" >> "$new_manifest"
}

put "$src/bin/uji" bin/uji 755
for plugin in "$src"/lib/uji/plugins/*; do
    put "$plugin" "lib/uji/plugins/$(basename "$plugin")" 644
done
(cd "$src" && find share -type f) | sort | while read -r rel; do
    put "$src/$rel" "$rel" 644
done
for doc in README.md LICENSE-MIT LICENSE-APACHE; do
    if [ -f "$src/$doc" ]; then put "$src/$doc" "share/doc/uji/$doc" 644; fi
done
make_dir lib/uji
install -m 644 "$new_manifest" "$manifest"

echo "uji: installed $("$prefix/bin/uji" --version) into $prefix"
case ":$PATH:" in
    *":$prefix/bin:"*) ;;
    *) echo "uji: $prefix/bin is not on your PATH; add this line to ~/.bashrc or ~/.zshrc:"
       echo "    export PATH=\"$prefix/bin:\$PATH\"" ;;
esac
case "$prefix" in
    /usr|/usr/local) ;;
    *) echo "uji: zsh completions: add \`fpath=($prefix/share/zsh/site-functions \$fpath)\` before compinit in ~/.zshrc" ;;
esac
echo "uji: check the install with \`uji doctor\`; remove it with \`$here/install.sh --uninstall --prefix $prefix\`"
