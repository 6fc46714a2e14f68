"""Packaged GGUF assembly, on fake part packages installed into a temporary sys.path entry."""

import hashlib
import os
import uuid

import pytest

from ragsweep.metrics.errors import InputError
from ragsweep.metrics.llm import models
from ragsweep.metrics.llm.models import ModelIntegrityError, PackagedModel, assemble, file_sha256, part_paths

PARTS = [b"GGUF" + b"a" * 1000, b"b" * 777, b"c" * 5]


def install_fake_parts(site, prefix, parts, version="1.0", skip=()):
    """Write ``<prefix><i>`` distributions the way the real part wheels are laid out."""
    module_prefix = prefix.replace("-", "_")
    for i, data in enumerate(parts, start=1):
        if i in skip:
            continue
        module = f"{module_prefix}{i}"
        (site / module / "data").mkdir(parents=True)
        (site / module / "data" / f"part{i:02d}.bin").write_bytes(data)
        info = site / f"{module}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {prefix}{i}\nVersion: {version}\n")
        (info / "RECORD").write_text(f"{module}/__init__.py,,\n{module}/data/part{i:02d}.bin,,\n")


@pytest.fixture
def fake(tmp_path, monkeypatch, cache_dir):
    """A packaged model "fake" whose three parts are installed; returns its spec."""
    prefix = f"rsfake{uuid.uuid4().hex[:8]}-part"
    site = tmp_path / "site"
    install_fake_parts(site, prefix, PARTS)
    monkeypatch.syspath_prepend(str(site))
    spec = PackagedModel(prefix, len(PARTS), "1.0", hashlib.sha256(b"".join(PARTS)).hexdigest())
    monkeypatch.setitem(models.PACKAGED_MODELS, "fake", spec)
    return spec


def test_assemble_concatenates_in_order_and_records_the_hash(fake, tmp_path):
    path = assemble("fake")
    assert path == tmp_path / "cache" / "models" / "fake.gguf"
    assert path.read_bytes() == b"".join(PARTS)
    assert oct(path.stat().st_mode & 0o777) == "0o644"
    assert file_sha256(path) == fake.sha256
    assert sorted(p.name for p in path.parent.iterdir()) == ["fake.gguf", "fake.gguf.sha256.json"]


def test_second_call_trusts_the_sidecar(fake, monkeypatch):
    first = assemble("fake")

    def no_hashing(*args):
        raise AssertionError("re-hashed an unchanged file")

    monkeypatch.setattr(models.hashlib, "sha256", no_hashing)
    assert assemble("fake") == first


def test_changed_file_is_rehashed_and_rebuilt(fake):
    path = assemble("fake")
    data = bytearray(path.read_bytes())
    data[10] ^= 0xFF  # same size, different content and mtime
    path.write_bytes(bytes(data))
    os.utime(path, ns=(1, 1))
    assert assemble("fake").read_bytes() == b"".join(PARTS)


def test_missing_part_names_the_pip_command(fake, tmp_path, monkeypatch):
    prefix = f"rsfake{uuid.uuid4().hex[:8]}-part"
    install_fake_parts(tmp_path / "site2", prefix, PARTS, skip=(2,))
    monkeypatch.syspath_prepend(str(tmp_path / "site2"))
    monkeypatch.setitem(models.PACKAGED_MODELS, "gappy", PackagedModel(prefix, 3, "1.0", fake.sha256))
    with pytest.raises(InputError) as info:
        assemble("gappy")
    assert f"{prefix}2 is not installed" in str(info.value)
    assert f"pip install {prefix}{{1..3}}==1.0" in str(info.value)
    assert not (tmp_path / "cache" / "models" / "gappy.gguf").exists()


def test_wrong_version_is_reported(fake, monkeypatch):
    monkeypatch.setitem(models.PACKAGED_MODELS, "fake", PackagedModel(fake.prefix, 3, "2.0", fake.sha256))
    with pytest.raises(InputError, match="is 1.0, need 2.0"):
        part_paths("fake")


def test_hash_mismatch_leaves_nothing_behind(fake, tmp_path, monkeypatch):
    monkeypatch.setitem(models.PACKAGED_MODELS, "fake", PackagedModel(fake.prefix, 3, "1.0", "0" * 64))
    with pytest.raises(ModelIntegrityError, match="--force-reinstall"):
        assemble("fake")
    assert list((tmp_path / "cache" / "models").iterdir()) == []


def test_unknown_name_lists_known_models():
    with pytest.raises(InputError, match="qwen2.5-coder-1.5b-instruct-q4_k_m"):
        assemble("no-such-model")
