"""``python -m harmony_grammar``: the same CLI as the ``harmony-grammar`` script."""

import sys

from .cli import main

sys.exit(main())
