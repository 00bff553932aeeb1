"""Command line: ``python -m numbacast`` prints the demo table."""

import sys


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv:
        print(f"usage: python -m numbacast   (unknown arguments: {' '.join(argv)})", file=sys.stderr)
        return 2
    from .demo import main as demo
    demo()
    return 0


if __name__ == "__main__":
    sys.exit(main())
