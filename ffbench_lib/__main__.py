import sys

from ffbench_lib.cli import main

sys.exit(main())
