#!/usr/bin/env bash
# Builds a local Azurite image, tagged as the image the azurite-docker backend asks for
# (mcr.microsoft.com/azure-storage/azurite:<version>), without an image registry: a root
# filesystem holding this machine's node and the libraries ldd lists for it, busybox (the
# port wait of testcontainers runs sh, cat, awk and grep inside the container), and Azurite
# from npm, imported with `docker import`.
#
#   scripts/azurite-image.sh            # the version pinned in package.json
#   AZURITE_VERSION=3.35.0 scripts/azurite-image.sh
#
# Needs docker (an engine that answers), node, npm, ldd and a static busybox (Debian:
# busybox-static). Skips the build when the image is already there (FORCE=1 rebuilds).
set -euo pipefail
cd "$(dirname "$0")/.."

version="${AZURITE_VERSION:-$(node -p 'require("./package.json").dependencies.azurite')}"
image="mcr.microsoft.com/azure-storage/azurite:$version"
if [ "${FORCE:-0}" != 1 ] && docker image inspect "$image" >/dev/null 2>&1; then
  echo "azurite-image: $image is already there"
  exit 0
fi
for tool in docker node npm ldd busybox; do
  command -v "$tool" >/dev/null || { echo "azurite-image: $tool is missing" >&2; exit 1; }
done
busybox="$(command -v busybox)"
if ldd "$busybox" >/dev/null 2>&1; then
  echo "azurite-image: $busybox is not static (Debian: apt-get install busybox-static)" >&2
  exit 1
fi

root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,usr/bin,usr/local/bin,etc,tmp,opt/azurite,data}
chmod 1777 "$root/tmp"

# node and every library it loads, at the same paths.
node="$(readlink -f "$(command -v node)")"
cp "$node" "$root/usr/local/bin/node"
ldd "$node" | grep -o '/[^ ]*' | sort -u | while read -r lib; do
  mkdir -p "$root$(dirname "$lib")"
  cp -L "$lib" "$root$lib"
done

# busybox and its applets; `busybox --list` names busybox itself, which must stay a file.
cp "$busybox" "$root/bin/busybox"
for applet in $("$busybox" --list); do
  [ "$applet" = busybox ] || ln -sf busybox "$root/bin/$applet"
done
ln -sf /bin/busybox "$root/usr/bin/env" # Azurite's scripts start with #!/usr/bin/env node

printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
printf '127.0.0.1 localhost\n::1 localhost\n' >"$root/etc/hosts"

echo "azurite-image: npm install azurite@$version"
timeout --foreground 600 npm install --prefix "$root/opt/azurite" --omit=dev --ignore-scripts \
  --no-audit --no-fund --loglevel=error "azurite@$version" </dev/null
for bin in "$root"/opt/azurite/node_modules/.bin/azurite*; do
  ln -sf "/opt/azurite/node_modules/.bin/$(basename "$bin")" "$root/usr/local/bin/$(basename "$bin")"
done

echo "azurite-image: importing $image"
tar -C "$root" -cf - . | docker import \
  --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' \
  --change 'WORKDIR /opt/azurite' \
  --change 'EXPOSE 10000 10001 10002' \
  --change 'CMD ["azurite", "-l", "/data", "--blobHost", "0.0.0.0", "--queueHost", "0.0.0.0", "--tableHost", "0.0.0.0"]' \
  - "$image" >/dev/null
echo "azurite-image: built $image ($(docker image inspect -f '{{.Size}}' "$image" | awk '{printf "%.0f MB", $1/1e6}'))"
