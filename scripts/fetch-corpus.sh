#!/usr/bin/env bash
# Fetches the robot corpus: the `pybullet_data/` folder of pybullet 3.2.7's wheel on PyPI
# (quadrupeds, humanoids, arms, MJCF benchmark models), unpacked into `corpus/` at the
# repository root (ignored by git). Only the robot descriptions and meshes are kept.
#
#   scripts/fetch-corpus.sh            # fetch once; a second call does nothing
#   AXION_CORPUS=/some/dir scripts/fetch-corpus.sh
set -euo pipefail
cd "$(dirname "$0")/.."
dest="${AXION_CORPUS:-$PWD/corpus}"
version=3.2.7
if [ -f "$dest/.fetched-$version" ]; then
  echo "corpus: $dest already holds pybullet_data $version"
  exit 0
fi
python=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "corpus: downloading pybullet==$version from PyPI (about 100 MB)"
"$python" -m pip download --quiet --no-deps "pybullet==$version" -d "$tmp"
archive=$(ls "$tmp"/pybullet-"$version"* | head -n 1)
mkdir -p "$tmp/x"
case "$archive" in
  *.whl|*.zip) "$python" -m zipfile -e "$archive" "$tmp/x" ;;
  *.tar.gz) tar -xzf "$archive" -C "$tmp/x" ;;
  *) echo "corpus: unexpected archive $archive" >&2; exit 1 ;;
esac
data=$(find "$tmp/x" -type d -name pybullet_data | head -n 1)
if [ -z "$data" ]; then
  echo "corpus: no pybullet_data/ in $archive" >&2
  exit 1
fi
rm -rf "$dest"
mkdir -p "$dest"
mv "$data" "$dest/pybullet_data"
touch "$dest/.fetched-$version"
echo "corpus: $(find "$dest/pybullet_data" -name '*.urdf' | wc -l) URDF and $(find "$dest/pybullet_data" -name '*.xml' | wc -l) XML files in $dest/pybullet_data"
