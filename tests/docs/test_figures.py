"""The pages' figures, drawn during the site's build by docs/figures.py (a mkdocs hook): the
binning guide's GA2M heat map is drawn by the code the guide shows, and a block that breaks or
saves nothing fails the build."""

import importlib.util
from pathlib import Path

import pytest

pytest.importorskip("mkdocs")
pytest.importorskip("matplotlib")

# `pytest -m docs` runs the documentation's tests alone.
pytestmark = pytest.mark.docs

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def figures():
    spec = importlib.util.spec_from_file_location("figures", ROOT / "docs" / "figures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_build_runs_the_hook():
    assert "  - docs/figures.py" in (ROOT / "mkdocs.yml").read_text().splitlines()


def test_the_binning_guide_draws_its_heat_map(figures):
    text = (ROOT / "docs" / "guide" / "binning.md").read_text(encoding="utf-8")
    ((name, blocks),) = figures.figure_blocks(text)
    assert name == "ga2m-pair.png" and "](ga2m-pair.png)" in text
    # The section's fitting block, then the plotting block under the marker.
    assert len(blocks) == 2 and "Binner(interactions=2)" in blocks[0] and "plot_piecewise_scores" in blocks[1]
    png = figures.draw(blocks, name, "docs/guide/binning.md")
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000


def test_marker_applies_to_the_block_below_it(figures):
    text = "\n".join(
        [
            "## A",
            "```python",
            "a = 1",
            "```",
            "## B",
            "```python",
            "b = 2",
            "```",
            "<!-- figure: b.png -->",
            "```python",
            "c = b",
            "```",
            "<!-- figure: lost.png -->",
            "Text between the marker and the block: the marker is not for this block.",
            "```python",
            "d = 4",
            "```",
        ]
    )
    # Section A's block is not run for section B's figure.
    assert figures.figure_blocks(text) == [("b.png", ["b = 2", "c = b"])]


def test_a_block_that_fails_or_saves_nothing_fails_the_build(figures):
    from mkdocs.exceptions import PluginError

    with pytest.raises(PluginError, match="did not save x.png"):
        figures.draw(["x = 1"], "x.png", "docs/page.md")
    with pytest.raises(PluginError, match=r"docs/page.md: drawing x.png failed: ZeroDivisionError"):
        figures.draw(["1 / 0"], "x.png", "docs/page.md")
