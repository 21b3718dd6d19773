"""Shared plumbing of the workload programs: ground-truth step counts and a
bounded, signal-aware run loop.

trainsim sets TRAINSIM_STEPS_FILE in every program pod; the program keeps
there the number of steps it has completed (one integer, replaced
atomically so a reader never sees half a number).
"""
import faulthandler
import os
import signal
import time


class StepCounter:
    def __init__(self, path=None, every_s=0.5):
        self.path = path if path is not None else os.environ.get("TRAINSIM_STEPS_FILE", "")
        self.every_s = every_s
        self.steps = 0
        self._last = 0.0
        self.write(force=True)

    def add(self, n=1):
        self.steps += n
        self.write()

    def write(self, force=False):
        now = time.monotonic()
        if not self.path or (not force and now - self._last < self.every_s):
            return
        self._last = now
        tmp = f"{self.path}.tmp.{os.getpid()}"
        os.makedirs(os.path.dirname(self.path) or ".", exist_ok=True)
        with open(tmp, "w") as f:
            f.write(f"{self.steps}\n")
        os.replace(tmp, self.path)


class Deadline:
    """True once SIGTERM/SIGINT arrived or max_seconds passed."""

    def __init__(self, max_seconds):
        self.end = time.monotonic() + max_seconds
        self.stopped = False
        signal.signal(signal.SIGTERM, self._stop)
        signal.signal(signal.SIGINT, self._stop)

    def _stop(self, *_):
        self.stopped = True

    def over(self):
        return self.stopped or time.monotonic() >= self.end

    def pace(self, started, step_s):
        """Sleeps until `step_s` after `started` (monotonic), or the end."""
        while not self.over():
            left = started + step_s - time.monotonic()
            if left <= 0:
                return
            time.sleep(min(left, 0.1))


def limit_threads():
    """One thread per op pool: the machines running CI have 2 cores.
    SIGUSR1 dumps every Python thread's stack to stderr (the pod's log)."""
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
