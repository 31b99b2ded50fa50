"""``python -m pyjms`` is the ``pyjms`` console script."""

import sys

from pyjms.cli.main import main

sys.exit(main())
