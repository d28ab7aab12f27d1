#!/usr/bin/env bash
# Renders a plan's HTML report in headless Chromium and saves a screenshot, to check that the
# self-contained report displays without any network access.
#
#   sudo apt-get install -y chromium          # Debian's package; CI does not need it
#   mvn -B -q package -DskipTests
#   scripts/render-report.sh examples/10b-on-2t.json docs/plan-report.html docs/plan-report.png
set -euo pipefail
request=${1:-examples/10b-on-2t.json}
html=${2:-target/plan-report.html}
png=${3:-target/plan-report.png}
mkdir -p "$(dirname "$html")" "$(dirname "$png")"
java -jar hyperframes-examples/target/hyperframes.jar plan --request "$request" --format html \
    --no-progress > "$html"
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" --hide-scrollbars --window-size=1200,1900 \
    --screenshot="$(realpath "$png")" "file://$(realpath "$html")" 2>/dev/null
echo "rendered $html -> $png"
