#!/usr/bin/env bash
# The interactive HTML report at scale. For results folders of 1,000, 10,000 and 100,000 runs
# (lrb_make_results, as tests/bench/results_scale.sh makes them: 40 cells, seeds growing;
# folders already in the work dir are reused): the time to write the page from the index and
# its size, then in headless Chromium, driven through the page's own controls by
# tests/fixtures/html/page_driver.js, the time until the page is ready (parsed and its script
# run), to sort the largest table of seeds, to filter it by model, and to open its best cell
# (a dot per seed). Chromium's whole run (start, load, driver, DOM dump) is timed too.
# Usage: tests/bench/html_scale.sh [build dir] [work dir] [sizes...]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
work=${2:-$(mktemp -d)}
shift $(( $# > 2 ? 2 : $# ))
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 10000 100000)
lrbench=$build/lrbench
make=$build/tests/lrb_make_results
driver=tests/fixtures/html/page_driver.js
[ -x "$make" ] || { echo "html_scale: build $make first (cmake --build $build --target lrb_make_results)" >&2; exit 2; }
command -v chromium >/dev/null || { echo "html_scale: chromium is missing: run scripts/setup.sh" >&2; exit 2; }
printf '%-8s %9s %9s %12s %9s %9s %9s %9s\n' runs "write s" "page MiB" "chromium s" "ready ms" "sort ms" "filter ms" "open ms"
for n in "${sizes[@]}"; do
  dir=$work/r$n
  if [ ! -f "$dir/.complete" ]; then
    rm -rf "$dir"
    "$make" "$dir" 0 "$n"
    touch "$dir/.complete"
  fi
  "$lrbench" index "$dir" > /dev/null
  page=$work/page$n.html
  /usr/bin/time -f '%e' -o "$work/.time" "$lrbench" report "$dir" -o "$page" > /dev/null
  write_s=$(cat "$work/.time")
  # The page as a reader's browser gets it, with the driver appended before </body>.
  /usr/bin/python3 - "$page" "$driver" "$work/driven.html" <<'PY'
import sys
page, driver, out = sys.argv[1:]
html = open(page, encoding="utf-8").read()
at = html.rindex("</body>")
open(out, "w", encoding="utf-8").write(html[:at] + "<script>\n" + open(driver).read() + "</script>\n" + html[at:])
PY
  /usr/bin/time -f '%e' -o "$work/.time" chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --window-size=1400,1000 --user-data-dir="$work/chromium-profile" \
    --dump-dom "file://$work/driven.html" > "$work/dom.html" 2> "$work/chromium.log"
  chromium_s=$(cat "$work/.time")
  /usr/bin/python3 - "$work/dom.html" "$n" "$write_s" "$(stat -c %s "$page")" "$chromium_s" <<'PY'
import html, json, re, sys
dom, n, write_s, size, chromium_s = sys.argv[1:]
m = re.search(r'data-test="([^"]*)"', open(dom, encoding="utf-8").read())
if not m:
    sys.exit(f"html_scale: the driver did not run on {n} runs")
o = json.loads(html.unescape(m.group(1)))
if "error" in o or not (o["sorted"] == 1 and o["opened"] == 1 and o["cell_dots"] == o["cell_n"]):
    sys.exit(f"html_scale: the page did not work at {n} runs: {o}")
print(f'{n:<8} {float(write_s):9.2f} {int(size) / 2**20:9.1f} {float(chromium_s):12.2f} {o["ready_ms"]:9.0f} '
      f'{o["sort_ms"]:9.1f} {o["filter_ms"]:9.1f} {o["open_ms"]:9.1f}')
PY
done
