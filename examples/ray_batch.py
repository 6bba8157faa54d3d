"""Scoring many model patches on a Ray cluster: each task applies a shard
of (files, patch) jobs in memory with `grammar_patch.apply_batch`, and the
driver gathers the results. grammar-patch has no scheduler of its own; Ray
(or Spark, or Dask) spreads the shards, each task uses its node's cores.

    pip install ./python ray
    python examples/ray_batch.py        # a local Ray instance

`python/tests/test_ray_example.py` runs `score` on a local instance.
"""

from typing import List, Sequence, Tuple

import ray

import grammar_patch as gp

Job = Tuple[dict, str]


@ray.remote
def apply_shard(jobs: Sequence[Job]) -> List[gp.MemoryResult]:
    return gp.apply_batch(list(jobs))


def score(jobs: Sequence[Job], shards: int = 4) -> List[gp.MemoryResult]:
    """Every job's result, in order, computed in `shards` Ray tasks."""
    size = max(1, -(-len(jobs) // shards))
    parts = [apply_shard.remote(jobs[i:i + size]) for i in range(0, len(jobs), size)]
    return [r for part in ray.get(parts) for r in part]


if __name__ == "__main__":
    patch = "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n"
    jobs = [({"f.txt": "a\nb\n"}, patch), ({"f.txt": "a\nx\n"}, patch)] * 50
    ray.init()
    results = score(jobs)
    print(sum(r["ok"] for r in results), "of", len(results), "applied")
