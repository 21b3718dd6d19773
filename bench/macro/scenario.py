#!/usr/bin/env python3
"""Writes a trainsim scenario with N pods and light traffic: jobs of ten pods
(1 PS, 9 workers; the remainder in a last, smaller job), each worker pulling
20 KB from its PS every 2 s. No faults, no expectations.

  scenario.py N > file.json
"""
import json
import sys

n = int(sys.argv[1])
if n < 2:
    sys.exit("scenario.py: N >= 2")
jobs = []
left, j = n, 0
while left > 0:
    size = 10 if left >= 12 or left == 10 else left
    jobs.append({
        "namespace": "bench", "name": f"j{j}", "labels": "kubeflow",
        "ps": 1, "workers": size - 1, "port": 2222,
        "step_ms": 2000, "compute_ms": 0,
        "variables": [{"name": "w", "bytes": 20000}],
        "placement": {"strategy": "round_robin"},
    })
    left -= size
    j += 1
json.dump({
    "name": f"macro-{n}",
    "description": f"bench/macro: {n} pods, light traffic",
    "duration_s": 86400, "interval_s": 5,
    "jobs": jobs,
}, sys.stdout, indent=1)
print()
