#!/usr/bin/env python3
"""The macro benchmark's agent variants: every default feature on, then each
feature switched off in turn with the agent's own flags. The one place that
says which flags turn what off; run.sh and report.py both read it.

  variants.py names                 every variant, in table order
  variants.py check AGENT LIST      exit 2 naming what LIST gets wrong
                                    (unknown name, flag the agent lacks)
  variants.py args NAME             the agent flags of NAME, one a line
  variants.py runnable NAME         exit 0 when NAME can run (it is built)
"""
import re
import subprocess
import sys

# name -> (agent flags or None when there is nothing to switch off yet,
#          what the column means)
VARIANTS = {
    "default": ([], "every default feature on"),
    "no-step-rates": (
        ["--step-burst-gap=0"],
        "--step-burst-gap 0: no exchange bursts, so no step rates, no "
        "exchange costs and no peer waits (the flows stay)"),
    "no-continuous-profile": (
        ["--profile-continuous=off"],
        "--profile-continuous off: no low-rate profile of every pod "
        "(on-demand profiles stay)"),
    "no-flows": (
        ["--flows=off"],
        "--flows off: no per-peer traffic, and with it no step rates "
        "(they come from the flows' exchange bursts)"),
    "no-profiler": (
        ["--profiler=off"],
        "--profiler off: no on-demand profiles, and with them no "
        "continuous profile (it needs the profiler)"),
    "no-profile-push": (
        None,
        "n/a (not built): profile push does not exist in the agent yet"),
}

NOT_BUILT = "n/a (not built)"


def flag_names(flags):
    return [re.split(r"[= ]", f, 1)[0] for f in flags]


def check(agent, names):
    """Problems with the variant list NAMES for the binary AGENT."""
    problems = [f"unknown variant {n} (known: {', '.join(VARIANTS)})"
                for n in names if n not in VARIANTS]
    if not names:
        problems.append("no variant given")
    wanted = {f for n in names if n in VARIANTS and VARIANTS[n][0]
              for f in flag_names(VARIANTS[n][0])}
    if wanted:
        help_text = subprocess.run([agent, "--help"], capture_output=True,
                                   text=True, timeout=30).stdout
        problems += [f"{agent} has no {f} (needed by a variant)"
                     for f in sorted(wanted) if f not in help_text]
    return problems


def main(argv):
    if len(argv) == 2 and argv[1] == "names":
        print(" ".join(VARIANTS))
        return 0
    if len(argv) == 4 and argv[1] == "check":
        names = [n for n in argv[3].split(",") if n]
        problems = check(argv[2], names)
        for p in problems:
            print(f"bench/macro: {p}", file=sys.stderr)
        return 2 if problems else 0
    if len(argv) == 3 and argv[1] in ("args", "runnable"):
        flags = VARIANTS[argv[2]][0]
        if argv[1] == "runnable":
            return 0 if flags is not None else 1
        for f in flags or []:
            print(f)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
