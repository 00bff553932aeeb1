"""``python -m numbacast``: the command line of :mod:`numbacast.cli`."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
