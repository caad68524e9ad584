"""The test suite; its folders mirror the package (see CONTRIBUTING.md, Layout)."""
