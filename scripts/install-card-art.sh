#!/usr/bin/env bash
# Installs card artwork from the package registries and renders it to PNG faces.
#   Debian gnome-cards-data (SVG sheets, GPL/LGPL) via apt-get, rendered by rsvg-convert;
#   npm @heruka_urgyen/react-playing-cards (Adrian Kennard's CC0 designs, via `npm pack`);
#   npm cardsJS (Chris Aguilar's Vectorized Playing Cards 1.3, LGPL-3);
#   Debian fonts (DejaVu, Liberation, FreeFont, URW base35, Symbola, STIX, OpenSymbol) for the
#   drawn training decks.
# Output: ${DEALER_ASSIST_CARD_ART:-~/.cache/dealer-assist/card-art}/<design>/<CODE>.png
# Usage: scripts/install-card-art.sh [--if-missing] [PYTHON]
#   PYTHON needs numpy + opencv (default: python3); --if-missing: do nothing when every design is
#   installed already (PYTHON must then have dealer_assist installed).
set -euo pipefail
cd "$(dirname "$0")/.."
if_missing=""
if [ "${1:-}" = "--if-missing" ]; then if_missing=1; shift; fi
python="${1:-python3}"
out="${DEALER_ASSIST_CARD_ART:-$HOME/.cache/dealer-assist/card-art}"
if [ -n "$if_missing" ] && "$python" -c 'import sys
from dealer_assist.vision.artwork import GNOME_DESIGNS, NPM_DESIGNS, installed_designs
sys.exit(not set(GNOME_DESIGNS + NPM_DESIGNS) <= set(installed_designs()))'; then
  exit 0
fi
echo "installing the card artwork into $out (first run only)" >&2
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

fonts="fonts-dejavu-core fonts-liberation fonts-freefont-ttf fonts-urw-base35 fonts-symbola fonts-stix fonts-opensymbol"
if ! dpkg -s gnome-cards-data librsvg2-bin $fonts >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gnome-cards-data librsvg2-bin $fonts >/dev/null
fi
sheets=/usr/share/aisleriot/cards
designs=$("$python" -c 'from dealer_assist.vision.artwork import GNOME_DESIGNS; print(*GNOME_DESIGNS)')
for design in $designs; do
  rsvg-convert -w 2600 "$sheets/$design.svgz" -o "$work/$design.png"
  "$python" -c 'import sys; from pathlib import Path
from dealer_assist.vision.artwork import split_gnome_sheet
split_gnome_sheet(Path(sys.argv[1]), Path(sys.argv[2]))' "$work/$design.png" "$out/$design"
  echo "installed $design"
done

(cd "$work" && npm pack --silent @heruka_urgyen/react-playing-cards@0.5.0 cardsJS@1.1.1 >/dev/null \
  && mkdir kennard-pkg vectorized-pkg \
  && tar xzf heruka_urgyen-react-playing-cards-0.5.0.tgz -C kennard-pkg \
  && tar xzf cardsJS-1.1.1.tgz -C vectorized-pkg)
for variant in kennard-pkg/package/src/images/2color:kennard \
               kennard-pkg/package/src/images/2color-bf:kennard_bf \
               vectorized-pkg/package/cards:vectorized; do
  src="$work/${variant%%:*}"
  design="${variant##*:}"
  mkdir -p "$work/$design"
  for svg in "$src"/[2-9AJQKT][SHDC].svg; do
    code=$(basename "$svg" .svg)
    rsvg-convert -w 400 "$svg" -o "$work/$design/$code.png"
  done
  "$python" -c 'import sys; from pathlib import Path
from dealer_assist.vision.artwork import normalise_face
for png in Path(sys.argv[1]).glob("*.png"):
    normalise_face(png, Path(sys.argv[2]) / png.name)' "$work/$design" "$out/$design"
  echo "installed $design"
done
echo "card artwork in $out"
