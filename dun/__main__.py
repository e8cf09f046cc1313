import sys

from dun.cli import main

sys.exit(main())
