#!/usr/bin/env python3
"""Per-cycle cost check (docs/performance.md, "Per-cycle cost check").

Runs trainscope_cycle_bench once under callgrind with --trace-syscalls, so one
run yields both counts:

- instructions per measured cycle: callgrind's Ir, instrumentation switched on
  only inside the measured region (CALLGRIND_START/STOP_INSTRUMENTATION);
- syscalls per measured cycle, by kind: valgrind's syscall trace between the
  bench's access("/trainscope-cycle-bench:begin"/"end") markers. Valgrind sees
  every syscall the client makes, on every thread, without ptrace stops
  (strace made the same run 40 s slower); the fixture's own per-cycle writes
  use pwrite64/ftruncate outside the markers.

Both are deterministic for a given binary and fixture, so the tolerances only
absorb compiler, libstdc++ and glibc drift (see TOLERANCES). Exit 0 when no
count rose beyond its tolerance, 1 on a regression, 2 when the run itself
failed. --record rewrites the baseline from this run.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

# Relative tolerance per count, and an absolute slack per cycle so that a
# kind seen a handful of times a cycle (brk from malloc) does not flap.
#   instructions: the count is exact for one binary (two runs differ by
#     <0.001%); 10% covers compiler and library upgrades while a change that
#     costs 20% more per cycle still fails.
#   syscalls: exact for one binary and fixture; 5% allows a libstdc++ whose
#     directory iteration or file reading issues a call more or less.
TOLERANCES = {
    "instructions": (0.10, 0.0),
    "syscalls": (0.05, 2.0),
}
BEGIN_MARKER = "/trainscope-cycle-bench:begin"
END_MARKER = "/trainscope-cycle-bench:end"
SYSCALL_LINE = re.compile(r"^SYSCALL\[\d+,\d+\]\(\d+\) sys_(\w+) \(")


def parse_args():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bench", required=True,
                   help="path of trainscope_cycle_bench")
    p.add_argument("--baseline", default=os.path.join(here, "baseline.json"))
    p.add_argument("--record", action="store_true",
                   help="write this run's counts as the new baseline")
    p.add_argument("--pods", type=int, help="default: the baseline's")
    p.add_argument("--cycles", type=int, help="default: the baseline's")
    p.add_argument("--warmup", type=int, help="default: the baseline's")
    return p.parse_args()


def fail_run(message):
    print(f"cycle cost check: {message}", file=sys.stderr)
    sys.exit(2)


def read_total_ir(callgrind_out):
    # "totals:" counts what was collected while instrumented; "summary:"
    # stays 0 when instrumentation starts off.
    with open(callgrind_out) as f:
        for line in f:
            if line.startswith("totals:"):
                return int(line.split()[1])
    fail_run(f"no totals in {callgrind_out}")


def count_syscalls(log_path, cycles):
    counts, regions, inside = {}, 0, False
    with open(log_path, errors="replace") as f:
        for line in f:
            m = SYSCALL_LINE.match(line)
            if not m:
                continue
            if BEGIN_MARKER in line:
                inside, regions = True, regions + 1
            elif END_MARKER in line:
                inside = False
            elif inside:
                counts[m.group(1)] = counts.get(m.group(1), 0) + 1
    if regions != cycles:
        fail_run(f"found {regions} measured regions in the syscall trace, "
                 f"expected {cycles}")
    return counts


def run_bench(args, sizes, tmp):
    if not shutil.which("valgrind"):
        fail_run("valgrind not found (scripts/install-deps.sh installs it)")
    out = os.path.join(tmp, "callgrind.out")
    log = os.path.join(tmp, "valgrind.log")
    cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
           f"--callgrind-out-file={out}", "--trace-syscalls=yes",
           f"--log-file={log}", args.bench,
           "--pods", str(sizes["pods"]), "--cycles", str(sizes["cycles"]),
           "--warmup", str(sizes["warmup"])]
    # The bench's fixture goes under `tmp` too, so it is removed even when
    # the bench is killed; the timeout stays under ctest's so this cleanup
    # runs.
    env = dict(os.environ, TMPDIR=tmp)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env,
                              timeout=240)
    except subprocess.TimeoutExpired:
        fail_run("bench under valgrind ran past 240 s")
    if proc.returncode != 0:
        fail_run(f"bench exited {proc.returncode}:\n{proc.stderr[-4000:]}")
    cycles = sizes["cycles"]
    syscalls = count_syscalls(log, cycles)
    return {
        **sizes,
        "instructions_per_cycle": round(read_total_ir(out) / cycles),
        "syscalls_per_cycle": round(sum(syscalls.values()) / cycles, 2),
        "syscalls_per_cycle_by_kind": {
            k: round(v / cycles, 2) for k, v in sorted(syscalls.items())},
    }


def print_table(result):
    pods, cycles = result["pods"], result["cycles"]
    print(f"per-cycle cost: {pods} pods, {cycles} measured cycles "
          f"after {result['warmup']} warm-up")
    rows = [("instructions", result["instructions_per_cycle"]),
            ("syscalls (all)", result["syscalls_per_cycle"])]
    rows += [(f"  {k}", v)
             for k, v in sorted(result["syscalls_per_cycle_by_kind"].items(),
                                key=lambda kv: -kv[1])]
    print(f"{'count':<22}{'per cycle':>16}{'per pod per cycle':>20}")
    for name, value in rows:
        print(f"{name:<22}{value:>16,.2f}{value / pods:>20,.2f}")


def compare(name, kind, base, now):
    """Returns ('regression'|'improvement'|None, message)."""
    rel, slack = TOLERANCES[kind]
    allowed = base * rel + slack
    change = (now - base) / base * 100 if base else float("inf")
    what = (f"{name}: {now:,.2f} per cycle vs baseline {base:,.2f} "
            f"({change:+.1f}%, tolerance +-{rel * 100:.0f}%)")
    if now > base + allowed:
        return "regression", what
    if now < base - allowed:
        return "improvement", what
    return None, what


def check(result, baseline):
    findings = [compare("instructions", "instructions",
                        baseline["instructions_per_cycle"],
                        result["instructions_per_cycle"]),
                compare("syscalls (all)", "syscalls",
                        baseline["syscalls_per_cycle"],
                        result["syscalls_per_cycle"])]
    base_kinds = baseline["syscalls_per_cycle_by_kind"]
    now_kinds = result["syscalls_per_cycle_by_kind"]
    for kind in sorted(set(base_kinds) | set(now_kinds)):
        findings.append(compare(f"syscall {kind}", "syscalls",
                                base_kinds.get(kind, 0.0),
                                now_kinds.get(kind, 0.0)))
    regressions = [m for verdict, m in findings if verdict == "regression"]
    improvements = [m for verdict, m in findings if verdict == "improvement"]
    for m in regressions:
        print(f"REGRESSION {m}")
    for m in improvements:
        print(f"IMPROVED   {m}")
    return regressions, improvements


def main():
    args = parse_args()
    baseline = None
    if os.path.exists(args.baseline):
        with open(args.baseline) as f:
            baseline = json.load(f)
    elif not args.record:
        fail_run(f"no baseline {args.baseline}; run with --record")
    defaults = baseline or {"pods": 110, "cycles": 12, "warmup": 2}
    sizes = {k: getattr(args, k) if getattr(args, k) is not None
             else defaults[k] for k in ("pods", "cycles", "warmup")}
    if sizes["cycles"] < 1 or sizes["pods"] < 1:
        fail_run(f"need at least one pod and one measured cycle: {sizes}")
    with tempfile.TemporaryDirectory(prefix="trainscope-cycle-check-") as tmp:
        result = run_bench(args, sizes, tmp)
    print_table(result)
    record_hint = (f"re-record the baseline: python3 {sys.argv[0]} --bench "
                   f"{args.bench} --record")
    if args.record:
        with open(args.baseline, "w") as f:
            json.dump(result, f, indent=2)
            f.write("\n")
        print(f"recorded {args.baseline}")
        return 0
    if any(baseline[k] != sizes[k] for k in sizes):
        print(f"not compared: the baseline was recorded with "
              f"{ {k: baseline[k] for k in sizes} }")
        return 0
    regressions, improvements = check(result, baseline)
    if regressions:
        print(f"cycle cost check FAILED: {len(regressions)} count(s) rose "
              f"beyond tolerance. If the cost is intended, {record_hint}")
        return 1
    if improvements:
        print(f"cycle cost check passed; counts fell beyond tolerance, so "
              f"{record_hint} (or the next regression hides in the slack)")
        return 0
    print("cycle cost check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
