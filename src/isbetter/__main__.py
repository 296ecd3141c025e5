"""Run the command line: ``python -m isbetter``."""

import sys

from isbetter.cli import main

if __name__ == "__main__":
    sys.exit(main())
