#!/usr/bin/env bash
# Installs SPL into a temporary prefix and builds a small C consumer project against it with
# find_package(SPL) and spl_add_kernels, then runs it; also builds the same program with the
# pkg-config file; then runs the installed tools and the matrix library from the prefix.
# Usage: check_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build="$1"; src="$2"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" > /dev/null
test -x "$tmp/prefix/bin/splc"
test -f "$tmp/prefix/share/spl/stdlib/formats.spl"
mkdir -p "$tmp/app"
cp "$src/tests/install/app/CMakeLists.txt" "$src/tests/install/app/main.c" "$src/tests/install/app/kernels.spl" \
   "$src/tests/install/app/read_mtx.c" "$tmp/app/"
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
# The tools, run from the prefix: spl-matgen writes a matrix, spl-matinfo reads it, a program
# reads it with the installed matrix library (SPL::splmatrix, then pkg-config splmatrix) and runs
# its kernel on it, spl-tune times the kernel on it.
bin="$tmp/prefix/bin"
"$bin/spl-matgen" --version > /dev/null
"$bin/spl-matgen" banded --rows 300 --degree 5 --seed 3 -o "$tmp/banded.mtx" 2> /dev/null
nnz="$("$bin/spl-matinfo" "$tmp/banded.mtx" | sed -n 's/^nnz: //p')"
[ -n "$nnz" ] && [ "$nnz" -gt 300 ] || { echo "spl-matinfo from the prefix:"; "$bin/spl-matinfo" "$tmp/banded.mtx"; exit 1; }
out6="$("$tmp/app/build/read_mtx" "$tmp/banded.mtx")"
[ "$out6" = "300 x 300, $nnz entries: matches the reference" ] || { echo "read_mtx (CMake): $out6"; exit 1; }
cc -O2 "$src/tests/install/app/read_mtx.c" "$tmp/k.o" -I "$tmp" \
   $(PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" pkg-config --cflags --libs spl splmatrix) \
   -Wl,-rpath,"$tmp/prefix/lib" -o "$tmp/read_mtx_pc"
out7="$("$tmp/read_mtx_pc" "$tmp/banded.mtx")"
[ "$out7" = "$out6" ] || { echo "read_mtx (pkg-config): $out7"; exit 1; }
# A symmetric file with an entry above the diagonal is an error, from the library and the tool.
printf '%%%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n1 1 1.0\n1 2 5.0\n' > "$tmp/upper.mtx"
if "$tmp/app/build/read_mtx" "$tmp/upper.mtx" 2> "$tmp/upper.err"; then echo "an upper entry of a symmetric file was taken"; exit 1; fi
grep -q "upper.mtx:4: entry (1, 2) lies above the diagonal" "$tmp/upper.err" || { cat "$tmp/upper.err"; exit 1; }
if "$bin/spl-matinfo" "$tmp/upper.mtx" > /dev/null 2>&1; then echo "spl-matinfo took an upper entry"; exit 1; fi
"$bin/spl-tune" "$tmp/app/kernels.spl" --export app_spmv --matrix "$tmp/banded.mtx" --runs 2 > "$tmp/tune.out" 2> "$tmp/tune.err" \
  || { echo "spl-tune from the prefix failed:"; cat "$tmp/tune.err"; exit 1; }
grep -q "banded.mtx" "$tmp/tune.out" || { echo "spl-tune printed no row for the matrix:"; cat "$tmp/tune.out"; exit 1; }
# The BLAS's C interface from the prefix (pkg-config splblas: its cblas.h and the shared library).
cc -O2 "$src/tests/install/blas/cblas_main.c" $(PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" pkg-config --cflags --libs splblas) \
   -Wl,-rpath,"$tmp/prefix/lib" -o "$tmp/cblas_main"
out8="$("$tmp/cblas_main")"
[ "$out8" = "y = 6 15" ] || { echo "cblas from the prefix: $out8"; exit 1; }
echo "install: ok (find_package(SPL) + spl_add_kernels from C, C-only and C++-only projects, a rebuild after an imported module changed, pkg-config, the matrix library, the tools and the CBLAS from the prefix)"
