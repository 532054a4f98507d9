"""Build the compressed and UTF-16 samples in this folder from samples/captured (run from the
repository root: python3 samples/compressed/make.py; needs the `zstd` command). Each is a captured
log or result file kept the way CI systems, logrotate and Windows PowerShell keep them; the
decoded bytes are the captured file's (manifest.json says which, and how it was wrapped), so each
must read to exactly the captured file's figures (tests/decode.rs)."""
import gzip, io, json, lzma, pathlib, subprocess, zlib

root = pathlib.Path(__file__).resolve().parents[2]
cap = root / "samples" / "captured"
out = root / "samples" / "compressed"
manifest = {}


def gz(data):
    # mtime 0 and no file name: the same bytes on every run.
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, filename="") as f:
        f.write(data)
    return buf.getvalue()


def zst(data):
    return subprocess.run(["zstd", "-q", "-c", "-19"], input=data, capture_output=True, check=True).stdout


def skippable(payload):
    # A zstd skippable frame (magic 0x184D2A5?, little-endian length, payload), as seekable-zstd
    # and pzstd write them.
    return (0x184D2A50).to_bytes(4, "little") + len(payload).to_bytes(4, "little") + payload


def halves(data):
    # Split at the line break nearest the middle.
    at = data.index(b"\n", len(data) // 2) + 1
    return data[:at], data[at:]


def utf16(data, big_endian, bom, crlf=True):
    text = data.decode("utf-8")
    if crlf:
        # PowerShell's `>` and Out-File write CRLF line ends.
        text = text.replace("\r\n", "\n").replace("\n", "\r\n")
    enc = text.encode("utf-16-be" if big_endian else "utf-16-le")
    return ((b"\xfe\xff" if big_endian else b"\xff\xfe") if bom else b"") + enc


def make(name, source, how, data, cut_off=False):
    (out / name).write_bytes(data)
    manifest[name] = {"from": "captured/" + source, "how": how, "cut_off": cut_off}


def src(name):
    return (cap / name).read_bytes()


make("vllm-s2.stdout.txt.gz", "vllm-s2.stdout.txt", "gzip", gz(src("vllm-s2.stdout.txt")))
make("vllm-s2.result.json.gz", "vllm-s2.result.json", "gzip", gz(src("vllm-s2.result.json")))
make("sglang-s2.result.jsonl.zst", "sglang-s2.result.jsonl", "zstd", zst(src("sglang-s2.result.jsonl")))
a, b = halves(src("vllm-s4.stdout.txt"))
make("vllm-s4-two-members.stdout.txt.gz", "vllm-s4.stdout.txt",
     "gzip, two members (what `cat a.gz b.gz` and logrotate give)", gz(a) + gz(b))
make("sglang-s2.stdout.txt.zst", "sglang-s2.stdout.txt", "zstd -19", zst(src("sglang-s2.stdout.txt")))
a, b = halves(src("sglang-oai-s3.stdout.txt"))
make("sglang-oai-s3-frames.stdout.txt.zst", "sglang-oai-s3.stdout.txt",
     "zstd, a skippable frame then two frames", skippable(b"bench-normalize sample") + zst(a) + zst(b))
make("vllm-s3.stdout.txt.xz", "vllm-s3.stdout.txt", "xz", lzma.compress(src("vllm-s3.stdout.txt")))
make("vllm-s1-powershell-utf16le.stdout.txt", "vllm-s1.stdout.txt",
     "UTF-16LE with BOM, CRLF (PowerShell `>`)", utf16(src("vllm-s1.stdout.txt"), False, True))
make("sglang-s3-utf16be.stdout.txt", "sglang-s3.stdout.txt", "UTF-16BE with BOM",
     utf16(src("sglang-s3.stdout.txt"), True, True, crlf=False))
make("sglang-oai-s2-utf16le-nobom.stdout.txt", "sglang-oai-s2.stdout.txt", "UTF-16LE without BOM, CRLF",
     utf16(src("sglang-oai-s2.stdout.txt"), False, False))
make("vllm-chat-s2-utf16le.stdout.txt.gz", "vllm-chat-s2.stdout.txt", "UTF-16LE with BOM, CRLF, then gzip",
     gz(utf16(src("vllm-chat-s2.stdout.txt"), False, True)))
# A CI artifact cut off mid-upload: the gzip stream stops inside the result block (between its
# rows), so the run is read up to there, cut off, and the cut is an error (exit 3).
log = src("vllm-s2.stdout.txt")
whole = gz(log)
keep = next(n for n in range(len(whole) - 8, 0, -1)
            if len(zlib.decompressobj(31).decompress(whole[:n])) < log.index(b"Mean TTFT"))
make("vllm-s2-cut.stdout.txt.gz", "vllm-s2.stdout.txt", f"gzip, cut after {keep} of {len(whole)} bytes",
     whole[:keep], cut_off=True)

(out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
