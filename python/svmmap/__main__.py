"""``python -m svmmap``: the ``svmmap`` command line."""

import sys

from .cli import main

sys.exit(main())
