"""The sample inputs under a samples directory, as the validators outside the Rust tests read them.

Shared by tests/dstack/validate.py and tests/llmd/validate.py: every file under SAMPLES_DIR/*/
with an input's extension, truth files, manifests and READMEs aside, in sorted order.
"""

import os

SKIP_SUFFIXES = ("truth.json", "manifest.json", "expected.json", "README.md")
EXTS = (".txt", ".json", ".jsonl", ".csv", ".md", ".yaml")


def samples(root):
    out = []
    for d in sorted(os.listdir(root)):
        sub = os.path.join(root, d)
        if not os.path.isdir(sub):
            continue
        for f in sorted(os.listdir(sub)):
            p = os.path.join(sub, f)
            if os.path.isfile(p) and f.endswith(EXTS) and not f.endswith(SKIP_SUFFIXES):
                out.append(p)
    return out
