#!/usr/bin/env bash
# Installs card artwork from the package registries and renders it to PNG faces.
#   Debian gnome-cards-data (SVG sheets, GPL/LGPL) via apt-get, rendered by rsvg-convert;
#   npm @heruka_urgyen/react-playing-cards (Adrian Kennard's CC0 designs, via `npm pack`);
#   npm cardsJS (Chris Aguilar's Vectorized Playing Cards 1.3, LGPL-3);
#   Debian fonts (DejaVu, Liberation, FreeFont, URW base35, Symbola, STIX, OpenSymbol) for the
#   drawn training decks.
#   For the independent evaluation only, apart from the training artwork: the held-out KDE decks
#   of Debian kdegames-card-data-kf5 (models/design_split.json) and photographic textures from
#   Debian gimp-data's patterns (the felt).
# Output: ${DEALER_ASSIST_CARD_ART:-~/.cache/dealer-assist/card-art}/<design>/<CODE>.png and
#   ${DEALER_ASSIST_EVALUATION_ART:-~/.cache/dealer-assist/evaluation-art}/{designs/<design>,felt}
# Usage: scripts/install-card-art.sh [--if-missing] [PYTHON]
#   PYTHON needs numpy + opencv (default: python3); --if-missing: do nothing when every design is
#   installed already (PYTHON must then have dealer_assist installed).
set -euo pipefail
cd "$(dirname "$0")/.."
if_missing=""
if [ "${1:-}" = "--if-missing" ]; then if_missing=1; shift; fi
python="${1:-python3}"
out="${DEALER_ASSIST_CARD_ART:-$HOME/.cache/dealer-assist/card-art}"
eval_out="${DEALER_ASSIST_EVALUATION_ART:-$HOME/.cache/dealer-assist/evaluation-art}"
# The held-out KDE decks the evaluation uses (each rendered element by element: slow, minutes).
kde_decks="ancient-egyptians dondorf jolly-royal penguins standard tigullio-international"
felts="Fabric/burlap Animal/leather Paper/crinklepaper Paper/paper Legacy/fibers Stone/granite1"
need_training=1
need_evaluation=1
if [ -n "$if_missing" ]; then
  if "$python" -c 'import sys
from dealer_assist.vision.artwork import GNOME_DESIGNS, NPM_DESIGNS, installed_designs
sys.exit(not set(GNOME_DESIGNS + NPM_DESIGNS) <= set(installed_designs()))'; then
    need_training=""
  fi
  if "$python" -c 'import sys
from dealer_assist.evaluation.artwork import felt_textures, installed_decks
sys.exit(not (set(sys.argv[1:]) <= set(installed_decks()) and len(felt_textures()) >= 6))' \
      $kde_decks; then
    need_evaluation=""
  fi
fi
[ -z "$need_training$need_evaluation" ] && exit 0
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

if [ -n "$need_evaluation" ]; then
  echo "installing the independent evaluation's artwork into $eval_out (first run only)" >&2
  if ! dpkg -s kdegames-card-data-kf5 gimp-data librsvg2-bin >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq kdegames-card-data-kf5 gimp-data \
      librsvg2-bin >/dev/null
  fi
  for felt in $felts; do
    "$python" -c 'import sys; from pathlib import Path
from dealer_assist.evaluation.artwork import install_felt
install_felt(Path(sys.argv[1]), Path(sys.argv[2]))' "/usr/share/gimp/2.0/patterns/$felt.pat" \
      "$eval_out/felt/$(basename "$felt").png"
  done
  # the decks not yet installed whole, two at a time (rsvg-convert parses the whole deck for
  # every card)
  for deck in $kde_decks; do echo "$deck"; done | xargs -P 2 -I DECK "$python" -c 'import sys
from pathlib import Path
from dealer_assist.evaluation.artwork import installed_decks, render_kde_deck
if sys.argv[1] in installed_decks(Path(sys.argv[2])):
    sys.exit(0)
svgz = next(Path("/usr/share/carddecks/svg-" + sys.argv[1]).glob("*.svgz"))
render_kde_deck(svgz, Path(sys.argv[2]) / "designs" / sys.argv[1])
print("installed", sys.argv[1], "(evaluation only)")' DECK "$eval_out"
fi
[ -z "$need_training" ] && exit 0
echo "installing the card artwork into $out (first run only)" >&2

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
