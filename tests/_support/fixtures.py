"""Fixtures every test folder can use (tests/conftest.py loads this module as a plugin)."""

import os
from pathlib import Path

import pytest

#: The shared material (papers, LETOR data) lives beside the project checkout.
SHARED = Path(os.environ.get("SVMMAP_SHARED", Path(__file__).resolve().parents[3] / "shared"))


@pytest.fixture(scope="session")
def shared() -> Path:
    if not (SHARED / "data").is_dir():
        # The skip names the variable and where it is documented, so that a reader of the
        # skip reason can supply the files.
        pytest.skip(
            f"the original data files (MQ2008's fold files, the SVM-map sample) are not at {SHARED / 'data'}: "
            "set SVMMAP_SHARED to the folder that holds data/ (docs/development.md)"
        )
    return SHARED
