import sys

from .ir.cli import main

sys.exit(main())
