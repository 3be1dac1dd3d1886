"""Time and peak memory of `profiles batch --render` over generated datasets of 10k and 100k rows.

Each run is a child process, so its peak resident memory (ru_maxrss from wait4) is its own:

    python bench/batch.py            # 10k and 100k rows
    python bench/batch.py 1000 5000  # other sizes
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATASETS = REPO / "profile_configs" / "datasets"
SEGMENTS = ("Enterprise", "SMB", "Startup")


def make_dataset(path: Path, rows: int) -> None:
    """A customers-like CSV with `rows` rows."""
    with path.open("w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(["customer_id", "contact_name", "company", "segment", "language", "plan", "notes"])
        for number in range(1, rows + 1):
            writer.writerow(
                [
                    f"c-{number:07d}",
                    f"Customer {number}",
                    f"Company {number % 977}",
                    SEGMENTS[number % 3],
                    "zh" if number % 10 == 0 else "en",
                    ("premium", "standard", "trial")[number % 3],
                    f"note {number}" if number % 4 else "",
                ]
            )


def run(rows: int, folder: Path) -> tuple[float, float]:
    """Seconds and peak resident MiB of one batch run in a child process."""
    source = folder / f"customers-{rows}.csv"
    make_dataset(source, rows)
    out = folder / f"out-{rows}.jsonl"
    command = [
        sys.executable, "-m", "profiles", "batch", "--from", str(source),
        "--map", str(DATASETS / "customers.map.yaml"), "--base", str(DATASETS / "support_agent.yaml"),
        "--out", str(out), "--render", "--question", "Where is my invoice?", "--quiet",
    ]  # fmt: skip
    started = time.perf_counter()
    child = subprocess.Popen(command, cwd=REPO)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"batch of {rows} rows failed with status {child.returncode}")
    # ru_maxrss is KiB on Linux, bytes on macOS
    peak = usage.ru_maxrss / (1024 * 1024 if sys.platform == "darwin" else 1024)
    return seconds, peak


def main(argv: list[str]) -> None:
    from profiles.cli.progress import format_rate  # the one format the commands show rates in

    sizes = [int(arg) for arg in argv] or [10_000, 100_000]
    print(f"{'rows':>9} {'seconds':>9} {'rows/s':>9} {'peak MiB':>9}")
    with tempfile.TemporaryDirectory() as temp:
        for rows in sizes:
            seconds, peak = run(rows, Path(temp))
            print(f"{rows:>9,} {seconds:>9.2f} {format_rate(rows / seconds):>9} {peak:>9.1f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
