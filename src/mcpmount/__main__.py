"""``python -m mcpmount``: the command line, as the ``mcpmount`` script runs it."""

import sys

from mcpmount.cli import main

sys.exit(main())
