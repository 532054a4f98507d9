"""Stand-in `python -m sglang.bench_serving` for tests/it/run.rs (see ../fake_client.py)."""
import sys

import fake_client

if __name__ == "__main__":
    fake_client.sglang(sys.argv[1:])
