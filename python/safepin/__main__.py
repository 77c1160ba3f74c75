"""python -m safepin [options] [--] program [args...]: the same as safepin."""
import sys

from safepin.cli import main

if __name__ == "__main__":
    sys.exit(main())
