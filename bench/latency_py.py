#!/usr/bin/env python3
"""Wake latency through pycgstream (scenario 5c).

usage: latency_py.py --seconds S CGROUP...

One pycgstream.Group (kernel mode) over the cgroups.  Per cycle:
Group.wait() returns -> time.monotonic_ns() ("at wake", CLOCK_MONOTONIC)
-> Group.read() builds the batch -> time again ("delivered": what code
iterating over the Group sees).  Latency = that time minus the newest
sample's flush_time_usec.  Prints one JSON object like cgbench latency.
Uses the checkout's pycgstream and libcgstream (build/) unless
CGSTREAM_LIBRARY / PYTHONPATH say otherwise.
"""
import time

T_START = time.monotonic()
import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "pycgstream", "src"))
os.environ.setdefault("CGSTREAM_LIBRARY", os.path.join(TOP, "libcgstream", "build",
                                                       "libcgstream.so.1"))
import pycgstream  # noqa: E402

T_IMPORTED = time.monotonic()


def main():
    args = sys.argv[1:]
    seconds = 10.0
    if len(args) >= 2 and args[0] == "--seconds":
        seconds = float(args[1])
        args = args[2:]
    if not args:
        sys.exit("usage: latency_py.py --seconds S CGROUP...")
    lat, lat_deliver = [], []
    wakes = missed = dups = errors = 0
    prev = None
    # CGBENCH_LIB_MODE=fallback: smoke tests on kernels without the feature
    mode = os.environ.get("CGBENCH_LIB_MODE", "kernel")
    t_open = time.monotonic()
    with pycgstream.Group(args, mode=mode, fallback_interval_ms=100) as g:
        t_opened = time.monotonic()
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if not g.wait(0.2):
                continue
            woke = time.monotonic_ns() // 1000
            batch = g.read()
            delivered = time.monotonic_ns() // 1000
            samples = [e for e in batch if isinstance(e, pycgstream.Sample)]
            errors += len(batch) - len(samples)
            if not samples:
                continue
            wakes += 1
            newest = max(samples, key=lambda s: s.seq or 0)
            if prev is None:        # the batch already there at start
                prev = newest.seq
                continue
            if newest.seq <= prev:      # a batch that brought no new flush
                dups += 1
                continue
            if newest.seq > prev + 1:
                missed += newest.seq - prev - 1
            prev = newest.seq
            lat.append(woke - newest.flush_time_usec)
            lat_deliver.append(delivered - newest.flush_time_usec)
        mode = g.mode
        t_loop_end = time.monotonic()
    t_closed = time.monotonic()
    print(json.dumps({"startup_s": {"imports": round(T_IMPORTED - T_START, 3),
                                    "group_open": round(t_opened - t_open, 3),
                                    "group_close": round(t_closed - t_loop_end, 3)},"reader": "pycgstream", "mode": mode, "cgroups": len(args),
                      "python": sys.version.split()[0], "wakes": wakes, "missed": missed,
                      "repeat_wakes": dups, "errors": errors, "lat_us": lat,
                      "lat_deliver_us": lat_deliver}))


if __name__ == "__main__":
    main()
