# Sourced by scripts/sanitize.sh and bench/fuzz/run.sh: how ASan, UBSan and
# LeakSanitizer report in this project. Every process is checked for leaks
# at exit (lsan.supp names the third-party ones left alone, and why); UBSan
# stops at its first report with a stack.
_supp_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export ASAN_OPTIONS="detect_leaks=1 ${ASAN_OPTIONS:-}"
export LSAN_OPTIONS="suppressions=$_supp_dir/lsan.supp print_suppressions=0 ${LSAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1 halt_on_error=1 ${UBSAN_OPTIONS:-}"
unset _supp_dir
