#!/usr/bin/env bash
# Renders the PNG copies of the application icon from its SVG (run after editing the SVG; the PNGs
# are committed so that building needs no SVG renderer). Needs rsvg-convert (Debian: librsvg2-bin).
set -euo pipefail
cd "$(dirname "$0")"
for size in 48 128 256; do
  rsvg-convert -w "$size" -h "$size" io.tessera.Tessera.svg -o "io.tessera.Tessera-$size.png"
done
