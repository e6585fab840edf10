#!/usr/bin/env bash
# Installs what the dashboard's browser tests (tests/e2e) need, idempotently:
# Debian's chromium (and an emoji font, so screenshots show 📌 and 🗜) and the
# pinned playwright-core from tests/e2e/package-lock.json. Playwright's own
# browser download is never used: the tests drive /usr/bin/chromium.
#
# Run it before `go test ./...` wherever CI=true: there the browser test
# fails, instead of skipping, when these are missing.
#
# Usage: scripts/ci-web.sh [test [go test flags...]]
# With "test" it then runs the dashboard's handler and browser tests with
# CI=true (screenshots in $HIVEMEM_ARTIFACTS, default tests/e2e/artifacts;
# with HIVEMEM_TEST_SCREENS=docs/screens also the documentation's).
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
dpkg-query -W -f='${Status}' fonts-noto-color-emoji 2>/dev/null | grep -q "install ok installed" || need_apt+=(fonts-noto-color-emoji)
if [ ${#need_apt[@]} -gt 0 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "ci-web: need ${need_apt[*]}; run as root or: sudo apt-get install -y ${need_apt[*]}" >&2
		exit 1
	fi
	echo "ci-web: installing ${need_apt[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi
/usr/bin/chromium --version 2>/dev/null

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "ci-web: need node and npm; run as root or install them" >&2
		exit 1
	fi
	echo "ci-web: installing nodejs and npm"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
node --version

# npm ci is exact (the lock file pins playwright-core) but always reinstalls:
# skip it when the installed version already matches the lock.
cd tests/e2e
want=$(node -e 'console.log(require("./package-lock.json").packages["node_modules/playwright-core"].version)')
have=$(node -e 'try { console.log(require("./node_modules/playwright-core/package.json").version) } catch { console.log("") }')
if [ "$want" != "$have" ]; then
	echo "ci-web: npm ci (playwright-core $want)"
	PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error
fi
echo "ci-web: ready (chromium, node $(node --version), playwright-core $want)"

if [ "${1:-}" = test ]; then
	shift
	cd ../..
	CI=true go test -count=1 "$@" ./internal/web/... ./tests/e2e
fi
