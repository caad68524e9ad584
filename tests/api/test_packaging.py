"""What a user installing svmmap gets: licence, version, citation, changelog, a lean extension.

The wheel itself (abi3, manylinux2014, auditwheel) is built and checked by .ci/wheel, which
.ci/run runs after the tests.
"""

import re
import struct
import subprocess
import sys
from importlib.metadata import metadata, version
from pathlib import Path

import pytest
import svmmap
import svmmap._core

ROOT = Path(__file__).resolve().parents[2]


def cargo_version():
    text = (ROOT / "Cargo.toml").read_text()
    return re.search(r'^version = "([^"]+)"', text, re.M).group(1)


def test_license_file_is_the_declared_mit_licence():
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License")
    assert "Copyright (c)" in text and "the svmmap developers" in text
    assert 'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND' in text
    assert re.search(r'^license = "MIT"$', (ROOT / "Cargo.toml").read_text(), re.M)
    assert 'license = { text = "MIT" }' in (ROOT / "pyproject.toml").read_text()
    # The installed distribution declares it too (maturin writes it into the metadata).
    meta = metadata("svmmap")
    assert "MIT" in (meta.get("License") or "") + (meta.get("License-Expression") or "")


def test_version_flag():
    r = subprocess.run([sys.executable, "-m", "svmmap", "--version"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    # One version everywhere: Cargo.toml declares it, maturin puts it in the metadata.
    assert r.stdout.strip() == f"svmmap {cargo_version()}"
    assert svmmap.__version__ == version("svmmap") == cargo_version()


def test_citation_file_cites_the_package_and_the_papers():
    yaml = pytest.importorskip("yaml")
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0"
    assert cff["type"] == "software" and cff["title"].startswith("svmmap")
    assert cff["license"] == "MIT"
    assert str(cff["version"]) == cargo_version()
    refs = {r["title"]: r for r in cff["references"]}
    expected = {
        "A support vector method for optimizing average precision": ("Yue", 2007),
        "Structured learning for non-smooth ranking losses": ("Chakrabarti", 2008),
        "A support vector method for multivariate performance measures": ("Joachims", 2005),
        "Training linear SVMs in linear time": ("Joachims", 2006),
        "Cutting-plane training of structural SVMs": ("Joachims", 2009),
        "Improved lattice-based spoken document retrieval by directly learning from the evaluation measures": (
            "Meng",
            2009,
        ),
    }
    assert set(expected) <= set(refs)
    for title, (first_author, year) in expected.items():
        assert refs[title]["authors"][0]["family-names"] == first_author, title
        assert refs[title]["year"] == year, title


def test_changelog_lists_unreleased_changes():
    text = (ROOT / "CHANGELOG.md").read_text()
    assert text.startswith("# Changelog")
    assert "## [Unreleased]" in text
    assert "## [0.1.0]" in text


def test_one_extension_module_in_the_package():
    # The extension is built for the stable ABI (_core.abi3.so). A per-version build left
    # beside it by an older `maturin develop` (_core.cpython-311-...so) would be imported in
    # its place, since Python tries the version-specific suffix first.
    package = Path(svmmap.__file__).parent
    found = sorted(p.name for p in package.glob("_core*") if p.suffix in (".so", ".pyd"))
    assert found == [Path(svmmap._core.__file__).name], found
    assert Path(svmmap._core.__file__).name.startswith("_core.abi3."), svmmap._core.__file__


def elf_section_names(path):
    """Section names of a 64-bit little-endian ELF file, read from its section header table."""
    data = Path(path).read_bytes()
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, "not a 64-bit little-endian ELF file"
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab_offset = headers[shstrndx][4]
    names = []
    for name_offset, *_ in headers:
        start = strtab_offset + name_offset
        names.append(data[start : data.index(b"\x00", start)].decode())
    return names


@pytest.mark.skipif(sys.platform != "linux", reason="reads the extension's ELF sections")
def test_release_extension_has_no_debug_info():
    # Cargo.toml's release profile: debug = false, strip = "debuginfo". With debug = 1 the
    # extension carried .debug_* sections and weighed 10.5 MB instead of 1.5 MB.
    names = elf_section_names(svmmap._core.__file__)
    assert ".text" in names and ".dynsym" in names
    debug = [n for n in names if n.startswith(".debug_")]
    assert debug == [], f"{svmmap._core.__file__} has debug sections {debug}"
