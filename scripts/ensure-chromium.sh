#!/usr/bin/env bash
# Installs Debian's chromium for the browser tests of `strata timeline`
# (cmd/strata/timeline_browser_test.go) when it is missing. Never fails the
# build: without chromium those tests skip and say why.
set -uo pipefail
if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
	exit 0
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
	if command -v sudo >/dev/null 2>&1; then sudo="sudo -n"; else
		echo "ensure-chromium: not root and no sudo; the browser tests will skip" >&2
		exit 0
	fi
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "ensure-chromium: no apt-get; install chromium to run the browser tests" >&2
	exit 0
fi
echo "ensure-chromium: installing chromium (apt-get install -y chromium)" >&2
$sudo apt-get install -y chromium >/dev/null 2>&1 ||
	{ $sudo apt-get update >/dev/null 2>&1 && $sudo apt-get install -y chromium >/dev/null 2>&1; } ||
	echo "ensure-chromium: could not install chromium; the browser tests will skip" >&2
exit 0
