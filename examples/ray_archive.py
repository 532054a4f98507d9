"""Normalize an archive of benchmark output with Ray Data: one row per run.

The unit of work is one file: Ray reads every file under SOURCE (a local folder, or an object-store
prefix such as ``s3://bucket/bench-logs/`` that Ray's file systems reach), and
``bench_normalize.normalize`` turns each into its runs on whichever worker holds it, the GIL
released while it works. A file with no result in it (a README, a truth file) is one row too, with
its error code and exit code and no run, so nothing is dropped without a trace.

    python examples/ray_archive.py SOURCE OUT [--format parquet|json] [--num-cpus N] [--address ADDR]

Each row: ``path``, ``block`` (the run's index in its file), ``parser``, ``tool``, ``verdict``,
headline figures (derived TPOT and its method, TTFT, E2E, output throughput, requests, tokens,
duration), ``error`` and ``exit_code`` for a file that gave no run, and ``run`` (the whole
canonical run as JSON text: what ``bench-normalize FILE`` writes for it). Columns of figures are
floats, null where the run does not give the figure.

Ray is a large install (hundreds of MB); docs/python.md says what this and the Spark and Dask
recipes cost. Tested by tests/python/test_ray_archive.py on a local ``ray.init(num_cpus=2)``.
"""

from __future__ import annotations

import argparse
import json
from typing import Any, Dict, List, Optional

import bench_normalize as bn

#: The row's columns, in order, with the type each always has (a float column is never an int in
#: one file and a float in another: Parquet needs one type per column).
COLUMNS = {
    "path": str,
    "block": int,
    "parser": str,
    "tool": str,
    "verdict": str,
    "tpot_ms": float,
    "tpot_method": str,
    "ttft_ms": float,
    "e2e_ms": float,
    "output_tok_per_s": float,
    "successful_requests": float,
    "output_tokens": float,
    "duration_s": float,
    "error": str,
    "exit_code": int,
    "run": str,
}


def _num(x: Any) -> Optional[float]:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def _mean(stat: Any) -> Optional[float]:
    return _num(stat.get("mean")) if isinstance(stat, dict) else None


def _row(**values: Any) -> Dict[str, Any]:
    return {k: values.get(k) for k in COLUMNS}


def rows_of_file(path: str, data: bytes) -> List[Dict[str, Any]]:
    """The rows of one file: one per run, or one for the error when it gives none."""
    try:
        runs = bn.normalize(data, name=path)
    except bn.BenchNormalizeError as e:
        return [_row(path=path, error=e.code, exit_code=e.exit_code)]
    rows = []
    for run in runs:
        derived, reported, totals = run.get("derived", {}), run.get("reported", {}), run.get("totals", {})
        tpot = derived.get("tpot_ms") or {}
        rows.append(
            _row(
                path=path,
                block=run["source"]["block"],
                parser=run["source"]["parser"],
                tool=run["source"]["tool"],
                verdict=run["verdict"],
                tpot_ms=_num(tpot.get("mean")),
                tpot_method=tpot.get("method"),
                ttft_ms=_mean(reported.get("ttft_ms")),
                e2e_ms=_mean(reported.get("e2e_ms")),
                output_tok_per_s=_num(reported.get("output_tok_per_s")),
                successful_requests=_num(totals.get("successful_requests")),
                output_tokens=_num(totals.get("output_tokens")),
                duration_s=_num(totals.get("duration_s")),
                exit_code=0,
                run=json.dumps(run),
            )
        )
    return rows


def _flat_map(row: Dict[str, Any]) -> List[Dict[str, Any]]:
    return rows_of_file(row["path"], row["bytes"])


def read_stored_bytes(source: str):
    """``ray.data.read_binary_files(source, include_paths=True)``, with each file's bytes as
    stored. Ray decompresses a ``.gz`` (``.zst``, ...) by its name, and a cut-off stream then fails
    the whole task; bench_normalize decodes gzip, xz and zstd itself and keeps the runs before the
    cut, as the CLI does. ``read_binary_files`` has no way to say "no decompression" (``None`` means
    "infer"), so its datasource is used with the inference turned off."""
    import ray

    try:
        from ray.data._internal.datasource.binary_datasource import BinaryDatasource
    except ImportError:  # another Ray layout: the public reader (compressed files decoded by Ray)
        return ray.data.read_binary_files(source, include_paths=True)

    class StoredBytes(BinaryDatasource):
        def resolve_compression(self, path, open_args):
            return None

    return ray.data.read_datasource(StoredBytes(source, include_paths=True))


def archive(source: str, out: str, fmt: str = "parquet") -> None:
    """Read every file under ``source`` and write one row per run under ``out``."""
    import ray

    ds = read_stored_bytes(source).flat_map(_flat_map)
    if fmt == "parquet":
        import pyarrow as pa

        types = {str: pa.string(), int: pa.int64(), float: pa.float64()}
        schema = pa.schema([(k, types[t]) for k, t in COLUMNS.items()])
        ds = ds.map_batches(lambda b: pa.Table.from_pylist(b.to_pylist(), schema=schema), batch_format="pyarrow")
        ds.write_parquet(out)
    elif fmt == "json":
        # pandas writes 10 decimal places unless told (a TPOT of 0.083 ms would lose three
        # digits); 15 is the most it writes. The exact figures are in each row's `run`.
        ds.write_json(out, double_precision=15)
    else:
        raise ValueError(f"format {fmt!r}: parquet or json")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("source", help="a folder, a file, or an object-store prefix")
    ap.add_argument("out", help="the output folder (Ray writes one file per block into it)")
    ap.add_argument("--format", choices=["parquet", "json"], default="parquet")
    ap.add_argument("--num-cpus", type=int, default=None, help="a local Ray with this many CPUs")
    ap.add_argument("--address", default=None, help="a running Ray cluster (default: start a local one)")
    a = ap.parse_args()

    import ray

    ray.init(address=a.address, num_cpus=a.num_cpus)
    archive(a.source, a.out, a.format)


if __name__ == "__main__":
    main()
