#!/usr/bin/env bash
# Fonts beyond the installed ones for the reader's drawn decks (`train_reader --font-dir DIR`):
# 36 Debian font packages of display, script, blackletter, condensed, slab and old-style faces,
# unpacked into DIR (nothing is installed system-wide, so the installed fonts, and the shipped
# recipe's drawn decks, stay as they were). From each package, its upright-named font files in
# name order, every third from the first, four at most: 63 faces, so that no family dominates.
# Usage: scripts/extra-fonts.sh DIR
set -euo pipefail
out="${1:?usage: scripts/extra-fonts.sh DIR}"
packages="fonts-adf-mekanus fonts-adf-irianis fonts-adf-tribun fonts-adf-oldania fonts-adf-gillius
fonts-blankenburg fonts-breip fonts-humor-sans fonts-isabella fonts-cabinsketch fonts-radisnoir
fonts-rufscript fonts-lobster fonts-jura fonts-bebas-neue fonts-league-spartan fonts-beteckna
fonts-comic-neue fonts-dkg-handwriting fonts-femkeklaver fonts-junicode fonts-oldstandard
fonts-goudybookletter fonts-quattrocento fonts-ebgaramond fonts-linuxlibertine fonts-cantarell
fonts-prociono fonts-gfs-neohellenic fonts-fantasque-sans fonts-mononoki fonts-roboto-slab
fonts-cmu fonts-yanone-kaffeesatz fonts-tuffy fonts-sil-andika"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt-get download $packages >/dev/null)
mkdir -p "$out"
for deb in "$work"/*.deb; do
  package="$(basename "$deb")"; package="${package%%_*}"
  rm -rf "$work/unpacked"
  dpkg -x "$deb" "$work/unpacked"
  mkdir -p "$out/$package"
  find "$work/unpacked" \( -name "*.ttf" -o -name "*.otf" \) -type f \
    | grep -v -i "italic\|oblique\|-it\.\|_it\." | LC_ALL=C sort | awk 'NR % 3 == 1' | head -4 \
    | xargs -r -I FONT cp FONT "$out/$package/"
done
echo "$(find "$out" -type f | wc -l) fonts in $out"
