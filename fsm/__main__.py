"""``python -m callsieve``: the same command line as the ``callsieve`` script."""

import sys

from callsieve.tools.cli import main

if __name__ == "__main__":
    sys.exit(main())
