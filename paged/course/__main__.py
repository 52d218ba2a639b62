"""`python -m paged.course --repo OWNER/NAME`: point every badge and setup cell at a repository."""

import sys

from .colab import main

sys.exit(main())
