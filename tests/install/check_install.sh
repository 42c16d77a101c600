#!/usr/bin/env bash
# Installs SPL into a temporary prefix and builds a small C consumer project against it with
# find_package(SPL) and spl_add_kernels, then runs it; also builds the same program with the
# pkg-config file. Usage: check_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build="$1"; src="$2"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" > /dev/null
test -x "$tmp/prefix/bin/splc"
test -f "$tmp/prefix/share/spl/stdlib/formats.spl"
mkdir -p "$tmp/app"
cp "$src/tests/install/app/CMakeLists.txt" "$src/tests/install/app/main.c" "$src/tests/install/app/kernels.spl" "$tmp/app/"
cmake -G Ninja -S "$tmp/app" -B "$tmp/app/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" > /dev/null
cmake --build "$tmp/app/build" > /dev/null
out="$("$tmp/app/build/app")"
echo "$out"
[ "$out" = "y = 5 11 1" ] || { echo "unexpected output"; exit 1; }
# pkg-config: compile the kernels with the installed splc and link with the flags it gives.
PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" pkg-config --exists spl
"$tmp/prefix/bin/splc" "$tmp/app/kernels.spl" --target=cpu -o "$tmp/k.o" --header "$tmp/kernels.h"
cc -O2 "$src/tests/install/app/main.c" "$tmp/k.o" -I "$tmp" $(PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" pkg-config --cflags --libs spl) \
   -Wl,-rpath,"$tmp/prefix/lib" -o "$tmp/app_pc"
out2="$("$tmp/app_pc")"
[ "$out2" = "y = 5 11 1" ] || { echo "unexpected output from the pkg-config build: $out2"; exit 1; }
# A C-only project (its kernels import a module of their own) and a C++-only project.
cp -r "$src/tests/install/app_c" "$src/tests/install/app_cxx" "$tmp/"
cp "$src/tests/install/app/main.c" "$tmp/app_c/"  # the same C program, its kernels scaled
cmake -G Ninja -S "$tmp/app_c" -B "$tmp/app_c/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" > /dev/null
cmake --build "$tmp/app_c/build" > /dev/null
out3="$("$tmp/app_c/build/app_c")"
[ "$out3" = "y = 10 22 2" ] || { echo "unexpected output from the C-only project: $out3"; exit 1; }
# Editing the imported module rebuilds the kernels (splc -MD as the custom command's DEPFILE).
sed -i 's/v \* 2.0/v * 3.0/' "$tmp/app_c/scaling.spl"
cmake --build "$tmp/app_c/build" > /dev/null
out4="$("$tmp/app_c/build/app_c")"
[ "$out4" = "y = 15 33 3" ] || { echo "the C-only project did not rebuild after its imported module changed: $out4"; exit 1; }
cmake -G Ninja -S "$tmp/app_cxx" -B "$tmp/app_cxx/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" > /dev/null
cmake --build "$tmp/app_cxx/build" > /dev/null
out5="$("$tmp/app_cxx/build/app_cxx")"
[ "$out5" = "y = 5 11 1" ] || { echo "unexpected output from the C++-only project: $out5"; exit 1; }
echo "install: ok (find_package(SPL) + spl_add_kernels from C, C-only and C++-only projects, a rebuild after an imported module changed, pkg-config)"
