import sys

from mcpmount.cli import main

sys.exit(main())
