# Sourced by scripts/build.sh and scripts/sanitize.sh: compile through
# ccache when it is installed (scripts/install-deps.sh installs it), with its
# cache beside the other tools, outside the work tree
# ($TRAINSCOPE_CACHE_DIR, default /var/cache/trainscope). A fresh clone
# then compiles only what changed since the cache last saw it: paths are
# hashed relative to the clone (CCACHE_BASEDIR) and the working directory is
# not hashed, so clones at other paths share the cache. Sets `launcher`.
launcher=()
if command -v ccache >/dev/null; then
  export CCACHE_DIR=${CCACHE_DIR:-${TRAINSCOPE_CACHE_DIR:-/var/cache/trainscope}/ccache}
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
  export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
  export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-6G}
  mkdir -p "$CCACHE_DIR"
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
