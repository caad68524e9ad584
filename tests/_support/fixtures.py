"""Fixtures every test folder can use (tests/conftest.py loads this module as a plugin)."""

import os
from pathlib import Path

import pytest

#: The shared material (papers, LETOR data) lives beside the project checkout.
SHARED = Path(os.environ.get("SVMMAP_SHARED", Path(__file__).resolve().parents[3] / "shared"))


@pytest.fixture(scope="session")
def shared() -> Path:
    if not (SHARED / "data").is_dir():
        pytest.skip(f"shared data not found at {SHARED} (set SVMMAP_SHARED)")
    return SHARED
