"""PEP 517 build backend of bench-normalize: maturin's, plus the native executable in the wheel.

maturin builds one binding kind per wheel. pyproject.toml asks it for the Python module
(crates/python, pyo3, abi3); this backend passes every hook to maturin's own backend unchanged,
and when a wheel is built (`pip install .`, `pip wheel .`, from the source tree or the sdist) it
also builds the `bench-normalize` executable, with the command maturin's backend runs
(`maturin pep517 build-wheel`) and the same MATURIN_PEP517_ARGS or config settings, but for the
root crate's binary (`-b bin -m Cargo.toml`), and adds that file to the module's wheel as
`<name>-<version>.data/scripts/bench-normalize` (the RECORD updated to match). pip installs a
`.data/scripts/` file into the environment's bin/ as it is: a native ELF, started without Python,
as the executable-only wheel did before. With `--compatibility manylinux2014 --zig` both halves
are linked against glibc 2.17 and audited by maturin for that tag.

The sdist is maturin's (this file is in its include list), so a wheel built from it has both too.
docs/python.md ("Packaging") says why this way and what it costs.
"""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
import zipfile
from typing import Any, Mapping, Optional

import maturin
from maturin import (  # noqa: F401  (the hooks passed on unchanged)
    build_sdist,
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
    prepare_metadata_for_build_editable,
    prepare_metadata_for_build_wheel,
)

EXECUTABLE = "bench-normalize"


def build_wheel(
    wheel_directory: str,
    config_settings: Optional[Mapping[str, Any]] = None,
    metadata_directory: Optional[str] = None,
) -> str:
    name = maturin.build_wheel(wheel_directory, config_settings, metadata_directory)
    _add_executable(os.path.join(wheel_directory, name), _build_executable(config_settings))
    return name


def build_editable(
    wheel_directory: str,
    config_settings: Optional[Mapping[str, Any]] = None,
    metadata_directory: Optional[str] = None,
) -> str:
    name = maturin.build_editable(wheel_directory, config_settings, metadata_directory)
    _add_executable(os.path.join(wheel_directory, name), _build_executable(config_settings))
    return name


def _build_executable(config_settings: Optional[Mapping[str, Any]]) -> bytes:
    """The executable's bytes, from a `bin` wheel of the root crate built as maturin's backend
    builds the module's (release profile, the same arguments, compatibility `off` unless given)."""
    args = list(maturin.get_maturin_pep517_args(config_settings))
    if "--compatibility" not in args and "--manylinux" not in args:
        args = ["--compatibility", "off", *args]
    command = ["maturin", "pep517", "build-wheel", "-b", "bin", "-m", os.path.abspath("Cargo.toml"), *args]
    print("Running `{}` (the executable)".format(" ".join(command)))
    sys.stdout.flush()
    env = maturin._get_env() if hasattr(maturin, "_get_env") else None
    result = subprocess.run(command, stdout=subprocess.PIPE, env=env, check=False)
    sys.stdout.buffer.write(result.stdout)
    sys.stdout.flush()
    if result.returncode != 0:
        sys.stderr.write(f"Error: command {command} returned non-zero exit status {result.returncode}\n")
        sys.exit(1)
    wheel = result.stdout.decode(errors="replace").strip().splitlines()[-1]
    try:
        with zipfile.ZipFile(wheel) as z:
            found = [n for n in z.namelist() if n.endswith(".data/scripts/" + EXECUTABLE)]
            if len(found) != 1:
                sys.exit(f"{wheel}: expected one .data/scripts/{EXECUTABLE}, found {found}")
            return z.read(found[0])
    finally:
        # Built only to be taken apart: not left where a module-less wheel could be installed.
        os.remove(wheel)


def _add_executable(wheel: str, executable: bytes) -> None:
    """Rewrite `wheel` with `executable` as `<dist>.data/scripts/bench-normalize` (mode 755) and
    its line in RECORD; the .dist-info entries stay last, as the wheel format recommends."""
    dist = "-".join(os.path.basename(wheel).split("-")[:2])
    info, record_name = f"{dist}.dist-info/", f"{dist}.dist-info/RECORD"
    script = f"{dist}.data/scripts/{EXECUTABLE}"
    digest = base64.urlsafe_b64encode(hashlib.sha256(executable).digest()).rstrip(b"=").decode()
    tmp = wheel + ".part"
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as dst:
        items = src.infolist()
        if any(i.filename == script for i in items):
            sys.exit(f"{wheel} already holds {script}")
        record = next(i for i in items if i.filename == record_name)
        for item in (i for i in items if not i.filename.startswith(info)):
            dst.writestr(item, src.read(item))
        entry = zipfile.ZipInfo(script, date_time=record.date_time)
        entry.external_attr = 0o100755 << 16
        entry.compress_type = zipfile.ZIP_DEFLATED
        dst.writestr(entry, executable)
        for item in (i for i in items if i.filename.startswith(info) and i != record):
            dst.writestr(item, src.read(item))
        lines = src.read(record).decode().splitlines()
        lines.insert(len(lines) - 1 if lines and lines[-1].startswith(record_name + ",") else len(lines),
                     f"{script},sha256={digest},{len(executable)}")
        dst.writestr(record, ("\n".join(lines) + "\n").encode())
    os.replace(tmp, wheel)
