"""Load on `profiles serve` over loopback: requests/s, p50 and p99 latency and errors per scenario.

`profiles serve` runs as its own process on 127.0.0.1 (a free port, a SQLite store made for the
run), so the load generator does not share its interpreter. N threads, each with its own
keep-alive connection, send one scenario's request for a bounded time after a warm-up that is not
counted. The floor is `GET /api/health` on the same server in the same run: the HTTP stack,
routing and the security middleware with no work behind them; each row's p50 is also shown as a
ratio to it. Client and server share the machine's cores, so compare rows and runs rather than
reading the numbers as capacity.

    pip install -e ".[serve]"
    python bench/serve.py                       # every scenario, 8 clients, 5 s each
    python bench/serve.py --seconds 2 --concurrency 16 --only store-get-304,render-post
    python bench/serve.py --json serve.json     # the rows as JSON too

Targets: no errors in any row; p99 under 50 ms for a cached store read (`store-get-304`, the
conditional GET an agent polling a label sends).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
TOKEN = "bench-token-0123456789abcdef"
PROMPT = "summarizer/name"

#: p99 a cached store read must stay under, in milliseconds.
CACHED_READ_P99_MS = 50.0


@dataclass(frozen=True)
class Scenario:
    name: str
    label: str
    method: str
    path: str
    body: dict | None = None
    #: The status a good answer has (304 for a conditional read of an unchanged prompt).
    status: int = 200
    #: Send `If-None-Match` with the ETag the first answer carried.
    conditional: bool = False
    target_p99_ms: float | None = None


SCENARIOS = (
    Scenario("floor", "GET /api/health (floor)", "GET", "/api/health"),
    Scenario("store-get", "store get by label chain", "GET",
             f"/api/store/prompt?name={PROMPT}&chain=production,latest"),
    Scenario("store-get-304", "store get, If-None-Match (cached)", "GET",
             f"/api/store/prompt?name={PROMPT}&chain=production,latest", status=304, conditional=True,
             target_p99_ms=CACHED_READ_P99_MS),
    Scenario("render-post", "render system, POST", "POST", "/api/personas/summarizer.yaml/render",
             {"kind": "system", "deployment": "prod", "question": "What changed in Q3?"}),
    Scenario("render-get-304", "render system, GET If-None-Match", "GET",
             "/api/personas/planner.yaml/prompts/system?var.agents=Searcher", status=304, conditional=True),
    Scenario("personas", "list personas", "GET", "/api/personas"),
    Scenario("mcp-get", "MCP prompts/get (streamable HTTP)", "POST", "/mcp/",
             {"jsonrpc": "2.0", "id": 1, "method": "prompts/get",
              "params": {"name": "summarizer.system", "arguments": {}}}),
)  # fmt: skip


@dataclass
class Row:
    name: str
    label: str
    requests: int = 0
    seconds: float = 0.0
    rps: float = 0.0
    p50_ms: float | None = None
    p99_ms: float | None = None
    max_ms: float | None = None
    errors: dict[str, int] = field(default_factory=dict)
    ratio: float | None = None
    target: str = ""
    passed: bool | None = None


class _Tally:
    """Latencies of good answers and counts of bad ones, from many threads."""

    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.errors: dict[str, int] = {}
        self.lock = threading.Lock()

    def error(self, kind: str) -> None:
        with self.lock:
            self.errors[kind] = self.errors.get(kind, 0) + 1

    @property
    def count(self) -> int:
        return len(self.latencies) + sum(self.errors.values())


def start_server(folder: Path, store: str) -> tuple[subprocess.Popen, str]:
    """`profiles serve` on a free port of 127.0.0.1; its base URL once it answers."""
    env = {**os.environ, "PROFILES_SERVE_TOKEN": TOKEN}
    env.pop("PROFILES_STORE_URL", None)
    command = [sys.executable, "-m", "profiles", "serve", str(folder), "--port", "0", "--store", store,
               "--log-level", "warning"]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env, cwd=folder)
    first = process.stdout.readline() if process.stdout else ""
    found = re.search(r"at (http://127\.0\.0\.1:\d+)/", first)
    if not found:
        process.kill()
        raise SystemExit(f"profiles serve did not start: {first!r}")
    base = found.group(1)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(base + "/api/health", timeout=2).status_code == 200:
                return process, base
        except httpx.TransportError:
            time.sleep(0.05)
    process.kill()
    raise SystemExit("profiles serve did not answer within 30 s")


def fill_store(base: str) -> None:
    """Two versions of a prompt, `production` on the first, put through the API."""
    headers = {"Authorization": f"Bearer {TOKEN}"}
    for content, label in (("Aristotle", "production"), ("Plato", None)):
        answer = httpx.post(base + "/api/store/put", json={"name": PROMPT, "content": content, "label": label},
                            headers=headers)  # fmt: skip
        answer.raise_for_status()


def run(base: str, scenario: Scenario, concurrency: int, seconds: float, warmup: float, cap: int) -> Row:
    """Bounded load of one scenario: `concurrency` threads for `seconds` (at most `cap` requests)."""
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
    if scenario.conditional:
        headers["If-None-Match"] = httpx.request(scenario.method, base + scenario.path, json=scenario.body).headers[
            "etag"
        ]
    tally = _Tally()
    go = threading.Event()
    stop_at = [0.0]

    def worker() -> None:
        with httpx.Client(base_url=base, headers=headers, timeout=10) as client:
            warm_until = time.monotonic() + warmup
            while time.monotonic() < warm_until:
                client.request(scenario.method, scenario.path, json=scenario.body)
            go.wait()
            # each thread times one request at least: on a busy machine its warm-up can outlast the run
            first = True
            while first or (time.monotonic() < stop_at[0] and tally.count < cap):
                first = False
                started = time.perf_counter()
                try:
                    answer = client.request(scenario.method, scenario.path, json=scenario.body)
                except httpx.HTTPError as exc:
                    tally.error(type(exc).__name__)
                    continue
                if answer.status_code == scenario.status:
                    tally.latencies.append(time.perf_counter() - started)  # append is atomic
                else:
                    tally.error(str(answer.status_code))

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(concurrency)]
    for thread in threads:
        thread.start()
    time.sleep(warmup + 0.05)
    started = time.monotonic()
    stop_at[0] = started + seconds
    go.set()
    for thread in threads:
        thread.join(seconds + warmup + 30)
    elapsed = time.monotonic() - started
    latencies = sorted(tally.latencies)
    row = Row(scenario.name, scenario.label, tally.count, round(elapsed, 2), round(tally.count / elapsed, 1))
    if latencies:
        row.p50_ms = round(_percentile(latencies, 0.50) * 1000, 2)
        row.p99_ms = round(_percentile(latencies, 0.99) * 1000, 2)
        row.max_ms = round(latencies[-1] * 1000, 2)
    row.errors = dict(tally.errors)
    targets = ["0 errors"]
    passed = not row.errors and row.requests > 0
    if scenario.target_p99_ms is not None:
        targets.append(f"p99 < {scenario.target_p99_ms:g} ms")
        passed = passed and row.p99_ms is not None and row.p99_ms < scenario.target_p99_ms
    row.target, row.passed = ", ".join(targets), passed
    return row


def _percentile(values: list[float], q: float) -> float:
    index = min(len(values) - 1, max(0, round(q * (len(values) - 1))))
    return values[index]


def print_table(rows: list[Row], concurrency: int, seconds: float) -> None:
    print(f"profiles serve on loopback: {concurrency} clients, {seconds:g} s per row, {os.cpu_count()} cpus, "
          f"Python {platform.python_version()}")  # fmt: skip
    header = f"{'row':34} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} {'× floor':>8} {'errors':>7}  target"
    print(header)
    print("-" * len(header))
    for row in rows:
        errors = sum(row.errors.values())
        ratio = f"{row.ratio:.2f}×" if row.ratio is not None else "–"
        result = "pass" if row.passed else "FAIL"

        def shown(value: float | None) -> str:
            return "–" if value is None else f"{value:.2f}"

        print(f"{row.label:34} {row.rps:>9,.0f} {shown(row.p50_ms):>8} {shown(row.p99_ms):>8} "
              f"{shown(row.max_ms):>8} {ratio:>8} {errors:>7}  {row.target}: {result}")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="measured seconds per row (at most 120)")
    parser.add_argument("--warmup", type=float, default=1.0, help="uncounted seconds before each row")
    parser.add_argument("--concurrency", type=int, default=8, help="client threads (at most 256)")
    parser.add_argument("--max-requests", type=int, default=500_000, help="cap per row")
    parser.add_argument("--only", default="", help="comma-separated rows: " + ", ".join(s.name for s in SCENARIOS))
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args(argv)
    if not (0 < args.seconds <= 120 and 1 <= args.concurrency <= 256):
        parser.error("keep it bounded: 0 < --seconds <= 120, 1 <= --concurrency <= 256")
    wanted = {name.strip() for name in args.only.split(",") if name.strip()}
    unknown = wanted - {scenario.name for scenario in SCENARIOS}
    if unknown:
        parser.error(f"unknown rows: {', '.join(sorted(unknown))}")
    scenarios = [s for s in SCENARIOS if not wanted or s.name in wanted or s.name == "floor"]
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="profiles-bench-serve-") as temp:
        folder = Path(temp) / "personas"
        shutil.copytree(REPO / "profile_configs", folder)
        process, base = start_server(folder, f"sqlite:///{Path(temp) / 'store.db'}")
        try:
            fill_store(base)
            for scenario in scenarios:
                rows.append(run(base, scenario, args.concurrency, args.seconds, args.warmup, args.max_requests))
        finally:
            process.terminate()
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
    floor = next((row.p50_ms for row in rows if row.name == "floor"), None)
    for row in rows:
        if floor and row.p50_ms is not None:
            row.ratio = round(row.p50_ms / floor, 2)
    print_table(rows, args.concurrency, args.seconds)
    if args.json:
        meta = {"concurrency": args.concurrency, "seconds": args.seconds, "cpus": os.cpu_count(),
                "python": platform.python_version(), "platform": platform.platform()}  # fmt: skip
        Path(args.json).write_text(json.dumps({"meta": meta, "rows": [asdict(row) for row in rows]}, indent=2))
    return 0 if all(row.passed for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
