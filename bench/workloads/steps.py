"""Shared plumbing of the workload programs: ground-truth step counts and a
bounded, signal-aware run loop.

trainsim sets TRAINSIM_STEPS_FILE in every program pod; the program keeps
there the number of steps it has completed (one integer, replaced
atomically so a reader never sees half a number).

TRAINSIM_FAULT_FILE carries the hang, checkpoint and oom faults' orders
(bench/trainsim/fault_gate.h, docs/trainsim.md "Hangs"): StepCounter.add
reads it at each step boundary, in the training thread, and hangs, blocks,
writes a checkpoint or allocates until the OOM killer ends it there as the
real failure would.
"""
import faulthandler
import mmap
import os
import signal
import threading
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
        FAULTS.at_step_boundary()

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


def _read_order(path):
    """(id, action, args) of the fault file's line, None when absent/bad."""
    try:
        with open(path) as f:
            fields = f.readline().split()
    except OSError:
        return None
    if len(fields) < 2 or not fields[0].isdigit() or int(fields[0]) <= 0:
        return None
    return int(fields[0]), fields[1], fields[2:]


def _thread_state(tid):
    try:
        with open(f"/proc/self/task/{tid}/stat") as f:
            stat = f.read()
        return stat[stat.rindex(")") + 2]
    except (OSError, ValueError, IndexError):
        return "?"


class FaultGate:
    """The program side of trainsim's fault file (same format and meaning
    as the built-in pods' FaultGate in bench/trainsim/fault_gate.cc)."""

    RECHECK_S = 0.2

    def __init__(self, path=None):
        self.path = path if path is not None else os.environ.get("TRAINSIM_FAULT_FILE", "")
        self.done = set()

    def _still(self, order_id):
        order = _read_order(self.path)
        return order is not None and order[0] == order_id

    def at_step_boundary(self):
        if not self.path:
            return
        order = _read_order(self.path)
        if order is None:
            return
        order_id, action, args = order
        if action == "checkpoint":
            if order_id not in self.done and len(args) >= 2:
                self.done.add(order_id)
                self._checkpoint(int(args[0]), args[1])
            return
        if action == "oom" and args and args[0].isdigit():
            self._oom(order_id, int(args[0]))
            return
        if action not in ("busy_loop", "all_wait", "blocked_io"):
            return
        print(f"[trainsim-fault] hang {action} begins", flush=True)
        if action == "busy_loop":
            # Stuck in compute: the training thread spins, exchanges nothing.
            x, next_check = 1, time.monotonic() + self.RECHECK_S
            while True:
                for _ in range(20000):
                    x = (x * 6364136223846793005 + 1) & 0xFFFFFFFFFFFFFFFF
                if time.monotonic() >= next_check:
                    if not self._still(order_id):
                        break
                    next_check = time.monotonic() + self.RECHECK_S
        else:
            while self._still(order_id):
                if action == "blocked_io" and args:
                    self._read_hung(args[0])
                time.sleep(self.RECHECK_S)
        print(f"[trainsim-fault] hang {action} ended", flush=True)

    def _oom(self, order_id, cap_bytes):
        """Allocates 16 MiB chunks, touching every page so each is charged
        to the pod's cgroup, until the kernel's OOM killer kills us; past
        cap_bytes (no limit enforced) holds them while the order stays."""
        print("[trainsim-fault] oom: allocating until the OOM killer ends us", flush=True)
        chunk, page = 16 << 20, mmap.PAGESIZE
        held, total = [], 0
        while total < cap_bytes and self._still(order_id):
            block = mmap.mmap(-1, chunk)
            for off in range(0, chunk, page):
                block[off] = 1
            held.append(block)
            total += chunk
        while self._still(order_id):
            time.sleep(self.RECHECK_S)
        print(f"[trainsim-fault] oom: not killed at {total} bytes (no memory limit?)", flush=True)
        for block in held:
            block.close()

    @staticmethod
    def _read_hung(path):
        """read() on the hung FUSE mount; a signal to this thread once the
        read waits moves it to FUSE's killable wait (state D)."""
        fd = None
        for _ in range(50):
            try:
                fd = os.open(path, os.O_RDONLY)
                break
            except OSError:
                time.sleep(0.1)
        if fd is None:
            return
        main = threading.get_native_id()
        ident = threading.get_ident()
        done = threading.Event()
        old = signal.signal(signal.SIGUSR2, lambda *_: None)

        def nudge():
            for _ in range(20):
                if done.wait(0.3) or _thread_state(main) == "D":
                    return
                signal.pthread_kill(ident, signal.SIGUSR2)

        nudger = threading.Thread(target=nudge, daemon=True)
        nudger.start()
        try:
            os.read(fd, 4096)
        except OSError as e:
            print(f"[trainsim-fault] blocked_io read ended: {e}", flush=True)
        finally:
            done.set()
            nudger.join()
            os.close(fd)
            signal.signal(signal.SIGUSR2, old)

    @staticmethod
    def _checkpoint(nbytes, path):
        """Writes nbytes (whole MiB blocks) with O_DIRECT, so the writes reach
        the disk and the pod's cgroup write throttle as they are made."""
        print(f"[trainsim-fault] checkpoint: writing {nbytes} bytes to {path}", flush=True)
        block = mmap.mmap(-1, 1 << 20)  # page-aligned, as O_DIRECT wants
        block.write(b"c" * (1 << 20))
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        try:
            fd = os.open(path, flags | getattr(os, "O_DIRECT", 0), 0o600)
        except OSError:
            fd = os.open(path, flags, 0o600)  # tmpfs: no O_DIRECT
        try:
            done = 0
            while done < nbytes:
                done += os.write(fd, block)
            os.fsync(fd)
        finally:
            os.close(fd)
            os.unlink(path)
            block.close()
        print("[trainsim-fault] checkpoint written; steps resume", flush=True)


FAULTS = FaultGate()
