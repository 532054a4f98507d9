"""bench_normalize: LLM serving-benchmark output to canonical runs, in process.

The same library as the ``bench-normalize`` executable: TPOT derived from E2E latency, TTFT and
token counts (never from ITL), each run validated against its own totals. Every function works
with the GIL released; a failure raises :class:`BenchNormalizeError`, carrying the CLI's exit code
and the diagnostic's fields (docs/python.md)::

    import pathlib, bench_normalize
    runs = bench_normalize.normalize(pathlib.Path("vllm-run.log"))
    run = runs[0]
    run["verdict"], run["derived"]["tpot_ms"]["mean"]
    print(bench_normalize.to_format(runs, "table"))
"""

from __future__ import annotations

import json
import os
import warnings
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

from . import _native

__all__ = [
    "BenchNormalizeError",
    "BenchNormalizeWarning",
    "check",
    "compare",
    "normalize",
    "objectives",
    "render",
    "schema",
    "to_format",
    "FORMATS",
]

__version__: str = _native.__version__

#: The formats :func:`to_format` writes (the CLI's ``--format`` values, and ``explain``).
FORMATS = ("json", "jsonl", "csv", "table", "dstack", "dstack-e2e", "llmd-br", "explain")

Run = Dict[str, Any]
Source = Union["os.PathLike[str]", bytes, bytearray, memoryview, str]


class BenchNormalizeError(Exception):
    """A failure, as the CLI would report it.

    Attributes are the fields of the CLI's ``--error-format json`` diagnostic: ``code`` (stable:
    ``no-result``, ``parse``, ``report-shape``, ``decode``, ``io``, ``usage``, ``unwritable``,
    ...), ``message``, ``input``, ``line``, ``column`` and ``exit_code`` (the CLI's exit code for
    it, docs/report.md).
    """

    def __init__(self, diagnostic: Dict[str, Any]):
        self.diagnostic = diagnostic
        self.code: str = diagnostic.get("code", "")
        self.message: str = diagnostic.get("message", "")
        self.input: Optional[str] = diagnostic.get("input")
        self.line: Optional[int] = diagnostic.get("line")
        self.column: Optional[int] = diagnostic.get("column")
        self.exit_code: int = int(diagnostic.get("exit_code", 2))
        where = self.input or ""
        if self.line is not None:
            where += f":{self.line}"
        super().__init__(f"{where}: {self.message}" if where else self.message)


class BenchNormalizeWarning(UserWarning):
    """A problem with part of an input that did not stop it (a malformed JSON Lines line, a
    compressed file cut off after some runs), or a run a format leaves out."""


def _answer(answer: Any) -> Any:
    text, notes, error = answer
    for note in notes:
        warnings.warn(BenchNormalizeWarning(_note_text(note)), stacklevel=3)
    if error is not None:
        raise BenchNormalizeError(json.loads(error))
    return text


def _note_text(note: str) -> str:
    d = json.loads(note)
    where = d.get("input") or ""
    if d.get("line") is not None:
        where += f":{d['line']}"
    return f"{where}: {d.get('message', '')}" if where else d.get("message", "")


def _read(source: Source, name: Optional[str], strict: bool, reports_only: bool) -> List[Run]:
    if isinstance(source, os.PathLike):
        path = os.fspath(source)
        answer = _native.normalize_path(path, name, strict, reports_only)
    elif isinstance(source, (bytes, bytearray, memoryview)):
        answer = _native.normalize_bytes(bytes(source), name or "-", strict, reports_only)
    elif isinstance(source, str):
        answer = _native.normalize_bytes(source.encode("utf-8"), name or "-", strict, reports_only)
        try:
            return json.loads(_answer(answer))["runs"]
        except BenchNormalizeError as e:
            if e.code == "no-result" and "\n" not in source and len(source) < 4096 and os.path.isfile(source):
                e.args = (e.args[0] + f" (a str is read as the text itself: to read the file, pass pathlib.Path({source!r}))",)
            raise
    else:
        raise TypeError(f"source: a path (os.PathLike), bytes or str, not {type(source).__name__}")
    return json.loads(_answer(answer))["runs"]


def normalize(source: Source, *, name: Optional[str] = None, strict: bool = False) -> List[Run]:
    """Read a benchmark log, result file or report into its canonical runs.

    ``source`` is a path (``pathlib.Path`` or any ``os.PathLike``; gzip, xz and zstd files too),
    or the content itself as ``bytes`` or ``str`` (a ``str`` is never taken for a file name).
    ``name`` is the input's name in each run's ``source.input`` (default: the path, or ``-``);
    ``strict`` makes failed warnings reject a run too, as ``--strict``.

    Returns the runs as dicts, each as the CLI's JSON has it: ``source``, ``workload``,
    ``totals``, ``reported``, ``derived``, ``checks``, ``verdict``. A rejected or unusable run is
    returned (its ``verdict`` and ``checks`` say why), not raised. Raises
    :class:`BenchNormalizeError` when nothing could be read (exit code 3 for no result, 4 for a
    file that cannot be read).

    >>> runs = normalize(pathlib.Path("samples/captured/vllm-s2.stdout.txt"))  # doctest: +SKIP
    >>> runs[0]["derived"]["tpot_ms"]["method"]  # doctest: +SKIP
    'e2e-ttft-tokens'
    """
    return _read(source, name, strict, False)


def check(document: Union[Dict[str, Any], List[Any], Source], *, name: Optional[str] = None, strict: bool = False) -> List[Run]:
    """Validate a report written by hand or by another tool, with the same rules.

    ``document`` is a dict (or list) as parsed JSON, JSON text (``str`` or ``bytes``), or a path:
    a canonical report or run, a dstack preset ``benchmark`` / ``metrics`` object or dstack
    ``trial.json``, or an llm-d Benchmark Report. Returns its runs, each with its ``verdict``,
    ``checks`` and ``derived`` figures, as ``bench-normalize check``.
    """
    if isinstance(document, (dict, list)):
        document = json.dumps(document)
        name = name or "document"
    return _read(document, name, strict, True)


def to_format(runs: Union[Run, Iterable[Run]], fmt: str) -> str:
    """Write runs (as :func:`normalize` returns them) in one of :data:`FORMATS`, with the CLI's
    own writers: ``json`` is byte for byte what ``bench-normalize FILE`` writes to a pipe.

    ``dstack`` raises :class:`BenchNormalizeError` (exit code 5) for a run that lacks a figure
    dstack requires; ``dstack`` and ``llmd-br`` write accepted runs only, as the CLI does. For
    ``dstack`` and ``dstack-e2e``, one run gives its object alone and several a list of entries
    ``{input, block, first_line, load, benchmark | metrics}``, decided by the same library
    function as the CLI's (``emit::dstack_document``). The runs
    are read back from their JSON, as ``bench-normalize check`` reads a report: what the JSON does
    not hold is not there (see :func:`render`).
    """
    text = _answer(_native.to_format(json.dumps(_run_list(runs)), fmt))
    return text


def _run_list(runs: Union[Run, Iterable[Run]]) -> List[Run]:
    """A run, a list of runs, or a whole report (``{"schema_version": ..., "runs": [...]}``)."""
    if isinstance(runs, dict):
        return list(runs["runs"]) if "runs" in runs and "schema_version" in runs else [runs]
    return list(runs)


def render(source: Source, fmt: str, *, name: Optional[str] = None, strict: bool = False) -> str:
    """Read ``source`` (as :func:`normalize`) and write its runs in ``fmt`` (one of
    :data:`FORMATS`) in one call: byte for byte what ``bench-normalize FILE --format FMT`` writes.

    Prefer it to :func:`to_format` for ``dstack``: a run read from a log can hold what its
    canonical JSON does not (the client's argument dump, which proves ``failed_requests`` zero),
    and :func:`to_format` only has the JSON.
    """
    if isinstance(source, os.PathLike):
        answer = _native.render_path(os.fspath(source), name, strict, fmt)
    elif isinstance(source, (bytes, bytearray, memoryview)):
        answer = _native.render_bytes(bytes(source), name or "-", strict, fmt)
    elif isinstance(source, str):
        answer = _native.render_bytes(source.encode("utf-8"), name or "-", strict, fmt)
    else:
        raise TypeError(f"source: a path (os.PathLike), bytes or str, not {type(source).__name__}")
    return _answer(answer)


def objectives(runs: Union[Run, Iterable[Run]], spec: str) -> List[List[Dict[str, Any]]]:
    """Judge runs on service-level objectives, as ``--slo``: ``spec`` is
    ``"ttft.p99<=2000,tpot.mean<=40,decode_rate>=50"``. Returns, per run, one result per objective
    (``objective``, ``status``: ``met`` / ``missed`` / ``not-available`` / ``not-comparable``, the
    value and the limit). A bad spec raises :class:`BenchNormalizeError` (exit code 2)."""
    return json.loads(_answer(_native.objectives(json.dumps(_run_list(runs)), spec)))


def compare(
    baseline: "Union[str, os.PathLike[str]]",
    *others: "Union[str, os.PathLike[str]]",
    key: Union[str, Sequence[str]] = "concurrency,rate,input,output,model",
    strict: bool = False,
) -> Dict[str, Any]:
    """Compare configurations, each a results file or directory, as ``bench-normalize compare
    BASELINE OTHER... --format json`` (docs/compare.md). Problems reading an input are warnings
    (:class:`BenchNormalizeWarning`), as the CLI says them on stderr."""
    if not isinstance(key, str):
        key = ",".join(key)
    paths = [os.fspath(baseline)] + [os.fspath(o) for o in others]
    return json.loads(_answer(_native.compare_paths(paths, key, strict)))


def schema() -> Dict[str, Any]:
    """The JSON Schema of the canonical report (``bench-normalize schema``)."""
    return json.loads(_native.schema())
