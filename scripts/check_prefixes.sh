#!/bin/sh
# check_prefixes.sh -- every symbol a layer's objects export carries the
# layer's prefix: tensor/ mt_, graph/ mtg_, jit/ mtj_, lua_bindings/ mtl_,
# repl/ mtr_ (STYLE.md); the rest is static. Allowed besides: luaopen_*
# (the Lua module's entry) and main (repl/). The embedded sources in gen/
# belong to the layer whose files they embed (*_cu: tensor/, *_lua:
# lua_bindings/). Lists each offender as "object: symbol" and exits 1 when
# there is one. Build first (make); BUILD names another build folder.
#   scripts/check_prefixes.sh [BUILD]
set -eu
cd "$(dirname "$0")/.."
b=${1:-${BUILD:-build}}
[ -d "$b" ] || { echo "check_prefixes.sh: no $b/: run make first" >&2; exit 2; }

bad=0
# check PREFIX OBJECT...: the exported symbols of the objects lacking PREFIX
check() {
  prefix=$1
  shift
  for o in "$@"; do
    [ -f "$o" ] || { echo "check_prefixes.sh: $o is missing: run make first" >&2; exit 2; }
    for s in $(nm -g --defined-only "$o" | awk '{ print $3 }'); do
      case $s in
      "$prefix"* | luaopen_*) ;;
      main) [ "$prefix" = mtr_ ] || { echo "$o: $s"; bad=1; } ;;
      *) echo "$o: $s"; bad=1 ;;
      esac
    done
  done
}

# the objects of the C sources under DIR (only those: stale objects of
# removed files do not count)
objs() {
  find "$1" -name '*.c' | sort | sed "s|^\(.*\)\.c$|$b/\1.o|"
}

check mt_ $(objs tensor) $(ls tensor/cuda/*.cu 2>/dev/null | sed "s|^tensor/cuda/\(.*\)\.cu$|$b/gen/\1_cu.o|")
check mtg_ $(objs graph)
check mtj_ $(objs jit)
check mtl_ $(objs lua_bindings) $(ls lua_bindings/*.lua | sed "s|^lua_bindings/\(.*\)\.lua$|$b/gen/\1_lua.o|")
check mtr_ $(objs repl)
[ $bad = 0 ] && echo "check_prefixes.sh: every exported symbol carries its layer's prefix"
exit $bad
