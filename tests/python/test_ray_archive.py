"""examples/ray_archive.py on a local Ray (`ray.init(num_cpus=2)`) over samples/: every file's
rows are the CLI's runs for that file (the whole canonical run, and the headline figures drawn
from it), or its exit code when it gives none; written as JSON and as Parquet. Run by
tests/python/run.sh in its own cached venv (Ray is a large install)."""

import functools
import importlib.util
import json
import os
import pathlib
import subprocess

import pytest
import ray

ROOT = pathlib.Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
BIN = os.environ.get("BENCH_NORMALIZE_BIN", str(ROOT / "target" / "debug" / "bench-normalize"))

spec = importlib.util.spec_from_file_location("ray_archive", ROOT / "examples" / "ray_archive.py")
ray_archive = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ray_archive)


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@functools.lru_cache(maxsize=None)
def cli_runs(path):
    out = subprocess.run([BIN, path], capture_output=True, check=False)
    return (json.loads(out.stdout)["runs"] if out.stdout else []), out.returncode


def files():
    return sorted(str(p) for p in SAMPLES.rglob("*") if p.is_file() and not p.name.startswith("."))


def rows_by_file(rows):
    by = {}
    for r in rows:
        by.setdefault(r["path"], []).append(r)
    return by


def check_against_cli(rows):
    by = rows_by_file(rows)
    want_files = files()
    assert sorted(by) == want_files, set(by) ^ set(want_files)
    runs_seen = 0
    for path in want_files:
        runs, code = cli_runs(path)
        got = sorted(by[path], key=lambda r: r["block"] or 0)
        if not runs:
            assert len(got) == 1 and got[0]["run"] is None, path
            assert got[0]["exit_code"] == code, path
            continue
        assert [json.loads(r["run"]) for r in got] == runs, path
        for r, run in zip(got, runs):
            assert r["verdict"] == run["verdict"]
            want = run["derived"].get("tpot_ms", {}).get("mean")
            # The row's column is the run's figure, to the last digit (a TPOT of 0.083 ms, from
            # a published inference-perf paste, once came back with pandas' default 10 places).
            assert r["tpot_ms"] == want
            assert r["block"] == run["source"]["block"]
        runs_seen += len(runs)
    assert runs_seen > 150


def test_json_rows_are_the_clis_runs(local_ray, tmp_path):
    ray_archive.archive(str(SAMPLES), str(tmp_path / "out"), "json")
    rows = []
    for f in sorted((tmp_path / "out").iterdir()):
        rows += [json.loads(line) for line in f.read_text().splitlines() if line.strip()]
    check_against_cli(rows)


def test_parquet_rows_are_the_clis_runs(local_ray, tmp_path):
    import pyarrow.parquet as pq

    ray_archive.archive(str(SAMPLES), str(tmp_path / "out"), "parquet")
    table = pq.read_table(tmp_path / "out")
    assert table.schema.field("tpot_ms").type == "double"
    check_against_cli(table.to_pylist())
