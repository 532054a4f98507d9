"""Build the captured-result wrappings in this folder from samples/captured (run from the
repository root: python3 samples/embedded/make.py). The published pastes here are copied as they
were published (see README.md), not made by this script."""
import json, pathlib

root = pathlib.Path(__file__).resolve().parents[2]
cap = root / "samples" / "captured"
out = root / "samples" / "embedded"

vllm = (cap / "vllm-s3.result.json").read_text().strip()
sglang = (cap / "sglang-oai-s3.result.jsonl").read_text().strip()


def pretty(text, indent):
    v = json.loads(text.replace(": Infinity", ': "__INF__"'))
    return json.dumps(v, indent=indent).replace('"__INF__"', "Infinity")


# A CI log: the record `cat` after a shell prompt, then pretty-printed by jq behind `# `.
(out / "vllm-s3-ci-log.txt").write_text(
    "+ vllm bench serve --save-result --save-detailed --result-filename result.json ...\n"
    "INFO 11-29 19:00:00 [__init__.py:241] Automatically detected platform cuda.\n"
    "$ cat result.json\n" + vllm + "\n$ jq . result.json | sed 's/^/# /'\n"
    + "\n".join("# " + l for l in pretty(vllm, 2).splitlines()) + "\n"
)
# A Markdown report: the record pretty-printed in a fence, then nested in an experiment list.
(out / "vllm-s3-report.md").write_text(
    "## Run 1\n\nThe saved result:\n\n```json\n" + pretty(vllm, 4) + "\n```\n\n"
    "## All experiments\n\n```json\n"
    + json.dumps([{"name": "exp1", "gpu": "H100", "result": json.loads(vllm)}]) + "\n```\n"
)
# A structured log: the SGLang record escaped inside a JSON log record's field.
(out / "sglang-oai-s3-json-log.txt").write_text(
    '{"ts": "2026-11-29T19:00:00Z", "level": "info", "msg": "benchmark starting"}\n'
    + json.dumps({"ts": "2026-11-29T19:00:31Z", "level": "info", "msg": "result", "data": sglang}) + "\n"
    '{"ts": "2026-11-29T19:00:31Z", "level": "info", "msg": "done"}\n'
)
