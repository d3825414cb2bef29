"""Offline plan of generated stacks with 100, 1,000 and 2,000 entities.

Renders the real program (`__main__.py` and its components) with Pulumi's mock runtime for a
Premium pair whose primary holds N entities (half queues, a quarter topics, a quarter
subscriptions) and prints the seconds for each size and the 2,000/1,000 ratio.
Goal: 1,000 entities <= 5 s, ratio <= 2.2.

    python benchmarks/plan_bench.py [--sizes 100 1000 2000] [--repeat 1]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from pairedbus.iac.render import PulumiProject, render_stack

REPO = Path(__file__).resolve().parents[1]


def generated_stack(entities: int) -> dict[str, Any]:
    queues = entities // 2
    topics = (entities - queues) // 2
    subscriptions = entities - queues - topics
    premium = {"sku": "Premium", "capacity": 4, "premiumMessagingPartitions": 2}
    return {
        "config": {
            "pairedbus:resourceGroups": {"primary": {"name": "rg-bench-p"}, "secondary": {"name": "rg-bench-s"}},
            "pairedbus:primary": {"name": "bench-primary", "location": "westeurope", **premium},
            "pairedbus:secondary": {"name": "bench-secondary", "location": "northeurope", **premium},
            "pairedbus:backlogQueueCount": 10,
            "pairedbus:queues": [{"name": f"queue-{i}", "maxSizeInMegabytes": 1024} for i in range(queues)],
            "pairedbus:topics": [
                {"name": f"topic-{i}", "subscriptions": [{"name": f"sub-{i}"}] if i < subscriptions else []}
                for i in range(topics)
            ],
            "pairedbus:syphon": {"image": "example.azurecr.io/pairedbus-syphon:1.0.0"},
        }
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 2000])
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs per size")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        project_dir = Path(tmp)
        for name in ("Pulumi.yaml", "__main__.py"):
            shutil.copy(REPO / name, project_dir / name)
        (project_dir / "stacks").mkdir()
        project = PulumiProject.find(project_dir)
        # Untimed warm-up: imports of Pulumi and azure-native are paid once per process.
        (project_dir / "stacks" / "Pulumi.warmup.yaml").write_text(yaml.safe_dump(generated_stack(10)))
        render_stack(project, "warmup")
        seconds: dict[int, float] = {}
        for size in args.sizes:
            (project_dir / "stacks" / f"Pulumi.bench{size}.yaml").write_text(yaml.safe_dump(generated_stack(size)))
            best = float("inf")
            for _ in range(args.repeat):
                start = time.perf_counter()
                _, plan = render_stack(project, f"bench{size}")
                best = min(best, time.perf_counter() - start)
            seconds[size] = best
            print(f"{size:>6} entities: {len(plan.resources):>6} resources rendered in {best:7.2f} s")
    if 1000 in seconds and 2000 in seconds:
        print(
            f"ratio 2,000/1,000: {seconds[2000] / seconds[1000]:.2f} (goal <= 2.2); 1,000 entities: {seconds[1000]:.2f} s (goal <= 5 s)"
        )


if __name__ == "__main__":
    main()
