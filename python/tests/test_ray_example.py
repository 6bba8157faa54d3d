"""The Ray example (examples/ray_batch.py) on a local Ray instance;
skipped, saying so, where `ray` is not installed."""

import importlib.util
import pathlib

import pytest

ray = pytest.importorskip("ray", reason="ray is not installed: the Ray example is not run")

EXAMPLE = pathlib.Path(__file__).parents[2] / "examples" / "ray_batch.py"
PATCH = "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n"


def test_ray_example_scores_jobs_in_order():
    spec = importlib.util.spec_from_file_location("ray_batch", EXAMPLE)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    jobs = [({"f.txt": "a\nb\n"}, PATCH), ({"f.txt": "a\nx\n"}, PATCH)] * 10
    ray.init(num_cpus=2, include_dashboard=False, ignore_reinit_error=True)
    try:
        results = example.score(jobs, shards=3)
    finally:
        ray.shutdown()
    assert [r["ok"] for r in results] == [True, False] * 10
    assert results[0]["tree"] == {"f.txt": "a\nB\n"}
    assert results[1]["error"]["code"] == "context_not_found"
