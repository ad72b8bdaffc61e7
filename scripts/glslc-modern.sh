#!/usr/bin/env bash
# glslc-modern.sh: a current glslc (shaderc 2025, glslang 15), spirv-val and the Vulkan
# 1.4 headers on a Debian 12 machine, from Debian 13's packages, unpacked under PREFIX
# (nothing is installed system-wide). Debian 12's glslc (glslang 12) cannot compile the
# KHR cooperative-matrix kernel or the coopmat2 kernel (GL_NV_cooperative_matrix2),
# and its spirv-val does not know their SPIR-V. The project's copy of
# ../shared/tools/glslc-modern, plus spirv-val; .ci/run uses it for the Vulkan build.
#
#   scripts/glslc-modern.sh [PREFIX]      (default PREFIX: /opt/glslc-modern)
#
# Prints the paths to use:
#   GLSLC=PREFIX/bin/glslc  SPIRV_VAL=PREFIX/bin/spirv-val  VULKAN_INCLUDE=PREFIX/include
# Exit status non-zero if the packages could not be fetched (callers fall back).
set -euo pipefail
prefix=${1:-/opt/glslc-modern}
say() { echo "GLSLC=$prefix/bin/glslc"; echo "SPIRV_VAL=$prefix/bin/spirv-val"; echo "VULKAN_INCLUDE=$prefix/include"; }
if [[ -x $prefix/bin/glslc && -x $prefix/bin/spirv-val ]] && "$prefix/bin/glslc" --version >/dev/null 2>&1 &&
   "$prefix/bin/spirv-val" --version >/dev/null 2>&1; then
  say; exit 0
fi
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$prefix"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" >"$work/sources.list"
o=(-o Dir::Etc::SourceList="$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
   -o Dir::State::Lists="$work/lists" -o Dir::Cache="$work/cache" -o Dir::State::status=/dev/null
   -o APT::Architecture=amd64 -o APT::Architectures=amd64)
apt-get "${o[@]}" update >/dev/null
(cd "$work" && apt-get "${o[@]}" download glslc libshaderc1 spirv-tools libc6 libstdc++6 libgcc-s1 gcc-14-base \
   libvulkan-dev spirv-headers >/dev/null 2>&1)
rt=$prefix/rt; mkdir -p "$rt" "$prefix/bin" "$prefix/include"
for f in "$work"/*.deb; do dpkg -x "$f" "$rt"; done
cp -r "$rt/usr/include/vulkan" "$rt/usr/include/vk_video" "$prefix/include/" 2>/dev/null || true
cp -r "$rt/usr/include/spirv" "$prefix/include/" 2>/dev/null || true
# Each program runs through Debian 13's own loader and libraries.
for tool in glslc spirv-val; do
  cat >"$prefix/bin/$tool" <<WRAP
#!/bin/sh
exec "$rt/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" --library-path "$rt/usr/lib/x86_64-linux-gnu" "$rt/usr/bin/$tool" "\$@"
WRAP
  chmod +x "$prefix/bin/$tool"
  "$prefix/bin/$tool" --version >/dev/null
done
say
