"""examples/dstack_store.py: an agent's dstack document (tests/dstack/documents/trial.json, a
trial as dstack's preset agent writes it, its `benchmark` from samples/captured/vllm-s2) is stored
with its derived TPOT; the same document with a figure pushed up, or down, is
refused with the rule that caught it, and nothing is stored."""

import copy
import importlib.util
import json
import pathlib

import pytest

import bench_normalize as bn

ROOT = pathlib.Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("dstack_store", ROOT / "examples" / "dstack_store.py")
dstack_store = importlib.util.module_from_spec(spec)
spec.loader.exec_module(dstack_store)

SAMPLE = ROOT / "samples" / "captured" / "vllm-s2.stdout.txt"


def agent_document():
    return json.loads((ROOT / "tests" / "dstack" / "documents" / "trial.json").read_text())


def test_a_consistent_document_is_stored_with_its_derived_tpot():
    store = {}
    doc = agent_document()
    record = dstack_store.store_benchmark(doc, store, "trial-1")
    assert store["trial-1"] is record
    want = bn.normalize(SAMPLE)[0]["derived"]["tpot_ms"]["mean"]
    assert record["tpot_ms"][0] == pytest.approx(want, rel=1e-3)


def paths_to(doc, key, path=()):
    if isinstance(doc, dict):
        for k, v in doc.items():
            if k == key and isinstance(v, (int, float)):
                yield path + (k,)
            yield from paths_to(v, key, path + (k,))


@pytest.mark.parametrize("factor", [10.0, 0.1])
def test_a_contradicted_document_is_refused(factor):
    doc = agent_document()
    targets = list(paths_to(doc, "output_tok_per_s"))
    assert targets, doc
    bad = copy.deepcopy(doc)
    node = bad
    for k in targets[0][:-1]:
        node = node[k]
    node[targets[0][-1]] *= factor
    store = {}
    with pytest.raises(dstack_store.Refused) as err:
        dstack_store.store_benchmark(bad, store, "trial-2")
    assert err.value.exit_code == 1
    assert store == {}


def test_an_unreadable_document_is_refused():
    with pytest.raises(dstack_store.Refused) as err:
        dstack_store.store_benchmark({"hello": 1}, {}, "trial-3")
    assert err.value.exit_code == 3
