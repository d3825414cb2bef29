"""`python -m pairedbus`: the same as the `pairedbus` command."""

import sys

from pairedbus.cli import main

if __name__ == "__main__":
    sys.exit(main())
