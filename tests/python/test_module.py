"""`import bench_normalize` against the CLI: every sample's canonical JSON byte for byte, the
other formats, check, compare, objectives, the exceptions' fields, and the GIL released while the
library works. BENCH_NORMALIZE_BIN names the executable (tests/python/run.sh sets it)."""

import json
import os
import pathlib
import subprocess
import threading
import warnings

import pytest

import bench_normalize as bn

ROOT = pathlib.Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
BIN = os.environ.get("BENCH_NORMALIZE_BIN", str(ROOT / "target" / "debug" / "bench-normalize"))
EXTS = {".txt", ".json", ".jsonl", ".csv", ".md", ".yaml", ".gz", ".zst", ".xz"}
NOT_INPUTS = ("truth.json", "manifest.json", "expected.json", "README.md")


def samples():
    """Every input under samples/*/ (what tests/common/mod.rs's samples() lists)."""
    out = []
    for d in sorted(p for p in SAMPLES.iterdir() if p.is_dir()):
        for f in sorted(d.iterdir()):
            if f.is_file() and f.suffix in EXTS and not f.name.endswith(NOT_INPUTS):
                out.append(f.relative_to(SAMPLES).as_posix())
    return out


def cli(*args):
    return subprocess.run([BIN, *args, "--error-format", "json"], cwd=SAMPLES, capture_output=True, check=False)


def first_diagnostic(stderr):
    for line in stderr.decode().splitlines():
        try:
            return json.loads(line)
        except ValueError:
            continue
    return None


ALL = samples()


def test_there_are_samples():
    assert len(ALL) > 150


@pytest.mark.parametrize("name", ALL)
def test_canonical_json_is_the_clis_byte_for_byte(name, monkeypatch):
    monkeypatch.chdir(SAMPLES)
    out = cli(name)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if not out.stdout:
            with pytest.raises(bn.BenchNormalizeError) as err:
                bn.normalize(pathlib.Path(name))
            diagnostic = first_diagnostic(out.stderr)
            assert err.value.exit_code == out.returncode
            assert err.value.code == diagnostic["code"]
            assert err.value.message == diagnostic["message"]
            assert (err.value.line, err.value.column) == (diagnostic["line"], diagnostic["column"])
            return
        runs = bn.normalize(pathlib.Path(name))
    assert bn.to_format(runs, "json").encode() == out.stdout
    # A single run, and the whole report, are taken as well.
    assert bn.to_format(json.loads(out.stdout), "json").encode() == out.stdout
    assert bn.to_format(runs[0], "jsonl") == bn.to_format(runs[:1], "jsonl")
    # The same bytes given in memory, named as the file: the same runs.
    assert bn.normalize((SAMPLES / name).read_bytes(), name=name) == runs
    # Diagnostics that did not stop the input are warnings, as the CLI says them on stderr.
    said = [json.loads(line) for line in out.stderr.decode().splitlines() if line.startswith("{")]
    errors = [d["message"] for d in said if d["code"] not in ("rejected", "unusable", "warning", "objective")]
    warned = [str(w.message) for w in caught if issubclass(w.category, bn.BenchNormalizeWarning)]
    assert len(warned) == len(errors), (name, warned, errors)


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "llmd-br", "dstack", "dstack-e2e", "table"])
@pytest.mark.parametrize(
    "name",
    ["captured/vllm-s2.stdout.txt", "versions/sglang0.5.5.post1-oai-s2.result.jsonl", "captured/vllm-s4.stdout.txt"],
)
def test_formats_are_the_clis(name, fmt, monkeypatch):
    monkeypatch.chdir(SAMPLES)
    out = cli(name, "--format", fmt)
    if out.returncode == 5:
        with pytest.raises(bn.BenchNormalizeError) as err:
            bn.render(pathlib.Path(name), fmt)
        assert err.value.exit_code == 5
        return
    assert out.returncode == 0, out.stderr
    assert bn.render(pathlib.Path(name), fmt).encode() == out.stdout
    # From the runs' dicts: the same, for the formats that need only what the JSON holds.
    if fmt not in ("dstack", "dstack-e2e"):
        assert bn.to_format(bn.normalize(pathlib.Path(name)), fmt).encode() == out.stdout
    elif name.endswith("vllm-s4.stdout.txt"):
        # A sweep: one entry per step, each naming its block and load.
        entries = json.loads(out.stdout)
        assert [(e["block"], e["load"]["max_concurrency"]) for e in entries] == [(1, 1), (2, 2), (3, 4), (4, 8)]


def test_explain_is_the_clis(monkeypatch):
    monkeypatch.chdir(SAMPLES)
    name = "captured/vllm-s2.stdout.txt"
    out = subprocess.run([BIN, name, "--explain"], cwd=SAMPLES, capture_output=True, check=True)
    assert bn.to_format(bn.normalize(pathlib.Path(name)), "explain").encode() == out.stdout


def test_check_accepts_its_own_report_and_rejects_a_contradiction():
    runs = bn.normalize(pathlib.Path(SAMPLES / "captured/vllm-s2.stdout.txt"))
    report = json.loads(bn.to_format(runs, "json"))
    checked = bn.check(report)
    assert [r["verdict"] for r in checked] == ["accepted"]
    assert checked[0]["derived"]["tpot_ms"]["mean"] == runs[0]["derived"]["tpot_ms"]["mean"]
    assert bn.check(json.dumps(report)) == checked
    for factor in (10.0, 0.1):  # too high and too low
        bad = json.loads(json.dumps(report))
        bad["runs"][0]["reported"]["output_tok_per_s"] *= factor
        assert bn.check(bad)[0]["verdict"] == "rejected", factor


def test_objectives_are_the_clis(monkeypatch):
    monkeypatch.chdir(SAMPLES)
    name, spec = "captured/vllm-s2.stdout.txt", "ttft.p99<=2000,tpot.mean<=10,decode_rate>=50"
    out = cli(name, "--slo", spec)
    want = [r["objectives"] for r in json.loads(out.stdout)["runs"]]
    assert bn.objectives(bn.normalize(pathlib.Path(name)), spec) == want
    assert {o["status"] for o in want[0]} >= {"pass", "fail"}
    with pytest.raises(bn.BenchNormalizeError) as err:
        bn.objectives([], "ttft.p99<=")
    assert err.value.exit_code == 2


def test_compare_is_the_clis(monkeypatch):
    monkeypatch.chdir(SAMPLES)
    a, b = "captured/vllm-s2.stdout.txt", "captured/sglang-oai-s2.stdout.txt"
    out = cli("compare", a, b, "--format", "json", "--key", "concurrency,input,output")
    assert bn.compare(a, pathlib.Path(b), key=["concurrency", "input", "output"]) == json.loads(out.stdout)


def test_errors_carry_the_clis_fields():
    with pytest.raises(bn.BenchNormalizeError) as err:
        bn.normalize("hello, no benchmark here\n")
    assert (err.value.code, err.value.exit_code) == ("no-result", 3)
    with pytest.raises(bn.BenchNormalizeError) as err:
        bn.normalize(pathlib.Path("/nonexistent/run.log"))
    assert (err.value.code, err.value.exit_code, err.value.input) == ("io", 4, "/nonexistent/run.log")
    # A str is the text itself, never a file name: the error says how to read the file.
    with pytest.raises(bn.BenchNormalizeError) as err:
        bn.normalize(str(SAMPLES / "captured/vllm-s2.stdout.txt"))
    assert "pathlib.Path" in str(err.value)
    with pytest.raises(bn.BenchNormalizeError) as err:
        bn.to_format([], "yaml")
    assert err.value.exit_code == 2
    with pytest.raises(TypeError):
        bn.normalize(12)


def test_schema_is_the_clis():
    out = subprocess.run([BIN, "schema"], capture_output=True, check=True)
    assert bn.schema() == json.loads(out.stdout)


def test_the_gil_is_released_while_working():
    """Another Python thread runs while normalize works on a large input: with the GIL held it
    could not run at all until the call returned."""
    block = (SAMPLES / "captured/vllm-s2.stdout.txt").read_bytes()
    data = block * 400
    started, done = threading.Event(), threading.Event()
    result = {}

    def work():
        started.set()
        result["runs"] = bn.normalize(data, name="big")
        done.set()

    t = threading.Thread(target=work)
    t.start()
    started.wait()
    ticks = 0
    while not done.is_set():
        ticks += 1
    t.join()
    assert len(result["runs"]) == 400
    assert ticks > 10000, ticks
