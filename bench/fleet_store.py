"""fleet_store: what the fleet store adds to one loop iteration, Redis against this machine's file.

One iteration's worth of fleet-store work, as `dun loop` does it through dun/fleet/link.py: reserve a call of the
shared window (with the daily budget), write the loop's registry record when the iteration opens, record its cost,
and write the record again when it concludes; each step also keeps the loop's journal (`.dun/fleet.json`). Timed per
iteration, alternately on the local file store and on a real redis-server on this machine (started here on a free
port, empty, no persistence), so background load hits both alike. Target: Redis adds at most 5 ms per iteration at
the median and at p99 over the local file.
Run: .venv/bin/python bench/fleet_store.py [--iterations 2000]
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dun.fleet.limits import LocalStore
from dun.fleet.link import FleetLink
from dun.fleet.redisstore import RedisStore
from dun.fleet.store import FleetStore

TARGET_MS = 5.0


def start_redis(directory: Path) -> tuple[subprocess.Popen[bytes], str]:
    binary = shutil.which("redis-server")
    if binary is None:
        sys.exit("fleet_store: redis-server is not installed (`make debian-deps`)")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--dir", str(directory)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}/0"
    store = RedisStore(url)
    deadline = time.monotonic() + 20
    while True:
        try:
            store.client.ping()
            return proc, url
        except Exception:
            if time.monotonic() > deadline:
                sys.exit("fleet_store: redis-server did not start")
            time.sleep(0.02)


def iteration(link: FleetLink, n: int) -> float:
    """One iteration's fleet-store work; seconds."""
    start = time.perf_counter()
    answer = link.reserve(1_000_000, 1e9)
    assert answer.granted, answer
    link.beat({"status": "running", "iteration": n, "in_progress": n})
    link.record_cost(0.01)
    link.beat({"status": "running", "iteration": n, "in_progress": None})
    return time.perf_counter() - start


def raw(store: FleetStore, n: int) -> float:
    """The same four requests straight to the store, without the loop's journal; seconds."""
    limits = store.limits("claude")
    start = time.perf_counter()
    limits.reserve(1_000_000, 1e9, f"raw:{n}")
    store.beat({"loop_id": "raw", "status": "running", "iteration": n, "heartbeat": time.time()})
    limits.record_cost(0.01, f"raw-cost:{n}")
    store.beat({"loop_id": "raw", "status": "running", "iteration": n, "heartbeat": time.time()})
    return time.perf_counter() - start


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--iterations", type=int, default=2000)
    opts = args.parse_args()
    with tempfile.TemporaryDirectory(prefix="dun-bench-fleet-") as tmp:
        base = Path(tmp)
        os.environ["XDG_STATE_HOME"] = str(base / "state")  # never the user's own store
        proc, url = start_redis(base)
        try:
            stores: dict[str, FleetStore] = {"local": LocalStore(base / "local"), "redis": RedisStore(url)}
            links = {}
            for name, store in stores.items():
                root = base / name / "repo"
                root.mkdir(parents=True)
                links[name] = FleetLink(store, "claude", root, root / "fleet.json")
            times: dict[str, list[float]] = {name: [] for name in links}
            raws: dict[str, list[float]] = {name: [] for name in links}
            for n in range(1, opts.iterations + 1):  # alternate, so load on the machine hits both alike
                for name, link in links.items():
                    times[name].append(iteration(link, n))
                    raws[name].append(raw(stores[name], n))
        finally:
            proc.kill()
            proc.wait()
    ms = {name: [t * 1000 for t in values] for name, values in times.items()}
    print(f"fleet_store: {opts.iterations} iterations each; {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} CPUs, Python {platform.python_version()}, load {os.getloadavg()[0]:.1f}")
    for name, values in ms.items():
        print(f"  {name:6} p50 {statistics.median(values):6.3f} ms  p99 {pct(values, 0.99):6.3f} ms  "
              f"max {max(values):7.3f} ms")
    for name, values in raws.items():
        values = [t * 1000 for t in values]
        print(f"  {name:6} store requests alone (no journal): p50 {statistics.median(values):6.3f} ms  "
              f"p99 {pct(values, 0.99):6.3f} ms")
    added50 = statistics.median(ms["redis"]) - statistics.median(ms["local"])
    added99 = pct(ms["redis"], 0.99) - pct(ms["local"], 0.99)
    ok = added50 <= TARGET_MS and added99 <= TARGET_MS
    print(f"  redis adds {added50:+.3f} ms at p50, {added99:+.3f} ms at p99 per iteration (target <= {TARGET_MS} ms): "
          f"{'PASS' if ok else 'FAIL'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
