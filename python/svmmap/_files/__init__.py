"""Private: file handling below every reader and writer of the package.

- `text`: the text-file rules (line breaks, fields, numbers, atomic writes);
- `model_json`: the model file's JSON text, parsed and checked;
- `model_writing`: a model document checked in memory as its text would be, and its text made;
- `model_file`: model files written, read and checked without scikit-learn.

This file imports none of them, so that importing one module does not load the other.
"""
