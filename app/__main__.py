"""`python -m ecoready`: the same as the `ecoready` console script."""

import sys

from ecoready.ui.cli import main

sys.exit(main())
